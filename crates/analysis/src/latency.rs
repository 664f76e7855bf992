//! Scheduling latency: how long each task waited for a CPU once it could run, why, and
//! how those waits are distributed per task, per command, per CPU and over the trace.
//!
//! One [`Delay`] per wait that ended with the task running: a wakeup latency (from
//! `sched_waking` when recorded, else the enqueue, to running; a new task's from its
//! `sched_wakeup_new`) or a preemption wait (switched out runnable, to running again).
//! Each says where it was placed (an idle CPU or behind a running task), whether it ran
//! on another CPU than before, and how long another CPU it was allowed on sat idle
//! meanwhile (the scheduler's share). Waits whose end is unknown (lost events, the trace's
//! end, a switch the kernel did not record) are counted apart and never given a latency.
//!
//! Distributions are log2 histograms over [`BUCKETS`] buckets (edges in
//! [`bucket_edges_ns`]) and nearest-rank percentiles of the exact values. [`compute`]
//! gives every delay with its causes; [`distributions`] the same delays' distributions
//! alone, per command and over all, for `compare`, `runs` and the report: the causes ask
//! the idle state of every other CPU during each delay, which on hundreds of CPUs costs
//! far more than the rest.

use crate::check::Affinity;
use crate::idle::{Allowed, IdleIndex};
use crate::window::{TaskFilter, Window};
use model::{CommId, Cpu, Model, Nanos, Pid, TaskId, Wait, WaitCause, WaitEnd, WaitId, WakeupId};
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// What a delay measured.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DelayKind {
    /// A sleeping task woken, from `sched_waking` (else its enqueue) to running.
    Wakeup,
    /// A new task, from `sched_wakeup_new` to its first run.
    NewTask,
    /// A task switched out while runnable, to running again.
    Preemption,
}

/// Where the task was put when it became runnable.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Placement {
    /// On an idle CPU's runqueue.
    IdleCpu,
    /// Behind a task running on that CPU.
    BehindTask,
    /// The CPU's state then is unknown (lost events, before its first event).
    Unknown,
}

/// One wait that ended with the task running.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Delay {
    pub task: TaskId,
    pub kind: DelayKind,
    /// `sched_waking` (else the enqueue) for wakeups, the switch-out for preemptions.
    pub start: Nanos,
    /// When it ran.
    pub end: Nanos,
    /// The CPU it ran on.
    pub cpu: Cpu,
    /// The task that woke it (wakeups with `sched_waking` recorded; idle: an interrupt).
    pub waker: Option<TaskId>,
    pub placement: Placement,
    /// It ran on another CPU than the one it last ran on.
    pub migrated: bool,
    /// Time during the wait that another CPU it was allowed on (recorded affinity, else
    /// every CPU; not the one it ran on) idled, from [`IdleIndex`].
    pub allowed_idle_ns: u64,
}

impl Delay {
    pub fn latency_ns(&self) -> u64 {
        self.end.saturating_sub(self.start).0
    }
}

/// Waits counted apart because their end is unknown.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UnknownEnds {
    /// Events were lost on the CPU while it waited.
    pub lost: u64,
    /// Still waiting when the trace ended.
    pub trace_end: u64,
    /// It ran without a recorded switch (seen running, or its CPU showed idle again).
    pub unrecorded: u64,
}

impl UnknownEnds {
    pub fn total(&self) -> u64 {
        self.lost + self.trace_end + self.unrecorded
    }

    fn count(&mut self, how: WaitEnd) {
        match how {
            WaitEnd::Lost => self.lost += 1,
            WaitEnd::TraceEnd => self.trace_end += 1,
            WaitEnd::Unrecorded => self.unrecorded += 1,
            WaitEnd::Ran => {}
        }
    }
}

/// Histogram buckets: below 1 µs, then `[2^(k-1), 2^k)` µs for k = 1..=23 (up to 8.4 s),
/// then 8.4 s and more.
pub const BUCKETS: usize = 25;

/// The lower edge of each bucket, in ns (the first is 0).
pub fn bucket_edges_ns() -> [u64; BUCKETS] {
    std::array::from_fn(|k| if k == 0 { 0 } else { 1000 << (k - 1) })
}

/// The bucket of a latency.
pub fn bucket_of(latency_ns: u64) -> usize {
    let micros = latency_ns / 1000;
    if micros == 0 { 0 } else { (micros.ilog2() as usize + 1).min(BUCKETS - 1) }
}

/// Where the largest delay of a group happened.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Worst {
    pub latency_ns: u64,
    pub start: Nanos,
    pub end: Nanos,
    pub cpu: Cpu,
    pub task: TaskId,
    pub waker: Option<TaskId>,
}

