//! Where a program's wall time went, and how much of it was the scheduler's fault: the
//! critical path walks back from the program's end through the wakeup graph (the waker
//! of each wakeup is where the path continues) and gives every nanosecond of the wall
//! time exactly one cause: running; runnable while a CPU the task was allowed on idled
//! (the scheduler's cost); runnable while only CPUs it was not allowed on idled
//! (pinning); runnable while every CPU was busy (contention); on another program's task
//! (the path left the followed tasks); blocked with no task waker (interrupt, timer,
//! I/O); or unknown (lost events, outside the trace, no waker recorded, a cycle of
//! wakeups, a CPU's state unknown), counted and never guessed. Definitions in docs/critical-path.md.

use crate::check::Affinity;
use crate::check::placement::{LONG_WAIT, PINNED_CPUS, PINNED_RUNS, PINNED_WAITS, Placement};
use crate::idle::{Allowed, IdleIndex};
use crate::window::{TaskFilter, Window};
use model::{Cpu, Model, Nanos, SegmentEnd, TaskId, WaitCause, WaitEnd, WaitId, WakeupId};
use std::collections::HashMap;

/// What to follow: the task whose end the walk starts from, the window of wall time to
/// attribute, and which tasks are the program's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub end_task: TaskId,
    pub window: Window,
    pub followed: Followed,
}

/// The program's own tasks: time the path spends on others is "another task's".
#[derive(Clone, Debug, PartialEq)]
pub enum Followed {
    /// The tasks a filter accepts (a command's process tree).
    Tasks(TaskFilter),
    /// One task alone.
    Task(TaskId),
}

impl Target {
    /// One task alone, from its first sighting in the trace to its exit, else the end of
    /// its last run.
    pub fn task(model: &Model, task: TaskId) -> Target {
        let last_run = model
            .cpus()
            .iter()
            .filter_map(|timeline| timeline.segments().iter().filter(|s| s.task == task).map(|s| s.end).max())
            .max();
        let info = model.tasks().get(task);
        let start = info.first_seen.max(model.start());
        let end = info.exit.or(last_run).unwrap_or(model.end());
        Target { end_task: task, window: Window::new(start, end), followed: Followed::Task(task) }
    }
}

/// Every nanosecond of the wall time, by cause. The parts sum to the window's length.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    pub running_ns: u64,
    /// Runnable while a CPU it was allowed on idled.
    pub scheduler_ns: u64,
    /// Runnable while only CPUs it was not allowed on idled.
    pub pinning_ns: u64,
    /// Runnable while every CPU was busy.
    pub contention_ns: u64,
    /// The path was on a task that is not the program's.
    pub other_task_ns: u64,
    /// Blocked, woken by an interrupt, a timer or I/O (no task waker).
    pub blocked_ns: u64,
    pub unknown_ns: u64,
}

impl Breakdown {
    /// The time whose cause is known: all of it but the unknown part.
    pub fn known_ns(&self) -> u64 {
        self.total_ns() - self.unknown_ns
    }

    /// The scheduler's part of the known time (0 when none is known): at most this share
    /// is the scheduler's cost. Unknown time is left out, never guessed either way.
    pub fn scheduler_share(&self) -> f64 {
        match self.known_ns() {
            0 => 0.0,
            known => self.scheduler_ns as f64 / known as f64,
        }
    }

    pub fn total_ns(&self) -> u64 {
        self.running_ns
            + self.scheduler_ns
            + self.pinning_ns
            + self.contention_ns
            + self.other_task_ns
            + self.blocked_ns
            + self.unknown_ns
    }

    /// The breakdown in one sentence a user can quote: "of the 2.31 s, 1.70 s running,
    /// 0.21 s runnable while a core idled: the scheduler cost at most 9%", the unknown part
    /// said beside the share when there is one (the share stands on the known time).
    pub fn sentence(&self) -> String {
        let wall_ns = self.total_ns();
        // One unit for every part, fine enough that a part the share counts does not read
        // as zero (its last place is at most 1% of the wall time): seconds to two places
        // from 10 s, to three from 1 s, milliseconds to one place from 10 ms, and under
        // 10 ms the unit that suits each part.
        let time = |ns: u64| match wall_ns {
            0..10_000_000 => duration(ns),
            10_000_000..1_000_000_000 => format!("{:.1} ms", ns as f64 / 1e6),
            1_000_000_000..10_000_000_000 => format!("{:.3} s", ns as f64 / 1e9),
            _ => format!("{:.2} s", ns as f64 / 1e9),
        };
        let share = 100.0 * self.scheduler_share();
        let head = format!(
            "of the {}, {} running, {} runnable while a core idled",
            time(wall_ns),
            time(self.running_ns),
            time(self.scheduler_ns)
        );
        match self.unknown_ns {
            0 => format!("{head}: the scheduler cost at most {share:.0}%"),
            unknown => format!(
                "{head}, {} unknown: the scheduler cost at most {share:.0}% of the {} known",
                time(unknown),
                time(self.known_ns())
            ),
        }
    }
}

