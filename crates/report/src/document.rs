//! The page's JSON document: what `schedlens view`'s server answers to `/api/meta`,
//! `/api/incidents`, `/api/markers` and `/api/stats` (of the whole trace), in the same
//! shapes so the shared page code reads them unchanged; the tile list (part name →
//! offset and length in the bundle); per trace the colours of its tasks (to name the
//! task under the mouse from a tile's colour) and the migration matrix.

use crate::bundle::{Bundle, base64_len};
use crate::embed::{Coverage, TILE_COLUMNS};
use crate::{Analysis, ReportTrace, relative};
use figures::graph::row_order;
use figures::palette::color_of;
use model::{Nanos, TaskId};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Incidents listed in the page's side panel at most.
const INCIDENTS: usize = 1000;
/// Command rows of the statistics at most.
const COMMANDS: usize = 200;
/// Markers kept at most (an even sample of them when there are more).
const MARKERS: usize = 5000;

/// The document as JSON text.
pub fn document(
    traces: &[ReportTrace],
    analyses: &[Analysis],
    coverage: &[Coverage],
    bundle: &Bundle,
    options: &crate::Options,
) -> String {
    let tiles: Map<String, Value> =
        bundle.parts().iter().map(|(name, offset, length)| (name.clone(), json!([offset, length]))).collect();
    let doc = json!({
        "meta": meta(traces, options),
        "tiles": tiles,
        "traces": traces.iter().zip(analyses).enumerate().map(|(n, (trace, analysis))| {
            trace_json(trace, analysis, coverage.get(n))
        }).collect::<Vec<_>>(),
    });
    doc.to_string()
}

/// The base64 size of the document without tiles, compressed.
pub fn estimate(traces: &[ReportTrace], analyses: &[Analysis]) -> usize {
    let options = crate::Options { size_budget: 0, socket_order: false };
    let text = document(traces, analyses, &[], &Bundle::default(), &options);
    let mut bundle = Bundle::default();
    bundle.add(String::new(), text.as_bytes());
    base64_len(bundle.size())
}

fn meta(traces: &[ReportTrace], options: &crate::Options) -> Value {
    let list: Vec<Value> = traces
        .iter()
        .map(|trace| {
            let model = &trace.model;
            let cpus = model.cpus().len();
            let lost = model.lost();
            json!({
                "name": trace.name,
                "cpus": cpus,
                "start": relative(model.start(), trace.origin),
                "end": relative(model.end(), trace.origin) + 1,
                "origin": trace.origin.0.to_string(),
                "tasks": model.tasks().len(),
                "lostEvents": lost.events,
                "lostUnknown": lost.unknown_losses,
                "rowsByNumber": view::rows_json(&row_order(cpus, trace.topology.as_ref(), false)),
                "rowsBySocket": trace.topology.as_ref().map(|t| view::rows_json(&row_order(cpus, Some(t), true))),
                "places": view::places_json(trace.topology.as_ref()),
            })
        })
        .collect();
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "tileColumns": TILE_COLUMNS,
        "maxColumns": TILE_COLUMNS,
        "maxLevel": view::tiles::MAX_LEVEL,
        "traces": list,
        "initial": {"window": null, "forked": false, "socketOrder": options.socket_order},
    })
}

fn trace_json(trace: &ReportTrace, analysis: &Analysis, coverage: Option<&Coverage>) -> Value {
    let model = &trace.model;
    let origin = trace.origin;
    let rel = |t: Nanos| relative(t, origin);
    let incidents: Vec<Value> = analysis
        .findings
        .incidents
        .iter()
        .take(INCIDENTS)
        .enumerate()
        .map(|(rank, i)| {
            json!({"rank": rank + 1, "kind": i.kind.name(), "start": rel(i.start), "end": rel(i.end),
                   "cpus": i.cpus.iter().map(|c| c.0).collect::<Vec<_>>(),
                   "pids": i.pids.iter().map(|p| p.0).collect::<Vec<_>>(), "tasks": [],
                   "lostCpuNs": i.lost_cpu_ns, "possiblyPinned": i.pinning != analysis::check::Pinning::No, "explanation": i.explanation})
        })
        .collect();
    let stats = &analysis.stats;
    let step = trace.markers.len().div_ceil(MARKERS).max(1);
    let markers: Vec<Value> = trace
        .markers
        .iter()
        .step_by(step)
        .map(|m| json!({"t": rel(m.time), "cpu": m.cpu.0, "pid": m.pid.0, "comm": null, "text": m.text}))
        .collect();
    json!({
        "incidents": {"status": "ready", "incidents": incidents, "total": analysis.findings.incidents.len()},
        "stats": view::stats_json(stats, COMMANDS, rel),
        "markers": markers,
        "markerTotal": trace.markers.len(),
        "colors": task_colors(model),
        "migrations": {"cpus": analysis.findings.migrations.cpus, "pairs": analysis.findings.migrations.pairs.iter()
            .map(|&(from, to, count)| json!([from.0, to.0, count])).collect::<Vec<_>>()},
        "finestLevel": coverage.map(|c| c.finest),
        "topLevel": coverage.map(|c| c.top),
        "zoomedIncidents": coverage.map(|c| c.incidents.clone()),
    })
}

/// Per timeline colour (`#rrggbb`), the tasks drawn in it: `[pid, command]`, by pid.
fn task_colors(model: &model::Model) -> Map<String, Value> {
    let mut by_color: BTreeMap<String, Vec<(i32, &str)>> = BTreeMap::new();
    for (id, task) in model.tasks().iter() {
        if id == TaskId::IDLE {
            continue;
        }
        let comm = model.comms().name(task.last_comm());
        by_color.entry(color_of(task.pid.0 as u64).hex()).or_default().push((task.pid.0, comm));
    }
    by_color
        .into_iter()
        .map(|(color, mut tasks)| {
            tasks.sort_unstable();
            tasks.dedup();
            (color, json!(tasks.iter().map(|(pid, comm)| json!([pid, comm])).collect::<Vec<_>>()))
        })
        .collect()
}
