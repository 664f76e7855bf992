//! Everything past the reader that a user's command runs on a trace, in one function:
//! the model, `stats` by command and by task, the running/waiting sweep and per-CPU
//! runqueue lengths, `graph`'s timeline and figure (and the check that its levels from
//! one placement of the runs equal its levels one window at a time), `latency` (and the
//! check that its streamed waits give what the tables give), the running/waiting figure,
//! `check` and its migration heat map, and SVG output of the figures. The fuzzer
//! calls it on every input; the tests call it on every seed, corpus entry and reproducer.

use crate::script::{Script, View};
use analysis::check::{CheckRequest, check};
use analysis::critical_path::{CriticalPath, Target, critical_path, critical_path_of_waits};
use analysis::idle::IdleIndex;
use analysis::occupancy::{cpu_queue_length, idle_while_waiting};
use analysis::stats::{self, Grouping};
use analysis::{TaskFilter, Window, WindowRequest};
use analysis::{latency, perf_sched, states};
use figures::graph::{GraphRequest, PlotSize, graph, row_order};
use figures::running_waiting_plot::{RunningWaitingRequest, running_waiting_plot};
use figures::timeline::{Coloring, LevelColumns, TimelineRequest, rows as timeline_rows, rows_at_levels};
use model::{Cpu, Detail, Marker, Model, Nanos, Pid, TaskId, Topology, read_markers};
use render::{Document, Format, PngOptions, Scene};
use tracedat::Trace;

/// How far one input got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The reader refused the file.
    Unreadable(String),
    /// The trace has no model (no switch events, no events).
    NoModel(String),
    /// Every analysis ran.
    Analysed(PipelineSummary),
}

/// A few figures of a finished run, for tests to look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PipelineSummary {
    pub events: u64,
    pub damaged_places: usize,
    pub cpus: usize,
    pub tasks: usize,
    pub stats_rows: usize,
    pub incidents: usize,
    pub svg_bytes: usize,
}

/// Writes the script as a trace.dat and runs everything on it.
pub fn run_script(script: &Script) -> Outcome {
    let bytes = crate::write::write_trace(script)
        .unwrap_or_else(|error| panic!("every script can be written as a trace: {error}"));
    match Trace::from_bytes("script", bytes) {
        Ok(trace) => analyse(&trace, script.view, script.renders()),
        Err(error) => Outcome::Unreadable(error.to_string()),
    }
}

/// Builds the model of `trace` and runs every analysis and figure on it as `view` asks;
/// with `render`, writes the figures as SVG too.
pub fn analyse(trace: &Trace, view: View, render: bool) -> Outcome {
    let (model, report) = match Model::build(trace, Detail::FULL, &mut |_| {}) {
        Ok(built) => built,
        Err(error) => return Outcome::NoModel(error.to_string()),
    };
    // With after-sleep and forked-only both asked, the tree of the model's first task too.
    let descendants_of = (view.flags & 3 == 3).then(|| model.tasks().ids().nth(1)).flatten();
    let filter = TaskFilter { forked_only: view.flags & 2 != 0, command_prefix: None, descendants_of };
    let (window, origin) = window(&model, view);
    let markers = markers(trace, window);
    let mut summary = PipelineSummary {
        events: report.events,
        damaged_places: report.damage.len(),
        cpus: model.cpus().len(),
        tasks: model.tasks().len(),
        ..PipelineSummary::default()
    };
    for grouping in [Grouping::Command, Grouping::Task] {
        summary.stats_rows += stats::compute(&model, window, &filter, grouping).rows.len();
    }
    std::hint::black_box(idle_while_waiting(&model, window, &filter));
    let latencies = latency::compute(&model, window, &filter, None, latency::Parts::ALL);
    let path = critical_path_sums_to_its_window(&model, window);
    streamed_passes_are_the_tables(trace, window, &filter, &latencies, path);
    let waiting: Vec<TaskId> = latencies.by_task.iter().take(4).map(|&(task, ..)| task).collect();
    std::hint::black_box(latency::antagonists(&model, window, &waiting));
    std::hint::black_box((latencies, states::compute(&model, window, &filter), perf_sched::read(trace)));
    let topology = Topology::from_spec("sockets=2,smt=2,layout=interleaved", model.cpu_count()).ok();
    let rows = row_order(model.cpus().len(), topology.as_ref(), view.flags & 16 != 0);
    let strips = if view.flags & 32 != 0 { rows.clone() } else { Vec::new() };
    for spec in &strips {
        cpu_queue_length(&model, spec.cpu, window, &filter, |_, _, length| {
            std::hint::black_box(length);
        });
    }
    let size = PlotSize { width: 160.0, height: None };
    let coloring = coloring(view);
    let timeline = GraphRequest {
        title: "fuzz".into(),
        window,
        origin,
        span: window.len().max(Nanos(1)),
        rows: &rows,
        filter: &filter,
        coloring: &coloring,
        size,
        columns_per_px: 1.0,
        markers: &markers,
    };
    let plot = RunningWaitingRequest {
        title: "fuzz".into(),
        window,
        origin,
        span: window.len().max(Nanos(1)),
        filter: &filter,
        per_cpu: &strips,
        size,
        columns_per_px: 1.0,
        markers: &markers,
    };
    let min_lost = [Nanos(250_000), Nanos(0), Nanos(10_000), Nanos(4_000_000)][usize::from(view.flags >> 6)];
    let request = CheckRequest { window, filter: &filter, min_lost, min_overload: min_lost, affinity: None };
    let findings = check(&model, &request);
    summary.incidents = findings.incidents.len();
    levels_agree_with_rows(&model, &rows, &filter, &coloring);
    let pages = vec![
        graph(&model, &timeline),
        running_waiting_plot(&model, &plot).0,
        figures::migration_map::migration_map("migrations", &findings.migrations, 120.0, None),
    ];
    if render {
        summary.svg_bytes = svg_size(pages);
    }
    Outcome::Analysed(summary)
}

