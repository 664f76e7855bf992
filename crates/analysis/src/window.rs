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
    /// (The reason is part of the text, so it is not also a `source`: messages that
    /// print an error's chain would say it twice.)
    #[error("--after-sleep: {0}")]
    AfterSleep(AfterSleepError),
    #[error("--min {min} is not before --max {max}")]
    Empty { min: f64, max: f64 },
    #[error("--min and --max take seconds, 0 or more, not {0}")]
    NotSeconds(f64),
    #[error("--min {min} is past the end of the trace, {end_s:.6} s after the {origin}")]
    PastTheEnd { min: f64, end_s: f64, origin: &'static str },
}

impl From<AfterSleepError> for WindowError {
    fn from(error: AfterSleepError) -> WindowError {
        WindowError::AfterSleep(error)
    }
}

impl WindowRequest {
    /// Checks what can be checked without a trace: seconds that are numbers, 0 or more,
    /// `--min` before `--max`.
    pub fn validate(&self) -> Result<(), WindowError> {
        for seconds in [self.min_s, self.max_s].into_iter().flatten() {
            if !(seconds.is_finite() && seconds >= 0.0) {
                return Err(WindowError::NotSeconds(seconds));
            }
        }
        match (self.min_s, self.max_s) {
            (Some(min), Some(max)) if min >= max => Err(WindowError::Empty { min, max }),
            _ => Ok(()),
        }
    }

    /// The window in trace time, and the origin times are measured from. Times past the
    /// end of the clock saturate; a window that starts after the trace's last event is
    /// an error, not an empty result.
    pub fn resolve(&self, model: &Model) -> Result<(Window, Nanos), WindowError> {
        self.validate()?;
        let origin = if self.after_sleep { model.after_sleep()? } else { model.start() };
        let start = self.min_s.map_or(origin, |s| origin + Nanos::from_secs_f64(s));
        // `end` is the last event's time: the window ends just after it.
        let trace_end = model.end() + Nanos(1);
        if let Some(min) = self.min_s.filter(|_| start >= trace_end) {
            let origin_name = if self.after_sleep { "end of the initial sleep" } else { "trace's first event" };
            let end_s = model.end().saturating_sub(origin).as_secs_f64();
            return Err(WindowError::PastTheEnd { min, end_s, origin: origin_name });
        }
        let end = self.max_s.map_or(trace_end, |s| origin + Nanos::from_secs_f64(s));
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

    /// A trace from 1 s to 3 s.
    fn two_seconds() -> Model {
        model::scenario::Scenario::new(1, &[(1, "a")]).other(1_000_000_000, 0, 1).other(3_000_000_000, 0, 1).finish()
    }

    fn request(min_s: Option<f64>, max_s: Option<f64>) -> WindowRequest {
        WindowRequest { min_s, max_s, after_sleep: false }
    }

    #[test]
    fn seconds_that_are_not_numbers_are_refused() {
        for bad in [f64::NAN, f64::INFINITY, -1.0, f64::NEG_INFINITY] {
            assert!(matches!(request(Some(bad), None).validate(), Err(WindowError::NotSeconds(_))), "{bad}");
            assert!(matches!(request(None, Some(bad)).resolve(&two_seconds()), Err(WindowError::NotSeconds(_))));
        }
        assert_eq!(request(Some(2.0), Some(1.0)).validate(), Err(WindowError::Empty { min: 2.0, max: 1.0 }));
        assert_eq!(request(Some(0.5), Some(1.0)).validate(), Ok(()));
    }

    #[test]
    fn times_past_the_end_of_the_clock_saturate() {
        let model = two_seconds();
        let (window, origin) = request(None, Some(1e300)).resolve(&model).unwrap();
        assert_eq!((window.start, window.end, origin), (Nanos(1_000_000_000), Nanos::MAX, Nanos(1_000_000_000)));
        let (window, _) = request(Some(0.5), None).resolve(&model).unwrap();
        assert_eq!((window.start, window.end), (Nanos(1_500_000_000), Nanos(3_000_000_001)));
    }

    #[test]
    fn a_window_after_the_last_event_is_an_error() {
        let error = request(Some(5.0), None).resolve(&two_seconds()).unwrap_err();
        assert_eq!(error.to_string(), "--min 5 is past the end of the trace, 2.000000 s after the trace's first event");
        assert!(request(Some(2.0), None).resolve(&two_seconds()).is_ok(), "the last event itself is in");
    }

    #[test]
    fn the_after_sleep_reason_is_said_once() {
        let error =
            WindowRequest { after_sleep: true, ..WindowRequest::default() }.resolve(&two_seconds()).unwrap_err();
        assert!(std::error::Error::source(&error).is_none(), "shown in the text, so not a source too");
        assert_eq!(error.to_string(), format!("--after-sleep: {}", AfterSleepError::NoSleep));
    }
}
