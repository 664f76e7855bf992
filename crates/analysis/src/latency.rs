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

mod records;

pub use records::RecordPass;

use crate::check::Affinity;
use crate::idle::{Allowed, IdleIndex};
use crate::records::Woken;
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
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

impl std::ops::AddAssign for UnknownEnds {
    /// Another group's counts added.
    fn add_assign(&mut self, other: UnknownEnds) {
        self.lost += other.lost;
        self.trace_end += other.trace_end;
        self.unrecorded += other.unrecorded;
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

/// Latencies kept for their exact percentiles: 4 bytes each, the rare one of 4.29 s or
/// more aside (above all the others, so the two parts need not be merged).
#[derive(Clone, Debug, Default)]
struct Values {
    short: Vec<u32>,
    long: Vec<u64>,
}

impl Values {
    fn push(&mut self, latency_ns: u64) {
        match u32::try_from(latency_ns) {
            Ok(short) => self.short.push(short),
            Err(_) => self.long.push(latency_ns),
        }
    }

    fn append(&mut self, other: &mut Values) {
        self.short.append(&mut other.short);
        self.long.append(&mut other.long);
    }

    fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.short.iter().map(|&v| u64::from(v)).chain(self.long.iter().copied())
    }

    /// Their distribution (reorders them). The percentiles are selected, not sorted: a
    /// sort of every group's delays took a third of `latency`'s time on a 5M-event trace.
    fn distribution(&mut self) -> Distribution {
        let mut distribution = Distribution { count: self.len() as u64, ..Distribution::default() };
        for latency in self.iter() {
            distribution.total_ns = distribution.total_ns.saturating_add(latency);
            distribution.histogram[bucket_of(latency)] += 1;
            distribution.max_ns = distribution.max_ns.max(latency);
        }
        [distribution.p50_ns, distribution.p90_ns, distribution.p99_ns, distribution.p999_ns] =
            self.nearest_ranks([0.50, 0.90, 0.99, 0.999]);
        distribution
    }

    /// The nearest-rank quantiles `ps` (in increasing order; 0 when empty). Each is
    /// selected among the values the one before left above it.
    fn nearest_ranks<const N: usize>(&mut self, ps: [f64; N]) -> [u64; N] {
        let n = self.len();
        let (mut short_from, mut long_from) = (0, 0);
        ps.map(|p| {
            if n == 0 {
                return 0;
            }
            let index = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
            match index.checked_sub(self.short.len()) {
                None => {
                    let value = *self.short[short_from..].select_nth_unstable(index - short_from).1;
                    short_from = index;
                    u64::from(value)
                }
                Some(index) => {
                    let value = *self.long[long_from..].select_nth_unstable(index - long_from).1;
                    long_from = index;
                    value
                }
            }
        })
    }
}

/// A group's delays: wakeups (new tasks included) and preemptions apart.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    pub wakeups: Summary,
    pub preemptions: Summary,
    pub unknown: UnknownEnds,
}

/// Everything `latency` computes over a window. The parts [`Parts`] did not ask for are
/// empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Latencies {
    pub window: Window,
    /// Every delay that ended in the window, in order of its end (then CPU, task, start,
    /// and the rest, for delays alike in those: only a damaged trace has them).
    pub delays: Vec<Delay>,
    /// Per task (with its pid and last name), in task order.
    pub by_task: Vec<(TaskId, Pid, String, Group)>,
    /// Per command name (the name the task had when the wait began), by name.
    pub by_command: Vec<(String, Group)>,
    /// Per CPU it ran on (or waited on, for unknown ends), by CPU.
    pub by_cpu: Vec<(Cpu, Group)>,
    pub overall: Group,
}

/// Which parts of [`Latencies`] to compute besides the overall group. A grouping keeps
/// every delay's latency once more (4 bytes) until its percentiles are chosen, and
/// `delays` keeps every delay whole (64 bytes): on a trace of ten million delays, the
/// parts a command does not show are most of its memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Parts {
    pub delays: bool,
    pub by_task: bool,
    pub by_command: bool,
    pub by_cpu: bool,
}

