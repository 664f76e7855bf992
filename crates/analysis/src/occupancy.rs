//! How many tasks run and how many wait in runqueues at every instant, machine-wide and
//! per CPU, swept exactly in time order from the model's run segments and runqueue
//! pieces. It answers the running/waiting plot (the schedgraph paper's Figure 6) and the
//! "a task waits while a core idles" questions.

use crate::window::{TaskFilter, Window};
use model::{Cpu, Detail, Model, Nanos, RadixScratch, TaskId, sort_by_offset};
use model::{QueuePieces, Segments, Waits};
use std::ops::Range;

/// The state of the machine during a stretch of time in which nothing changes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// CPUs running a task the filter accepts.
    pub running: u32,
    /// Accepted tasks waiting in runqueues.
    pub waiting: u32,
    /// CPUs running their idle task (whatever the filter).
    pub idle: u32,
    /// CPUs whose state is known (neither before their first event, after their last,
    /// nor uncertain).
    pub known: u32,
    /// Of `waiting`, the tasks waiting in the runqueues of CPUs whose state is unknown.
    pub waiting_unknown: u32,
    /// The CPUs swept, known or not.
    pub cpus: u32,
}

impl Occupancy {
    /// A task waits in the runqueue of a CPU whose state is known while a CPU idles: the
    /// work-conservation failure the paper shades.
    pub fn waiting_while_idle(&self) -> bool {
        self.waiting > self.waiting_unknown && self.idle > 0
    }

    /// Whether a task waited while a CPU idled is not known here, and could be: tasks wait
    /// in the runqueue of a CPU whose state is unknown, or tasks wait while no CPU known
    /// to idle does and some CPU's state is unknown.
    pub fn waiting_while_idle_unknown(&self) -> bool {
        !self.waiting_while_idle() && (self.waiting_unknown > 0 || (self.waiting > 0 && self.known < self.cpus))
    }

    /// Of this CPU's own counts (one CPU), the tasks waiting in its runqueue while its state
    /// is unknown.
    fn own_waiting_unknown(&self) -> u32 {
        if self.known == 0 { self.waiting } else { 0 }
    }
}

/// A change of one CPU's contribution at one instant.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Delta {
    running: i32,
    waiting: i32,
    idle: i32,
    known: i32,
}

impl Delta {
    /// What `changes` do together.
    #[inline]
    fn of(changes: &[Change]) -> Delta {
        let mut delta = Delta::default();
        changes.iter().for_each(|change| delta.add(change.step));
        delta
    }

    #[inline]
    fn apply(&self, to: &mut Occupancy) {
        to.running = to.running.wrapping_add_signed(self.running);
        to.waiting = to.waiting.wrapping_add_signed(self.waiting);
        to.idle = to.idle.wrapping_add_signed(self.idle);
        to.known = to.known.wrapping_add_signed(self.known);
    }

    #[inline]
    fn add(&mut self, step: Step) {
        let [running, waiting, idle, known] = step.0.map(i32::from);
        self.running += running;
        self.waiting += waiting;
        self.idle += idle;
        self.known += known;
    }
}

/// One change's effect on the counts: running, waiting, idle, known (each −1, 0 or 1).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Step([i8; 4]);

impl Step {
    const QUEUED: Step = Step([0, 1, 0, 0]);

    /// A segment of `task` beginning.
    fn segment(task: TaskId, accepted: &[bool]) -> Step {
        if task == TaskId::IDLE { Step([0, 0, 1, 1]) } else { Step([i8::from(accepted[task.index()]), 0, 0, 1]) }
    }

    fn undone(self) -> Step {
        Step(self.0.map(|v| -v))
    }

    /// Adds `other` to this step unless a count would overflow (then nothing changes).
    fn absorb(&mut self, other: Step) -> bool {
        let mut sum = self.0;
        for (lane, add) in sum.iter_mut().zip(other.0) {
            let Some(total) = lane.checked_add(add) else { return false };
            *lane = total;
        }
        self.0 = sum;
        true
    }
}