/// The distribution of a group's delays and their causes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub count: u64,
    pub total_ns: u64,
    pub histogram: [u64; BUCKETS],
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub worst: Option<Worst>,
    /// Delays placed on an idle CPU, and their time.
    pub on_idle_cpu: (u64, u64),
    /// Delays that ran on another CPU than before, and their time.
    pub migrated: (u64, u64),
    /// Delays during which another allowed CPU idled, and how long it idled over them.
    pub allowed_idle: (u64, u64),
}

impl Summary {
    pub fn mean_ns(&self) -> u64 {
        self.total_ns.checked_div(self.count).unwrap_or(0)
    }

    /// From the group's delays (any order). The percentiles are order statistics of the
    /// latencies (selected, not sorted: a sort of every group's delays took a third of
    /// `latency`'s time on a 5M-event trace).
    fn of(delays: &[&Delay]) -> Summary {
        let mut latencies: Vec<u64> = delays.iter().map(|d| d.latency_ns()).collect();
        let distribution = Distribution::of(&mut latencies);
        let mut summary = Summary {
            count: distribution.count,
            total_ns: distribution.total_ns,
            histogram: distribution.histogram,
            p50_ns: distribution.p50_ns,
            p90_ns: distribution.p90_ns,
            p99_ns: distribution.p99_ns,
            p999_ns: distribution.p999_ns,
            ..Summary::default()
        };
        for delay in delays {
            let latency = delay.latency_ns();
            let add = |pair: &mut (u64, u64), yes: bool, time: u64| {
                if yes {
                    pair.0 += 1;
                    pair.1 = pair.1.saturating_add(time);
                }
            };
            add(&mut summary.on_idle_cpu, delay.placement == Placement::IdleCpu, latency);
            add(&mut summary.migrated, delay.migrated, latency);
            add(&mut summary.allowed_idle, delay.allowed_idle_ns > 0, delay.allowed_idle_ns);
        }
        // The largest, and of equal ones the earliest.
        summary.worst =
            delays.iter().min_by_key(|d| (Reverse(d.latency_ns()), d.end, d.cpu, d.task, d.start)).map(|d| Worst {
                latency_ns: d.latency_ns(),
                start: d.start,
                end: d.end,
                cpu: d.cpu,
                task: d.task,
                waker: d.waker,
            });
        summary
    }
}

/// The latencies of some delays, without their causes: how many, their sum, the log2
/// histogram, nearest-rank percentiles (0 without delays) and the largest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Distribution {
    pub count: u64,
    pub total_ns: u64,
    pub histogram: [u64; BUCKETS],
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

impl Distribution {
    /// Of `latencies` (any order; reorders them). The percentiles are selected, not
    /// sorted: a sort of every group's delays took a third of `latency`'s time on a
    /// 5M-event trace.
    fn of(latencies: &mut [u64]) -> Distribution {
        let mut distribution = Distribution { count: latencies.len() as u64, ..Distribution::default() };
        for &latency in latencies.iter() {
            distribution.total_ns = distribution.total_ns.saturating_add(latency);
            distribution.histogram[bucket_of(latency)] += 1;
            distribution.max_ns = distribution.max_ns.max(latency);
        }
        distribution.p50_ns = nearest_rank(latencies, 0.50);
        distribution.p90_ns = nearest_rank(latencies, 0.90);
        distribution.p99_ns = nearest_rank(latencies, 0.99);
        distribution.p999_ns = nearest_rank(latencies, 0.999);
        distribution
    }
}

/// The nearest-rank `p` quantile of `latencies` (0 when empty); reorders them.
fn nearest_rank(latencies: &mut [u64], p: f64) -> u64 {
    let n = latencies.len();
    if n == 0 {
        return 0;
    }
    let index = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
    *latencies.select_nth_unstable(index).1
}

/// A group's delays: wakeups (new tasks included) and preemptions apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    pub wakeups: Summary,
    pub preemptions: Summary,
    pub unknown: UnknownEnds,
}

/// Everything `latency` computes over a window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Latencies {
    pub window: Window,
    /// Every delay that ended in the window, in order of its end (then CPU, then task).
    pub delays: Vec<Delay>,
    /// Per task (with its pid and last name), in task order.
    pub by_task: Vec<(TaskId, Pid, String, Group)>,
    /// Per command name (the name the task had when the wait began), by name.
    pub by_command: Vec<(String, Group)>,
    /// Per CPU it ran on (or waited on, for unknown ends), by CPU.
    pub by_cpu: Vec<(Cpu, Group)>,
    pub overall: Group,
}

