//! The running/waiting figure of the schedgraph paper (its Figure 6): over time, a green
//! line for running tasks, a red line for running plus waiting ones, a dotted line at
//! the core count; stretches where a task waits while a core idles shaded; and with
//! `--per-cpu`, a heat strip per CPU of its runqueue length (the Wasted Cores figures).
//! Where a pixel column covers many changes, each line spans the column's lowest to
//! highest value, so a spike shorter than a pixel is never lost.

use crate::axis::{TimeAxis, nice_step, seconds};
use crate::graph::{PlotSize, RowSpec};
use crate::markers;
use crate::row_labels::RowLabels;
use crate::running_waiting::{Column, Extent, RunningWaiting, columns, columns_and_queue_lengths};
use crate::style::{self, FAINT, INK, LABEL, MARGIN, SMALL, TICK};
use analysis::occupancy::IdleWhileWaiting;
use analysis::{TaskFilter, Window};
use model::{Cpu, Marker, Model, Nanos};
use render::{Anchor, Point, Polyline, Rect, RectBatch, Rgba, Scene, Stroke, Text, text_width};

pub const RUNNING: Rgba = Rgba::rgb(20, 150, 40);
pub const TOTAL: Rgba = Rgba::rgb(215, 30, 30);
/// Shading of "a task waits while a core idles".
pub const WASTED: Rgba = Rgba::rgb(255, 214, 150);
/// Background where it is unknown whether a task waited while a core idled.
pub const UNKNOWN: Rgba = Rgba::grey(215);

/// Everything one running/waiting figure shows.
#[derive(Clone, Debug)]
pub struct RunningWaitingRequest<'a> {
    pub title: String,
    pub window: Window,
    /// The time axis reads seconds from here.
    pub origin: Nanos,
    /// The time the plot's width stands for (the longest window of several traces).
    pub span: Nanos,
    pub filter: &'a TaskFilter,
    /// Heat strips for these CPUs (top to bottom), or none.
    pub per_cpu: &'a [RowSpec],
    pub size: PlotSize,
    /// Plot columns per CSS pixel: the PNG's scale, 1 for vector output.
    pub columns_per_px: f32,
    /// Trace markers to draw as labelled vertical lines (those in the window show).
    pub markers: &'a [Marker],
}

/// Lays out the figure; also returns the time a task waited while a core idled.
pub fn running_waiting_plot(model: &Model, request: &RunningWaitingRequest<'_>) -> (Scene, IdleWhileWaiting) {
    let columns_per_px = request.columns_per_px.max(0.01);
    let layout = Layout::new(request);
    let count = (layout.data_width * columns_per_px).round().max(1.0) as u32;
    let cpus: Vec<Cpu> = request.per_cpu.iter().map(|spec| spec.cpu).collect();
    // With strips, the columns and the strips' lengths come from one sweep.
    let (RunningWaiting { columns: data, idle_while_waiting }, lengths) = if cpus.is_empty() {
        (columns(model, request.window, count, request.filter), Vec::new())
    } else {
        columns_and_queue_lengths(model, request.window, count, request.filter, &cpus)
    };
    let cores = model.cpu_count();
    let top_value = data.iter().map(|c| c.total.max).max().unwrap_or(0).max(cores).max(1);
    let y_max = f64::from(top_value) * 1.1;
    let y_of = |value: u32| layout.plot.bottom() - (f64::from(value) / y_max) as f32 * layout.plot.h;

    let mut scene = Scene::new(0.0, 0.0, Rgba::WHITE);
    style::title(&mut scene, layout.plot.x, &request.title);
    shade_waiting_while_idle(&data, &layout, columns_per_px, &mut scene);
    draw_value_axis(&layout, y_max, &y_of, &mut scene);
    let core_y = y_of(cores);
    let dotted = Stroke::dashed(Rgba::BLACK, 1.2, &[2.0, 3.0]);
    scene.push(style::line(Point::new(layout.plot.x, core_y), Point::new(layout.plot.right(), core_y), dotted));
    let x_of = |column: usize| layout.plot.x + column as f32 / columns_per_px;
    scene.push(envelope_line(data.iter().map(|c| c.total), &x_of, &y_of, TOTAL));
    scene.push(envelope_line(data.iter().map(|c| c.running), &x_of, &y_of, RUNNING));
    scene.push(style::outline(&layout.plot, Stroke::solid(FAINT, 1.0)));
    let strips_bottom = draw_heat_strips(request, &lengths, &layout, &mut scene);
    let axis_plot = Rect::from_edges(layout.plot.x, layout.plot.y, layout.plot.right(), strips_bottom);
    let axis = TimeAxis { start_s: seconds(request.window.start, request.origin), span_s: request.span.0 as f64 / 1e9 };
    let (origin, window) = (request.origin, request.window);
    let drawn = markers::draw(&mut scene, &layout.plot, strips_bottom, &axis, origin, window, request.markers);
    let mut y = axis.draw(&axis_plot, &mut scene);
    if request.window.len() < request.span {
        let x = layout.plot.x + layout.data_width;
        let dashed = Stroke::dashed(INK, 1.0, &[4.0, 3.0]);
        scene.push(style::line(Point::new(x, layout.plot.y), Point::new(x, strips_bottom), dashed));
    }
    y = draw_key(&mut scene, layout.plot.x, y, cores, idle_while_waiting.unknown > Nanos::ZERO);
    let mut notes = summary(request, idle_while_waiting);
    notes.extend(drawn.note());
    y = style::notes(&mut scene, layout.plot.x, y, &notes);
    if !request.per_cpu.is_empty() {
        y = heat_key(&mut scene, layout.plot.x, y);
    }
    scene.width = layout.plot.right() + MARGIN;
    scene.height = y + MARGIN;
    (scene, idle_while_waiting)
}

