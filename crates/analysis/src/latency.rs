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
    /// Their latencies.
    pub latencies: Distribution,
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
        self.latencies.total_ns.checked_div(self.latencies.count).unwrap_or(0)
    }

    /// From the group's delays (any order).
    fn of(delays: &[&Delay]) -> Summary {
        let mut latencies: Vec<u64> = delays.iter().map(|d| d.latency_ns()).collect();
        let mut summary = Summary { latencies: Distribution::of(&mut latencies), ..Summary::default() };
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
///
/// The waits are taken in pieces on every core (each piece's delays in wait order, the
/// pieces in order), then grouped per task, command and CPU and overall, also on every
/// core: the result does not depend on the number of cores.
pub fn compute(model: &Model, window: Window, filter: &TaskFilter, affinity: Option<&Affinity>) -> Latencies {
    let pass = Pass {
        model,
        window,
        accepted: model.tasks().ids().map(|task| filter.accepts(model, task)).collect(),
        wakeup_of: model.wakeups_by_wait(),
        migrations: migrations_by_task(model),
        idle: IdleIndex::new(model),
        allowed: allowed_sets(model, affinity),
    };
    let waits = model.waits().len();
    let pieces = waits.div_ceil(PIECE_WAITS);
    let parts = crate::cores::on_cores(
        pieces,
        || (),
        |_, piece| pass.delays_in(piece * PIECE_WAITS..((piece + 1) * PIECE_WAITS).min(waits)),
    );
    let mut delays = Vec::with_capacity(parts.iter().map(|(d, _)| d.len()).sum());
    let mut unknown = Vec::new();
    for (piece_delays, piece_unknown) in parts {
        delays.extend(piece_delays);
        unknown.extend(piece_unknown);
    }
    // No two delays share their end, CPU, task and start (one task runs once at a time).
    delays.sort_unstable_by_key(|d| (d.end, d.cpu, d.task, d.start));
    group(model, window, delays, &unknown)
}

/// Waits taken at once by one core in [`compute`].
const PIECE_WAITS: usize = 1 << 15;

/// A wait whose end is unknown: its task, name when it began, CPU and how it ended.
type UnknownEnd = (TaskId, CommId, Cpu, WaitEnd);

/// What every piece of [`compute`] reads.
struct Pass<'m> {
    model: &'m Model,
    window: Window,
    accepted: Vec<bool>,
    wakeup_of: Vec<Option<WakeupId>>,
    migrations: Vec<Vec<Nanos>>,
    idle: IdleIndex<'m>,
    /// Per task, the CPUs it was allowed on when the recording says and that is not every
    /// CPU of the trace.
    allowed: Vec<Option<&'m [Cpu]>>,
}

/// Per task, its recorded CPUs unless they are every CPU of the trace (then, as without a
/// recording, another CPU is any CPU: the index answers that with a few binary searches,
/// where a set of hundreds of CPUs would be walked CPU by CPU for every wait).
fn allowed_sets<'m>(model: &Model, affinity: Option<&'m Affinity>) -> Vec<Option<&'m [Cpu]>> {
    let every = |cpus: &[Cpu]| model.cpus().iter().all(|t| cpus.binary_search(&t.cpu()).is_ok());
    let sets = model.tasks().iter().map(|(_, task)| affinity.and_then(|a| a.allowed(task.pid)));
    sets.map(|cpus| cpus.filter(|cpus| !every(cpus))).collect()
}

