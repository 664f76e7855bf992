//! `schedlens compare --format json`: two traces' workloads measure by measure.

use schemars::JsonSchema;
use serde::Serialize;

/// What differs between two traces of the same workload: time measures first, largest
/// difference first, then counts, largest relative change first. Measures equal in both
/// traces are left out.
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
}

/// One measure in both traces.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ComparedMeasure {
    /// The measure, e.g. `hackbench: waiting`, `CPU 3: idle`, `overload: incidents`.
    pub what: String,
    /// Seconds (`s`) or a count (`count`).
    pub unit: MeasureUnit,
    /// Its value in A.
    pub a: f64,
    /// Its value in B.
    pub b: f64,
    /// B − A.
    pub difference: f64,
    /// A time measure's difference over the difference in running time (how much of it
    /// the measure could account for); `null` for counts and when the running times are
    /// equal.
    pub share_of_running_time_difference: Option<f64>,
}

/// What a measure counts: seconds or events.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub enum MeasureUnit {
    #[serde(rename = "s")]
    Seconds,
    #[serde(rename = "count")]
    Count,
}
