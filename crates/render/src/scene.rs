//! The scene: plain data that says what to draw, in CSS pixels (1/96 inch) with y pointing
//! down, in painting order. Figures build it; every backend reads it the same way.

use crate::color::Rgba;

/// A point in CSS pixels, y down.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

impl Point {
    pub const fn new(x: f32, y: f32) -> Point {
        Point { x, y }
    }

    fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }
}

/// An axis-aligned rectangle: top-left corner, width and height.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Rect {
    pub x: f32,
    pub y: f32,
    pub w: f32,
    pub h: f32,
}

impl Rect {
    pub const fn new(x: f32, y: f32, w: f32, h: f32) -> Rect {
        Rect { x, y, w, h }
    }

    /// The rectangle between two x and two y edges.
    pub fn from_edges(left: f32, top: f32, right: f32, bottom: f32) -> Rect {
        Rect::new(left, top, right - left, bottom - top)
    }

    pub fn right(&self) -> f32 {
        self.x + self.w
    }

    pub fn bottom(&self) -> f32 {
        self.y + self.h
    }

    /// Whether the rectangle covers anything: finite, with positive width and height.
    /// Backends skip the others.
    pub(crate) fn is_drawable(&self) -> bool {
        [self.x, self.y, self.w, self.h].iter().all(|v| v.is_finite()) && self.w > 0.0 && self.h > 0.0
    }
}

/// Many rectangles filled with one color: the bulk of a timeline. Rectangles that touch
/// show no seam in any backend; where they overlap, the later one is painted over.
#[derive(Clone, Debug, PartialEq)]
pub struct RectBatch {
    pub fill: Rgba,
    pub rects: Vec<Rect>,
}

impl RectBatch {
    pub fn new(fill: Rgba) -> RectBatch {
        RectBatch { fill, rects: Vec::new() }
    }
}

/// How a line is drawn. Ends are butt, corners mitred (limit 4), in every backend.
#[derive(Clone, Debug, PartialEq)]
pub struct Stroke {
    pub color: Rgba,
    /// Width in CSS pixels.
    pub width: f32,
    /// Alternating dash and gap lengths, starting with a dash; empty for a solid line. An
    /// odd count repeats the list once (as SVG does); invalid patterns draw solid.
    pub dash: Vec<f32>,
}

impl Stroke {
    pub fn solid(color: Rgba, width: f32) -> Stroke {
        Stroke { color, width, dash: Vec::new() }
    }

    pub fn dashed(color: Rgba, width: f32, dash: &[f32]) -> Stroke {
        Stroke { color, width, dash: dash.to_vec() }
    }

    /// The dash pattern as every backend draws it: an even number of finite, non-negative
    /// lengths with a positive sum, or `None` for a solid line.
    pub(crate) fn dash_pattern(&self) -> Option<Vec<f32>> {
        let valid = self.dash.iter().all(|d| d.is_finite() && *d >= 0.0) && self.dash.iter().sum::<f32>() > 0.0;
        match self.dash.len() % 2 {
            _ if !valid => None,
            0 => Some(self.dash.clone()),
            _ => Some(self.dash.repeat(2)),
        }
    }

    pub(crate) fn is_drawable(&self) -> bool {
        self.width.is_finite() && self.width > 0.0 && !self.color.is_invisible()
    }
}

/// An open line through points (use [`steps`] for step lines).
#[derive(Clone, Debug, PartialEq)]
pub struct Polyline {
    pub points: Vec<Point>,
    pub stroke: Stroke,
}

impl Polyline {
    pub(crate) fn is_drawable(&self) -> bool {
        self.points.len() >= 2 && self.points.iter().all(|p| p.is_finite()) && self.stroke.is_drawable()
    }
}

/// A closed filled shape (nonzero winding), e.g. a min–max envelope; use alpha to let
/// what is under it show through.
#[derive(Clone, Debug, PartialEq)]
pub struct Polygon {
    pub points: Vec<Point>,
    pub fill: Rgba,
}

impl Polygon {
    pub(crate) fn is_drawable(&self) -> bool {
        self.points.len() >= 3 && self.points.iter().all(|p| p.is_finite()) && !self.fill.is_invisible()
    }
}

/// Where a text's position is along the text.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Anchor {
    #[default]
    Start,
    Middle,
    End,
}

