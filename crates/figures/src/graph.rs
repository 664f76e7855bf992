//! The per-core timeline figure of the schedgraph paper (its `dat2graph`): time across,
//! one row per CPU, each stretch a task ran a bar in its color, idle white, unknown
//! grey; core labels, socket boundaries, a time axis in seconds, and with
//! `--color-by-command` the paper's legend (Figure 9): per command its first and last
//! run, run time, context switches and pids in the window.

use crate::axis::{TimeAxis, seconds};
use crate::markers;
use crate::palette::{Rgb, color_of_name};
use crate::row_labels::RowLabels;
use crate::style::{self, FAINT, INK, LABEL, MARGIN, SMALL, TICK};
use crate::timeline::{self, Coloring, TimelineRequest};
use analysis::stats::{self, Grouping};
use analysis::{TaskFilter, Window};
use model::{Cpu, Marker, Model, Nanos, Topology};
use render::{Point, Rect, RectBatch, Rgba, Scene, Stroke, Text, text_width};
use std::collections::BTreeMap;

/// One row of the figure: a CPU and, in socket order, where it sits (its socket, NUMA
/// node and core, which group the rows).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RowSpec {
    pub cpu: Cpu,
    pub socket: Option<u32>,
    pub node: Option<u32>,
    /// The physical core (SMT siblings share it).
    pub core: Option<u32>,
}

/// The rows, bottom to top: CPUs in number order, or with `socket_order` the topology's
/// order (a socket's CPUs adjacent, a core's hardware threads adjacent). CPUs the
/// topology does not know come last.
pub fn row_order(cpu_count: usize, topology: Option<&Topology>, socket_order: bool) -> Vec<RowSpec> {
    let mut cpus: Vec<Cpu> = (0..cpu_count as u32).map(Cpu).collect();
    let Some(topology) = topology.filter(|_| socket_order) else {
        return cpus.into_iter().map(|cpu| RowSpec { cpu, ..RowSpec::default() }).collect();
    };
    let mut ordered: Vec<Cpu> = topology.socket_order().into_iter().filter(|c| c.index() < cpu_count).collect();
    ordered.extend(cpus.iter().filter(|c| topology.place(**c).is_none()));
    cpus = ordered;
    let row = |cpu: Cpu| match topology.place(cpu) {
        Some(p) => RowSpec { cpu, socket: Some(p.socket), node: Some(p.node), core: Some(p.core) },
        None => RowSpec { cpu, ..RowSpec::default() },
    };
    cpus.into_iter().map(row).collect()
}

/// The plot's size in CSS pixels; without a height, rows get a height that suits their count.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PlotSize {
    pub width: f32,
    pub height: Option<f32>,
}

/// Everything one timeline figure shows.
#[derive(Clone, Debug)]
pub struct GraphRequest<'a> {
    pub title: String,
    pub window: Window,
    /// The time axis reads seconds from here.
    pub origin: Nanos,
    /// The time the plot's width stands for: the window's length, or more when several
    /// traces share the scale of the slowest.
    pub span: Nanos,
    /// Bottom to top.
    pub rows: &'a [RowSpec],
    pub filter: &'a TaskFilter,
    pub coloring: &'a Coloring,
    pub size: PlotSize,
    /// Timeline columns per CSS pixel: the PNG's scale, 1 for vector output.
    pub columns_per_px: f32,
    /// Trace markers to draw as labelled vertical lines (those in the window show).
    pub markers: &'a [Marker],
}

/// Most commands listed in the `--color-by-command` legend; the rest are summed up.
const LEGEND_ROWS: usize = 30;

