//! The scheduling model and the raw events in the formats other tools read, so that a
//! trace.dat can be looked at where users already work:
//! - [`perfetto`]: Perfetto's protobuf trace (per-CPU ftrace bundles, as Perfetto's own
//!   recorder writes them) plus schedlens's counters and `check`'s incidents as tracks;
//! - [`parquet`]: the model as tables and the raw events per type, one Parquet file each,
//!   laid out by trace (Hive-style) so that DuckDB or Spark query a fleet of traces at once;
//! - `otf2` (cargo feature `otf2`): an OTF2 archive for Vampir, following the VAMPIR
//!   paper's mapping (CPUs as locations, tasks as regions, migrations as messages).
//!
//! Every writer takes the same [`Scope`] (window and task filter, resolved once by the
//! caller) and reports its work through a progress callback. The heavy dependencies
//! (parquet, prost, the OTF2 C library) live here so that the reader and the model stay
//! light.

pub mod parquet;
pub mod perfetto;
mod protobuf;
mod scope;

#[cfg(feature = "otf2")]
pub mod otf2;

pub use scope::{EventFilter, Scope};

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: writing Parquet: {source}")]
    Parquet { path: String, source: ::parquet::errors::ParquetError },
    #[error("OTF2 library: {call} failed with code {code}")]
    Otf2 { call: &'static str, code: i32 },
    #[error("{0}")]
    Invalid(String),
}

impl ExportError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> ExportError {
        ExportError::Io { path: path.display().to_string(), source }
    }
}

pub type Result<T> = std::result::Result<T, ExportError>;

/// What every writer exports: a trace, its model (built from `buffer`) and the part of it
/// to export.
pub struct Input<'a> {
    /// The recording: trace.dat or perf.data.
    pub trace: &'a inputs::Input,
    pub model: &'a model::Model,
    /// The buffer the model was built from ("" is the top buffer).
    pub buffer: &'a str,
    pub scope: &'a Scope,
    /// `check` episodes that lost less CPU time than this are left out (as `check
    /// --min-lost`).
    pub min_lost: model::Nanos,
    /// The tasks' CPU affinity, when the trace recorded it (for `check`'s pinning).
    pub affinity: Option<&'a analysis::check::Affinity>,
}

impl Input<'_> {
    /// `check`'s incidents in the scope, ranked. Writers compute them on the thread that
    /// needs them, beside the raw-event pass.
    pub fn incidents(&self) -> Vec<analysis::check::Incident> {
        let request = analysis::check::CheckRequest {
            window: self.scope.window,
            filter: &self.scope.filter,
            min_lost: self.min_lost,
            min_overload: analysis::check::DEFAULT_MIN_OVERLOAD,
            affinity: self.affinity,
        };
        analysis::check::check(self.model, &request).incidents
    }
}

/// The events of the buffer the model was built from, merged in time order (a
/// perf.data has one).
#[cfg(feature = "otf2")]
pub(crate) fn buffer_events<'t>(trace: &'t inputs::Input, buffer: &str) -> inputs::InputItems<'t> {
    use tracedat::EventSource;
    match trace {
        inputs::Input::TraceDat(trace) => {
            let selection =
                tracedat::Selection { buffers: Some(vec![buffer.to_string()]), ..tracedat::Selection::all() };
            inputs::InputItems::TraceDat(trace.events_of(&selection))
        }
        inputs::Input::PerfData(perf) => inputs::InputItems::PerfData(perf.all_events()),
        inputs::Input::Perfetto(trace) => inputs::InputItems::Perfetto(trace.all_events()),
    }
}

/// One CPU's events of the buffer the model was built from, and the bytes they take.
pub(crate) fn cpu_events<'t>(trace: &'t inputs::Input, buffer: &str, cpu: u32) -> (inputs::InputItems<'t>, u64) {
    use tracedat::EventSource;
    match trace {
        inputs::Input::TraceDat(trace) => {
            let selection = tracedat::Selection::one_cpu(buffer, cpu);
            (inputs::InputItems::TraceDat(trace.events_of(&selection)), trace.data_size(&selection))
        }
        inputs::Input::PerfData(perf) => {
            let size = perf.cpu_sizes().iter().find(|&&(c, _)| c == cpu).map_or(0, |&(_, size)| size);
            (inputs::InputItems::PerfData(perf.cpu_events(cpu)), size)
        }
        inputs::Input::Perfetto(trace) => {
            let size = trace.cpu_sizes().iter().find(|&&(c, _)| c == cpu).map_or(0, |&(_, size)| size);
            (inputs::InputItems::Perfetto(trace.cpu_events(cpu)), size)
        }
    }
}

/// Progress: called now and then with (bytes of trace data read so far, total).
pub type ProgressFn<'a> = &'a mut dyn FnMut(u64, u64);
