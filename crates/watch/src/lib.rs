//! `schedlens watch`'s core, free of side effects: a flight recorder of scheduler
//! incidents. Raw ftrace pages go into a bounded per-CPU [`Ring`] holding the last
//! `--keep` seconds; a watermark over the CPUs says up to when everything has arrived;
//! the [`Detector`] runs `check`'s episode search on the ring's recent part every tick and
//! reports each episode of waste once, at its end; [`write_incident`] cuts the episode
//! and the time before it out of the ring as a trace.dat with the recorded context.
//!
//! Tracefs, threads, signals and output are the CLI's and `record`'s (`record::live`);
//! here, pages and times come in as plain data, so a recorded trace replayed page by page
//! in real-time order exercises exactly what a live machine does (the tests).

mod detect;
mod ring;
mod snapshot;

pub use detect::{DetectOptions, Detector, Totals};
pub use ring::{Loss, Page, Ring};
pub use snapshot::{Setup, in_memory, snapshot};

use analysis::check::Incident;
use std::path::Path;
use tracedat::FileVersion;

/// Why watching failed.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("writing a trace of the ring: {0}")]
    Write(#[from] tracedat::WriteError),
    #[error("reading the ring back: {0}")]
    Read(#[from] tracedat::Error),
}

/// The stretch an incident file covers: `keep_ns` before the episode, up to `until_ns`
/// (the watermark when it was found: a little after its end).
pub fn incident_span(incident: &Incident, keep_ns: u64, until_ns: u64) -> (u64, u64) {
    (incident.start.0.saturating_sub(keep_ns), until_ns.max(incident.end.0))
}

/// Writes an incident's stretch of the ring to `path` as a trace.dat; returns its size.
pub fn write_incident(
    setup: &Setup,
    ring: &Ring,
    span: (u64, u64),
    version: FileVersion,
    path: &Path,
) -> Result<u64, WatchError> {
    let spill_dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let writer = snapshot(setup, ring, span, version, spill_dir)?;
    Ok(writer.write_file(path)?)
}