/// A duration in the unit that suits it: "850 ns", "12.3 µs", "4.56 ms", "1.234 s".
pub fn duration(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.2} ms", ns as f64 / 1e6),
        _ => format!("{:.3} s", ns as f64 / 1e9),
    }
}

/// Why a stretch of the path is unknown.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UnknownReason {
    /// Before the trace's (or the task's) first event, or after its last.
    OutsideTrace,
    /// Events were lost, or a switch was not recorded, where the path was.
    LostEvents,
    /// A wakeup without `sched_waking`: who woke the task is not recorded.
    NoWaker,
    /// Wakers that woke each other at one instant: the path cannot go on.
    Cycle,
    /// The task was runnable while the state of a CPU that decides the cause is unknown.
    CpuState,
}

impl UnknownReason {
    pub const ALL: [UnknownReason; 5] = [
        UnknownReason::OutsideTrace,
        UnknownReason::LostEvents,
        UnknownReason::NoWaker,
        UnknownReason::Cycle,
        UnknownReason::CpuState,
    ];

    pub fn name(self) -> &'static str {
        match self {
            UnknownReason::OutsideTrace => "outside-trace",
            UnknownReason::LostEvents => "lost-events",
            UnknownReason::NoWaker => "no-waker",
            UnknownReason::Cycle => "cycle",
            UnknownReason::CpuState => "cpu-state",
        }
    }
}

/// The unknown stretches of one reason: how many, how long.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct UnknownCount {
    pub stretches: u64,
    pub ns: u64,
}

/// A stretch of scheduler cost on the path: one task runnable while an allowed CPU idled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostStretch {
    pub task: TaskId,
    pub start: Nanos,
    pub end: Nanos,
    /// Of the stretch, the time an allowed CPU idled.
    pub scheduler_ns: u64,
    /// The CPU whose runqueue it waited on (where it then ran), when known.
    pub waited_on: Option<Cpu>,
    /// The allowed CPU that idled longest in the stretch, and how long.
    pub idle_cpu: Option<(Cpu, Nanos)>,
}

/// One task's part of the path: `[start, end)`, and the task that woke it at `start`
/// (the previous hop's), if the path came from one, with that wakeup when recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    pub task: TaskId,
    pub start: Nanos,
    pub end: Nanos,
    pub woken_by: Option<TaskId>,
    pub wakeup: Option<WakeupId>,
}

/// The critical path of a target.
#[derive(Clone, Debug, PartialEq)]
pub struct CriticalPath {
    pub window: Window,
    pub breakdown: Breakdown,
    /// Per reason (in [`UnknownReason::ALL`]'s order).
    pub unknown: Vec<(UnknownReason, UnknownCount)>,
    /// The largest stretches of scheduler cost, largest first.
    pub top: Vec<CostStretch>,
    /// The hops in time order.
    pub hops: Vec<Hop>,
    /// Tasks on the path whose allowed CPUs came from the recording, and those possibly
    /// pinned by the evidence of where they ran (none are when the recording stores
    /// affinity).
    pub recorded_affinity: bool,
    pub possibly_pinned: Vec<(TaskId, Nanos, Vec<Cpu>)>,
}

/// Inferred pinning, as `check` tells it (`placement`'s numbers): confined to at most
/// `PINNED_CPUS` CPUs with `PINNED_RUNS` runs there, and since then `PINNED_WAITS` waits
/// while no CPU inside idled and CPUs outside idled for a `LONG_WAIT` or more. Waits
/// looked at for that evidence per task:
const PINNED_WAITS_LOOKED_AT: usize = 1000;

/// A task's run segment, as the walk needs it.
#[derive(Copy, Clone, Debug)]
struct Run {
    start: Nanos,
    end: Nanos,
    /// Ended by lost events or an unrecorded switch.
    broken_end: bool,
}

