//! One recording from start to file. The order matters: signals are caught first, then
//! every tracefs change goes through the guard (tracing off, buffer size, clock, buffers
//! cleared, events on), readers start, tracing goes on just before the workload starts
//! and off right after it ends; the readers drain, tracefs is restored, and only then is
//! the file written. Any error on the way drops the guard, which restores tracefs.

use crate::error::RecordError;
use crate::events::{self, EventName};
use crate::machine;
use crate::output::Output;
use crate::reader::{CpuResult, Losses, Readers};
use crate::state::TracefsGuard;
use crate::tracefs::{Tracefs, check_privileges};
use crate::workload::{self, Ended, Workload};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tracedat::FileVersion;
use tracedat::RecordedContext;
use tracedat::recorded::parse_cpu_list;

/// Per-CPU ring-buffer size unless asked otherwise: enough on a 2-CPU VM for
/// `hackbench -g 4 -l 1000` without losses (see docs/performance.md, "Recording").
pub const DEFAULT_BUFFER_KB: u32 = 8192;

/// What to record and where.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    pub output: PathBuf,
    pub version: FileVersion,
    /// Events to enable (`SYSTEM:EVENT`, `SYSTEM` or `EVENT`); empty: the default set.
    pub events: Vec<String>,
    pub buffer_kb: u32,
    /// CPUs to record (`0,2-3`); `None`: every online CPU.
    pub cpus: Option<String>,
    /// Trace clock to use; `None` keeps the current one.
    pub clock: Option<String>,
    pub workload: Workload,
}

/// What a recording did.
#[derive(Clone, Debug)]
pub struct Recording {
    pub events: Vec<EventName>,
    pub cpus: Vec<u32>,
    /// Ring-buffer pages copied.
    pub pages: u64,
    pub file_size: u64,
    pub losses: Losses,
    pub ended: Ended,
    /// Time with tracing on.
    pub elapsed: Duration,
    /// CPU time (user and system) this process used, readers and writing included.
    pub cpu_time: Duration,
    /// Killed instances whose tracefs changes were put back before recording.
    pub recovered: Vec<restore::Recovered>,
}

/// Records a trace as `options` say and writes it.
pub fn record(options: &RecordOptions) -> Result<Recording, RecordError> {
    check_privileges()?;
    let interrupts =
        restore::Interrupts::start().map_err(|source| RecordError::System { context: "catching signals", source })?;
    let mut guard = TracefsGuard::open()?;
    let recovered = std::mem::take(&mut guard.recovered);
    let mut context = RecordedContext {
        topology: machine::topology().map(|t| t.to_lscpu()),
        tunables: machine::tunables(),
        command: match &options.workload {
            Workload::Command { args, .. } => Some(args.clone()),
            Workload::System(_) => None,
        },
        exit: None,
        affinity: Vec::new(),
        pid: None,
    };
    let all_cpus = possible_cpus(guard.fs())?;
    let cpus = recorded_cpus(options.cpus.as_deref())?;
    let events = events::select(guard.fs(), &options.events)?;
    let cpu_count = all_cpus.last().map_or(0, |&c| c + 1);
    let mut output = Output::new(guard.fs(), options.version, cpu_count, &options.output)?;
    prepare_tracefs(&mut guard, options, &all_cpus, &events)?;
    output.add_formats(guard.fs())?;
    let sinks =
        cpus.iter().map(|&cpu| output.writer.cpu_sink(tracedat::TraceWriter::TOP, cpu)).collect::<Result<_, _>>()?;
    let readers = Readers::start(guard.fs(), sinks, output.layout, output.page_size)?;
    if let Some(signal) = interrupts.signal() {
        return Err(RecordError::Interrupted(signal));
    }
    guard.set("tracing_on", "1")?;
    let started = Instant::now();
    let ended = workload::run(&options.workload, &interrupts);
    guard.set("tracing_on", "0")?;
    let elapsed = started.elapsed();
    let (ended, affinity) = ended?;
    let results = readers.finish()?;
    context.exit = ended.exit;
    context.affinity = affinity;
    context.pid = ended.pid;
    output.add_metadata(guard.fs(), &cpus, &context)?;
    // The recording is kept even when tracefs could not be restored; the error follows.
    let restored = guard.restore();
    let (pages, losses) = collect(&mut output, results)?;
    let file_size = output.writer.write_file(&options.output)?;
    restored?;
    Ok(Recording { events, cpus, pages, file_size, losses, ended, elapsed, cpu_time: cpu_time()?, recovered })
}

/// Tracing off, buffers sized (and clock set), emptied, events on.
fn prepare_tracefs(
    guard: &mut TracefsGuard,
    options: &RecordOptions,
    all_cpus: &[u32],
    events: &[EventName],
) -> Result<(), RecordError> {
    guard.set("tracing_on", "0")?;
    guard.set_buffer_kb(options.buffer_kb, all_cpus)?;
    if let Some(clock) = &options.clock {
        guard.set("trace_clock", clock)?;
    }
    guard.fs().clear_buffers()?;
    for event in events {
        guard.set(&format!("{}/enable", event.dir()), "1")?;
    }
    Ok(())
}

/// Every CPU tracefs has a directory for.
pub(crate) fn possible_cpus(fs: &Tracefs) -> Result<Vec<u32>, RecordError> {
    let dir = fs.path("per_cpu");
    let entries = std::fs::read_dir(&dir).map_err(|e| RecordError::file(&dir, e))?;
    let mut cpus: Vec<u32> =
        entries.filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("cpu")?.parse().ok()).collect();
    cpus.sort_unstable();
    Ok(cpus)
}

/// The online CPUs, or those of them in `requested`.
pub(crate) fn recorded_cpus(requested: Option<&str>) -> Result<Vec<u32>, RecordError> {
    let path = "/sys/devices/system/cpu/online";
    let text = std::fs::read_to_string(path).map_err(|e| RecordError::file(path, e))?;
    let online = parse_cpu_list(&text).ok_or_else(|| RecordError::Content { path: path.into(), text })?;
    let cpus = match requested {
        None => online,
        Some(list) => {
            let wanted = parse_cpu_list(list).ok_or_else(|| RecordError::CpuList(list.to_string()))?;
            online.into_iter().filter(|c| wanted.contains(c)).collect()
        }
    };
    if cpus.is_empty() {
        return Err(RecordError::NoCpus);
    }
    Ok(cpus)
}

/// Hands the sinks back to the writer; the pages and losses of all CPUs.
fn collect(output: &mut Output, results: Vec<CpuResult>) -> Result<(u64, Losses), RecordError> {
    let mut pages = 0;
    let mut losses = Losses::default();
    for result in results {
        pages += result.sink.pages();
        losses.add(result.losses);
        output.writer.close_sink(result.sink)?;
    }
    Ok((pages, losses))
}

/// User and system time of this process, all threads.
pub fn cpu_time() -> Result<Duration, RecordError> {
    // SAFETY: rusage is plain data that getrusage fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        let source = std::io::Error::last_os_error();
        return Err(RecordError::System { context: "reading the recorder's CPU time", source });
    }
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Ok(time(usage.ru_utime) + time(usage.ru_stime))
}
