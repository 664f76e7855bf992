//! `schedlens runs` and `schedlens compare` end to end: results, summary and figures of an
//! untraced sweep with a failing run; real scheduler knobs set for each run (each run's
//! output shows the values it ran under) and restored after a normal end, after SIGINT,
//! SIGTERM and SIGHUP mid-sweep; knobs the kernel refuses are errors before anything runs;
//! a recorded sweep gets scheduler metrics, `--report` redraws it byte for byte, and
//! `compare` sets its fastest and slowest runs side by side; the statistics agree with
//! scipy on the same CSV. Tests that need root, tracefs, hackbench or scipy say on stderr
//! why they are skipped.

use crate::common::{fresh_dir as dir, is_root, recording_unavailable};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const RR: &str = "/proc/sys/kernel/sched_rr_timeslice_ms";
const AUTOGROUP: &str = "/proc/sys/kernel/sched_autogroup_enabled";

/// Tests that change knobs or record take turns.
static KNOBS: Mutex<()> = Mutex::new(());

fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
}

fn knobs_writable() -> Option<&'static str> {
    if !is_root() {
        return Some("changing scheduler knobs needs root");
    }
    if !Path::new(RR).exists() || !Path::new(AUTOGROUP).exists() {
        return Some("the kernel lacks sched_rr_timeslice_ms or sched_autogroup_enabled");
    }
    None
}

fn schedlens(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlens")).args(args).output().expect("run schedlens")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn knob_values() -> (String, String) {
    (read(Path::new(RR)), read(Path::new(AUTOGROUP)))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).expect("JSON")
}

