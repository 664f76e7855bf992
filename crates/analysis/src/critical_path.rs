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
use crate::check::placement::{Confinement, LONG_WAIT, PINNED_CPUS, PINNED_RUNS, PINNED_WAITS, Placement};
use crate::idle::{Allowed, IdleIndex};
use crate::records::{RecordStore, RecordedWaits, Woken};
use crate::window::{TaskFilter, Window};
use model::{Cpu, Model, Nanos, SegmentEnd, TaskId, Wait, WaitCause, WaitEnd, WaitId, WakeupId};
use std::collections::{BinaryHeap, HashMap, VecDeque};

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
/// (the previous hop's), if the path came from one; with that wakeup, when recorded,
/// the CPU the waker ran on, and when and where the woken task then ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    pub task: TaskId,
    pub start: Nanos,
    pub end: Nanos,
    pub woken_by: Option<TaskId>,
    pub waker_cpu: Option<Cpu>,
    pub ran: Option<(Nanos, Cpu)>,
}

/// A hop's wakeup as [`Hop`] tells it: the waker's CPU, and when and where the woken task ran.
fn hop_wakeup((wait, woken): WokenWait) -> (Option<Cpu>, Option<(Nanos, Cpu)>) {
    match woken {
        Some(woken) => (woken.waker_cpu, (wait.end_kind == WaitEnd::Ran).then_some((wait.end, wait.ran_on))),
        None => (None, None),
    }
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

/// The waits the walk reads, each with what the wakeup that began it says: the model's
/// tables ([`TableWaits`]) or records of a model built streaming ([`RecordedWaits`]).
pub trait WaitHistory {
    /// Calls `visit` on every wait, each task's in the order they began.
    fn each(&mut self, visit: &mut dyn FnMut(&Wait));
    /// The waits in the reverse of that order, each with a key no less than its end, the
    /// keys never rising.
    fn back(&mut self) -> WaitsBack<'_>;
}

/// Waits going back, each with its key (see [`WaitHistory::back`]).
pub type WaitsBack<'a> = Box<dyn Iterator<Item = (Nanos, Wait, Option<Woken>)> + 'a>;

impl<S: RecordStore> WaitHistory for RecordedWaits<S> {
    fn each(&mut self, visit: &mut dyn FnMut(&Wait)) {
        RecordedWaits::each(self, visit)
    }

    fn back(&mut self) -> WaitsBack<'_> {
        Box::new(RecordedWaits::back(self))
    }
}

/// A model's waits, from its tables (`Detail::WAKEUPS`), in order of their ends.
pub struct TableWaits<'m> {
    model: &'m Model,
    by_end: Vec<WaitId>,
    wakeup_of: Vec<Option<WakeupId>>,
}

impl<'m> TableWaits<'m> {
    pub fn new(model: &'m Model) -> TableWaits<'m> {
        let table = model.waits();
        let mut ends: Vec<(Nanos, WaitId)> = table.ids().map(|id| (table.get(id).end, id)).collect();
        // Alike ends in the order the waits began: a task's waits do not overlap, so each
        // task's stay in that order.
        ends.sort_unstable();
        let by_end = ends.into_iter().map(|(_, id)| id).collect();
        TableWaits { model, by_end, wakeup_of: model.wakeups_by_wait() }
    }

    fn get(&self, id: WaitId) -> (Wait, Option<Woken>) {
        let woken = self.wakeup_of[id.index()].map(|w| Woken::from(&self.model.wakeups().get(w)));
        (self.model.waits().get(id), woken)
    }
}

impl WaitHistory for TableWaits<'_> {
    fn each(&mut self, visit: &mut dyn FnMut(&Wait)) {
        for &id in &self.by_end {
            visit(&self.model.waits().get(id));
        }
    }

    fn back(&mut self) -> WaitsBack<'_> {
        Box::new(self.by_end.iter().rev().map(|&id| {
            let (wait, woken) = self.get(id);
            (wait.end, wait, woken)
        }))
    }
}

/// A task's run segment, as the walk needs it.
#[derive(Copy, Clone, Debug)]
struct Run {
    start: Nanos,
    end: Nanos,
    /// Ended by lost events or an unrecorded switch.
    broken_end: bool,
}

/// A wait and the wakeup that began it.
type WokenWait = (Wait, Option<Woken>);