/// A change on one CPU at one instant, as a block of the sweep collects them.
#[derive(Copy, Clone, Debug)]
struct Change {
    time: Nanos,
    cpu: u32,
    step: Step,
}

/// Changes a block of the sweep aims to hold: enough to make the per-block work on each
/// CPU negligible, few enough to be sorted in cache.
const BLOCK_CHANGES: u64 = 32 * 1024;

/// One CPU's changes, handed out a block of time at a time: its segments' starts and
/// ends, and the starts and ends of its accepted tasks' runqueue pieces.
struct CpuChanges<'m> {
    cpu: u32,
    segments: &'m Segments,
    queue: &'m QueuePieces,
    /// The waits pieces belong to, looked up only to filter tasks.
    waits: Option<&'m Waits>,
    accepted: &'m [bool],
    /// Every task is accepted (no lookup of a piece's task needed).
    every_task: bool,
    /// The next segment not yet begun.
    segment: usize,
    /// The end of the segment under way, and what its start changed.
    open_segment: Option<(Nanos, Step)>,
    /// The next piece not yet begun.
    piece: usize,
    /// The ends of the accepted pieces under way.
    open_pieces: Vec<Nanos>,
}

impl<'m> CpuChanges<'m> {
    /// The CPU's changes from `from` on, and its counts just before `from` (as a change
    /// from nothing).
    fn at(model: &'m Model, cpu: usize, accepted: &'m [bool], from: Nanos) -> (Self, Delta) {
        let timeline = &model.cpus()[cpu];
        let (segments, queue) = (timeline.segments(), timeline.queue());
        let every_task = accepted.iter().skip(1).all(|&a| a);
        assert!(every_task || model.detail().waits(), "a task filter needs the model's waits (see model::Detail)");
        let mut changes = CpuChanges {
            cpu: cpu as u32,
            segments,
            queue,
            waits: model.detail().waits().then(|| model.waits()),
            accepted,
            every_task,
            segment: segments.first_ending_at_or_after(from),
            open_segment: None,
            piece: queue.first_starting_at_or_after(from),
            open_pieces: Vec::new(),
        };
        let mut before = Delta::default();
        // Pieces begun before `from` and not over by then are waiting at `from`.
        changes.open_pieces = queue.open_at(from).filter(|&i| changes.counts(i)).map(|i| queue.end_of(i)).collect();
        before.waiting = changes.open_pieces.len() as i32;
        // Segments are in time order and do not overlap: the first one not over before
        // `from` is either under way then or still to come.
        if changes.segment < segments.len() && segments.start(changes.segment) < from {
            let step = Step::segment(segments.task(changes.segment), accepted);
            before.add(step);
            changes.open_segment = Some((segments.end(changes.segment), step));
            changes.segment += 1;
        }
        (changes, before)
    }

    /// How many changes there are in `window` (an estimate that sizes the blocks).
    fn count_in(&self, window: Window) -> u64 {
        let segments = self.segments.first_starting_at_or_after(window.end).saturating_sub(self.segment);
        let pieces = self.queue.first_starting_at_or_after(window.end).saturating_sub(self.piece);
        2 * (segments + pieces) as u64
    }

    /// Whether queue piece `index` is an accepted task's (always, without a filter: the
    /// lookup through the wait is a cache miss per piece).
    #[inline]
    fn counts(&self, index: usize) -> bool {
        // In range: a queue piece's wait is a row of `waits` (there when a filter is, see
        // `at`), whose task is a model task.
        self.every_task
            || self
                .waits
                .is_some_and(|waits| self.queue.wait(index).is_some_and(|wait| self.accepted[waits.task(wait).index()]))
    }

