//! Trace markers (the `print` and `bprint` texts `model::read_markers` finds) as the page
//! lists them: those in a range for the viewer, an even sample of the whole trace for
//! the report.

use crate::lookup::task_of_pid;
use crate::shown::ShownTrace;
use documents::page::{self, Markers, Ready};
use model::{Marker, Nanos};

/// The markers of `all` (in time order; `total` in the trace) in `[start, end)`, at
/// most `limit` of them (an even sample when there are more), with the writers' names.
pub fn markers_in(trace: &ShownTrace, all: &[Marker], total: usize, start: Nanos, end: Nanos, limit: usize) -> Markers {
    let first = all.partition_point(|m| m.time < start);
    let inside = &all[first..first + all[first..].partition_point(|m| m.time < end)];
    let model = &trace.model;
    let listed = even_sample(inside, limit).map(|m| {
        let comm = task_of_pid(model, m.pid, m.time).map(|t| model.comm_at(t, m.time).to_string());
        marker(trace, m, comm)
    });
    Markers { status: Ready::Ready, markers: listed.collect(), in_range: inside.len(), total }
}

/// An even sample of at most `limit` of `markers`, without the writers' names.
pub fn sample(trace: &ShownTrace, markers: &[Marker], limit: usize) -> Vec<page::Marker> {
    even_sample(markers, limit).map(|m| marker(trace, m, None)).collect()
}

/// Every `n`th marker, so that at most `limit` remain and every part of the range keeps
/// some.
fn even_sample(markers: &[Marker], limit: usize) -> impl Iterator<Item = &Marker> {
    markers.iter().step_by(markers.len().div_ceil(limit).max(1))
}

fn marker(trace: &ShownTrace, marker: &Marker, comm: Option<String>) -> page::Marker {
    page::Marker {
        t: trace.relative(marker.time),
        cpu: marker.cpu.0,
        pid: marker.pid.0,
        comm,
        text: marker.text.clone(),
    }
}