struct Layout {
    plot: Rect,
    data_width: f32,
    strip_height: f32,
    labels: RowLabels,
}

impl Layout {
    fn new(request: &RunningWaitingRequest<'_>) -> Layout {
        let strips = request.per_cpu.len().max(1) as f32;
        // 240 pixels of strips, or up to twice that so that 120 CPUs get 4 pixels each.
        let strip_height = (240.0 / strips).max((480.0 / strips).min(4.0)).clamp(1.0, 14.0).floor();
        let labels = RowLabels::plan(request.per_cpu, strip_height);
        let left = MARGIN + LABEL + 8.0 + labels.width().max(text_width("000", SMALL)) + TICK + 3.0;
        let top = MARGIN + style::TITLE + 12.0 + markers::band_height(request.markers, request.window);
        let plot = Rect::new(left, top, request.size.width.max(10.0), request.size.height.unwrap_or(320.0).max(10.0));
        let share = request.window.len().0 as f64 / request.span.0.max(1) as f64;
        Layout { plot, data_width: plot.w * share.min(1.0) as f32, strip_height, labels }
    }
}

/// Light background behind the columns where a task waited while a core idled, the
/// stronger the more of the column it covered (four steps), so long stretches stand out
/// and wakeup-sized slivers stay faint.
fn shade_waiting_while_idle(data: &[Column], layout: &Layout, columns_per_px: f32, scene: &mut Scene) {
    if data.iter().any(|column| column.unknown > 0.0) {
        shade(data, |column| column.unknown, UNKNOWN, layout, columns_per_px, scene);
    }
    shade(data, |column| column.waiting_while_idle, WASTED, layout, columns_per_px, scene);
}

/// Shades the columns by the share of each `share_of` gives, in `color` (four steps).
fn shade(
    data: &[Column],
    share_of: impl Fn(&Column) -> f64,
    color: Rgba,
    layout: &Layout,
    columns_per_px: f32,
    scene: &mut Scene,
) {
    let mut levels: [Vec<Rect>; 4] = Default::default();
    let width = 1.0 / columns_per_px;
    for (index, column) in data.iter().enumerate() {
        let share = share_of(column);
        if share <= 0.0 {
            continue;
        }
        let level = ((share * 4.0).ceil() as usize).clamp(1, 4) - 1;
        let x = layout.plot.x + index as f32 * width;
        match levels[level].last_mut() {
            Some(last) if (last.right() - x).abs() < 1e-3 => last.w += width,
            _ => levels[level].push(Rect::new(x, layout.plot.y, width, layout.plot.h)),
        }
    }
    for (level, rects) in levels.into_iter().enumerate() {
        scene.push(RectBatch { fill: color.with_alpha([64, 128, 192, 255][level]), rects });
    }
}

/// Integer ticks on the left and the axis title.
fn draw_value_axis(layout: &Layout, y_max: f64, y_of: &dyn Fn(u32) -> f32, scene: &mut Scene) {
    let step = nice_step(y_max, (layout.plot.h / 28.0).max(2.0) as usize).max(1.0) as u32;
    for value in (0..=y_max.floor() as u32).step_by(step as usize) {
        let y = y_of(value);
        let tick_x = layout.plot.x - TICK;
        scene.push(style::line(Point::new(tick_x, y), Point::new(layout.plot.x, y), Stroke::solid(INK, 1.0)));
        let label = Text::new(Point::new(tick_x - 3.0, y + SMALL * 0.35), value.to_string(), SMALL);
        scene.push(label.anchor(Anchor::End).color(INK));
    }
    style::vertical_title(scene, MARGIN + LABEL, layout.plot.y, layout.plot.bottom(), "tasks");
}

