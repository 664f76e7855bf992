//! `schedlens export --format parquet -o DIR`: the model as tables and the raw events per
//! type, one Parquet file each, plus the trace's metadata as JSON — laid out by trace in
//! Hive-style partitions (see [`layout`]) so that many traces exported into one directory
//! are one dataset for DuckDB or Spark. docs/export.md documents the schema with queries.
//!
//! The model tables and the raw events are written on two threads at once.

mod columns;
pub mod layout;
mod model_tables;
mod raw_events;

pub use layout::partition_value;

use crate::{ExportError, Input, ProgressFn, Result};
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

/// Writes the tables of `input` into `dir`, in the partition of `trace_name`.
pub fn write(input: &Input<'_>, dir: &Path, trace_name: &str, progress: ProgressFn<'_>) -> Result<ParquetSummary> {
    let layout = Layout::new(dir, trace_name);
    layout.clear()?;
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
    Ok(ParquetSummary { trace: layout.trace_value().to_string(), tables, damage: raw.damage })
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
