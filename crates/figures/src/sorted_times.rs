//! Running times of repeated runs, sorted from fastest to slowest: the schedgraph paper's
//! Figure 3 for one series, and its Figure 14 (before and after a change) for several,
//! overlaid on the same axes in distinct colors with a legend. A marker per run, joined
//! by a line; the value axis spans the data with a margin and says where it starts.

use crate::axis::ticks;
use crate::palette::color_of_name;
use crate::style::{self, FAINT, INK, LABEL, MARGIN, SMALL, TICK};
use render::{Anchor, Point, Polyline, Rect, RectBatch, Rgba, Scene, Stroke, Text, text_width};

/// One series: its label and its values (any order; drawn sorted).
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub values: Vec<f64>,
}

/// Distinct colors for the first series (then palette colors by label).
const COLORS: [Rgba; 6] = [
    Rgba::rgb(31, 100, 180),
    Rgba::rgb(215, 60, 30),
    Rgba::rgb(40, 150, 60),
    Rgba::rgb(140, 70, 170),
    Rgba::rgb(230, 150, 20),
    Rgba::rgb(20, 160, 170),
];

fn color(index: usize, label: &str) -> Rgba {
    COLORS.get(index).copied().unwrap_or_else(|| style::rgba(color_of_name(label)))
}

/// The figure: `width` × `height` CSS pixels of plot; `notes` below the legend.
pub fn sorted_times(title: &str, series: &[Series], notes: &[String], width: f32, height: f32) -> Scene {
    let values = || series.iter().flat_map(|s| s.values.iter().copied()).filter(|v| v.is_finite());
    let (low, high) = values().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    let (low, high) = if low.is_finite() { (low, high) } else { (0.0, 1.0) };
    let margin = ((high - low) * 0.08).max(high.abs() * 0.01).max(1e-9);
    let (y_min, y_max) = ((low - margin).max(0.0), high + margin);
    let runs = series.iter().map(|s| s.values.len()).max().unwrap_or(0).max(1);
    let label_width = ticks(y_min, y_max, 8).iter().map(|t| text_width(&t.label, SMALL)).fold(0.0, f32::max);
    let plot = Rect::new(MARGIN + LABEL + 10.0 + label_width + TICK + 4.0, MARGIN + style::TITLE + 16.0, width, height);
    let x_of = |rank: usize| plot.x + (rank as f32 + 0.5) / runs as f32 * plot.w;
    let y_of = |v: f64| plot.bottom() - ((v - y_min) / (y_max - y_min)) as f32 * plot.h;

    let mut scene = Scene::new(0.0, 0.0, Rgba::WHITE);
    style::title(&mut scene, plot.x, title);
    for tick in ticks(y_min, y_max, (plot.h / 40.0).max(2.0) as usize) {
        let y = y_of(tick.value);
        scene.push(style::line(
            Point::new(plot.x, y),
            Point::new(plot.right(), y),
            Stroke::solid(Rgba::grey(232), 1.0),
        ));
        scene.push(style::line(Point::new(plot.x - TICK, y), Point::new(plot.x, y), Stroke::solid(INK, 1.0)));
        scene.push(Text::new(Point::new(plot.x - TICK - 3.0, y + SMALL * 0.35), tick.label, SMALL).anchor(Anchor::End));
    }
    style::vertical_title(&mut scene, MARGIN + LABEL, plot.y, plot.bottom(), "running time (s)");
    let every = (runs / 20).max(1);
    for rank in (0..runs).filter(|r| r % every == 0 || r + 1 == runs) {
        let x = x_of(rank);
        scene.push(style::line(
            Point::new(x, plot.bottom()),
            Point::new(x, plot.bottom() + TICK),
            Stroke::solid(INK, 1.0),
        ));
        let label = Text::new(Point::new(x, plot.bottom() + TICK + SMALL + 2.0), (rank + 1).to_string(), SMALL);
        scene.push(label.anchor(Anchor::Middle));
    }
    let axis_title_y = plot.bottom() + TICK + SMALL + LABEL + 10.0;
    let axis_title = Text::new(Point::new(plot.x + plot.w / 2.0, axis_title_y), "runs, fastest to slowest", LABEL);
    scene.push(axis_title.anchor(Anchor::Middle));
    for (index, s) in series.iter().enumerate() {
        draw_series(&mut scene, &s.values, color(index, &s.label), &x_of, &y_of);
    }
    scene.push(style::outline(&plot, Stroke::solid(FAINT, 1.0)));
    let mut y = axis_title_y + 8.0;
    if series.len() > 1 {
        y = legend(&mut scene, plot.x, y, series);
    }
    y = style::notes(&mut scene, plot.x, y, notes);
    let legend_width = series.iter().map(|s| text_width(&s.label, SMALL) + 20.0).fold(0.0, f32::max);
    let notes_width = notes.iter().map(|n| text_width(n, SMALL)).fold(0.0, f32::max);
    scene.width = (plot.right().max(plot.x + legend_width.max(notes_width)) + MARGIN).ceil();
    scene.height = (y + MARGIN).ceil();
    scene
}

fn draw_series(scene: &mut Scene, values: &[f64], color: Rgba, x_of: &dyn Fn(usize) -> f32, y_of: &dyn Fn(f64) -> f32) {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let points: Vec<Point> = sorted.iter().enumerate().map(|(rank, &v)| Point::new(x_of(rank), y_of(v))).collect();
    let marks = points.iter().map(|p| Rect::new(p.x - 3.0, p.y - 3.0, 6.0, 6.0)).collect();
    scene.push(Polyline { points, stroke: Stroke::solid(color, 1.5) });
    scene.push(RectBatch { fill: color, rects: marks });
}

/// A swatch and the label of each series, one per line; returns the y below.
fn legend(scene: &mut Scene, x: f32, mut y: f32, series: &[Series]) -> f32 {
    for (index, s) in series.iter().enumerate() {
        y += SMALL + 5.0;
        scene.push(RectBatch { fill: color(index, &s.label), rects: vec![Rect::new(x, y - SMALL + 1.0, 12.0, SMALL)] });
        let text = format!("{} ({} runs)", s.label, s.values.len());
        scene.push(Text::new(Point::new(x + 18.0, y), text, SMALL).color(INK));
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_of_two_series_has_both_and_a_legend() {
        let series = [
            Series { label: "before".into(), values: vec![3.0, 1.0, 2.0] },
            Series { label: "after".into(), values: vec![1.5, 1.2] },
        ];
        let scene = sorted_times("t", &series, &["a note".into()], 400.0, 200.0);
        assert!(scene.width > 400.0 && scene.height > 200.0);
        let mut svg = Vec::new();
        render::write_svg(&scene, &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.contains("<svg"), "{svg}");
        let empty = sorted_times("t", &[], &[], 400.0, 200.0);
        assert!(empty.width > 0.0);
    }
}
