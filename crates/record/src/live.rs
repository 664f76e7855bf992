//! Tracing without an end: `schedlens watch`'s side of tracefs. The same preparation as
//! a recording (signals caught first, every change through the guard, buffers sized and
//! emptied, events on), but the readers hand each page over a channel instead of keeping
//! it, and say when a drain found nothing more: every event of that CPU up to the latest
//! event any reader had seen before the drain began has then arrived. The watcher keeps
//! what it needs and forgets the rest; [`Live::stop`] switches tracing off, lets the
//! readers finish and restores tracefs.

use crate::error::RecordError;
use crate::events;
use crate::machine;
use crate::output::page_format;
use crate::reader::{Losses, PipeRaw};
use crate::state::TracefsGuard;
use crate::tracefs::{Tracefs, check_privileges};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;
use tracedat::RecordedContext;
use tracedat::ringbuf::{PageHeader, PageLayout, PageRecords};

/// The longest a live reader sleeps between drains: it bounds how late a quiet CPU
/// tells that it has nothing more, and so the detection lag.
const POLL_MS: i32 = 100;
/// Pages in flight between the readers and the watcher.
const CHANNEL_PAGES: usize = 4096;

/// What to trace.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    /// Events to enable (as `RecordOptions::events`); empty: the default set.
    pub events: Vec<String>,
    pub buffer_kb: u32,
    /// CPUs to read (`0,2-3`); `None`: every online CPU.
    pub cpus: Option<String>,
}

/// What the readers hand over.
#[derive(Debug)]
pub enum Delivery {
    /// A ring-buffer page of `cpu`, as the kernel wrote it.
    Page { cpu: u32, bytes: Vec<u8> },
    /// `cpu` had nothing more when drained: all its events up to `until_ns` arrived.
    Drained { cpu: u32, until_ns: u64 },
}

/// What every trace cut from the live pages needs besides them, read when tracing began.
#[derive(Clone, Debug)]
pub struct LiveSetup {
    pub cpus: Vec<u32>,
    /// CPUs tracefs has, read or not (the trace's CPU count).
    pub cpu_count: u32,
    pub layout: PageLayout,
    pub page_size: usize,
    pub header_page: String,
    pub header_event: String,
    /// (system, format text) of every enabled event and of the `ftrace` system.
    pub format_files: Vec<(String, String)>,
    pub printk_formats: String,
    pub clock: String,
    pub trace_clock_file: String,
    pub uname: Option<String>,
    /// Topology, tunables, and every task's affinity when tracing began.
    pub context: RecordedContext,
    /// Killed instances whose tracefs changes were put back before tracing.
    pub recovered: Vec<restore::Recovered>,
}

/// Tracing in progress.
pub struct Live {
    guard: TracefsGuard,
    stop: StopFlag,
    readers: Vec<(u32, JoinHandle<Result<Losses, RecordError>>)>,
}

impl Live {
    /// Prepares tracefs, starts a reader per CPU and switches tracing on.
    pub fn start(options: &LiveOptions) -> Result<(Live, LiveSetup, Receiver<Delivery>), RecordError> {
        check_privileges()?;
        let mut guard = TracefsGuard::open()?;
        let recovered = std::mem::take(&mut guard.recovered);
        let all_cpus = crate::session::possible_cpus(guard.fs())?;
        let cpus = crate::session::recorded_cpus(options.cpus.as_deref())?;
        let selected = events::select(guard.fs(), &options.events)?;
        guard.set("tracing_on", "0")?;
        guard.set_buffer_kb(options.buffer_kb, &all_cpus)?;
        guard.fs().clear_buffers()?;
        for event in &selected {
            guard.set(&format!("{}/enable", event.dir()), "1")?;
        }
        let mut setup = read_setup(guard.fs(), cpus, all_cpus.last().map_or(0, |&c| c + 1))?;
        setup.recovered = recovered;
        let (sender, receiver) = sync_channel(CHANNEL_PAGES);
        let stop = Arc::new(AtomicBool::new(false));
        let latest = Arc::new(AtomicU64::new(0));
        let mut readers = Vec::new();
        for &cpu in &setup.cpus {
            let reader = LiveReader::open(guard.fs(), cpu, &setup, sender.clone(), Arc::clone(&latest))?;
            let stop = Arc::clone(&stop);
            let thread = std::thread::Builder::new()
                .name(format!("watch-cpu{cpu}"))
                .spawn(move || reader.run(&stop))
                .map_err(|source| RecordError::System { context: "starting a reader thread", source })?;
            readers.push((cpu, thread));
        }
        let mut live = Live { guard, stop: StopFlag(stop), readers };
        live.guard.set("tracing_on", "1")?;
        Ok((live, setup, receiver))
    }

