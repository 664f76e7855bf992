//! The files of a results directory: `results.json` and `results.csv` (every run),
//! `summary.txt` and `summary.json` (the statistics), and `running-times.{pdf,svg,png}`
//! (the sorted running times, one series per setting). `runs --report DIR` rewrites all
//! but the results from `results.json` alone. What goes in them is `experiment`'s; this
//! module reads and writes the files.

use crate::RunsError;
use documents::runs::Results;
use experiment::figure::running_times_figure;
use experiment::summary::SweepSummary;
use render::{Document, Format, PngOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const RESULTS_JSON: &str = "results.json";
pub const RESULTS_CSV: &str = "results.csv";
pub const SUMMARY_TXT: &str = "summary.txt";
pub const SUMMARY_JSON: &str = "summary.json";
pub const FIGURE_STEM: &str = "running-times";

/// Writes the results and everything derived from them; returns the summary and the
/// files written.
pub fn write_all(dir: &Path, results: &Results, formats: &[Format]) -> Result<(SweepSummary, Vec<PathBuf>), RunsError> {
    let mut written = vec![
        write_file(dir, RESULTS_JSON, experiment::results::to_json(results).as_bytes())?,
        write_file(dir, RESULTS_CSV, experiment::results::to_csv(results).as_bytes())?,
    ];
    let (summary, derived) = write_derived(dir, results, formats)?;
    written.extend(derived);
    Ok((summary, written))
}

/// Writes the summary and the figures of saved results.
pub fn write_derived(
    dir: &Path,
    results: &Results,
    formats: &[Format],
) -> Result<(SweepSummary, Vec<PathBuf>), RunsError> {
    let summary = SweepSummary::of(results);
    let json = serde_json::to_string_pretty(&summary.to_document(results)).expect("JSON") + "\n";
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

/// Reads `results.json` from a results directory.
pub fn load_results(dir: &Path) -> Result<Results, RunsError> {
    let path = dir.join(RESULTS_JSON);
    let text = std::fs::read_to_string(&path).map_err(|e| RunsError::io(&path, e))?;
    experiment::results::from_json(&text).map_err(|source| RunsError::Results { path, source })
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, RunsError> {
    let path = dir.join(name);
    let mut file = std::fs::File::create(&path).map_err(|e| RunsError::io(&path, e))?;
    file.write_all(bytes).map_err(|e| RunsError::io(&path, e))?;
    Ok(path)
}
