//! `schedlens critical-path`: where the traced command's (or a task's) wall time went
//! along its critical path, and how much of it the scheduler cost at most; thin glue over
//! `analysis::critical_path` and the `documents::critical_path` document.

use crate::Outcome;
use crate::common::load_model;
use analysis::check::Affinity;
use analysis::critical_path::{self, CriticalPath, Followed, Target, duration};
use analysis::idle::IdleIndex;
use anyhow::{Result, bail};
use documents::critical_path::{CostStretch, CriticalPathReport, PathBreakdown, PathHop, PinnedTask, UnknownPart};
use experiment::profile::WorkloadWindow;
use model::{Detail, Model, Nanos, Pid, TaskId};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The trace file.
    trace: PathBuf,
    /// Follow this task (a pid, or a name: the first task ever so named) instead of the
    /// traced command (the recorded command, else the task of the trace's first exec, with
    /// its process tree, from the end of its initial sleep to its exit).
    #[arg(long, value_name = "PID|NAME")]
    task: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// How many of the largest stretches of scheduler cost to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> Result<Outcome> {
    let loaded = load_model(&args.trace, Detail::FULL)?;
    let model = &loaded.model;
    let target = match &args.task {
        Some(task) => Target::task(model, find_task(model, task)?),
        None => command_target(model, loaded.trace.command_pid())?,
    };
    let affinity = loaded.trace.recorded_context().and_then(|c| Affinity::recorded(&c));
    let index = IdleIndex::new(model);
    let path = critical_path::critical_path(model, &index, &target, affinity.as_ref(), args.top);
    let document = document(model, &args.trace, &target, &path);
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Text => out.write_all(text(&document, &path.breakdown.sentence(), model.start()).as_bytes())?,
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&document)?)?,
    }
    Ok(loaded.outcome)
}

/// A task by pid, else by name (the first so named).
fn find_task(model: &Model, wanted: &str) -> Result<TaskId> {
    let found = match wanted.parse::<i32>() {
        Ok(pid) => model.tasks().by_pid(Pid(pid)),
        Err(_) => model.comms().find(wanted).and_then(|comm| {
            model.tasks().iter().find(|(_, task)| task.comms.iter().any(|&(_, c)| c == comm)).map(|(id, _)| id)
        }),
    };
    match found {
        Some(task) if task != TaskId::IDLE => Ok(task),
        _ => bail!("--task {wanted}: no such task in the trace"),
    }
}

/// The traced command, as `compare` takes it: its process tree from the end of its
/// initial sleep to its exit.
fn command_target(model: &Model, pid: Option<Pid>) -> Result<Target> {
    match WorkloadWindow::of(model, pid, false).critical_path_target() {
        Some(target) => Ok(target),
        None => {
            bail!("the trace names no command (no recorded command pid, no exec): follow a task with --task PID|NAME")
        }
    }
}

