//! `_schedlens.json` at the root of a Parquet dataset (`schedlens export --format parquet
//! -o DS`): what the dataset holds, one entry per trace, rewritten (atomically, under a
//! lock) by every export into it. Read back by the next export to add its trace.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The traces of a Parquet dataset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dataset {
    /// The schedlens version that last wrote this file.
    pub schedlens_version: String,
    /// Every trace the dataset holds, ordered by partition name.
    pub traces: Vec<DatasetTrace>,
}

/// One trace of a dataset: its partition and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DatasetTrace {
    /// The partition value: the trace's rows are in `TABLE/trace=NAME/` and its `trace`
    /// column is NAME.
    pub trace: String,
    /// The recording it was exported from: its absolute path (symbolic links resolved)
    /// when exported.
    pub source: String,
    /// `trace.dat`, `perf.data` or `perfetto`.
    pub format: String,
    /// CPUs of the recording.
    pub cpus: u32,
    /// Raw events exported (the rows of its `events/*` tables).
    pub events: u64,
    /// The recording's first event, in ns of the trace clock.
    pub start_ns: u64,
    /// The recording's last event, in ns of the trace clock.
    pub end_ns: u64,
    /// The exported window's start (the tables are clipped to it), in ns.
    pub window_start_ns: u64,
    /// The exported window's end, in ns.
    pub window_end_ns: u64,
    /// Events the kernel reported lost.
    pub lost_events: u64,
    /// Whether the recording was damaged: the tables hold what could be read
    /// (`meta/trace=NAME/meta.json` says where).
    pub partial: bool,
    /// The schedlens version that exported it.
    pub schedlens_version: String,
}
