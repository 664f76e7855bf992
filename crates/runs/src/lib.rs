//! Repeated runs and knob sweeps: the experiment the schedgraph paper starts from (run a
//! benchmark ten times, sort the running times, trace runs, compare the fastest with the
//! slowest), and the sysctl-tunables talk's sweeps of scheduler knobs. This crate has the
//! side effects (knobs, processes, signals, recording, files); what the runs and traces
//! say (metrics, statistics, summary, comparison) is the `experiment` crate's.
//!
//! - [`knobs`]: knobs named as sysctl, debugfs or /proc and /sys paths, probed before a
//!   sweep and restored after it on every way out;
//! - [`exec`]: running the command and measuring it (signals through `restore`);
//! - [`sweep`]: the interleaved run loop, untraced or recorded, with each trace's metrics;
//! - [`perf`]: a run recorded by `perf record` instead (`--recorder perf`);
//! - [`files`]: the results directory's files, written and read back.

pub mod exec;
pub mod files;
pub mod knobs;
pub mod perf;
pub mod sweep;

pub use sweep::{Progress, Recorder, SweepRequest, sweep};

use std::path::{Path, PathBuf};

/// Why a sweep, or writing or reading its results, failed.
#[derive(Debug, thiserror::Error)]
pub enum RunsError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Knob(#[from] knobs::KnobError),
    #[error(transparent)]
    Exec(#[from] exec::ExecError),
    #[error("recording: {0}")]
    Record(#[from] record::RecordError),
    #[error(transparent)]
    Trace(#[from] tracedat::Error),
    #[error(transparent)]
    Model(#[from] model::ModelError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not the results of `schedlens runs`: {source}", path.display())]
    Results {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: {source}", path.display())]
    Figure {
        path: PathBuf,
        #[source]
        source: render::Error,
    },
    #[error("{context}: {source}")]
    System {
        context: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl RunsError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> RunsError {
        RunsError::Io { path: path.to_path_buf(), source }
    }
}