impl Pass<'_> {
    /// The delays of the waits of `range` (wait indices), in wait order.
    fn delays_in(&self, range: std::ops::Range<usize>) -> (Vec<Delay>, Vec<UnknownEnd>) {
        let model = self.model;
        let mut delays = Vec::new();
        let mut unknown = Vec::new();
        let ids = model.waits().ids().skip(range.start);
        for (id, wait) in ids.zip(model.waits().iter_range(range)) {
            // Task ids of the model's waits index `accepted` in range.
            if !self.accepted[wait.task.index()] {
                continue;
            }
            let Some(span) = span(model, &self.wakeup_of, self.window, id, &wait, &mut |how| {
                let comm = model.tasks().get(wait.task).comm_at(wait.start);
                unknown.push((wait.task, comm, wait.ran_on, how));
            }) else {
                continue;
            };
            delays.push(self.delay(&wait, span));
        }
        (delays, unknown)
    }

    /// The delay of a wait that ended with its task running, with its causes.
    fn delay(&self, wait: &Wait, Span { kind, start, waker, queue }: Span) -> Delay {
        let model = self.model;
        let placement = match queue {
            Some(cpu) => placement(model, cpu, wait.start),
            None if kind == DelayKind::Preemption => Placement::BehindTask,
            None => Placement::Unknown,
        };
        let migrated = migrated_during(&self.migrations[wait.task.index()], start, wait.end);
        // Task ids of the model's waits index `allowed` in range.
        let allowed_idle_ns = match self.allowed[wait.task.index()] {
            Some(cpus) => {
                let others: Vec<Cpu> = cpus.iter().copied().filter(|&c| c != wait.ran_on).collect();
                self.idle.allowed_idle_ns(start, wait.end, Allowed::Only(&others))
            }
            None => self.idle.allowed_idle_ns(start, wait.end, Allowed::EveryBut(wait.ran_on)),
        };
        Delay {
            task: wait.task,
            kind,
            start,
            end: wait.end,
            cpu: wait.ran_on,
            waker,
            placement,
            migrated,
            allowed_idle_ns,
        }
    }
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
    // Per name (by its index), its wakeup latencies once it has a delay or an unknown end.
    let mut by_comm: Vec<Option<(CommId, Vec<u64>)>> = vec![None; model.comms().len()];
    fn of_comm(by_comm: &mut [Option<(CommId, Vec<u64>)>], comm: CommId) -> &mut Vec<u64> {
        &mut by_comm[comm.index()].get_or_insert_with(|| (comm, Vec::new())).1
    }
    for (id, wait) in model.waits().ids().zip(model.waits().iter()) {
        // Task ids of the model's waits index `accepted` in range.
        if !accepted[wait.task.index()] {
            continue;
        }
        let mut unknown_end = false;
        let span = span(model, &wakeup_of, window, id, &wait, &mut |_| unknown_end = true);
        let Some(span) = span else {
            if unknown_end {
                of_comm(&mut by_comm, model.tasks().get(wait.task).comm_at(wait.start));
            }
            continue;
        };
        let latency = wait.end.saturating_sub(span.start).0;
        let of_command = of_comm(&mut by_comm, model.tasks().get(wait.task).comm_at(span.start));
        if span.kind == DelayKind::Preemption {
            preemptions.push(latency);
        } else {
            wakeups.push(latency);
            of_command.push(latency);
        }
    }
    let mut by_command: Vec<(String, Distribution)> = by_comm
        .into_iter()
        .flatten()
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

/// One of the groupings [`group`] makes on its own core.
enum Grouping {
    Tasks(Vec<(TaskId, Pid, String, Group)>),
    Commands(Vec<(String, Group)>),
    Cpus(Vec<(Cpu, Group)>),
    Overall(Box<Group>),
}

