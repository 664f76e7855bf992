//! The PDF backend: one page per scene, vector content in CSS pixels under one flipping
//! transform, each rectangle batch as `re` operators under one fill color. Text uses Type 3
//! fonts whose glyphs are the bundled font's outlines, so it looks as in the other backends
//! and still copies and searches as text (a ToUnicode map comes along). No dates, no random
//! IDs, objects numbered in a fixed order: the same document gives the same bytes.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use pdf_writer::types::{LineCapStyle, LineJoinStyle, SystemInfo, UnicodeCmap};
use pdf_writer::writers::Type3Font;
use pdf_writer::{Content, Filter, Finish, Name, Pdf, Rect as PdfRect, Ref, Settings, Str};

use crate::Error;
use crate::color::Rgba;
use crate::font::{self, PlacedGlyph, Segment};
use crate::num::{rounded, rounded_edges};
use crate::scene::{Clip, Document, Item, Point, Polygon, Polyline, Scene, Text};

/// PDF points (1/72 inch) per CSS pixel (1/96 inch).
const POINTS_PER_PIXEL: f32 = 0.75;

/// Glyphs per Type 3 font: its character codes are single bytes.
const GLYPHS_PER_FONT: usize = 256;

/// Deflate level for page contents: 3 takes half a million rectangles to ~2 MB in ~0.15 s
/// (6 saves another 8% but takes three times as long).
const DEFLATE_LEVEL: u8 = 3;

const SETTINGS: Settings = Settings { pretty: false };

/// Writes a document as a PDF, one page per scene.
pub fn write_pdf(document: &Document, mut out: impl Write) -> Result<(), Error> {
    if document.pages.is_empty() {
        return Err(Error::NoPages);
    }
    let mut resources = SharedResources::default();
    let contents: Vec<Vec<u8>> = document.pages.iter().map(|page| page_content(page, &mut resources)).collect();

    let mut pdf = Pdf::with_settings(SETTINGS);
    let mut ids = (1..).map(Ref::new);
    let mut next_id = || ids.next().expect("enough object numbers");
    let catalog = next_id();
    let tree = next_id();
    let pages: Vec<(Ref, Ref)> = contents.iter().map(|_| (next_id(), next_id())).collect();
    let shared = SharedRefs {
        tree,
        fonts: resources.glyphs.fonts().map(|_| next_id()).collect(),
        alphas: resources.alphas.iter().map(|&alpha| (alpha, next_id())).collect(),
    };

    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree).kids(pages.iter().map(|(page, _)| *page)).count(pages.len() as i32);
    for ((scene, content), ids) in document.pages.iter().zip(&contents).zip(pages) {
        write_page(&mut pdf, scene, content, ids, &shared);
    }
    for (glyphs, font) in resources.glyphs.fonts().zip(&shared.fonts) {
        write_type3_font(&mut pdf, *font, glyphs, &mut next_id);
    }
    for (alpha, state) in shared.alphas {
        let fraction = Rgba::BLACK.with_alpha(alpha).fractions()[3];
        pdf.ext_graphics(state).non_stroking_alpha(fraction).stroking_alpha(fraction);
    }
    out.write_all(&pdf.finish())?;
    Ok(())
}

/// The objects every page refers to: its parent, the fonts and the alpha states.
struct SharedRefs {
    tree: Ref,
    fonts: Vec<Ref>,
    alphas: Vec<(u8, Ref)>,
}

/// A page object (with all shared resources) and its compressed content stream.
fn write_page(pdf: &mut Pdf, scene: &Scene, content: &[u8], (page_id, content_id): (Ref, Ref), shared: &SharedRefs) {
    let mut page = pdf.page(page_id);
    let size = |v: f32| rounded(v * POINTS_PER_PIXEL);
    page.parent(shared.tree).media_box(PdfRect::new(0.0, 0.0, size(scene.width), size(scene.height)));
    page.contents(content_id);
    let mut resources = page.resources();
    let mut fonts = resources.fonts();
    for (index, font) in shared.fonts.iter().enumerate() {
        fonts.pair(Name(font_name(index).as_bytes()), *font);
    }
    fonts.finish();
    let mut states = resources.ext_g_states();
    for (alpha, state) in &shared.alphas {
        states.pair(Name(alpha_name(*alpha).as_bytes()), *state);
    }
    states.finish();
    resources.finish();
    page.finish();
    pdf.stream(content_id, &miniz_oxide::deflate::compress_to_vec_zlib(content, DEFLATE_LEVEL))
        .filter(Filter::FlateDecode);
}