    /// The saved cmdlines now (tasks named since tracing began).
    pub fn cmdlines(&self) -> String {
        self.guard.fs().read("saved_cmdlines").unwrap_or_default()
    }

    /// Switches tracing off, lets each reader drain its CPU, restores tracefs; the events
    /// the kernel reported lost. The receiver sees every page before its channel closes.
    pub fn stop(mut self) -> Result<Losses, RecordError> {
        let off = self.guard.set("tracing_on", "0");
        self.stop.0.store(true, Ordering::SeqCst);
        let mut losses = Losses::default();
        let mut failed = off.err();
        for (cpu, thread) in std::mem::take(&mut self.readers) {
            match thread.join() {
                Ok(Ok(l)) => losses.add(l),
                Ok(Err(e)) => failed = failed.or(Some(e)),
                Err(_) => failed = failed.or(Some(RecordError::ReaderPanicked(cpu))),
            }
        }
        let restored = self.guard.restore();
        match failed {
            Some(error) => Err(error),
            None => restored.map(|()| losses),
        }
    }
}

/// Tells the readers to stop when dropped (on every way out).
struct StopFlag(Arc<AtomicBool>);

impl Drop for StopFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn read_setup(fs: &Tracefs, cpus: Vec<u32>, cpu_count: u32) -> Result<LiveSetup, RecordError> {
    let header_page = fs.read("events/header_page")?;
    let (layout, page_size) = page_format(&header_page)
        .ok_or_else(|| RecordError::Content { path: fs.path("events/header_page"), text: header_page.clone() })?;
    let mut all = events::enabled(fs)?;
    all.extend(events::ftrace_events(fs)?);
    let format_files = all
        .iter()
        .map(|event| Ok((event.system.clone(), fs.read(&format!("{}/format", event.dir()))?)))
        .collect::<Result<Vec<_>, RecordError>>()?;
    let trace_clock_file = fs.read("trace_clock")?;
    let clock = restore::selected(&trace_clock_file)
        .ok_or_else(|| RecordError::Content { path: fs.path("trace_clock"), text: trace_clock_file.clone() })?
        .to_string();
    let context = RecordedContext {
        topology: machine::topology().map(|t| t.to_lscpu()),
        tunables: machine::tunables(),
        command: None,
        exit: None,
        affinity: crate::affinity::every_task(),
        pid: None,
    };
    Ok(LiveSetup {
        cpus,
        cpu_count,
        layout,
        page_size,
        header_event: fs.read("events/header_event")?,
        header_page,
        format_files,
        printk_formats: fs.read("printk_formats")?,
        clock,
        trace_clock_file,
        uname: machine::uname(),
        context,
        recovered: Vec::new(),
    })
}

struct LiveReader {
    cpu: u32,
    pipe: PipeRaw,
    sender: SyncSender<Delivery>,
    /// The latest event time any reader has handed over.
    latest: Arc<AtomicU64>,
}

impl LiveReader {
    fn open(
        fs: &Tracefs,
        cpu: u32,
        setup: &LiveSetup,
        sender: SyncSender<Delivery>,
        latest: Arc<AtomicU64>,
    ) -> Result<LiveReader, RecordError> {
        Ok(LiveReader { cpu, pipe: PipeRaw::open(fs, cpu, setup.layout, setup.page_size)?, sender, latest })
    }

    fn run(mut self, stop: &AtomicBool) -> Result<Losses, RecordError> {
        loop {
            let stopping = stop.load(Ordering::SeqCst);
            let before = self.latest.load(Ordering::SeqCst);
            let (cpu, sender, latest) = (self.cpu, &self.sender, &self.latest);
            let endian = self.pipe.layout().endian;
            let data_offset = self.pipe.layout().data_offset;
            let mut hand_over = |page: &[u8], header: &PageHeader| {
                let data = &page[data_offset..data_offset + header.data_len];
                let last = PageRecords::new(data, header.timestamp, endian)
                    .map_while(Result::ok)
                    .last()
                    .map_or(header.timestamp, |r| r.timestamp);
                let sent = sender.send(Delivery::Page { cpu, bytes: page.to_vec() }).is_ok();
                latest.fetch_max(last, Ordering::SeqCst);
                Ok(sent)
            };
            if !self.pipe.drain(&mut hand_over)? {
                return Ok(self.pipe.losses());
            }
            // Drained: nothing of this CPU up to `before` is still in the kernel.
            if self.sender.send(Delivery::Drained { cpu: self.cpu, until_ns: before }).is_err() || stopping {
                return Ok(self.pipe.losses());
            }
            self.pipe.wait(POLL_MS);
        }
    }
}
