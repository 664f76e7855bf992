//! `schedlens runs` writes its series' report, and `schedlens report DIR` writes the same
//! bytes: the settings with the summary's statistics, the sorted running times as an SVG
//! image, every run; when the runs were recorded, the fastest and slowest runs' traces
//! side by side with `compare`'s table. (The report's browser tests open such files.)
//! The recorded series needs root, tracefs and hackbench, and says on stderr when it is
//! skipped.

use crate::common::{fresh_dir as dir, recording_unavailable};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn schedlens(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_schedlens")).args(args).output().expect("run schedlens");
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The report `runs` wrote, after checking that `report DIR` writes the same bytes.
fn series_report(out: &Path) -> String {
    let html = read(&out.join("report.html"));
    let again = out.with_extension("html");
    schedlens(&["report", &out.display().to_string(), "-o", &again.display().to_string()]);
    assert!(read(&again) == html, "schedlens report DIR gives what runs wrote");
    html
}

#[test]
fn an_untraced_series_reports_its_statistics_and_figure() {
    let out = dir("report-untraced-series");
    let o = out.display().to_string();
    schedlens(&["runs", "-n", "3", "--sleep", "0", "--figure-format", "svg", "-o", &o, "--", "true"]);
    let html = series_report(&out);
    let summary: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    let median = summary["settings"][0]["median_s"].as_f64().unwrap();
    assert!(html.contains("<section id=\"runs\">"), "the series' section");
    assert!(html.contains(&format!("<td data-v=\"{median}\">{median:.4}</td>")), "the median as runs computes it");
    assert!(html.contains("src=\"data:image/svg+xml;base64,"), "the running-times figure");
    assert_eq!(html.matches("<tr><td data-v=").count(), 3, "every run is listed");
    assert!(!html.contains("<section id=\"timeline\">"), "no trace, no timeline");
}

#[test]
fn a_recorded_series_shows_its_fastest_and_slowest_runs_with_the_comparison() {
    if let Some(why) = recording_unavailable() {
        eprintln!("skipped: a_recorded_series_shows_its_fastest_and_slowest_runs_with_the_comparison: {why}");
        return;
    }
    let _tracefs = crate::common::TRACEFS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = dir("report-recorded-series");
    let o = out.display().to_string();
    let args = ["runs", "-n", "2", "--record", "--sleep", "0.1", "--figure-format", "svg", "-o", &o, "--"];
    schedlens(&[&args[..], &["hackbench", "-g", "1", "-l", "20"]].concat());
    let html = series_report(&out);
    let results: Value = serde_json::from_str(&read(&out.join("results.json"))).unwrap();
    let summary: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    for (key, role) in [("fastest_run", "fastest"), ("slowest_run", "slowest")] {
        let order = summary[key].as_u64().unwrap();
        let trace = results["runs"][order as usize - 1]["trace"].as_str().unwrap();
        assert!(html.contains(&format!("<h3>{trace}</h3>")), "{role} run's trace is shown");
        assert!(html.contains(&format!("{role}: run {order} (")), "{role} run is named");
    }
    assert!(html.contains("<section id=\"comparison\">") && html.contains("hackbench: waiting"), "compare's table");
    assert!(html.contains("Running time against the scheduler metrics"), "the metrics' correlations");
    // Two runs cannot be correlated: said so, not passed off as metrics that did not vary.
    assert!(html.contains("<td>too few runs (3 needed)</td>") && !html.contains("did not vary"), "why no correlation");
    assert!(
        read(&out.join("summary.txt")).contains("too few runs (3 needed): idle_while_waiting_s"),
        "{}",
        "in the text too"
    );
}
