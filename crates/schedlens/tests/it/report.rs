//! `schedlens runs` writes its series' report, and `schedlens report DIR` writes the same
//! bytes: the settings with the summary's statistics, the sorted running times as an SVG
//! image, every run; when the runs were recorded, the fastest and slowest runs' traces
//! side by side with `compare`'s table. (The report's browser tests open such files.)
//! A trace's report quotes `critical-path`'s sentence with its parts and embeds the very
//! histogram `latency --figure` draws; results made before schedlens measured latency
//! and the critical path say those metrics are unknown.
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

/// The `src` of the first image of `class` in `html`, decoded.
fn image(html: &str, class: &str) -> Vec<u8> {
    use base64::Engine;
    let start = html.find(&format!("<img class=\"{class}\"")).expect("the image");
    let data = &html[start..];
    let data = &data[data.find("base64,").unwrap() + "base64,".len()..];
    let data = &data[..data.find('"').unwrap()];
    base64::engine::general_purpose::STANDARD.decode(data).unwrap()
}

#[test]
fn a_trace_report_quotes_the_critical_path_and_draws_the_latency_histogram() {
    let trace = refcheck::fixture("barrier-pinned-record.dat");
    let out = dir("report-why-slow");
    std::fs::create_dir_all(&out).unwrap();
    let html_path = out.join("pinned.html").display().to_string();
    schedlens(&["report", &trace, "-o", &html_path]);
    let html = read(Path::new(&html_path));
    let path = String::from_utf8(schedlens(&["critical-path", &trace]).stdout).unwrap();
    let sentence = path.lines().next().unwrap();
    assert!(html.contains(&format!("<p class=\"quote\">{sentence}</p>")), "critical-path's sentence: {sentence}");
    assert!(html.contains("<tr data-part=\"pinning\"><td>runnable, only forbidden cores idle (pinning)</td><td>96.83 ms</td><td>61.3%</td></tr>"));
    let figure = out.join("latency.svg").display().to_string();
    schedlens(&["latency", &trace, "--figure", &figure]);
    assert!(image(&html, "latency-histogram") == std::fs::read(&figure).unwrap(), "latency --figure's histogram");
    assert!(html.contains("<a href=\"#critical-path\">") && html.contains("<a href=\"#latency\">"));
}

#[test]
fn results_older_than_the_latency_metrics_say_they_are_unknown() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces");
    let out = dir("report-older-results");
    std::fs::create_dir_all(out.join("traces")).unwrap();
    // A recorded series as the schedlens before the latency metrics left it.
    let mut older = experiment::profile::metric_catalog();
    older.truncate(older.len() - 3);
    let mut runs = Vec::new();
    for (order, (fixture, wall)) in [
        ("barrier-pinned-record.dat", 0.157899),
        ("barrier-unpinned-record.dat", 0.103834),
        ("token-ring-record.dat", 0.11),
    ]
    .into_iter()
    .enumerate()
    {
        let trace = format!("traces/run-00{}-s1-r{}.dat", order + 1, order + 1);
        std::fs::copy(traces.join(fixture), out.join(&trace)).unwrap();
        runs.push(serde_json::json!({"order": order + 1, "setting": 0, "repetition": order + 1, "wall_s": wall,
            "user_s": 0.1, "sys_s": 0.1, "exit": "exit 0", "ok": true, "trace": trace,
            "log": format!("logs/run-00{}.log", order + 1), "metrics": (0..older.len()).map(|k| wall * k as f64).collect::<Vec<f64>>(), "wall_from": "trace"}));
    }
    let results = serde_json::json!({"command": ["barrier"], "repetitions": 3, "sleep_s": 1.0, "recorded": true,
        "knobs": [], "settings": [{"values": [], "shown": []}],
        "metrics": older, "runs": runs, "interrupted_by": null});
    std::fs::write(out.join("results.json"), serde_json::to_string_pretty(&results).unwrap()).unwrap();
    let o = out.display().to_string();
    let summary = String::from_utf8(schedlens(&["runs", "--report", &o, "--figure-format", "svg"]).stdout).unwrap();
    let unknown = "wakeup_latency_p50_s, wakeup_latency_p99_s, critical_path_scheduler_share";
    assert!(summary.contains(&format!("unknown, these results predate them: {unknown}")), "{summary}");
    assert!(summary.contains("runqueue_wait_s"), "the metrics they hold are still correlated: {summary}");
    let document: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(document["unknown_metrics"].as_array().unwrap().len(), 3, "{document}");
    let html = series_report(&out);
    assert_eq!(html.matches("<td data-v=\"NaN\">unknown</td>").count(), 3 * 3, "every run's three new columns");
    assert!(html.contains("<td>unknown: these results predate it</td>"));
}
