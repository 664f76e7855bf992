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

#[cfg(test)]
mod tests {
    use super::*;
    use model::scenario::*;
    use model::{Cpu, Pid};

    /// 0: AAAABBBB..   markers written by alpha at 10 and 30, by beta at 50 and 70, and by
    /// 1: ..........   an unknown pid at 90.
    fn trace() -> ShownTrace {
        let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
            .other(0, 0, 1)
            .switch(40, 0, 1, S, 2)
            .switch(80, 0, 2, S, 0)
            .other(100, 0, 0)
            .other(100, 1, 0)
            .finish();
        ShownTrace { name: "t".into(), model, topology: None, origin: Nanos(5) }
    }

    fn markers() -> Vec<Marker> {
        [(10, 1), (30, 1), (50, 2), (70, 2), (90, 9)]
            .map(|(t, pid)| Marker { time: Nanos(t), cpu: Cpu(0), pid: Pid(pid), text: format!("m{t}") })
            .to_vec()
    }

    #[test]
    fn a_range_keeps_an_even_sample_with_the_writers_names() {
        let (trace, all) = (trace(), markers());
        let answer = markers_in(&trace, &all, 7, Nanos(30), Nanos(91), 2);
        let listed: Vec<(i64, Option<&str>)> = answer.markers.iter().map(|m| (m.t, m.comm.as_deref())).collect();
        assert_eq!(listed, [(25, Some("alpha")), (65, Some("beta"))]);
        assert_eq!((answer.in_range, answer.total), (4, 7));
        let sampled: Vec<i64> = sample(&trace, &all, 3).iter().map(|m| m.t).collect();
        assert_eq!(sampled, [5, 45, 85]);
        assert!(sample(&trace, &all, 3).iter().all(|m| m.comm.is_none()));
    }
}