/// Per task: its runs and its waits, in time order (built once). A run is named by its
/// CPU and the index of its segment there (6 bytes, where a copy of the segment took 24:
/// on a trace of 20 million segments, a third of a gigabyte).
struct PerTask {
    run_offsets: Vec<u32>,
    run_cpus: Vec<u16>,
    run_segments: Vec<u32>,
    wait_offsets: Vec<u32>,
    waits: Vec<WaitId>,
    /// The wakeup that began each wait (by wait index).
    wakeup_of: Vec<Option<WakeupId>>,
}

impl PerTask {
    fn of(model: &Model) -> PerTask {
        let tasks = model.tasks().len();
        let mut counts = vec![0u32; tasks + 1];
        for timeline in model.cpus() {
            for task in timeline.segments().tasks() {
                counts[task.index() + 1] += 1;
            }
        }
        let run_offsets = prefix(&counts);
        let mut fill = run_offsets.clone();
        let total = run_offsets[tasks] as usize;
        let (mut run_cpus, mut run_segments) = (vec![0u16; total], vec![0u32; total]);
        for timeline in model.cpus() {
            // The model has at most `MAX_CPUS` (u16::MAX) CPUs, and fewer segments per CPU
            // than u32::MAX.
            let cpu = timeline.cpu().0 as u16;
            for (index, task) in timeline.segments().tasks().enumerate() {
                let slot = &mut fill[task.index()];
                run_cpus[*slot as usize] = cpu;
                run_segments[*slot as usize] = index as u32;
                *slot += 1;
            }
        }
        // Each CPU's runs are in time order; a task's runs on several CPUs are merged.
        let mut runs: Vec<(Nanos, Nanos, u16, u32)> = Vec::new();
        for task in 0..tasks {
            let range = run_offsets[task] as usize..run_offsets[task + 1] as usize;
            if run_cpus[range.clone()].windows(2).all(|pair| pair[0] == pair[1]) {
                continue;
            }
            runs.clear();
            for (&cpu, &index) in run_cpus[range.clone()].iter().zip(&run_segments[range.clone()]) {
                let segments = model.cpus()[usize::from(cpu)].segments();
                let index = index as usize;
                runs.push((segments.start(index), segments.end(index), cpu, index as u32));
            }
            runs.sort_unstable();
            for (slot, &(_, _, cpu, index)) in range.zip(&runs) {
                (run_cpus[slot], run_segments[slot]) = (cpu, index);
            }
        }
        let waits_table = model.waits();
        let mut counts = vec![0u32; tasks + 1];
        for wait in waits_table.ids() {
            counts[waits_table.task(wait).index() + 1] += 1;
        }
        let wait_offsets = prefix(&counts);
        let mut fill = wait_offsets.clone();
        let mut waits: Vec<Option<WaitId>> = vec![None; wait_offsets[tasks] as usize];
        for wait in waits_table.ids() {
            let slot = &mut fill[waits_table.task(wait).index()];
            waits[*slot as usize] = Some(wait);
            *slot += 1;
        }
        let wakeup_of = model.wakeups_by_wait();
        let waits = waits.into_iter().flatten().collect();
        PerTask { run_offsets, run_cpus, run_segments, wait_offsets, waits, wakeup_of }
    }

    /// How many runs `task` has, and the `k`th of them (in time order).
    fn runs<'m>(&self, model: &'m Model, task: TaskId) -> (usize, impl Fn(usize) -> Run + use<'_, 'm>) {
        let i = task.index();
        let first = self.run_offsets[i] as usize;
        let run = move |k: usize| {
            let segments = model.cpus()[usize::from(self.run_cpus[first + k])].segments();
            let segment = segments.get(self.run_segments[first + k] as usize);
            let broken_end = matches!(segment.end_kind, SegmentEnd::Lost | SegmentEnd::Unrecorded);
            Run { start: segment.start, end: segment.end, broken_end }
        };
        (self.run_offsets[i + 1] as usize - first, run)
    }

    fn waits(&self, task: TaskId) -> &[WaitId] {
        let i = task.index();
        &self.waits[self.wait_offsets[i] as usize..self.wait_offsets[i + 1] as usize]
    }
}

fn prefix(counts: &[u32]) -> Vec<u32> {
    counts
        .iter()
        .scan(0u32, |sum, &c| {
            *sum += c;
            Some(*sum)
        })
        .collect()
}

/// What a task did just before a time.
enum Before {
    Running(Run),
    Runnable(WaitId),
    /// Neither: since the end of its last run or wait (`None`: nothing before), whether
    /// that ended on lost events, and the wait a wakeup began at the gap's end, if any.
    Gap {
        since: Option<Nanos>,
        broken: bool,
        woken: Option<WaitId>,
    },
}

