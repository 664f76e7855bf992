//! Per-command and per-task statistics (run time, context switches, waiting in runqueues,
//! migrations) and per-CPU time use (busy, idle, uncertain, with tasks waiting) over a
//! time window. Times are attributed to the name a task had at that time, so a shell
//! that execs `sleep` counts under `sh` and then under `sleep`.

use crate::window::{TaskFilter, Window};
use model::{CommId, Cpu, Model, Nanos, Pid, TaskId, Topology};
use std::collections::BTreeMap;

/// Rows per command name or per task.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Grouping {
    Command,
    Task,
}

/// One row of the statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub comm: String,
    /// The task's pid (per-task rows only).
    pub pid: Option<Pid>,
    /// Tasks counted in the row.
    pub pids: u32,
    pub first_run: Option<Nanos>,
    pub last_run: Option<Nanos>,
    pub runtime_ns: u64,
    /// Context switches to the task(s): `sched_switch` events with them as `next`.
    pub switches: u64,
    /// Time runnable but not running.
    pub wait_ns: u64,
    /// The longest single wait.
    pub max_wait_ns: u64,
    pub migrations: u64,
    /// Of `migrations`, those between CPUs on different NUMA nodes (with a topology).
    pub cross_node_migrations: Option<u64>,
}

/// How one CPU spent the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuRow {
    pub cpu: Cpu,
    pub busy_ns: u64,
    pub idle_ns: u64,
    /// Time whose state is unknown (lost events, unrecorded switches, before the CPU's
    /// first event or after its last).
    pub uncertain_ns: u64,
    /// Time with at least one task waiting in this CPU's runqueue.
    pub waiting_ns: u64,
}

/// The statistics of one window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    pub window: Window,
    pub rows: Vec<Row>,
    pub cpus: Vec<CpuRow>,
}

impl Stats {
    /// Share of all CPU time in the window whose state is unknown.
    pub fn uncertain_share(&self) -> f64 {
        let total = self.window.len().0 as f64 * self.cpus.len() as f64;
        if total == 0.0 { 0.0 } else { self.cpus.iter().map(|c| c.uncertain_ns as f64).sum::<f64>() / total }
    }
}

/// Totals of one task under one name.
#[derive(Clone, Debug, Default)]
struct Acc {
    first_run: Option<Nanos>,
    last_run: Option<Nanos>,
    runtime_ns: u64,
    switches: u64,
    wait_ns: u64,
    max_wait_ns: u64,
    migrations: u64,
    cross_node: u64,
}

impl Acc {
    /// Sums saturate: times near the end of the clock (damaged pages) add up beyond u64.
    fn merge(&mut self, other: &Acc) {
        self.first_run = min_opt(self.first_run, other.first_run);
        self.last_run = self.last_run.max(other.last_run);
        self.runtime_ns = self.runtime_ns.saturating_add(other.runtime_ns);
        self.switches = self.switches.saturating_add(other.switches);
        self.wait_ns = self.wait_ns.saturating_add(other.wait_ns);
        self.max_wait_ns = self.max_wait_ns.max(other.max_wait_ns);
        self.migrations = self.migrations.saturating_add(other.migrations);
        self.cross_node = self.cross_node.saturating_add(other.cross_node);
    }

    fn is_active(&self) -> bool {
        self.runtime_ns > 0 || self.switches > 0 || self.wait_ns > 0 || self.migrations > 0
    }
}

fn min_opt(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Per task, its totals under each name it had.
struct Accounts<'m> {
    model: &'m Model,
    by_task: Vec<Vec<(CommId, Acc)>>,
}

impl<'m> Accounts<'m> {
    fn new(model: &'m Model) -> Self {
        Accounts { model, by_task: vec![Vec::new(); model.tasks().len()] }
    }

    fn of(&mut self, task: TaskId, time: Nanos) -> &mut Acc {
        let comm = self.model.tasks().get(task).comm_at(time);
        // In range: `by_task` has a slot per model task, and `task` is one.
        let names = &mut self.by_task[task.index()];
        let index = match names.iter().position(|(c, _)| *c == comm) {
            Some(i) => i,
            None => {
                names.push((comm, Acc::default()));
                names.len() - 1
            }
        };
        &mut names[index].1
    }
}

/// Computes the statistics of `window` for the tasks `filter` accepts.
pub fn compute(model: &Model, window: Window, filter: &TaskFilter, grouping: Grouping) -> Stats {
    compute_placed(model, window, filter, grouping, None)
}

