//! Thread states: where each task's time went over a window, as Perfetto's thread states
//! put it: running, runnable after a wakeup, runnable after a preemption, sleeping (S),
//! uninterruptible (D), dead, or unknown. A task's states sum to the window.
//!
//! From the model: run segments are running, waits are runnable (by their cause). After a
//! task blocks it sleeps until its next wait or run, in D when the switch's `prev_state`
//! says uninterruptible and in S otherwise; after its last switch-out on exit it is dead.
//! The rest is unknown: before the task is first seen, after events were lost or a switch
//! went unrecorded, until the next sign of it.
//!
//! [`compute`] totals every task's states over a window; [`task_states`] gives one task's
//! stretches in time order (the viewer's state track), cut by the same walk.

use crate::window::{TaskFilter, Window};
use model::{Model, Nanos, Pid, Segment, SegmentEnd, TaskId, Wait, WaitCause, WaitEnd, WaitId};
use std::collections::BTreeMap;

/// `prev_state`'s uninterruptible bit (`TASK_UNINTERRUPTIBLE`).
const UNINTERRUPTIBLE: u16 = 0x2;

/// Time in each state, in ns.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct StateTimes {
    pub running_ns: u64,
    pub runnable_wakeup_ns: u64,
    pub runnable_preempted_ns: u64,
    pub sleeping_ns: u64,
    pub uninterruptible_ns: u64,
    pub dead_ns: u64,
    pub unknown_ns: u64,
}

impl StateTimes {
    pub fn total_ns(&self) -> u64 {
        [
            self.running_ns,
            self.runnable_wakeup_ns,
            self.runnable_preempted_ns,
            self.sleeping_ns,
            self.uninterruptible_ns,
            self.dead_ns,
            self.unknown_ns,
        ]
        .iter()
        .fold(0u64, |sum, &t| sum.saturating_add(t))
    }

    fn add(&mut self, state: State, ns: u64) {
        let slot = match state {
            State::Running => &mut self.running_ns,
            State::RunnableWakeup => &mut self.runnable_wakeup_ns,
            State::RunnablePreempted => &mut self.runnable_preempted_ns,
            State::Sleeping => &mut self.sleeping_ns,
            State::Uninterruptible => &mut self.uninterruptible_ns,
            State::Dead => &mut self.dead_ns,
            State::Unknown => &mut self.unknown_ns,
        };
        *slot = slot.saturating_add(ns);
    }
}

/// A task's state at a moment.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThreadState {
    Running,
    /// Runnable after a wakeup (or as a new task), until it ran.
    RunnableWakeup,
    /// Runnable after being switched out while runnable, until it ran again.
    RunnablePreempted,
    /// Blocked in S or any state but D.
    Sleeping,
    /// Blocked in D (`prev_state`'s uninterruptible bit).
    Uninterruptible,
    /// After its last switch-out on exit.
    Dead,
    /// Before it was first seen, after lost events or an unrecorded switch.
    Unknown,
}

use ThreadState as State;

impl ThreadState {
    pub const ALL: [ThreadState; 7] = [
        State::Running,
        State::RunnableWakeup,
        State::RunnablePreempted,
        State::Sleeping,
        State::Uninterruptible,
        State::Dead,
        State::Unknown,
    ];
}

/// One stretch of a task's time in one state.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StateStretch {
    pub start: Nanos,
    pub end: Nanos,
    pub state: ThreadState,
    /// The wait a runnable stretch is (part of).
    pub wait: Option<WaitId>,
}

/// One known stretch of a task: its state, and the state that follows it.
#[derive(Copy, Clone, Debug)]
struct Stretch {
    start: Nanos,
    end: Nanos,
    state: State,
    then: State,
}

impl Stretch {
    /// A run, and what its end led to.
    fn of_run(segment: &Segment) -> Stretch {
        let then = match segment.end_kind {
            SegmentEnd::Preempted => State::RunnablePreempted,
            SegmentEnd::Blocked if segment.prev_state & UNINTERRUPTIBLE != 0 => State::Uninterruptible,
            SegmentEnd::Blocked => State::Sleeping,
            SegmentEnd::Exited => State::Dead,
            SegmentEnd::TraceEnd | SegmentEnd::Lost | SegmentEnd::Unrecorded => State::Unknown,
        };
        Stretch { start: segment.start, end: segment.end, state: State::Running, then }
    }

    /// A wait, by its cause; running after it when it ran, else unknown.
    fn of_wait(wait: &Wait) -> Stretch {
        let state = if wait.cause == WaitCause::Preempted { State::RunnablePreempted } else { State::RunnableWakeup };
        let then = if wait.end_kind == WaitEnd::Ran { State::Running } else { State::Unknown };
        Stretch { start: wait.start, end: wait.end, state, then }
    }
}

