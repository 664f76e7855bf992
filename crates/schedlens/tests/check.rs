//! `schedlens check` scored against `synth`'s ground truth, and on real traces.
//!
//! Scoring: an incident matches an injection of the same kind when their time spans
//! overlap and, except for overload (machine-wide), they share a CPU or a pid. Precision
//! is the share of reported incidents that match an injection, recall the share of
//! injections some incident matches. The `pinned` row scores the episodes flagged pinned
//! (or possibly pinned, when the trace has no affinity) against the pinned groups. Every
//! row must reach 0.95 on every trace; the table is printed (run with `--nocapture`).

mod common;

use analysis::check::Kind;
use common::schedlens;
use serde_json::Value;
use std::path::PathBuf;
use synth::{Difficulty, InjectionKind};

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
    let overload = Kind::Overload.name();
    kind == injection["kind"].as_str() && overlap && (kind == Some(overload) || shares("cpus") || shares("pids"))
}

/// One synthetic trace to score.
struct Case {
    cpus: u32,
    seconds: &'static str,
    each: u32,
    difficulty: Difficulty,
    affinity: bool,
}

/// A row of the table: (what, found, injected, precision, recall).
type Row = (&'static str, usize, usize, f64, f64);

fn row(what: &'static str, ours: &[&Value], theirs: &[&Value]) -> Row {
    let precision =
        ours.iter().filter(|i| theirs.iter().any(|t| matches(i, t))).count() as f64 / ours.len().max(1) as f64;
    let recall =
        theirs.iter().filter(|t| ours.iter().any(|i| matches(i, t))).count() as f64 / theirs.len().max(1) as f64;
    (what, ours.len(), theirs.len(), precision, recall)
}

/// Generates the case's trace with every kind injected `each` times, checks it, and
/// scores each kind and the pinned flag.
fn score(case: &Case) -> Vec<Row> {
    let name = format!("check-{}-{}-{}", case.cpus, case.difficulty.name(), case.affinity);
    let (trace, truth) = (temp(&format!("{name}.dat")), temp(&format!("{name}.json")));
    let cpus = case.cpus.to_string();
    let mut args = vec!["synth", "-o", &trace, "--truth", &truth, "--workload", "mixed", "--seconds", case.seconds];
    args.extend(["--cpus", &cpus, "--topology", "sockets=2,smt=2,layout=interleaved"]);
    args.extend(["--difficulty", case.difficulty.name()]);
    if !case.affinity {
        args.push("--no-affinity");
    }
    let injections: Vec<String> = InjectionKind::ALL.iter().map(|k| format!("{}:{}", k.name(), case.each)).collect();
    for injection in &injections {
        args.extend(["--inject", injection]);
    }
    schedlens(&args);
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    let report: Value = serde_json::from_str(&schedlens(&["check", &trace, "--format", "json"])).unwrap();
    let (injected, found) = (truth["injections"].as_array().unwrap(), report["incidents"].as_array().unwrap());
    assert_eq!(injected.len(), InjectionKind::ALL.len() * case.each as usize, "{name}: every injection happened");
    let mut rows: Vec<Row> = Kind::ALL
        .iter()
        .map(|kind| {
            let ours: Vec<&Value> = found.iter().filter(|i| i["kind"] == kind.name()).collect();
            let theirs: Vec<&Value> = injected.iter().filter(|i| i["kind"] == kind.name()).collect();
            row(kind.name(), &ours, &theirs)
        })
        .collect();
    let flag = if case.affinity { "pinned" } else { "possibly" };
    let ours: Vec<&Value> = found.iter().filter(|i| i["pinning"] == flag).collect();
    let theirs: Vec<&Value> = injected.iter().filter(|i| i["pinned"] == true).collect();
    rows.push(row(if case.affinity { "pinned" } else { "possibly pinned" }, &ours, &theirs));
    rows
}

fn print(case: &Case, rows: &[Row]) {
    let affinity = if case.affinity { "affinity recorded" } else { "no affinity" };
    for (what, found, injected, precision, recall) in rows {
        eprintln!(
            "check | {:>3} CPUs | {:<5} | {affinity:<17} | {what:<18} | found {found:>3} | injected {injected:>3} | \
             precision {precision:.2} | recall {recall:.2}",
            case.cpus,
            case.difficulty.name(),
        );
    }
}

fn score_all(cases: &[Case]) {
    let mut failures = Vec::new();
    for case in cases {
        let rows = score(case);
        print(case, &rows);
        for (what, _, _, precision, recall) in rows {
            if precision < 0.95 || recall < 0.95 {
                failures.push(format!(
                    "{} CPUs {}: {what} {precision:.2}/{recall:.2}",
                    case.cpus,
                    case.difficulty.name()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "below 0.95: {failures:?}");
}

#[test]
fn finds_the_injected_incidents_on_8_cpus_at_every_difficulty() {
    let case = |seconds, difficulty, affinity| Case { cpus: 8, seconds, each: 12, difficulty, affinity };
    score_all(&[
        case("4", Difficulty::Clean, true),
        case("4", Difficulty::Noisy, true),
        case("6", Difficulty::Hard, true),
        case("6", Difficulty::Hard, false),
    ]);
}

#[test]
fn finds_the_injected_incidents_on_64_cpus() {
    score_all(&[Case { cpus: 64, seconds: "6", each: 12, difficulty: Difficulty::Hard, affinity: true }]);
}

#[test]
fn finds_the_injected_incidents_on_256_cpus() {
    score_all(&[Case { cpus: 256, seconds: "2.4", each: 5, difficulty: Difficulty::Hard, affinity: true }]);
}

#[test]
fn two_threads_pinned_to_one_cpu_are_one_episode_marked_possibly_pinned() {
    let report: Value =
        serde_json::from_str(&schedlens(&["check", &fixture("scenario-pinned-v7zstd.dat"), "--format", "json"]))
            .unwrap();
    let episodes: Vec<&Value> =
        report["incidents"].as_array().unwrap().iter().filter(|i| i["kind"] == "work-conservation").collect();
    assert_eq!(episodes.len(), 1, "{report}");
    let episode = episodes[0];
    assert_eq!(episode["pinning"], "possibly", "never presented as certain: {episode}");
    assert!(episode["explanation"].as_str().unwrap().contains("possibly pinned"), "{episode}");
    assert!(episode["tasks"].as_array().unwrap().iter().all(|t| t["comm"] == "pinned-spin"), "{episode}");
}

#[test]
fn an_unpinned_barrier_has_no_incident_and_the_text_fits_80_columns() {
    let text = schedlens(&["check", &fixture("scenario-barrier-v7zstd.dat")]);
    assert!(text.contains("work-conservation 0"), "{text}");
    for trace in ["scenario-pinned-v7zstd.dat", "scenario-overload-v7zstd.dat", "hackbench-v7zstd.dat"] {
        let text = schedlens(&["check", &fixture(trace), "--min-lost", "0.1"]);
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{trace}: {line:?}");
        }
    }
}
