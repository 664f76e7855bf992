//! How many tasks run and how many wait in runqueues at every instant, machine-wide and
//! per CPU, swept exactly in time order from the model's run segments and runqueue
//! pieces. It answers the running/waiting plot (the schedgraph paper's Figure 6) and the
//! "a task waits while a core idles" questions.

use crate::window::{TaskFilter, Window};
use model::{Cpu, Model, Nanos, TaskId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
}

impl Occupancy {
    /// A task waits while a CPU idles: the work-conservation failure the paper shades.
    pub fn waiting_while_idle(&self) -> bool {
        self.waiting > 0 && self.idle > 0
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
    fn apply(&self, to: &mut Occupancy) {
        to.running = to.running.wrapping_add_signed(self.running);
        to.waiting = to.waiting.wrapping_add_signed(self.waiting);
        to.idle = to.idle.wrapping_add_signed(self.idle);
        to.known = to.known.wrapping_add_signed(self.known);
    }
}

/// One CPU's changes in time order: its segments' starts and ends, and the starts and
/// ends of its accepted tasks' runqueue pieces. Pieces are in start order; the ends of
/// those under way wait in a small heap (as many as the queue is long), so no list of
/// ends is built or sorted.
struct CpuChanges<'m> {
    model: &'m Model,
    cpu: usize,
    accepted: &'m [bool],
    segment: usize,
    at_segment_end: bool,
    /// When the segment change at `segment`/`at_segment_end` happens (`None`: no more).
    segment_time: Option<Nanos>,
    /// The next accepted piece to start, and its start.
    piece: usize,
    piece_start: Option<Nanos>,
    /// Every task is accepted.
    every_task: bool,
    ends: BinaryHeap<Reverse<Nanos>>,
}

impl<'m> CpuChanges<'m> {
    /// The CPU's changes from `from` on, and the contribution of everything before it.
    fn at(model: &'m Model, cpu: usize, accepted: &'m [bool], from: Nanos) -> (Self, Delta) {
        let queue = &model.cpus()[cpu].queue();
        let piece = queue.first_starting_at_or_after(from);
        let every_task = accepted.iter().skip(1).all(|&a| a);
        let mut changes = CpuChanges {
            model,
            cpu,
            accepted,
            segment: 0,
            at_segment_end: false,
            segment_time: None,
            piece,
            piece_start: None,
            every_task,
            ends: BinaryHeap::new(),
        };
        // Pieces begun before `from` and not over by then are waiting at `from`.
        let open: Vec<Reverse<Nanos>> =
            queue.open_at(from).filter(|&i| changes.counts(i)).map(|i| Reverse(queue.end_of(i))).collect();
        changes.ends = BinaryHeap::from(open);
        let mut before = Delta { waiting: changes.ends.len() as i32, ..Delta::default() };
        // Segments are in time order and do not overlap: the first one not over before
        // `from` is either under way then or still to come.
        let segments = &model.cpus()[cpu].segments();
        changes.segment = segments.first_ending_at_or_after(from);
        changes.at_segment_end = changes.segment < segments.len() && segments.start(changes.segment) < from;
        if changes.at_segment_end {
            before.known += 1;
            let task = segments.task(changes.segment);
            if task == TaskId::IDLE {
                before.idle += 1;
            } else if accepted[task.index()] {
                before.running += 1;
            }
        }
        changes.find_segment_time();
        changes.find_piece_start();
        (changes, before)
    }

    /// Whether queue piece `index` is an accepted task's (always, without a filter: the
    /// lookup through the wait is a cache miss per piece).
    #[inline]
    fn counts(&self, index: usize) -> bool {
        if self.every_task {
            return true;
        }
        // In range: a queue piece's wait is a row of `waits`, whose task is a model task.
        let wait = self.model.cpus()[self.cpu].queue().wait(index) as usize;
        self.accepted[self.model.waits().task(wait).index()]
    }

    fn find_segment_time(&mut self) {
        let segments = &self.model.cpus()[self.cpu].segments();
        self.segment_time = (self.segment < segments.len())
            .then(|| if self.at_segment_end { segments.end(self.segment) } else { segments.start(self.segment) });
    }

