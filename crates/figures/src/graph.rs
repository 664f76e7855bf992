//! The per-core timeline figure of the schedgraph paper (its `dat2graph`): time across,
//! one row per CPU, each stretch a task ran a bar in its color, idle white, unknown
//! grey; core labels, socket boundaries, a time axis in seconds, and with
//! `--color-by-command` the paper's legend (Figure 9): per command its first and last
//! run, run time, context switches and pids in the window.

use crate::axis::{TimeAxis, seconds};
use crate::markers;
use crate::palette::{Rgb, color_of_name};
use crate::style::{self, FAINT, INK, LABEL, MARGIN, SMALL, TICK};
use crate::timeline::{self, Coloring, TimelineRequest};
use analysis::stats::{self, Grouping};
use analysis::{TaskFilter, Window};
use model::{Cpu, Marker, Model, Nanos, Topology};
use render::{Anchor, Point, Rect, RectBatch, Rgba, Scene, Stroke, Text, text_width};
use std::collections::BTreeMap;

/// One row of the figure: a CPU and, with a topology, its socket.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RowSpec {
    pub cpu: Cpu,
    pub socket: Option<u32>,
}

/// The rows, bottom to top: CPUs in number order, or with `socket_order` the topology's
/// order (a socket's CPUs adjacent). CPUs the topology does not know come last.
pub fn row_order(cpu_count: usize, topology: Option<&Topology>, socket_order: bool) -> Vec<RowSpec> {
    let socket_of = |cpu: Cpu| topology.and_then(|t| t.place(cpu)).map(|p| p.socket);
    let mut cpus: Vec<Cpu> = (0..cpu_count as u32).map(Cpu).collect();
    if let (Some(topology), true) = (topology, socket_order) {
        let mut ordered: Vec<Cpu> = topology.socket_order().into_iter().filter(|c| c.index() < cpu_count).collect();
        ordered.extend(cpus.iter().filter(|c| topology.place(**c).is_none()));
        cpus = ordered;
    }
    let with_sockets = socket_order && topology.is_some();
    cpus.into_iter().map(|cpu| RowSpec { cpu, socket: socket_of(cpu).filter(|_| with_sockets) }).collect()
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
    draw_sockets(request.rows, &layout, &mut scene);
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
}

impl Layout {
    fn new(request: &GraphRequest<'_>) -> Layout {
        let rows = request.rows.len().max(1) as f32;
        let wanted = request.size.height.unwrap_or((rows * 12.0).clamp(160.0, 640.0));
        // Whole-pixel rows where they fit, so PNG rows do not blur into each other.
        let row_height = if wanted / rows >= 1.0 { (wanted / rows).floor() } else { wanted / rows };
        let widest_label = request.rows.iter().map(|r| text_width(&r.cpu.0.to_string(), SMALL)).fold(0.0, f32::max);
        let left = MARGIN + LABEL + 8.0 + widest_label + TICK + 3.0;
        let top = MARGIN + style::TITLE + 12.0 + markers::band_height(request.markers, request.window);
        let has_sockets = request.rows.iter().any(|r| r.socket.is_some());
        let right_margin = MARGIN + if has_sockets { text_width("S00", SMALL) + 6.0 } else { 0.0 };
        let plot = Rect::new(left, top, request.size.width.max(10.0), row_height * rows);
        Layout { plot, row_height, right_margin }
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

/// Core labels: every row up to 32 rows, else the first row of each socket and every 8th,
/// leaving out labels that would overlap one already placed.
fn draw_rows_axis(rows: &[RowSpec], layout: &Layout, scene: &mut Scene) {
    let socket_starts = (0..rows.len()).filter(|&i| i == 0 || rows[i].socket != rows[i - 1].socket);
    let regular = (0..rows.len()).filter(|&i| rows.len() <= 32 || i % 8 == 0);
    let mut placed: Vec<f32> = Vec::new();
    for index in socket_starts.chain(regular) {
        let center = layout.row_top(index) + layout.row_height / 2.0;
        if placed.iter().any(|&y| (y - center).abs() < SMALL) {
            continue;
        }
        placed.push(center);
        let tick_x = layout.plot.x - TICK;
        scene.push(style::line(Point::new(tick_x, center), Point::new(layout.plot.x, center), Stroke::solid(INK, 1.0)));
        let label = Text::new(Point::new(tick_x - 3.0, center + SMALL * 0.35), rows[index].cpu.0.to_string(), SMALL);
        scene.push(label.anchor(Anchor::End).color(INK));
    }
    style::vertical_title(scene, MARGIN + LABEL, layout.plot.y, layout.plot.bottom(), "core");
}

/// A band between sockets across the plot, and each socket's name at the right.
fn draw_sockets(rows: &[RowSpec], layout: &Layout, scene: &mut Scene) {
    let mut start = 0;
    for index in 1..=rows.len() {
        if index < rows.len() && rows[index].socket == rows[start].socket {
            continue;
        }
        if let Some(socket) = rows[start].socket {
            let middle = (layout.row_top(start) + layout.row_top(index - 1) + layout.row_height) / 2.0;
            let name =
                Text::new(Point::new(layout.plot.right() + 6.0, middle + SMALL * 0.35), format!("S{socket}"), SMALL);
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
    fn without_socket_order_rows_are_in_cpu_order_without_sockets() {
        let topology = Topology::from_spec("sockets=2,smt=1,layout=interleaved", 4).unwrap();
        let rows = row_order(4, Some(&topology), false);
        assert!(rows.iter().enumerate().all(|(i, r)| r.cpu.0 == i as u32 && r.socket.is_none()));
    }
}
