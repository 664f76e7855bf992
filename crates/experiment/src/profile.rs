//! What one trace says about the scheduler during its workload: the window (from the end
//! of the recording's initial sleep to the traced command's exit), the per-command and
//! per-CPU statistics, what `check` found, the wakeup latency per command and the traced
//! command's critical path — reduced to the named metrics a sweep correlates with running
//! time and `compare` sets side by side.
//!
//! `check`'s findings are read in one function, [`read_check`]: when check's output
//! changes shape, that function is the only one to change.

use analysis::check::{Affinity, CheckRequest, DEFAULT_MIN_LOST, DEFAULT_MIN_OVERLOAD, Kind, check};
use analysis::critical_path::{CriticalPath, Followed, Target};
use analysis::latency::{self, Distribution};
use analysis::stats::{self, Grouping, Stats};
use analysis::{TaskFilter, Window};
use documents::runs::MetricInfo;
use model::{Model, Nanos, Pid, TaskId, Topology};

/// The part of a trace the workload ran in.
#[derive(Clone, Debug)]
pub struct WorkloadWindow {
    pub window: Window,
    /// Times are shown as seconds from here (the end of the initial sleep, if any).
    pub origin: Nanos,
    pub filter: TaskFilter,
    /// Whether the window starts where the recording's initial sleep ended.
    pub after_sleep: bool,
    /// Whether it ends where the traced command exited.
    pub to_exit: bool,
    /// The traced command's task (the root of its process tree), when the trace names one.
    pub root: Option<TaskId>,
}

impl WorkloadWindow {
    /// From the end of the initial `sleep` in the traced command's process tree (else the
    /// first event) to the command's exit (else the last event); only the command's tasks
    /// unless `all_tasks`. The command is the process `pid` when the recording says
    /// (`schedlens record` stores it), else the task of the trace's first exec.
    pub fn of(model: &Model, pid: Option<Pid>, all_tasks: bool) -> WorkloadWindow {
        let root = pid.and_then(|pid| command_task(model, pid)).or(model.first_exec());
        let sleep_end = root.and_then(|root| sleep_end(model, root));
        let start = sleep_end.unwrap_or(model.start());
        let exit = root.and_then(|task| model.tasks().get(task).exit).filter(|&e| e > start);
        let end = exit.unwrap_or(Nanos(model.end().0 + 1));
        let filter = match (all_tasks, root) {
            (true, _) => TaskFilter::default(),
            (false, Some(root)) => TaskFilter { descendants_of: Some(root), ..TaskFilter::default() },
            (false, None) => TaskFilter { forked_only: true, ..TaskFilter::default() },
        };
        WorkloadWindow {
            window: Window::new(start, end),
            origin: start,
            filter,
            after_sleep: sleep_end.is_some(),
            to_exit: exit.is_some(),
            root,
        }
    }

    /// The running time the trace shows: the window's length.
    pub fn running_time(&self) -> Nanos {
        self.window.len()
    }

    /// What `critical-path` follows for this workload: the traced command's process tree
    /// over the window (whatever `all_tasks` made the filter), walked back from the
    /// command's end; `None` when the trace names no command.
    pub fn critical_path_target(&self) -> Option<Target> {
        let root = self.root?;
        let tree = TaskFilter { descendants_of: Some(root), ..TaskFilter::default() };
        Some(Target { end_task: root, window: self.window, followed: Followed::Tasks(tree) })
    }
}

/// The first task of `pid` forked in the trace, else its first task.
fn command_task(model: &Model, pid: Pid) -> Option<TaskId> {
    let mut tasks = model.tasks().iter().filter(|(_, task)| task.pid == pid);
    let first = tasks.next()?;
    Some(std::iter::once(first).chain(tasks).find(|(_, task)| task.forked).unwrap_or(first).0)
}

/// When the first task named `sleep` in `root`'s process tree exited (else last ran):
/// `Model::after_sleep`'s rule for a given root (the model applies it to the first exec).
fn sleep_end(model: &Model, root: TaskId) -> Option<Nanos> {
    let sleep = model.comms().find("sleep")?;
    let in_tree = |id: TaskId| analysis::window::descends_from(model, id, root);
    let sleeps = model.tasks().iter().filter(|(id, task)| task.comms.iter().any(|&(_, c)| c == sleep) && in_tree(*id));
    sleeps.map(|(id, task)| task.exit.unwrap_or_else(|| last_run_end(model, id))).min()
}

fn last_run_end(model: &Model, task: TaskId) -> Nanos {
    let ends = model.cpus().iter().flat_map(|c| c.segments().iter().filter(|s| s.task == task).map(|s| s.end));
    ends.max().unwrap_or(model.tasks().last_seen(task))
}