    /// Finds the start of the next accepted piece, skipping the others.
    fn find_piece_start(&mut self) {
        let queue = &self.model.cpus()[self.cpu].queue();
        while self.piece < queue.len() && !self.counts(self.piece) {
            self.piece += 1;
        }
        self.piece_start = (self.piece < queue.len()).then(|| queue.start(self.piece));
    }

    /// The time of the next change, if any.
    #[inline]
    fn peek(&self) -> Option<Nanos> {
        let ends = self.ends.peek().map(|end| end.0);
        [self.segment_time, self.piece_start, ends].into_iter().flatten().min()
    }

    /// Takes every change at exactly `time`.
    fn take(&mut self, time: Nanos) -> Delta {
        let mut delta = Delta::default();
        while self.segment_time == Some(time) {
            let task = self.model.cpus()[self.cpu].segments().task(self.segment);
            let sign = if self.at_segment_end { -1 } else { 1 };
            delta.known += sign;
            if task == TaskId::IDLE {
                delta.idle += sign;
            } else if self.accepted[task.index()] {
                delta.running += sign;
            }
            if self.at_segment_end {
                self.segment += 1;
            }
            self.at_segment_end = !self.at_segment_end;
            self.find_segment_time();
        }
        while self.piece_start == Some(time) {
            delta.waiting += 1;
            self.ends.push(Reverse(self.model.cpus()[self.cpu].queue().end_of(self.piece)));
            self.piece += 1;
            self.find_piece_start();
        }
        while self.ends.peek() == Some(&Reverse(time)) {
            delta.waiting -= 1;
            self.ends.pop();
        }
        delta
    }
}

/// Calls `visit(start, end, occupancy)` for each stretch of `window` with constant
/// counts, in time order, covering the window without gaps.
pub fn sweep(model: &Model, window: Window, filter: &TaskFilter, visit: impl FnMut(Nanos, Nanos, Occupancy)) {
    sweep_accepted(model, window, &accepted_tasks(model, filter), &mut Stretches(visit));
}

