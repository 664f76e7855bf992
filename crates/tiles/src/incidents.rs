//! The page's one adapter to `check`: its incidents as the page lists them (kind, time,
//! CPUs, tasks, lost CPU time, the explanation), ranked as `check` ranks them, for the
//! viewer (which runs the checks over the whole trace itself, [`find`]) and for the
//! report (which has run them). When `check`'s output changes shape, only this file
//! changes.

use crate::lookup::task_of_pid;
use crate::shown::ShownTrace;
use analysis::check::{CheckRequest, DEFAULT_MIN_LOST, DEFAULT_MIN_OVERLOAD, Incident, Pinning, check};
use analysis::{TaskFilter, Window};
use documents::page::{Incidents, PageIncident, Ready};
use model::Nanos;

/// Incidents the viewer sends to the page at most.
const LIMIT: usize = 5000;

/// The incidents of the whole trace, as the viewer lists them: the first [`LIMIT`], with
/// the tasks behind their pids at their start, to highlight.
pub fn find(trace: &ShownTrace, filter: &TaskFilter) -> Incidents {
    let model = &trace.model;
    let window = Window::new(model.start(), Nanos(model.end().0 + 1));
    // `check`'s defaults; the recorded affinity is not passed here.
    let request =
        CheckRequest { window, filter, min_lost: DEFAULT_MIN_LOST, min_overload: DEFAULT_MIN_OVERLOAD, affinity: None };
    let findings = check(model, &request);
    let tasks = |incident: &Incident| {
        let pids = incident.pids.iter();
        pids.filter_map(|&pid| task_of_pid(model, pid, incident.start)).map(|task| task.index()).collect()
    };
    incident_list(trace, &findings.incidents, LIMIT, tasks)
}

/// The first `limit` of `check`'s `incidents`, ranked, with the tasks `tasks_of` gives
/// each (indices into the model's task table), and how many there were in all.
pub fn incident_list(
    trace: &ShownTrace,
    incidents: &[Incident],
    limit: usize,
    tasks_of: impl Fn(&Incident) -> Vec<usize>,
) -> Incidents {
    let listed = incidents.iter().take(limit).enumerate().map(|(rank, incident)| PageIncident {
        rank: rank + 1,
        kind: incident.kind.name().to_string(),
        start: trace.relative(incident.start),
        end: trace.relative(incident.end),
        cpus: incident.cpus.iter().map(|c| c.0).collect(),
        pids: incident.pids.iter().map(|p| p.0).collect(),
        tasks: tasks_of(incident),
        lost_cpu_ns: incident.lost_cpu_ns,
        possibly_pinned: incident.pinning != Pinning::No,
        explanation: incident.explanation.clone(),
    });
    Incidents { status: Ready::Ready, incidents: listed.collect(), total: incidents.len() }
}