/// The trace read back from its end as far as the walk has gone: the runs (every CPU's
/// segments, latest end first) and the waits (by key) merged, and per task the runs and
/// waits read that the walk may still ask about. The walk's time never rises, and it asks
/// about a task just before a time `t` once everything ending at `t` or later is read;
/// a run or wait that begins after the key it was read at is never asked about again, so
/// each task keeps only the few around the walk's time, and the walk holds neither the
/// waits nor an index of every task's runs.
struct History<'a> {
    model: &'a Model,
    /// Per CPU, how many of its segments are not read yet (the first so many).
    unread: Vec<usize>,
    /// The CPUs with segments not read, by the end of their latest such segment.
    by_next_end: BinaryHeap<(Nanos, usize)>,
    waits: std::iter::Peekable<WaitsBack<'a>>,
    recent: Vec<Recent>,
}

/// A task's runs and waits read and still of use, in order of their starts.
#[derive(Default)]
struct Recent {
    runs: VecDeque<Run>,
    waits: VecDeque<WokenWait>,
}

impl<'a> History<'a> {
    fn new(model: &'a Model, waits: &'a mut dyn WaitHistory) -> History<'a> {
        let unread: Vec<usize> = model.cpus().iter().map(|timeline| timeline.segments().len()).collect();
        let by_next_end = (model.cpus().iter().enumerate())
            .filter(|(cpu, _)| unread[*cpu] > 0)
            .map(|(cpu, timeline)| (timeline.segments().end(unread[cpu] - 1), cpu))
            .collect();
        let recent = std::iter::repeat_with(Recent::default).take(model.tasks().len()).collect();
        History { model, unread, by_next_end, waits: waits.back().peekable(), recent }
    }

    /// The key of the next run or wait to read: no less than its end and than every end
    /// still unread.
    fn next_key(&mut self) -> Option<Nanos> {
        let run = self.by_next_end.peek().map(|&(end, _)| end);
        let wait = self.waits.peek().map(|&(key, ..)| key);
        run.max(wait)
    }

    /// Reads everything that ends at `t` or later.
    fn read_to(&mut self, t: Nanos) {
        while self.next_key().is_some_and(|key| key >= t) {
            self.read_one();
        }
    }

    /// Reads the next run or wait; returns its task.
    fn read_one(&mut self) -> Option<TaskId> {
        let run = self.by_next_end.peek().map(|&(end, _)| end);
        let wait = self.waits.peek().map(|&(key, ..)| key);
        if run >= wait {
            let (key, cpu) = self.by_next_end.pop()?;
            self.unread[cpu] -= 1;
            let segments = self.model.cpus()[cpu].segments();
            let segment = segments.get(self.unread[cpu]);
            if self.unread[cpu] > 0 {
                self.by_next_end.push((segments.end(self.unread[cpu] - 1), cpu));
            }
            let broken_end = matches!(segment.end_kind, SegmentEnd::Lost | SegmentEnd::Unrecorded);
            let run = Run { start: segment.start, end: segment.end, broken_end };
            keep(&mut self.recent[segment.task.index()].runs, run, |r| r.start, key);
            Some(segment.task)
        } else {
            let (key, wait, woken) = self.waits.next()?;
            // Waits name the model's tasks.
            keep(&mut self.recent[wait.task.index()].waits, (wait, woken), |(w, _)| w.start, key);
            Some(wait.task)
        }
    }

    /// What `task` did just before `t`.
    fn before(&mut self, task: TaskId, t: Nanos) -> Before {
        self.read_to(t);
        let recent = &self.recent[task.index()];
        let run = recent.runs.iter().rev().find(|r| r.start < t);
        if let Some(&run) = run.filter(|r| r.end >= t) {
            return Before::Running(run);
        }
        let mut waits = recent.waits.iter().rev().skip_while(|(w, _)| w.start > t).peekable();
        let woken = waits
            .peek()
            .filter(|(w, _)| w.start == t && w.cause != WaitCause::Preempted)
            .map(|&&woken_wait| woken_wait);
        let earlier = waits.find(|(w, _)| w.start < t);
        match earlier {
            Some(&(wait, _)) if wait.end >= t => Before::Runnable(wait),
            _ => Before::Gap { woken },
        }
    }

    /// The end of the last run or wait of `task` begun before `t` (none contains `t`),
    /// and whether it ended on lost events or an unrecorded switch: read back as far as
    /// it takes to know.
    fn since(&mut self, task: TaskId, t: Nanos) -> Option<(Nanos, bool)> {
        let mut last = self.last_before(task, t);
        while let Some(key) = self.next_key() {
            if last.is_some_and(|(end, _)| key < end) {
                break;
            }
            if self.read_one() == Some(task) {
                last = self.last_before(task, t);
            }
        }
        last
    }

    fn last_before(&self, task: TaskId, t: Nanos) -> Option<(Nanos, bool)> {
        let recent = &self.recent[task.index()];
        let run = recent.runs.iter().rev().find(|r| r.start < t).map(|r| (r.end, r.broken_end));
        let wait = recent.waits.iter().rev().find(|(w, _)| w.start < t);
        let wait = wait.map(|(w, _)| (w.end, matches!(w.end_kind, WaitEnd::Lost | WaitEnd::Unrecorded)));
        // At one end, the wait's word counts.
        run.into_iter().chain(wait).max_by_key(|&(end, _)| end)
    }
}

