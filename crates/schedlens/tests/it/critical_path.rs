//! `schedlens critical-path` on real recordings: a barrier pinned to one CPU of two waits
//! for pinning, not the scheduler; two unpinned spinners on two CPUs cost the scheduler
//! next to nothing; the 64-thread barrier on 64 CPUs shows the scheduler share that
//! `check`'s idle-while-waiting implies. The JSON's parts always sum to the wall time.

use crate::common::schedlens;
use refcheck::fixture;
use serde_json::Value;

fn path_of(name: &str) -> Value {
    let trace = fixture(name);
    let json = schedlens(&["critical-path", &trace, "--format", "json", "--top", "3"]);
    let document: Value = serde_json::from_str(&json).unwrap();
    let parts = &document["breakdown"];
    let sum: u64 = parts.as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(sum, document["wall_ns"].as_u64().unwrap(), "{name}: the parts sum to the wall time");
    document
}

fn share(document: &Value, part: &str) -> f64 {
    document["breakdown"][part].as_f64().unwrap() / document["wall_ns"].as_f64().unwrap()
}

#[test]
fn a_barrier_pinned_to_one_cpu_waits_for_pinning_not_the_scheduler() {
    // 0.16 s: 34% running, 61% runnable while only the forbidden CPU idled, the
    // scheduler's share 0.02%.
    let path = path_of("barrier-pinned-record.dat");
    assert_eq!(path["affinity"], "recorded");
    assert!(share(&path, "pinning_ns") > 0.5, "{path}");
    assert!(share(&path, "scheduler_ns") < 0.01, "{path}");
}

#[test]
fn two_unpinned_spinners_cost_the_scheduler_next_to_nothing() {
    // 0.30 s: 98% running, the scheduler's share 0.01%.
    let path = path_of("spin-unpinned-record.dat");
    assert!(share(&path, "running_ns") > 0.9, "{path}");
    assert!(share(&path, "scheduler_ns") < 0.01, "{path}");
}

#[test]
fn the_64_thread_barrier_shows_the_idle_cores_check_finds() {
    // check: a task waited while a core idled 22.6% of the window; on the critical path
    // (13.2 s) the scheduler's share is 28%: the barrier's stragglers, woken late onto
    // idle CPUs (one waking took 140 ms to reach its idle target).
    let path = path_of("manycore/barrier64.dat");
    let scheduler = share(&path, "scheduler_ns");
    assert!((0.2..0.35).contains(&scheduler), "{scheduler}");
    assert!(share(&path, "unknown_ns") < 0.05, "{path}");
    assert_eq!(path["top"].as_array().unwrap().len(), 3);
    // The path starts with the recording's initial sleep and ends with the command.
    let hops = path["hops"].as_array().unwrap();
    assert_eq!(hops.last().unwrap()["pid"], path["pid"]);
}

#[test]
fn the_text_opens_with_the_sentence_to_quote() {
    let trace = fixture("barrier-unpinned-record.dat");
    let text = schedlens(&["critical-path", &trace]);
    let first = text.lines().next().unwrap();
    // Under 10 s of wall time the parts are said in milliseconds: none the share counts
    // reads as zero.
    assert!(first.starts_with("of the 103.8 ms, 49.6 ms running, 8.2 ms runnable while a core idled"), "{first}");
    // The share stands on the known time: 12.1 ms of the path is unknown here.
    assert!(first.ends_with(", 12.1 ms unknown: the scheduler cost at most 9% of the 91.7 ms known"), "{first}");
}

#[test]
fn a_synthetic_pipeline_follows_every_hop_and_finds_the_truth() {
    let dir = crate::common::fresh_dir("critical-path-synth");
    std::fs::create_dir_all(&dir).unwrap();
    let (trace, truth) = (dir.join("pipeline.dat"), dir.join("pipeline.json"));
    let (trace, truth) = (trace.display().to_string(), truth.display().to_string());
    let args = ["synth", "-o", &trace, "--truth", &truth, "--workload", "pipeline", "--seconds", "0.05"];
    schedlens(&args);
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    let json = schedlens(&["critical-path", &trace, "--format", "json"]);
    let path: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(path["target"], "command");
    assert_eq!(path["comm"], "pipeline");
    let ours = path["breakdown"]["scheduler_ns"].as_u64().unwrap();
    let expected = truth["critical_path"]["scheduler_ns"].as_u64().unwrap();
    assert!(ours.abs_diff(expected) * 100 <= path["wall_ns"].as_u64().unwrap(), "{ours} vs {expected}");
    // Every stage's turn is a hop: 8 tasks, a token every 100-150 µs.
    let hops = path["hops"].as_array().unwrap();
    assert!(hops.len() > 300, "{} hops", hops.len());
    let pids: std::collections::BTreeSet<i64> = hops.iter().map(|h| h["pid"].as_i64().unwrap()).collect();
    assert_eq!(pids.len(), 9, "the shell and its 8 stages: {pids:?}");
}

#[test]
fn a_recorded_pipeline_follows_the_token_round_the_ring() {
    // `ring 4 100 100000`: a token round 4 threads through pipes, 400 passes in 0.1 s.
    let path = path_of("token-ring-record.dat");
    let hops = path["hops"].as_array().unwrap();
    // The command's own thread (it started the threads and joins them) ends the path.
    assert_eq!(hops.last().unwrap()["pid"], path["pid"]);
    let threads = hops.iter().filter(|h| h["comm"] == "ring" && h["pid"] != path["pid"]);
    let ring: Vec<i64> = threads.map(|h| h["pid"].as_i64().unwrap()).collect();
    // Each thread on the path is followed by the same thread every time: the ring's order.
    let mut next = std::collections::BTreeMap::new();
    for pair in ring.windows(2) {
        assert_eq!(*next.entry(pair[0]).or_insert(pair[1]), pair[1], "{ring:?}");
    }
    assert_eq!(next.len(), 4, "every thread is on the path: {next:?}");
    // Passes to a thread still runnable from its own turn (the machine was compiling
    // meanwhile) are no hop: it waited for a CPU, not for the token.
    assert!(ring.len() >= 200, "{} hops", ring.len());
    let before: Vec<&str> =
        hops.iter().take_while(|h| h["comm"] != "ring").map(|h| h["comm"].as_str().unwrap()).collect();
    assert_eq!(before, ["sleep", "sh"], "the path starts at the initial sleep's end");
}
