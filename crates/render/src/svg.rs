//! The SVG backend: one `<path>` per rectangle batch (relative moves, coordinates in
//! hundredths of a pixel), so half a million rectangles stay around 10 MB; glyphs defined
//! once each from the bundled font's outlines and placed with `<use>`, so text looks as in
//! the other backends without depending on the viewer's fonts.

use std::collections::BTreeMap;
use std::io::Write;

use crate::Error;
use crate::color::Rgba;
use crate::font::{self, Segment};
use crate::num::{COORDINATE_DECIMALS, hundredths, rounded_edges, write_fixed, write_scaled};
use crate::scene::{Clip, Item, Point, Polygon, Polyline, Rect, RectBatch, Scene, Text};

/// Decimals for the scale part of text matrices (glyph coordinates are in thousands of
/// font units, so the scale needs more than coordinates do).
const MATRIX_DECIMALS: u32 = 7;

/// Writes a scene as an SVG document.
pub fn write_svg(scene: &Scene, mut out: impl Write) -> Result<(), Error> {
    let mut svg = SvgWriter::default();
    svg.open(scene);
    svg.items(&scene.items);
    svg.close();
    out.write_all(&svg.out)?;
    Ok(())
}

#[derive(Default)]
struct SvgWriter {
    out: Vec<u8>,
    clips: u32,
    /// Path data of each glyph used so far, in font units; empty for blank glyphs.
    glyphs: BTreeMap<u16, Vec<u8>>,
}

