//! `schedlens latency`: how long tasks waited for a CPU once they could run (wakeup
//! latency and preemption waits), per command, task or CPU, with percentiles, the
//! largest delay and where it happened, and its causes; `--perf` prints `perf sched
//! latency -p`'s table under perf's own definitions, `--per-switch` `perf sched
//! timehist`'s per-switch times. The definitions are in docs/latency.md.

use crate::Outcome;
use crate::common::{Loaded, WindowArgs, load_model, load_model_streaming};
use crate::progress::Progress;
use crate::spill::{Spill, scratch_context};
use analysis::check::Affinity;
use analysis::latency::{self, Group, Latencies, Summary, bucket_edges_ns};
use analysis::perf_sched::{self, PerfSched};
use anyhow::{Context, Result};
use documents::latency::{LatencyGroup, LatencyMax, LatencyReport, LatencyRow, LatencySummary, PerfLatencyRow};
use figures::latency_histogram::{Series, wakeup_latency_figure};
use inputs::Input;
use model::{Detail, Model, Nanos, TaskId};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
                        schedlens latency run.dat --top 10\n  \
                        schedlens latency run.dat --task 4242\n  \
                        schedlens latency before.dat after.dat --after-sleep --figure shift.svg   (each trace's commands on one scale)")]
pub struct Args {
    /// The trace file (trace.dat, perf.data or Perfetto); several for text tables one
    /// after the other and one figure comparing them (--figure).
    #[arg(required = true, value_name = "TRACE")]
    traces: Vec<PathBuf>,
    #[command(flatten)]
    window: WindowArgs,
    /// One row per command name, per task, or per CPU the tasks ran on.
    #[arg(long, value_enum, default_value = "command")]
    by: By,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Only the N rows with the largest p99 wakeup latency (every row when not given).
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// perf sched latency -p's table, under perf's definitions (whole trace, every task).
    #[arg(long, conflicts_with = "per_switch")]
    perf: bool,
    /// perf sched timehist's wait time, scheduling delay and run time per switch.
    #[arg(long)]
    per_switch: bool,
    /// One task (a pid) or every task ever named NAME: its distribution, its worst
    /// waits and who held the CPU while it waited (text).
    #[arg(long, value_name = "PID|NAME", conflicts_with_all = ["perf", "per_switch"])]
    task: Option<String>,
    /// Also draw the wakeup latency histograms of the rows (the first 6, or --top; with
    /// several traces, the first 6 of them all shared out, or --top of each) as a figure,
    /// one series per trace and row on one scale; the extension (.pdf, .svg, .png) picks
    /// the format.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["perf", "per_switch"])]
    figure: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum By {
    Command,
    Task,
    Cpu,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Csv,
    Json,
}

/// Rows of each trace drawn by default, shared out among the traces.
const FIGURE_ROWS: usize = 6;

pub fn run(args: Args) -> Result<Outcome> {
    args.window.validate()?;
    let figure_format = args.figure.as_deref().map(figure_format).transpose()?;
    let several = args.traces.len() > 1;
    if several && (args.perf || args.per_switch || args.task.is_some() || args.format != Format::Text) {
        return Err(crate::usage(
            "several traces are read for text tables and --figure only; give --perf, --per-switch, --task, --format csv and json one trace",
        ));
    }
    if args.perf || args.per_switch {
        return run_perf(&args, &args.traces[0]);
    }
    let figure_rows = args.top.unwrap_or(FIGURE_ROWS.div_ceil(args.traces.len()));
    let mut series = Vec::new();
    let mut outcome = Outcome::Complete;
    for (n, trace) in args.traces.iter().enumerate() {
        let (loaded, latencies, origin) = load_latencies(&args, trace)?;
        if outcome == Outcome::Complete {
            outcome = loaded.outcome;
        }
        let model = &loaded.model;
        let mut out = std::io::stdout().lock();
        if let Some(wanted) = &args.task {
            let tasks = tasks_named(model, wanted);
            if tasks.is_empty() {
                return Err(crate::usage(format!("--task {wanted}: no task has that pid or name in the trace")));
            }
            print_task(&mut out, model, &latencies, &tasks, origin, args.top.unwrap_or(10))?;
            return Ok(loaded.outcome);
        }
        let mut rows = rows(model, &latencies, args.by);
        rows.sort_by(|a, b| {
            b.1.wakeups.latencies.p99_ns.cmp(&a.1.wakeups.latencies.p99_ns).then_with(|| a.0.cmp(&b.0))
        });
        rows.truncate(args.top.unwrap_or(usize::MAX));
        let name = file_name(trace);
        series.extend(figure_series(&rows[..rows.len().min(figure_rows)], several.then_some(name.as_str())));
        if several {
            writeln!(out, "{}==> {} <==", if n == 0 { "" } else { "\n" }, trace.display())?;
        }
        match args.format {
            Format::Text => print_text(&mut out, model, &latencies, &rows, origin, args.by)?,
            Format::Csv => print_csv(&mut out, &rows)?,
            Format::Json => {
                let document = report(model, &latencies, &rows);
                writeln!(out, "{}", serde_json::to_string_pretty(&document)?)?;
            }
        }
    }
    if let (Some(path), Some(format)) = (&args.figure, figure_format) {
        let names: Vec<String> = args.traces.iter().map(|t| file_name(t)).collect();
        let title = format!("{}: wakeup latency", names.join(", "));
        let png = render::PngOptions::from_dpi(96.0);
        let scene = wakeup_latency_figure(&title, &series);
        crate::figure::write_document(path, format, &png, render::Document { pages: vec![scene] })?;
    }
    Ok(outcome)
}

/// The trace's model and its latencies over the window, with the window's origin.
/// `--task` builds the whole model (who held the CPU asks which runqueue each wait was
/// in); otherwise the model keeps segments and tasks while the waits pass, as records,
/// through a [`Spill`] once, so a big trace costs no memory for the waits' tables.
fn load_latencies(args: &Args, trace: &Path) -> Result<(Loaded, Latencies, Nanos)> {
    let filter = args.window.filter();
    if args.task.is_some() {
        let loaded = load_model(trace, Detail::FULL)?;
        let (window, origin) = args.window.resolve(&loaded.model, trace)?;
        let affinity = loaded.trace.recorded_context().and_then(|c| Affinity::recorded(&c));
        let latencies = latency::compute(&loaded.model, window, &filter, affinity.as_ref(), parts(args));
        return Ok((loaded, latencies, origin));
    }
    let mut collector = analysis::records::Collector::new(Spill::new());
    let loaded = load_model_streaming(trace, &mut collector)?;
    let (window, origin) = args.window.resolve(&loaded.model, trace)?;
    let affinity = loaded.trace.recorded_context().and_then(|c| Affinity::recorded(&c));
    // After the model's bar: seconds on a trace of tens of millions of events.
    let status = Progress::status("measuring the waits");
    let (waits, migrations) = collector.finish(&loaded.model);
    let mut pass = latency::RecordPass::new(&loaded.model, migrations, window, &filter, affinity.as_ref(), parts(args));
    waits.read_chunks_once(CHUNK_RECORDS, &mut |records| pass.add(records)).with_context(|| scratch_context(trace))?;
    let latencies = pass.finish();
    drop(status);
    Ok((loaded, latencies, origin))
}

/// Records handed to the pass at once, each chunk shared over the cores.
const CHUNK_RECORDS: usize = 200_000;

/// What the output shows: the rows of `--by` beside the overall group; `--task` the
/// task's delays and groups.
fn parts(args: &Args) -> latency::Parts {
    let task = args.task.is_some();
    latency::Parts {
        delays: task,
        by_task: task || args.by == By::Task,
        by_command: args.by == By::Command,
        by_cpu: args.by == By::Cpu,
    }
}

/// `--figure`'s format, from its extension.
fn figure_format(path: &Path) -> Result<render::Format> {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    render::Format::from_extension(extension).ok_or_else(|| {
        crate::usage(format!("{}: unknown figure format {extension:?}; use .pdf, .svg or .png", path.display()))
    })
}

fn file_name(trace: &Path) -> String {
    trace.file_name().map_or_else(|| trace.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// The rows' wakeup latency histograms as the figure's series, named after `trace` when
/// several traces are drawn.
fn figure_series(rows: &[KeyedRow<'_>], trace: Option<&str>) -> Vec<Series> {
    rows.iter()
        .map(|(key, group)| {
            let name = match (&key.comm, key.pid, key.cpu) {
                (Some(comm), Some(pid), _) => format!("{comm} {pid}"),
                (Some(comm), None, _) => comm.clone(),
                (_, _, cpu) => format!("CPU {}", cpu.unwrap_or(0)),
            };
            let name = trace.map_or(name.clone(), |trace| format!("{trace}: {name}"));
            Series { name, counts: group.wakeups.latencies.histogram.to_vec() }
        })
        .collect()
}

/// The tasks of a pid, or ever named `wanted`.
fn tasks_named(model: &Model, wanted: &str) -> Vec<TaskId> {
    let by_pid = wanted.parse::<i32>().ok();
    model
        .tasks()
        .iter()
        .filter(|(id, _)| *id != TaskId::IDLE)
        .filter(|(_, task)| match by_pid {
            Some(pid) => task.pid.0 == pid,
            None => task.comms.iter().any(|&(_, comm)| model.comms().name(comm) == wanted),
        })
        .map(|(id, _)| id)
        .collect()
}

/// `--task`: the tasks' delays together, their worst `top`, and who held their CPU.
fn print_task(
    out: &mut impl Write,
    model: &Model,
    latencies: &Latencies,
    tasks: &[TaskId],
    origin: Nanos,
    top: usize,
) -> Result<()> {
    let mut delays: Vec<&latency::Delay> = latencies.delays.iter().filter(|d| tasks.contains(&d.task)).collect();
    let pids: Vec<String> = tasks.iter().take(10).map(|&t| pid_of(model, t).to_string()).collect();
    let more = if tasks.len() > pids.len() { ", ..." } else { "" };
    writeln!(out, "tasks: {} (pid {}{more})", tasks.len(), pids.join(", "))?;
    let groups: Vec<&Group> =
        latencies.by_task.iter().filter(|(task, ..)| tasks.contains(task)).map(|(.., group)| group).collect();
    let mut unknown = latency::UnknownEnds::default();
    for g in &groups {
        unknown += g.unknown;
    }
    let together = latency::summarise(&delays, unknown);
    for (what, summary) in [("wakeup latency", &together.wakeups), ("preemption wait", &together.preemptions)] {
        writeln!(
            out,
            "{what}: {} delays, p50 {} ms, p90 {} ms, p99 {} ms, p99.9 {} ms, max {} ms",
            summary.latencies.count,
            ms(summary.latencies.p50_ns),
            ms(summary.latencies.p90_ns),
            ms(summary.latencies.p99_ns),
            ms(summary.latencies.p999_ns),
            ms(summary.worst.map_or(0, |w| w.latency_ns))
        )?;
        writeln!(out, "  {}", causes(summary))?;
    }
    let unknown = unknown.total();
    writeln!(out, "waits with an unknown end (no latency): {unknown}")?;
    writeln!(out, "\nwakeup latency histogram:")?;
    print_histogram(out, &together.wakeups)?;
    delays.sort_by(|a, b| b.latency_ns().cmp(&a.latency_ns()).then(a.end.cmp(&b.end)));
    writeln!(
        out,
        "
worst waits:"
    )?;
    writeln!(
        out,
        "  {:>12} {:>10} {:>7} {:>4} {:<10} {:<12} {:>8} {:>12}",
        "start (s)", "ms", "pid", "CPU", "kind", "placed", "migrated", "other-idle ms"
    )?;
    for d in delays.iter().take(top) {
        let kind = match d.kind {
            latency::DelayKind::Wakeup => "wakeup",
            latency::DelayKind::NewTask => "new task",
            latency::DelayKind::Preemption => "preempted",
        };
        let placed = match d.placement {
            latency::Placement::IdleCpu => "idle CPU",
            latency::Placement::BehindTask => "behind task",
            latency::Placement::Unknown => "unknown",
        };
        writeln!(
            out,
            "  {:>12} {:>10} {:>7} {:>4} {:<10} {:<12} {:>8} {:>12}",
            relative(d.start, origin),
            ms(d.latency_ns()),
            pid_of(model, d.task),
            d.cpu.0,
            kind,
            placed,
            if d.migrated { "yes" } else { "no" },
            ms(d.allowed_idle_ns)
        )?;
    }
    writeln!(
        out,
        "
who held the CPU while it waited (k: kernel thread):"
    )?;
    for a in latency::antagonists(model, latencies.window, tasks).iter().take(top) {
        let comm = model.comms().name(model.tasks().get(a.task).last_comm());
        let mark = if a.kernel_thread { "k" } else { " " };
        writeln!(out, "  {mark} {:>7} {:<16} {:>10} ms", pid_of(model, a.task), comm, ms(a.held_ns))?;
    }
    Ok(())
}

/// A row's key (for sorting ties and printing) and its group.
type KeyedRow<'a> = (RowKey, &'a Group);

/// What names a row: command, task or CPU.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct RowKey {
    comm: Option<String>,
    pid: Option<i32>,
    cpu: Option<u32>,
}

fn rows<'a>(model: &Model, latencies: &'a Latencies, by: By) -> Vec<KeyedRow<'a>> {
    let key = |comm: Option<String>, pid: Option<i32>, cpu: Option<u32>| RowKey { comm, pid, cpu };
    match by {
        By::Command => latencies.by_command.iter().map(|(c, g)| (key(Some(c.clone()), None, None), g)).collect(),
        By::Task => latencies
            .by_task
            .iter()
            .map(|(task, pid, name, g)| {
                debug_assert_eq!(model.tasks().get(*task).pid, *pid);
                (key(Some(name.clone()), Some(pid.0), None), g)
            })
            .collect(),
        By::Cpu => latencies.by_cpu.iter().map(|(cpu, g)| (key(None, None, Some(cpu.0)), g)).collect(),
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn relative(t: Nanos, origin: Nanos) -> String {
    format!("{:.6}", (t.0 as i128 - origin.0 as i128) as f64 / 1e9)
}

fn pid_of(model: &Model, task: TaskId) -> i32 {
    model.tasks().get(task).pid.0
}

fn print_text(
    out: &mut impl Write,
    model: &Model,
    latencies: &Latencies,
    rows: &[KeyedRow<'_>],
    origin: Nanos,
    by: By,
) -> Result<()> {
    let window = latencies.window;
    writeln!(out, "window: {} .. {} s", relative(window.start, origin), relative(window.end, origin))?;
    let overall = &latencies.overall;
    for (what, summary) in [("wakeup latency", &overall.wakeups), ("preemption wait", &overall.preemptions)] {
        writeln!(
            out,
            "{what}: {} delays, p50 {} ms, p90 {} ms, p99 {} ms, p99.9 {} ms, max {} ms{}",
            summary.latencies.count,
            ms(summary.latencies.p50_ns),
            ms(summary.latencies.p90_ns),
            ms(summary.latencies.p99_ns),
            ms(summary.latencies.p999_ns),
            ms(summary.worst.map_or(0, |w| w.latency_ns)),
            summary.worst.map_or(String::new(), |w| format!(
                " (pid {} at {} s on CPU {}{})",
                pid_of(model, w.task),
                relative(w.start, origin),
                w.cpu.0,
                w.waker.map_or(String::new(), |waker| format!(", woken by pid {}", pid_of(model, waker)))
            ))
        )?;
        writeln!(out, "  {}", causes(summary))?;
    }
    let unknown = overall.unknown;
    writeln!(
        out,
        "waits with an unknown end (no latency): {} (lost events {}, trace end {}, unrecorded switch {})",
        unknown.total(),
        unknown.lost,
        unknown.trace_end,
        unknown.unrecorded
    )?;
    writeln!(out, "\nwakeup latency histogram (all tasks):")?;
    print_histogram(out, &overall.wakeups)?;
    let name = match by {
        By::Command => format!("{:<24}", "command"),
        By::Task => format!("{:<7} {:<16}", "pid", "comm"),
        By::Cpu => format!("{:<24}", "CPU"),
    };
    writeln!(
        out,
        "\n{name} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>6} {:>9} {:>7} {:>9} {:>7}",
        "wakeups",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "idle%",
        "migr%",
        "other-idle",
        "preempt",
        "p99 ms",
        "unknown"
    )?;
    for (key, group) in rows {
        let name = match (&key.comm, key.pid, key.cpu) {
            (Some(comm), Some(pid), _) => format!("{pid:<7} {comm:<16}"),
            (Some(comm), None, _) => format!("{comm:<24}"),
            (_, _, cpu) => format!("{:<24}", cpu.unwrap_or(0)),
        };
        let w = &group.wakeups;
        let share = |n: u64| if w.latencies.count == 0 { 0.0 } else { 100.0 * n as f64 / w.latencies.count as f64 };
        writeln!(
            out,
            "{name} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6.1} {:>6.1} {:>9} {:>7} {:>9} {:>7}",
            w.latencies.count,
            ms(w.latencies.p50_ns),
            ms(w.latencies.p90_ns),
            ms(w.latencies.p99_ns),
            ms(w.latencies.p999_ns),
            ms(w.worst.map_or(0, |m| m.latency_ns)),
            share(w.on_idle_cpu.0),
            share(w.migrated.0),
            ms(w.allowed_idle.1),
            group.preemptions.latencies.count,
            ms(group.preemptions.latencies.p99_ns),
            group.unknown.total()
        )?;
    }
    Ok(())
}

fn causes(summary: &Summary) -> String {
    format!(
        "{} placed on an idle CPU, {} behind a running task or unknown; {} migrated; {} while another allowed CPU idled ({} ms idle in all)",
        summary.on_idle_cpu.0,
        summary.latencies.count - summary.on_idle_cpu.0,
        summary.migrated.0,
        summary.allowed_idle.0,
        ms(summary.allowed_idle.1)
    )
}

fn print_histogram(out: &mut impl Write, summary: &Summary) -> Result<()> {
    let edges = bucket_edges_ns();
    let widest = summary.latencies.histogram.iter().copied().max().unwrap_or(0).max(1);
    let label = |ns: u64| if ns < 1_000_000 { format!("{} us", ns / 1000) } else { format!("{} ms", ns / 1_000_000) };
    for (k, &count) in summary.latencies.histogram.iter().enumerate().filter(|(_, c)| **c > 0) {
        let upper = edges.get(k + 1).map_or("...".to_string(), |&e| label(e));
        let bar = "#".repeat(((count * 40).div_ceil(widest)) as usize);
        writeln!(out, "  {:>9} .. {:<9} {:>8} {bar}", label(edges[k]), upper, count)?;
    }
    Ok(())
}

fn print_csv(out: &mut impl Write, rows: &[KeyedRow<'_>]) -> Result<()> {
    writeln!(
        out,
        "comm,pid,cpu,wakeups,wakeup_total_ns,wakeup_p50_ns,wakeup_p90_ns,wakeup_p99_ns,wakeup_p999_ns,wakeup_max_ns,on_idle_cpu,migrated,allowed_idle,allowed_idle_ns,preemptions,preemption_total_ns,preemption_p50_ns,preemption_p99_ns,preemption_max_ns,unknown_lost,unknown_trace_end,unknown_unrecorded"
    )?;
    for (key, group) in rows {
        let (w, p) = (&group.wakeups, &group.preemptions);
        let opt = |v: Option<i64>| v.map_or(String::new(), |v| v.to_string());
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            key.comm.as_deref().map_or(String::new(), csv_field),
            opt(key.pid.map(i64::from)),
            opt(key.cpu.map(i64::from)),
            w.latencies.count,
            w.latencies.total_ns,
            w.latencies.p50_ns,
            w.latencies.p90_ns,
            w.latencies.p99_ns,
            w.latencies.p999_ns,
            w.worst.map_or(0, |m| m.latency_ns),
            w.on_idle_cpu.0,
            w.migrated.0,
            w.allowed_idle.0,
            w.allowed_idle.1,
            p.latencies.count,
            p.latencies.total_ns,
            p.latencies.p50_ns,
            p.latencies.p99_ns,
            p.worst.map_or(0, |m| m.latency_ns),
            group.unknown.lost,
            group.unknown.trace_end,
            group.unknown.unrecorded
        )?;
    }
    Ok(())
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.to_string() }
}

fn report(model: &Model, latencies: &Latencies, rows: &[KeyedRow<'_>]) -> LatencyReport {
    LatencyReport {
        window_start_ns: latencies.window.start.0,
        window_end_ns: latencies.window.end.0,
        bucket_edges_ns: bucket_edges_ns().to_vec(),
        overall: group_document(model, &latencies.overall),
        rows: rows
            .iter()
            .map(|(key, group)| LatencyRow {
                comm: key.comm.clone(),
                pid: key.pid,
                cpu: key.cpu,
                delays: group_document(model, group),
            })
            .collect(),
    }
}

fn group_document(model: &Model, group: &Group) -> LatencyGroup {
    LatencyGroup {
        wakeups: summary_document(model, &group.wakeups),
        preemptions: summary_document(model, &group.preemptions),
        unknown_lost: group.unknown.lost,
        unknown_trace_end: group.unknown.trace_end,
        unknown_unrecorded: group.unknown.unrecorded,
    }
}

fn summary_document(model: &Model, summary: &Summary) -> LatencySummary {
    LatencySummary {
        count: summary.latencies.count,
        total_ns: summary.latencies.total_ns,
        histogram: summary.latencies.histogram.to_vec(),
        p50_ns: summary.latencies.p50_ns,
        p90_ns: summary.latencies.p90_ns,
        p99_ns: summary.latencies.p99_ns,
        p999_ns: summary.latencies.p999_ns,
        max: summary.worst.map(|w| LatencyMax {
            latency_ns: w.latency_ns,
            start_ns: w.start.0,
            end_ns: w.end.0,
            cpu: w.cpu.0,
            pid: pid_of(model, w.task),
            waker_pid: w.waker.map(|t| pid_of(model, t)),
        }),
        on_idle_cpu: summary.on_idle_cpu.0,
        migrated: summary.migrated.0,
        allowed_idle: summary.allowed_idle.0,
        allowed_idle_ns: summary.allowed_idle.1,
    }
}

/// `--perf` and `--per-switch`: perf's definitions over the whole trace.
fn run_perf(args: &Args, trace: &Path) -> Result<Outcome> {
    let loaded = load_model(trace, Detail::SEGMENTS)?;
    let perf = match &loaded.trace {
        Input::TraceDat(source) => perf_sched::read(source),
        Input::PerfData(source) => perf_sched::read(source),
        Input::Perfetto(source) => perf_sched::read(source),
    };
    let mut out = std::io::stdout().lock();
    if args.per_switch {
        print_switches(&mut out, &perf, args.format)?;
    } else {
        let rows = perf_rows(&loaded.model, &perf);
        match args.format {
            Format::Text => print_perf_text(&mut out, &rows)?,
            Format::Csv => print_perf_csv(&mut out, &rows)?,
            Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?,
        }
    }
    Ok(loaded.outcome)
}

/// perf's rows, with each task's name and switch-to-switch run time from the model,
/// sorted as perf sorts by default (average delay, then max, switches, runtime; all
/// largest first), then by pid.
fn perf_rows(model: &Model, perf: &PerfSched) -> Vec<PerfLatencyRow> {
    let mut switch_runtime = vec![0u64; model.tasks().len()];
    for timeline in model.cpus() {
        for segment in timeline.segments().iter() {
            let slot = &mut switch_runtime[segment.task.index()];
            *slot = slot.saturating_add(segment.duration().0);
        }
    }
    let mut rows: Vec<PerfLatencyRow> = perf
        .tasks
        .iter()
        .map(|task| {
            // The last task of that pid (perf keeps one thread per tid).
            let id = model.tasks().by_pid(task.pid);
            PerfLatencyRow {
                comm: id.map_or(format!(":{}", task.pid.0), |id| {
                    model.comms().name(model.tasks().get(id).last_comm()).to_string()
                }),
                pid: task.pid.0,
                runtime_ns: task.runtime_ns,
                switch_runtime_ns: id.map_or(0, |id| switch_runtime[id.index()]),
                switches: task.switches,
                avg_delay_ns: task.avg_delay_ns(),
                max_delay_ns: task.max_delay_ns,
                max_start_ns: task.max_start.0,
                max_end_ns: task.max_end.0,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        (b.avg_delay_ns, b.max_delay_ns, b.switches, b.runtime_ns, a.pid).cmp(&(
            a.avg_delay_ns,
            a.max_delay_ns,
            a.switches,
            a.runtime_ns,
            b.pid,
        ))
    });
    rows
}

/// perf's microsecond timestamps: seconds and six digits, truncated.
fn perf_time(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

fn print_perf_text(out: &mut impl Write, rows: &[PerfLatencyRow]) -> Result<()> {
    let rule = "-".repeat(155);
    writeln!(out, " {rule}")?;
    writeln!(
        out,
        "  {:<22}|   Runtime ms  | Switch ms   | Switches | Avg delay ms    | Max delay ms    | Max delay start           | Max delay end          |",
        "Task"
    )?;
    writeln!(out, " {rule}")?;
    let (mut runtime, mut count) = (0u64, 0u64);
    for row in rows {
        runtime += row.runtime_ns;
        count += row.switches;
        let name = format!("  {}:{} ", row.comm, row.pid);
        writeln!(
            out,
            "{name:<24}|{:>11.3} ms |{:>9.3} ms |{:>9} | avg:{:>8.3} ms | max:{:>8.3} ms | max start: {:>12} s | max end: {:>12} s",
            row.runtime_ns as f64 / 1e6,
            row.switch_runtime_ns as f64 / 1e6,
            row.switches,
            row.avg_delay_ns as f64 / 1e6,
            row.max_delay_ns as f64 / 1e6,
            perf_time(row.max_start_ns),
            perf_time(row.max_end_ns)
        )?;
    }
    writeln!(out, " {rule}")?;
    writeln!(out, "  TOTAL:                |{:>11.3} ms |             |{:>9} |", runtime as f64 / 1e6, count)?;
    writeln!(
        out,
        "\nRuntime: the sum of sched_stat_runtime (perf's); Switch ms: from switch to switch (schedlens's)."
    )?;
    Ok(())
}

fn print_perf_csv(out: &mut impl Write, rows: &[PerfLatencyRow]) -> Result<()> {
    writeln!(out, "comm,pid,runtime_ns,switch_runtime_ns,switches,avg_delay_ns,max_delay_ns,max_start_ns,max_end_ns")?;
    for r in rows {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            csv_field(&r.comm),
            r.pid,
            r.runtime_ns,
            r.switch_runtime_ns,
            r.switches,
            r.avg_delay_ns,
            r.max_delay_ns,
            r.max_start_ns,
            r.max_end_ns
        )?;
    }
    Ok(())
}

fn print_switches(out: &mut impl Write, perf: &PerfSched, format: Format) -> Result<()> {
    if format == Format::Text {
        writeln!(
            out,
            "{:>15} {:>6}  {:>7}  {:>9}  {:>9}  {:>9}",
            "time", "cpu", "pid", "wait ms", "delay ms", "run ms"
        )?;
    } else {
        writeln!(out, "time_ns,cpu,pid,wait_ns,delay_ns,run_ns")?;
    }
    for s in &perf.switches {
        if format == Format::Text {
            writeln!(
                out,
                "{:>15} [{:04}]  {:>7}  {:>9}  {:>9}  {:>9}",
                perf_time(s.time.0),
                s.cpu.0,
                s.pid.0,
                ms(s.wait_ns),
                ms(s.delay_ns),
                ms(s.run_ns)
            )?;
        } else {
            writeln!(out, "{},{},{},{},{},{}", s.time.0, s.cpu.0, s.pid.0, s.wait_ns, s.delay_ns, s.run_ns)?;
        }
    }
    Ok(())
}