/// Keeps `item`, read at `key`, among a task's `list` in order of start, and drops the
/// items that begin after `key` (the walk will not ask about them: see [`History`]).
fn keep<T>(list: &mut VecDeque<T>, item: T, start: impl Fn(&T) -> Nanos, key: Nanos) {
    while list.back().is_some_and(|last| start(last) > key) {
        list.pop_back();
    }
    // Read back, items come latest first: an item goes before those that begin with it.
    let at = list.partition_point(|kept| start(kept) < start(&item));
    list.insert(at, item);
}

/// What a task did just before a time.
enum Before {
    Running(Run),
    Runnable(Wait),
    /// Neither; the wait a wakeup began at the gap's end, if any.
    Gap {
        woken: Option<WokenWait>,
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
    history: History<'a>,
    affinity: Option<&'a Affinity>,
    /// The tasks possibly pinned, inferred when the affinity is not recorded.
    inferred: HashMap<TaskId, AllowedCpus>,
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
/// scheduler cost. The model needs waits and wakeups (`Detail::WAKEUPS`). `affinity`: the
/// recorded affinity, if the trace has it (else pinning is inferred).
pub fn critical_path(
    model: &Model,
    index: &IdleIndex<'_>,
    target: &Target,
    affinity: Option<&Affinity>,
    top: usize,
) -> CriticalPath {
    critical_path_of_waits(model, index, &mut TableWaits::new(model), target, affinity, top)
}

/// [`critical_path`] over `waits`: the model's own tables, or the records of a model
/// built streaming, read once in order (when pinning is inferred) and then back.
pub fn critical_path_of_waits(
    model: &Model,
    index: &IdleIndex<'_>,
    waits: &mut dyn WaitHistory,
    target: &Target,
    affinity: Option<&Affinity>,
    top: usize,
) -> CriticalPath {
    let inferred = match affinity {
        Some(_) => HashMap::new(),
        None => infer_pinning(model, index, waits),
    };
    let mut walk = Walk {
        model,
        index,
        history: History::new(model, waits),
        affinity,
        inferred,
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

/// A confinement that may be pinning, as `check` tells it, and the evidence so far: the
/// waits looked at since it began, and those kept off while only CPUs outside idled.
struct Candidate {
    confinement: Confinement,
    looked_at: usize,
    kept_off: u32,
}

/// The tasks possibly pinned, by `check`'s evidence: confined to a few CPUs (fewer than
/// the machine has) since some moment, with runs enough, and long waits since then while
/// only CPUs outside idled. A task's confinements are tried from the fewest CPUs; the
/// first with the evidence is its pinning. One pass over the waits, in order, for every
/// task that may be pinned.
fn infer_pinning(model: &Model, index: &IdleIndex<'_>, waits: &mut dyn WaitHistory) -> HashMap<TaskId, AllowedCpus> {
    let placement = Placement::of(model);
    let machine = model.cpus().len();
    let mut candidates: Vec<Vec<Candidate>> = Vec::new();
    for task in model.tasks().ids() {
        let mut of_task = Vec::new();
        for confinement in placement.confinements(task) {
            if confinement.cpus.len() > PINNED_CPUS || confinement.cpus.len() >= machine {
                break;
            }
            if confinement.runs >= PINNED_RUNS {
                of_task.push(Candidate { confinement, looked_at: 0, kept_off: 0 });
            }
        }
        candidates.push(of_task);
    }
    if candidates.iter().all(Vec::is_empty) {
        return HashMap::new();
    }
    waits.each(&mut |wait| {
        // Waits name the model's tasks.
        for candidate in &mut candidates[wait.task.index()] {
            let deciding = candidate.looked_at < PINNED_WAITS_LOOKED_AT && candidate.kept_off < PINNED_WAITS;
            if wait.start >= candidate.confinement.since && deciding {
                candidate.looked_at += 1;
                let shares = index.shares(wait.start, wait.end, Allowed::Only(&candidate.confinement.cpus));
                if shares.allowed_idle_ns == 0 && shares.other_idle_ns >= LONG_WAIT.0 {
                    candidate.kept_off += 1;
                }
            }
        }
    });
    let tasks = model.tasks().ids().zip(candidates);
    tasks
        .filter_map(|(task, of_task)| {
            let pinned = of_task.into_iter().find(|c| c.kept_off >= PINNED_WAITS)?;
            Some((task, AllowedCpus::Only(pinned.confinement.since, pinned.confinement.cpus)))
        })
        .collect()
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
            let next = match self.history.before(task, t) {
                Before::Running(run) => {
                    let from = run.start.max(start);
                    self.add_running(task, from, t);
                    from
                }
                Before::Runnable(wait) => {
                    let from = wait.start.max(start);
                    self.add_runnable(task, from, t, (wait.end_kind == WaitEnd::Ran).then_some(wait.ran_on));
                    from
                }
                Before::Gap { woken } => {
                    let gap_end = match woken.map(|woken| self.after_wait(task, woken)) {
                        Some(Continue::Waker(waker, waking, target)) => {
                            let waking = waking.min(t).max(start);
                            if waking == t && at_instant.contains(&waker) {
                                GapEnd::Cycle
                            } else {
                                self.add_runnable(task, waking, t, target);
                                let (waker_cpu, ran) = woken.map_or((None, None), hop_wakeup);
                                let hop =
                                    Hop { task, start: waking, end: hop_end, woken_by: Some(waker), waker_cpu, ran };
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
                    let since = self.history.since(task, t);
                    self.add_gap(task, t, since, gap_end);
                    since.map_or(start, |(end, _)| end).max(start)
                }
            };
            if next < t {
                at_instant.clear();
                at_instant.push(task);
            }
            t = next;
        }
        self.hops.push(Hop { task, start, end: hop_end, woken_by: None, waker_cpu: None, ran: None });
    }

    /// The gap `[since, t)` in which `task` neither ran nor waited (`since`: the end of
    /// what it did before, and whether that ended on lost events; `None`: nothing before):
    /// blocked when an interrupt woke it, else unknown for the reason its ends give.
    fn add_gap(&mut self, task: TaskId, t: Nanos, since: Option<(Nanos, bool)>, gap_end: GapEnd) {
        let from = since.map_or(self.window.start, |(end, _)| end).max(self.window.start);
        let broken = since.is_some_and(|(_, broken)| broken);
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
    fn after_wait(&self, task: TaskId, (wait, woken): WokenWait) -> Continue {
        if wait.cause == WaitCause::Preempted {
            return Continue::Same(GapEnd::Unexplained);
        }
        let parent = self.model.tasks().get(task).parent;
        let to_parent = || match parent.filter(|_| wait.cause == WaitCause::NewTask) {
            Some(parent) => Continue::Waker(parent, wait.start, None),
            None => Continue::Same(GapEnd::NoWaker),
        };
        match woken {
            Some(w) if w.waker == Some(TaskId::IDLE) => Continue::Same(GapEnd::Interrupt),
            Some(w) => match (w.waker, w.waking) {
                (Some(waker), Some(waking)) => Continue::Waker(waker, waking, Some(w.target_cpu)),
                _ => to_parent(),
            },
            None => to_parent(),
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
            None => self.inferred.get(&task).cloned().unwrap_or(AllowedCpus::Every),
        };
        self.allowed.insert(task, allowed.clone());
        allowed
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
    use crate::records::Collector;
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
    fn a_wait_read_early_does_not_drop_the_wakeup_the_walk_meets_at_its_key() {
        // B waits on CPU 1 from 5 to 60; A's preemption wait (10 to 20) begins after, so
        // in the order waits began its key is B's end, 60. A sleeps at 30; G wakes it at
        // 60 onto CPU 0, busy with D until 70. Going back from A's end, the walk reads
        // A's wait at key 60 and must keep the wakeup that begins at 60.
        let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "gamma"), (4, "delta")])
            .other(0, 0, 1)
            .other(0, 1, 2)
            .switch(5, 1, 2, R, 3)
            .switch(10, 0, 1, R, 4)
            .switch(20, 0, 4, S, 1)
            .switch(30, 0, 1, S, 0)
            .wake(40, 0, 0, 4, 0)
            .switch(40, 0, 0, R, 4)
            .wake(60, 1, 3, 1, 0)
            .switch(60, 1, 3, S, 2)
            .switch(70, 0, 4, S, 1)
            .other(100, 0, 1)
            .other(100, 1, 2)
            .finish();
        assert_drawing(
            &model,
            "0: ADA.DDDAAA
             0q .a....a...
             1: BGGGGGBBBB
             1q .bbbbb....",
        );
        let index = IdleIndex::new(&model);
        let target = Target { window: Window::new(Nanos(0), Nanos(100)), ..Target::task(&model, task(&model, 1)) };
        let expected = critical_path(&model, &index, &target, None, 5);
        assert_eq!(expected.hops.first().map(|h| h.woken_by), Some(None));
        assert!(expected.hops.iter().any(|h| h.woken_by == Some(task(&model, 3))), "{expected:?}");
        let loose_keys =
            critical_path_of_waits(&model, &index, &mut BeganOrder(TableWaits::new(&model)), &target, None, 5);
        assert_eq!(loose_keys, expected);
    }

    #[test]
    fn over_records_read_back_the_walk_gives_what_the_tables_give_on_every_fixture() {
        let mut walked = 0;
        for path in refcheck::fixtures() {
            let trace = tracedat::Trace::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let Ok((whole, _)) = Model::build(&trace, model::Detail::WAKEUPS, &mut |_| {}) else { continue };
            let mut collector = Collector::new(Vec::new());
            let (streamed, _) =
                Model::build_streaming(&trace, &mut |_| {}, &mut collector).expect("built once already");
            let (mut records, _) = collector.finish(&streamed);
            let index = IdleIndex::new(&streamed);
            let third = Nanos((whole.end().0 - whole.start().0) / 3);
            let middle = Window::new(whole.start() + third, whole.start() + third + third);
            // The tasks that ran most, each alone over its life and over the middle third,
            // and the first with its process tree.
            let mut targets: Vec<Target> =
                busiest(&whole, 6).into_iter().map(|task| Target::task(&whole, task)).collect();
            targets.extend(targets.clone().into_iter().map(|t| Target { window: middle, ..t }));
            if let Some(first) = targets.first().cloned() {
                let tree = TaskFilter { descendants_of: Some(first.end_task), ..TaskFilter::default() };
                targets.push(Target { followed: Followed::Tasks(tree), ..first });
            }
            let whole_index = IdleIndex::new(&whole);
            let mut began_order = BeganOrder(TableWaits::new(&whole));
            for target in targets {
                let expected = critical_path(&whole, &whole_index, &target, None, 5);
                let read_back = critical_path_of_waits(&streamed, &index, &mut records, &target, None, 5);
                assert_eq!(read_back, expected, "{}: {target:?}", path.display());
                let loose_keys = critical_path_of_waits(&whole, &whole_index, &mut began_order, &target, None, 5);
                assert_eq!(loose_keys, expected, "{}, keys in the order waits began: {target:?}", path.display());
                walked += 1;
            }
        }
        assert!(walked >= 100, "only {walked} paths walked");
    }

    /// The model's waits in the order they began, each keyed by the latest end among it
    /// and those before it: keys the walk's contract allows, often well above a wait's
    /// end, so waits are read long before the walk reaches them.
    struct BeganOrder<'m>(TableWaits<'m>);

    impl WaitHistory for BeganOrder<'_> {
        fn each(&mut self, visit: &mut dyn FnMut(&Wait)) {
            let table = self.0.model.waits();
            table.ids().for_each(|id| visit(&table.get(id)));
        }

        fn back(&mut self) -> WaitsBack<'_> {
            let mut key = Nanos::ZERO;
            let keyed: Vec<_> = (self.0.model.waits().ids())
                .map(|id| {
                    let (wait, woken) = self.0.get(id);
                    key = key.max(wait.end);
                    (key, wait, woken)
                })
                .collect();
            Box::new(keyed.into_iter().rev())
        }
    }

    /// The `count` tasks that ran longest (idle aside).
    fn busiest(model: &Model, count: usize) -> Vec<TaskId> {
        let mut run_ns = vec![0u64; model.tasks().len()];
        for timeline in model.cpus() {
            for segment in timeline.segments().iter().filter(|s| s.task != TaskId::IDLE) {
                run_ns[segment.task.index()] += segment.duration().0;
            }
        }
        let mut tasks: Vec<TaskId> = model.tasks().ids().filter(|t| run_ns[t.index()] > 0).collect();
        tasks.sort_by_key(|t| (std::cmp::Reverse(run_ns[t.index()]), t.index()));
        tasks.truncate(count);
        tasks
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
