//! `schedlens report`: one self-contained HTML file that tells the story of one or several
//! traces, to attach to a bug report or a mailing-list post — the trace and the machine,
//! the timeline and running/waiting plot to zoom, pan and hover, `check`'s incidents
//! linked to the timeline, the traced command's critical path (the sentence to quote and
//! its parts) and the wakeup latency (its histogram per command, as `latency --figure`
//! draws it), per-command and per-CPU statistics, the migration heat map,
//! and with several traces the `compare` table (times then count from each trace's
//! workload, as `compare` measures them). A run series (`schedlens runs`'s results,
//! `series`) adds its statistics and figure, with its fastest and slowest runs as the
//! traces when they were recorded.
//!
//! The interactive part is `schedlens view`'s own page (crates/tiles/web) fed by a second
//! data source: instead of asking the server for tiles, it inflates them from a
//! level-of-detail pyramid embedded in the file (`embed`, built with the viewer's tile
//! engine, crates/tiles), as deep as the size budget allows. The rest is plain HTML written here, so it
//! reads without script. The same input gives the same bytes.

mod bundle;
mod document;
mod embed;
mod page;
mod series;
mod why_slow;

pub use embed::{Coverage, TILE_COLUMNS};
pub use series::RunSeries;

use analysis::check::{Affinity, CheckRequest, DEFAULT_MIN_LOST, DEFAULT_MIN_OVERLOAD, Findings, check};
use analysis::stats::{Grouping, Stats};
use analysis::{TaskFilter, Window};
use bundle::Bundle;
use experiment::profile::WorkloadWindow;
use model::{Marker, Nanos, Pid};
use tiles::ShownTrace;
use tiles::pyramid::Pyramid;
use why_slow::WhySlow;

/// One trace to report on, as the command line prepared it.
pub struct ReportTrace {
    /// Its title, model, topology and origin (times are shown in seconds from there).
    pub shown: ShownTrace,
    /// What `schedlens info` says of the file and the machine: (label, text) lines.
    pub description: Vec<(String, String)>,
    /// Trace markers to show on the timeline.
    pub markers: Vec<Marker>,
    /// The traced command's pid when the recording says (for `compare`'s workload).
    pub command_pid: Option<Pid>,
    /// The CPU affinity of the traced tasks when the recording captured it (`check`
    /// then says "pinned" outright).
    pub affinity: Option<Affinity>,
}

/// How the report is made.
#[derive(Clone, Debug)]
pub struct Options {
    /// The file's size at most, in bytes (the top level of each trace's pyramid is kept
    /// even when it alone is larger).
    pub size_budget: usize,
    /// Rows in socket order at first (when the topology is known).
    pub socket_order: bool,
}

/// A finished report.
pub struct Report {
    pub html: Vec<u8>,
    /// Per trace, what its embedded tiles cover.
    pub coverage: Vec<Coverage>,
}

/// What the report says of one trace, computed once.
struct Analysis {
    findings: Findings,
    stats: Stats,
    /// The traced command's critical path, when the trace names a command.
    path: Option<tiles::path::Walked>,
    pyramid: Pyramid,
    /// Timeline tiles computed ahead.
    timelines: embed::Timelines,
    /// The critical path and the wakeup latency.
    why_slow: WhySlow,
}

impl Analysis {
    /// `trace` (number `n`) checked, summed up and swept, with the timeline tiles that
    /// may fit in `tile_budget` computed meanwhile.
    fn of(n: usize, trace: &ReportTrace, tile_budget: usize) -> Analysis {
        let model = &trace.shown.model;
        let window = Window::new(model.start(), Nanos(model.end().0 + 1));
        let filter = TaskFilter::default();
        // Each part leaves cores idle in its serial stretches: they run side by side.
        let (findings, timelines, rest) = std::thread::scope(|scope| {
            let request = CheckRequest {
                window,
                filter: &filter,
                min_lost: DEFAULT_MIN_LOST,
                min_overload: DEFAULT_MIN_OVERLOAD,
                affinity: trace.affinity.as_ref(),
            };
            let findings = scope.spawn(move || check(model, &request));
            let timelines = scope.spawn(move || {
                let timelines = embed::Timelines::default();
                let source = embed::TileSource {
                    trace: n,
                    model,
                    origin: trace.shown.origin,
                    pyramid: None,
                    timelines: &timelines,
                };
                embed::prefetch(&source, tile_budget);
                timelines.into_inner()
            });
            let stats = scope.spawn(|| analysis::stats::compute(model, window, &filter, Grouping::Command));
            let path = scope.spawn(|| {
                let target = WorkloadWindow::of(model, trace.command_pid, false).critical_path_target()?;
                Some(tiles::path::walk(&trace.shown, target, trace.affinity.as_ref()))
            });
            let latencies = scope.spawn(|| analysis::latency::distributions(model, window, &filter));
            let pyramid = Pyramid::build(model, trace.shown.origin, &filter);
            (
                findings.join().expect("check does not panic"),
                timelines.join().expect("tiling does not panic"),
                (
                    stats.join().expect("stats do not panic"),
                    path.join().expect("the critical path does not panic"),
                    latencies.join().expect("latency does not panic"),
                    pyramid,
                ),
            )
        });
        let (stats, path, latencies, pyramid) = rest;
        let why_slow = WhySlow::of(model, &trace.shown.name, path.as_ref(), latencies);
        Analysis { findings, stats, path, pyramid, timelines: timelines.into(), why_slow }
    }
}