impl SvgWriter {
    fn open(&mut self, scene: &Scene) {
        self.text(r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width=""#);
        self.coordinate(scene.width);
        self.text(r#"" height=""#);
        self.coordinate(scene.height);
        self.text(r#"" viewBox="0 0 "#);
        self.coordinate(scene.width);
        self.text(" ");
        self.coordinate(scene.height);
        self.text("\">\n");
        if !scene.background.is_invisible() {
            self.text(r#"<rect width="100%" height="100%""#);
            self.paint("fill", scene.background);
            self.text("/>\n");
        }
    }

    fn close(&mut self) {
        let glyphs = std::mem::take(&mut self.glyphs);
        self.text("<defs>\n");
        for (id, data) in glyphs.iter().filter(|(_, data)| !data.is_empty()) {
            self.text(&format!(r#"<path id="g{id}" d=""#));
            self.out.extend_from_slice(data);
            self.text("\"/>\n");
        }
        self.text("</defs>\n</svg>\n");
    }

    fn items(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Rects(batch) => self.rects(batch),
                Item::Line(line) => self.line(line),
                Item::Polygon(polygon) => self.polygon(polygon),
                Item::Text(text) => self.glyph_run(text),
                Item::Clip(clip) => self.clip(clip),
            }
        }
    }

    fn rects(&mut self, batch: &RectBatch) {
        if batch.fill.is_invisible() {
            return;
        }
        let mut data = Vec::with_capacity(batch.rects.len() * 24);
        let mut start: Option<(i64, i64)> = None;
        for [left, top, right, bottom] in rounded_edges(&batch.rects) {
            // After `z` the pen is back at the previous rectangle's corner: move relative to it.
            let (command, dx, dy) = match start {
                None => (b'M', left, top),
                Some((x, y)) => (b'm', left - x, top - y),
            };
            for (command, value) in
                [(command, dx), (0, dy), (b'h', right - left), (b'v', bottom - top), (b'h', left - right)]
            {
                if command != 0 {
                    data.push(command);
                }
                number(&mut data, value, COORDINATE_DECIMALS);
            }
            data.push(b'z');
            start = Some((left, top));
        }
        if data.is_empty() {
            return;
        }
        self.text("<path");
        self.paint("fill", batch.fill);
        self.text(r#" shape-rendering="crispEdges" d=""#);
        self.out.append(&mut data);
        self.text("\"/>\n");
    }

    fn line(&mut self, line: &Polyline) {
        if !line.is_drawable() {
            return;
        }
        let stroke = &line.stroke;
        self.text(r#"<path fill="none""#);
        self.paint("stroke", stroke.color);
        self.text(r#" stroke-width=""#);
        self.coordinate(stroke.width);
        if let Some(dash) = stroke.dash_pattern() {
            self.text(r#"" stroke-dasharray=""#);
            for (i, length) in dash.into_iter().enumerate() {
                self.text(if i == 0 { "" } else { " " });
                self.coordinate(length);
            }
        }
        self.text("\"");
        self.points(&line.points, "");
    }

    fn polygon(&mut self, polygon: &Polygon) {
        if !polygon.is_drawable() {
            return;
        }
        self.text("<path");
        self.paint("fill", polygon.fill);
        self.points(&polygon.points, "z");
    }

    /// ` d="M x y x y …{end}"/>`: the points as one subpath (implicit line-tos).
    fn points(&mut self, points: &[Point], end: &str) {
        self.text(r#" d="M"#);
        for point in points {
            number(&mut self.out, hundredths(point.x), COORDINATE_DECIMALS);
            number(&mut self.out, hundredths(point.y), COORDINATE_DECIMALS);
        }
        self.text(end);
        self.text("\"/>\n");
    }

    fn glyph_run(&mut self, text: &Text) {
        if !text.is_drawable() {
            return;
        }
        let layout = font::layout(text);
        self.text(r#"<g aria-label=""#);
        escape_into(&mut self.out, &text.content);
        self.text("\"");
        self.paint("fill", text.color);
        self.text(r#" transform="matrix("#);
        for (i, value) in layout.matrix.into_iter().enumerate() {
            self.text(if i == 0 { "" } else { " " });
            write_fixed(&mut self.out, value, if i < 4 { MATRIX_DECIMALS } else { COORDINATE_DECIMALS });
        }
        self.text(")\">");
        for glyph in &layout.glyphs {
            if self.glyphs.entry(glyph.id).or_insert_with(|| glyph_path(glyph.id)).is_empty() {
                continue;
            }
            self.text(&format!(r##"<use xlink:href="#g{}""##, glyph.id));
            if glyph.pen != 0 {
                self.text(&format!(r#" x="{}""#, glyph.pen));
            }
            self.text("/>");
        }
        self.text("</g>\n");
    }

    fn clip(&mut self, clip: &Clip) {
        let id = self.clips;
        self.clips += 1;
        let Rect { x, y, w, h } = clip.rect;
        self.text(&format!(r#"<clipPath id="c{id}"><rect x=""#));
        self.coordinate(x);
        self.text(r#"" y=""#);
        self.coordinate(y);
        self.text(r#"" width=""#);
        self.coordinate(w.max(0.0));
        self.text(r#"" height=""#);
        self.coordinate(h.max(0.0));
        self.text(&format!("\"/></clipPath>\n<g clip-path=\"url(#c{id})\">\n"));
        self.items(&clip.items);
        self.text("</g>\n");
    }

    /// ` fill="#rrggbb"` (or stroke), with an opacity attribute when not opaque.
    fn paint(&mut self, property: &str, color: Rgba) {
        self.text(&format!(r#" {property}="{}""#, color.hex()));
        if !color.is_opaque() {
            self.text(&format!(r#" {property}-opacity=""#));
            write_fixed(&mut self.out, f32::from(color.a) / 255.0, 3);
            self.text("\"");
        }
    }

    fn coordinate(&mut self, value: f32) {
        write_fixed(&mut self.out, value, COORDINATE_DECIMALS);
    }

    fn text(&mut self, text: &str) {
        self.out.extend_from_slice(text.as_bytes());
    }
}

/// Appends a path-data number, with a space before it where it would run into the
/// previous one (a minus sign separates by itself).
fn number(out: &mut Vec<u8>, scaled: i64, decimals: u32) {
    if scaled >= 0 && out.last().is_some_and(|b| b.is_ascii_digit() || *b == b'.') {
        out.push(b' ');
    }
    write_scaled(out, scaled, decimals);
}

/// A glyph's outline as path data in font units (y up, flipped by the text's matrix).
fn glyph_path(glyph: u16) -> Vec<u8> {
    let mut data = Vec::new();
    for segment in font::outline(glyph) {
        let (command, points) = match segment {
            Segment::Move(p) => (b'M', vec![p]),
            Segment::Line(p) => (b'L', vec![p]),
            Segment::Quad(c, p) => (b'Q', vec![c, p]),
            Segment::Cubic(c1, c2, p) => (b'C', vec![c1, c2, p]),
            Segment::Close => (b'Z', vec![]),
        };
        data.push(command);
        for point in points {
            number(&mut data, hundredths(point.x), COORDINATE_DECIMALS);
            number(&mut data, hundredths(point.y), COORDINATE_DECIMALS);
        }
    }
    data
}

/// Appends text as XML attribute content. Characters XML cannot carry are dropped.
fn escape_into(out: &mut Vec<u8>, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.extend_from_slice(b"&amp;"),
            '<' => out.extend_from_slice(b"&lt;"),
            '>' => out.extend_from_slice(b"&gt;"),
            '"' => out.extend_from_slice(b"&quot;"),
            c if (c as u32) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => {}
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Anchor, Stroke};

    fn svg(scene: &Scene) -> String {
        let mut out = Vec::new();
        write_svg(scene, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn scene_with(item: impl Into<Item>) -> Scene {
        let mut scene = Scene::new(100.0, 50.0, Rgba::TRANSPARENT);
        scene.push(item);
        scene
    }

    #[test]
    fn rect_batches_are_one_path_of_relative_subpaths() {
        let mut batch = RectBatch::new(Rgba::rgb(255, 0, 0).with_alpha(128));
        batch.rects = vec![
            Rect::new(10.0, 20.0, 5.0, 2.0),
            Rect::new(15.0, 18.5, 0.333, 2.0),
            Rect::new(1.0, 1.0, 0.0, 5.0),
            Rect::new(f32::NAN, 1.0, 1.0, 5.0),
        ];
        let out = svg(&scene_with(batch));
        let expected = concat!(
            r##"<path fill="#ff0000" fill-opacity="0.502" shape-rendering="crispEdges" "##,
            r#"d="M10 20h5v2h-5zm5-1.5h0.33v2h-0.33z"/>"#
        );
        assert!(out.contains(expected), "{out}");
        assert!(out.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="#), "{out}");
        assert!(out.contains(r#"width="100" height="50" viewBox="0 0 100 50">"#), "{out}");
        assert!(!out.contains("<rect width"), "a transparent background is not drawn: {out}");
    }

    #[test]
    fn lines_polygons_and_clips() {
        let mut clip = Clip::new(Rect::new(1.0, 2.0, 30.0, 40.0));
        let stroke = Stroke::dashed(Rgba::BLACK, 1.5, &[2.0]);
        clip.push(Polyline { points: vec![Point::new(0.0, 1.0), Point::new(2.5, -1.0)], stroke });
        clip.push(Polygon {
            points: vec![Point::new(0.0, 0.0), Point::new(1.0, 0.0), Point::new(1.0, 1.0)],
            fill: Rgba::WHITE,
        });
        let out = svg(&scene_with(clip));
        let expected = concat!(
            r#"<clipPath id="c0"><rect x="1" y="2" width="30" height="40"/></clipPath>"#,
            "\n<g clip-path=\"url(#c0)\">\n",
            r##"<path fill="none" stroke="#000000" stroke-width="1.5" stroke-dasharray="2 2" d="M0 1 2.5-1"/>"##,
            "\n",
            r##"<path fill="#ffffff" d="M0 0 1 0 1 1z"/>"##,
            "\n</g>\n"
        );
        assert!(out.contains(expected), "{out}");
    }

    #[test]
    fn text_is_glyphs_defined_once() {
        let text = Text::new(Point::new(10.0, 20.0), "a <a>", 20.48).anchor(Anchor::Start);
        let out = svg(&scene_with(text));
        let a = font::layout(&Text::new(Point::default(), "a", 1.0)).glyphs[0].id;
        assert!(
            out.contains(r##"<g aria-label="a &lt;a&gt;" fill="#000000" transform="matrix(0.01 0 0 -0.01 10 20)">"##),
            "{out}"
        );
        assert_eq!(out.matches(&format!(r#"<path id="g{a}" "#)).count(), 1, "{out}");
        assert_eq!(out.matches(&format!(r##"<use xlink:href="#g{a}""##)).count(), 2, "{out}");
        assert!(out.contains(&format!(r##"<use xlink:href="#g{a}"/>"##)), "the first glyph needs no x: {out}");
    }

    #[test]
    fn escaping_drops_what_xml_cannot_carry() {
        let mut out = Vec::new();
        escape_into(&mut out, "\"x\u{1}\"&é");
        assert_eq!(String::from_utf8(out).unwrap(), "&quot;x&quot;&amp;é");
    }
}