/// What ended a gap: what woke the task at its end.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum GapEnd {
    /// Not from a wakeup (the window's end, a run begun without a recorded switch).
    Unexplained,
    Interrupt,
    NoWaker,
    Cycle,
}

/// The CPUs a task may run on, as the walk uses them.
#[derive(Clone, Debug, PartialEq, Eq)]
enum AllowedCpus {
    Every,
    /// From `since` on, these CPUs (recorded: from the start of time).
    Only(Nanos, Vec<Cpu>),
}

/// The walk's state and findings.
struct Walk<'a> {
    model: &'a Model,
    index: &'a IdleIndex<'a>,
    per_task: PerTask,
    affinity: Option<&'a Affinity>,
    placement: Option<Placement>,
    allowed: HashMap<TaskId, AllowedCpus>,
    followed: HashMap<TaskId, bool>,
    followed_tasks: &'a Followed,
    window: Window,
    breakdown: Breakdown,
    unknown: [UnknownCount; 5],
    stretches: Vec<CostStretch>,
    /// Hops, latest first.
    hops: Vec<Hop>,
}

/// Walks the critical path of `target`, keeping the `top` largest stretches of
/// scheduler cost. The model needs waits and wakeups (`Detail::FULL`). `affinity`: the
/// recorded affinity, if the trace has it (else pinning is inferred).
pub fn critical_path(
    model: &Model,
    index: &IdleIndex<'_>,
    target: &Target,
    affinity: Option<&Affinity>,
    top: usize,
) -> CriticalPath {
    let mut walk = Walk {
        model,
        index,
        per_task: PerTask::of(model),
        affinity,
        placement: affinity.is_none().then(|| Placement::of(model)),
        allowed: HashMap::new(),
        followed: HashMap::new(),
        followed_tasks: &target.followed,
        window: target.window,
        breakdown: Breakdown::default(),
        unknown: [UnknownCount::default(); 5],
        stretches: Vec::new(),
        hops: Vec::new(),
    };
    walk.run(target.end_task);
    walk.finish(top)
}