/// What `check` found, totalled as the sweeps and comparisons use it.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckTotals {
    /// Time during which a task waited while a core idled.
    pub idle_while_waiting: Nanos,
    /// Per kind of incident: its name, how many, CPU time lost, total length.
    pub kinds: Vec<KindTotals>,
    pub migrations: u64,
    /// Migrations between sockets and between NUMA nodes, with a topology.
    pub cross_socket: Option<u64>,
    pub cross_node: Option<u64>,
    pub wakeups: u64,
    pub wakeups_previous_cpu: u64,
    pub wakeups_waker_cpu: u64,
    pub wakeups_elsewhere: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct KindTotals {
    pub name: &'static str,
    pub count: u64,
    pub lost: Nanos,
    pub length: Nanos,
}

/// The adapter: runs `check` over the workload and reads its output.
pub fn read_check(model: &Model, workload: &WorkloadWindow, topology: Option<&Topology>) -> CheckTotals {
    // With `check`'s defaults; the affinity a recording stores is not used here.
    let request = CheckRequest {
        window: workload.window,
        filter: &workload.filter,
        min_lost: DEFAULT_MIN_LOST,
        min_overload: DEFAULT_MIN_OVERLOAD,
        affinity: None,
    };
    let found = check(model, &request);
    let kinds = Kind::ALL
        .iter()
        .map(|&kind| {
            let of_kind = found.incidents.iter().filter(|i| i.kind == kind);
            let (mut count, mut lost, mut length) = (0, Nanos(0), Nanos(0));
            for incident in of_kind {
                count += 1;
                lost += Nanos(incident.lost_cpu_ns);
                length += incident.end.saturating_sub(incident.start);
            }
            KindTotals { name: kind.name(), count, lost, length }
        })
        .collect();
    let crossings = topology.map(|t| found.migrations.crossings(t));
    CheckTotals {
        idle_while_waiting: found.idle_while_waiting,
        kinds,
        migrations: found.migrations.total().saturating_add(found.migrations.outside),
        cross_socket: crossings.map(|c| c.0),
        cross_node: crossings.map(|c| c.1),
        wakeups: found.wakeups.total,
        wakeups_previous_cpu: found.wakeups.previous_cpu,
        wakeups_waker_cpu: found.wakeups.waker_cpu,
        wakeups_elsewhere: found.wakeups.elsewhere,
    }
}

/// The wakeup latencies of the workload's tasks (`latency`'s, without their causes).
#[derive(Clone, Debug)]
pub struct WakeupLatency {
    pub overall: Distribution,
    /// Per command name, by name.
    pub by_command: Vec<(String, Distribution)>,
}

impl WakeupLatency {
    fn of(model: &Model, workload: &WorkloadWindow) -> WakeupLatency {
        let found = latency::distributions(model, workload.window, &workload.filter);
        WakeupLatency { overall: found.wakeups, by_command: found.by_command }
    }
}

/// Everything the sweeps and comparisons read of one trace.
#[derive(Clone, Debug)]
pub struct Profile {
    pub workload: WorkloadWindow,
    /// Per command.
    pub stats: Stats,
    pub check: CheckTotals,
    /// Events the kernel lost while recording.
    pub lost_events: u64,
    pub latency: WakeupLatency,
    /// The traced command's critical path over the workload ([`WorkloadWindow::path_target`]);
    /// `None` when the trace names no command.
    pub path: Option<CriticalPath>,
}

impl Profile {
    /// The profile of a trace's workload (see [`WorkloadWindow::of`] for `pid` and
    /// `all_tasks`). `affinity`, the recording's, decides the allowed CPUs of the critical
    /// path (as `critical-path` takes it); `check`'s totals do without it.
    pub fn of(
        model: &Model,
        topology: Option<&Topology>,
        affinity: Option<&Affinity>,
        pid: Option<Pid>,
        all_tasks: bool,
    ) -> Profile {
        let workload = WorkloadWindow::of(model, pid, all_tasks);
        let stats = stats::compute(model, workload.window, &workload.filter, Grouping::Command);
        let check = read_check(model, &workload, topology);
        let latency = WakeupLatency::of(model, &workload);
        let path = crate::critical_path::of_command(model, &workload, affinity, 0).map(|(_, path)| path);
        // A loss of unknown size counts as one.
        let lost = model.lost();
        let lost_events = lost.events.saturating_add(lost.unknown_losses);
        Profile { workload, stats, check, lost_events, latency, path }
    }

    /// The critical path's scheduler share of its known time; `None` without a path or
    /// known time.
    pub fn path_scheduler_share(&self) -> Option<f64> {
        let breakdown = self.path.as_ref()?.breakdown;
        (breakdown.known_ns() > 0).then(|| breakdown.scheduler_share())
    }

