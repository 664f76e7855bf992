//! Every JSON document schedlens writes for a user or for its page, defined once.
//!
//! A document is a plain struct deriving `Serialize` (the bytes users and golden files
//! see: fields in declaration order) and `JsonSchema` (its doc comments become the
//! schema's descriptions). [`catalogue`] lists every document; `docs/json.md` is
//! rendered from it ([`markdown`]) and a test fails when a field changes without that
//! file being regenerated (`SCHEDLENS_BLESS=1 cargo test -p documents`). Producers fill
//! these structs from their own results; nothing here computes anything.

pub mod check;
pub mod compare;
pub mod critical_path;
pub mod dataset;
pub mod latency;
pub mod page;
pub mod runs;
mod schema_doc;
pub mod stats;
pub mod watch;

pub use schema_doc::markdown;

use schemars::{JsonSchema, Schema, SchemaGenerator};

/// One document: where users meet it, what it is, and its schema.
pub struct Entry {
    /// A short name, e.g. `check` or `viewer meta`.
    pub name: &'static str,
    /// Where it is written or served, e.g. `schedlens check --format json`.
    pub where_: &'static str,
    pub schema: Schema,
}

fn entry<T: JsonSchema>(name: &'static str, where_: &'static str) -> Entry {
    let mut generator = SchemaGenerator::default();
    Entry { name, where_, schema: generator.root_schema_for::<T>() }
}

/// Every document, in the order `docs/json.md` lists them.
pub fn catalogue() -> Vec<Entry> {
    vec![
        entry::<check::CheckReport>("check", "`schedlens check --format json`, on stdout"),
        entry::<Vec<stats::StatsRow>>(
            "stats",
            "`schedlens stats --format json` (`--by command` or `--by task`), on stdout: an array of rows, one per command or task",
        ),
        entry::<Vec<stats::CpuStatsRow>>(
            "stats by CPU",
            "`schedlens stats --by cpu --format json`, on stdout: an array of rows, one per CPU",
        ),
        entry::<critical_path::CriticalPathReport>(
            "critical path",
            "`schedlens critical-path --format json`, on stdout",
        ),
        entry::<latency::LatencyReport>("latency", "`schedlens latency --format json`, on stdout"),
        entry::<Vec<latency::PerfLatencyRow>>(
            "latency --perf",
            "`schedlens latency --perf --format json`, on stdout: an array of rows, one per task, as `perf sched latency -p` computes them",
        ),
        entry::<compare::TraceComparison>("compare", "`schedlens compare A B --format json`, on stdout"),
        entry::<dataset::Dataset>(
            "parquet dataset",
            "`_schedlens.json` at the root of a `schedlens export --format parquet` dataset",
        ),
        entry::<runs::Results>("runs results", "`results.json` in a `schedlens runs` results directory"),
        entry::<runs::RunsSummary>("runs summary", "`summary.json` in a `schedlens runs` results directory"),
        entry::<watch::WatchIncident>(
            "watch incident",
            "`schedlens watch --format json`, on stdout: one line per incident as it is found",
        ),
        entry::<watch::WatchSummary>(
            "watch summary",
            "`schedlens watch --format json`, on stdout: one line on exit and on SIGUSR1",
        ),
        entry::<page::Meta>(
            "viewer meta",
            "`schedlens view`: `GET /api/meta`, and in the page it serves as `<script id=\"meta\">`",
        ),
        entry::<page::ServerStatus>("viewer status", "`schedlens view`: `GET /api/status`"),
        entry::<page::RunAt>("viewer run", "`schedlens view`: `GET /api/at?trace&cpu&t&span`"),
        entry::<page::TaskAnswer>("viewer task", "`schedlens view`: `GET /api/task?trace&task[&start&end]`"),
        entry::<page::RangeStats>(
            "viewer range statistics",
            "`schedlens view`: `GET /api/stats?trace&start&end[&forked]`",
        ),
        entry::<page::StateAt>(
            "viewer state",
            "`schedlens view`: `GET /api/state?trace&task&t&span`, the followed task's state track under the mouse",
        ),
        entry::<page::QueueAt>(
            "viewer runqueue",
            "`schedlens view`: `GET /api/queue?trace&cpu&t&span`, the runqueue strip under the mouse",
        ),
        entry::<page::PagePath>(
            "viewer critical path",
            "`schedlens view`: `GET /api/path?trace[&task][&start&end]`, the traced command's (or a task's) critical path",
        ),
        entry::<page::Incidents>("viewer incidents", "`schedlens view`: `GET /api/incidents?trace`"),
        entry::<page::Markers>("viewer markers", "`schedlens view`: `GET /api/markers?trace[&start&end&limit]`"),
        entry::<page::NotReady>(
            "viewer not ready",
            "`schedlens view`: the answer (HTTP 202) to `/api/incidents` and `/api/markers` until they are ready",
        ),
        entry::<page::Pending>(
            "viewer pending",
            "`schedlens view`: the answer (HTTP 202) to `/api/meta` while the models are built",
        ),
        entry::<page::ErrorMessage>("viewer error", "`schedlens view`: every answer with HTTP status 4xx or 5xx"),
        entry::<page::ReportDocument>(
            "report document",
            "`schedlens report`: the page's data, embedded in the HTML file (zlib, base64)",
        ),
    ]
}
