//! The PNG backend. Rectangle batches are filled here directly, snapped to whole pixels
//! without anti-aliasing: that is the hot path (hundreds of thousands of rectangles), and
//! snapping keeps touching rectangles free of seams and double-blended edges. Lines,
//! polygons and glyph outlines go through tiny-skia, anti-aliased. Clips are rectangles
//! snapped the same way, so they cut rectangles and paths at the same pixels.

use std::collections::BTreeMap;
use std::io::Write;

use tiny_skia::{
    ColorU8, FillRule, LineCap, LineJoin, Mask, Paint, Path, PathBuilder, Pixmap, PremultipliedColorU8, StrokeDash,
    Transform,
};

use crate::Error;
use crate::color::Rgba;
use crate::font::{self, Segment};
use crate::scene::{Clip, Item, Point, Polygon, Polyline, Rect, RectBatch, Scene, Text};

/// The most pixels an image may have (1 GiB of RGBA): larger requests are refused rather
/// than exhausting memory.
const MAX_PIXELS: u64 = 1 << 28;

/// How a scene becomes pixels.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PngOptions {
    /// Pixels per CSS pixel: 1 for 96 dpi, 2 for 192 dpi.
    pub scale: f32,
}

impl Default for PngOptions {
    fn default() -> PngOptions {
        PngOptions { scale: 1.0 }
    }
}

impl PngOptions {
    pub fn from_dpi(dpi: f32) -> PngOptions {
        PngOptions { scale: dpi / 96.0 }
    }
}

/// Draws a scene as a PNG image, `ceil(width × scale)` by `ceil(height × scale)` pixels,
/// with its resolution recorded. An opaque background gives an RGB image, otherwise RGBA.
pub fn write_png(scene: &Scene, options: &PngOptions, out: impl Write) -> Result<(), Error> {
    let pixmap = rasterize(scene, options.scale)?;
    encode(&pixmap, scene.background.is_opaque(), options.scale, out)
}

fn rasterize(scene: &Scene, scale: f32) -> Result<Pixmap, Error> {
    let width = (scene.width * scale).ceil() as u32;
    let height = (scene.height * scale).ceil() as u32;
    let fits = u64::from(width) * u64::from(height) <= MAX_PIXELS;
    let pixmap = fits.then(|| Pixmap::new(width, height)).flatten().ok_or(Error::ImageSize { width, height })?;
    let bounds = PixelBox { left: 0, top: 0, right: width as i32, bottom: height as i32 };
    let mut canvas = Canvas { pixmap, scale, clip: bounds, bounds, mask: None, glyphs: BTreeMap::new() };
    fill_pixels(&mut canvas.pixmap, bounds, scene.background);
    canvas.items(&scene.items);
    Ok(canvas.pixmap)
}

fn encode(pixmap: &Pixmap, opaque: bool, scale: f32, out: impl Write) -> Result<(), Error> {
    let mut encoder = png::Encoder::new(out, pixmap.width(), pixmap.height());
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
    let per_meter = (f64::from(scale) * 96.0 / 0.0254).round() as u32;
    encoder.set_pixel_dims(Some(png::PixelDimensions { xppu: per_meter, yppu: per_meter, unit: png::Unit::Meter }));
    let pixels = pixmap.pixels().iter();
    let data: Vec<u8> = if opaque {
        encoder.set_color(png::ColorType::Rgb);
        pixels.flat_map(|p| [p.red(), p.green(), p.blue()]).collect()
    } else {
        encoder.set_color(png::ColorType::Rgba);
        pixels.map(|p| p.demultiply()).flat_map(|c| [c.red(), c.green(), c.blue(), c.alpha()]).collect()
    };
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&data)?;
    writer.finish()?;
    Ok(())
}

/// A rectangle of whole pixels: columns `left..right`, rows `top..bottom`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct PixelBox {
    left: i32,
    top: i32,
    right: i32,
    bottom: i32,
}

impl PixelBox {
    /// The pixels whose centers a rectangle covers, but at least one pixel each way, so
    /// nothing drawn vanishes. Neighbours share their rounded edge: no gap, no overlap.
    fn snap(rect: &Rect, scale: f32) -> PixelBox {
        if !rect.is_drawable() {
            return PixelBox { left: 0, top: 0, right: 0, bottom: 0 };
        }
        let edge = |v: f32| (v * scale).round() as i32;
        let (left, top) = (edge(rect.x), edge(rect.y));
        PixelBox { left, top, right: edge(rect.right()).max(left + 1), bottom: edge(rect.bottom()).max(top + 1) }
    }

