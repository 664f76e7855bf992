//! The bundled font and text layout. All backends place glyphs from here, with the same
//! advances and outlines, so text measures and looks the same in SVG, PNG and PDF on every
//! machine. The font is a subset of DejaVu Sans (see `fonts/subset.sh` and `fonts/LICENSE`);
//! characters it lacks are drawn as its "missing glyph" box.

use std::sync::OnceLock;

use ttf_parser::{Face, GlyphId, OutlineBuilder};

use crate::scene::{Point, Text};

const FONT: &[u8] = include_bytes!("../fonts/DejaVuSans-subset.ttf");

fn face() -> &'static Face<'static> {
    static FACE: OnceLock<Face<'static>> = OnceLock::new();
    FACE.get_or_init(|| Face::parse(FONT, 0).expect("the bundled font is a valid TrueType font"))
}

/// Font units per em: glyph outlines and advances are in these units.
pub(crate) fn units_per_em() -> f32 {
    f32::from(face().units_per_em())
}

fn glyph_of(c: char) -> u16 {
    face().glyph_index(c).map_or(0, |glyph| glyph.0)
}

/// A glyph's advance in font units.
pub(crate) fn advance(glyph: u16) -> u16 {
    face().glyph_hor_advance(GlyphId(glyph)).unwrap_or(0)
}

/// The width of one line of text at a font size, in CSS pixels: where the next character
/// would start.
pub fn text_width(text: &str, size: f32) -> f32 {
    let units: u32 = text.chars().map(|c| u32::from(advance(glyph_of(c)))).sum();
    units as f32 * size / units_per_em()
}

/// Vertical measures of the font at a size, in CSS pixels from the baseline.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct FontMetrics {
    /// How far the tallest glyphs reach above the baseline.
    pub ascent: f32,
    /// How far descenders reach below the baseline (positive).
    pub descent: f32,
    /// The height of capital letters: center a label on y with its baseline at
    /// y + cap_height / 2.
    pub cap_height: f32,
}

pub fn font_metrics(size: f32) -> FontMetrics {
    let face = face();
    let px = |units: i16| f32::from(units) * size / units_per_em();
    FontMetrics {
        ascent: px(face.ascender()),
        descent: -px(face.descender()),
        // DejaVu's OS/2 table is too old to record it: measure the H.
        cap_height: px(face.glyph_bounding_box(GlyphId(glyph_of('H'))).map_or(face.ascender(), |bbox| bbox.y_max)),
    }
}

/// The font's bounding box over all glyphs, in font units: [left, bottom, right, top].
pub(crate) fn bounding_box() -> [f32; 4] {
    let rect = face().global_bounding_box();
    [rect.x_min, rect.y_min, rect.x_max, rect.y_max].map(f32::from)
}

/// A glyph of a laid-out text.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) struct PlacedGlyph {
    pub id: u16,
    /// The character it shows (for PDF's text extraction).
    pub ch: char,
    /// Where its origin is along the baseline, in font units from the text's start.
    pub pen: i32,
}

/// A text laid out: glyphs along a baseline in font units (y up), and the affine matrix
/// `[a, b, c, d, e, f]` that takes font units to scene pixels:
/// (x, y) → (a·x + c·y + e, b·x + d·y + f).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Layout {
    pub glyphs: Vec<PlacedGlyph>,
    pub matrix: [f32; 6],
}

pub(crate) fn layout(text: &Text) -> Layout {
    let mut pen = 0i32;
    let glyphs = text
        .content
        .chars()
        .map(|ch| {
            let id = glyph_of(ch);
            let glyph = PlacedGlyph { id, ch, pen };
            pen += i32::from(advance(id));
            glyph
        })
        .collect();
    let scale = text.size / units_per_em();
    // Move the start back along the text's direction so the anchor lands on `pos`.
    let back = text.anchor.fraction() * pen as f32 * scale;
    let Point { x, y } = text.pos;
    let matrix = match text.vertical {
        false => [scale, 0.0, 0.0, -scale, x - back, y],
        true => [0.0, -scale, -scale, 0.0, x, y + back],
    };
    Layout { glyphs, matrix }
}

/// One piece of a glyph outline, in font units (y up).
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum Segment {
    Move(Point),
    Line(Point),
    Quad(Point, Point),
    Cubic(Point, Point, Point),
    Close,
}

/// A glyph's outline; empty for glyphs that draw nothing (spaces).
pub(crate) fn outline(glyph: u16) -> Vec<Segment> {
    struct Collect(Vec<Segment>);
    impl OutlineBuilder for Collect {
        fn move_to(&mut self, x: f32, y: f32) {
            self.0.push(Segment::Move(Point::new(x, y)));
        }
        fn line_to(&mut self, x: f32, y: f32) {
            self.0.push(Segment::Line(Point::new(x, y)));
        }
        fn quad_to(&mut self, x1: f32, y1: f32, x: f32, y: f32) {
            self.0.push(Segment::Quad(Point::new(x1, y1), Point::new(x, y)));
        }
        fn curve_to(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, x: f32, y: f32) {
            self.0.push(Segment::Cubic(Point::new(x1, y1), Point::new(x2, y2), Point::new(x, y)));
        }
        fn close(&mut self) {
            self.0.push(Segment::Close);
        }
    }
    let mut collect = Collect(Vec::new());
    face().outline_glyph(GlyphId(glyph), &mut collect);
    collect.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Anchor;

    #[test]
    fn widths_add_advances() {
        assert_eq!(units_per_em(), 2048.0);
        assert_eq!(text_width("", 12.0), 0.0);
        let one = text_width("m", 10.0);
        assert!((one - 9.74).abs() < 0.01, "{one}");
        assert_eq!(text_width("mm", 10.0), 2.0 * one);
        // Characters outside the font still take room (the missing-glyph box).
        assert!(text_width("\u{4e2d}", 10.0) > 0.0);
    }

    #[test]
    fn metrics() {
        let metrics = font_metrics(2048.0);
        assert_eq!(metrics, FontMetrics { ascent: 1901.0, descent: 483.0, cap_height: 1493.0 });
    }

    #[test]
    fn anchors_move_the_start_along_the_direction() {
        let text = Text::new(Point::new(100.0, 50.0), "ab", 20.48);
        let width = text_width("ab", 20.48);
        let start = layout(&text);
        assert_eq!(start.matrix, [0.01, 0.0, 0.0, -0.01, 100.0, 50.0]);
        assert_eq!(start.glyphs[1].pen, i32::from(advance(glyph_of('a'))));
        assert_eq!(start.glyphs[1].ch, 'b');
        let end = layout(&text.clone().anchor(Anchor::End));
        assert_eq!(end.matrix[4], 100.0 - width);
        let up = layout(&text.anchor(Anchor::Middle).vertical());
        assert_eq!(up.matrix, [0.0, -0.01, -0.01, 0.0, 100.0, 50.0 + width / 2.0]);
    }

    #[test]
    fn outlines() {
        assert!(outline(glyph_of(' ')).is_empty());
        let o = outline(glyph_of('o'));
        assert_eq!(o.iter().filter(|s| matches!(s, Segment::Move(_))).count(), 2);
        assert_eq!(o.last(), Some(&Segment::Close));
        assert!(!outline(0).is_empty(), "the missing-glyph box has an outline");
        let [left, bottom, right, top] = bounding_box();
        assert!(left < 0.0 && bottom < 0.0 && right > 2048.0 && top > 1901.0);
    }
}