impl Parts {
    pub const ALL: Parts = Parts { delays: true, by_task: true, by_command: true, by_cpu: true };
    /// The overall group alone.
    pub const OVERALL: Parts = Parts { delays: false, by_task: false, by_command: false, by_cpu: false };
}

/// Computes the delays that ended in `window` (unknown ends: that began in it) of the
/// tasks `filter` accepts, and the `parts` asked for. The model must have waits, wakeups
/// and migrations.
///
/// The waits are taken in one piece per core, each piece summing its delays into its own
/// groups as it finds them; the pieces' groups are then added up and each group's
/// percentiles chosen from its delays' latencies. Sums, counts, the largest delay and
/// percentiles of the same latencies do not depend on the order the delays came in, so
/// the result does not depend on the number of cores.
pub fn compute(
    model: &Model,
    window: Window,
    filter: &TaskFilter,
    affinity: Option<&Affinity>,
    parts: Parts,
) -> Latencies {
    let pass = Pass::new(model, window, filter, affinity, parts, model.wakeups_by_wait(), migrations_by_task(model));
    let waits = model.waits().len();
    let mut found = (Vec::new(), Groups::new(parts));
    for piece in on_cores_in_pieces(model, waits, |near, range| pass.delays_in(range, near)) {
        add_found(&mut found, piece);
    }
    finish(model, window, found)
}

/// `work` over `0..count` in one piece per core (one piece below [`MIN_PIECE_WAITS`] a
/// core), each piece with its own [`Near`], the pieces' results in order.
fn on_cores_in_pieces<T: Send>(
    model: &Model,
    count: usize,
    work: impl Fn(&mut Near, std::ops::Range<usize>) -> T + Sync,
) -> Vec<T> {
    let pieces = crate::cores::available().min(count.div_ceil(MIN_PIECE_WAITS)).max(1);
    let length = count.div_ceil(pieces);
    crate::cores::on_cores(
        pieces,
        || Near::new(model),
        |near, piece| work(near, piece * length..((piece + 1) * length).min(count)),
    )
}

/// Waits below which a piece of a pass is not worth a thread.
const MIN_PIECE_WAITS: usize = 1 << 15;

/// Delays found (when kept) and the groups they were summed into.
type Found = (Vec<Delay>, Groups);

fn add_found((delays, groups): &mut Found, (more_delays, more_groups): Found) {
    delays.extend(more_delays);
    groups.add(more_groups);
}

/// The delays in order and each group's percentiles.
fn finish(model: &Model, window: Window, (mut delays, groups): Found) -> Latencies {
    // A task runs once at a time, so delays share their end, CPU, task and start only in a
    // damaged trace (many events at one instant); their other fields then order them, so
    // the order does not depend on the order the pass found them in.
    delays.sort_unstable_by_key(order);
    groups.finish(model, window, delays)
}

/// The order of delays: by end, CPU, task and start, then (for delays alike in those, in
/// a damaged trace) by the rest, so that no two different delays tie.
type DelayOrder = (Nanos, Cpu, TaskId, Nanos, DelayKind, Option<TaskId>, Placement, bool, u64);

fn order(d: &Delay) -> DelayOrder {
    (d.end, d.cpu, d.task, d.start, d.kind, d.waker, d.placement, d.migrated, d.allowed_idle_ns)
}

/// What every piece of a pass reads.
struct Pass<'m> {
    model: &'m Model,
    window: Window,
    parts: Parts,
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