/// `latency`'s and `critical-path`'s own path (the model built streaming, its waits read
/// back as records: in chunks for `latency`, in order and then back from the end for the
/// critical path) gives what the whole model's tables give.
fn streamed_passes_are_the_tables(
    trace: &Trace,
    window: Window,
    filter: &TaskFilter,
    latencies: &latency::Latencies,
    path: Option<(Target, CriticalPath)>,
) {
    let mut collector = analysis::records::Collector::new(Vec::new());
    let (model, _) = Model::build_streaming(trace, &mut |_| {}, &mut collector).expect("the whole model was built");
    let (mut waits, migrations) = collector.finish(&model);
    let mut pass = latency::RecordPass::new(&model, migrations, window, filter, None, latency::Parts::ALL);
    waits.read_chunks(1000, &mut |records| pass.add(records)).expect("records in memory");
    assert!(pass.finish() == *latencies, "latency over the streamed waits differs from the tables'");
    if let Some((target, path)) = path {
        let index = IdleIndex::new(&model);
        let streamed = critical_path_of_waits(&model, &index, &mut waits, &target, None, 3);
        assert_eq!(streamed, path, "the critical path over the streamed waits differs from the tables'");
    }
}

/// The critical path of the first exec'd task (else the first task) over the window gives
/// every nanosecond one cause, on any model.
fn critical_path_sums_to_its_window(model: &Model, window: Window) -> Option<(Target, CriticalPath)> {
    let task = model.first_exec().or_else(|| model.tasks().ids().nth(1))?;
    let index = IdleIndex::new(model);
    let target = Target { window, ..Target::task(model, task) };
    let path = critical_path(model, &index, &target, None, 3);
    assert_eq!(path.breakdown.total_ns(), window.len().0, "the critical path's parts sum to its window");
    Some((target, path))
}

/// Several timeline levels from one placement of the runs are the levels computed one
/// window at a time (the report's and the viewer's tiles depend on it), on any model.
fn levels_agree_with_rows(model: &Model, rows: &[figures::graph::RowSpec], filter: &TaskFilter, coloring: &Coloring) {
    let cpus: Vec<Cpu> = rows.iter().map(|row| row.cpu).collect();
    let origin = model.start();
    let span = model.end().0.saturating_sub(origin.0).max(1);
    let fine = (span / 64).max(1).ilog2();
    let levels: Vec<LevelColumns> = [fine, fine + 2, fine + 3]
        .into_iter()
        .map(|level| LevelColumns { level, first: 0, count: 80 >> (level - fine) })
        .collect();
    let Some(at_levels) = rows_at_levels(model, origin, &levels, &cpus, filter, coloring) else { return };
    for (level, rows_of_level) in levels.iter().zip(at_levels) {
        let window = Window::new(origin, Nanos(origin.0 + (u64::from(level.count) << level.level)));
        let request = TimelineRequest { window, columns: level.count, rows: &cpus, filter, coloring };
        assert_eq!(rows_of_level, timeline_rows(model, &request), "level {}", level.level);
    }
}

/// The window the view asks for, or the whole trace when the request does not resolve
/// (the error paths are the CLI's to test).
fn window(model: &Model, view: View) -> (Window, Nanos) {
    let seconds = |byte: u8| match byte {
        0 => None,
        255 => Some(1e12),
        n => Some(f64::from(n) * 1e-5),
    };
    let request =
        WindowRequest { min_s: seconds(view.min), max_s: seconds(view.max), after_sleep: view.flags & 1 != 0 };
    request.resolve(model).unwrap_or_else(|_| WindowRequest::default().resolve(model).expect("the whole trace"))
}

/// The trace's markers, or (scripts write none) three at the window's start, middle and
/// end, so the figures' marker lanes are drawn on every input.
fn markers(trace: &Trace, window: Window) -> Vec<Marker> {
    let read = read_markers(trace, |_| true);
    if !read.is_empty() {
        return read;
    }
    let middle = window.start + Nanos(window.len().0 / 2);
    [window.start, middle, window.end]
        .into_iter()
        .map(|time| Marker { time, cpu: Cpu(0), pid: Pid(1), text: format!("phase at {}", time.0) })
        .collect()
}

fn coloring(view: View) -> Coloring {
    match view.flags >> 2 & 3 {
        0 => Coloring::ByPid,
        1 => Coloring::ByCommand,
        2 => Coloring::Target("hack".into()),
        _ => Coloring::Target("s".into()),
    }
}

fn svg_size(pages: Vec<Scene>) -> usize {
    let mut out = Vec::new();
    render::write(&Document { pages }, Format::Svg, &PngOptions::default(), &mut out).expect("SVG into memory");
    out.len()
}