/// The states of every task the filter accepts (with its pid), in task order, and per
/// command (the name the task had when each stretch began), by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct States {
    pub window: Window,
    pub by_task: Vec<(TaskId, Pid, StateTimes)>,
    pub by_command: Vec<(String, StateTimes)>,
}

/// Computes the thread states over `window`.
pub fn compute(model: &Model, window: Window, filter: &TaskFilter) -> States {
    let accepted: Vec<bool> = model.tasks().ids().map(|task| filter.accepts(model, task)).collect();
    let mut stretches: Vec<Vec<Stretch>> = vec![Vec::new(); model.tasks().len()];
    for timeline in model.cpus() {
        for segment in timeline.segments().iter() {
            // Segments name model tasks: in range.
            if accepted[segment.task.index()] {
                stretches[segment.task.index()].push(Stretch::of_run(&segment));
            }
        }
    }
    for wait in model.waits().iter().filter(|w| accepted[w.task.index()]) {
        stretches[wait.task.index()].push(Stretch::of_wait(&wait));
    }
    let mut by_task = Vec::new();
    let mut by_command: BTreeMap<String, StateTimes> = BTreeMap::new();
    for (task, list) in model.tasks().ids().zip(stretches.iter_mut()) {
        if !accepted[task.index()] {
            continue;
        }
        list.sort_by_key(|s| (s.start, s.end));
        let mut total = StateTimes::default();
        walk(list, window, &mut |state, start, end| {
            let ns = end.saturating_sub(start).0;
            total.add(state, ns);
            let comm = model.comm_at(task, start);
            by_command.entry(comm.to_string()).or_default().add(state, ns);
        });
        by_task.push((task, model.tasks().get(task).pid, total));
    }
    let mut by_command: Vec<(String, StateTimes)> = by_command.into_iter().collect();
    by_command.retain(|(_, t)| t.total_ns() > 0);
    States { window, by_task, by_command }
}

/// One task's states over `window`, in time order, every piece of the window once (as
/// [`compute`] counts them; a runnable piece names its wait). One scan of every CPU's
/// run segments and of the waits.
pub fn task_states(model: &Model, task: TaskId, window: Window) -> Vec<StateStretch> {
    let mut stretches = Vec::new();
    for timeline in model.cpus() {
        let segments = timeline.segments();
        let ours = segments.tasks().enumerate().filter(|&(_, t)| t == task).map(|(i, _)| i);
        stretches.extend(ours.map(|i| Stretch::of_run(&segments.get(i))));
    }
    let table = model.waits();
    // In order of their start, as the table is.
    let waits: Vec<WaitId> = table.ids().filter(|&id| table.task(id) == task).collect();
    stretches.extend(waits.iter().map(|&id| Stretch::of_wait(&table.get(id))));
    stretches.sort_by_key(|s| (s.start, s.end));
    let mut out = Vec::with_capacity(2 * stretches.len() + 1);
    walk(&stretches, window, &mut |state, start, end| {
        // A runnable piece lies in the last wait begun by its start.
        let wait = match state {
            State::RunnableWakeup | State::RunnablePreempted => {
                waits.partition_point(|&w| table.start(w) <= start).checked_sub(1).map(|i| waits[i])
            }
            _ => None,
        };
        out.push(StateStretch { start, end, state, wait });
    });
    out
}

/// Walks a task's stretches in order through the window, handing out each piece of time
/// once: overlapping stretches (a model that lost track of the task) count from where the
/// previous one ended.
fn walk(stretches: &[Stretch], window: Window, emit: &mut impl FnMut(State, Nanos, Nanos)) {
    let mut cursor = window.start;
    let mut next = State::Unknown;
    let mut piece = |from: Nanos, to: Nanos, state: State, cursor: &mut Nanos| {
        let (from, to) = window.clip(from.max(*cursor), to);
        if to > from {
            emit(state, from, to);
            *cursor = to;
        }
    };
    let mut latest_end = Nanos::ZERO;
    for stretch in stretches {
        if stretch.end <= cursor {
            // Over before the window (or inside an earlier stretch): it still says what
            // the task did next, when it ended last.
            if stretch.end >= latest_end {
                (next, latest_end) = (stretch.then, stretch.end);
            }
            continue;
        }
        latest_end = latest_end.max(stretch.end);
        // Dead tasks stay dead; otherwise the gap until this stretch has the state the
        // previous one led to, or is unknown when that was to run or wait and it did not.
        let gap = match next {
            State::Sleeping | State::Uninterruptible | State::Dead => next,
            _ => State::Unknown,
        };
        piece(cursor, stretch.start, gap, &mut cursor);
        if gap == State::Dead {
            break;
        }
        piece(stretch.start, stretch.end, stretch.state, &mut cursor);
        next = stretch.then;
    }
    let tail = match next {
        State::Sleeping | State::Uninterruptible | State::Dead => next,
        _ => State::Unknown,
    };
    piece(cursor, window.end, tail, &mut cursor);
}
