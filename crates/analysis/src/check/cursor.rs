//! Where each CPU was at a time, for lookups that mostly move forward in time (wakeups and
//! waits taken in order): a cursor per CPU steps ahead a few segments and falls back to a
//! binary search, so a pass over millions of wakeups costs little more than reading them.

use model::{Cpu, Model, Nanos, TaskId};

/// Steps a cursor takes forward before it searches instead.
const STEPS: usize = 16;

pub(super) struct SegmentCursors<'m> {
    model: &'m Model,
    /// Per CPU, the segment found last.
    at: Vec<usize>,
}

impl<'m> SegmentCursors<'m> {
    pub(super) fn new(model: &'m Model) -> SegmentCursors<'m> {
        SegmentCursors { model, at: vec![0; model.cpus().len()] }
    }

    /// The last segment of `cpu` starting at or before `time`.
    fn last_starting_by(&mut self, cpu: Cpu, time: Nanos) -> Option<usize> {
        let segments = self.model.cpu(cpu)?.segments();
        let at = self.at.get_mut(cpu.index())?;
        let mut index = *at;
        let starts_by = |i: usize| i < segments.len() && segments.start(i) <= time;
        if starts_by(index) {
            let mut steps = 0;
            while starts_by(index + 1) && steps < STEPS {
                index += 1;
                steps += 1;
            }
            if starts_by(index + 1) {
                index = segments.first_starting_after(time) - 1;
            }
        } else {
            index = segments.first_starting_after(time).checked_sub(1)?;
        }
        *at = index;
        Some(index)
    }

    /// Whether `cpu` was idle at `time`, as [`Model::cpu_idle_at`] says.
    pub(super) fn idle_at(&mut self, cpu: Cpu, time: Nanos) -> Option<bool> {
        let index = self.last_starting_by(cpu, time)?;
        let segments = self.model.cpu(cpu)?.segments();
        (time < segments.end(index) || segments.start(index) == time).then(|| segments.task(index) == TaskId::IDLE)
    }

    /// The task a switch at `time` on `cpu` started, if one did.
    pub(super) fn started_at(&mut self, cpu: Cpu, time: Nanos) -> Option<TaskId> {
        let index = self.last_starting_by(cpu, time)?;
        let segments = self.model.cpu(cpu)?.segments();
        let task = segments.task(index);
        (segments.start(index) == time && segments.end(index) > time && task != TaskId::IDLE).then_some(task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::scenario::{R, S, Scenario};

    /// Every lookup, in any order, agrees with the model's own binary search.
    ///
    /// ```text
    /// CPU 0  |aaaaaaaaaa|bbbbbbbbbbbbbbbbbbbbbbbbb|.........
    /// CPU 1  |.........................|aaaaaaaaaaaaaa|....
    ///        0         150            250             400
    /// ```
    #[test]
    fn cursors_agree_with_the_model() {
        let mut s = Scenario::new(2, &[(10, "a"), (11, "b")]);
        s.switch(10, 0, 0, R, 10).wake(100, 0, 10, 11, 0).switch(150, 0, 10, S, 11);
        s.wake(240, 0, 11, 10, 1).switch(250, 1, 0, R, 10).switch(400, 1, 10, S, 0).switch(410, 0, 11, S, 0);
        s.switch(500, 0, 0, R, 11);
        let model = s.finish();
        let times: Vec<u64> =
            (0..520).step_by(10).chain((0..520).rev().step_by(7)).chain((0..520).step_by(3)).collect();
        let mut cursors = SegmentCursors::new(&model);
        for cpu in [Cpu(0), Cpu(1)] {
            for &t in &times {
                assert_eq!(cursors.idle_at(cpu, Nanos(t)), model.cpu_idle_at(cpu, Nanos(t)), "CPU {} at {t}", cpu.0);
            }
        }
        let b = model.tasks().ids().find(|&t| model.tasks().get(t).pid.0 == 11).unwrap();
        assert_eq!(cursors.started_at(Cpu(0), Nanos(150)), Some(b));
        assert_eq!(cursors.started_at(Cpu(0), Nanos(160)), None);
        assert_eq!(cursors.started_at(Cpu(0), Nanos(410)), None, "idle is no task");
    }
}