/// Lays out the figure.
pub fn graph(model: &Model, request: &GraphRequest<'_>) -> Scene {
    let layout = Layout::new(request);
    let mut scene = Scene::new(0.0, 0.0, Rgba::WHITE);
    style::title(&mut scene, layout.plot.x, &request.title);
    draw_runs(model, request, &layout, &mut scene);
    scene.push(style::outline(&layout.plot, Stroke::solid(FAINT, 1.0)));
    draw_rows_axis(request.rows, &layout, &mut scene);
    draw_groups(request.rows, &layout, &mut scene);
    let axis = TimeAxis { start_s: seconds(request.window.start, request.origin), span_s: request.span.0 as f64 / 1e9 };
    let (plot, origin, window) = (&layout.plot, request.origin, request.window);
    let drawn = markers::draw(&mut scene, plot, plot.bottom(), &axis, origin, window, request.markers);
    let mut y = axis.draw(&layout.plot, &mut scene);
    mark_end_of_data(request, &axis, &layout, &mut scene);
    let mut notes = key(model, request);
    notes.extend(drawn.note());
    y = style::notes(&mut scene, layout.plot.x, y, &notes);
    if *request.coloring == Coloring::ByCommand {
        y = command_legend(model, request, &layout, &mut scene, y);
    }
    scene.width = layout.plot.right() + layout.right_margin;
    scene.height = y + MARGIN;
    scene
}

struct Layout {
    plot: Rect,
    row_height: f32,
    right_margin: f32,
    labels: RowLabels,
}

impl Layout {
    fn new(request: &GraphRequest<'_>) -> Layout {
        let rows = request.rows.len().max(1) as f32;
        let wanted = request.size.height.unwrap_or((rows * 12.0).clamp(160.0, 640.0));
        // Whole-pixel rows where they fit, so PNG rows do not blur into each other.
        let row_height = if wanted / rows >= 1.0 { (wanted / rows).floor() } else { wanted / rows };
        let labels = RowLabels::plan(request.rows, row_height);
        let left = MARGIN + LABEL + 8.0 + labels.width() + TICK + 3.0;
        let top = MARGIN + style::TITLE + 12.0 + markers::band_height(request.markers, request.window);
        let right_margin = MARGIN + group_labels_width(request.rows);
        let plot = Rect::new(left, top, request.size.width.max(10.0), row_height * rows);
        Layout { plot, row_height, right_margin, labels }
    }

    /// The top of row `index` (row 0 is at the bottom).
    fn row_top(&self, index: usize) -> f32 {
        self.plot.bottom() - (index + 1) as f32 * self.row_height
    }

    /// The plot's width covered by the window's data (less than all of it when the scale
    /// is another, longer trace's).
    fn data_width(&self, request: &GraphRequest<'_>) -> f32 {
        let share = request.window.len().0 as f64 / request.span.0.max(1) as f64;
        self.plot.w * share.min(1.0) as f32
    }
}

fn draw_runs(model: &Model, request: &GraphRequest<'_>, layout: &Layout, scene: &mut Scene) {
    let cpus: Vec<Cpu> = request.rows.iter().map(|r| r.cpu).collect();
    let columns_per_px = request.columns_per_px.max(0.01);
    let columns = (layout.data_width(request) * columns_per_px).round().max(1.0) as u32;
    let timeline = TimelineRequest {
        window: request.window,
        columns,
        rows: &cpus,
        filter: request.filter,
        coloring: request.coloring,
    };
    let inset = if layout.row_height >= 8.0 { (layout.row_height * 0.1).round() } else { 0.0 };
    let mut batches: BTreeMap<Rgb, Vec<Rect>> = BTreeMap::new();
    for (index, row) in timeline::rows(model, &timeline).into_iter().enumerate() {
        let top = layout.row_top(index) + inset;
        for span in row.spans {
            let x = layout.plot.x + span.x0 as f32 / columns_per_px;
            let w = (span.x1 - span.x0) as f32 / columns_per_px;
            batches.entry(span.color).or_default().push(Rect::new(x, top, w, layout.row_height - 2.0 * inset));
        }
    }
    for (color, rects) in batches {
        scene.push(RectBatch { fill: style::rgba(color), rects });
    }
}

/// Every row's CPU number (see [`RowLabels`]), with a tick where rows are tall enough to
/// tell ticks apart, and in socket order a bracket joining the ticks of a core's hardware
/// threads (SMT siblings).
fn draw_rows_axis(rows: &[RowSpec], layout: &Layout, scene: &mut Scene) {
    let center = |index: usize| layout.row_top(index) + layout.row_height / 2.0;
    let tick_x = layout.plot.x - TICK;
    layout.labels.draw(scene, rows, tick_x - 3.0, center);
    if layout.row_height >= 4.0 {
        for index in 0..rows.len() {
            let y = center(index);
            scene.push(style::line(Point::new(tick_x, y), Point::new(layout.plot.x, y), Stroke::solid(INK, 1.0)));
        }
        let mut first = 0;
        for core in rows.chunk_by(|a, b| a.core.is_some() && (a.socket, a.core) == (b.socket, b.core)) {
            if core.len() > 1 {
                let (bottom, top) = (center(first), center(first + core.len() - 1));
                scene.push(style::line(Point::new(tick_x, bottom), Point::new(tick_x, top), Stroke::solid(INK, 1.0)));
            }
            first += core.len();
        }
    }
    style::vertical_title(scene, MARGIN + LABEL, layout.plot.y, layout.plot.bottom(), "CPU");
}

