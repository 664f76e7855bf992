//! `schedlens watch`: the live sanity checker, a flight recorder that keeps only the
//! incidents. Glue between `record::Live` (tracefs, one reader per CPU) and the `watch`
//! crate (the ring, detection, incident files): pages go into the ring, detection ticks
//! twice a second on what arrived up to the watermark, each incident is written as
//! `DIR/incident-NNN.dat` and told in one line (or one JSON object); a summary on exit
//! and on SIGUSR1; progress on a terminal only.

use crate::Outcome;
use crate::progress::Progress;
use ::record::{Delivery, Live, LiveOptions, LiveSetup};
use analysis::check::{Incident, Kind};
use anyhow::{Context, Result};
use documents::watch::{WatchIncident, WatchSummary};
use model::Nanos;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};
use tracedat::FileVersion;
use tracedat::compress::Codec;
use watch::{DetectOptions, Detector, Ring, Setup};

/// How often detection runs.
const TICK: Duration = Duration::from_millis(500);
/// An episode is final once it ended this long before the watermark: later events can
/// no longer extend it (with the readers' 100 ms polling and the tick, incidents come
/// within about a second of their end).
const SETTLE_NS: u64 = 300_000_000;
/// Each tick analyses at least this much before the watermark.
const LOOKBACK_NS: u64 = 1_500_000_000;
/// The ring never holds more than this many times `--keep` (an episode that never ends).
const MAX_HOLD: u64 = 3;

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  schedlens watch -o incidents\n  \
                        schedlens watch --format json --min-lost 50 -- ./server\n\n\
                        Incidents are episodes of waste as `schedlens check` finds them: tasks waited while \
                        CPUs idled. Each is written with the --keep seconds before it as DIR/incident-NNN.dat.")]