    /// Appends to `out` every change before `until` not handed out yet; a segment's end
    /// and the next one's start at the same instant are one change.
    fn take_until(&mut self, until: Nanos, out: &mut Vec<Change>) {
        let cpu = self.cpu;
        let mut push = |time: Nanos, step: Step| {
            let same_instant = out.last_mut().filter(|last| last.time == time && last.cpu == cpu);
            if !same_instant.is_some_and(|last| last.step.absorb(step)) {
                out.push(Change { time, cpu, step });
            }
        };
        loop {
            if let Some((end, step)) = self.open_segment {
                if end >= until {
                    break;
                }
                push(end, step.undone());
                self.open_segment = None;
            }
            if self.segment >= self.segments.len() {
                break;
            }
            let start = self.segments.start(self.segment);
            if start >= until {
                break;
            }
            let step = Step::segment(self.segments.task(self.segment), self.accepted);
            push(start, step);
            self.open_segment = Some((self.segments.end(self.segment), step));
            self.segment += 1;
        }
        while self.piece < self.queue.len() {
            let start = self.queue.start(self.piece);
            if start >= until {
                break;
            }
            if self.counts(self.piece) {
                push(start, Step::QUEUED);
                self.open_pieces.push(self.queue.end_of(self.piece));
            }
            self.piece += 1;
        }
        self.open_pieces.retain(|&end| {
            let over = end < until;
            if over {
                push(end, Step::QUEUED.undone());
            }
            !over
        });
    }
}

/// The tables a model needs for sweeps with `filter`: counting every task needs only the
/// runqueues; a filter needs their pieces' waits (a piece names its task through its wait).
pub fn detail_for(filter: &TaskFilter) -> Detail {
    if *filter == TaskFilter::default() { Detail::QUEUES } else { Detail::WAITS }
}

/// Calls `visit(start, end, occupancy)` for each stretch of `window` with constant
/// counts, in time order, covering the window without gaps.
pub fn sweep(model: &Model, window: Window, filter: &TaskFilter, visit: impl FnMut(Nanos, Nanos, Occupancy)) {
    sweep_accepted(model, window, &accepted_tasks(model, filter), &mut Stretches(visit));
}

/// The sweep of `window` cut into `parts` consecutive stretches of time swept on the
/// machine's cores, each into an accumulator `start` makes for it; returns the accumulators in
/// time order. A stretch of constant counts crossing a cut is visited once per part.
pub fn sweep_in_parts<A: Send>(
    model: &Model,
    window: Window,
    filter: &TaskFilter,
    parts: usize,
    cuts: Cuts,
    start: impl Fn(Window) -> A + Sync,
    visit: impl Fn(&mut A, Nanos, Nanos, Occupancy) + Sync,
) -> Vec<A> {
    let visit = &visit;
    let parts = in_parts(model, window, filter, parts, cuts, |part| Accumulating { visit, accumulator: start(part) });
    parts.into_iter().map(|part| part.accumulator).collect()
}

/// What a sweep that also follows each CPU reports, in time order (see
/// [`sweep_cpus_in_parts`]).
pub trait CpuSweepVisitor {
    /// The machine's counts during `[start, end)`.
    fn stretch(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy);
    /// One CPU's own counts from `time` on: `running`, `idle` and `known` are 0 or 1
    /// (`known` and not `idle`: it runs a task, accepted or not), `waiting` counts the
    /// accepted tasks in its runqueue. Called for every CPU at the start of the swept
    /// window, then whenever the CPU's counts change — after the stretch that ends at
    /// `time` was visited, so stretches split wherever some CPU changes.
    fn cpu(&mut self, time: Nanos, cpu: Cpu, counts: Occupancy);
}

/// The sweep of `window`, cut into `parts` swept on the machine's cores like
/// [`sweep_in_parts`], reporting each CPU's own changes as well as the machine's
/// stretches to a visitor `start` makes for each part; returns the visitors in time
/// order.
pub fn sweep_cpus_in_parts<V: CpuSweepVisitor + Send>(
    model: &Model,
    window: Window,
    filter: &TaskFilter,
    parts: usize,
    cuts: Cuts,
    start: impl Fn(Window) -> V + Sync,
) -> Vec<V> {
    in_parts(model, window, filter, parts, cuts, |part| PerCpu(start(part)))
        .into_iter()
        .map(|visitor| visitor.0)
        .collect()
}