fn group(model: &Model, window: Window, delays: Vec<Delay>, unknown: &[UnknownEnd]) -> Latencies {
    let comms: Vec<CommId> = delays.iter().map(|d| model.tasks().get(d.task).comm_at(d.start)).collect();
    let cpus = delays.iter().map(|d| d.cpu).chain(unknown.iter().map(|u| u.2)).max().map_or(0, |c| c.index() + 1);
    let groupings = crate::cores::on_cores(
        4,
        || (),
        |_, which| match which {
            0 => Grouping::Tasks(
                Keyed::new(model.tasks().len(), &delays, |i| delays[i].task, unknown, |u| u.0, TaskId::index)
                    .summaries()
                    .map(|(task, group)| {
                        let info = model.tasks().get(task);
                        (task, info.pid, model.comms().name(info.last_comm()).to_string(), group)
                    })
                    .collect(),
            ),
            1 => {
                let keyed = Keyed::new(model.comms().len(), &delays, |i| comms[i], unknown, |u| u.1, CommId::index);
                let mut by_command: Vec<(String, Group)> =
                    keyed.summaries().map(|(comm, group)| (model.comms().name(comm).to_string(), group)).collect();
                by_command.sort_by(|a, b| a.0.cmp(&b.0));
                Grouping::Commands(by_command)
            }
            2 => Grouping::Cpus(
                Keyed::new(cpus, &delays, |i| delays[i].cpu, unknown, |u| u.2, Cpu::index).summaries().collect(),
            ),
            _ => {
                let mut all_unknown = UnknownEnds::default();
                unknown.iter().for_each(|u| all_unknown.count(u.3));
                let mut all: Vec<&Delay> = delays.iter().collect();
                Grouping::Overall(Box::new(summarise(&mut all, all_unknown)))
            }
        },
    );
    let (mut by_task, mut by_command, mut by_cpu, mut overall) = (Vec::new(), Vec::new(), Vec::new(), Group::default());
    for grouping in groupings {
        match grouping {
            Grouping::Tasks(list) => by_task = list,
            Grouping::Commands(list) => by_command = list,
            Grouping::Cpus(list) => by_cpu = list,
            Grouping::Overall(group) => overall = *group,
        }
    }
    Latencies { window, delays, by_task, by_command, by_cpu, overall }
}

/// Delays grouped by a key with a dense index (`0..keys`) by a counting sort, each
/// group's unknown ends beside it: a key is a group when it has a delay or an unknown end.
struct Keyed<'d, K> {
    delays: &'d [Delay],
    /// Per index, its key when it has a delay or an unknown end.
    keys: Vec<Option<K>>,
    /// Delay indices, group by group (in delay order within each).
    order: Vec<u32>,
    /// Where each index's delays begin in `order` (one more entry than `keys`).
    offsets: Vec<u32>,
    unknown: Vec<UnknownEnds>,
}

impl<'d, K: Copy> Keyed<'d, K> {
    fn new(
        count: usize,
        delays: &'d [Delay],
        key_of: impl Fn(usize) -> K,
        unknown: &[UnknownEnd],
        unknown_key: impl Fn(&UnknownEnd) -> K,
        index: impl Fn(K) -> usize,
    ) -> Keyed<'d, K> {
        let mut keys = vec![None; count];
        let mut offsets = vec![0u32; count + 1];
        for i in 0..delays.len() {
            let key = key_of(i);
            keys[index(key)] = Some(key);
            offsets[index(key) + 1] += 1;
        }
        for k in 0..count {
            offsets[k + 1] += offsets[k];
        }
        let mut next = offsets.clone();
        let mut order = vec![0u32; delays.len()];
        for i in 0..delays.len() {
            let slot = &mut next[index(key_of(i))];
            order[*slot as usize] = i as u32;
            *slot += 1;
        }
        let mut unknown_ends = vec![UnknownEnds::default(); count];
        for u in unknown {
            let key = unknown_key(u);
            keys[index(key)] = Some(key);
            unknown_ends[index(key)].count(u.3);
        }
        Keyed { delays, keys, order, offsets, unknown: unknown_ends }
    }

    /// Each group's key and summary, in index order.
    fn summaries(&self) -> impl Iterator<Item = (K, Group)> + '_ {
        self.keys.iter().enumerate().filter_map(move |(index, key)| {
            let (from, to) = (self.offsets[index] as usize, self.offsets[index + 1] as usize);
            let mut list: Vec<&Delay> = self.order[from..to].iter().map(|&i| &self.delays[i as usize]).collect();
            Some((key.as_ref().copied()?, summarise(&mut list, self.unknown[index])))
        })
    }
}

