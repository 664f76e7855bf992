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

/// One CPU's changes in time order: its segments' starts and ends, and its runqueue
/// pieces' starts and (separately sorted) ends.
struct CpuChanges<'m> {
    model: &'m Model,
    cpu: usize,
    accepted: &'m [bool],
    segment: usize,
    at_segment_end: bool,
    piece: usize,
    piece_ends: Vec<Nanos>,
    piece_end: usize,
}

impl<'m> CpuChanges<'m> {
    fn new(model: &'m Model, cpu: usize, accepted: &'m [bool]) -> Self {
        let queue = &model.cpus[cpu].queue;
        let mut piece_ends: Vec<Nanos> = (0..queue.len())
            .filter(|&i| accepted[model.waits.task[queue.wait[i] as usize].index()])
            .map(|i| queue.end[i])
            .collect();
        piece_ends.sort_unstable();
        CpuChanges { model, cpu, accepted, segment: 0, at_segment_end: false, piece: 0, piece_ends, piece_end: 0 }
    }

    fn next_segment_time(&self) -> Option<Nanos> {
        let segments = &self.model.cpus[self.cpu].segments;
        (self.segment < segments.len())
            .then(|| if self.at_segment_end { segments.end[self.segment] } else { segments.start[self.segment] })
    }

    fn next_piece_start(&mut self) -> Option<Nanos> {
        let queue = &self.model.cpus[self.cpu].queue;
        while self.piece < queue.len() && !self.accepted[self.model.waits.task[queue.wait[self.piece] as usize].index()]
        {
            self.piece += 1;
        }
        (self.piece < queue.len()).then(|| queue.start[self.piece])
    }

    /// The time of the next change, if any.
    fn peek(&mut self) -> Option<Nanos> {
        let ends = self.piece_ends.get(self.piece_end).copied();
        [self.next_segment_time(), self.next_piece_start(), ends].into_iter().flatten().min()
    }

    /// Takes every change at exactly `time`.
    fn take(&mut self, time: Nanos) -> Delta {
        let mut delta = Delta::default();
        while self.next_segment_time() == Some(time) {
            let segments = &self.model.cpus[self.cpu].segments;
            let task = segments.task[self.segment];
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
        }
        while self.next_piece_start() == Some(time) {
            delta.waiting += 1;
            self.piece += 1;
        }
        while self.piece_ends.get(self.piece_end) == Some(&time) {
            delta.waiting -= 1;
            self.piece_end += 1;
        }
        delta
    }
}

/// Calls `visit(start, end, occupancy)` for each stretch of `window` with constant
/// counts, in time order, covering the window without gaps.
pub fn sweep(model: &Model, window: Window, filter: &TaskFilter, mut visit: impl FnMut(Nanos, Nanos, Occupancy)) {
    let accepted: Vec<bool> = (0..model.tasks.len()).map(|i| filter.accepts(model, TaskId(i as u32))).collect();
    let mut cpus: Vec<CpuChanges<'_>> = (0..model.cpus.len()).map(|c| CpuChanges::new(model, c, &accepted)).collect();
    let mut heap: BinaryHeap<Reverse<(Nanos, usize)>> =
        cpus.iter_mut().enumerate().filter_map(|(i, c)| Some(Reverse((c.peek()?, i)))).collect();
    let mut stretch = Stretch::new(window);
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
            cpus[cpu].take(time).apply(&mut state);
            if let Some(next) = cpus[cpu].peek() {
                heap.push(Reverse((next, cpu)));
            }
        }
        stretch.change(time, state, &mut visit);
    }
    stretch.finish(&mut visit);
}

/// The stretch being built: reported when the state really changes, clipped to the window.
struct Stretch<T> {
    window: Window,
    since: Nanos,
    state: T,
}

impl<T: Copy + PartialEq + Default> Stretch<T> {
    fn new(window: Window) -> Self {
        Stretch { window, since: window.start, state: T::default() }
    }

    fn change(&mut self, time: Nanos, state: T, visit: &mut impl FnMut(Nanos, Nanos, T)) {
        if state == self.state {
            return;
        }
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
    let mut result = IdleWhileWaiting::default();
    let mut current: Option<(Nanos, Nanos)> = None;
    sweep(model, window, filter, |start, end, occupancy| {
        if occupancy.waiting_while_idle() {
            result.total += end.saturating_sub(start);
            current = Some(current.map_or((start, end), |(s, _)| (s, end)));
        } else if let Some(stretch) = current.take() {
            result.longest = longer(result.longest, stretch);
        }
    });
    if let Some(stretch) = current {
        result.longest = longer(result.longest, stretch);
    }
    result
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
    let accepted: Vec<bool> = (0..model.tasks.len()).map(|i| filter.accepts(model, TaskId(i as u32))).collect();
    let Some(_) = model.cpus.get(cpu.index()) else { return };
    let mut changes = CpuChanges::new(model, cpu.index(), &accepted);
    let mut state = Occupancy::default();
    let mut stretch = Stretch::new(window);
    while let Some(time) = changes.peek() {
        if time >= window.end {
            break;
        }
        changes.take(time).apply(&mut state);
        stretch.change(time, state.running + state.waiting, &mut visit);
    }
    stretch.finish(&mut visit);
}
