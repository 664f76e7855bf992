//! `schedlens export` read back by each format's own ecosystem and compared with
//! `schedlens stats`/`dump`: Perfetto's Python protobuf definitions, DuckDB and pyarrow,
//! and (with the `otf2` feature) `otf2-print`. The Python checks are scripts in
//! `tests/export/`; without the Python packages they are skipped with a printed reason.

use crate::common::schedlens;
use refcheck::fixture;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn temp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("export").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn script(name: &str) -> String {
    format!("{}/tests/export/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Whether `python3` can import these modules; prints why a test is skipped if not.
fn python_has(modules: &str, test: &str) -> bool {
    let ok =
        Command::new("python3").args(["-c", &format!("import {modules}")]).output().is_ok_and(|o| o.status.success());
    if !ok {
        println!("SKIPPED {test}: python3 cannot import {modules} (pip install duckdb pyarrow perfetto)");
    }
    ok
}

fn run_python(args: &[&str]) {
    let out = Command::new("python3").args(args).output().expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(out.status.success(), "{args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
}

fn incident_count(trace: &str, extra: &[&str]) -> usize {
    let mut args = vec!["check", trace, "--format", "json"];
    args.extend_from_slice(extra);
    let json: Value = serde_json::from_str(&schedlens(&args)).unwrap();
    json["incidents"].as_array().unwrap().len()
}

/// Exports `name` to Perfetto, compact and with `--all-events`, and compares each with
/// `dump --json` through Perfetto's own protobuf classes (check_perfetto.py).
fn perfetto_round_trip(name: &str, window: Option<(&str, &str)>) {
    perfetto_round_trip_of(&fixture(name), window);
}

/// As [`perfetto_round_trip`] for a trace at any path.
fn perfetto_round_trip_of(trace: &str, window: Option<(&str, &str)>) {
    let name = std::path::Path::new(trace).file_name().unwrap().to_str().unwrap();
    let dir = temp(&format!("perfetto-{name}"));
    let trace = trace.to_string();
    let dump = dir.join("dump.jsonl");
    std::fs::write(&dump, schedlens(&["dump", "--json", &trace])).unwrap();
    let mut check_args = Vec::new();
    if let Some((min, max)) = window {
        check_args = vec!["--min", min, "--max", max];
    }
    let incidents = incident_count(&trace, &check_args).to_string();
    for content in ["--compact", "--all-events"] {
        let out = dir.join(format!("t{content}.pftrace")).display().to_string();
        let mut args = vec!["export", &trace, "--format", "perfetto", "-o", &out];
        args.extend_from_slice(&check_args);
        if content == "--all-events" {
            args.push(content);
        }
        schedlens(&args);
        let mut script_args = vec![script("check_perfetto.py"), out, dump.display().to_string(), incidents.clone()];
        if content == "--compact" {
            script_args.push(content.to_string());
        }
        if let Some((min, max)) = window {
            script_args.extend([min.to_string(), max.to_string()]);
        }
        run_python(&script_args.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

#[test]
fn perfetto_export_holds_every_event_of_dump() {
    if !python_has("perfetto.protos.perfetto.trace.perfetto_trace_pb2", "perfetto_export_holds_every_event_of_dump") {
        return;
    }
    // Scheduler events of a real recording, trace markers (print events with newlines),
    // and lost events (bundles marked as following a loss).
    for name in ["hackbench-v7zstd.dat", "markers-v7zstd.dat", "lost-events-v7zstd.dat", "scenario-pinned-v7zstd.dat"] {
        perfetto_round_trip(name, None);
    }
    perfetto_round_trip("barrier-v7zstd.dat", Some(("0.5", "1.5")));
    // Many CPUs with lost events, a perf.data, a foreign kernel without sched_waking.
    perfetto_round_trip("manycore/hackbench64-lost.dat", None);
    perfetto_round_trip("foreign/rpi-armv7-sched.dat", None);
    perfetto_round_trip_of(&crate::common::perf_fixtures()[0].display().to_string(), None);
}

#[test]
#[ignore = "every fixture (about 3 minutes): run with --ignored"]
fn perfetto_export_holds_every_event_of_dump_on_every_fixture() {
    let test = "perfetto_export_holds_every_event_of_dump_on_every_fixture";
    if !python_has("perfetto.protos.perfetto.trace.perfetto_trace_pb2", test) {
        return;
    }
    let traces = refcheck::fixtures().into_iter().chain(crate::common::perf_fixtures());
    let mut compared = 0;
    for trace in traces {
        // Traces without sched_switch cannot be exported.
        let has_switches = schedlens(&["info", &trace.display().to_string()]).contains("sched_switch");
        if has_switches {
            perfetto_round_trip_of(&trace.display().to_string(), None);
            compared += 1;
        }
    }
    println!("{compared} traces compared");
    assert!(compared >= 40, "{compared} compared");
}

#[test]
fn perfetto_export_is_deterministic() {
    let dir = temp("perfetto-twice");
    let trace = fixture("hackbench-v7zstd.dat");
    for content in [None, Some("--all-events")] {
        let outputs: Vec<Vec<u8>> = ["a", "b"]
            .iter()
            .map(|name| {
                let out = dir.join(format!("{name}{}.pftrace", content.unwrap_or(""))).display().to_string();
                let mut args = vec!["export", &trace, "--format", "perfetto", "-o", &out];
                args.extend(content);
                schedlens(&args);
                std::fs::read(&out).unwrap()
            })
            .collect();
        assert!(outputs[0] == outputs[1], "same input, same bytes ({content:?})");
    }
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 4, "no scratch file left behind: {left:?}");
}

/// Stats JSON files for one trace and the argument the Parquet check takes for it.
fn stats_files(dir: &std::path::Path, trace: &str, name: &str, window: &[&str]) -> String {
    let mut paths = Vec::new();
    for by in ["task", "cpu"] {
        let mut args = vec!["stats", trace, "--by", by, "--format", "json"];
        args.extend_from_slice(window);
        let path = dir.join(format!("{name}-{by}.json"));
        std::fs::write(&path, schedlens(&args)).unwrap();
        paths.push(path.display().to_string());
    }
    format!("{name}={}", paths.join(","))
}

#[test]
fn parquet_export_sums_to_stats_across_traces() {
    if !python_has("duckdb, pyarrow", "parquet_export_sums_to_stats_across_traces") {
        return;
    }
    let dir = temp("parquet");
    let out = dir.join("fleet").display().to_string();
    let names = ["hackbench-v6", "lost-events-v7zstd", "scenario-pinned-v7zstd"];
    let traces: Vec<String> = names.iter().map(|n| fixture(&format!("{n}.dat"))).collect();
    let mut args = vec!["export", "--format", "parquet", "-o", &out];
    args.extend(traces.iter().map(String::as_str));
    schedlens(&args);
    // The window and the task filter apply as they do for stats.
    let filtered = fixture("hackbench-v7zstd.dat");
    let window = ["--after-sleep", "--forked", "--min", "0.01", "--max", "0.05"];
    let mut args = vec!["export", &filtered, "--format", "parquet", "-o", &out, "--name", "hackbench-window"];
    args.extend_from_slice(&window);
    schedlens(&args);
    // Each trace's partition name, as the dataset's manifest lists it by source path.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out}/_schedlens.json")).unwrap()).unwrap();
    let partition = |trace: &str| -> String {
        let source = std::fs::canonicalize(trace).unwrap().display().to_string();
        let listed = manifest["traces"].as_array().unwrap().iter().find(|t| t["source"] == source.as_str());
        listed.unwrap_or_else(|| panic!("{source} in {manifest}"))["trace"].as_str().unwrap().to_string()
    };
    let mut expected: Vec<String> =
        traces.iter().map(|trace| stats_files(&dir, trace, &partition(trace), &[])).collect();
    expected.push(stats_files(&dir, &filtered, "hackbench-window", &window));
    let mut script_args = vec![script("check_parquet.py"), out.clone()];
    script_args.extend(expected);
    run_python(&script_args.iter().map(String::as_str).collect::<Vec<_>>());
    // Exporting a trace again replaces its partition and leaves the others alone.
    schedlens(&["export", &traces[0], "--format", "parquet", "-o", &out]);
    let partitions = std::fs::read_dir(format!("{out}/segments")).unwrap().count();
    assert_eq!(partitions, 4);
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out}/meta/trace=hackbench-window/meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["filter"]["forked_only"], true);
    assert!(meta["window"]["start_ns"].as_u64() > meta["start_ns"].as_u64());
}

#[test]
fn export_refuses_bad_usage_with_a_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["export", &fixture("hackbench-v6.dat"), &fixture("hackbench-v6.dat"), "--format", "perfetto", "-o", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only be exported with --format parquet"));
    let dir = temp("bad");
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["export", "/nonexistent.dat", "--format", "parquet", "-o", &dir.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.dat"));
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["export", &fixture("hackbench-v6.dat"), "--format", "parquet", "--counters", "-o"])
        .arg(temp("bad-counters"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--counters shapes a Perfetto file only");
}

/// `--counters` adds schedlens's counter tracks to the compact file, and nothing else:
/// it reads back to the same statistics.
#[test]
fn compact_perfetto_takes_the_counters_when_asked() {
    let trace = fixture("hackbench-v7zstd.dat");
    let dir = temp("perfetto-counters");
    let counter_values = |extra: &[&str], name: &str| {
        let out = dir.join(name).display().to_string();
        let mut args = vec!["export", &trace, "--format", "perfetto", "-o", &out];
        args.extend_from_slice(extra);
        let said = schedlens(&args);
        let values = said.split(" counter values").next().unwrap().rsplit(' ').next().unwrap().parse::<u64>();
        (values.unwrap_or_else(|_| panic!("{said}")), schedlens(&["stats", &out, "--by", "cpu"]))
    };
    let (without, stats) = counter_values(&[], "compact.pftrace");
    let (with, stats_with) = counter_values(&["--counters"], "counters.pftrace");
    assert_eq!(without, 0);
    assert!(with > 1000, "{with} counter values");
    assert_eq!(stats, stats_with);
}