pub struct Args {
    /// The directory incident files are written to.
    #[arg(short, long, value_name = "DIR", default_value = "incidents")]
    output: PathBuf,
    /// Seconds of events kept before each incident (the ring's length).
    #[arg(long, value_name = "S", default_value_t = 10.0, value_parser = seconds)]
    keep: f64,
    /// Leave out episodes that lost less CPU time than this many milliseconds. Larger than
    /// check's 0.25 ms: a live machine (and the watcher itself) makes sub-millisecond
    /// episodes every second.
    #[arg(long, value_name = "MS", default_value_t = 10.0, value_parser = seconds)]
    min_lost: f64,
    /// Without a command, watch for S seconds (without either, until Ctrl-C).
    #[arg(long, value_name = "S", conflicts_with = "command", value_parser = seconds)]
    duration: Option<f64>,
    /// CPUs to watch, e.g. 0,2-3 [default: every online CPU].
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// Ring-buffer size per CPU in the kernel, in KiB.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    buffer_kb: u32,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// At the end, also write what the ring holds then (the last --keep seconds) here.
    #[arg(long, value_name = "FILE")]
    ring_at_exit: Option<PathBuf>,
    /// Watch while this command runs, with its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

fn seconds(text: &str) -> Result<f64, String> {
    crate::common::seconds(text)
}

pub fn run(args: Args) -> Result<Outcome> {
    keep_the_heap_flat();
    std::fs::create_dir_all(&args.output).with_context(|| format!("creating {}", args.output.display()))?;
    let interrupts = restore::Interrupts::start().context("catching signals")?;
    let summary_asked = restore::flag_on(libc::SIGUSR1).context("catching SIGUSR1")?;
    let options = LiveOptions { events: Vec::new(), buffer_kb: args.buffer_kb, cpus: args.cpus.clone() };
    let (live, live_setup, deliveries) = Live::start(&options).context("starting to trace")?;
    crate::record::tell_recovered(&live_setup.recovered);
    let mut watcher = Watcher::new(&args, &live_setup, live.cmdlines());
    let mut child = match args.command.split_first() {
        Some((program, rest)) => {
            Some(Command::new(program).args(rest).spawn().with_context(|| format!("starting {program:?}"))?)
        }
        None => None,
    };
    let deadline = args.duration.map(|s| watcher.started + Duration::from_secs_f64(s));
    let mut last_tick = Instant::now();
    let mut exit = None;
    loop {
        watcher.receive(&deliveries, Duration::from_millis(50))?;
        if last_tick.elapsed() >= TICK {
            last_tick = Instant::now();
            watcher.setup.cmdlines = live.cmdlines();
            watcher.tick(false)?;
        }
        if summary_asked.swap(false, Ordering::Relaxed) {
            watcher.summary()?;
        }
        if let Some(signal) = interrupts.signal() {
            if let Some(child) = &child {
                pass_on(child, signal);
            }
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        if let Some(c) = &mut child {
            if let Some(status) = c.try_wait().context("waiting for the command")? {
                exit = Some(status);
                break;
            }
        }
    }
    watcher.setup.cmdlines = live.cmdlines();
    // The readers drain into the channel while tracing stops: receive until it closes.
    let stopping = std::thread::spawn(move || live.stop());
    while watcher.receive(&deliveries, Duration::from_millis(100))? {}
    let stopped = stopping.join().map_err(|_| anyhow::anyhow!("stopping the readers panicked"))?;
    if let Some(mut child) = child.filter(|_| exit.is_none()) {
        exit = child.wait().ok();
    }
    watcher.tick(true)?;
    if let Some(path) = &args.ring_at_exit {
        let version = FileVersion::V7 { compression: Codec::Zstd };
        watch::write_incident(&watcher.setup, &watcher.ring, (0, u64::MAX), version, path)
            .with_context(|| format!("writing the ring to {}", path.display()))?;
    }
    drop(watcher.progress.take());
    watcher.summary()?;
    stopped.context("stopping the trace")?;
    if let Some(status) = exit.filter(|s| !s.success()) {
        eprintln!("schedlens: warning: the command ended with {status}");
    }
    Ok(match interrupts.signal() {
        Some(signal) => Outcome::Interrupted(signal),
        None => Outcome::Complete,
    })
}

/// Fixes glibc's allocator thresholds for a process that runs for hours. By default glibc
/// raises its mmap threshold each time a large block is freed, after which the buffers
/// every tick allocates (a snapshot of the ring, its model) come from the heap and
/// fragment it: under hackbench replayed through the detector the resident size crept
/// 8-10 MB per 107 s of trace while the bytes held stayed the same; with fixed
/// thresholds it stays within 2 MB (docs/performance.md, "watch").
fn keep_the_heap_flat() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 4 << 20);
    }
}

/// Passes a terminating signal on to the command (not yet reaped, so its pid is its own).
fn pass_on(child: &Child, signal: i32) {
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
}

/// The ring, the detector and what was told.
struct Watcher {
    setup: Setup,
    affinity_at_start: Vec<tracedat::TaskAffinity>,
    cpus: Vec<u32>,
    ring: Ring,
    detector: Detector,
    keep_ns: u64,
    dir: PathBuf,
    json: bool,
    incidents: u32,
    started: Instant,
    progress: Option<Progress>,
    last_progress: (Instant, u64),
}

impl Watcher {
    fn new(args: &Args, live: &LiveSetup, cmdlines: String) -> Watcher {
        let setup = Setup {
            cpu_count: live.cpu_count,
            page_size: live.page_size as u32,
            long_size: live.layout.commit_size as u8,
            endian: live.layout.endian,
            header_page: live.header_page.clone(),
            header_event: live.header_event.clone(),
            format_files: live.format_files.clone(),
            printk_formats: live.printk_formats.clone(),
            cmdlines,
            clock: live.clock.clone(),
            trace_clock_file: Some(live.trace_clock_file.clone()),
            uname: live.uname.clone(),
            cpu_stats: Vec::new(),
            context: live.context.clone(),
        };
        let options = DetectOptions {
            min_lost: Nanos((args.min_lost * 1e6) as u64),
            settle_ns: SETTLE_NS,
            lookback_ns: LOOKBACK_NS,
            spill_dir: args.output.clone(),
        };
        Watcher {
            ring: Ring::new(live.layout, live.cpu_count),
            affinity_at_start: live.context.affinity.clone(),
            cpus: live.cpus.clone(),
            setup,
            detector: Detector::new(options),
            keep_ns: (args.keep * 1e9) as u64,
            dir: args.output.clone(),
            json: args.format == Format::Json,
            incidents: 0,
            started: Instant::now(),
            progress: Progress::status("watching"),
            last_progress: (Instant::now(), 0),
        }
    }

