//! `schedlens export --format parquet -o DIR`: the model as tables and the raw events per
//! type, one Parquet file each, plus the trace's metadata as JSON — laid out by trace in
//! Hive-style partitions (see [`layout`]) so that many traces exported into one directory
//! are one dataset for DuckDB or Spark. docs/export.md documents the schema with queries.
//!
//! The model tables and the raw events are written on two threads at once, into a
//! staging directory, then committed into the dataset and listed in its `_schedlens.json`
//! (see [`dataset`]).

mod columns;
pub mod dataset;
pub mod layout;
mod model_tables;
mod raw_events;

pub use dataset::{MANIFEST, read_manifest};
pub use layout::{partition_name, partition_value};

use crate::{ExportError, Input, ProgressFn, Result};
use documents::dataset::DatasetTrace;
use layout::Layout;
use serde_json::json;
use std::path::Path;
use tracedat::EventSource;

/// What was written.
#[derive(Clone, Debug, Default)]
pub struct ParquetSummary {
    /// The trace's partition value (`trace=...`).
    pub trace: String,
    /// (table, rows) for the model tables, then `events/<name>` tables.
    pub tables: Vec<(String, u64)>,
    /// Damage the raw-event pass met (the tables hold what could be read).
    pub damage: Vec<String>,
}

/// Where a trace came from, for the dataset's manifest.
pub struct Source<'a> {
    /// The recording's absolute path.
    pub path: &'a Path,
    /// Whether reading it met damage the export does not see (the model's).
    pub damaged: bool,
}

/// Writes the tables of `input` into the dataset `dir`, replacing the partition of
/// `trace_name`, and lists the trace in the dataset's manifest.
pub fn write(
    input: &Input<'_>,
    dir: &Path,
    trace_name: &str,
    source: &Source<'_>,
    progress: ProgressFn<'_>,
) -> Result<ParquetSummary> {
    let staging = dataset::Staging::new(dir, &partition_value(trace_name))?;
    let layout = Layout::new(staging.dir(), trace_name);
    let (model_tables, raw) = std::thread::scope(|scope| {
        let model_tables = std::thread::Builder::new()
            .name("parquet-model".into())
            .spawn_scoped(scope, || model_tables::write_all(input, &layout))
            .expect("a thread can be started");
        let raw = raw_events::write(input.trace, input.scope, &layout, progress);
        (model_tables.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), raw)
    });
    let (model_tables, raw) = (model_tables?, raw?);
    let mut tables: Vec<(String, u64)> = model_tables.into_iter().map(|(t, n)| (t.to_string(), n)).collect();
    tables.extend(raw.tables.iter().map(|(t, n)| (format!("events/{t}"), *n)));
    let meta = metadata(input, &layout, &tables, &raw);
    let meta_path = layout.meta_file();
    if let Some(parent) = meta_path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| ExportError::io(parent, e))?;
    }
    let text = serde_json::to_string_pretty(&meta).expect("JSON values serialize");
    std::fs::write(&meta_path, text + "\n").map_err(|e| ExportError::io(&meta_path, e))?;
    staging.commit(manifest_entry(input, layout.trace_value(), source, &raw))?;
    Ok(ParquetSummary { trace: layout.trace_value().to_string(), tables, damage: raw.damage })
}

fn manifest_entry(input: &Input<'_>, trace: &str, source: &Source<'_>, raw: &raw_events::RawSummary) -> DatasetTrace {
    let format = match input.trace.kind() {
        inputs::Kind::TraceDat => "trace.dat",
        inputs::Kind::PerfData => "perf.data",
        inputs::Kind::Perfetto => "perfetto",
    };
    DatasetTrace {
        trace: trace.to_string(),
        source: source.path.display().to_string(),
        format: format.to_string(),
        cpus: input.trace.cpu_count(),
        events: raw.tables.iter().map(|(_, rows)| rows).sum(),
        start_ns: input.model.start().0,
        end_ns: input.model.end().0,
        window_start_ns: input.scope.window.start.0,
        window_end_ns: input.scope.window.end.0,
        lost_events: raw.lost,
        partial: source.damaged || !raw.damage.is_empty(),
        schedlens_version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

fn metadata(
    input: &Input<'_>,
    layout: &Layout,
    tables: &[(String, u64)],
    raw: &raw_events::RawSummary,
) -> serde_json::Value {
    let (trace, model, scope) = (input.trace, input.model, input.scope);
    let file = FileFacts::of(trace);
    let anomalies: Vec<serde_json::Value> = model
        .anomalies()
        .iter()
        .map(|(kind, count, first)| json!({"kind": format!("{kind:?}"), "count": count, "first_ns": first.0, "description": kind.description()}))
        .collect();
    json!({
        "trace": layout.trace_value(),
        "path": trace.input(),
        "schedlens_version": env!("CARGO_PKG_VERSION"),
        "file_version": file.version,
        "compression": file.compression,
        "clock": file.clock,
        "cpus": trace.cpu_count(),
        "uname": file.uname,
        "buffers": file.buffers,
        "model_buffer": input.buffer,
        "start_ns": model.start().0,
        "end_ns": model.end().0,
        "window": {"start_ns": scope.window.start.0, "end_ns": scope.window.end.0, "origin_ns": scope.origin.0},
        "filter": {"forked_only": scope.filter.forked_only},
        "lost_events": raw.lost,
        "lost_unknown": raw.lost_unknown,
        "events_without_format": raw.unknown,
        "damage": raw.damage,
        "anomalies": anomalies,
        "tables": tables.iter().map(|(t, n)| json!({"table": t, "rows": n})).collect::<Vec<_>>(),
    })
}

/// What meta.json says about the file: trace.dat's header and options, or perf.data's
/// features (version "perf.data", no compression or clock named, one buffer "").
struct FileFacts {
    version: serde_json::Value,
    compression: String,
    clock: Option<String>,
    uname: Option<String>,
    buffers: Vec<String>,
}

impl FileFacts {
    fn of(trace: &inputs::Input) -> FileFacts {
        match trace {
            inputs::Input::TraceDat(trace) => {
                let meta = trace.metadata();
                FileFacts {
                    version: json!(meta.header.version),
                    compression: format!("{:?}", meta.header.compression),
                    clock: trace.clock().map(str::to_string),
                    uname: meta.options.uname.clone(),
                    buffers: trace.buffers().iter().map(|b| b.name.clone()).collect(),
                }
            }
            inputs::Input::PerfData(perf) => FileFacts {
                version: json!("perf.data"),
                compression: "None".into(),
                clock: None,
                uname: perf.features().os_release.clone(),
                buffers: vec![String::new()],
            },
            inputs::Input::Perfetto(_) => FileFacts {
                version: json!("perfetto"),
                compression: "None".into(),
                clock: None,
                uname: None,
                buffers: vec![String::new()],
            },
        }
    }
}
