//! Whole-output tests: golden files for a sample scene in each format, determinism, and
//! the size of a half-million-rectangle scene.
//!
//! Golden files live in `tests/golden/`. When output changes on purpose, rewrite them with
//! `SCHEDLENS_BLESS=1 cargo test -p render` and look at the new files before committing.

mod common;

use std::path::PathBuf;

use render::{Document, PngOptions, Rgba, Scene, write_pdf, write_png, write_svg};

fn svg(scene: &Scene) -> Vec<u8> {
    let mut out = Vec::new();
    write_svg(scene, &mut out).unwrap();
    out
}

fn png(scene: &Scene, scale: f32) -> Vec<u8> {
    let mut out = Vec::new();
    write_png(scene, &PngOptions { scale }, &mut out).unwrap();
    out
}

fn pdf(document: &Document) -> Vec<u8> {
    let mut out = Vec::new();
    write_pdf(document, &mut out).unwrap();
    out
}

/// Two pages: the sample, then two small scenes stacked.
fn sample_document() -> Document {
    let small = |background| {
        let mut scene = common::sample_scene();
        scene.background = background;
        scene.items.truncate(1);
        scene.height = 30.0;
        scene
    };
    let stacked = Scene::stack([small(Rgba::WHITE), small(Rgba::grey(230))], 4.0);
    Document { pages: vec![common::sample_scene(), stacked] }
}

/// Compares output with its golden file, or rewrites the file when blessing.
fn check_golden(name: &str, actual: &[u8]) {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    golden::check(&manifest.join("tests/golden"), env!("CARGO_TARGET_TMPDIR").as_ref(), "render", name, actual);
}

#[test]
fn golden_svg() {
    check_golden("sample.svg", &svg(&common::sample_scene()));
}

#[test]
fn golden_png() {
    check_golden("sample.png", &png(&common::sample_scene(), 1.0));
}

#[test]
fn golden_pdf() {
    check_golden("sample.pdf", &pdf(&sample_document()));
}

#[test]
fn same_scene_same_bytes() {
    let (scene, document) = (common::sample_scene(), sample_document());
    assert_eq!(svg(&scene), svg(&common::sample_scene()));
    assert_eq!(png(&scene, 2.0), png(&common::sample_scene(), 2.0));
    assert_eq!(pdf(&document), pdf(&sample_document()));
}

#[test]
fn half_a_million_rects_stay_compact() {
    let scene = common::big_scene(2000, 256);
    assert_eq!(common::rect_count(&scene), 512_000);
    let sizes = [svg(&scene).len(), png(&scene, 1.0).len(), pdf(&Document { pages: vec![scene] }).len()];
    let [svg_size, png_size, pdf_size] = sizes;
    assert!(svg_size < 12 << 20, "SVG of {svg_size} bytes");
    assert!(png_size < 8 << 20, "PNG of {png_size} bytes");
    assert!(pdf_size < 6 << 20, "PDF of {pdf_size} bytes");
}
