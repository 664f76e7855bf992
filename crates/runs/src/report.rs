//! The files of a results directory: `results.json` and `results.csv` (every run),
//! `summary.txt` and `summary.json` (the statistics), and `running-times.{pdf,svg,png}`
//! (the sorted running times, one series per setting). `runs --report DIR` rewrites all
//! but the results from `results.json` alone.

use crate::RunsError;
use crate::results::Results;
use crate::summary::Summary;
use figures::sorted_times::{Series, sorted_times};
use render::{Document, Format, PngOptions, Scene};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const RESULTS_JSON: &str = "results.json";
pub const RESULTS_CSV: &str = "results.csv";
pub const SUMMARY_TXT: &str = "summary.txt";
pub const SUMMARY_JSON: &str = "summary.json";
pub const FIGURE_STEM: &str = "running-times";

/// Writes the results and everything derived from them; returns the summary and the
/// files written.
pub fn write_all(dir: &Path, results: &Results, formats: &[Format]) -> Result<(Summary, Vec<PathBuf>), RunsError> {
    let mut written = vec![
        write_file(dir, RESULTS_JSON, results.to_json().as_bytes())?,
        write_file(dir, RESULTS_CSV, results.to_csv().as_bytes())?,
    ];
    let (summary, derived) = write_derived(dir, results, formats)?;
    written.extend(derived);
    Ok((summary, written))
}

/// Writes the summary and the figures of saved results.
pub fn write_derived(dir: &Path, results: &Results, formats: &[Format]) -> Result<(Summary, Vec<PathBuf>), RunsError> {
    let summary = Summary::of(results);
    let json = serde_json::to_string_pretty(&summary.to_json(results)).expect("JSON") + "\n";
    let mut written = vec![
        write_file(dir, SUMMARY_TXT, summary.to_text(results).as_bytes())?,
        write_file(dir, SUMMARY_JSON, json.as_bytes())?,
    ];
    let scene = running_times_figure(results);
    for &format in formats {
        let path = dir.join(format!("{FIGURE_STEM}.{}", extension(format)));
        let document = Document { pages: vec![scene.clone()] };
        let mut bytes = Vec::new();
        render::write(&document, format, &PngOptions::default(), &mut bytes)
            .map_err(|source| RunsError::Figure { path: path.clone(), source })?;
        written.push(write_file(dir, &format!("{FIGURE_STEM}.{}", extension(format)), &bytes)?);
    }
    Ok((summary, written))
}

fn extension(format: Format) -> &'static str {
    match format {
        Format::Pdf => "pdf",
        Format::Svg => "svg",
        Format::Png => "png",
    }
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, RunsError> {
    let path = dir.join(name);
    let mut file = std::fs::File::create(&path).map_err(|e| RunsError::io(&path, e))?;
    file.write_all(bytes).map_err(|e| RunsError::io(&path, e))?;
    Ok(path)
}

/// The sorted running times of every setting's successful runs (Figure 3, or Figure 14
/// with several settings).
pub fn running_times_figure(results: &Results) -> Scene {
    let series: Vec<Series> =
        (0..results.settings.len()).map(|s| Series { label: results.label(s), values: results.times(s) }).collect();
    let command = results.command.join(" ");
    let command = if command.chars().count() > 70 {
        format!("{}...", command.chars().take(67).collect::<String>())
    } else {
        command
    };
    let mut notes = Vec::new();
    if let [only] = series.as_slice() {
        notes.push(format!("{} ({} runs)", only.label, only.values.len()));
    }
    let failed = results.failed().count();
    if failed > 0 {
        notes.push(format!("{failed} failed runs left out (see summary.txt)"));
    }
    if let Some(signal) = results.interrupted_by {
        notes.push(format!("stopped early by signal {signal}"));
    }
    sorted_times(&format!("Running time of {command}"), &series, &notes, 640.0, 320.0)
}