#[test]
fn an_untraced_sweep_reports_times_and_leaves_failed_runs_out() {
    let out = dir("runs-untraced");
    let counter = out.with_extension("count");
    let _ = std::fs::remove_file(&counter);
    // The second of four runs fails.
    let script = format!(
        "n=$(cat {0} 2>/dev/null || echo 0); echo $((n+1)) > {0}; echo run $n; [ $n -ne 1 ]",
        counter.display()
    );
    let o = out.display().to_string();
    let result = schedlens(&[
        "runs",
        "-n",
        "4",
        "--sleep",
        "0",
        "--figure-format",
        "svg,png",
        "-o",
        &o,
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    assert!(stdout.contains("failed runs, left out"), "{stdout}");
    assert!(stdout.contains("run 2 (as found, exit 1, output in logs/run-002-s1-r2.log)"), "{stdout}");
    let csv = read(&out.join("results.csv"));
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.lines().nth(2).unwrap().contains(",exit 1,0,"), "{csv}");
    let summary = json(&out.join("summary.json"));
    assert_eq!(summary["settings"][0]["n"], 3);
    assert_eq!(summary["settings"][0]["failed"], 1);
    assert_eq!(read(&out.join("logs/run-003-s1-r3.log")), "run 2\n");
    assert!(read(&out.join("running-times.svg")).contains("<svg"));
    assert!(std::fs::read(out.join("running-times.png")).unwrap().starts_with(b"\x89PNG"));
    // The saved results are redrawn identically, and a second sweep will not overwrite them.
    let before = read(&out.join("summary.txt"));
    let redrawn = schedlens(&["runs", "--report", &o, "--figure-format", "svg"]);
    assert!(redrawn.status.success());
    assert_eq!(read(&out.join("summary.txt")), before);
    assert_eq!(String::from_utf8_lossy(&redrawn.stdout), before);
    let again = schedlens(&["runs", "-n", "1", "-o", &o, "--", "true"]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("already holds results"));
}

#[test]
fn knobs_that_cannot_be_used_are_errors_before_anything_runs() {
    let missing = dir("runs-missing-knob");
    let result = schedlens(&[
        "runs",
        "-n",
        "1",
        "--set",
        "kernel.no_such_knob=1",
        "-o",
        &missing.display().to_string(),
        "--",
        "true",
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("kernel.no_such_knob: /proc/sys/kernel/no_such_knob does not exist"), "{stderr}");
    assert!(!missing.exists(), "nothing ran, nothing was written");
    for bad in ["/etc/hostname=x", "latency=1", "kernel.x"] {
        let result = schedlens(&["runs", "--set", bad, "--", "true"]);
        assert_eq!(result.status.code(), Some(1), "{bad}");
    }
    if let Some(why) = knobs_writable() {
        return skip("knobs_that_cannot_be_used_are_errors_before_anything_runs (kernel refusals)", why);
    }
    let _knobs = KNOBS.lock().unwrap_or_else(|e| e.into_inner());
    let before = knob_values();
    // A value the kernel rejects, after a valid knob: nothing runs, nothing stays changed.
    let out = dir("runs-refused-value");
    let o = out.display().to_string();
    let result = schedlens(&[
        "runs",
        "-n",
        "1",
        "--set",
        "kernel.sched_rr_timeslice_ms=7",
        "--set",
        "kernel.sched_autogroup_enabled=0,7",
        "-o",
        &o,
        "--",
        "true",
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the kernel refused \"7\""), "{stderr}");
    assert!(!out.exists());
    assert_eq!(knob_values(), before);
    // Debugfs scheduler knobs under kernel lockdown: EPERM even for root.
    let out = dir("runs-debugfs");
    let o = out.display().to_string();
    let result = schedlens(&[
        "runs",
        "-n",
        "1",
        "--set",
        "kernel.sched_rr_timeslice_ms=7",
        "--set",
        "sched/base_slice_ns=3000000",
        "-o",
        &o,
        "--",
        "true",
    ]);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(knob_values(), before);
    if result.status.success() {
        return skip("debugfs refusal", "this kernel lets root write sched/base_slice_ns (no lockdown)");
    }
    if stderr.contains("does not exist") {
        return skip("debugfs refusal", "this kernel has no debugfs sched/base_slice_ns");
    }
    assert!(stderr.contains("sched/base_slice_ns") && stderr.contains("Operation not permitted"), "{stderr}");
    assert!(stderr.contains("lockdown"), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn every_run_runs_under_its_setting_and_the_knobs_come_back() {
    if let Some(why) = knobs_writable() {
        return skip("every_run_runs_under_its_setting_and_the_knobs_come_back", why);
    }
    let _knobs = KNOBS.lock().unwrap_or_else(|e| e.into_inner());
    let before = knob_values();
    let out = dir("runs-knobs");
    let o = out.display().to_string();
    // A SCHED_RR task reads the knobs it runs under.
    let show = format!("cat {RR} {AUTOGROUP}");
    let result = schedlens(&[
        "runs",
        "-n",
        "2",
        "--sleep",
        "0",
        "--set",
        "kernel.sched_rr_timeslice_ms=3,30",
        "--set",
        "kernel.sched_autogroup_enabled=0,1",
        "-o",
        &o,
        "--",
        "chrt",
        "-r",
        "1",
        "sh",
        "-c",
        &show,
    ]);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    assert_eq!(knob_values(), before, "restored after a normal end");
    let results = json(&out.join("results.json"));
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 8);
    let mut order = Vec::new();
    for run in runs {
        let setting = &results["settings"][run["setting"].as_u64().unwrap() as usize]["values"];
        let expected = format!("{}\n{}\n", setting[0].as_str().unwrap(), setting[1].as_str().unwrap());
        assert_eq!(read(&out.join(run["log"].as_str().unwrap())), expected, "{run}");
        assert_eq!(run["ok"], true);
        order.push(run["setting"].as_u64().unwrap());
    }
    assert_eq!(order, [0, 1, 2, 3, 1, 2, 3, 0], "interleaved, rotated each repetition");
    let summary = read(&out.join("summary.txt"));
    assert!(
        summary.contains(&format!("knob kernel.sched_rr_timeslice_ms ({RR}): was {}, restored", before.0.trim())),
        "{summary}"
    );
}

#[test]
fn sigint_sigterm_and_sighup_mid_sweep_restore_every_knob() {
    if let Some(why) = knobs_writable() {
        return skip("sigint_sigterm_and_sighup_mid_sweep_restore_every_knob", why);
    }
    let _knobs = KNOBS.lock().unwrap_or_else(|e| e.into_inner());
    let before = knob_values();
    for (signal, name, code) in [(libc_sigint(), "INT", 130), (15, "TERM", 143), (1, "HUP", 129)] {
        let out = dir(&format!("runs-sig{name}"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_schedlens"))
            .args(["runs", "-n", "100", "--sleep", "0.05", "--set", "kernel.sched_rr_timeslice_ms=3,30", "--set"])
            .args(["kernel.sched_autogroup_enabled=0,1", "-o"])
            .arg(&out)
            .args(["--", "sleep", "0.3"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start schedlens runs");
        // Mid-sweep: the second run has started, so the knobs were changed.
        let deadline = Instant::now() + Duration::from_secs(20);
        while !out.join("logs/run-002-s2-r1.log").exists() {
            assert!(Instant::now() < deadline, "the sweep did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_ne!(knob_values(), before, "the sweep changed the knobs");
        Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status().expect("kill");
        let started = Instant::now();
        let status = child.wait().expect("schedlens ends");
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?} to stop", started.elapsed());
        assert_eq!(status.code(), Some(code), "SIG{name}: {stderr}");
        assert_eq!(knob_values(), before, "after SIG{name}");
        let results = json(&out.join("results.json"));
        assert_eq!(results["interrupted_by"], signal);
        let runs = results["runs"].as_array().unwrap();
        assert!((2..10).contains(&runs.len()), "{}", runs.len());
        assert_eq!(runs.last().unwrap()["exit"], format!("signal {signal}"), "the running command got the signal");
    }
}

fn libc_sigint() -> i32 {
    2
}

fn can_record() -> Option<&'static str> {
    knobs_writable().or_else(recording_unavailable)
}

#[test]
fn a_recorded_sweep_gets_metrics_and_its_extremes_compare() {
    if let Some(why) = can_record() {
        return skip("a_recorded_sweep_gets_metrics_and_its_extremes_compare", why);
    }
    let _tracefs = crate::common::TRACEFS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let _knobs = KNOBS.lock().unwrap_or_else(|e| e.into_inner());
    let before = knob_values();
    let out = dir("runs-recorded");
    let o = out.display().to_string();
    let result = schedlens(&[
        "runs",
        "-n",
        "2",
        "--record",
        "--sleep",
        "0.2",
        "--set",
        "kernel.sched_autogroup_enabled=0,1",
        "-o",
        &o,
        "--figure-format",
        "svg",
        "--",
        "hackbench",
        "-g",
        "1",
        "-l",
        "50",
    ]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    assert_eq!(knob_values(), before);
    assert!(stdout.contains("running time against the scheduler metrics (Spearman, 4 successful runs)"), "{stdout}");
    assert!(stdout.contains("runs were slower when"), "{stdout}");
    let results = json(&out.join("results.json"));
    for run in results["runs"].as_array().unwrap() {
        assert_eq!(run["wall_from"], "trace", "{run}");
        let metrics = run["metrics"].as_array().unwrap();
        assert_eq!(metrics.len(), results["metrics"].as_array().unwrap().len());
        let switches =
            results["metrics"].as_array().unwrap().iter().position(|m| m["key"] == "context_switches").unwrap();
        assert!(metrics[switches].as_f64().unwrap() > 100.0, "hackbench switches: {run}");
        assert!(out.join(run["trace"].as_str().unwrap()).exists());
        let metric = |key: &str| {
            let index = results["metrics"].as_array().unwrap().iter().position(|m| m["key"] == key).unwrap();
            metrics[index].as_f64().unwrap_or_else(|| panic!("{key} is known: {run}"))
        };
        let (p50, p99) = (metric("wakeup_latency_p50_s"), metric("wakeup_latency_p99_s"));
        assert!(0.0 < p50 && p50 <= p99 && p99 < 1.0, "hackbench's wakeup latency: {p50} {p99}");
        assert!((0.0..=1.0).contains(&metric("critical_path_scheduler_share")), "{run}");
    }
    let csv = read(&out.join("results.csv"));
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",wakeup_latency_p50_s,wakeup_latency_p99_s,critical_path_scheduler_share")
    );
    let correlated = json(&out.join("summary.json"))["correlations"].as_array().unwrap().clone();
    for key in ["wakeup_latency_p99_s", "critical_path_scheduler_share"] {
        let c = correlated.iter().find(|c| c["metric"] == key).unwrap_or_else(|| panic!("{key} is correlated"));
        assert_eq!(c["n"], 4, "{c}");
    }
    let summary = json(&out.join("summary.json"));
    let trace = |key: &str| {
        let order = summary[key].as_u64().unwrap() as usize;
        out.join(results["runs"][order - 1]["trace"].as_str().unwrap()).display().to_string()
    };
    let (fast, slow) = (trace("fastest_run"), trace("slowest_run"));
    let figure = out.join("compare.svg").display().to_string();
    let compared = schedlens(&["compare", &fast, &slow, "--format", "json", "-o", &figure, "--stack"]);
    assert!(compared.status.success(), "{}", String::from_utf8_lossy(&compared.stderr));
    let comparison: Value = serde_json::from_slice(&compared.stdout).unwrap();
    let a = comparison["a"]["running_time_s"].as_f64().unwrap();
    let b = comparison["b"]["running_time_s"].as_f64().unwrap();
    let wall = |order: &str| results["runs"][summary[order].as_u64().unwrap() as usize - 1]["wall_s"].as_f64().unwrap();
    assert!((a - wall("fastest_run")).abs() < 1e-9 && (b - wall("slowest_run")).abs() < 1e-9, "{a} {b}");
    assert!(comparison["rows"].as_array().unwrap().iter().any(|r| r["what"] == "hackbench: waiting"));
    assert!(read(Path::new(&figure)).contains("What differs in time"));
}

#[test]
fn a_sweep_recorded_by_perf_gets_the_same_metrics_from_its_perf_data() {
    let perf_records = Command::new("perf")
        .args(["record", "-q", "-a", "-e", "sched:sched_switch", "-o", "/dev/null", "--", "true"])
        .output();
    let why = recording_unavailable()
        .or_else(|| (!perf_records.is_ok_and(|o| o.status.success())).then_some("perf cannot record here"));
    if let Some(why) = why {
        return skip("a_sweep_recorded_by_perf_gets_the_same_metrics_from_its_perf_data", why);
    }
    let _knobs = KNOBS.lock().unwrap_or_else(|e| e.into_inner());
    let out = dir("runs-perf");
    let o = out.display().to_string();
    let args = ["runs", "-n", "2", "--record", "--recorder", "perf", "--sleep", "0.2", "-o", &o];
    let result =
        schedlens(&[&args[..], &["--figure-format", "svg", "--", "hackbench", "-g", "1", "-l", "50"]].concat());
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let results = json(&out.join("results.json"));
    let switches = results["metrics"].as_array().unwrap().iter().position(|m| m["key"] == "context_switches").unwrap();
    for run in results["runs"].as_array().unwrap() {
        let trace = run["trace"].as_str().unwrap();
        assert!(trace.ends_with(".data") && out.join(trace).exists(), "{run}");
        assert!(run["metrics"][switches].as_f64().unwrap() > 100.0, "hackbench switches: {run}");
        assert_eq!(run["wall_from"], "trace", "the trace shows the sleep's end and the command's exit: {run}");
    }
    assert!(out.join("report.html").exists());
}

#[test]
fn the_perf_recorder_missing_is_a_clear_error() {
    let out = dir("runs-no-perf");
    let o = out.display().to_string();
    let result = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["runs", "-n", "1", "--record", "--recorder", "perf", "-o", &o, "--", "true"])
        .env("PATH", "")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("perf is not installed"), "{stderr}");
    assert!(!out.exists(), "nothing ran, nothing was written");
    let without_record = schedlens(&["runs", "--recorder", "perf", "--", "true"]);
    assert_eq!(without_record.status.code(), Some(2));
}

#[test]
fn a_trace_compared_with_itself_differs_in_nothing_and_rows_are_ranked() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces");
    let (a, b) = (traces.join("hackbench-v7none.dat"), traces.join("hackbench-v6.dat"));
    let out = dir("compare-fixtures");
    std::fs::create_dir_all(&out).unwrap();
    let figure = out.join("same.pdf").display().to_string();
    let same =
        schedlens(&["compare", &a.display().to_string(), &a.display().to_string(), "--format", "json", "-o", &figure]);
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stderr));
    let same: Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(same["rows"].as_array().unwrap().len(), 0, "{same}");
    assert_eq!(same["running_time_difference_s"], 0.0);
    let figure = out.join("two.png").display().to_string();
    let two = schedlens(&[
        "compare",
        &a.display().to_string(),
        &b.display().to_string(),
        "--format",
        "json",
        "-o",
        &figure,
        "--stack",
    ]);
    assert!(two.status.success(), "{}", String::from_utf8_lossy(&two.stderr));
    let two: Value = serde_json::from_slice(&two.stdout).unwrap();
    let rows = two["rows"].as_array().unwrap();
    let times: Vec<f64> =
        rows.iter().filter(|r| r["unit"] == "s").map(|r| r["difference"].as_f64().unwrap().abs()).collect();
    assert!(!times.is_empty() && times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    let first_count = rows.iter().position(|r| r["unit"] == "count").unwrap_or(rows.len());
    assert!(rows[first_count..].iter().all(|r| r["unit"] == "count"), "times first, then counts");
    // Both workloads start after the recording's `sleep 1`.
    let text = schedlens(&["compare", &a.display().to_string(), &b.display().to_string(), "-o", &figure]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("what differs in time") && text.contains("hackbench: waiting"), "{text}");
}

#[test]
fn the_statistics_agree_with_scipy_on_the_same_csv() {
    let python = Command::new("python3").args(["-c", "import scipy, numpy"]).status();
    if !python.is_ok_and(|s| s.success()) {
        return skip(
            "the_statistics_agree_with_scipy_on_the_same_csv",
            "python3 with scipy is not installed (pip install scipy)",
        );
    }
    let out = dir("runs-scipy");
    std::fs::create_dir_all(&out).unwrap();
    let results = experiment::results::from_json(&common_results()).unwrap();
    runs::files::write_all(&out, &results, &[]).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scipy_check.py");
    let check = Command::new("python3").arg(&script).arg(&out).output().expect("python3");
    let report = String::from_utf8_lossy(&check.stdout).into_owned() + &String::from_utf8_lossy(&check.stderr);
    assert!(check.status.success(), "{report}");
    let _ = writeln!(std::io::stderr(), "{report}");
}

/// Results with three settings (6, 6 and 12 runs: exact and asymptotic Mann-Whitney, ties
/// in one), a failed run, and two metrics (one with ties, one constant).
fn common_results() -> String {
    let mut state = 12345u64;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut runs = Vec::new();
    let counts = [6, 6, 12];
    let mut order = 0;
    for (setting, &count) in counts.iter().enumerate() {
        for repetition in 0..count {
            order += 1;
            let mut wall = 1.0 + 0.2 * setting as f64 + 0.3 * next();
            if setting == 1 && repetition < 3 {
                wall = 1.25; // ties
            }
            let idle = (wall - 0.9) * 0.5 + 0.05 * next();
            let migrations = (10.0 * next()).floor();
            let ok = !(setting == 2 && repetition == 5);
            runs.push(serde_json::json!({"order": order, "setting": setting, "repetition": repetition + 1,
                "wall_s": if ok { wall } else { 99.0 }, "user_s": 0.5, "sys_s": 0.1, "exit": if ok { "exit 0" } else { "exit 1" },
                "ok": ok, "trace": null, "log": format!("logs/{order}.log"), "wall_from": "clock",
                "metrics": [idle, migrations, 0.0]}));
        }
    }
    serde_json::json!({
        "command": ["bench"], "repetitions": 12, "sleep_s": 0.0, "recorded": true,
        "knobs": [{"name": "kernel.x", "path": "/proc/sys/kernel/x", "original": "1"}],
        "settings": [{"values": ["1"], "shown": ["1"]}, {"values": ["2"], "shown": ["2"]}, {"values": ["3"], "shown": ["3"]}],
        "metrics": [{"key": "idle_while_waiting_s", "unit": "s", "phrase": "{} CPU time was lost to idle-while-waiting"},
                    {"key": "migrations", "unit": "count", "phrase": "{} migrations happened"},
                    {"key": "lost_events", "unit": "count", "phrase": "the kernel lost {} events"}],
        "runs": runs, "interrupted_by": null
    })
    .to_string()
}