/// The names of the socket and NUMA node of a group of rows: "S0" when they are the same
/// number, else "S0 N1".
fn group_name(row: &RowSpec) -> Option<String> {
    let socket = row.socket?;
    Some(match row.node {
        Some(node) if node != socket => format!("S{socket} N{node}"),
        _ => format!("S{socket}"),
    })
}

/// The room the groups' names take at the right of the plot.
fn group_labels_width(rows: &[RowSpec]) -> f32 {
    let widest = rows.iter().filter_map(group_name).map(|name| text_width(&name, SMALL)).fold(0.0, f32::max);
    if widest > 0.0 { widest.max(text_width("S00", SMALL)) + 6.0 } else { 0.0 }
}

/// A band between groups of rows on one socket and NUMA node, across the plot, and each
/// group's name at the right ("S0", or "S0 N1" where the node's number differs).
fn draw_groups(rows: &[RowSpec], layout: &Layout, scene: &mut Scene) {
    let mut start = 0;
    for index in 1..=rows.len() {
        let same = |a: &RowSpec, b: &RowSpec| (a.socket, a.node) == (b.socket, b.node);
        if index < rows.len() && same(&rows[index], &rows[start]) {
            continue;
        }
        if let Some(name) = group_name(&rows[start]) {
            let middle = (layout.row_top(start) + layout.row_top(index - 1) + layout.row_height) / 2.0;
            let name = Text::new(Point::new(layout.plot.right() + 6.0, middle + SMALL * 0.35), name, SMALL);
            scene.push(name.color(INK));
            if index < rows.len() {
                // A 2-pixel band on whole pixels: crisp in PNG, visible over 2-pixel rows.
                let y = layout.row_top(index - 1);
                let band = Rect::new(layout.plot.x, y - 1.0, layout.plot.w, 2.0);
                scene.push(RectBatch { fill: INK, rects: vec![band] });
            }
        }
        start = index;
    }
}

/// With a scale longer than this trace, a dashed line where its data ends.
fn mark_end_of_data(request: &GraphRequest<'_>, axis: &TimeAxis, layout: &Layout, scene: &mut Scene) {
    if request.window.len() >= request.span {
        return;
    }
    let x = axis.x_of(&layout.plot, seconds(request.window.end, request.origin));
    let stroke = Stroke::dashed(INK, 1.0, &[4.0, 3.0]);
    scene.push(style::line(Point::new(x, layout.plot.y), Point::new(x, layout.plot.bottom()), stroke));
    scene.push(Text::new(Point::new(x + 3.0, layout.plot.y + SMALL), "end", SMALL).color(INK));
}

/// The lines that say what the colors mean (grey on a line of its own: with it the key
/// is wider than a narrow figure).
fn key(model: &Model, request: &GraphRequest<'_>) -> Vec<String> {
    let colors = match request.coloring {
        Coloring::ByPid => "each pid its color".to_string(),
        Coloring::Target(prefix) => {
            format!("commands starting with \"{prefix}\": each pid its color; other tasks black")
        }
        Coloring::ByCommand => "each command its color".to_string(),
    };
    let forked = if request.filter.forked_only { "; only tasks created during the trace" } else { "" };
    let mut lines = vec![format!("white: idle; {colors}{forked}")];
    if any_unknown_time(model, request) {
        lines.push(
            "grey: unknown (lost events, unrecorded switches, before a CPU's first event or after its last)".into(),
        );
    }
    lines
}

