//! The critical path as users read it, wherever they look: the `critical path` document
//! (`critical-path --format json`), the sentence to quote ("of the 2.31 s, 1.70 s
//! running, ...: the scheduler cost at most 9%"), the parts with their names, and the
//! text of `critical-path`. One place, so `critical-path`, `compare` and `report` say the
//! same thing in the same words; the walk itself is `analysis::critical_path`.

use crate::profile::WorkloadWindow;
use analysis::check::Affinity;
pub use analysis::critical_path::duration;
use analysis::critical_path::{Breakdown, CriticalPath, Followed, Target, critical_path};
use analysis::idle::IdleIndex;
use documents::critical_path::{CostStretch, CriticalPathReport, PathBreakdown, PathHop, PinnedTask, UnknownPart};
use model::{Model, Nanos, TaskId};

/// The traced command's path (its process tree, from the end of its initial sleep to its
/// exit, as `compare` takes it), keeping the `top` largest stretches of scheduler cost;
/// `None` when the trace names no command (no recorded pid, no exec).
pub fn of_command(
    model: &Model,
    workload: &WorkloadWindow,
    affinity: Option<&Affinity>,
    top: usize,
) -> Option<(Target, CriticalPath)> {
    let target = workload.critical_path_target()?;
    let index = IdleIndex::new(model);
    let path = critical_path(model, &index, &target, affinity, top);
    Some((target, path))
}

/// The parts in the document's terms.
pub fn breakdown_document(b: &Breakdown) -> PathBreakdown {
    PathBreakdown {
        running_ns: b.running_ns,
        scheduler_ns: b.scheduler_ns,
        pinning_ns: b.pinning_ns,
        contention_ns: b.contention_ns,
        other_task_ns: b.other_task_ns,
        blocked_ns: b.blocked_ns,
        unknown_ns: b.unknown_ns,
    }
}

/// The parts in a fixed order, each with a short name (for tables and measures) and the
/// words that say what it is.
pub fn parts(b: &PathBreakdown) -> [(&'static str, &'static str, u64); 7] {
    [
        ("running", "running", b.running_ns),
        ("scheduler", "runnable, an allowed core idle (scheduler)", b.scheduler_ns),
        ("pinning", "runnable, only forbidden cores idle (pinning)", b.pinning_ns),
        ("contention", "runnable, every core busy (contention)", b.contention_ns),
        ("other program", "on another program's task", b.other_task_ns),
        ("blocked", "blocked, no task waker (interrupt, timer, I/O)", b.blocked_ns),
        ("unknown", "unknown", b.unknown_ns),
    ]
}

/// The wall time: the parts' sum.
pub fn wall_ns(b: &PathBreakdown) -> u64 {
    parts(b).iter().map(|(_, _, ns)| ns).sum()
}

/// The scheduler's share of the known time; `None` when no time is known.
pub fn scheduler_share(b: &PathBreakdown) -> Option<f64> {
    let known = wall_ns(b) - b.unknown_ns;
    (known > 0).then(|| b.scheduler_ns as f64 / known as f64)
}

/// The sentence to quote (`Breakdown::sentence`) of a document's parts.
pub fn sentence(b: &PathBreakdown) -> String {
    let PathBreakdown { running_ns, scheduler_ns, pinning_ns, contention_ns, other_task_ns, blocked_ns, unknown_ns } =
        *b;
    Breakdown { running_ns, scheduler_ns, pinning_ns, contention_ns, other_task_ns, blocked_ns, unknown_ns }.sentence()
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { 100.0 * part as f64 / whole as f64 }
}

/// The `critical path` document of `path` (walked for `target` in `trace`).
pub fn document(model: &Model, trace: &str, target: &Target, path: &CriticalPath) -> CriticalPathReport {
    let who = |task: TaskId, at: Nanos| (model.tasks().get(task).pid.0, model.comm_at(task, at).to_string());
    let (pid, comm) = who(target.end_task, target.window.end);
    CriticalPathReport {
        trace: trace.to_string(),
        target: match target.followed {
            Followed::Tasks(_) => "command".into(),
            Followed::Task(_) => "task".into(),
        },
        pid,
        comm,
        start_ns: path.window.start.0,
        end_ns: path.window.end.0,
        wall_ns: path.window.len().0,
        breakdown: breakdown_document(&path.breakdown),
        scheduler_share: path.breakdown.scheduler_share(),
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

/// `critical-path`'s text: the sentence to quote, the breakdown, the unknown part's
/// reasons and the largest stretches of scheduler cost; times in seconds from `origin`.
pub fn to_text(d: &CriticalPathReport, origin: Nanos) -> String {
    let at = |ns: u64| format!("{:.6} s", ns.saturating_sub(origin.0) as f64 / 1e9);
    let mut out = sentence(&d.breakdown) + "\n\n";
    let what = if d.target == "command" { "the command" } else { "the task" };
    out += &format!(
        "critical path of {what} {} ({}), {} to {}: {} hops\n",
        d.pid,
        d.comm,
        at(d.start_ns),
        at(d.end_ns),
        d.hops.len()
    );
    for (_, words, ns) in parts(&d.breakdown) {
        out += &format!("  {words:<48} {:>12} {:>6.1}%\n", duration(ns), percent(ns, d.wall_ns));
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
            out += &format!("  {:>10} at {}: {}\n", duration(s.scheduler_ns), at(s.start_ns), stretch_words(s));
        }
    }
    out
}

/// "4242 (worker) waited on CPU 1's runqueue while CPU 0 idled 3.10 ms".
pub fn stretch_words(s: &CostStretch) -> String {
    let waited = s.waited_on_cpu.map_or(String::new(), |c| format!(" on CPU {c}'s runqueue"));
    let idle = s.idle_cpu.map_or(String::new(), |c| format!(" while CPU {c} idled {}", duration(s.idle_cpu_ns)));
    format!("{} ({}) waited{waited}{idle}", s.pid, s.comm)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(running: u64, scheduler: u64, unknown: u64) -> PathBreakdown {
        PathBreakdown {
            running_ns: running,
            scheduler_ns: scheduler,
            pinning_ns: 0,
            contention_ns: 0,
            other_task_ns: 0,
            blocked_ns: 0,
            unknown_ns: unknown,
        }
    }

    #[test]
    fn the_sentence_stands_on_the_known_time() {
        let b = parts_of(1_700_000_000, 210_000_000, 400_000_000);
        assert_eq!(
            sentence(&b),
            "of the 2.310 s, 1.700 s running, 0.210 s runnable while a core idled, 0.400 s unknown: the scheduler cost at most 11% of the 1.910 s known"
        );
        // From 10 s of wall time on, seconds to two places.
        assert_eq!(
            sentence(&parts_of(17_000_000_000, 2_100_000_000, 0)),
            "of the 19.10 s, 17.00 s running, 2.10 s runnable while a core idled: the scheduler cost at most 11%"
        );
        assert_eq!(scheduler_share(&parts_of(0, 0, 5)), None, "nothing known");
        assert_eq!(
            sentence(&parts_of(300_000, 16_900, 0)),
            "of the 316.9 µs, 300.0 µs running, 16.9 µs runnable while a core idled: the scheduler cost at most 5%"
        );
    }
}
