//! A followed task's state track: its thread states (`analysis::states`) over its life in
//! the trace, computed once per task and kept, and read per tile column (the state that
//! covers most of the column, as the timeline's column shows the run that covers most of
//! it) and under the mouse (the stretch that covers most of the pixel).

use crate::recent::Recent;
use analysis::Window;
use analysis::states::{StateStretch, ThreadState, task_states};
use model::{Model, Nanos, TaskId};
use std::sync::Arc;

/// Tasks whose states are kept.
const KEPT_TASKS: usize = 8;

/// The states of the tasks followed most recently.
#[derive(Debug)]
pub struct StateCache(Recent<TaskId, Vec<StateStretch>>);

impl Default for StateCache {
    fn default() -> StateCache {
        StateCache(Recent::new(KEPT_TASKS))
    }
}

impl StateCache {
    /// `task`'s states over its life (computed once: a scan of the model's runs and waits).
    pub fn states_of(&self, model: &Model, task: TaskId) -> Arc<Vec<StateStretch>> {
        self.0.get_or_compute(task, || task_states(model, task, life(model, task)))
    }
}

/// A task's life in the trace: from when it was first seen to the trace's end (dead after
/// its exit). Before it, the track is empty.
pub fn life(model: &Model, task: TaskId) -> Window {
    let first_seen = model.tasks().get(task).first_seen.max(model.start());
    Window::new(first_seen, Nanos(model.end().0 + 1))
}

/// A state's code in a tile's state layer: 0 where the task has no state (before its
/// life), else 1 + its place in [`ThreadState::ALL`].
pub fn code(state: ThreadState) -> u8 {
    ThreadState::ALL.iter().position(|&s| s == state).map_or(0, |i| i as u8 + 1)
}

/// Per column of `window` (`columns` equal columns), the code of the state that covers
/// most of it (of equal ones, the first in [`ThreadState::ALL`]); 0 where none does.
pub fn state_columns(stretches: &[StateStretch], window: Window, columns: u32) -> Vec<u8> {
    let columns = columns.max(1) as usize;
    let width = (window.len().0 / columns as u64).max(1);
    let column_of = |t: Nanos| ((t.0.saturating_sub(window.start.0)) / width).min(columns as u64 - 1) as usize;
    // Time per column and state.
    let mut time = vec![[0u64; 7]; columns];
    let first = stretches.partition_point(|s| s.end <= window.start);
    for stretch in stretches[first..].iter().take_while(|s| s.start < window.end) {
        let (start, end) = window.clip(stretch.start, stretch.end);
        if end <= start {
            continue;
        }
        let slot = usize::from(code(stretch.state)) - 1;
        let (a, b) = (column_of(start), column_of(Nanos(end.0 - 1)));
        for (c, totals) in time.iter_mut().enumerate().take(b + 1).skip(a) {
            let from = window.start.0 + c as u64 * width;
            let overlap = end.0.min(from + width).saturating_sub(start.0.max(from));
            totals[slot] += overlap;
        }
    }
    time.iter()
        .map(|totals| {
            let best = (0..7).rev().max_by_key(|&i| totals[i]).filter(|&i| totals[i] > 0);
            best.map_or(0, |i| i as u8 + 1)
        })
        .collect()
}

/// The stretch that covers most of `[from, to)` (of equal ones, the earliest).
pub fn stretch_at(stretches: &[StateStretch], from: Nanos, to: Nanos) -> Option<StateStretch> {
    let first = stretches.partition_point(|s| s.end <= from);
    stretches[first..]
        .iter()
        .take_while(|s| s.start < to.max(Nanos(from.0 + 1)))
        .max_by_key(|s| (s.end.min(to).saturating_sub(s.start.max(from)), std::cmp::Reverse(s.start)))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ThreadState::*;

    fn stretch(start: u64, end: u64, state: ThreadState) -> StateStretch {
        StateStretch { start: Nanos(start), end: Nanos(end), state, wait: None }
    }

    #[test]
    fn a_column_shows_the_state_covering_most_of_it() {
        let stretches = [
            stretch(10, 14, Running),
            stretch(14, 15, RunnableWakeup),
            stretch(15, 40, Sleeping),
            stretch(40, 45, Dead),
        ];
        // Columns of 10 ns from 0: none, running (4 of 10 against 1 and 5: sleeping wins),
        // sleeping, sleeping, dead.
        let columns = state_columns(&stretches, Window::new(Nanos(0), Nanos(50)), 5);
        assert_eq!(columns, [0, code(Sleeping), code(Sleeping), code(Sleeping), code(Dead)]);
        // At 1 ns a column, each state its own.
        let fine = state_columns(&stretches, Window::new(Nanos(12), Nanos(16)), 4);
        assert_eq!(fine, [code(Running), code(Running), code(RunnableWakeup), code(Sleeping)]);
        // A tie goes to the first state in the list: running before sleeping.
        let tie = [stretch(0, 5, Sleeping), stretch(5, 10, Running)];
        assert_eq!(state_columns(&tie, Window::new(Nanos(0), Nanos(10)), 1), [code(Running)]);
    }

    #[test]
    fn under_the_mouse_the_stretch_covering_most_of_the_pixel() {
        let stretches = [stretch(10, 14, Running), stretch(14, 15, RunnableWakeup), stretch(15, 40, Sleeping)];
        assert_eq!(stretch_at(&stretches, Nanos(13), Nanos(15)).unwrap().state, Running);
        assert_eq!(stretch_at(&stretches, Nanos(14), Nanos(14)).unwrap().state, RunnableWakeup);
        assert_eq!(stretch_at(&stretches, Nanos(12), Nanos(30)).unwrap().state, Sleeping);
        assert!(stretch_at(&stretches, Nanos(0), Nanos(5)).is_none());
        assert!(stretch_at(&stretches, Nanos(40), Nanos(50)).is_none());
    }
}