/// Whether some row shows unknown time: uncertain stretches, or a CPU whose runs do not
/// reach the start or the end of the window (within the trace).
fn any_unknown_time(model: &Model, request: &GraphRequest<'_>) -> bool {
    let window = request.window;
    let (from, until) = (window.start.max(model.start()), window.end.min(model.end()));
    let unknown = |cpu: &model::CpuTimeline| {
        let segments = cpu.segments();
        let overlapping = segments.overlapping(window.start, window.end);
        let uncovered = match (overlapping.start < overlapping.end).then(|| overlapping.clone()) {
            Some(range) => segments.get(range.start).start > from || segments.get(range.end - 1).end < until,
            None => from < until,
        };
        uncovered || cpu.uncertain().iter().any(|&(start, end)| start < window.end && end > window.start)
    };
    request.rows.iter().filter_map(|r| model.cpus().get(r.cpu.index())).any(unknown)
}

/// The paper's Figure 9 legend: per command, colored as in the plot, in decreasing run time.
fn command_legend(model: &Model, request: &GraphRequest<'_>, layout: &Layout, scene: &mut Scene, y: f32) -> f32 {
    let mut rows = stats::compute(model, request.window, request.filter, Grouping::Command).rows;
    rows.retain(|row| row.runtime_ns > 0);
    rows.sort_by(|a, b| b.runtime_ns.cmp(&a.runtime_ns).then_with(|| a.comm.cmp(&b.comm)));
    let time = |t: Option<Nanos>| t.map_or("-".to_string(), |t| format!("{:.6}", seconds(t, request.origin)));
    let cells: Vec<(Option<Rgb>, Vec<String>)> = rows
        .iter()
        .take(LEGEND_ROWS)
        .map(|row| {
            let cells = vec![
                row.comm.clone(),
                time(row.first_run),
                time(row.last_run),
                format!("{:.6}", row.runtime_ns as f64 / 1e9),
                row.switches.to_string(),
                row.pids.to_string(),
            ];
            (Some(color_of_name(&row.comm)), cells)
        })
        .collect();
    let header = ["command", "first run (s)", "last run (s)", "run time (s)", "switches", "pids"];
    let mut y = style::table(scene, layout.plot.x, y + 6.0, &header, &cells);
    if rows.len() > LEGEND_ROWS {
        let rest = &rows[LEGEND_ROWS..];
        let runtime = rest.iter().map(|r| r.runtime_ns).fold(0, u64::saturating_add);
        let line = format!("... and {} more commands, {:.6} s run time in all", rest.len(), runtime as f64 / 1e9);
        y = style::notes(scene, layout.plot.x, y, &[line]);
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_order_puts_a_sockets_cpus_together_and_unknown_cpus_last() {
        let topology = Topology::from_spec("sockets=2,smt=1,layout=interleaved", 4).unwrap();
        let rows = row_order(5, Some(&topology), true);
        let cpus: Vec<u32> = rows.iter().map(|r| r.cpu.0).collect();
        assert_eq!(cpus, [0, 2, 1, 3, 4]);
        let sockets: Vec<Option<u32>> = rows.iter().map(|r| r.socket).collect();
        assert_eq!(sockets, [Some(0), Some(0), Some(1), Some(1), None]);
    }

    #[test]
    fn socket_order_keeps_smt_siblings_together_and_names_each_rows_place() {
        // As `--topology sockets=4,smt=2,layout=contiguous` on 64 CPUs: siblings 32 apart.
        let topology = Topology::from_spec("sockets=4,smt=2,layout=contiguous", 64).unwrap();
        let rows = row_order(64, Some(&topology), true);
        let cpus: Vec<u32> = rows.iter().take(4).map(|r| r.cpu.0).collect();
        assert_eq!(cpus, [0, 32, 1, 33]);
        assert_eq!(rows[17], RowSpec { cpu: Cpu(40), socket: Some(1), node: Some(1), core: Some(8) });
        let mut seen: Vec<u32> = rows.iter().map(|r| r.cpu.0).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..64).collect::<Vec<_>>(), "every CPU once");
    }

    #[test]
    fn without_socket_order_rows_are_in_cpu_order_without_sockets() {
        let topology = Topology::from_spec("sockets=2,smt=1,layout=interleaved", 4).unwrap();
        let rows = row_order(4, Some(&topology), false);
        assert!(rows.iter().enumerate().all(|(i, r)| r.cpu.0 == i as u32 && r.socket.is_none()));
    }
}