/// [`compute`], with the migrations across NUMA nodes counted by `topology`'s nodes.
pub fn compute_placed(
    model: &Model,
    window: Window,
    filter: &TaskFilter,
    grouping: Grouping,
    topology: Option<&Topology>,
) -> Stats {
    // Indexed by the task ids of segments, waits and migrations: model tasks, in range.
    let accepted: Vec<bool> = model.tasks().ids().map(|task| filter.accepts(model, task)).collect();
    let mut accounts = Accounts::new(model);
    for timeline in model.cpus() {
        let segments = &timeline.segments();
        for segment in segments.iter_range(segments.overlapping(window.start, window.end)) {
            if !accepted[segment.task.index()] {
                continue;
            }
            let (start, end) = window.clip(segment.start, segment.end);
            let acc = accounts.of(segment.task, segment.start);
            acc.runtime_ns = acc.runtime_ns.saturating_add(end.saturating_sub(start).0);
            acc.first_run = min_opt(acc.first_run, Some(start));
            acc.last_run = acc.last_run.max(Some(end));
            if segment.started_by_switch() && window.contains(segment.start) {
                acc.switches += 1;
            }
        }
    }
    // A timeline's model has no waits or migrations: its statistics are of runs only.
    let waits = model.detail().waits().then(|| model.waits());
    for wait in waits.into_iter().flat_map(|w| w.iter()).filter(|w| accepted[w.task.index()]) {
        let waited = window.overlap(wait.start, wait.end).0;
        if waited > 0 {
            let acc = accounts.of(wait.task, wait.start);
            acc.wait_ns = acc.wait_ns.saturating_add(waited);
            acc.max_wait_ns = acc.max_wait_ns.max(waited);
        }
    }
    let migrations = model.detail().migrations().then(|| model.migrations());
    let migrations = migrations.into_iter().flat_map(|m| m.iter());
    let node = |cpu: Cpu| topology.and_then(|t| t.place(cpu)).map(|p| p.node);
    for migration in migrations.filter(|m| accepted[m.task.index()] && window.contains(m.time)) {
        let acc = accounts.of(migration.task, migration.time);
        acc.migrations += 1;
        let (from, to) = (node(migration.from), node(migration.to));
        acc.cross_node += u64::from(from.is_some() && to.is_some() && from != to);
    }
    let rows = rows(model, accounts, grouping, topology.is_some());
    Stats { window, rows, cpus: cpu_rows(model, window) }
}

fn rows(model: &Model, accounts: Accounts<'_>, grouping: Grouping, placed: bool) -> Vec<Row> {
    let mut rows = Vec::new();
    match grouping {
        Grouping::Task => {
            for (id, names) in model.tasks().ids().zip(&accounts.by_task) {
                let mut total = Acc::default();
                names.iter().for_each(|(_, acc)| total.merge(acc));
                if total.is_active() {
                    let task = model.tasks().get(id);
                    let comm = model.comms().name(task.last_comm()).to_string();
                    rows.push(row(comm, Some(task.pid), 1, &total, placed));
                }
            }
        }
        Grouping::Command => {
            let mut by_comm: BTreeMap<&str, (Acc, u32)> = BTreeMap::new();
            for names in &accounts.by_task {
                for (comm, acc) in names.iter().filter(|(_, acc)| acc.is_active()) {
                    let entry = by_comm.entry(model.comms().name(*comm)).or_default();
                    entry.0.merge(acc);
                    entry.1 += 1;
                }
            }
            let row_of = |(comm, (acc, pids)): (&str, (Acc, u32))| row(comm.to_string(), None, pids, &acc, placed);
            rows.extend(by_comm.into_iter().map(row_of));
        }
    }
    rows.sort_by(|a, b| b.runtime_ns.cmp(&a.runtime_ns).then_with(|| a.comm.cmp(&b.comm)).then(a.pid.cmp(&b.pid)));
    rows
}

fn row(comm: String, pid: Option<Pid>, pids: u32, acc: &Acc, placed: bool) -> Row {
    Row {
        comm,
        pid,
        pids,
        first_run: acc.first_run,
        last_run: acc.last_run,
        runtime_ns: acc.runtime_ns,
        switches: acc.switches,
        wait_ns: acc.wait_ns,
        max_wait_ns: acc.max_wait_ns,
        migrations: acc.migrations,
        cross_node_migrations: placed.then_some(acc.cross_node),
    }
}

fn cpu_rows(model: &Model, window: Window) -> Vec<CpuRow> {
    model
        .cpus()
        .iter()
        .map(|timeline| {
            let (mut busy, mut idle) = (0u64, 0u64);
            let segments = &timeline.segments();
            for segment in segments.iter_range(segments.overlapping(window.start, window.end)) {
                let time = window.overlap(segment.start, segment.end).0;
                // Saturating: overlapping segments (a clock that stepped back) can sum
                // beyond the window, and windows can reach the end of the clock.
                let sum = if segment.task == TaskId::IDLE { &mut idle } else { &mut busy };
                *sum = sum.saturating_add(time);
            }
            let waiting = union_length(timeline.queue().iter().map(|p| (p.start, p.end)), window);
            CpuRow {
                cpu: timeline.cpu(),
                busy_ns: busy,
                idle_ns: idle,
                uncertain_ns: window.len().0.saturating_sub(busy.saturating_add(idle)),
                waiting_ns: waiting,
            }
        })
        .collect()
}

/// Length of the union of intervals (sorted by start) inside the window.
pub fn union_length(intervals: impl Iterator<Item = (Nanos, Nanos)>, window: Window) -> u64 {
    let mut total = 0u64;
    let mut covered_until = window.start;
    for (start, end) in intervals {
        let (start, end) = window.clip(start.max(covered_until), end);
        if end > start {
            total = total.saturating_add(end.saturating_sub(start).0);
            covered_until = end;
        }
    }
    total
}