impl Walk<'_> {
    /// Walks back from `end_task` at the window's end to the window's start. Every step
    /// but a hop to a waker at the same instant ends earlier than it began, and a hop
    /// back to a task already met at that instant is a cycle (unknown): the walk ends.
    fn run(&mut self, end_task: TaskId) {
        let start = self.window.start;
        let (mut task, mut t) = (end_task, self.window.end);
        let mut hop_end = t;
        // The tasks the path has been on at instant `t`.
        let mut at_instant: Vec<TaskId> = vec![task];
        while t > start {
            let next = match self.before(task, t) {
                Before::Running(run) => {
                    let from = run.start.max(start);
                    self.add_running(task, from, t);
                    from
                }
                Before::Runnable(wait_id) => {
                    let wait = self.model.waits().get(wait_id);
                    let from = wait.start.max(start);
                    self.add_runnable(task, from, t, (wait.end_kind == WaitEnd::Ran).then_some(wait.ran_on));
                    from
                }
                Before::Gap { since, broken, woken } => {
                    let gap_end = match woken.map(|wait| self.after_wait(task, wait)) {
                        Some(Continue::Waker(waker, waking, target)) => {
                            let waking = waking.min(t).max(start);
                            if waking == t && at_instant.contains(&waker) {
                                GapEnd::Cycle
                            } else {
                                self.add_runnable(task, waking, t, target);
                                let wakeup = woken.and_then(|wait| self.per_task.wakeup_of[wait.index()]);
                                let hop = Hop { task, start: waking, end: hop_end, woken_by: Some(waker), wakeup };
                                self.hops.push(hop);
                                (task, hop_end) = (waker, waking);
                                if waking < t {
                                    at_instant.clear();
                                }
                                at_instant.push(waker);
                                t = waking;
                                continue;
                            }
                        }
                        Some(Continue::Same(end)) => end,
                        None => GapEnd::Unexplained,
                    };
                    self.add_gap(task, t, since, broken, gap_end);
                    since.unwrap_or(start).max(start)
                }
            };
            if next < t {
                at_instant.clear();
                at_instant.push(task);
            }
            t = next;
        }
        self.hops.push(Hop { task, start, end: hop_end, woken_by: None, wakeup: None });
    }

    /// The task's state just before `t`.
    fn before(&self, task: TaskId, t: Nanos) -> Before {
        let (runs, run_at) = self.per_task.runs(self.model, task);
        // The walk goes back from the end: the answer is most often among the last runs.
        let before_t = model::partition_point_near(runs, runs, |k| run_at(k).start < t);
        let run = before_t.checked_sub(1).map(&run_at);
        if let Some(run) = run.filter(|r| r.end >= t) {
            return Before::Running(run);
        }
        let (waits, table) = (self.per_task.waits(task), self.model.waits());
        let last_at_or_before = waits.partition_point(|&w| table.start(w) <= t);
        let woken = last_at_or_before
            .checked_sub(1)
            .map(|i| waits[i])
            .filter(|&w| table.start(w) == t && table.get(w).cause != WaitCause::Preempted);
        let earlier = waits[..last_at_or_before].iter().rev().find(|&&w| table.start(w) < t);
        let wait = earlier.map(|&id| (id, table.get(id)));
        if let Some((id, _)) = wait.filter(|(_, w)| w.end >= t) {
            return Before::Runnable(id);
        }
        let run_end = run.map(|r| (r.end, r.broken_end));
        let wait_end = wait.map(|(_, w)| (w.end, matches!(w.end_kind, WaitEnd::Lost | WaitEnd::Unrecorded)));
        let last = run_end.into_iter().chain(wait_end).max_by_key(|&(end, _)| end);
        Before::Gap { since: last.map(|(end, _)| end), broken: last.is_some_and(|(_, broken)| broken), woken }
    }

    /// The gap `[since, t)` in which `task` neither ran nor waited: blocked when an
    /// interrupt woke it, else unknown for the reason its ends give.
    fn add_gap(&mut self, task: TaskId, t: Nanos, since: Option<Nanos>, broken: bool, gap_end: GapEnd) {
        let from = since.unwrap_or(self.window.start).max(self.window.start);
        let reason = match (since, broken, gap_end) {
            (None, ..) => Some(UnknownReason::OutsideTrace),
            (_, true, _) => Some(UnknownReason::LostEvents),
            (_, _, GapEnd::Interrupt) => None,
            (_, _, GapEnd::NoWaker) => Some(UnknownReason::NoWaker),
            (_, _, GapEnd::Cycle) => Some(UnknownReason::Cycle),
            (_, _, GapEnd::Unexplained) if t > self.model.end() => Some(UnknownReason::OutsideTrace),
            (_, _, GapEnd::Unexplained) => Some(UnknownReason::LostEvents),
        };
        match reason {
            None if self.is_followed(task) => self.breakdown.blocked_ns += t.0 - from.0,
            None => self.breakdown.other_task_ns += t.0 - from.0,
            Some(reason) => self.add_unknown(reason, from, t),
        }
    }

    /// Where the path goes before a wait of `task` began.
    fn after_wait(&self, task: TaskId, wait: WaitId) -> Continue {
        let cause = self.model.waits().get(wait).cause;
        if cause == WaitCause::Preempted {
            return Continue::Same(GapEnd::Unexplained);
        }
        let wakeup = self.per_task.wakeup_of[wait.index()].map(|id| self.model.wakeups().get(id));
        let parent = self.model.tasks().get(task).parent;
        match wakeup {
            Some(w) if w.waker == Some(TaskId::IDLE) => Continue::Same(GapEnd::Interrupt),
            Some(w) => match (w.waker, w.waking) {
                (Some(waker), Some(waking)) => Continue::Waker(waker, waking, Some(w.target_cpu)),
                _ => match parent.filter(|_| cause == WaitCause::NewTask) {
                    Some(parent) => Continue::Waker(parent, self.model.waits().start(wait), None),
                    None => Continue::Same(GapEnd::NoWaker),
                },
            },
            None => match parent.filter(|_| cause == WaitCause::NewTask) {
                Some(parent) => Continue::Waker(parent, self.model.waits().start(wait), None),
                None => Continue::Same(GapEnd::NoWaker),
            },
        }
    }

    fn is_followed(&mut self, task: TaskId) -> bool {
        let (model, followed) = (self.model, self.followed_tasks);
        *self.followed.entry(task).or_insert_with(|| match followed {
            Followed::Tasks(filter) => filter.accepts(model, task),
            Followed::Task(only) => task == *only,
        })
    }

    fn add_running(&mut self, task: TaskId, from: Nanos, to: Nanos) {
        let ns = to.0 - from.0;
        if self.is_followed(task) {
            self.breakdown.running_ns += ns;
        } else {
            self.breakdown.other_task_ns += ns;
        }
    }

    fn add_unknown(&mut self, reason: UnknownReason, from: Nanos, to: Nanos) {
        if to > from {
            let count = &mut self.unknown[reason as usize];
            count.stretches += 1;
            count.ns += to.0 - from.0;
            self.breakdown.unknown_ns += to.0 - from.0;
        }
    }

    /// `[from, to)` runnable: split by what the CPUs did.
    fn add_runnable(&mut self, task: TaskId, from: Nanos, to: Nanos, waited_on: Option<Cpu>) {
        if to <= from {
            return;
        }
        if !self.is_followed(task) {
            self.breakdown.other_task_ns += to.0 - from.0;
            return;
        }
        let shares = match self.allowed_cpus(task) {
            AllowedCpus::Every => self.index.shares(from, to, Allowed::Every),
            AllowedCpus::Only(since, cpus) if since <= from => self.index.shares(from, to, Allowed::Only(&cpus)),
            AllowedCpus::Only(since, _) if since >= to => self.index.shares(from, to, Allowed::Every),
            AllowedCpus::Only(since, cpus) => {
                let before = self.index.shares(from, since, Allowed::Every);
                let after = self.index.shares(since, to, Allowed::Only(&cpus));
                before + after
            }
        };
        self.breakdown.scheduler_ns += shares.allowed_idle_ns;
        self.breakdown.pinning_ns += shares.other_idle_ns;
        self.breakdown.contention_ns += shares.busy_ns;
        if shares.unknown_ns > 0 {
            let count = &mut self.unknown[UnknownReason::CpuState as usize];
            count.stretches += 1;
            count.ns += shares.unknown_ns;
            self.breakdown.unknown_ns += shares.unknown_ns;
        }
        if shares.allowed_idle_ns > 0 {
            let stretch = CostStretch {
                task,
                start: from,
                end: to,
                scheduler_ns: shares.allowed_idle_ns,
                waited_on,
                idle_cpu: None,
            };
            self.stretches.push(stretch);
        }
    }

    /// The CPUs `task` may run on: recorded, else inferred (once per task).
    fn allowed_cpus(&mut self, task: TaskId) -> AllowedCpus {
        if let Some(known) = self.allowed.get(&task) {
            return known.clone();
        }
        let allowed = match self.affinity {
            Some(affinity) => match affinity.allowed(self.model.tasks().get(task).pid) {
                Some(cpus) => AllowedCpus::Only(Nanos::ZERO, cpus.to_vec()),
                None => AllowedCpus::Every,
            },
            None => self.inferred(task),
        };
        self.allowed.insert(task, allowed.clone());
        allowed
    }

    /// Possibly pinned, by `check`'s evidence: confined to a few CPUs (fewer than the
    /// machine has) since some moment, with runs enough, and long waits since then while
    /// only CPUs outside idled.
    fn inferred(&self, task: TaskId) -> AllowedCpus {
        let Some(placement) = &self.placement else { return AllowedCpus::Every };
        let machine = self.model.cpus().len();
        let table = self.model.waits();
        let waits = self.per_task.waits(task);
        for confinement in placement.confinements(task) {
            if confinement.cpus.len() > PINNED_CPUS || confinement.cpus.len() >= machine {
                break;
            }
            if confinement.runs < PINNED_RUNS {
                continue;
            }
            let first = waits.partition_point(|&w| table.start(w) < confinement.since);
            let kept_off = waits[first..]
                .iter()
                .take(PINNED_WAITS_LOOKED_AT)
                .map(|&w| table.get(w))
                .filter(|w| {
                    let shares = self.index.shares(w.start, w.end, Allowed::Only(&confinement.cpus));
                    shares.allowed_idle_ns == 0 && shares.other_idle_ns >= LONG_WAIT.0
                })
                .take(PINNED_WAITS as usize)
                .count();
            if kept_off >= PINNED_WAITS as usize {
                return AllowedCpus::Only(confinement.since, confinement.cpus);
            }
        }
        AllowedCpus::Every
    }

    fn finish(mut self, top: usize) -> CriticalPath {
        self.stretches.sort_by(|a, b| b.scheduler_ns.cmp(&a.scheduler_ns).then(a.start.cmp(&b.start)));
        self.stretches.truncate(top);
        let mut stretches = std::mem::take(&mut self.stretches);
        for stretch in &mut stretches {
            let allowed = self.allowed_cpus(stretch.task);
            stretch.idle_cpu = match &allowed {
                AllowedCpus::Only(since, cpus) if *since <= stretch.start => {
                    self.index.longest_idle(stretch.start, stretch.end, Allowed::Only(cpus))
                }
                _ => self.index.longest_idle(stretch.start, stretch.end, Allowed::Every),
            };
        }
        let mut possibly_pinned: Vec<(TaskId, Nanos, Vec<Cpu>)> = match self.affinity {
            Some(_) => Vec::new(),
            None => self
                .allowed
                .iter()
                .filter_map(|(&task, allowed)| match allowed {
                    AllowedCpus::Only(since, cpus) => Some((task, *since, cpus.clone())),
                    AllowedCpus::Every => None,
                })
                .collect(),
        };
        possibly_pinned.sort();
        self.hops.reverse();
        self.hops.retain(|hop| hop.end > hop.start);
        CriticalPath {
            window: self.window,
            breakdown: self.breakdown,
            unknown: UnknownReason::ALL.iter().map(|&r| (r, self.unknown[r as usize])).collect(),
            top: stretches,
            hops: self.hops,
            recorded_affinity: self.affinity.is_some(),
            possibly_pinned,
        }
    }
}

