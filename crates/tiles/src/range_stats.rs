//! The statistics as the page reads them (per command and per CPU, times relative to the
//! view's origin): one shape for the viewer's server and for the report that embeds it.

use analysis::stats::Stats;
use figures::palette::color_of_name;
use model::Nanos;
use serde_json::{Value, json};

/// `stats` as the page's JSON: at most `rows` commands (`commandCount` says how many there
/// were), every CPU; `relative` turns a time into the page's ns from its origin.
pub fn stats_json(stats: &Stats, rows: usize, relative: impl Fn(Nanos) -> i64) -> Value {
    let time = |t: Option<Nanos>| t.map(&relative);
    let commands: Vec<Value> = stats
        .rows
        .iter()
        .take(rows)
        .map(|row| {
            json!({"comm": row.comm, "pids": row.pids, "firstRun": time(row.first_run), "lastRun": time(row.last_run),
                   "runtime": row.runtime_ns, "switches": row.switches, "wait": row.wait_ns,
                   "maxWait": row.max_wait_ns, "migrations": row.migrations,
                   "color": color_of_name(&row.comm).hex()})
        })
        .collect();
    let cpus: Vec<Value> = stats
        .cpus
        .iter()
        .map(|c| {
            json!({"cpu": c.cpu.0, "busy": c.busy_ns, "idle": c.idle_ns, "uncertain": c.uncertain_ns,
                   "waiting": c.waiting_ns})
        })
        .collect();
    json!({
        "start": relative(stats.window.start), "end": relative(stats.window.end),
        "commands": commands, "commandCount": stats.rows.len(), "cpus": cpus,
    })
}
