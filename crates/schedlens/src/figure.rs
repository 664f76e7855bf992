//! What the figure commands (`graph`, `running-waiting`) share: output, size and title
//! options; loading several traces and putting them on the time scale of the slowest;
//! and writing pages as PDF, SVG or PNG (one file per figure, or stacked).

use crate::common::{Loaded, WindowArgs, load_model};
use crate::{Outcome, usage};
use analysis::Window;
use anyhow::{Context, Result};
use model::{Detail, Nanos};
use render::{Document, Format, PngOptions, Scene};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// Output options of every figure command.
#[derive(clap::Args, Clone, Debug)]
pub struct OutputArgs {
    /// Output file; its extension (.pdf, .svg, .png) picks the format. Default: named
    /// after the first trace, in PDF.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With several traces, one image with the figures one below the other (PDF gets one
    /// page per trace without it; SVG and PNG get one file per trace, numbered).
    #[arg(long)]
    pub stack: bool,
    /// Title of the figure (default: the trace's file name).
    #[arg(long)]
    pub title: Option<String>,
    /// Width of the plot area in CSS pixels (1/96 inch), 50 to 100000.
    #[arg(long, value_name = "PX", default_value_t = 1200.0, value_parser = width)]
    pub width: f32,
    /// Height of the plot area in CSS pixels, 10 to 100000 (default: suits the number of
    /// rows).
    #[arg(long, value_name = "PX", value_parser = height)]
    pub height: Option<f32>,
    /// Resolution of PNG output (96 = one pixel per CSS pixel), 10 to 2400.
    #[arg(long, default_value_t = 96.0, value_parser = dpi)]
    pub dpi: f32,
}

/// A number in `range` (for `value_parser`).
fn number_in(text: &str, range: std::ops::RangeInclusive<f32>) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(value) if range.contains(&value) => Ok(value),
        _ => Err(format!("{text:?} is not a number from {} to {}", range.start(), range.end())),
    }
}

fn width(text: &str) -> Result<f32, String> {
    number_in(text, 50.0..=100_000.0)
}

fn height(text: &str) -> Result<f32, String> {
    number_in(text, 10.0..=100_000.0)
}

fn dpi(text: &str) -> Result<f32, String> {
    number_in(text, 10.0..=2400.0)
}

impl OutputArgs {
    /// The output file and its format; `kind` names the figure in the default name.
    pub fn target(&self, first_trace: &Path, kind: &str) -> Result<(PathBuf, Format)> {
        let path = self.output.clone().unwrap_or_else(|| default_name(first_trace, kind));
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let Some(format) = Format::from_extension(extension) else {
            return Err(usage(format!(
                "{}: unknown figure format {extension:?}; use .pdf, .svg or .png",
                path.display()
            )));
        };
        Ok((path, format))
    }

    /// Timeline columns (or plot samples) per CSS pixel: the PNG's scale, 1 for vector output.
    pub fn columns_per_px(&self, format: Format) -> f32 {
        if format == Format::Png { self.png().scale } else { 1.0 }
    }

    pub fn png(&self) -> PngOptions {
        PngOptions::from_dpi(self.dpi)
    }

    /// The title of the figure of `trace`, one of `count`.
    pub fn title_of(&self, trace: &Path, count: usize) -> String {
        let name = trace.file_name().map_or_else(|| trace.display().to_string(), |n| n.to_string_lossy().into_owned());
        match &self.title {
            Some(title) if count > 1 => format!("{title}: {name}"),
            Some(title) => title.clone(),
            None => name,
        }
    }

    /// Writes the figures: pages of one PDF, one stacked image, or one file each.
    pub fn write(&self, path: &Path, format: Format, pages: Vec<Scene>) -> Result<()> {
        if format == Format::Pdf || self.stack || pages.len() == 1 {
            let pages = if self.stack && format == Format::Pdf { vec![Scene::stack(pages, 0.0)] } else { pages };
            return write_document(path, format, &self.png(), Document { pages });
        }
        for (index, page) in pages.into_iter().enumerate() {
            let numbered = numbered(path, index + 1);
            write_document(&numbered, format, &self.png(), Document { pages: vec![page] })?;
            eprintln!("schedlens: wrote {}", numbered.display());
        }
        Ok(())
    }
}

/// `dir/run.dat` → `run-graph.pdf` in the current directory.
fn default_name(trace: &Path, kind: &str) -> PathBuf {
    let stem = trace.file_stem().map_or_else(|| "trace".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}-{kind}.pdf"))
}

/// `out.png`, 2 → `out-2.png`.
fn numbered(path: &Path, number: usize) -> PathBuf {
    let stem = path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let extension = path.extension().map_or_else(String::new, |e| format!(".{}", e.to_string_lossy()));
    path.with_file_name(format!("{stem}-{number}{extension}"))
}

pub(crate) fn write_document(path: &Path, format: Format, png: &PngOptions, document: Document) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::new(file);
    render::write(&document, format, png, &mut out).with_context(|| path.display().to_string())?;
    std::io::Write::flush(&mut out).with_context(|| path.display().to_string())
}

/// `--markers[=REGEX]`: trace markers (ftrace `print` and `bprint` events) as labelled
/// vertical lines.
#[derive(clap::Args, Clone, Debug)]
pub struct MarkerArgs {
    /// Draw trace markers (text written to trace_marker, trace_printk messages) as
    /// labelled vertical lines: all of them, or with `--markers=REGEX` those whose text
    /// matches.
    #[arg(long, value_name = "REGEX", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub markers: Option<String>,
}

impl MarkerArgs {
    /// The markers of `trace` to draw (none without `--markers`).
    pub fn read(&self, trace: &inputs::Input) -> Result<Vec<model::Marker>> {
        let Some(pattern) = &self.markers else { return Ok(Vec::new()) };
        let regex =
            regex::Regex::new(pattern).with_context(|| format!("--markers={pattern}: not a regular expression"))?;
        Ok(model::read_markers(trace, |text| regex.is_match(text)))
    }
}

/// A loaded trace with its window.
pub struct Run {
    pub path: PathBuf,
    pub loaded: Loaded,
    pub window: Window,
    pub origin: Nanos,
}

/// Loads every trace and resolves its window; the outcome is partial if any input was.
pub fn load_runs(paths: &[PathBuf], window: &WindowArgs, detail: Detail) -> Result<(Vec<Run>, Outcome)> {
    window.validate()?;
    let mut runs = Vec::with_capacity(paths.len());
    let mut outcome = Outcome::Complete;
    for path in paths {
        let loaded = load_model(path, detail)?;
        let (window, origin) = window.resolve(&loaded.model, path)?;
        if loaded.outcome == Outcome::Partial {
            outcome = Outcome::Partial;
        }
        runs.push(Run { path: path.clone(), loaded, window, origin });
    }
    Ok((runs, outcome))
}

/// The time scale every figure shares: the longest window (the slowest run).
pub fn common_span(runs: &[Run]) -> Nanos {
    runs.iter().map(|r| r.window.len()).max().unwrap_or(Nanos(1)).max(Nanos(1))
}
