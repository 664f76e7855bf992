//! The viewer's one adapter to `check`: runs the checks over the whole trace and turns
//! their incidents into what the page shows (kind, time, CPUs, tasks, lost CPU time, the
//! explanation), ranked as `check` ranks them. When `check`'s output changes shape
//! (incidents grouped into episodes), only this file changes.

use crate::lookup::task_of_pid;
use analysis::check::{CheckRequest, DEFAULT_MIN_LOST, DEFAULT_MIN_OVERLOAD, Pinning, check};
use analysis::{TaskFilter, Window};
use model::{Model, Nanos, TaskId};
use serde_json::{Value, json};

/// Incidents sent to the page at most.
const LIMIT: usize = 5000;

/// One incident as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Incident {
    pub kind: String,
    pub start: Nanos,
    pub end: Nanos,
    pub cpus: Vec<u32>,
    pub pids: Vec<i32>,
    /// The tasks behind `pids` at the incident's start, to highlight.
    pub tasks: Vec<TaskId>,
    pub lost_cpu_ns: u64,
    /// Pinned or possibly pinned (the page's `possiblyPinned`).
    pub possibly_pinned: bool,
    pub explanation: String,
}

/// The incidents of the whole trace, ranked, and how many there were in all.
pub fn find(model: &Model, filter: &TaskFilter) -> (Vec<Incident>, usize) {
    let window = Window::new(model.start(), Nanos(model.end().0 + 1));
    // `check`'s defaults; the recorded affinity is not passed here.
    let request =
        CheckRequest { window, filter, min_lost: DEFAULT_MIN_LOST, min_overload: DEFAULT_MIN_OVERLOAD, affinity: None };
    let findings = check(model, &request);
    let total = findings.incidents.len();
    let incidents = findings
        .incidents
        .into_iter()
        .take(LIMIT)
        .map(|incident| Incident {
            kind: incident.kind.name().to_string(),
            start: incident.start,
            end: incident.end,
            cpus: incident.cpus.iter().map(|c| c.0).collect(),
            tasks: incident.pids.iter().filter_map(|&pid| task_of_pid(model, pid, incident.start)).collect(),
            pids: incident.pids.iter().map(|p| p.0).collect(),
            lost_cpu_ns: incident.lost_cpu_ns,
            possibly_pinned: incident.pinning != Pinning::No,
            explanation: incident.explanation,
        })
        .collect();
    (incidents, total)
}

/// The page's JSON: times in ns from `origin`.
pub fn to_json(incidents: &[Incident], total: usize, origin: Nanos) -> Value {
    let rel = |t: Nanos| t.0 as i64 - origin.0 as i64;
    let list: Vec<Value> = incidents
        .iter()
        .enumerate()
        .map(|(rank, i)| {
            json!({"rank": rank + 1, "kind": i.kind, "start": rel(i.start), "end": rel(i.end), "cpus": i.cpus,
                   "pids": i.pids, "tasks": i.tasks.iter().map(|t| t.index()).collect::<Vec<_>>(),
                   "lostCpuNs": i.lost_cpu_ns, "possiblyPinned": i.possibly_pinned, "explanation": i.explanation})
        })
        .collect();
    json!({"status": "ready", "incidents": list, "total": total})
}