/// The sweep of `window` cut into `parts` consecutive stretches of time swept on their own
/// threads, each into an accumulator `start` makes for it; returns the accumulators in
/// time order. A stretch of constant counts crossing a cut is visited once per part.
pub fn sweep_in_parts<A: Send>(
    model: &Model,
    window: Window,
    filter: &TaskFilter,
    parts: usize,
    start: impl Fn(Window) -> A + Sync,
    visit: impl Fn(&mut A, Nanos, Nanos, Occupancy) + Sync,
) -> Vec<A> {
    let visit = &visit;
    let parts = in_parts(model, window, filter, parts, |part| Accumulating { visit, accumulator: start(part) });
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

/// The sweep of `window`, cut into `parts` swept on their own threads like
/// [`sweep_in_parts`], reporting each CPU's own changes as well as the machine's
/// stretches to a visitor `start` makes for each part; returns the visitors in time
/// order.
pub fn sweep_cpus_in_parts<V: CpuSweepVisitor + Send>(
    model: &Model,
    window: Window,
    filter: &TaskFilter,
    parts: usize,
    start: impl Fn(Window) -> V + Sync,
) -> Vec<V> {
    in_parts(model, window, filter, parts, |part| PerCpu(start(part))).into_iter().map(|visitor| visitor.0).collect()
}

/// Sweeps `parts` consecutive cuts of `window` on their own threads.
fn in_parts<V: Visitor + Send>(
    model: &Model,
    window: Window,
    filter: &TaskFilter,
    parts: usize,
    start: impl Fn(Window) -> V + Sync,
) -> Vec<V> {
    let accepted = accepted_tasks(model, filter);
    let parts = parts.clamp(1, window.len().0.max(1) as usize);
    let cut = |i: usize| Nanos(window.start.0 + (u128::from(window.len().0) * i as u128 / parts as u128) as u64);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..parts)
            .map(|i| {
                let (accepted, start) = (&accepted, &start);
                scope.spawn(move || {
                    let part = Window::new(cut(i), cut(i + 1));
                    let mut visitor = start(part);
                    sweep_accepted(model, part, accepted, &mut visitor);
                    visitor
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    })
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
    let mut state = Occupancy::default();
    let mut cpus: Vec<CpuChanges<'_>> = Vec::with_capacity(model.cpus().len());
    // Each CPU's own counts, kept for visitors that follow CPUs.
    let mut own: Vec<Occupancy> = Vec::new();
    for cpu in 0..model.cpus().len() {
        let (changes, before) = CpuChanges::at(model, cpu, accepted, window.start);
        before.apply(&mut state);
        if V::PER_CPU {
            let mut counts = Occupancy::default();
            before.apply(&mut counts);
            visitor.cpu(window.start, Cpu(cpu as u32), counts);
            own.push(counts);
        }
        cpus.push(changes);
    }
    let mut heap: BinaryHeap<Reverse<(Nanos, usize)>> =
        cpus.iter_mut().enumerate().filter_map(|(i, c)| Some(Reverse((c.peek()?, i)))).collect();
    let mut stretch = Stretch::starting(window, state);
    let mut changed: Vec<(usize, Occupancy)> = Vec::new();
    while let Some(&Reverse((time, _))) = heap.peek() {
        if time >= window.end {
            break;
        }
        let mut state = stretch.state;
        while let Some(&Reverse((t, cpu))) = heap.peek() {
            if t != time {
                break;
            }
            heap.pop();
            let delta = cpus[cpu].take(time);
            delta.apply(&mut state);
            if V::PER_CPU {
                let mut counts = own[cpu];
                delta.apply(&mut counts);
                if counts != own[cpu] {
                    changed.push((cpu, counts));
                }
            }
            if let Some(next) = cpus[cpu].peek() {
                heap.push(Reverse((next, cpu)));
            }
        }
        if changed.is_empty() {
            stretch.change(time, state, &mut |s, e, o| visitor.stretch(s, e, o));
        } else {
            stretch.split(time, state, &mut |s, e, o| visitor.stretch(s, e, o));
            for (cpu, counts) in changed.drain(..) {
                own[cpu] = counts;
                visitor.cpu(time, Cpu(cpu as u32), counts);
            }
        }
    }
    stretch.finish(&mut |s, e, o| visitor.stretch(s, e, o));
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
    pub total: Nanos,
    /// The longest unbroken stretch, as (start, end).
    pub longest: Option<(Nanos, Nanos)>,
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
    /// The first and the last unbroken stretch, and the longest (of all, these included).
    first: Option<(Nanos, Nanos)>,
    last: Option<(Nanos, Nanos)>,
    longest: Option<(Nanos, Nanos)>,
}

impl IdleWhileWaitingSum {
    /// Adds the next stretch of the sweep.
    pub fn add(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
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
                first: self.first.or(next.first),
                last: next.last.or(self.last),
                longest: pick_longer(self.longest, next.longest),
            };
        };
        let joined = if last.1 == next_first.0 { Some((last.0, next_first.1)) } else { None };
        let first = if self.first == Some(last) { joined.or(self.first) } else { self.first };
        let last = if next.last == Some(next_first) { joined.or(next.last) } else { next.last };
        let longest = pick_longer(pick_longer(self.longest, next.longest), joined);
        IdleWhileWaitingSum { total: self.total + next.total, first, last, longest }
    }

    pub fn finish(self) -> IdleWhileWaiting {
        IdleWhileWaiting { total: self.total, longest: self.longest }
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
    let accepted = accepted_tasks(model, filter);
    let Some(_) = model.cpus().get(cpu.index()) else { return };
    let (mut changes, before) = CpuChanges::at(model, cpu.index(), &accepted, window.start);
    let mut state = Occupancy::default();
    before.apply(&mut state);
    let mut stretch = Stretch::starting(window, state.running.saturating_add(state.waiting));
    while let Some(time) = changes.peek() {
        if time >= window.end {
            break;
        }
        changes.take(time).apply(&mut state);
        stretch.change(time, state.running.saturating_add(state.waiting), &mut visit);
    }
    stretch.finish(&mut visit);
}