impl Anchor {
    /// The fraction of the text's advance that lies before its position.
    pub(crate) fn fraction(self) -> f32 {
        match self {
            Anchor::Start => 0.0,
            Anchor::Middle => 0.5,
            Anchor::End => 1.0,
        }
    }
}

/// One line of text in the bundled font. `pos` is on the baseline, at the anchor.
#[derive(Clone, Debug, PartialEq)]
pub struct Text {
    pub pos: Point,
    pub content: String,
    /// Font size (em) in CSS pixels.
    pub size: f32,
    pub anchor: Anchor,
    pub color: Rgba,
    /// Turned 90° counter-clockwise, reading bottom to top (for y-axis titles).
    pub vertical: bool,
}

impl Text {
    /// Black, horizontal text starting at `pos`.
    pub fn new(pos: Point, content: impl Into<String>, size: f32) -> Text {
        Text { pos, content: content.into(), size, anchor: Anchor::Start, color: Rgba::BLACK, vertical: false }
    }

    pub fn anchor(self, anchor: Anchor) -> Text {
        Text { anchor, ..self }
    }

    pub fn color(self, color: Rgba) -> Text {
        Text { color, ..self }
    }

    pub fn vertical(self) -> Text {
        Text { vertical: true, ..self }
    }

    pub(crate) fn is_drawable(&self) -> bool {
        self.pos.is_finite() && self.size.is_finite() && self.size > 0.0 && !self.color.is_invisible()
    }
}

/// Items drawn only inside a rectangle (a plot area). Clips nest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Clip {
    pub rect: Rect,
    pub items: Vec<Item>,
}

impl Clip {
    pub fn new(rect: Rect) -> Clip {
        Clip { rect, items: Vec::new() }
    }

    pub fn push(&mut self, item: impl Into<Item>) {
        self.items.push(item.into());
    }
}

/// One thing to draw.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Rects(RectBatch),
    Line(Polyline),
    Polygon(Polygon),
    Text(Text),
    Clip(Clip),
}

impl Item {
    /// Moves the item by (dx, dy).
    pub fn translate(&mut self, dx: f32, dy: f32) {
        let shift = |p: &mut Point| {
            p.x += dx;
            p.y += dy;
        };
        let shift_rect = |r: &mut Rect| {
            r.x += dx;
            r.y += dy;
        };
        match self {
            Item::Rects(batch) => batch.rects.iter_mut().for_each(shift_rect),
            Item::Line(line) => line.points.iter_mut().for_each(shift),
            Item::Polygon(polygon) => polygon.points.iter_mut().for_each(shift),
            Item::Text(text) => shift(&mut text.pos),
            Item::Clip(clip) => {
                shift_rect(&mut clip.rect);
                clip.items.iter_mut().for_each(|item| item.translate(dx, dy));
            }
        }
    }
}

impl From<RectBatch> for Item {
    fn from(batch: RectBatch) -> Item {
        Item::Rects(batch)
    }
}

impl From<Polyline> for Item {
    fn from(line: Polyline) -> Item {
        Item::Line(line)
    }
}

impl From<Polygon> for Item {
    fn from(polygon: Polygon) -> Item {
        Item::Polygon(polygon)
    }
}

impl From<Text> for Item {
    fn from(text: Text) -> Item {
        Item::Text(text)
    }
}

impl From<Clip> for Item {
    fn from(clip: Clip) -> Item {
        Item::Clip(clip)
    }
}

/// One picture: a size in CSS pixels, a background and items painted in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scene {
    pub width: f32,
    pub height: f32,
    pub background: Rgba,
    pub items: Vec<Item>,
}

impl Scene {
    pub fn new(width: f32, height: f32, background: Rgba) -> Scene {
        Scene { width, height, background, items: Vec::new() }
    }

    pub fn push(&mut self, item: impl Into<Item>) {
        self.items.push(item.into());
    }

    /// The scenes one below the other, left-aligned, `gap` pixels apart (for `--stack`).
    /// The result is as wide as the widest; its background is the first scene's, and a
    /// scene with another background gets it painted behind its own items.
    pub fn stack(scenes: impl IntoIterator<Item = Scene>, gap: f32) -> Scene {
        let mut stacked: Option<Scene> = None;
        for mut scene in scenes {
            let result = stacked.get_or_insert_with(|| Scene::new(0.0, -gap, scene.background));
            let top = result.height + gap;
            if scene.background != result.background {
                let area = Rect::new(0.0, top, scene.width, scene.height);
                result.push(RectBatch { fill: scene.background, rects: vec![area] });
            }
            for item in &mut scene.items {
                item.translate(0.0, top);
            }
            result.items.append(&mut scene.items);
            result.width = result.width.max(scene.width);
            result.height = top + scene.height;
        }
        stacked.unwrap_or_default()
    }
}