/// Computes the delays that ended in `window` (unknown ends: that began in it) of the
/// tasks `filter` accepts. The model must have waits, wakeups and migrations.
pub fn compute(model: &Model, window: Window, filter: &TaskFilter, affinity: Option<&Affinity>) -> Latencies {
    let accepted: Vec<bool> = model.tasks().ids().map(|task| filter.accepts(model, task)).collect();
    let wakeup_of = model.wakeups_by_wait();
    let migrations = migrations_by_task(model);
    let idle = IdleIndex::new(model);
    let mut delays = Vec::new();
    let mut unknown: Vec<(TaskId, CommId, Cpu, WaitEnd)> = Vec::new();
    for (id, wait) in model.waits().ids().zip(model.waits().iter()) {
        // Task ids of the model's waits index `accepted` in range.
        if !accepted[wait.task.index()] {
            continue;
        }
        let Some(Span { kind, start, waker, queue }) = span(model, &wakeup_of, window, id, &wait, &mut |how| {
            let comm = model.tasks().get(wait.task).comm_at(wait.start);
            unknown.push((wait.task, comm, wait.ran_on, how));
        }) else {
            continue;
        };
        let placement = match queue {
            Some(cpu) => placement(model, cpu, wait.start),
            None if kind == DelayKind::Preemption => Placement::BehindTask,
            None => Placement::Unknown,
        };
        let migrated = migrated_during(&migrations[wait.task.index()], start, wait.end);
        let pid = model.tasks().get(wait.task).pid;
        let allowed_idle_ns = match affinity.and_then(|a| a.allowed(pid)) {
            Some(cpus) => {
                let others: Vec<Cpu> = cpus.iter().copied().filter(|&c| c != wait.ran_on).collect();
                idle.shares(start, wait.end, Allowed::Only(&others)).allowed_idle_ns
            }
            None => idle.shares(start, wait.end, Allowed::EveryBut(wait.ran_on)).allowed_idle_ns,
        };
        delays.push(Delay {
            task: wait.task,
            kind,
            start,
            end: wait.end,
            cpu: wait.ran_on,
            waker,
            placement,
            migrated,
            allowed_idle_ns,
        });
    }
    delays.sort_by_key(|d| (d.end, d.cpu, d.task, d.start));
    group(model, window, delays, &unknown)
}

/// What a wait that ended in a recorded switch-in measured: its kind, its start (the
/// `sched_waking`, else the enqueue; a preemption's switch-out), its waker and the CPU
/// whose runqueue it was put on.
struct Span {
    kind: DelayKind,
    start: Nanos,
    waker: Option<TaskId>,
    queue: Option<Cpu>,
}

/// The span of `wait` when it is a delay of `window` (ended there with the task running
/// through a recorded switch); a wait of unknown end that began in the window goes to
/// `unknown` with how it ended. One definition for [`compute`] and [`distributions`].
fn span(
    model: &Model,
    wakeup_of: &[Option<WakeupId>],
    window: Window,
    id: WaitId,
    wait: &Wait,
    unknown: &mut dyn FnMut(WaitEnd),
) -> Option<Span> {
    let end_kind = if wait.end_kind == WaitEnd::Ran && !switched_in(model, wait.task, wait.ran_on, wait.end) {
        WaitEnd::Unrecorded
    } else {
        wait.end_kind
    };
    if end_kind != WaitEnd::Ran {
        if window.contains(wait.start) {
            unknown(end_kind);
        }
        return None;
    }
    if !window.contains(wait.end) {
        return None;
    }
    let wakeup = wakeup_of[id.index()].map(|w| model.wakeups().get(w));
    let kind = match wait.cause {
        WaitCause::Preempted => DelayKind::Preemption,
        WaitCause::NewTask => DelayKind::NewTask,
        WaitCause::Wakeup => DelayKind::Wakeup,
    };
    Some(match wakeup.filter(|_| kind != DelayKind::Preemption) {
        Some(w) => Span {
            kind,
            start: w.waking.unwrap_or(wait.start).min(wait.start),
            waker: w.waker,
            queue: Some(w.target_cpu),
        },
        None => Span { kind, start: wait.start, waker: None, queue: None },
    })
}

/// The distributions of `compute`'s delays, without their causes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Distributions {
    pub window: Window,
    /// Wakeup latencies (new tasks included) over all.
    pub wakeups: Distribution,
    /// Preemption waits over all.
    pub preemptions: Distribution,
    /// Per command name (the name the task had when the wait began), by name: its wakeup
    /// latencies. The commands are `compute`'s: every one with a delay or a wait of
    /// unknown end in the window.
    pub by_command: Vec<(String, Distribution)>,
}