/// Stages of the work, for a progress display.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Checking and summing up trace `n` (from 0).
    Analysing(usize),
    /// Computing the tiles of trace `n`.
    Tiles(usize),
    Comparing,
}

/// An SVG scene as an image's `data:` URL.
fn image(scene: render::Scene) -> String {
    use base64::Engine;
    let document = render::Document { pages: vec![scene] };
    let mut svg = Vec::new();
    render::write(&document, render::Format::Svg, &render::PngOptions::default(), &mut svg)
        .expect("an SVG is written to memory");
    format!("data:image/svg+xml;base64,{}", base64::engine::general_purpose::STANDARD.encode(svg))
}

/// Writes the report of `traces`, and of the run series they come from, if any (a
/// series without traces gives its statistics alone).
pub fn build(
    traces: &[ReportTrace],
    series: Option<&RunSeries>,
    options: &Options,
    progress: &mut dyn FnMut(Stage),
) -> Report {
    let analyses: Vec<Analysis> = traces
        .iter()
        .enumerate()
        .map(|(n, trace)| {
            progress(Stage::Analysing(n));
            // An upper bound of the tiles' share: the page's text is not counted yet.
            Analysis::of(n, trace, options.size_budget / 4 * 3 / traces.len())
        })
        .collect();
    let comparisons = if traces.len() > 1 {
        progress(Stage::Comparing);
        page::comparisons(traces)
    } else {
        Vec::new()
    };
    let shell = page::Shell::new(traces, series, &analyses, &comparisons, options);
    // The document is compressed last (it lists the tiles); its size without them, and
    // room for its tile list, are kept aside. That is an estimate: a file over the budget
    // is made again with the tiles' share cut by what it was over.
    let reserve = shell.fixed_size() + document::estimate(traces, &analyses) + 64 * 1024;
    let mut tile_budget = (options.size_budget.saturating_sub(reserve) / 4 * 3) / traces.len().max(1);
    loop {
        let (html, coverage) = assemble(traces, &analyses, &shell, options, tile_budget, progress);
        let over = html.len().saturating_sub(options.size_budget);
        if over == 0 || tile_budget == 0 {
            return Report { html, coverage };
        }
        // Tiles are base64 in the file: 4 bytes for every 3 of the budget.
        tile_budget = tile_budget.saturating_sub((over / 4 * 3 + 1024) / traces.len().max(1));
    }
}

/// The file with each trace's tiles embedded within `tile_budget` (compressed bytes).
fn assemble(
    traces: &[ReportTrace],
    analyses: &[Analysis],
    shell: &page::Shell,
    options: &Options,
    tile_budget: usize,
    progress: &mut dyn FnMut(Stage),
) -> (Vec<u8>, Vec<Coverage>) {
    let mut bundle = Bundle::default();
    let mut coverage = Vec::with_capacity(traces.len());
    for (n, (trace, analysis)) in traces.iter().zip(analyses).enumerate() {
        progress(Stage::Tiles(n));
        let source = embed::TileSource {
            trace: n,
            model: &trace.shown.model,
            origin: trace.shown.origin,
            pyramid: Some(&analysis.pyramid),
            timelines: &analysis.timelines,
        };
        let incidents: Vec<(i64, i64)> = analysis
            .findings
            .incidents
            .iter()
            .map(|i| (trace.shown.relative(i.start), trace.shown.relative(i.end)))
            .collect();
        let budget = bundle.size() + tile_budget;
        coverage.push(embed::embed(&source, &mut bundle, budget, &incidents));
    }
    let doc = document::document(traces, analyses, &coverage, &bundle, options);
    bundle.add("doc".into(), doc.as_bytes());
    (shell.finish(&bundle), coverage)
}