    /// Takes what the readers delivered within `wait`; false once the channel closed.
    fn receive(&mut self, deliveries: &Receiver<Delivery>, wait: Duration) -> Result<bool> {
        let mut next = deliveries.recv_timeout(wait);
        loop {
            match next {
                Ok(Delivery::Page { cpu, bytes }) => self.ring.add_page(cpu, &bytes),
                Ok(Delivery::Drained { cpu, until_ns }) => self.ring.drained(cpu, until_ns),
                Err(RecvTimeoutError::Timeout) => return Ok(true),
                Err(RecvTimeoutError::Disconnected) => return Ok(false),
            }
            next = deliveries.try_recv().map_err(|e| match e {
                std::sync::mpsc::TryRecvError::Empty => RecvTimeoutError::Timeout,
                std::sync::mpsc::TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
            });
        }
    }

    /// Detection on what arrived; each new incident written and told; the ring trimmed.
    fn tick(&mut self, at_end: bool) -> Result<()> {
        let Some(watermark) = self.ring.watermark(Some(&self.cpus)) else { return Ok(()) };
        let found = self.detector.tick(&self.setup, &self.ring, watermark, at_end).context("detecting")?;
        if !found.is_empty() {
            // The tasks' affinity now (tasks started since), after that of the start.
            self.setup.context.affinity = self.affinity_at_start.clone();
            self.setup.context.affinity.extend(::record::every_task_affinity());
        }
        for incident in found {
            self.incidents += 1;
            self.report(&incident, watermark)?;
        }
        let forget = self.detector.keep_from(watermark, self.keep_ns);
        let cap = watermark.saturating_sub(self.keep_ns.saturating_mul(MAX_HOLD));
        self.ring.evict_before(forget.max(cap));
        self.show_progress();
        Ok(())
    }

    fn report(&mut self, incident: &Incident, watermark: u64) -> Result<()> {
        let path = self.dir.join(format!("incident-{:03}.dat", self.incidents));
        let span = watch::incident_span(incident, self.keep_ns, watermark);
        let version = FileVersion::V7 { compression: Codec::Zstd };
        let file = match watch::write_incident(&self.setup, &self.ring, span, version, &path) {
            Ok(_) => Some(path.display().to_string()),
            Err(error) => {
                eprintln!("schedlens: warning: {}: {error}", path.display());
                None
            }
        };
        let document = self.document(incident, file, watermark);
        if let Some(progress) = &self.progress {
            progress.message(String::new());
        }
        let mut out = std::io::stdout().lock();
        if self.json {
            writeln!(out, "{}", serde_json::to_string(&document)?)?;
        } else {
            writeln!(out, "{}", incident_line(&document))?;
        }
        out.flush()?;
        Ok(())
    }

    fn document(&self, incident: &Incident, file: Option<String>, watermark: u64) -> WatchIncident {
        WatchIncident {
            type_: "incident".into(),
            number: self.incidents,
            kind: incident.kind.name().into(),
            start_ns: incident.start.0,
            end_ns: incident.end.0,
            cpus: incident.cpus.iter().map(|c| c.0).collect(),
            idle_cpus: incident.idle_cpus.iter().map(|c| c.0).collect(),
            tasks: incident.tasks.iter().map(|t| format!("{}:{}", t.comm, t.pid.0)).collect(),
            lost_cpu_ns: incident.lost_cpu_ns,
            pinning: incident.pinning.name().into(),
            explanation: incident.explanation.clone(),
            file,
            lag_ns: watermark.saturating_sub(incident.end.0),
        }
    }