/// Sweeps `parts` consecutive cuts of `window`, spread over the machine's cores.
fn in_parts<V: Visitor + Send>(
    model: &Model,
    window: Window,
    filter: &TaskFilter,
    parts: usize,
    cuts: Cuts,
    start: impl Fn(Window) -> V + Sync,
) -> Vec<V> {
    let accepted = accepted_tasks(model, filter);
    let parts = parts.clamp(1, window.len().0.max(1) as usize);
    let cuts = cuts.times(model, window, parts);
    crate::cores::on_cores(
        parts,
        || (),
        |(), i| {
            let part = Window::new(cuts[i], cuts[i + 1]);
            let mut visitor = start(part);
            sweep_accepted(model, part, &accepted, &mut visitor);
            visitor
        },
    )
}

/// Where a sweep in parts cuts its window.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cuts {
    /// At equal intervals of time, whatever the trace holds: for results that round per
    /// stretch (`check` shares lost time out with integer divisions), which must not move
    /// when the data does.
    EqualTime,
    /// Where about as many run segments and runqueue pieces start in each part, so parts
    /// swept on different cores take about as long (a trace's busy stretches are seldom
    /// spread evenly in time): for results that do not depend on where the window is cut.
    EqualChanges,
}

impl Cuts {
    /// `parts + 1` times from `window.start` to `window.end`.
    fn times(self, model: &Model, window: Window, parts: usize) -> Vec<Nanos> {
        let equal_time =
            |i: usize| Nanos(window.start.0 + (u128::from(window.len().0) * i as u128 / parts as u128) as u64);
        match self {
            Cuts::EqualTime => (0..=parts).map(equal_time).collect(),
            Cuts::EqualChanges => cuts_by_changes(model, window, parts),
        }
    }
}

/// See [`Cuts::EqualChanges`]: each cut is found by halving, after the one before.
fn cuts_by_changes(model: &Model, window: Window, parts: usize) -> Vec<Nanos> {
    let starting_before = |time: Nanos| -> u64 {
        let of_cpu = |cpu: &model::CpuTimeline| {
            cpu.segments().first_starting_at_or_after(time) + cpu.queue().first_starting_at_or_after(time)
        };
        model.cpus().iter().map(|cpu| of_cpu(cpu) as u64).sum()
    };
    let (first, last) = (starting_before(window.start), starting_before(window.end));
    let mut cuts = vec![window.start];
    for i in 1..parts {
        let wanted = first + (u128::from(last - first) * i as u128 / parts as u128) as u64;
        // The earliest time before which `wanted` start.
        let (mut low, mut high) = (cuts[i - 1].0, window.end.0);
        while low < high {
            let middle = low + (high - low) / 2;
            if starting_before(Nanos(middle)) >= wanted {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        cuts.push(Nanos(low));
    }
    cuts.push(window.end);
    cuts
}

/// Per model task, whether the filter counts it (indexed by segments' and waits' task
/// ids: model tasks, in range).
fn accepted_tasks(model: &Model, filter: &TaskFilter) -> Vec<bool> {
    model.tasks().ids().map(|task| filter.accepts(model, task)).collect()
}

/// What the sweep loop reports to; `PER_CPU` visitors also get each CPU's changes.
trait Visitor {
    const PER_CPU: bool;
    fn stretch(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy);
    fn cpu(&mut self, _time: Nanos, _cpu: Cpu, _counts: Occupancy) {}
}

/// A visitor of stretches only, by a closure.
struct Stretches<F>(F);

impl<F: FnMut(Nanos, Nanos, Occupancy)> Visitor for Stretches<F> {
    const PER_CPU: bool = false;
    fn stretch(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
        (self.0)(start, end, occupancy)
    }
}

/// A visitor of stretches only, by a closure on an accumulator.
struct Accumulating<'f, F, A> {
    visit: &'f F,
    accumulator: A,
}

impl<F: Fn(&mut A, Nanos, Nanos, Occupancy), A> Visitor for Accumulating<'_, F, A> {
    const PER_CPU: bool = false;
    fn stretch(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
        (self.visit)(&mut self.accumulator, start, end, occupancy)
    }
}