/// A step line through the columns: within a column a vertical stroke from its lowest to
/// its highest value, then on at its last value.
fn envelope_line(
    extents: impl Iterator<Item = Extent>,
    x_of: &dyn Fn(usize) -> f32,
    y_of: &dyn Fn(u32) -> f32,
    color: Rgba,
) -> Polyline {
    let mut points: Vec<Point> = Vec::new();
    let mut push = |p: Point| {
        if points.last() != Some(&p) {
            points.push(p);
        }
    };
    for (index, extent) in extents.enumerate() {
        let x = x_of(index);
        for value in [extent.first, extent.min, extent.max, extent.last] {
            push(Point::new(x, y_of(value)));
        }
        push(Point::new(x_of(index + 1), y_of(extent.last)));
    }
    Polyline { points: merge_collinear(points), stroke: Stroke::solid(color, 1.5) }
}

/// Drops points in the middle of straight horizontal or vertical runs.
fn merge_collinear(points: Vec<Point>) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::with_capacity(points.len());
    for point in points {
        if let [.., a, b] = out.as_slice() {
            let same_row = a.y == b.y && b.y == point.y;
            let same_column = a.x == b.x && b.x == point.x && (a.y - b.y) * (b.y - point.y) >= 0.0;
            if same_row || same_column {
                out.pop();
            }
        }
        out.push(point);
    }
    out
}

/// Heat strips under the plot, one per CPU; returns their bottom.
fn draw_heat_strips(
    request: &RunningWaitingRequest<'_>,
    lengths: &[Vec<u32>],
    layout: &Layout,
    scene: &mut Scene,
) -> f32 {
    if request.per_cpu.is_empty() {
        return layout.plot.bottom();
    }
    let top = layout.plot.bottom() + 8.0;
    let columns_per_px = request.columns_per_px.max(0.01);
    let mut batches: std::collections::BTreeMap<u32, Vec<Rect>> = std::collections::BTreeMap::new();
    for (row, lengths) in lengths.iter().enumerate() {
        let y = top + row as f32 * layout.strip_height;
        for (x0, x1, length) in runs(lengths) {
            let x = layout.plot.x + x0 as f32 / columns_per_px;
            let w = (x1 - x0) as f32 / columns_per_px;
            batches.entry(length.min(HEAT.len() as u32 - 1)).or_default().push(Rect::new(x, y, w, layout.strip_height));
        }
    }
    let center = |row: usize| top + row as f32 * layout.strip_height + layout.strip_height / 2.0;
    layout.labels.draw(scene, request.per_cpu, layout.plot.x - TICK - 3.0, center);
    for (level, rects) in batches {
        scene.push(RectBatch { fill: HEAT[level as usize], rects });
    }
    // Socket (and NUMA node) boundaries, as in the timeline.
    for row in 1..request.per_cpu.len() {
        let (above, below) = (&request.per_cpu[row - 1], &request.per_cpu[row]);
        if above.socket.is_some() && (above.socket, above.node) != (below.socket, below.node) {
            let y = top + row as f32 * layout.strip_height;
            scene.push(RectBatch { fill: INK, rects: vec![Rect::new(layout.plot.x, y - 0.5, layout.plot.w, 1.0)] });
        }
    }
    let bottom = top + request.per_cpu.len() as f32 * layout.strip_height;
    let frame = Rect::from_edges(layout.plot.x, top, layout.plot.right(), bottom);
    scene.push(style::outline(&frame, Stroke::solid(FAINT, 1.0)));
    let title = Text::new(Point::new(MARGIN + LABEL, (top + bottom) / 2.0), "CPU", LABEL).anchor(Anchor::Middle);
    scene.push(title.vertical());
    bottom
}

/// Heat colors by runqueue length: 0 white, 1 (running, nobody waiting) pale green,
/// then yellow to dark red as more tasks wait; the last stands for that many or more.
const HEAT: [Rgba; 6] = [
    Rgba::rgb(255, 255, 255),
    Rgba::rgb(200, 230, 200),
    Rgba::rgb(255, 220, 90),
    Rgba::rgb(250, 150, 40),
    Rgba::rgb(225, 60, 30),
    Rgba::rgb(140, 20, 20),
];

