//! What part of a trace an export covers: the window and task filter every command
//! shares (`--min/--max`, `--after-sleep`, `--forked`), resolved against the model once,
//! and the same choice applied to raw events.

use analysis::{TaskFilter, Window};
use model::{Model, Nanos, Pid, TaskId};
use std::collections::HashSet;
use tracedat::format::EventFormat;
use tracedat::{Event, FieldRef};

/// The window, the origin times are shown relative to, and the accepted tasks.
#[derive(Clone, Debug)]
pub struct Scope {
    pub window: Window,
    /// `--after-sleep`'s origin, else the trace's start.
    pub origin: Nanos,
    pub filter: TaskFilter,
    accepted: Vec<bool>,
    accepted_pids: Option<HashSet<i32>>,
}

impl Scope {
    pub fn new(model: &Model, window: Window, origin: Nanos, filter: TaskFilter) -> Scope {
        let accepted: Vec<bool> = model.tasks().ids().map(|id| filter.accepts(model, id)).collect();
        let filtering = filter != TaskFilter::default();
        let accepted_pids = filtering
            .then(|| model.tasks().iter().filter(|(id, _)| accepted[id.index()]).map(|(_, task)| task.pid.0).collect());
        Scope { window, origin, filter, accepted, accepted_pids }
    }

    /// The whole trace, every task.
    pub fn everything(model: &Model) -> Scope {
        Scope::new(model, Window::new(model.start(), Nanos(model.end().0 + 1)), model.start(), TaskFilter::default())
    }

    /// Whether a task counts (the idle task never does).
    pub fn accepts(&self, task: TaskId) -> bool {
        self.accepted.get(task.index()).copied().unwrap_or(false)
    }

    /// Whether no task filter applies.
    pub fn all_tasks(&self) -> bool {
        self.accepted_pids.is_none()
    }

    fn accepts_pid(&self, pid: i64) -> bool {
        self.accepted_pids.as_ref().is_none_or(|pids| pids.contains(&(pid as i32)))
    }
}

/// The scope applied to raw events: an event is kept when its time is in the window and,
/// with a task filter, when it names an accepted task's pid (as `common_pid` or in any
/// field whose name ends in `pid`). Pids are resolved once per event format.
pub struct EventFilter<'s> {
    scope: &'s Scope,
    pid_fields: Vec<Option<Vec<FieldRef>>>,
}

impl<'s> EventFilter<'s> {
    pub fn new(scope: &'s Scope, formats: &tracedat::Formats) -> EventFilter<'s> {
        let mut pid_fields = Vec::new();
        for format in formats.iter() {
            let slot = format.id as usize;
            if slot < 1 << 16 {
                if pid_fields.len() <= slot {
                    pid_fields.resize(slot + 1, None);
                }
                pid_fields[slot] = Some(pid_fields_of(format));
            }
        }
        EventFilter { scope, pid_fields }
    }

    pub fn window(&self) -> Window {
        self.scope.window
    }

    #[inline]
    pub fn keeps(&self, event: &Event<'_>) -> bool {
        if !self.scope.window.contains(event.ts) {
            return false;
        }
        if self.scope.all_tasks() {
            return true;
        }
        if event.pid() != Pid::IDLE && self.scope.accepts_pid(event.pid().0.into()) {
            return true;
        }
        let fields = self.pid_fields.get(event.id as usize).and_then(Option::as_ref);
        fields.into_iter().flatten().filter_map(|&f| event.read(f)).any(|pid| pid != 0 && self.scope.accepts_pid(pid))
    }
}

fn pid_fields_of(format: &EventFormat) -> Vec<FieldRef> {
    format.fields.iter().filter(|f| f.name.ends_with("pid")).filter_map(FieldRef::of).collect()
}
