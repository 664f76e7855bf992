//! Where users look for the critical path and the wakeup latency, on real recordings:
//! `compare` sets both traces' critical paths side by side (golden text and JSON: the
//! barrier pinned to one CPU of two against the unpinned one; the 64-thread barrier
//! against its self-pinned run on the 64-CPU machine), their parts' shares of the
//! running-time difference sum to all of it and rank among the other time measures, and
//! each command's wakeup p50 and p99 shift; `latency --figure` draws two traces on one
//! scale. Golden files are in tests/golden/ (`SCHEDLENS_BLESS=1` rewrites them).

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Runs schedlens in testdata/traces, so the outputs name the fixtures as given.
fn in_traces(args: &[&str]) -> Output {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces");
    Command::new(env!("CARGO_BIN_EXE_schedlens")).args(args).current_dir(traces).output().expect("run schedlens")
}

fn success(args: &[&str]) -> Vec<u8> {
    let out = in_traces(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn check_golden(name: &str, actual: &[u8]) {
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    golden::check(&golden_dir, env!("CARGO_TARGET_TMPDIR").as_ref(), "schedlens", name, actual);
}

fn temp(name: &str) -> String {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name).display().to_string()
}

const PINNED: &str = "barrier-pinned-record.dat";
const UNPINNED: &str = "barrier-unpinned-record.dat";

#[test]
fn compare_sets_the_critical_paths_side_by_side_text() {
    let figure = temp("compare-pinned.svg");
    let text = success(&["compare", PINNED, UNPINNED, "-o", &figure, "--stack"]);
    let shown = String::from_utf8_lossy(&text);
    assert!(shown.contains("  A: of the 157.9 ms, 54.3 ms running,"), "A's sentence to quote: {shown}");
    assert!(shown.contains("barrier: wakeup p99"), "the latency shifts: {shown}");
    check_golden("compare-barrier-pinned.txt", &text);
    let svg = std::fs::read_to_string(&figure).unwrap();
    assert!(svg.contains("critical path: pinning") && svg.contains("A's critical path: of the"), "{figure}");
}

#[test]
fn compare_json_ranks_the_critical_paths_parts_with_the_other_times() {
    let json = success(&["compare", PINNED, UNPINNED, "--format", "json", "-o", &temp("compare-pinned.pdf")]);
    check_golden("compare-barrier-pinned.json", &json);
    let doc: Value = serde_json::from_slice(&json).unwrap();
    for side in ["a", "b"] {
        let path = &doc[side]["critical_path"];
        let parts: u64 = path["breakdown"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        let running = doc[side]["running_time_s"].as_f64().unwrap();
        assert!((parts as f64 / 1e9 - running).abs() < 1e-9, "{side}: the parts sum to the running time");
        assert!(path["sentence"].as_str().unwrap().starts_with("of the "), "{path}");
    }
    assert_eq!(doc["a"]["critical_path"]["breakdown"]["pinning_ns"], 96_825_686u64, "A waited for its pinning");
    let rows = doc["rows"].as_array().unwrap();
    let units: Vec<&str> = rows.iter().map(|r| r["unit"].as_str().unwrap()).collect();
    let first = |unit| units.iter().position(|u| *u == unit).unwrap();
    assert!(first("s") < first("latency") && first("latency") < first("count"), "times, latencies, counts");
    assert!(units.windows(2).all(|w| !(w[0] == "count" && w[1] != "count")), "{units:?}");
    let path_rows: Vec<&Value> =
        rows.iter().filter(|r| r["what"].as_str().unwrap().starts_with("critical path: ")).collect();
    let shares: f64 = path_rows.iter().map(|r| r["share_of_running_time_difference"].as_f64().unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "the parts explain the whole difference: {shares}");
    assert_eq!(path_rows[0]["what"], "critical path: pinning", "the part that explains most comes first");
    let times: Vec<f64> =
        rows.iter().filter(|r| r["unit"] == "s").map(|r| r["difference"].as_f64().unwrap().abs()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "ranked by how much they explain: {times:?}");
    let p99 = rows.iter().find(|r| r["what"] == "barrier: wakeup p99").unwrap();
    assert!(p99["share_of_running_time_difference"].is_null(), "a percentile's shift is no part of the time");
}

#[test]
fn compare_on_64_cpus_text() {
    let figure = temp("compare-barrier64.svg");
    let args = ["compare", "manycore/barrier64.dat", "manycore/barrier64-selfpinned.dat", "--top", "8"];
    let text = success(&[&args[..], &["-o", &figure]].concat());
    let shown = String::from_utf8_lossy(&text);
    assert!(shown.contains("the scheduler cost at most 28% of the 13.02 s known"), "{shown}");
    assert!(shown.contains("the scheduler cost at most 38% of the 26.00 s known"), "{shown}");
    check_golden("compare-barrier64-selfpinned.txt", &text);
}

#[test]
fn a_trace_without_a_command_compares_without_a_path() {
    // perf.data recorded with `perf sched record` names no command and holds no exec.
    let perf = "../perf/sched-hackbench.data";
    let json = success(&["compare", perf, perf, "--format", "json", "-o", &temp("compare-perf.svg")]);
    let doc: Value = serde_json::from_slice(&json).unwrap();
    assert!(doc["a"]["critical_path"].is_null(), "{doc}");
    let text = String::from_utf8(success(&["compare", perf, perf, "-o", &temp("compare-perf.svg")])).unwrap();
    assert!(text.contains("A: none (the trace names no command"), "{text}");
}

#[test]
fn latency_figure_of_two_traces_on_one_scale_svg() {
    let figure = temp("latency-two.svg");
    let args = ["latency", "hackbench-v6.dat", "hackbench-v7none.dat", "--after-sleep", "--forked", "--top", "1"];
    let text = String::from_utf8(success(&[&args[..], &["--figure", &figure]].concat())).unwrap();
    assert!(text.starts_with("==> hackbench-v6.dat <==\n") && text.contains("\n\n==> hackbench-v7none.dat <==\n"));
    let svg = std::fs::read(&figure).unwrap();
    let shown = String::from_utf8_lossy(&svg);
    assert!(
        shown.contains("hackbench-v6.dat: hackbench (640)") && shown.contains("hackbench-v7none.dat: hackbench (2190)")
    );
    check_golden("latency-two-traces.svg", &svg);
    let json = in_traces(&["latency", "hackbench-v6.dat", "hackbench-v7none.dat", "--format", "json"]);
    assert_eq!(json.status.code(), Some(2), "one JSON document reads one trace");
}