/// Runs of equal non-zero values: `(first column, end column, value)`.
fn runs(values: &[u32]) -> Vec<(usize, usize, u32)> {
    let mut out: Vec<(usize, usize, u32)> = Vec::new();
    for (index, &value) in values.iter().enumerate() {
        match out.last_mut() {
            Some(run) if run.1 == index && run.2 == value => run.1 += 1,
            _ if value == 0 => {}
            _ => out.push((index, index + 1, value)),
        }
    }
    out
}

/// What the lines and the shading mean.
fn draw_key(scene: &mut Scene, x: f32, y: f32, cores: u32, unknown: bool) -> f32 {
    let y = y + SMALL + 4.0;
    let mut left = x;
    let mut entry = |scene: &mut Scene, mark: Mark, text: String| {
        match mark {
            Mark::Line(stroke) => {
                scene.push(style::line(Point::new(left, y - 4.0), Point::new(left + 18.0, y - 4.0), stroke))
            }
            Mark::Box(fill) => scene.push(RectBatch { fill, rects: vec![Rect::new(left, y - 9.0, 18.0, 10.0)] }),
        }
        scene.push(Text::new(Point::new(left + 24.0, y), text.as_str(), SMALL).color(INK));
        left += 24.0 + text_width(&text, SMALL) + 18.0;
    };
    entry(scene, Mark::Line(Stroke::solid(RUNNING, 1.5)), "running".into());
    entry(scene, Mark::Line(Stroke::solid(TOTAL, 1.5)), "running + waiting".into());
    entry(scene, Mark::Line(Stroke::dashed(Rgba::BLACK, 1.2, &[2.0, 3.0])), format!("cores ({cores})"));
    entry(scene, Mark::Box(WASTED), "a task waits while a core idles".into());
    if unknown {
        entry(scene, Mark::Box(UNKNOWN), "unknown".into());
    }
    y
}

enum Mark {
    Line(Stroke),
    Box(Rgba),
}

/// The heat strips' colors.
fn heat_key(scene: &mut Scene, x: f32, y: f32) -> f32 {
    let y = y + SMALL + 6.0;
    scene.push(Text::new(Point::new(x, y), "runqueue length:", SMALL).color(INK));
    let mut left = x + text_width("runqueue length:", SMALL) + 8.0;
    for (level, color) in HEAT.iter().enumerate() {
        let swatch = Rect::new(left, y - 9.0, 14.0, 10.0);
        scene.push(RectBatch { fill: *color, rects: vec![swatch] });
        scene.push(style::outline(&swatch, Stroke::solid(FAINT, 0.5)));
        let label = if level + 1 == HEAT.len() { format!("{level}+") } else { level.to_string() };
        scene.push(Text::new(Point::new(left + 18.0, y), label.as_str(), SMALL).color(INK));
        left += 18.0 + text_width(&label, SMALL) + 12.0;
    }
    y
}

/// The paper's question: how long a task waited while a core idled, and how long that is unknown.
fn summary(request: &RunningWaitingRequest<'_>, found: IdleWhileWaiting) -> Vec<String> {
    let window_s = request.window.len().0 as f64 / 1e9;
    let total_s = found.total.0 as f64 / 1e9;
    let share = if window_s > 0.0 { 100.0 * total_s / window_s } else { 0.0 };
    let longest = match found.longest {
        Some((start, end)) => {
            format!(
                "; longest {:.6} s from {:.6} s",
                end.saturating_sub(start).as_secs_f64(),
                seconds(start, request.origin)
            )
        }
        None => String::new(),
    };
    let (known, unknown) = known_and_unknown(found.unknown, request.window.len());
    let headline =
        format!("a task waited while a core idled for {total_s:.6} s{known} ({share:.2}% of the window){longest}");
    // The unknown part on a line of its own: the headline alone fills a narrow figure.
    [headline].into_iter().chain(unknown.strip_prefix("; ").map(str::to_string)).collect()
}

/// How a headline says that its idle-while-waiting time stands on known time only: `("",
/// "")` when all of it was known, else `(" known", "; 1.005000 s (51.00%) unknown: ...")`.
pub fn known_and_unknown(unknown: Nanos, window: Nanos) -> (&'static str, String) {
    if unknown == Nanos::ZERO {
        return ("", String::new());
    }
    let share = 100.0 * unknown.0 as f64 / window.0.max(1) as f64;
    let clause = format!(
        "; {:.6} s ({share:.2}%) unknown: tasks waited where a CPU's state is unknown (events lost, before its \
         first event or after its last)",
        unknown.0 as f64 / 1e9
    );
    (" known", clause)
}
