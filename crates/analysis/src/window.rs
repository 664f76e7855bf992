//! Which part of a trace an analysis looks at: a time window (`--min`/`--max` seconds
//! from the trace start, or from the end of the recording's initial sleep with
//! `--after-sleep`) and which tasks count (`--forked`: only those created during the
//! trace). Every command resolves these the same way.

use model::{AfterSleepError, Model, Nanos, TaskId};

/// A half-open time window `[start, end)` in trace time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: Nanos,
    pub end: Nanos,
}

impl Window {
    pub fn new(start: Nanos, end: Nanos) -> Window {
        Window { start, end: end.max(start) }
    }

    pub fn len(&self) -> Nanos {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }

    /// The part of `[start, end)` inside the window (possibly empty).
    pub fn clip(&self, start: Nanos, end: Nanos) -> (Nanos, Nanos) {
        let s = start.max(self.start);
        (s, end.min(self.end).max(s))
    }

    pub fn overlap(&self, start: Nanos, end: Nanos) -> Nanos {
        let (s, e) = self.clip(start, end);
        e.saturating_sub(s)
    }

    pub fn contains(&self, time: Nanos) -> bool {
        self.start <= time && time < self.end
    }
}

/// What the user asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowRequest {
    /// Seconds after the origin.
    pub min_s: Option<f64>,
    pub max_s: Option<f64>,
    /// Measure from the end of the initial sleep instead of the trace start.
    pub after_sleep: bool,
}

/// Why a window cannot be resolved.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum WindowError {
    #[error("--after-sleep: {0}")]
    AfterSleep(#[from] AfterSleepError),
    #[error("--min {min} is not before --max {max}")]
    Empty { min: f64, max: f64 },
    #[error("--min/--max must be non-negative seconds")]
    Negative,
}

impl WindowRequest {
    /// The window in trace time, and the origin times are measured from.
    pub fn resolve(&self, model: &Model) -> Result<(Window, Nanos), WindowError> {
        if self.min_s.is_some_and(|s| s < 0.0) || self.max_s.is_some_and(|s| s < 0.0) {
            return Err(WindowError::Negative);
        }
        if let (Some(min), Some(max)) = (self.min_s, self.max_s) {
            if min >= max {
                return Err(WindowError::Empty { min, max });
            }
        }
        let origin = if self.after_sleep { model.after_sleep()? } else { model.start() };
        let start = self.min_s.map_or(origin, |s| origin + Nanos::from_secs_f64(s));
        let end = self.max_s.map_or(Nanos(model.end().0 + 1), |s| origin + Nanos::from_secs_f64(s));
        Ok((Window::new(start, end), origin))
    }
}

/// Which tasks an analysis counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskFilter {
    /// Only tasks created during the trace.
    pub forked_only: bool,
    /// Only tasks that were ever named with this prefix (`running-waiting --target`).
    pub command_prefix: Option<String>,
    /// Only this task and the tasks it forked, directly or not (a command's process tree).
    pub descendants_of: Option<TaskId>,
}

impl TaskFilter {
    pub fn accepts(&self, model: &Model, task: TaskId) -> bool {
        if task == TaskId::IDLE {
            return false;
        }
        let info = model.tasks().get(task);
        let named =
            |prefix: &String| info.comms.iter().any(|&(_, comm)| model.comms().name(comm).starts_with(prefix.as_str()));
        (!self.forked_only || info.forked)
            && self.command_prefix.as_ref().is_none_or(named)
            && self.descendants_of.is_none_or(|root| descends_from(model, task, root))
    }
}

/// Whether `task` is `ancestor` or was forked by it, directly or not.
pub fn descends_from(model: &Model, mut task: TaskId, ancestor: TaskId) -> bool {
    for _ in 0..model.tasks().len() {
        if task == ancestor {
            return true;
        }
        match model.tasks().get(task).parent {
            Some(parent) => task = parent,
            None => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping() {
        let w = Window::new(Nanos(10), Nanos(20));
        assert_eq!(w.overlap(Nanos(5), Nanos(15)), Nanos(5));
        assert_eq!(w.overlap(Nanos(25), Nanos(30)), Nanos(0));
        assert_eq!(w.clip(Nanos(0), Nanos(5)), (Nanos(10), Nanos(10)));
        assert!(w.contains(Nanos(10)) && !w.contains(Nanos(20)));
    }
}