/// A public [`CpuSweepVisitor`] as the loop's visitor.
struct PerCpu<V>(V);

impl<V: CpuSweepVisitor> Visitor for PerCpu<V> {
    const PER_CPU: bool = true;
    fn stretch(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
        self.0.stretch(start, end, occupancy)
    }
    fn cpu(&mut self, time: Nanos, cpu: Cpu, counts: Occupancy) {
        self.0.cpu(time, cpu, counts)
    }
}

fn sweep_accepted<V: Visitor>(model: &Model, window: Window, accepted: &[bool], visitor: &mut V) {
    sweep_cpus(model, 0..model.cpus().len(), window, accepted, visitor);
}

/// Sweeps the changes of the CPUs in `cpus`, a block of time at a time: each CPU hands
/// out its changes in the block (in runs already in time order), one sort by time and
/// CPU merges them, and the counts follow the changes in that order.
fn sweep_cpus<V: Visitor>(model: &Model, cpus: Range<usize>, window: Window, accepted: &[bool], visitor: &mut V) {
    let mut state = Occupancy { cpus: cpus.len() as u32, ..Occupancy::default() };
    let mut sources: Vec<CpuChanges<'_>> = Vec::with_capacity(cpus.len());
    // Each CPU's own counts: whether tasks wait where the state is unknown depends on them.
    let mut own: Vec<Occupancy> = Vec::with_capacity(cpus.len());
    let first_cpu = cpus.start;
    for cpu in cpus {
        let (changes, before) = CpuChanges::at(model, cpu, accepted, window.start);
        before.apply(&mut state);
        let mut counts = Occupancy { cpus: 1, ..Occupancy::default() };
        before.apply(&mut counts);
        counts.waiting_unknown = counts.own_waiting_unknown();
        state.waiting_unknown += counts.waiting_unknown;
        if V::PER_CPU {
            visitor.cpu(window.start, Cpu(cpu as u32), counts);
        }
        own.push(counts);
        sources.push(changes);
    }
    let total: u64 = sources.iter().map(|s| s.count_in(window)).sum();
    let blocks = total.div_ceil(BLOCK_CHANGES).max(1);
    let block_end =
        |i: u64| Nanos(window.start.0 + (u128::from(window.len().0) * u128::from(i) / u128::from(blocks)) as u64);
    let mut stretch = Stretch::starting(window, state);
    let (mut changes, mut scratch): (Vec<Change>, RadixScratch<Change>) = Default::default();
    let mut changed: Vec<(usize, Occupancy)> = Vec::new();
    for block in 1..=blocks {
        let until = if block == blocks { window.end } else { block_end(block) };
        changes.clear();
        for source in &mut sources {
            source.take_until(until, &mut changes);
        }
        sort_by_time(&mut changes, &mut scratch, block_end(block - 1));
        for same_time in changes.chunk_by(|a, b| a.time == b.time) {
            let time = same_time[0].time;
            let mut state = stretch.state;
            for same_cpu in same_time.chunk_by(|a, b| a.cpu == b.cpu) {
                let delta = Delta::of(same_cpu);
                delta.apply(&mut state);
                let cpu = same_cpu[0].cpu as usize - first_cpu;
                let mut counts = own[cpu];
                delta.apply(&mut counts);
                counts.waiting_unknown = counts.own_waiting_unknown();
                state.waiting_unknown = state.waiting_unknown - own[cpu].waiting_unknown + counts.waiting_unknown;
                if V::PER_CPU {
                    if counts != own[cpu] {
                        changed.push((cpu, counts));
                    }
                } else {
                    own[cpu] = counts;
                }
            }
            if !V::PER_CPU {
                stretch.change(time, state, &mut |s, e, o| visitor.stretch(s, e, o));
                continue;
            }
            if changed.is_empty() {
                stretch.change(time, state, &mut |s, e, o| visitor.stretch(s, e, o));
            } else {
                stretch.split(time, state, &mut |s, e, o| visitor.stretch(s, e, o));
                for (cpu, counts) in changed.drain(..) {
                    own[cpu] = counts;
                    visitor.cpu(time, Cpu((cpu + first_cpu) as u32), counts);
                }
            }
        }
    }
    stretch.finish(&mut |s, e, o| visitor.stretch(s, e, o));
}