impl Distributions {
    /// The commands, largest p99 wakeup latency first, then by name (`latency`'s order).
    pub fn commands_by_p99(&self) -> Vec<(&str, &Distribution)> {
        let mut commands: Vec<(&str, &Distribution)> = self.by_command.iter().map(|(c, d)| (c.as_str(), d)).collect();
        commands.sort_by(|a, b| b.1.p99_ns.cmp(&a.1.p99_ns).then_with(|| a.0.cmp(b.0)));
        commands
    }
}

/// The distributions of the delays [`compute`] finds (the same delays, ending in `window`,
/// of the tasks `filter` accepts), without their causes. The model must have waits and
/// wakeups.
pub fn distributions(model: &Model, window: Window, filter: &TaskFilter) -> Distributions {
    let accepted: Vec<bool> = model.tasks().ids().map(|task| filter.accepts(model, task)).collect();
    let wakeup_of = model.wakeups_by_wait();
    let (mut wakeups, mut preemptions) = (Vec::new(), Vec::new());
    let mut by_command: BTreeMap<CommId, Vec<u64>> = BTreeMap::new();
    for (id, wait) in model.waits().ids().zip(model.waits().iter()) {
        // Task ids of the model's waits index `accepted` in range.
        if !accepted[wait.task.index()] {
            continue;
        }
        let comm = || model.tasks().get(wait.task).comm_at(wait.start);
        let mut unknown_end = false;
        let span = span(model, &wakeup_of, window, id, &wait, &mut |_| unknown_end = true);
        let Some(span) = span else {
            if unknown_end {
                by_command.entry(comm()).or_default();
            }
            continue;
        };
        let latency = wait.end.saturating_sub(span.start).0;
        let of_command = by_command.entry(model.tasks().get(wait.task).comm_at(span.start)).or_default();
        if span.kind == DelayKind::Preemption {
            preemptions.push(latency);
        } else {
            wakeups.push(latency);
            of_command.push(latency);
        }
    }
    let mut by_command: Vec<(String, Distribution)> = by_command
        .into_iter()
        .map(|(comm, mut latencies)| (model.comms().name(comm).to_string(), Distribution::of(&mut latencies)))
        .collect();
    by_command.sort_by(|a, b| a.0.cmp(&b.0));
    Distributions {
        window,
        wakeups: Distribution::of(&mut wakeups),
        preemptions: Distribution::of(&mut preemptions),
        by_command,
    }
}

fn group(model: &Model, window: Window, delays: Vec<Delay>, unknown: &[(TaskId, CommId, Cpu, WaitEnd)]) -> Latencies {
    let comm_of = |d: &Delay| model.tasks().get(d.task).comm_at(d.start);
    let mut tasks: BTreeMap<TaskId, Vec<&Delay>> = BTreeMap::new();
    let mut commands: BTreeMap<CommId, Vec<&Delay>> = BTreeMap::new();
    let mut cpus: BTreeMap<Cpu, Vec<&Delay>> = BTreeMap::new();
    for delay in &delays {
        tasks.entry(delay.task).or_default().push(delay);
        commands.entry(comm_of(delay)).or_default().push(delay);
        cpus.entry(delay.cpu).or_default().push(delay);
    }
    let mut task_unknown: BTreeMap<TaskId, UnknownEnds> = BTreeMap::new();
    let mut command_unknown: BTreeMap<CommId, UnknownEnds> = BTreeMap::new();
    let mut cpu_unknown: BTreeMap<Cpu, UnknownEnds> = BTreeMap::new();
    let mut overall_unknown = UnknownEnds::default();
    for (task, comm, cpu, how) in unknown {
        task_unknown.entry(*task).or_default().count(*how);
        command_unknown.entry(*comm).or_default().count(*how);
        cpu_unknown.entry(*cpu).or_default().count(*how);
        overall_unknown.count(*how);
        tasks.entry(*task).or_default();
        commands.entry(*comm).or_default();
        cpus.entry(*cpu).or_default();
    }
    let by_task = tasks
        .into_iter()
        .map(|(task, mut list)| {
            let info = model.tasks().get(task);
            let name = model.comms().name(info.last_comm()).to_string();
            let unknown = task_unknown.get(&task).copied().unwrap_or_default();
            (task, info.pid, name, summarise(&mut list, unknown))
        })
        .collect();
    let mut by_command: Vec<(String, Group)> = commands
        .into_iter()
        .map(|(comm, mut list)| {
            let unknown = command_unknown.get(&comm).copied().unwrap_or_default();
            (model.comms().name(comm).to_string(), summarise(&mut list, unknown))
        })
        .collect();
    by_command.sort_by(|a, b| a.0.cmp(&b.0));
    let by_cpu = cpus
        .into_iter()
        .map(|(cpu, mut list)| (cpu, summarise(&mut list, cpu_unknown.get(&cpu).copied().unwrap_or_default())))
        .collect();
    let mut all: Vec<&Delay> = delays.iter().collect();
    let overall = summarise(&mut all, overall_unknown);
    Latencies { window, delays, by_task, by_command, by_cpu, overall }
}