/// What pages share: the glyphs shown (hence the fonts) and the alpha values used.
#[derive(Default)]
struct SharedResources {
    glyphs: GlyphTable,
    alphas: BTreeSet<u8>,
}

/// Glyphs in order of first use; the n-th is code n % 256 of font n / 256.
#[derive(Default)]
struct GlyphTable {
    /// Each glyph with the character first shown with it.
    order: Vec<(u16, char)>,
    index: BTreeMap<u16, usize>,
}

impl GlyphTable {
    fn index(&mut self, glyph: &PlacedGlyph) -> usize {
        let order = &mut self.order;
        *self.index.entry(glyph.id).or_insert_with(|| {
            order.push((glyph.id, glyph.ch));
            order.len() - 1
        })
    }

    fn fonts(&self) -> std::slice::Chunks<'_, (u16, char)> {
        self.order.chunks(GLYPHS_PER_FONT)
    }
}

fn font_name(index: usize) -> String {
    format!("F{index}")
}

fn alpha_name(alpha: u8) -> String {
    format!("A{alpha}")
}

fn glyph_name(code: usize) -> String {
    format!("g{code}")
}

fn page_content(scene: &Scene, resources: &mut SharedResources) -> Vec<u8> {
    let mut page = PageContent { content: Content::with_settings(SETTINGS), resources };
    let height = rounded(scene.height * POINTS_PER_PIXEL);
    // From here on, units are CSS pixels and y points down, as in the scene.
    page.content.transform([POINTS_PER_PIXEL, 0.0, 0.0, -POINTS_PER_PIXEL, 0.0, height]);
    page.content.set_miter_limit(4.0).set_line_cap(LineCapStyle::ButtCap).set_line_join(LineJoinStyle::MiterJoin);
    if !scene.background.is_invisible() {
        page.painted(scene.background, false, |content| {
            content.rect(0.0, 0.0, rounded(scene.width), rounded(scene.height)).fill_nonzero();
        });
    }
    page.items(&scene.items);
    page.content.finish().into_vec()
}

struct PageContent<'r> {
    content: Content,
    resources: &'r mut SharedResources,
}

impl PageContent<'_> {
    fn items(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Rects(batch) => {
                    let mut edges = rounded_edges(&batch.rects).peekable();
                    if edges.peek().is_some() && !batch.fill.is_invisible() {
                        self.painted(batch.fill, false, |content| {
                            for [left, top, right, bottom] in edges {
                                let [x, y, w, h] = [left, top, right - left, bottom - top].map(|v| v as f32 / 100.0);
                                content.rect(x, y, w, h);
                            }
                            content.fill_nonzero();
                        });
                    }
                }
                Item::Line(line) => self.line(line),
                Item::Polygon(polygon) => self.polygon(polygon),
                Item::Text(text) => self.glyph_run(text),
                Item::Clip(clip) => self.clip(clip),
            }
        }
    }

    fn line(&mut self, line: &Polyline) {
        if !line.is_drawable() {
            return;
        }
        let stroke = &line.stroke;
        self.painted(stroke.color, true, |content| {
            content.set_line_width(rounded(stroke.width));
            content.set_dash_pattern(stroke.dash_pattern().unwrap_or_default().into_iter().map(rounded), 0.0);
            trace(content, &line.points);
            content.stroke();
        });
    }

    fn polygon(&mut self, polygon: &Polygon) {
        if polygon.is_drawable() {
            self.painted(polygon.fill, false, |content| {
                trace(content, &polygon.points);
                content.close_path().fill_nonzero();
            });
        }
    }

    fn glyph_run(&mut self, text: &Text) {
        if !text.is_drawable() {
            return;
        }
        let layout = font::layout(text);
        let glyphs = &mut self.resources.glyphs;
        let indices: Vec<usize> = layout.glyphs.iter().map(|glyph| glyphs.index(glyph)).collect();
        // The text matrix is the layout's without its scale: the font size brings that in.
        let scale = text.size / font::units_per_em();
        let [a, b, c, d, e, f] = layout.matrix;
        let matrix = [a / scale, b / scale, c / scale, d / scale, rounded(e), rounded(f)];
        self.painted(text.color, false, |content| {
            content.begin_text().set_text_matrix(matrix);
            for run in indices.chunk_by(|x, y| x / GLYPHS_PER_FONT == y / GLYPHS_PER_FONT) {
                let codes: Vec<u8> = run.iter().map(|index| (index % GLYPHS_PER_FONT) as u8).collect();
                content.set_font(Name(font_name(run[0] / GLYPHS_PER_FONT).as_bytes()), rounded(text.size));
                content.show(Str(&codes));
            }
            content.end_text();
        });
    }

    fn clip(&mut self, clip: &Clip) {
        if !clip.rect.is_drawable() {
            return;
        }
        let [x, y, w, h] = [clip.rect.x, clip.rect.y, clip.rect.w, clip.rect.h].map(rounded);
        self.content.save_state().rect(x, y, w, h).clip_nonzero().end_path();
        self.items(&clip.items);
        self.content.restore_state();
    }

    /// Draws with a color set for filling (or stroking); a translucent color also sets its
    /// alpha, inside a saved state so what follows is opaque again.
    fn painted(&mut self, color: Rgba, stroke: bool, draw: impl FnOnce(&mut Content)) {
        let translucent = !color.is_opaque();
        if translucent {
            self.resources.alphas.insert(color.a);
            self.content.save_state().set_parameters(Name(alpha_name(color.a).as_bytes()));
        }
        let [r, g, b, _] = color.fractions();
        match stroke {
            true => self.content.set_stroke_rgb(r, g, b),
            false => self.content.set_fill_rgb(r, g, b),
        };
        draw(&mut self.content);
        if translucent {
            self.content.restore_state();
        }
    }
}