/// Pages: one scene each. PDF keeps them as pages; SVG and PNG stack them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document {
    pub pages: Vec<Scene>,
}

/// The corners of a step line through samples: each sample's y holds from its x to the
/// next sample's x, and the last one to `end_x`. Samples with an unchanged y add no corner.
pub fn steps(samples: &[Point], end_x: f32) -> Vec<Point> {
    let Some((first, rest)) = samples.split_first() else {
        return Vec::new();
    };
    let mut corners = vec![*first];
    let mut level = first.y;
    for sample in rest {
        if sample.y == level {
            continue;
        }
        corners.push(Point::new(sample.x, level));
        corners.push(*sample);
        level = sample.y;
    }
    corners.push(Point::new(end_x, level));
    corners
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_each_level_until_the_next_sample() {
        let samples = [Point::new(0.0, 5.0), Point::new(2.0, 5.0), Point::new(3.0, 1.0)];
        let expected = [Point::new(0.0, 5.0), Point::new(3.0, 5.0), Point::new(3.0, 1.0), Point::new(4.0, 1.0)];
        assert_eq!(steps(&samples, 4.0), expected);
        assert!(steps(&[], 4.0).is_empty());
    }

    #[test]
    fn stacking_moves_scenes_down_and_keeps_their_backgrounds() {
        let mut top = Scene::new(10.0, 4.0, Rgba::WHITE);
        top.push(Text::new(Point::new(1.0, 3.0), "a", 2.0));
        let mut bottom = Scene::new(20.0, 6.0, Rgba::BLACK);
        let mut clip = Clip::new(Rect::new(0.0, 0.0, 5.0, 5.0));
        clip.push(Polyline {
            points: vec![Point::new(0.0, 1.0), Point::new(2.0, 1.0)],
            stroke: Stroke::solid(Rgba::WHITE, 1.0),
        });
        bottom.push(clip);

        let stacked = Scene::stack([top, bottom], 2.0);
        assert_eq!((stacked.width, stacked.height, stacked.background), (20.0, 12.0, Rgba::WHITE));
        let Item::Rects(background) = &stacked.items[1] else { panic!("{:?}", stacked.items) };
        assert_eq!(background.rects, [Rect::new(0.0, 6.0, 20.0, 6.0)]);
        let Item::Clip(clip) = &stacked.items[2] else { panic!("{:?}", stacked.items) };
        assert_eq!(clip.rect, Rect::new(0.0, 6.0, 5.0, 5.0));
        let Item::Line(line) = &clip.items[0] else { panic!("{:?}", clip.items) };
        assert_eq!(line.points[1], Point::new(2.0, 7.0));
        assert_eq!(Scene::stack([], 2.0), Scene::default());
    }

    #[test]
    fn dash_patterns_are_even_or_solid() {
        let dash = |d: &[f32]| Stroke::dashed(Rgba::BLACK, 1.0, d).dash_pattern();
        assert_eq!(dash(&[2.0, 1.0]), Some(vec![2.0, 1.0]));
        assert_eq!(dash(&[2.0]), Some(vec![2.0, 2.0]));
        assert_eq!(dash(&[]), None);
        assert_eq!(dash(&[0.0, 0.0]), None);
        assert_eq!(dash(&[1.0, -1.0]), None);
    }

    #[test]
    fn undrawable_shapes() {
        assert!(Rect::new(0.0, 0.0, 1.0, 1.0).is_drawable());
        assert!(!Rect::new(0.0, 0.0, 0.0, 1.0).is_drawable());
        assert!(!Rect::new(f32::NAN, 0.0, 1.0, 1.0).is_drawable());
        assert_eq!(Rect::from_edges(1.0, 2.0, 4.0, 8.0), Rect::new(1.0, 2.0, 3.0, 6.0));
        let line = Polyline { points: vec![Point::new(0.0, 0.0)], stroke: Stroke::solid(Rgba::BLACK, 1.0) };
        assert!(!line.is_drawable());
        assert!(!Text::new(Point::new(0.0, 0.0), "x", 10.0).color(Rgba::TRANSPARENT).is_drawable());
    }
}
