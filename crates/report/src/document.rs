//! The page's JSON document (`documents::page::ReportDocument`): what `schedlens view`'s
//! server answers to `/api/meta`, `/api/incidents`, `/api/markers` and `/api/stats` (of
//! the whole trace), in the same shapes (filled by the same `tiles` functions) so the
//! shared page code reads them unchanged; the tile list (part name → offset and length in
//! the bundle); per trace the colours of its tasks (to name the task under the mouse from
//! a tile's colour), the migration matrix and the traced command's critical path (as
//! `/api/path` answers it for the whole trace).

use crate::bundle::{Bundle, base64_len};
use crate::embed::{Coverage, TILE_COLUMNS};
use crate::{Analysis, ReportTrace};
use documents::page::{MigrationCounts, ReportDocument};
use figures::palette::color_of;
use model::{Nanos, TaskId};
use std::collections::BTreeMap;
use tiles::Initial;

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
    let initial = Initial { window: None, forked: false, socket_order: options.socket_order };
    let document = ReportDocument {
        meta: tiles::meta(traces.iter().map(|t| &t.shown), TILE_COLUMNS, TILE_COLUMNS, &initial),
        tiles: bundle.parts().iter().map(|(name, offset, length)| (name.clone(), [*offset, *length])).collect(),
        traces: traces
            .iter()
            .zip(analyses)
            .enumerate()
            .map(|(n, (trace, analysis))| trace_document(trace, analysis, coverage.get(n)))
            .collect(),
    };
    serde_json::to_string(&document).expect("a document is JSON")
}

/// The base64 size of the document without tiles, compressed.
pub fn estimate(traces: &[ReportTrace], analyses: &[Analysis]) -> usize {
    let options = crate::Options { size_budget: 0, socket_order: false };
    let text = document(traces, analyses, &[], &Bundle::default(), &options);
    let mut bundle = Bundle::default();
    bundle.add(String::new(), text.as_bytes());
    base64_len(bundle.size())
}

fn trace_document(
    trace: &ReportTrace,
    analysis: &Analysis,
    coverage: Option<&Coverage>,
) -> documents::page::EmbeddedTrace {
    let shown = &trace.shown;
    let relative = |t| shown.relative(t);
    let migrations = &analysis.findings.migrations;
    documents::page::EmbeddedTrace {
        incidents: tiles::incidents::incident_list(shown, &analysis.findings.incidents, INCIDENTS, |_| Vec::new()),
        stats: tiles::range_stats::range_stats(&analysis.stats, COMMANDS, relative),
        markers: tiles::markers::sample(shown, &trace.markers, MARKERS),
        marker_total: trace.markers.len(),
        colors: task_colors(&shown.model),
        migrations: MigrationCounts {
            cpus: migrations.cpus,
            pairs: migrations.pairs.iter().map(|&(from, to, count)| (from.0, to.0, count)).collect(),
        },
        finest_level: coverage.map(|c| c.finest),
        top_level: coverage.map(|c| c.top),
        zoomed_incidents: coverage.map(|c| c.incidents.clone()),
        critical_path: analysis
            .path
            .as_ref()
            .map(|walked| tiles::path::page_path(shown, walked, shown.model.start(), Nanos(shown.model.end().0 + 1))),
    }
}

/// Per timeline colour (`#rrggbb`), the tasks drawn in it: `[pid, command]`, by pid.
fn task_colors(model: &model::Model) -> BTreeMap<String, Vec<(i32, String)>> {
    let mut by_color: BTreeMap<String, Vec<(i32, String)>> = BTreeMap::new();
    for (id, task) in model.tasks().iter() {
        if id == TaskId::IDLE {
            continue;
        }
        let comm = model.comms().name(task.last_comm());
        by_color.entry(color_of(task.pid.0 as u64).hex()).or_default().push((task.pid.0, comm.to_string()));
    }
    for tasks in by_color.values_mut() {
        tasks.sort_unstable();
        tasks.dedup();
    }
    by_color
}