impl<'m> Pass<'m> {
    /// `wakeup_of`: per wait of the model's table, the wakeup that began it (none when
    /// the waits come as records); `migrations`: per task, its migrations' times in order.
    fn new(
        model: &'m Model,
        window: Window,
        filter: &TaskFilter,
        affinity: Option<&'m Affinity>,
        parts: Parts,
        wakeup_of: Vec<Option<WakeupId>>,
        mut migrations: Vec<Vec<Nanos>>,
    ) -> Pass<'m> {
        migrations.resize_with(model.tasks().len(), Vec::new);
        Pass {
            model,
            window,
            parts,
            accepted: model.tasks().ids().map(|task| filter.accepts(model, task)).collect(),
            wakeup_of,
            migrations,
            idle: IdleIndex::new(model),
            allowed: allowed_sets(model, affinity),
        }
    }

    /// The delays of the waits of `range` (wait indices), in wait order when asked for,
    /// and their groups.
    fn delays_in(&self, range: std::ops::Range<usize>, near: &mut Near) -> Found {
        let model = self.model;
        let mut found = (Vec::new(), Groups::new(self.parts));
        let ids = model.waits().ids().skip(range.start);
        for (id, wait) in ids.zip(model.waits().iter_range(range)) {
            let woken = self.wakeup_of[id.index()].map(|w| Woken::from(&model.wakeups().get(w)));
            self.add(&wait, woken, near, &mut found);
        }
        found
    }

    /// Adds a wait's delay (or its unknown end) to `found`'s delays and groups.
    fn add(&self, wait: &Wait, woken: Option<Woken>, near: &mut Near, (delays, groups): &mut Found) {
        // Task ids of the model's waits index `accepted` in range.
        if !self.accepted[wait.task.index()] {
            return;
        }
        let model = self.model;
        let Some(span) = span(model, self.window, wait, woken, near, &mut |how| groups.add_unknown(model, wait, how))
        else {
            return;
        };
        let delay = self.delay(wait, span, near);
        groups.add_delay(model, &delay);
        if self.parts.delays {
            delays.push(delay);
        }
    }

    /// The delay of a wait that ended with its task running, with its causes.
    fn delay(&self, wait: &Wait, Span { kind, start, waker, queue }: Span, near: &mut Near) -> Delay {
        let model = self.model;
        let placement = match queue {
            Some(cpu) => placement(model, cpu, wait.start, near),
            None if kind == DelayKind::Preemption => Placement::BehindTask,
            None => Placement::Unknown,
        };
        let migrated = migrated_during(&self.migrations[wait.task.index()], start, wait.end, near.migration(wait.task));
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
    window: Window,
    wait: &Wait,
    woken: Option<Woken>,
    near: &mut Near,
    unknown: &mut dyn FnMut(WaitEnd),
) -> Option<Span> {
    let end_kind = if wait.end_kind == WaitEnd::Ran && !switched_in(model, wait.task, wait.ran_on, wait.end, near) {
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
    let kind = match wait.cause {
        WaitCause::Preempted => DelayKind::Preemption,
        WaitCause::NewTask => DelayKind::NewTask,
        WaitCause::Wakeup => DelayKind::Wakeup,
    };
    Some(match woken.filter(|_| kind != DelayKind::Preemption) {
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
    let (mut wakeups, mut preemptions) = (Values::default(), Values::default());
    // Per name (by its index), its wakeup latencies once it has a delay or an unknown end.
    let mut by_comm: Vec<Option<(CommId, Values)>> = vec![None; model.comms().len()];
    let mut near = Near::new(model);
    fn of_comm(by_comm: &mut [Option<(CommId, Values)>], comm: CommId) -> &mut Values {
        &mut by_comm[comm.index()].get_or_insert_with(|| (comm, Values::default())).1
    }
    for (id, wait) in model.waits().ids().zip(model.waits().iter()) {
        // Task ids of the model's waits index `accepted` in range.
        if !accepted[wait.task.index()] {
            continue;
        }
        let mut unknown_end = false;
        let woken = wakeup_of[id.index()].map(|w| Woken::from(&model.wakeups().get(w)));
        let span = span(model, window, &wait, woken, &mut near, &mut |_| unknown_end = true);
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
        .map(|(comm, mut latencies)| (model.comms().name(comm).to_string(), latencies.distribution()))
        .collect();
    by_command.sort_by(|a, b| a.0.cmp(&b.0));
    Distributions { window, wakeups: wakeups.distribution(), preemptions: preemptions.distribution(), by_command }
}

/// A group's delays of one kind, as they come: their latencies (for the percentiles at
/// the end), the largest and the causes' counts and times.
#[derive(Clone, Debug, Default)]
struct Sums {
    latencies: Values,
    worst: Option<Delay>,
    on_idle_cpu: (u64, u64),
    migrated: (u64, u64),
    allowed_idle: (u64, u64),
}

impl Sums {
    fn add(&mut self, delay: &Delay) {
        let latency = delay.latency_ns();
        self.latencies.push(latency);
        if self.worst.as_ref().is_none_or(|worst| worse(delay, worst)) {
            self.worst = Some(*delay);
        }
        add_if(&mut self.on_idle_cpu, delay.placement == Placement::IdleCpu, latency);
        add_if(&mut self.migrated, delay.migrated, latency);
        add_if(&mut self.allowed_idle, delay.allowed_idle_ns > 0, delay.allowed_idle_ns);
    }

    fn merge(&mut self, mut other: Sums) {
        self.latencies.append(&mut other.latencies);
        if let Some(theirs) = other.worst.filter(|theirs| self.worst.as_ref().is_none_or(|ours| worse(theirs, ours))) {
            self.worst = Some(theirs);
        }
        for (ours, theirs) in [
            (&mut self.on_idle_cpu, other.on_idle_cpu),
            (&mut self.migrated, other.migrated),
            (&mut self.allowed_idle, other.allowed_idle),
        ] {
            ours.0 += theirs.0;
            ours.1 = ours.1.saturating_add(theirs.1);
        }
    }

    fn finish(mut self) -> Summary {
        Summary {
            latencies: self.latencies.distribution(),
            worst: self.worst.map(|d| Worst {
                latency_ns: d.latency_ns(),
                start: d.start,
                end: d.end,
                cpu: d.cpu,
                task: d.task,
                waker: d.waker,
            }),
            on_idle_cpu: self.on_idle_cpu,
            migrated: self.migrated,
            allowed_idle: self.allowed_idle,
        }
    }
}

/// Counts one more delay and its time in `pair` when `yes`.
fn add_if(pair: &mut (u64, u64), yes: bool, time: u64) {
    if yes {
        pair.0 += 1;
        pair.1 = pair.1.saturating_add(time);
    }
}

/// Whether `a` is the worse of two delays: the longer, and of equal ones the first in
/// [`order`] (so the worst does not depend on the order the delays came in).
fn worse(a: &Delay, b: &Delay) -> bool {
    (Reverse(a.latency_ns()), order(a)) < (Reverse(b.latency_ns()), order(b))
}

/// A group as it comes: wakeups (new tasks included) and preemptions apart, and its waits
/// of unknown end.
#[derive(Clone, Debug, Default)]
struct GroupSums {
    wakeups: Sums,
    preemptions: Sums,
    unknown: UnknownEnds,
}

impl GroupSums {
    fn add(&mut self, delay: &Delay) {
        match delay.kind {
            DelayKind::Preemption => self.preemptions.add(delay),
            DelayKind::Wakeup | DelayKind::NewTask => self.wakeups.add(delay),
        }
    }

    fn merge(&mut self, other: GroupSums) {
        self.wakeups.merge(other.wakeups);
        self.preemptions.merge(other.preemptions);
        self.unknown += other.unknown;
    }

    fn finish(self) -> Group {
        Group { wakeups: self.wakeups.finish(), preemptions: self.preemptions.finish(), unknown: self.unknown }
    }
}

/// Groups by a key with a dense index (a task, a name, a CPU); a key is a group once it
/// has a delay or an unknown end. Empty and never filled when not asked for.
struct Keyed<K> {
    wanted: bool,
    slots: Vec<Option<(K, Box<GroupSums>)>>,
}

impl<K: Copy> Keyed<K> {
    fn new(wanted: bool) -> Keyed<K> {
        Keyed { wanted, slots: Vec::new() }
    }

    /// The group of `key` (at `index`), when groups by this key are asked for.
    fn group(&mut self, key: K, index: usize) -> Option<&mut GroupSums> {
        if !self.wanted {
            return None;
        }
        if self.slots.len() <= index {
            self.slots.resize_with(index + 1, || None);
        }
        Some(&mut self.slots[index].get_or_insert_with(|| (key, Box::default())).1)
    }

    fn merge(&mut self, other: Keyed<K>) {
        for (index, slot) in other.slots.into_iter().enumerate() {
            if let Some((key, group)) = slot
                && let Some(ours) = self.group(key, index)
            {
                ours.merge(*group);
            }
        }
    }

    /// Each group's key and group, in index order.
    fn finish(self) -> impl Iterator<Item = (K, Group)> {
        self.slots.into_iter().flatten().map(|(key, group)| (key, group.finish()))
    }
}

/// The groups a pass fills: per task, per name, per CPU and overall.
struct Groups {
    by_task: Keyed<TaskId>,
    by_command: Keyed<CommId>,
    by_cpu: Keyed<Cpu>,
    overall: GroupSums,
}

impl Groups {
    fn new(parts: Parts) -> Groups {
        Groups {
            by_task: Keyed::new(parts.by_task),
            by_command: Keyed::new(parts.by_command),
            by_cpu: Keyed::new(parts.by_cpu),
            overall: GroupSums::default(),
        }
    }

    /// The groups of a delay's task, of the name the task had when it began, of its CPU.
    fn of(&mut self, model: &Model, task: TaskId, since: Nanos, cpu: Cpu) -> impl Iterator<Item = &mut GroupSums> {
        let comm = self.by_command.wanted.then(|| model.tasks().get(task).comm_at(since));
        let by_command = comm.and_then(|comm| self.by_command.group(comm, comm.index()));
        let by_task = self.by_task.group(task, task.index());
        let by_cpu = self.by_cpu.group(cpu, cpu.index());
        [by_task, by_command, by_cpu, Some(&mut self.overall)].into_iter().flatten()
    }

    fn add_delay(&mut self, model: &Model, delay: &Delay) {
        self.of(model, delay.task, delay.start, delay.cpu).for_each(|group| group.add(delay));
    }

    fn add_unknown(&mut self, model: &Model, wait: &Wait, how: WaitEnd) {
        self.of(model, wait.task, wait.start, wait.ran_on).for_each(|group| group.unknown.count(how));
    }

    fn add(&mut self, other: Groups) {
        self.by_task.merge(other.by_task);
        self.by_command.merge(other.by_command);
        self.by_cpu.merge(other.by_cpu);
        self.overall.merge(other.overall);
    }

    /// The groups' percentiles, each grouping on a core of its own.
    fn finish(self, model: &Model, window: Window, delays: Vec<Delay>) -> Latencies {
        let Groups { by_task, by_command, by_cpu, overall } = self;
        std::thread::scope(|scope| {
            let by_task = scope.spawn(|| {
                let named = |task: TaskId, group| {
                    let info = model.tasks().get(task);
                    (task, info.pid, model.comms().name(info.last_comm()).to_string(), group)
                };
                by_task.finish().map(|(task, group)| named(task, group)).collect()
            });
            let by_command = scope.spawn(|| {
                let mut list: Vec<(String, Group)> =
                    by_command.finish().map(|(comm, group)| (model.comms().name(comm).to_string(), group)).collect();
                list.sort_by(|a, b| a.0.cmp(&b.0));
                list
            });
            let by_cpu = by_cpu.finish().collect();
            let overall = overall.finish();
            Latencies { window, delays, by_task: join(by_task), by_command: join(by_command), by_cpu, overall }
        })
    }
}

/// A scoped thread's result; its panic resumed on the caller's thread.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The group of some delays (wakeups and preemptions apart) with its unknown ends.
pub fn summarise(delays: &[&Delay], unknown: UnknownEnds) -> Group {
    let mut group = GroupSums { unknown, ..GroupSums::default() };
    delays.iter().for_each(|delay| group.add(delay));
    group.finish()
}

/// Whether `task` began running on `cpu` at `time` by a recorded `sched_switch` (the
/// model also ends a wait where it first sees the task running without one: when it
/// really began to run is unknown then).
fn switched_in(model: &Model, task: TaskId, cpu: Cpu, time: Nanos, near: &mut Near) -> bool {
    let Some(timeline) = model.cpu(cpu) else { return false };
    let segments = timeline.segments();
    // The model's CPUs index `near` in range.
    let hint = &mut near.switched_in[cpu.index()];
    let first = segments.first_starting_at_or_after_near(time, *hint);
    *hint = first;
    segments
        .iter_range(first..segments.len())
        .take_while(|s| s.start == time)
        .any(|s| s.task == task && s.started_by_switch())
}

/// Where a pass's last searches landed, so the next search starts there: the waits are
/// taken in order of their start (the model's table) or of their end (records), so a
/// task's waits, and the waits ending on or put on one CPU, come in about time order. A search from the last answer reads a few entries where
/// a search of a whole CPU's segments or a task's migrations read twenty, with a cache
/// miss each (most of `latency`'s own time on a 5M-event trace).
struct Near {
    /// Per CPU, where the last wait that ran there began running.
    switched_in: Vec<usize>,
    /// Per CPU, where the last wait put on its runqueue was put there.
    queued: Vec<usize>,
    /// Per task, its first migration at or after its last wait's start.
    migrations: Vec<usize>,
}

impl Near {
    fn new(model: &Model) -> Near {
        let cpus = model.cpus().len();
        Near { switched_in: vec![0; cpus], queued: vec![0; cpus], migrations: vec![0; model.tasks().len()] }
    }

    fn migration(&mut self, task: TaskId) -> &mut usize {
        // Tasks of the model index it in range.
        &mut self.migrations[task.index()]
    }
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

/// Whether one of a task's migration `times` lies in `[start, end]`; searched from
/// `near` (the last answer for the task, updated).
fn migrated_during(times: &[Nanos], start: Nanos, end: Nanos, near: &mut usize) -> bool {
    *near = model::partition_point_near(times.len(), *near, |index| times[index] < start);
    times.get(*near).is_some_and(|&t| t <= end)
}

fn placement(model: &Model, cpu: Cpu, time: Nanos, near: &mut Near) -> Placement {
    let Some(hint) = near.queued.get_mut(cpu.index()) else { return Placement::Unknown };
    match model.cpu_idle_at_near(cpu, time, hint) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The nearest-rank quantile of sorted values, as the definition says.
    fn by_sorting(sorted: &[u64], p: f64) -> u64 {
        let n = sorted.len();
        if n == 0 { 0 } else { sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1] }
    }

    #[test]
    fn percentiles_chosen_one_after_the_other_are_those_of_the_sorted_values() {
        let ps = [0.50, 0.90, 0.99, 0.999];
        // Repeats, values of 4.29 s and more (kept aside), and sizes around the ranks.
        let mut seed = 7u64;
        for n in [0, 1, 2, 3, 10, 99, 1000, 1001, 4567] {
            for long_share in [0, 1, 3, 1000] {
                let mut values = Values::default();
                let mut all = Vec::new();
                for i in 0..n {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let latency =
                        if long_share > 0 && i % long_share == 0 { u64::from(u32::MAX) + seed % 50 } else { seed % 97 };
                    values.push(latency);
                    all.push(latency);
                }
                all.sort_unstable();
                let expected = ps.map(|p| by_sorting(&all, p));
                assert_eq!(values.nearest_ranks(ps), expected, "{n} values, every {long_share}th long");
                assert_eq!(values.distribution().max_ns, all.last().copied().unwrap_or(0));
            }
        }
    }
}
