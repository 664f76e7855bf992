//! `latency --perf` and `--per-switch` against perf's own output on the perf.data
//! fixtures: `perf sched latency -p` and `perf sched timehist` were run on them once
//! (perf 6.1.187, see testdata/perf/README.md) and their outputs committed beside them,
//! so this test needs no perf. Every task's columns must equal perf's to its printed
//! precision, every switch's wait time, scheduling delay and run time timehist's.

use crate::common::{perf_fixtures, schedlens};
use std::collections::BTreeMap;
use std::path::Path;

/// A reference file's lines after its first (the command that made it).
fn reference(fixture: &Path, kind: &str) -> Vec<String> {
    let path = fixture.with_extension(format!("{kind}.txt"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(text.starts_with("# perf version 6.1.187"), "{}: names perf's version first", path.display());
    text.lines().skip(1).map(str::to_string).collect()
}

/// perf's milliseconds with three decimals, truncated to microseconds where perf
/// truncates (timehist) or rounded (latency's `%.3f`).
fn ms_rounded(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn ms_truncated(ns: u64) -> String {
    format!("{}.{:03}", ns / 1_000_000, ns % 1_000_000 / 1000)
}

fn usec_time(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

/// `perf sched latency -p`'s rows: pid → runtime, switches, avg, max, max start, max end.
fn perf_latency(lines: &[String]) -> BTreeMap<i32, Vec<String>> {
    let mut rows = BTreeMap::new();
    for line in lines {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() != 7 || !cells[3].starts_with("avg:") {
            continue;
        }
        let (_, pid) = cells[0].rsplit_once(':').expect("comm:pid");
        let strip = |cell: &str, prefix: &str, suffix: &str| {
            cell.trim_start_matches(prefix).trim_end_matches(suffix).trim().to_string()
        };
        rows.insert(
            pid.parse().expect("a pid"),
            vec![
                strip(cells[1], "", "ms"),
                cells[2].to_string(),
                strip(cells[3], "avg:", "ms"),
                strip(cells[4], "max:", "ms"),
                strip(cells[5], "max start:", "s"),
                strip(cells[6], "max end:", "s"),
            ],
        );
    }
    rows
}

#[test]
fn latency_perf_reproduces_perf_sched_latency_per_task() {
    let mut compared = 0;
    for fixture in perf_fixtures().iter().filter(|f| f.with_extension("latency.txt").exists()) {
        let expected = perf_latency(&reference(fixture, "latency"));
        let csv = schedlens(&["latency", fixture.to_str().unwrap(), "--perf", "--format", "csv"]);
        let mut ours = BTreeMap::new();
        for line in csv.lines().skip(1) {
            let cells: Vec<&str> = line.rsplitn(9, ',').collect();
            let n = |i: usize| cells[i].parse::<u64>().expect("a number");
            // rsplitn: max_end, max_start, max, avg, switches, switch_runtime, runtime, pid, comm.
            let row = vec![
                ms_rounded(n(6)),
                n(4).to_string(),
                ms_rounded(n(3)),
                ms_rounded(n(2)),
                usec_time(n(1)),
                usec_time(n(0)),
            ];
            ours.insert(cells[7].parse::<i32>().expect("a pid"), row);
        }
        assert!(!expected.is_empty(), "{}", fixture.display());
        assert_eq!(ours, expected, "{}", fixture.display());
        compared += expected.len();
    }
    assert!(compared >= 200, "{compared} tasks compared");
}

#[test]
fn per_switch_times_equal_perf_sched_timehist() {
    let mut compared = 0;
    for fixture in perf_fixtures().iter().filter(|f| f.with_extension("timehist.txt").exists()) {
        // time, [cpu], task..., wait, delay, run.
        let expected: Vec<Vec<String>> = reference(fixture, "timehist")
            .iter()
            .map(|line| line.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .filter(|words| words.len() >= 6 && words[1].starts_with('[') && words[0].contains('.'))
            .collect();
        let csv = schedlens(&["latency", fixture.to_str().unwrap(), "--per-switch", "--format", "csv"]);
        let ours: Vec<Vec<u64>> =
            csv.lines().skip(1).map(|l| l.split(',').map(|c| c.parse().expect("a number")).collect()).collect();
        assert_eq!(ours.len(), expected.len(), "{}: one row per switch", fixture.display());
        for (theirs, ours) in expected.iter().zip(&ours) {
            let n = theirs.len();
            let perf_row = (theirs[0].clone(), theirs[1].clone(), &theirs[n - 3..]);
            let our_row = (
                usec_time(ours[0]),
                format!("[{:04}]", ours[1]),
                &[ms_truncated(ours[3]), ms_truncated(ours[4]), ms_truncated(ours[5])][..],
            );
            // perf names the row's task by the sample's thread id; where perf recorded -1
            // (sched-lost.data, see its README) it has no history of that task.
            if theirs[2].starts_with(":-1[-1/") {
                assert_eq!((&perf_row.0, &perf_row.1), (&our_row.0, &our_row.1));
                continue;
            }
            assert_eq!(perf_row, our_row, "{}", fixture.display());
            compared += 1;
        }
    }
    assert!(compared >= 1000, "{compared} switches compared");
}

/// Per pid (tasks of a reused pid together) wakeup latencies from `latency --by task`.
fn our_wakeup_latencies(path: &Path) -> BTreeMap<i32, refcheck::WakeupLatency> {
    let json: serde_json::Value =
        serde_json::from_str(&schedlens(&["latency", "--by", "task", "--format", "json", path.to_str().unwrap()]))
            .expect("latency JSON");
    let mut ours: BTreeMap<i32, refcheck::WakeupLatency> = BTreeMap::new();
    for row in json["rows"].as_array().expect("rows") {
        let wakeups = &row["delays"]["wakeups"];
        if wakeups["count"].as_u64() == Some(0) {
            continue;
        }
        let latency = ours.entry(row["pid"].as_i64().unwrap() as i32).or_default();
        latency.count += wakeups["count"].as_u64().unwrap();
        latency.total_ns += wakeups["total_ns"].as_u64().unwrap();
        latency.max_ns = latency.max_ns.max(wakeups["max"]["latency_ns"].as_u64().unwrap());
    }
    ours
}

#[test]
fn wakeup_latency_agrees_with_an_independent_count_from_trace_cmd() {
    let names = std::env::var("SCHEDLENS_LATENCY_FIXTURES").ok();
    let chosen =
        ["hackbench-v7zstd.dat", "barrier-v7zstd.dat", "scenario-forkexec-v7zstd.dat", "spin-unpinned-record.dat"];
    let mut compared = 0;
    for path in refcheck::fixtures() {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if names.as_deref().map_or(!chosen.contains(&name.as_str()), |n| n != "all" && !n.split(',').any(|x| x == name))
        {
            continue;
        }
        let reference = refcheck::report(&path).unwrap_or_else(|e| panic!("{e}"));
        let Ok(expected) = reference.wakeup_latencies() else { continue };
        if !reference.events().any(|e| e.event == "sched_switch") {
            continue;
        }
        // The reference knows nothing of switches the kernel did not record: the tasks
        // around one are left out.
        let unsure: std::collections::BTreeSet<i32> = refcheck::switch_chain_breaks(reference.events())
            .iter()
            .flat_map(|b| [b.expected_prev, b.prev_pid])
            .collect();
        let mut ours = our_wakeup_latencies(&path);
        let mut expected = expected;
        ours.retain(|pid, _| !unsure.contains(pid));
        expected.retain(|pid, _| !unsure.contains(pid));
        eprintln!("{name}: {} tasks, {} left out", expected.len(), unsure.len());
        let differences = crate::common::per_pid_differences(&expected, &ours);
        assert!(differences.is_empty(), "{}:\n{}", path.display(), differences.join("\n"));
        compared += 1;
    }
    assert!(compared >= 1, "no trace compared");
}

#[test]
fn every_tasks_thread_states_sum_to_the_window_on_every_fixture() {
    let mut compared = 0;
    for path in refcheck::local_fixtures() {
        let path = path.to_str().unwrap();
        let cpus: serde_json::Value =
            serde_json::from_str(&schedlens(&["stats", path, "--by", "cpu", "--format", "json"])).expect("JSON");
        let Some(cpu) = cpus.as_array().and_then(|c| c.first()) else { continue };
        let window: u64 = ["busy_ns", "idle_ns", "uncertain_ns"].iter().map(|k| cpu[k].as_u64().unwrap()).sum();
        let rows: serde_json::Value =
            serde_json::from_str(&schedlens(&["stats", path, "--by", "task", "--states", "--format", "json"]))
                .expect("JSON");
        for row in rows.as_array().unwrap() {
            let states = row["states"].as_object().expect("states under --states");
            let total: u64 = states.values().map(|v| v.as_u64().unwrap()).sum();
            assert_eq!(total, window, "{path}: pid {} {}", row["pid"], row["comm"]);
            compared += 1;
        }
    }
    assert!(compared > 100, "{compared} tasks");
}

#[test]
fn latency_of_one_task_names_who_held_its_cpu() {
    let trace = refcheck::fixture("hackbench-v7zstd.dat");
    let text = schedlens(&["latency", &trace, "--task", "hackbench", "--top", "3"]);
    assert!(text.starts_with("tasks: 81 (pid 9958, "), "{text}");
    let held = text.split("who held the CPU while it waited").nth(1).expect("antagonists");
    assert_eq!(held.lines().skip(1).count(), 3, "{held}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["latency", &trace, "--task", "no-such-task"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