/// Sorts `changes` by time, keeping their order where times are equal (the sources hand
/// them out CPU by CPU, so that order is by CPU): a radix sort on the time since `base`
/// (a block of 2^24 ns, 16.8 ms, takes two passes). A block whose times spread beyond 32
/// bits (a sparse stretch of seconds) is sorted by comparisons.
fn sort_by_time(changes: &mut Vec<Change>, scratch: &mut RadixScratch<Change>, base: Nanos) {
    let latest = changes.iter().map(|change| change.time.0 - base.0).max().unwrap_or(0);
    match u32::try_from(latest) {
        Ok(latest) => sort_by_offset(changes, scratch, latest, |change| (change.time.0 - base.0) as u32),
        Err(_) => changes.sort_by_key(|change| change.time),
    }
}

/// The stretch being built: reported when the state really changes, clipped to the window.
struct Stretch<T> {
    window: Window,
    since: Nanos,
    state: T,
}

impl<T: Copy + PartialEq + Default> Stretch<T> {
    fn starting(window: Window, state: T) -> Self {
        Stretch { window, since: window.start, state }
    }

    fn change(&mut self, time: Nanos, state: T, visit: &mut impl FnMut(Nanos, Nanos, T)) {
        if state != self.state {
            self.split(time, state, visit);
        }
    }

    /// Ends the stretch at `time` even if the state stays the same.
    fn split(&mut self, time: Nanos, state: T, visit: &mut impl FnMut(Nanos, Nanos, T)) {
        if time > self.since {
            visit(self.since, time, self.state);
            self.since = time;
        }
        self.state = state;
    }

    fn finish(self, visit: &mut impl FnMut(Nanos, Nanos, T)) {
        if self.window.end > self.since {
            visit(self.since, self.window.end, self.state);
        }
    }
}

/// Time a task waited while a CPU idled, in a window.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct IdleWhileWaiting {
    /// Known to be so: the task waited where the state is known, the CPU was known idle.
    pub total: Nanos,
    /// The longest unbroken stretch, as (start, end).
    pub longest: Option<(Nanos, Nanos)>,
    /// Time during which it is unknown whether a task waited while a CPU idled
    /// ([`Occupancy::waiting_while_idle_unknown`]), not counted in `total`.
    pub unknown: Nanos,
}

/// Sums the stretches where some accepted task waits while some CPU idles.
pub fn idle_while_waiting(model: &Model, window: Window, filter: &TaskFilter) -> IdleWhileWaiting {
    let mut sum = IdleWhileWaitingSum::default();
    sweep(model, window, filter, |start, end, occupancy| sum.add(start, end, occupancy));
    sum.finish()
}

/// [`IdleWhileWaiting`] built up from a [`sweep`]'s stretches, for callers that sweep for
/// other reasons too; the sums of consecutive parts of a sweep merge with [`Self::then`].
#[derive(Copy, Clone, Debug, Default)]
pub struct IdleWhileWaitingSum {
    total: Nanos,
    unknown: Nanos,
    /// The first and the last unbroken stretch, and the longest (of all, these included).
    first: Option<(Nanos, Nanos)>,
    last: Option<(Nanos, Nanos)>,
    longest: Option<(Nanos, Nanos)>,
}

