//! A backend-neutral scene of shapes and text, and the SVG, PNG and PDF backends that draw it.
//!
//! Figures are built elsewhere (the `figures` crate) as plain [`Scene`]s in CSS pixels (1/96
//! inch): batches of same-colored rectangles (the hot path: a timeline is a few hundred
//! batches of many rectangles), polylines with optional dashes, filled polygons, text, and
//! rectangular clips. This crate knows nothing of scheduling.
//!
//! Text looks the same in every backend and on every machine: one font is bundled
//! (a Latin/Greek subset of DejaVu Sans, `fonts/`), glyphs are laid out here from its
//! metrics without kerning, and drawn as the font's own outlines — paths in SVG and PNG, a
//! Type 3 font in PDF (so PDF text stays selectable and searchable). [`text_width`] measures
//! with the same metrics, so layout code can size margins and legends before drawing.
//!
//! Every writer is deterministic: the same scene gives the same bytes (no dates, ordered
//! maps only, numbers rounded to fixed decimals before they are printed).
//!
//! # Dependencies and why
//!
//! | dependency | why |
//! |---|---|
//! | `ttf-parser` | reads glyph outlines and metrics from the bundled font; zero-copy, no allocation, no other dependencies |
//! | `tiny-skia` | pure-Rust anti-aliased rasterizer for lines, polygons and glyphs (a Skia subset); small and quick to build, no system libraries |
//! | `png` | the reference pure-Rust PNG encoder; its `fdeflate` fast mode encodes large flat-colored images in milliseconds |
//! | `pdf-writer` | low-level, well-kept PDF object writer (from Typst): we choose every object and byte, so output is compact and deterministic |
//! | `miniz_oxide` | deflate for PDF streams; already built for `png`, pure Rust |
//! | `itoa` | fast integer printing for the millions of numbers in large SVGs; already built for `pdf-writer` |
//! | `thiserror` | the crate's error enum |
//!
//! Heavier stacks (resvg/usvg, svg2pdf, cairo) were not taken: the scene is simple enough
//! to write each format directly, and building them would cost minutes of CI.

mod color;
mod font;
mod num;
mod pdf;
mod raster;
mod scene;
mod svg;

pub use color::Rgba;
pub use font::{FontMetrics, font_metrics, text_width};
pub use pdf::write_pdf;
pub use raster::{PngOptions, write_png};
pub use scene::{Anchor, Clip, Document, Item, Point, Polygon, Polyline, Rect, RectBatch, Scene, Stroke, Text, steps};
pub use svg::write_svg;

use std::io::Write;

/// What can go wrong while writing a figure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot write the figure: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot encode the PNG image: {0}")]
    Png(#[from] ::png::EncodingError),
    #[error("an image of {width}×{height} pixels is empty or too large to draw")]
    ImageSize { width: u32, height: u32 },
    #[error("the document has no pages")]
    NoPages,
}

/// An output format.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
    Pdf,
}

impl Format {
    /// The format named by a file extension (`svg`, `png`, `pdf`, any case).
    pub fn from_extension(extension: &str) -> Option<Format> {
        match extension.to_ascii_lowercase().as_str() {
            "svg" => Some(Format::Svg),
            "png" => Some(Format::Png),
            "pdf" => Some(Format::Pdf),
            _ => None,
        }
    }
}

/// Writes a document in a format. PDF gets one page per scene; SVG and PNG, which have no
/// pages, get the scenes stacked top to bottom ([`Scene::stack`], no gap).
pub fn write(document: &Document, format: Format, png: &PngOptions, out: impl Write) -> Result<(), Error> {
    if document.pages.is_empty() {
        return Err(Error::NoPages);
    }
    if format == Format::Pdf {
        return write_pdf(document, out);
    }
    let stacked;
    let scene = match document.pages.as_slice() {
        [single] => single,
        pages => {
            stacked = Scene::stack(pages.iter().cloned(), 0.0);
            &stacked
        }
    };
    match format {
        Format::Svg => write_svg(scene, out),
        _ => write_png(scene, png, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_from_extensions() {
        assert_eq!(Format::from_extension("SVG"), Some(Format::Svg));
        assert_eq!(Format::from_extension("png"), Some(Format::Png));
        assert_eq!(Format::from_extension("pdf"), Some(Format::Pdf));
        assert_eq!(Format::from_extension("jpg"), None);
    }

    #[test]
    fn empty_documents_are_refused() {
        let error = write(&Document::default(), Format::Svg, &PngOptions::default(), Vec::new()).unwrap_err();
        assert!(matches!(error, Error::NoPages));
    }

    #[test]
    fn pages_stack_for_formats_without_pages() {
        let page = |color| {
            let mut scene = Scene::new(10.0, 5.0, Rgba::WHITE);
            scene.push(RectBatch { fill: color, rects: vec![Rect::new(0.0, 0.0, 10.0, 5.0)] });
            scene
        };
        let document = Document { pages: vec![page(Rgba::BLACK), page(Rgba::rgb(255, 0, 0))] };
        let mut out = Vec::new();
        write(&document, Format::Svg, &PngOptions::default(), &mut out).unwrap();
        let svg = String::from_utf8(out).unwrap();
        assert!(svg.contains(r#"height="10""#), "{svg}");
        assert!(svg.contains("M0 5h10v5h-10z"), "{svg}");
    }
}
