//! Which trace events a recording enables: by default the schedgraph paper's set (every
//! `sched` event but `sched_stat_runtime`, whose volume buys nothing the analyses use), or
//! the user's `-e` choices, checked against the kernel's `available_events`.

use crate::error::RecordError;
use crate::tracefs::Tracefs;

/// The default system and the event left out of it.
const DEFAULT_SYSTEM: &str = "sched";
const DEFAULT_EXCLUDED: &str = "sched_stat_runtime";

/// A trace event, `system:name`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EventName {
    pub system: String,
    pub name: String,
}

impl EventName {
    fn parse(line: &str) -> Option<EventName> {
        let (system, name) = line.trim().split_once(':')?;
        Some(EventName { system: system.to_string(), name: name.to_string() })
    }

    /// The event's directory under tracefs.
    pub fn dir(&self) -> String {
        format!("events/{}/{}", self.system, self.name)
    }
}

impl std::fmt::Display for EventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.system, self.name)
    }
}

/// The events to enable for `requested` (`SYSTEM:EVENT`, `SYSTEM` or `EVENT`; empty: the
/// default set), sorted and without duplicates.
pub(crate) fn select(fs: &Tracefs, requested: &[String]) -> Result<Vec<EventName>, RecordError> {
    let available: Vec<EventName> = fs.read("available_events")?.lines().filter_map(EventName::parse).collect();
    let mut chosen = if requested.is_empty() {
        available.iter().filter(|e| e.system == DEFAULT_SYSTEM && e.name != DEFAULT_EXCLUDED).cloned().collect()
    } else {
        requested.iter().map(|r| matching(&available, r)).collect::<Result<Vec<_>, _>>()?.concat()
    };
    chosen.sort();
    chosen.dedup();
    Ok(chosen)
}

fn matching(available: &[EventName], request: &str) -> Result<Vec<EventName>, RecordError> {
    let found: Vec<EventName> = available
        .iter()
        .filter(|e| match request.split_once(':') {
            Some((system, name)) => e.system == system && (e.name == name || name == "*"),
            None => e.system == request || e.name == request,
        })
        .cloned()
        .collect();
    if found.is_empty() {
        return Err(RecordError::UnknownEvent(request.to_string()));
    }
    Ok(found)
}

/// Every event enabled now (`set_event`), whoever enabled it: the trace must carry the
/// format of each event its buffers may hold.
pub(crate) fn enabled(fs: &Tracefs) -> Result<Vec<EventName>, RecordError> {
    Ok(fs.read("set_event")?.lines().filter_map(EventName::parse).collect())
}

/// The `ftrace` system's events (`print` for trace_marker writes and the like), which
/// need no enabling: their formats go into every trace.
pub(crate) fn ftrace_events(fs: &Tracefs) -> Result<Vec<EventName>, RecordError> {
    let dir = fs.path("events/ftrace");
    let entries = std::fs::read_dir(&dir).map_err(|e| RecordError::file(&dir, e))?;
    let mut events: Vec<EventName> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("format").exists())
        .map(|e| EventName { system: "ftrace".into(), name: e.file_name().to_string_lossy().into_owned() })
        .collect();
    events.sort();
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn available() -> Vec<EventName> {
        ["sched:sched_switch", "sched:sched_waking", "irq:irq_handler_entry", "irq:softirq_entry"]
            .iter()
            .filter_map(|l| EventName::parse(l))
            .collect()
    }

    #[test]
    fn requests_name_an_event_a_system_or_a_bare_event() {
        let names = |r: &str| matching(&available(), r).map(|v| v.iter().map(|e| e.to_string()).collect::<Vec<_>>());
        assert_eq!(names("sched:sched_switch").unwrap(), ["sched:sched_switch"]);
        assert_eq!(names("irq").unwrap(), ["irq:irq_handler_entry", "irq:softirq_entry"]);
        assert_eq!(names("irq:*").unwrap().len(), 2);
        assert_eq!(names("sched_waking").unwrap(), ["sched:sched_waking"]);
        assert!(matches!(names("sched:nope"), Err(RecordError::UnknownEvent(_))));
    }
}