impl IdleWhileWaitingSum {
    /// Adds the next stretch of the sweep.
    pub fn add(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
        if occupancy.waiting_while_idle_unknown() {
            self.unknown += end.saturating_sub(start);
        }
        if !occupancy.waiting_while_idle() || end <= start {
            return;
        }
        self.total += end.saturating_sub(start);
        let extended = self.last.filter(|&(_, until)| until == start);
        let stretch = extended.map_or((start, end), |(since, _)| (since, end));
        if self.first.is_none() || (extended.is_some() && self.first == self.last) {
            self.first = Some(stretch);
        }
        self.last = Some(stretch);
        self.longest = longer(self.longest, stretch);
    }

    /// The sum of this part of a sweep followed by the next one.
    pub fn then(self, next: IdleWhileWaitingSum) -> IdleWhileWaitingSum {
        let (Some(last), Some(next_first)) = (self.last, next.first) else {
            return IdleWhileWaitingSum {
                total: self.total + next.total,
                unknown: self.unknown + next.unknown,
                first: self.first.or(next.first),
                last: next.last.or(self.last),
                longest: pick_longer(self.longest, next.longest),
            };
        };
        let joined = if last.1 == next_first.0 { Some((last.0, next_first.1)) } else { None };
        let first = if self.first == Some(last) { joined.or(self.first) } else { self.first };
        let last = if next.last == Some(next_first) { joined.or(next.last) } else { next.last };
        let longest = pick_longer(pick_longer(self.longest, next.longest), joined);
        IdleWhileWaitingSum {
            total: self.total + next.total,
            unknown: self.unknown + next.unknown,
            first,
            last,
            longest,
        }
    }

    pub fn finish(self) -> IdleWhileWaiting {
        IdleWhileWaiting { total: self.total, longest: self.longest, unknown: self.unknown }
    }
}

fn pick_longer(a: Option<(Nanos, Nanos)>, b: Option<(Nanos, Nanos)>) -> Option<(Nanos, Nanos)> {
    match b {
        Some(b) => longer(a, b),
        None => a,
    }
}

fn longer(a: Option<(Nanos, Nanos)>, b: (Nanos, Nanos)) -> Option<(Nanos, Nanos)> {
    match a {
        Some(a) if a.1.saturating_sub(a.0) >= b.1.saturating_sub(b.0) => Some(a),
        _ => Some(b),
    }
}

/// One CPU's runqueue length (its running accepted task, if any, plus accepted tasks
/// waiting in its queue) as constant stretches of `window`.
pub fn cpu_queue_length(
    model: &Model,
    cpu: Cpu,
    window: Window,
    filter: &TaskFilter,
    mut visit: impl FnMut(Nanos, Nanos, u32),
) {
    if cpu.index() >= model.cpus().len() {
        return;
    }
    let accepted = accepted_tasks(model, filter);
    let mut lengths = Stretch::starting(window, 0u32);
    {
        let mut stretches = Stretches(|start, _, counts: Occupancy| {
            lengths.change(start, counts.running.saturating_add(counts.waiting), &mut visit)
        });
        sweep_cpus(model, cpu.index()..cpu.index() + 1, window, &accepted, &mut stretches);
    }
    lengths.finish(&mut visit);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_sorted_by_time_keeping_the_order_of_equal_times() {
        // Times spread over 0..2^31 ns from the base (three radix passes), then over 2^33
        // ns (by comparisons); many of them equal.
        let base = Nanos(7_000_000_000);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut random = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for spacing in [1u64 << 21, 1 << 23] {
            let mut changes: Vec<Change> = (0..5000)
                .map(|i| Change { time: Nanos(base.0 + (random() % 1000) * spacing), cpu: i, step: Step([0; 4]) })
                .collect();
            let mut expected = changes.clone();
            expected.sort_by_key(|change| change.time);
            sort_by_time(&mut changes, &mut RadixScratch::default(), base);
            let order = |changes: &[Change]| changes.iter().map(|c| (c.time, c.cpu)).collect::<Vec<_>>();
            assert_eq!(order(&changes), order(&expected), "{spacing} ns apart");
        }
    }
}
