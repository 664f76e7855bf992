//! `schedlens compare --format json`: two traces' workloads measure by measure, and the
//! traced command's critical path in each.

use crate::critical_path::PathBreakdown;
use schemars::JsonSchema;
use serde::Serialize;

/// What differs between two traces of the same workload: time measures first (the
/// critical path's parts among them), largest difference first; then the commands' wakeup
/// latency percentiles, largest relative shift first; then counts, largest relative
/// change first. Measures equal in both traces are left out.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct TraceComparison {
    /// The first trace (A).
    pub a: ComparedTrace,
    /// The second trace (B).
    pub b: ComparedTrace,
    /// B's running time minus A's, in seconds.
    pub running_time_difference_s: f64,
    /// Every measure that differs.
    pub rows: Vec<ComparedMeasure>,
}

/// One of the two traces.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ComparedTrace {
    /// The trace's path as given on the command line.
    pub trace: String,
    /// The workload's running time (from the end of the initial sleep to the traced
    /// command's exit), in seconds.
    pub running_time_s: f64,
    /// The traced command's critical path over the workload (as `critical-path` walks
    /// it); null when the trace names no command.
    pub critical_path: Option<ComparedPath>,
}

/// One trace's critical path: its running time by cause.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ComparedPath {
    /// `critical-path`'s sentence to quote ("of the 0.16 s, 0.05 s running, ...: the
    /// scheduler cost at most 0% of the 0.15 s known").
    pub sentence: String,
    /// The running time by cause; the parts sum to it (in ns).
    pub breakdown: PathBreakdown,
    /// `breakdown.scheduler_ns` over the known time (the running time less
    /// `breakdown.unknown_ns`); null when none is known.
    pub scheduler_share: Option<f64>,
}

/// One measure in both traces.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ComparedMeasure {
    /// The measure, e.g. `hackbench: waiting`, `CPU 3: idle`, `overload: incidents`,
    /// `critical path: scheduler`, `hackbench: wakeup p99`.
    pub what: String,
    /// Seconds of the running time (`s`), a wakeup latency percentile in seconds
    /// (`latency`), or a count (`count`).
    pub unit: MeasureUnit,
    /// Its value in A.
    pub a: f64,
    /// Its value in B.
    pub b: f64,
    /// B − A.
    pub difference: f64,
    /// A time measure's difference over the difference in running time (how much of it
    /// the measure could account for; the critical path's parts sum to the running time,
    /// so their shares sum to 1); `null` for latencies and counts, and when the running
    /// times are equal.
    pub share_of_running_time_difference: Option<f64>,
}

/// What a measure counts: seconds of the running time, a latency, or events.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub enum MeasureUnit {
    #[serde(rename = "s")]
    Seconds,
    /// A percentile of one command's wakeup latencies, in seconds: a distribution's
    /// shift, not a part of the running time (no share).
    #[serde(rename = "latency")]
    Latency,
    #[serde(rename = "count")]
    Count,
}
