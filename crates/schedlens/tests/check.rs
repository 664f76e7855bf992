//! `schedlens check` scored against `synth`'s ground truth, and on real traces.
//!
//! Scoring: an incident matches an injection of the same kind when their time spans
//! overlap and, except for overload (machine-wide), they share a CPU or a pid. Precision
//! is the share of reported incidents that match an injection, recall the share of
//! injections some incident matches; both must be at least 0.95 per class. The scores
//! are printed (run with `--nocapture` to see them).

mod common;

use analysis::check::Kind;
use common::schedlens;
use serde_json::Value;
use std::path::PathBuf;

/// The five incident kinds, by the name `check` and `synth` both use.
const KINDS: [&str; 5] = [
    Kind::WorkConservation.name(),
    Kind::WakeupPlacement.name(),
    Kind::KthreadPreemption.name(),
    Kind::MigrationCascade.name(),
    Kind::Overload.name(),
];

fn temp(name: &str) -> String {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name).display().to_string()
}

fn fixture(name: &str) -> String {
    format!("{}/../../testdata/traces/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn numbers(value: &Value) -> Vec<i64> {
    value.as_array().map_or(Vec::new(), |a| a.iter().filter_map(Value::as_i64).collect())
}

fn matches(incident: &Value, injection: &Value) -> bool {
    let kind = incident["kind"].as_str();
    let overlap = incident["start_ns"].as_u64() < injection["end_ns"].as_u64()
        && injection["start_ns"].as_u64() < incident["end_ns"].as_u64();
    let shares = |key: &str| numbers(&incident[key]).iter().any(|n| numbers(&injection[key]).contains(n));
    kind == injection["kind"].as_str() && overlap && (kind == Some("overload") || shares("cpus") || shares("pids"))
}

/// Generates a trace with every kind injected, checks it, and returns per kind
/// (precision, recall).
fn score(cpus: u32, seconds: &str, each: u32) -> Vec<(&'static str, f64, f64)> {
    let (trace, truth) = (temp(&format!("check-{cpus}.dat")), temp(&format!("check-{cpus}.json")));
    let mut args = vec!["synth", "-o", &trace, "--truth", &truth, "--workload", "mixed", "--seconds", seconds];
    let cpus_text = cpus.to_string();
    args.extend(["--cpus", &cpus_text, "--topology", "sockets=2,smt=2,layout=interleaved"]);
    let injections: Vec<String> = KINDS.iter().map(|k| format!("{k}:{each}")).collect();
    for injection in &injections {
        args.extend(["--inject", injection]);
    }
    schedlens(&args);
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    let report: Value = serde_json::from_str(&schedlens(&["check", &trace, "--format", "json"])).unwrap();
    let (injected, found) = (truth["injections"].as_array().unwrap(), report["incidents"].as_array().unwrap());
    KINDS
        .iter()
        .map(|&kind| {
            let ours: Vec<&Value> = found.iter().filter(|i| i["kind"] == kind).collect();
            let theirs: Vec<&Value> = injected.iter().filter(|i| i["kind"] == kind).collect();
            assert_eq!(theirs.len(), each as usize, "{cpus} CPUs: every {kind} asked for was injected");
            let precision =
                ours.iter().filter(|i| theirs.iter().any(|t| matches(i, t))).count() as f64 / ours.len().max(1) as f64;
            let recall = theirs.iter().filter(|t| ours.iter().any(|i| matches(i, t))).count() as f64
                / theirs.len().max(1) as f64;
            eprintln!(
                "check on {cpus} CPUs: {kind:<20} {} found, {} injected: precision {precision:.2}, recall {recall:.2}",
                ours.len(),
                theirs.len()
            );
            (kind, precision, recall)
        })
        .collect()
}

#[test]
fn finds_the_injected_incidents_on_64_and_256_cpus() {
    for (cpus, seconds, each) in [(64, "1.2", 5), (256, "0.6", 3)] {
        for (kind, precision, recall) in score(cpus, seconds, each) {
            assert!(precision >= 0.95 && recall >= 0.95, "{cpus} CPUs, {kind}: precision {precision}, recall {recall}");
        }
    }
}

#[test]
fn two_threads_pinned_to_one_cpu_are_an_incident_marked_possibly_pinned() {
    let report: Value =
        serde_json::from_str(&schedlens(&["check", &fixture("scenario-pinned-v7zstd.dat"), "--format", "json"]))
            .unwrap();
    let incidents = report["incidents"].as_array().unwrap();
    let spinners: Vec<&Value> =
        incidents.iter().filter(|i| i["explanation"].as_str().unwrap().starts_with("pinned-spin:")).collect();
    assert!(!spinners.is_empty(), "{report}");
    for incident in spinners {
        assert_eq!(incident["kind"], "work-conservation", "{incident}");
        assert_eq!(incident["possibly_pinned"], true, "never presented as certain: {incident}");
        assert!(incident["explanation"].as_str().unwrap().contains("possibly pinned"), "{incident}");
    }
}

#[test]
fn an_unpinned_barrier_has_no_incident_and_the_text_fits_80_columns() {
    let text = schedlens(&["check", &fixture("scenario-barrier-v7zstd.dat")]);
    assert!(text.contains("work-conservation 0"), "{text}");
    for trace in ["scenario-pinned-v7zstd.dat", "scenario-overload-v7zstd.dat", "hackbench-v7zstd.dat"] {
        let text = schedlens(&["check", &fixture(trace), "--min-duration", "1"]);
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{trace}: {line:?}");
        }
    }
}