/// The group of some delays (wakeups and preemptions apart) with its unknown ends.
pub fn summarise(delays: &mut [&Delay], unknown: UnknownEnds) -> Group {
    let wakeups = partition_in_place(delays, |d| d.kind != DelayKind::Preemption);
    let (wakeups, preemptions) = delays.split_at(wakeups);
    Group { wakeups: Summary::of(wakeups), preemptions: Summary::of(preemptions), unknown }
}

/// Reorders `items` so that those `pred` holds for come first; returns how many.
fn partition_in_place<T>(items: &mut [T], pred: impl Fn(&T) -> bool) -> usize {
    let mut first_false = 0;
    for i in 0..items.len() {
        if pred(&items[i]) {
            items.swap(first_false, i);
            first_false += 1;
        }
    }
    first_false
}

/// Whether `task` began running on `cpu` at `time` by a recorded `sched_switch` (the
/// model also ends a wait where it first sees the task running without one: when it
/// really began to run is unknown then).
fn switched_in(model: &Model, task: TaskId, cpu: Cpu, time: Nanos) -> bool {
    let Some(timeline) = model.cpu(cpu) else { return false };
    let segments = timeline.segments();
    let first = segments.first_starting_at_or_after(time);
    segments
        .iter_range(first..segments.len())
        .take_while(|s| s.start == time)
        .any(|s| s.task == task && s.started_by_switch())
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
        for piece in timeline.queue().iter() {
            let Some(wait) = piece.wait else { continue };
            let waiter = model.waits().task(wait);
            // Wait rows name model tasks: in range.
            if ours[waiter.index()] {
                let (start, end) = window.clip(piece.start, piece.end);
                add_held(&mut held, timeline.segments(), Window::new(start, end), waiter);
            }
        }
    }
    ranked(model, held)
}

/// Who held the CPU during one wait: the CPUs whose runqueue it waited on, in order, and
/// the tasks that ran on each while it waited there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitHolders {
    pub cpus: Vec<Cpu>,
    /// Largest first (then by task), as [`antagonists`] counts them: a task's waits' add
    /// up to its antagonists over the whole trace.
    pub antagonists: Vec<Antagonist>,
}

/// Who held the CPU during one wait (each of its runqueue pieces against that CPU's run
/// segments). The model must have waits and runqueues.
pub fn wait_antagonists(model: &Model, wait: WaitId) -> WaitHolders {
    let row = model.waits().get(wait);
    let mut held: BTreeMap<TaskId, u64> = BTreeMap::new();
    let mut pieces: Vec<(Nanos, Cpu)> = Vec::new();
    for timeline in model.cpus() {
        // A piece of the wait begins within it.
        let queue = timeline.queue();
        let range = queue.first_starting_at_or_after(row.start)..queue.first_starting_after(row.end);
        for piece in queue.iter_range(range).filter(|p| p.wait == Some(wait)) {
            pieces.push((piece.start, timeline.cpu()));
            add_held(&mut held, timeline.segments(), Window::new(piece.start, piece.end), row.task);
        }
    }
    pieces.sort_unstable();
    let mut cpus: Vec<Cpu> = pieces.into_iter().map(|(_, cpu)| cpu).collect();
    cpus.dedup();
    WaitHolders { cpus, antagonists: ranked(model, held) }
}

/// Adds, per task other than `waiter` and idle, the time it ran in `during` on the CPU
/// whose run segments are `segments`.
fn add_held(held: &mut BTreeMap<TaskId, u64>, segments: &model::Segments, during: Window, waiter: TaskId) {
    if during.end <= during.start {
        return;
    }
    for segment in segments.iter_range(segments.overlapping(during.start, during.end)) {
        if segment.task == TaskId::IDLE || segment.task == waiter {
            continue;
        }
        let overlap = during.overlap(segment.start, segment.end).0;
        let slot = held.entry(segment.task).or_default();
        *slot = slot.saturating_add(overlap);
    }
}

/// The tasks that held a CPU, largest first (then by task), kernel threads marked.
fn ranked(model: &Model, held: BTreeMap<TaskId, u64>) -> Vec<Antagonist> {
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