/// Starts a path through the points.
fn trace(content: &mut Content, points: &[Point]) {
    content.move_to(rounded(points[0].x), rounded(points[0].y));
    for point in &points[1..] {
        content.line_to(rounded(point.x), rounded(point.y));
    }
}

/// A Type 3 font of up to 256 glyphs, codes in table order; glyph space is font units.
fn write_type3_font(pdf: &mut Pdf, id: Ref, glyphs: &[(u16, char)], next_id: &mut impl FnMut() -> Ref) {
    let procs: Vec<Ref> = glyphs.iter().map(|_| next_id()).collect();
    let cmap = next_id();
    let names: Vec<String> = (0..glyphs.len()).map(glyph_name).collect();
    let units = font::units_per_em();
    let [left, bottom, right, top] = font::bounding_box();

    let mut type3: Type3Font = pdf.type3_font(id);
    type3.bbox(PdfRect::new(left, bottom, right, top));
    type3.matrix([1.0 / units, 0.0, 0.0, 1.0 / units, 0.0, 0.0]);
    type3.first_char(0).last_char((glyphs.len() - 1) as u8);
    type3.widths(glyphs.iter().map(|(glyph, _)| f32::from(font::advance(*glyph))));
    let mut char_procs = type3.char_procs();
    for (name, proc) in names.iter().zip(&procs) {
        char_procs.pair(Name(name.as_bytes()), *proc);
    }
    char_procs.finish();
    type3.encoding_custom().differences().consecutive(0, names.iter().map(|name| Name(name.as_bytes())));
    type3.to_unicode(cmap);
    type3.finish();

    for ((glyph, _), proc) in glyphs.iter().zip(procs) {
        let mut content = Content::with_settings(SETTINGS);
        content.start_shape_glyph(f32::from(font::advance(*glyph)), left, bottom, right, top);
        glyph_outline(&mut content, &font::outline(*glyph));
        pdf.stream(proc, &content.finish());
    }

    let system = SystemInfo { registry: Str(b"Adobe"), ordering: Str(b"UCS"), supplement: 0 };
    let mut unicode = UnicodeCmap::<u8>::new(Name(b"Adobe-Identity-UCS"), system);
    for (code, (_, ch)) in glyphs.iter().enumerate() {
        unicode.pair(code as u8, *ch);
    }
    pdf.stream(cmap, &unicode.finish());
}

