//! Times the three backends on a half-million-rectangle timeline (2000 columns × 256
//! cores) and prints how long each takes and how large its output is. With a directory
//! argument it also writes that figure and the sample figure there, to look at.
//!
//! `cargo run --release -p render --example bench [DIR]`

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use render::{Document, Error, PngOptions, Scene, write_pdf, write_png, write_svg};

/// Runs a writer three times; prints the best time and the output size; returns the output.
fn timed(name: &str, write: impl Fn(&mut Vec<u8>) -> Result<(), Error>) -> Result<Vec<u8>, Error> {
    let mut best = Duration::MAX;
    let mut out = Vec::new();
    for _ in 0..3 {
        out.clear();
        let start = Instant::now();
        write(&mut out)?;
        best = best.min(start.elapsed());
    }
    println!(
        "{name:>4}: {:>7.1} ms  {:>10} bytes ({:.2} MiB)",
        best.as_secs_f64() * 1e3,
        out.len(),
        out.len() as f64 / (1 << 20) as f64
    );
    Ok(out)
}

fn write_all(dir: &Path, stem: &str, scene: &Scene, png_scale: f32) -> Result<(), Box<dyn std::error::Error>> {
    let document = Document { pages: vec![scene.clone()] };
    let mut svg = Vec::new();
    write_svg(scene, &mut svg)?;
    let mut png = Vec::new();
    write_png(scene, &PngOptions { scale: png_scale }, &mut png)?;
    let mut pdf = Vec::new();
    write_pdf(&document, &mut pdf)?;
    for (extension, bytes) in [("svg", svg), ("png", png), ("pdf", pdf)] {
        std::fs::write(dir.join(format!("{stem}.{extension}")), bytes)?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let scene = common::big_scene(2000, 256);
    println!(
        "scene: {} rectangles, {}×{} px, built in {:.1} ms",
        common::rect_count(&scene),
        scene.width,
        scene.height,
        start.elapsed().as_secs_f64() * 1e3
    );
    let document = Document { pages: vec![scene.clone()] };
    timed("svg", |out| write_svg(&scene, out))?;
    timed("png", |out| write_png(&scene, &PngOptions::default(), out))?;
    timed("pdf", |out| write_pdf(&document, out))?;
    if let Some(dir) = std::env::args().nth(1).map(PathBuf::from) {
        std::fs::create_dir_all(&dir)?;
        write_all(&dir, "big", &scene, 1.0)?;
        write_all(&dir, "sample", &common::sample_scene(), 2.0)?;
        println!("wrote big.* and sample.* (PNG at 2×) to {}", dir.display());
    }
    Ok(())
}