    fn intersect(self, other: PixelBox) -> PixelBox {
        PixelBox {
            left: self.left.max(other.left),
            top: self.top.max(other.top),
            right: self.right.min(other.right),
            bottom: self.bottom.min(other.bottom),
        }
    }

    fn is_empty(self) -> bool {
        self.left >= self.right || self.top >= self.bottom
    }
}

/// Paints whole pixels (inside the pixmap) with source-over blending, without tiny-skia's
/// per-shape setup.
fn fill_pixels(pixmap: &mut Pixmap, area: PixelBox, color: Rgba) {
    let stride = pixmap.width() as usize;
    let source = ColorU8::from_rgba(color.r, color.g, color.b, color.a).premultiply();
    let pixels = pixmap.pixels_mut();
    for row in area.top as usize..area.bottom as usize {
        let span = &mut pixels[row * stride + area.left as usize..row * stride + area.right as usize];
        match color.a {
            255 => span.fill(source),
            _ => span.iter_mut().for_each(|pixel| *pixel = source_over(source, *pixel)),
        }
    }
}

/// Premultiplied source-over: result = source + destination × (1 − source alpha).
fn source_over(source: PremultipliedColorU8, destination: PremultipliedColorU8) -> PremultipliedColorU8 {
    let keep = 255 - u32::from(source.alpha());
    let channel = |s: u8, d: u8| (u32::from(s) + div255(u32::from(d) * keep)) as u8;
    let blended = [
        channel(source.red(), destination.red()),
        channel(source.green(), destination.green()),
        channel(source.blue(), destination.blue()),
        channel(source.alpha(), destination.alpha()),
    ];
    PremultipliedColorU8::from_rgba(blended[0], blended[1], blended[2], blended[3])
        .expect("source-over of premultiplied colors is premultiplied")
}

/// x / 255, rounded, for x ≤ 255².
fn div255(x: u32) -> u32 {
    (x + 128 + ((x + 128) >> 8)) >> 8
}

struct Canvas {
    pixmap: Pixmap,
    /// Pixels per scene pixel.
    scale: f32,
    /// The whole image.
    bounds: PixelBox,
    /// The current clip, inside `bounds`.
    clip: PixelBox,
    /// The current clip as a tiny-skia mask, made when a path is first drawn under it;
    /// `None` also when the clip is the whole image.
    mask: Option<Mask>,
    /// Glyph outlines in font units, made on first use.
    glyphs: BTreeMap<u16, Option<Path>>,
}

impl Canvas {
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
        for rect in &batch.rects {
            let area = PixelBox::snap(rect, self.scale).intersect(self.clip);
            if !area.is_empty() {
                fill_pixels(&mut self.pixmap, area, batch.fill);
            }
        }
    }

    fn line(&mut self, line: &Polyline) {
        let Some(path) = line.is_drawable().then(|| path_through(&line.points, false)).flatten() else {
            return;
        };
        let stroke = tiny_skia::Stroke {
            width: line.stroke.width,
            miter_limit: 4.0,
            line_cap: LineCap::Butt,
            line_join: LineJoin::Miter,
            dash: line.stroke.dash_pattern().and_then(|pattern| StrokeDash::new(pattern, 0.0)),
        };
        let transform = Transform::from_scale(self.scale, self.scale);
        self.update_mask();
        self.pixmap.stroke_path(&path, &paint(line.stroke.color), &stroke, transform, self.mask.as_ref());
    }

    fn polygon(&mut self, polygon: &Polygon) {
        if let Some(path) = polygon.is_drawable().then(|| path_through(&polygon.points, true)).flatten() {
            self.fill(&path, polygon.fill, Transform::from_scale(self.scale, self.scale));
        }
    }

    fn glyph_run(&mut self, text: &Text) {
        if !text.is_drawable() {
            return;
        }
        let layout = font::layout(text);
        let [a, b, c, d, e, f] = layout.matrix;
        let placement = Transform::from_row(a, b, c, d, e, f).post_scale(self.scale, self.scale);
        let mut glyphs = std::mem::take(&mut self.glyphs);
        for glyph in &layout.glyphs {
            if let Some(path) = glyphs.entry(glyph.id).or_insert_with(|| glyph_path(glyph.id)) {
                self.fill(path, text.color, placement.pre_translate(glyph.pen as f32, 0.0));
            }
        }
        self.glyphs = glyphs;
    }

    fn fill(&mut self, path: &Path, color: Rgba, transform: Transform) {
        self.update_mask();
        self.pixmap.fill_path(path, &paint(color), FillRule::Winding, transform, self.mask.as_ref());
    }

    fn clip(&mut self, clip: &Clip) {
        let inner = self.clip.intersect(PixelBox::snap(&clip.rect, self.scale));
        if inner.is_empty() {
            return;
        }
        let outer = std::mem::replace(&mut self.clip, inner);
        let outer_mask = self.mask.take();
        self.items(&clip.items);
        self.clip = outer;
        self.mask = outer_mask;
    }

    /// Makes the mask for the current clip if paths need one and it is not there yet.
    fn update_mask(&mut self) {
        if self.mask.is_some() || self.clip == self.bounds {
            return;
        }
        let mut mask = Mask::new(self.pixmap.width(), self.pixmap.height()).expect("same size as the pixmap");
        let stride = self.pixmap.width() as usize;
        let data = mask.data_mut();
        for row in self.clip.top as usize..self.clip.bottom as usize {
            data[row * stride + self.clip.left as usize..row * stride + self.clip.right as usize].fill(255);
        }
        self.mask = Some(mask);
    }
}