/// Where the path goes on from the start of a wait.
enum Continue {
    /// The same task, before the wait; the gap before it ended so.
    Same(GapEnd),
    /// The waker, at the wakeup's start; the CPU the wakee was put on, if known.
    Waker(TaskId, Nanos, Option<Cpu>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::scenario::{R, S, Scenario, assert_drawing};
    use model::{Pid, Segment};

    fn task(model: &Model, pid: i32) -> TaskId {
        model.tasks().by_pid(Pid(pid)).expect("task exists")
    }

    /// The path of `pid` over `[start, end)`, every task the program's.
    fn path(model: &Model, pid: i32, start: u64, end: u64, affinity: Option<&Affinity>) -> CriticalPath {
        let index = IdleIndex::new(model);
        let target = Target {
            end_task: task(model, pid),
            window: Window::new(Nanos(start), Nanos(end)),
            followed: Followed::Tasks(TaskFilter::default()),
        };
        let path = critical_path(model, &index, &target, affinity, 5);
        assert_eq!(path.breakdown.total_ns(), end - start, "the parts sum to the wall time: {path:?}");
        path
    }

    fn hops(model: &Model, path: &CriticalPath) -> Vec<(String, u64, u64)> {
        path.hops.iter().map(|h| (model.comm_at(h.task, h.start).to_string(), h.start.0, h.end.0)).collect()
    }

    /// A wakes B onto idle CPU 1, which takes 10 ns to run it; B wakes A back onto idle
    /// CPU 0, 10 ns again.
    fn ping_pong() -> Model {
        let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "gamma")])
            .other(0, 0, 1)
            .other(0, 1, 3)
            .switch(20, 1, 3, S, 0)
            .wake(30, 0, 1, 2, 1)
            .switch(30, 0, 1, S, 0)
            .switch(40, 1, 0, R, 2)
            .wake(70, 1, 2, 1, 0)
            .switch(70, 1, 2, S, 0)
            .switch(80, 0, 0, R, 1)
            .other(100, 0, 1)
            .other(100, 1, 0)
            .finish();
        assert_drawing(
            &model,
            "0: AAA.....AA
             0q .......a..
             1: GG..BBB...
             1q ...b......",
        );
        model
    }

    #[test]
    fn the_path_follows_each_waker_and_charges_idle_cpus_to_the_scheduler() {
        let model = ping_pong();
        let path = path(&model, 1, 0, 100, None);
        let expected = Breakdown { running_ns: 80, scheduler_ns: 20, ..Breakdown::default() };
        assert_eq!(path.breakdown, expected);
        let walked = vec![("alpha".into(), 0, 30), ("beta".into(), 30, 70), ("alpha".into(), 70, 100)];
        assert_eq!(hops(&model, &path), walked);
        assert_eq!(path.hops[1].woken_by, Some(task(&model, 1)));
        let top: Vec<_> =
            path.top.iter().map(|s| (s.start.0, s.end.0, s.scheduler_ns, s.waited_on, s.idle_cpu)).collect();
        let idle = |cpu: u32| Some((Cpu(cpu), Nanos(10)));
        assert_eq!(top, vec![(30, 40, 10, Some(Cpu(1)), idle(0)), (70, 80, 10, Some(Cpu(0)), idle(0))]);
    }

    #[test]
    fn one_task_alone_leaves_the_others_time_to_them() {
        let model = ping_pong();
        let index = IdleIndex::new(&model);
        let mut target = Target::task(&model, task(&model, 1));
        target.window = Window::new(Nanos(0), Nanos(100));
        let path = critical_path(&model, &index, &target, None, 5);
        let expected = Breakdown { running_ns: 50, scheduler_ns: 10, other_task_ns: 40, ..Breakdown::default() };
        assert_eq!(path.breakdown, expected);
    }

    /// A waits on CPU 0 behind G from 20 to 60 while CPU 1 idles from 40 on.
    fn waits_behind_gamma() -> Model {
        let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "gamma")])
            .other(0, 0, 1)
            .other(0, 1, 2)
            .switch(20, 0, 1, R, 3)
            .switch(40, 1, 2, S, 0)
            .switch(60, 0, 3, S, 1)
            .other(100, 0, 1)
            .other(100, 1, 0)
            .finish();
        assert_drawing(
            &model,
            "0: AAGGGGAAAA
             0q ..aaaa....
             1: BBBB......
             1q ..........",
        );
        model
    }

    #[test]
    fn waiting_while_only_forbidden_cpus_idle_is_pinning() {
        let model = waits_behind_gamma();
        let free = path(&model, 1, 0, 100, None);
        let expected = Breakdown { running_ns: 60, scheduler_ns: 20, contention_ns: 20, ..Breakdown::default() };
        assert_eq!(free.breakdown, expected);
        let pinned = Affinity::new([(Pid(1), vec![Cpu(0)])]);
        let path = path(&model, 1, 0, 100, Some(&pinned));
        let expected = Breakdown { running_ns: 60, pinning_ns: 20, contention_ns: 20, ..Breakdown::default() };
        assert_eq!(path.breakdown, expected);
        assert!(path.recorded_affinity && path.possibly_pinned.is_empty());
    }

    #[test]
    fn a_wakeup_from_an_interrupt_is_blocked_time() {
        // A sleeps at 30; an interrupt on idle CPU 1 wakes it at 60 onto CPU 0.
        let model = Scenario::new(2, &[(1, "alpha")])
            .other(0, 0, 1)
            .other(0, 1, 0)
            .switch(30, 0, 1, S, 0)
            .wake(60, 1, 0, 1, 0)
            .switch(60, 0, 0, R, 1)
            .other(100, 0, 1)
            .other(100, 1, 0)
            .finish();
        let path = path(&model, 1, 0, 100, None);
        assert_eq!(path.breakdown, Breakdown { running_ns: 70, blocked_ns: 30, ..Breakdown::default() });
    }

    #[test]
    fn thin_input_is_unknown_and_counted() {
        // A's wakeup at 60 has no sched_waking: its sleep from 30 is unknown.
        let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
            .other(0, 0, 1)
            .other(0, 1, 2)
            .switch(30, 0, 1, S, 0)
            .wake_unannounced(60, 1, 2, 1, 0)
            .switch(60, 0, 0, R, 1)
            .other(100, 0, 1)
            .other(100, 1, 2)
            .finish();
        // From before the trace to after it: 50 ns outside on each side.
        let path = path(&model, 1, 0, 150, None);
        let unknown = |reason: UnknownReason| path.unknown.iter().find(|(r, _)| *r == reason).map(|(_, c)| *c).unwrap();
        assert_eq!(path.breakdown.running_ns, 70);
        assert_eq!(unknown(UnknownReason::NoWaker), UnknownCount { stretches: 1, ns: 30 });
        assert_eq!(unknown(UnknownReason::OutsideTrace), UnknownCount { stretches: 1, ns: 50 });
        assert_eq!(path.breakdown.unknown_ns, 80);
    }

    #[test]
    fn lost_events_in_a_wait_are_unknown() {
        // A waits on CPU 0 behind G from 20; CPU 1 loses events from 40 until 70.
        let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "gamma")])
            .other(0, 0, 1)
            .other(0, 1, 2)
            .switch(20, 0, 1, R, 3)
            .other(40, 1, 2)
            .lost(1, 3)
            .other(70, 1, 2)
            .switch(80, 0, 3, S, 1)
            .other(100, 0, 1)
            .other(100, 1, 2)
            .finish();
        let segments: Vec<Segment> = model.cpus()[1].segments().iter().collect();
        assert!(segments.iter().any(|s| s.end_kind == SegmentEnd::Lost), "{segments:?}");
        let path = path(&model, 1, 0, 100, None);
        assert_eq!(path.breakdown.contention_ns + path.breakdown.unknown_ns, 60, "{:?}", path.breakdown);
        assert!(path.breakdown.unknown_ns >= 30, "{:?}", path.breakdown);
        assert_eq!(path.breakdown.scheduler_ns, 0);
    }
}