/// The group of some delays (wakeups and preemptions apart) with its unknown ends.
pub fn summarise(delays: &mut [&Delay], unknown: UnknownEnds) -> Group {
    let (preemptions, wakeups): (Vec<&Delay>, Vec<&Delay>) =
        delays.iter().partition(|d| d.kind == DelayKind::Preemption);
    Group { wakeups: Summary::of(&wakeups), preemptions: Summary::of(&preemptions), unknown }
}

/// Whether `task` began running on `cpu` at `time` by a recorded `sched_switch` (the
/// model also ends a wait where it first sees the task running without one: when it
/// really began to run is unknown then).
fn switched_in(model: &Model, task: TaskId, cpu: Cpu, time: Nanos) -> bool {
    let Some(timeline) = model.cpu(cpu) else { return false };
    let segments = timeline.segments();
    let first = segments.first_starting_at_or_after(time);
    let last = segments.first_starting_after(time);
    segments.iter_range(first..last).any(|s| s.task == task && s.started_by_switch())
}

/// Per task, the times it moved between CPUs, in order.
fn migrations_by_task(model: &Model) -> Vec<Vec<Nanos>> {
    let mut by_task = vec![Vec::new(); model.tasks().len()];
    for migration in model.migrations().iter() {
        // Migrations name model tasks: in range.
        by_task[migration.task.index()].push(migration.time);
    }
    by_task
}

fn migrated_during(times: &[Nanos], start: Nanos, end: Nanos) -> bool {
    let first = times.partition_point(|&t| t < start);
    times.get(first).is_some_and(|&t| t <= end)
}

fn placement(model: &Model, cpu: Cpu, time: Nanos) -> Placement {
    match model.cpu_idle_at(cpu, time) {
        Some(true) => Placement::IdleCpu,
        Some(false) => Placement::BehindTask,
        None => Placement::Unknown,
    }
}

/// A task that held a CPU another task was waiting for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Antagonist {
    pub task: TaskId,
    /// How long it ran on the CPUs the tasks waited for, while they waited there.
    pub held_ns: u64,
    /// A kernel thread (by name, as `check` tells them).
    pub kernel_thread: bool,
}

/// Who held the CPU: for the waits of `tasks` in `window`, the tasks that ran on the
/// CPU whose runqueue each waited on, while it waited there (each runqueue piece of a
/// wait against that CPU's run segments), largest first (then by task). The model must
/// have waits and runqueues.
pub fn antagonists(model: &Model, window: Window, tasks: &[TaskId]) -> Vec<Antagonist> {
    let mut ours = vec![false; model.tasks().len()];
    for task in tasks {
        // Tasks come from this model: in range.
        ours[task.index()] = true;
    }
    let mut held: BTreeMap<TaskId, u64> = BTreeMap::new();
    for timeline in model.cpus() {
        let segments = timeline.segments();
        for piece in timeline.queue().iter() {
            let Some(wait) = piece.wait else { continue };
            let waiter = model.waits().task(wait);
            // Wait rows name model tasks: in range.
            if !ours[waiter.index()] {
                continue;
            }
            let (start, end) = window.clip(piece.start, piece.end);
            if end <= start {
                continue;
            }
            for segment in segments.iter_range(segments.overlapping(start, end)) {
                if segment.task == TaskId::IDLE || segment.task == waiter {
                    continue;
                }
                let overlap = Window::new(start, end).overlap(segment.start, segment.end).0;
                let slot = held.entry(segment.task).or_default();
                *slot = slot.saturating_add(overlap);
            }
        }
    }
    let mut list: Vec<Antagonist> = held
        .into_iter()
        .filter(|&(_, ns)| ns > 0)
        .map(|(task, held_ns)| {
            let comm = model.comms().name(model.tasks().get(task).last_comm());
            Antagonist { task, held_ns, kernel_thread: crate::check::kthreads::is_kernel_thread(comm) }
        })
        .collect();
    list.sort_by(|a, b| b.held_ns.cmp(&a.held_ns).then(a.task.cmp(&b.task)));
    list
}
