//! What differs between two runs, as horizontal bars: one row per measure (a command's
//! waiting time, a CPU's idle time, CPU time lost to an incident kind...), its bar the
//! difference B − A in seconds from a zero line, red where B has more, blue where less,
//! with the difference in running time drawn as a dashed reference so a bar's share of it
//! can be read off. Rows come in the caller's order (most explanatory first).

use crate::axis::ticks;
use crate::style::{self, FAINT, INK, LABEL, MARGIN, SMALL, TICK};
use render::{Anchor, Point, Rect, RectBatch, Rgba, Scene, Stroke, Text, text_width};

const MORE: Rgba = Rgba::rgb(210, 60, 40);
const LESS: Rgba = Rgba::rgb(40, 110, 190);
const ROW: f32 = 18.0;

/// The figure: `rows` as (label, difference in seconds), `reference` the difference in
/// running time, bars `width` pixels across.
pub fn difference_bars(title: &str, rows: &[(String, f64)], reference: f64, notes: &[String], width: f32) -> Scene {
    let extent =
        rows.iter().map(|(_, d)| d.abs()).chain([reference.abs()]).filter(|v| v.is_finite()).fold(0.0, f64::max);
    let extent = if extent > 0.0 { extent * 1.05 } else { 1.0 };
    let label_width = rows.iter().map(|(l, _)| text_width(l, SMALL)).fold(0.0, f32::max);
    let plot =
        Rect::new(MARGIN + label_width + 10.0, MARGIN + style::TITLE + 16.0, width, ROW * rows.len().max(1) as f32);
    let x_of = |v: f64| plot.x + ((v + extent) / (2.0 * extent)) as f32 * plot.w;

    let mut scene = Scene::new(0.0, 0.0, Rgba::WHITE);
    style::title(&mut scene, MARGIN, title);
    for tick in ticks(-extent, extent, (plot.w / 80.0).max(2.0) as usize) {
        let x = x_of(tick.value);
        scene.push(style::line(
            Point::new(x, plot.y),
            Point::new(x, plot.bottom()),
            Stroke::solid(Rgba::grey(232), 1.0),
        ));
        scene.push(style::line(
            Point::new(x, plot.bottom()),
            Point::new(x, plot.bottom() + TICK),
            Stroke::solid(INK, 1.0),
        ));
        let label = Text::new(Point::new(x, plot.bottom() + TICK + SMALL + 2.0), tick.label, SMALL);
        scene.push(label.anchor(Anchor::Middle));
    }
    let (mut more, mut less) = (RectBatch::new(MORE), RectBatch::new(LESS));
    for (index, (label, difference)) in rows.iter().enumerate() {
        let top = plot.y + index as f32 * ROW;
        let (a, b) = (x_of(0.0), x_of(*difference));
        let bar = Rect::from_edges(a.min(b), top + 3.0, a.max(b).max(a.min(b) + 1.0), top + ROW - 3.0);
        if *difference >= 0.0 {
            more.rects.push(bar)
        } else {
            less.rects.push(bar)
        }
        let text = Text::new(Point::new(plot.x - 6.0, top + ROW / 2.0 + SMALL * 0.35), label.as_str(), SMALL);
        scene.push(text.anchor(Anchor::End).color(INK));
    }
    scene.push(more);
    scene.push(less);
    let zero = x_of(0.0);
    scene.push(style::line(Point::new(zero, plot.y), Point::new(zero, plot.bottom()), Stroke::solid(INK, 1.0)));
    if reference.is_finite() && reference != 0.0 {
        let x = x_of(reference);
        let dashed = Stroke::dashed(Rgba::BLACK, 1.2, &[4.0, 3.0]);
        scene.push(style::line(Point::new(x, plot.y - 4.0), Point::new(x, plot.bottom()), dashed));
        let label = Text::new(Point::new(x, plot.y - 6.0), "running time difference", SMALL);
        scene.push(label.anchor(Anchor::Middle).color(INK));
    }
    scene.push(style::outline(&plot, Stroke::solid(FAINT, 1.0)));
    let title_y = plot.bottom() + TICK + SMALL + LABEL + 10.0;
    let axis_title = Text::new(Point::new(plot.x + plot.w / 2.0, title_y), "B - A (s)", LABEL);
    scene.push(axis_title.anchor(Anchor::Middle));
    let y = style::notes(&mut scene, MARGIN, title_y + 6.0, notes);
    let notes_width = notes.iter().map(|n| text_width(n, SMALL)).fold(0.0, f32::max);
    scene.width = (plot.right().max(MARGIN + notes_width) + MARGIN).ceil();
    scene.height = (y + MARGIN).ceil();
    scene
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_and_reference() {
        let rows = vec![("waiting".to_string(), 0.4), ("CPU 1 idle".to_string(), -0.2)];
        let scene = difference_bars("t", &rows, 0.5, &[], 300.0);
        let batches: Vec<&RectBatch> = scene
            .items
            .iter()
            .filter_map(|i| match i {
                render::Item::Rects(b) => Some(b),
                _ => None,
            })
            .collect();
        assert_eq!(batches.iter().map(|b| b.rects.len()).sum::<usize>(), 2);
        assert!(scene.width > 300.0);
    }
}