/// Fills a glyph outline, with its quadratic curves raised to cubic ones (PDF has only
/// those). Blank glyphs draw nothing.
fn glyph_outline(content: &mut Content, segments: &[Segment]) {
    let mut start = Point::default();
    let mut pen = Point::default();
    for segment in segments {
        match *segment {
            Segment::Move(p) => {
                content.move_to(rounded(p.x), rounded(p.y));
                (start, pen) = (p, p);
            }
            Segment::Line(p) => {
                content.line_to(rounded(p.x), rounded(p.y));
                pen = p;
            }
            Segment::Quad(control, p) => {
                let toward = |from: Point| {
                    Point::new(from.x + (control.x - from.x) * 2.0 / 3.0, from.y + (control.y - from.y) * 2.0 / 3.0)
                };
                let (c1, c2) = (toward(pen), toward(p));
                content.cubic_to(
                    rounded(c1.x),
                    rounded(c1.y),
                    rounded(c2.x),
                    rounded(c2.y),
                    rounded(p.x),
                    rounded(p.y),
                );
                pen = p;
            }
            Segment::Cubic(c1, c2, p) => {
                content.cubic_to(
                    rounded(c1.x),
                    rounded(c1.y),
                    rounded(c2.x),
                    rounded(c2.y),
                    rounded(p.x),
                    rounded(p.y),
                );
                pen = p;
            }
            Segment::Close => {
                content.close_path();
                pen = start;
            }
        }
    }
    if !segments.is_empty() {
        content.fill_nonzero();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Rect, RectBatch, Stroke};

    fn content_of(scene: &Scene) -> (String, SharedResources) {
        let mut resources = SharedResources::default();
        let content = page_content(scene, &mut resources);
        (String::from_utf8(content).unwrap(), resources)
    }

    #[test]
    fn rect_batches_are_re_operators_under_one_color() {
        let mut scene = Scene::new(100.0, 40.0, Rgba::WHITE);
        let rects =
            vec![Rect::new(1.0, 2.0, 3.0, 4.0), Rect::new(4.0, 2.0, 0.333, 4.0), Rect::new(0.0, 0.0, -1.0, 1.0)];
        scene.push(RectBatch { fill: Rgba::rgb(255, 0, 0), rects });
        let (content, _) = content_of(&scene);
        let expected =
            "0.75 0 0 -0.75 0 30 cm 4 M 0 J 0 j 1 1 1 rg 0 0 100 40 re\nf 1 0 0 rg 1 2 3 4 re 4 2 0.33 4 re\nf";
        assert_eq!(content.trim_start(), expected);
    }

    #[test]
    fn translucent_paint_sets_alpha_in_a_saved_state() {
        let mut scene = Scene::new(10.0, 10.0, Rgba::TRANSPARENT);
        let stroke = Stroke::dashed(Rgba::BLACK.with_alpha(51), 0.5, &[1.0, 2.0]);
        let mut clip = Clip::new(Rect::new(1.0, 1.0, 5.0, 5.0));
        clip.push(Polyline { points: vec![Point::new(0.0, 1.0), Point::new(2.0, 3.0)], stroke });
        scene.push(clip);
        let (content, resources) = content_of(&scene);
        let expected = "q 1 1 5 5 re\nW\nn\nq/A51 gs 0 0 0 RG 0.5 w[1 2]0 d 0 1 m 2 3 l\nS\nQ\nQ";
        assert!(content.ends_with(expected), "{content}");
        assert_eq!(resources.alphas, BTreeSet::from([51]));
    }

    #[test]
    fn glyphs_get_codes_in_order_of_first_use_across_fonts() {
        let mut table = GlyphTable::default();
        let glyph = |id| PlacedGlyph { id, ch: 'x', pen: 0 };
        assert_eq!(table.index(&glyph(40)), 0);
        assert_eq!(table.index(&glyph(7)), 1);
        assert_eq!(table.index(&glyph(40)), 0);
        (0..300).for_each(|id| {
            table.index(&glyph(id));
        });
        assert_eq!(table.fonts().map(<[_]>::len).collect::<Vec<_>>(), [256, 44]);
    }

    #[test]
    fn text_shows_codes_with_an_unscaled_matrix() {
        let mut scene = Scene::new(10.0, 10.0, Rgba::TRANSPARENT);
        scene.push(Text::new(Point::new(2.0, 8.0), "abca", 10.0).vertical());
        let (content, resources) = content_of(&scene);
        assert!(content.ends_with("0 0 0 rg\nBT 0 -1 -1 0 2 8 Tm/F0 10 Tf(\\000\\001\\002\\000)Tj\nET"), "{content}");
        assert_eq!(resources.glyphs.order.iter().map(|(_, ch)| *ch).collect::<String>(), "abc");
    }
}