    fn summary(&self) -> Result<()> {
        let totals = &self.detector.totals;
        let count = |kind: Kind| totals.incidents[Kind::ALL.iter().position(|&k| k == kind).unwrap_or(0)];
        let summary = WatchSummary {
            type_: "summary".into(),
            watched_s: self.started.elapsed().as_secs_f64(),
            analysed_ns: totals.watched_ns,
            events: self.ring.events_seen,
            events_lost: self.ring.events_lost,
            losses_unknown: self.ring.losses_unknown,
            suppressed_by_losses: totals.suppressed_by_losses,
            work_conservation: count(Kind::WorkConservation),
            wakeup_placement: count(Kind::WakeupPlacement),
            kthread_preemption: count(Kind::KthreadPreemption),
            idle_while_waiting_share: totals.idle_while_waiting_ns as f64 / totals.watched_ns.max(1) as f64,
            ring_bytes: self.ring.bytes() as u64,
            cpu_time_s: ::record::cpu_time().map_or(0.0, |t| t.as_secs_f64()),
        };
        if self.json {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", serde_json::to_string(&summary)?)?;
            out.flush()?;
        } else {
            eprintln!("{}", summary_text(&summary, self.incidents));
        }
        Ok(())
    }

    /// Events per second, the ring's fill and the incidents so far (on a terminal).
    fn show_progress(&mut self) {
        let Some(progress) = &self.progress else { return };
        let (then, events_then) = self.last_progress;
        let seconds = then.elapsed().as_secs_f64().max(1e-3);
        let rate = (self.ring.events_seen - events_then) as f64 / seconds;
        self.last_progress = (Instant::now(), self.ring.events_seen);
        let held_s = match (self.ring.start_ns(), self.ring.watermark(Some(&self.cpus))) {
            (Some(start), Some(end)) => end.saturating_sub(start) as f64 / 1e9,
            _ => 0.0,
        };
        progress.message(format!(
            "watching: {rate:.0} events/s, ring {:.1} MB ({held_s:.1} s), {} incidents",
            self.ring.bytes() as f64 / 1e6,
            self.incidents
        ));
    }
}

fn incident_line(d: &WatchIncident) -> String {
    let list = |cpus: &[u32]| cpus.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    format!(
        "incident {}: {} at {:.6} s for {:.3} s, CPUs {} (idle {}), tasks {}, lost {:.3} s of CPU time, pinned: {}, file {} (found {:.2} s after its end)",
        d.number,
        d.kind,
        d.start_ns as f64 / 1e9,
        d.end_ns.saturating_sub(d.start_ns) as f64 / 1e9,
        list(&d.cpus),
        list(&d.idle_cpus),
        if d.tasks.is_empty() { "-".to_string() } else { d.tasks.join(" ") },
        d.lost_cpu_ns as f64 / 1e9,
        d.pinning,
        d.file.as_deref().unwrap_or("(not written)"),
        d.lag_ns as f64 / 1e9,
    )
}

fn summary_text(s: &WatchSummary, incidents: u32) -> String {
    format!(
        "schedlens: watched {:.1} s ({:.1} s of trace analysed): {} events, {} lost{}; {incidents} incidents \
         (work-conservation {}, wakeup-placement {}, kthread-preemption {}){}; a task waited while a core idled \
         {:.2}% of the time; ring {:.1} MB; watcher CPU time {:.2} s",
        s.watched_s,
        s.analysed_ns as f64 / 1e9,
        s.events,
        s.events_lost,
        match s.losses_unknown {
            0 => String::new(),
            n => format!(" (and {n} losses of unknown size)"),
        },
        s.work_conservation,
        s.wakeup_placement,
        s.kthread_preemption,
        match s.suppressed_by_losses {
            0 => String::new(),
            n => format!(", {n} episodes not reported: events were lost around them"),
        },
        100.0 * s.idle_while_waiting_share,
        s.ring_bytes as f64 / 1e6,
        s.cpu_time_s,
    )
}
