//! Repeated runs and knob sweeps, and the comparison of two traces: the experiment the
//! schedgraph paper starts from (run a benchmark ten times, sort the running times, trace
//! runs, compare the fastest with the slowest, and after a change compare before with
//! after), and the sysctl-tunables talk's sweeps of scheduler knobs, with the statistics
//! that say whether a difference is real and the scheduler metrics that go with it.
//!
//! - [`knobs`]: knobs named as sysctl, debugfs or /proc and /sys paths, probed before a
//!   sweep and restored after it on every way out;
//! - [`exec`]: running the command and measuring it;
//! - [`sweep`]: the interleaved run loop, untraced or recorded;
//! - [`profile`]: what a trace says about the scheduler during the workload (the one
//!   adapter that reads `check`'s findings);
//! - [`stats`]: quantiles, bootstrap, Mann-Whitney U, Spearman;
//! - [`summary`] and [`report`]: the summary text, the results files and figures;
//! - [`compare`]: the differences between two traces, ranked by how much of the
//!   difference in running time they account for.

pub mod compare;
pub mod exec;
pub mod knobs;
pub mod profile;
pub mod report;
pub mod results;
pub mod stats;
pub mod summary;
pub mod sweep;

pub use results::Results;
pub use sweep::{Progress, SweepRequest, sweep};

use std::path::{Path, PathBuf};

/// Why a sweep, a report or a comparison failed.
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
