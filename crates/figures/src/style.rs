//! The figures' shared look — font sizes, ink colors, margins — and the few drawing
//! helpers every figure uses, so all of them read alike.

use crate::palette::Rgb;
use render::{Anchor, Point, Polyline, Rect, Scene, Stroke, Text, text_width};

pub const TITLE: f32 = 15.0;
pub const LABEL: f32 = 12.0;
pub const SMALL: f32 = 10.5;
/// Length of a tick mark.
pub const TICK: f32 = 4.0;
/// Space around a figure.
pub const MARGIN: f32 = 14.0;

/// Text and axes.
pub const INK: render::Rgba = render::Rgba::rgb(30, 30, 30);
/// Frames and secondary marks.
pub const FAINT: render::Rgba = render::Rgba::grey(160);

/// A palette color for the renderer.
pub fn rgba(color: Rgb) -> render::Rgba {
    render::Rgba::rgb(color.0, color.1, color.2)
}

/// A straight line.
pub fn line(from: Point, to: Point, stroke: Stroke) -> Polyline {
    Polyline { points: vec![from, to], stroke }
}

/// The outline of a rectangle.
pub fn outline(rect: &Rect, stroke: Stroke) -> Polyline {
    let (l, t, r, b) = (rect.x, rect.y, rect.right(), rect.bottom());
    let corners = [(l, t), (r, t), (r, b), (l, b), (l, t)];
    Polyline { points: corners.iter().map(|&(x, y)| Point::new(x, y)).collect(), stroke }
}

/// The figure's title at the top left; returns the y below it.
pub fn title(scene: &mut Scene, x: f32, text: &str) -> f32 {
    scene.push(Text::new(Point::new(x, MARGIN + TITLE), text, TITLE).color(INK));
    MARGIN + TITLE + 12.0
}

/// A vertical axis title, centered on `[top, bottom]`, with its baseline at `x`.
pub fn vertical_title(scene: &mut Scene, x: f32, top: f32, bottom: f32, text: &str) {
    scene.push(Text::new(Point::new(x, (top + bottom) / 2.0), text, LABEL).anchor(Anchor::Middle).vertical());
}

/// Lines of small text, one below the other from `y`; returns the y below them.
pub fn notes(scene: &mut Scene, x: f32, mut y: f32, lines: &[String]) -> f32 {
    for line in lines {
        y += SMALL + 4.0;
        scene.push(Text::new(Point::new(x, y), line.as_str(), SMALL).color(INK));
    }
    y
}

/// A table of small text: columns left-aligned (text) or right-aligned (numbers), each as
/// wide as its widest cell; an optional color swatch before each row. Returns the y below.
pub fn table(scene: &mut Scene, x: f32, mut y: f32, header: &[&str], rows: &[(Option<Rgb>, Vec<String>)]) -> f32 {
    const GAP: f32 = 14.0;
    const SWATCH: f32 = 10.0;
    let widths: Vec<f32> = (0..header.len())
        .map(|c| {
            let cells = rows.iter().map(|(_, cells)| cells[c].as_str()).chain([header[c]]);
            cells.map(|cell| text_width(cell, SMALL)).fold(0.0, f32::max)
        })
        .collect();
    let numeric = |c: usize| c > 0;
    let put_row = |scene: &mut Scene, y: f32, swatch: Option<Rgb>, cells: &[&str]| {
        if let Some(color) = swatch {
            let square = Rect::new(x, y - SWATCH + 1.0, SWATCH, SWATCH);
            scene.push(render::RectBatch { fill: rgba(color), rects: vec![square] });
        }
        let mut left = x + SWATCH + 6.0;
        for (c, cell) in cells.iter().enumerate() {
            let (pos, anchor) = if numeric(c) { (left + widths[c], Anchor::End) } else { (left, Anchor::Start) };
            scene.push(Text::new(Point::new(pos, y), *cell, SMALL).anchor(anchor).color(INK));
            left += widths[c] + GAP;
        }
    };
    y += SMALL + 6.0;
    put_row(scene, y, None, header);
    for (swatch, cells) in rows {
        y += SMALL + 4.0;
        let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
        put_row(scene, y, *swatch, &cells);
    }
    y
}