    /// The metrics of [`metric_catalog`], in its order (`None` where unknown).
    pub fn metrics(&self) -> Vec<Option<f64>> {
        let f = &self.check;
        let seconds = |n: Nanos| Some(n.0 as f64 / 1e9);
        let share_of_wakeups = |n: u64| (f.wakeups > 0).then(|| n as f64 / f.wakeups as f64);
        let window = self.workload.window.len().0.max(1) as f64;
        let mut values = vec![seconds(f.idle_while_waiting), Some(f.idle_while_waiting.0 as f64 / window)];
        for kind in &f.kinds {
            values.push(Some(kind.count as f64));
            values.push(seconds(if Kind::from_name(kind.name).is_some_and(Kind::loses_cpu_time) {
                kind.lost
            } else {
                kind.length
            }));
        }
        values.extend([
            Some(f.migrations as f64),
            f.cross_socket.map(|n| n as f64),
            f.cross_node.map(|n| n as f64),
            share_of_wakeups(f.wakeups_previous_cpu),
            share_of_wakeups(f.wakeups_waker_cpu),
            share_of_wakeups(f.wakeups_elsewhere),
            Some(self.stats.rows.iter().map(|r| r.switches).sum::<u64>() as f64),
            seconds(Nanos(self.stats.rows.iter().map(|r| r.wait_ns).sum())),
            Some(self.stats.uncertain_share()),
            Some(self.lost_events as f64),
        ]);
        let wakeups = &self.latency.overall;
        let percentile = |ns: u64| (wakeups.count > 0).then_some(ns as f64 / 1e9);
        values.extend([percentile(wakeups.p50_ns), percentile(wakeups.p99_ns), self.path_scheduler_share()]);
        values
    }
}

fn metric(key: impl Into<String>, unit: &str, phrase: impl Into<String>) -> MetricInfo {
    MetricInfo { key: key.into(), unit: unit.to_string(), phrase: phrase.into() }
}

/// The metrics every traced run gets, in column order.
pub fn metric_catalog() -> Vec<MetricInfo> {
    let mut catalog = vec![
        metric("idle_while_waiting_s", "s", "{} CPU time was lost to idle-while-waiting"),
        metric("idle_while_waiting_share", "share", "{} of the run was idle-while-waiting"),
    ];
    for (kind, loses_cpu_time) in Kind::ALL.map(|k| (k.name(), k.loses_cpu_time())) {
        let key = kind.replace('-', "_");
        catalog.push(metric(format!("{key}_incidents"), "count", format!("{{}} {kind} incidents were found")));
        catalog.push(if loses_cpu_time {
            metric(format!("{key}_lost_s"), "s", format!("{{}} CPU time was lost to {kind} incidents"))
        } else {
            metric(format!("{key}_s"), "s", format!("{{}} time passed in {kind} incidents"))
        });
    }
    catalog.extend([
        metric("migrations", "count", "{} migrations happened"),
        metric("cross_socket_migrations", "count", "{} migrations crossed sockets"),
        metric("cross_node_migrations", "count", "{} migrations crossed NUMA nodes"),
        metric("wakeups_previous_cpu_share", "share", "{} wakeups went back to the task's previous CPU"),
        metric("wakeups_waker_cpu_share", "share", "{} wakeups went to the waker's CPU"),
        metric("wakeups_elsewhere_share", "share", "{} wakeups went to a third CPU"),
        metric("context_switches", "count", "{} context switches happened"),
        metric("runqueue_wait_s", "s", "tasks spent {} time waiting in runqueues"),
        metric("uncertain_share", "share", "{} of the trace was uncertain (lost or unrecorded events)"),
        metric("lost_events", "count", "the kernel lost {} events"),
        metric("wakeup_latency_p50_s", "s", "the median wakeup waited {} for a CPU"),
        metric("wakeup_latency_p99_s", "s", "the slowest 1% of wakeups waited {} for a CPU (p99)"),
        metric(
            "critical_path_scheduler_share",
            "share",
            "the scheduler cost {} of the critical path's known time (runnable while an allowed core idled)",
        ),
    ]);
    catalog
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_and_the_values_line_up() {
        let catalog = metric_catalog();
        let mut keys: Vec<&str> = catalog.iter().map(|m| m.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), catalog.len(), "unique keys");
        assert_eq!(catalog[0].worded(true), "more CPU time was lost to idle-while-waiting");
        let migrations = catalog.iter().find(|m| m.key == "migrations").unwrap();
        assert_eq!(migrations.worded(false), "fewer migrations happened");
    }
}