fn document(model: &Model, trace: &Path, target: &Target, path: &CriticalPath) -> CriticalPathReport {
    let who = |task: TaskId, at: Nanos| (model.tasks().get(task).pid.0, model.comm_at(task, at).to_string());
    let (pid, comm) = who(target.end_task, target.window.end);
    let b = path.breakdown;
    let wall_ns = path.window.len().0;
    CriticalPathReport {
        trace: trace.display().to_string(),
        target: match target.followed {
            Followed::Tasks(_) => "command".into(),
            Followed::Task(_) => "task".into(),
        },
        pid,
        comm,
        start_ns: path.window.start.0,
        end_ns: path.window.end.0,
        wall_ns,
        breakdown: PathBreakdown {
            running_ns: b.running_ns,
            scheduler_ns: b.scheduler_ns,
            pinning_ns: b.pinning_ns,
            contention_ns: b.contention_ns,
            other_task_ns: b.other_task_ns,
            blocked_ns: b.blocked_ns,
            unknown_ns: b.unknown_ns,
        },
        scheduler_share: b.scheduler_share(),
        affinity: if path.recorded_affinity { "recorded".into() } else { "inferred".into() },
        possibly_pinned: path
            .possibly_pinned
            .iter()
            .map(|(task, since, cpus)| {
                let (pid, comm) = who(*task, *since);
                PinnedTask { pid, comm, since_ns: since.0, cpus: cpus.iter().map(|c| c.0).collect() }
            })
            .collect(),
        unknown: path
            .unknown
            .iter()
            .map(|(reason, count)| UnknownPart {
                reason: reason.name().into(),
                stretches: count.stretches,
                ns: count.ns,
            })
            .collect(),
        top: path
            .top
            .iter()
            .map(|s| {
                let (pid, comm) = who(s.task, s.start);
                CostStretch {
                    pid,
                    comm,
                    start_ns: s.start.0,
                    end_ns: s.end.0,
                    scheduler_ns: s.scheduler_ns,
                    waited_on_cpu: s.waited_on.map(|c| c.0),
                    idle_cpu: s.idle_cpu.map(|(c, _)| c.0),
                    idle_cpu_ns: s.idle_cpu.map_or(0, |(_, ns)| ns.0),
                }
            })
            .collect(),
        hops: path
            .hops
            .iter()
            .map(|h| {
                let (pid, comm) = who(h.task, h.start);
                let woken_by_pid = h.woken_by.map(|w| model.tasks().get(w).pid.0);
                PathHop { pid, comm, start_ns: h.start.0, end_ns: h.end.0, woken_by_pid }
            })
            .collect(),
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 }
}

/// The sentence to quote, the breakdown, the unknown part's reasons and the largest
/// stretches of scheduler cost; times in seconds from the trace's start.
fn text(d: &CriticalPathReport, sentence: &str, origin: Nanos) -> String {
    let b = &d.breakdown;
    let at = |ns: u64| format!("{:.6} s", ns.saturating_sub(origin.0) as f64 / 1e9);
    let mut out = format!("{sentence}\n\n");
    let what = if d.target == "command" { "the command" } else { "the task" };
    out += &format!(
        "critical path of {what} {} ({}), {} to {}: {} hops\n",
        d.pid,
        d.comm,
        at(d.start_ns),
        at(d.end_ns),
        d.hops.len()
    );
    let rows = [
        ("running", b.running_ns),
        ("runnable, an allowed core idle (scheduler)", b.scheduler_ns),
        ("runnable, only forbidden cores idle (pinning)", b.pinning_ns),
        ("runnable, every core busy (contention)", b.contention_ns),
        ("on another program's task", b.other_task_ns),
        ("blocked, no task waker (interrupt, timer, I/O)", b.blocked_ns),
        ("unknown", b.unknown_ns),
    ];
    for (name, ns) in rows {
        out += &format!("  {name:<48} {:>12} {:>6.1}%\n", duration(ns), percent(ns, d.wall_ns));
    }
    for part in d.unknown.iter().filter(|p| p.ns > 0) {
        out += &format!("    unknown, {}: {} in {} stretches\n", part.reason, duration(part.ns), part.stretches);
    }
    out += &format!("allowed cores: {}", if d.affinity == "recorded" { "recorded" } else { "inferred" });
    if d.possibly_pinned.is_empty() {
        out += "\n";
    } else {
        let pinned: Vec<String> = d
            .possibly_pinned
            .iter()
            .map(|p| {
                format!(
                    "{} ({}) on CPU {} since {}",
                    p.pid,
                    p.comm,
                    model::ranges(p.cpus.iter().copied()),
                    at(p.since_ns)
                )
            })
            .collect();
        out += &format!("; possibly pinned: {}\n", pinned.join(", "));
    }
    if !d.top.is_empty() {
        out += "\nlargest stretches of scheduler cost:\n";
        for s in &d.top {
            let waited = s.waited_on_cpu.map_or(String::new(), |c| format!(" on CPU {c}'s runqueue"));
            let idle =
                s.idle_cpu.map_or(String::new(), |c| format!(" while CPU {c} idled {}", duration(s.idle_cpu_ns)));
            out += &format!(
                "  {:>10} at {}: {} ({}) waited{waited}{idle}\n",
                duration(s.scheduler_ns),
                at(s.start_ns),
                s.pid,
                s.comm
            );
        }
    }
    out
}