fn paint(color: Rgba) -> Paint<'static> {
    let mut paint = Paint { anti_alias: true, ..Paint::default() };
    paint.set_color_rgba8(color.r, color.g, color.b, color.a);
    paint
}

/// A path through points, closed or open; `None` if tiny-skia finds it degenerate.
fn path_through(points: &[Point], close: bool) -> Option<Path> {
    let mut builder = PathBuilder::new();
    builder.move_to(points[0].x, points[0].y);
    points[1..].iter().for_each(|p| builder.line_to(p.x, p.y));
    if close {
        builder.close();
    }
    builder.finish()
}

fn glyph_path(glyph: u16) -> Option<Path> {
    let mut builder = PathBuilder::new();
    for segment in font::outline(glyph) {
        match segment {
            Segment::Move(p) => builder.move_to(p.x, p.y),
            Segment::Line(p) => builder.line_to(p.x, p.y),
            Segment::Quad(c, p) => builder.quad_to(c.x, c.y, p.x, p.y),
            Segment::Cubic(c1, c2, p) => builder.cubic_to(c1.x, c1.y, c2.x, c2.y, p.x, p.y),
            Segment::Close => builder.close(),
        }
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::Stroke;

    const RED: Rgba = Rgba::rgb(255, 0, 0);

    fn pixel(pixmap: &Pixmap, x: u32, y: u32) -> [u8; 4] {
        let p = pixmap.pixel(x, y).unwrap().demultiply();
        [p.red(), p.green(), p.blue(), p.alpha()]
    }

    fn rects_scene(fill: Rgba, rects: Vec<Rect>) -> Scene {
        let mut scene = Scene::new(10.0, 4.0, Rgba::WHITE);
        scene.push(RectBatch { fill, rects });
        scene
    }

    #[test]
    fn touching_rects_leave_no_seam_and_never_blend_twice() {
        let third = 10.0 / 3.0;
        let rects = (0..3).map(|i| Rect::new(i as f32 * third, 0.0, third, 4.0)).collect();
        let pixmap = rasterize(&rects_scene(RED.with_alpha(128), rects), 1.0).unwrap();
        let expected = [255, 127, 127, 255];
        for x in 0..10 {
            assert_eq!(pixel(&pixmap, x, 0), expected, "column {x}");
        }
    }

    #[test]
    fn thin_rects_cover_a_pixel_and_clips_cut_them() {
        let mut scene = rects_scene(RED, vec![Rect::new(2.1, 0.0, 0.2, 0.2)]);
        let mut clip = Clip::new(Rect::new(5.0, 0.0, 2.0, 4.0));
        clip.push(RectBatch { fill: Rgba::BLACK, rects: vec![Rect::new(0.0, 1.0, 10.0, 1.0)] });
        scene.push(clip);
        let pixmap = rasterize(&scene, 1.0).unwrap();
        assert_eq!(pixel(&pixmap, 2, 0), [255, 0, 0, 255]);
        assert_eq!(pixel(&pixmap, 3, 0), [255, 255, 255, 255]);
        let row: Vec<u8> = (0..10).map(|x| pixel(&pixmap, x, 1)[0]).collect();
        assert_eq!(row, [255, 255, 255, 255, 255, 0, 0, 255, 255, 255]);
    }

    #[test]
    fn scale_multiplies_pixels() {
        let pixmap = rasterize(&rects_scene(RED, vec![Rect::new(1.0, 1.0, 1.0, 1.0)]), 2.5).unwrap();
        assert_eq!((pixmap.width(), pixmap.height()), (25, 10));
        assert_eq!(pixel(&pixmap, 2, 2), [255, 255, 255, 255]);
        assert_eq!(pixel(&pixmap, 3, 3), [255, 0, 0, 255]);
        assert_eq!(pixel(&pixmap, 4, 4), [255, 0, 0, 255]);
        assert_eq!(pixel(&pixmap, 5, 5), [255, 255, 255, 255]);
        assert!(matches!(rasterize(&Scene::default(), 1.0), Err(Error::ImageSize { width: 0, height: 0 })));
        let huge = Scene::new(1e6, 1e6, Rgba::WHITE);
        assert!(matches!(rasterize(&huge, 1.0), Err(Error::ImageSize { .. })));
    }

    #[test]
    fn lines_text_and_polygons_are_clipped_by_the_mask() {
        let mut scene = Scene::new(20.0, 20.0, Rgba::WHITE);
        let mut clip = Clip::new(Rect::new(0.0, 0.0, 10.0, 20.0));
        clip.push(Polyline {
            points: vec![Point::new(0.0, 5.0), Point::new(20.0, 5.0)],
            stroke: Stroke::solid(RED, 2.0),
        });
        let square = [(0.0, 10.0), (20.0, 10.0), (20.0, 20.0), (0.0, 20.0)].map(|(x, y)| Point::new(x, y));
        clip.push(Polygon { points: square.to_vec(), fill: Rgba::BLACK });
        scene.push(clip);
        let pixmap = rasterize(&scene, 1.0).unwrap();
        assert_eq!(pixel(&pixmap, 3, 4), [255, 0, 0, 255]);
        assert_eq!(pixel(&pixmap, 15, 4), [255, 255, 255, 255]);
        assert_eq!(pixel(&pixmap, 3, 15), [0, 0, 0, 255]);
        assert_eq!(pixel(&pixmap, 15, 15), [255, 255, 255, 255]);
    }

    #[test]
    fn text_is_drawn_in_its_color() {
        let mut scene = Scene::new(40.0, 20.0, Rgba::WHITE);
        scene.push(Text::new(Point::new(2.0, 16.0), "H", 16.0).color(RED));
        let pixmap = rasterize(&scene, 1.0).unwrap();
        let red = (0..40)
            .flat_map(|x| (0..20).map(move |y| (x, y)))
            .filter(|&(x, y)| pixel(&pixmap, x, y) == [255, 0, 0, 255]);
        assert!(red.count() > 20);
    }

    #[test]
    fn blending_rounds() {
        assert_eq!(div255(255 * 255), 255);
        assert_eq!(div255(128 * 255), 128);
        assert_eq!(div255(127), 0);
        assert_eq!(div255(128), 1);
        let half_red = ColorU8::from_rgba(255, 0, 0, 128).premultiply();
        let white = ColorU8::from_rgba(255, 255, 255, 255).premultiply();
        let blended = source_over(half_red, white);
        assert_eq!([blended.red(), blended.green(), blended.blue(), blended.alpha()], [255, 127, 127, 255]);
    }

    #[test]
    fn transparent_backgrounds_give_rgba() {
        let mut out = Vec::new();
        write_png(&Scene::new(3.0, 2.0, Rgba::TRANSPARENT), &PngOptions::from_dpi(192.0), &mut out).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(out));
        let reader = decoder.read_info().unwrap();
        let info = reader.info();
        assert_eq!((info.width, info.height, info.color_type), (6, 4, png::ColorType::Rgba));
        assert_eq!(info.pixel_dims.unwrap().xppu, 7559);
    }
}
