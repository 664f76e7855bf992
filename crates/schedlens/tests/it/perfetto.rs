//! Perfetto traces as input: a trace.dat exported to Perfetto (compact, and with
//! `--all-events`) and read back gives the same `stats` and `check` JSON as the trace.dat
//! itself, and damaged copies of an exported trace (cut anywhere, bytes flipped, a packet
//! length that overruns, an unknown wire type) give exit 0, 1 or 3 with a message from
//! every command, never a panic or a hang.

use crate::common::{fresh_dir, perf_fixtures, schedlens};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    refcheck::fixture(name)
}

fn exported(dir: &Path, name: &str) -> String {
    exported_from(&fixture(name), dir, name, &[])
}

/// `trace` exported to Perfetto in `dir` as `name` (with `.pftrace`), with `extra` options.
fn exported_from(trace: &str, dir: &Path, name: &str, extra: &[&str]) -> String {
    let file = format!("{}{}.pftrace", name.trim_end_matches(".dat").trim_end_matches(".data"), extra.concat());
    let out = dir.join(file).display().to_string();
    let mut args = vec!["export", trace, "--format", "perfetto", "-o", &out];
    args.extend_from_slice(extra);
    schedlens(&args);
    out
}

/// `check --format json` without the trace's path.
fn check_json(path: &str) -> Value {
    let mut json: Value = serde_json::from_str(&schedlens(&["check", "--format", "json", path])).unwrap();
    json.as_object_mut().unwrap().remove("trace");
    json
}

/// `stats` (by command, task and CPU) and `check` of `a` and `b` are the same JSON.
fn assert_same_reading(a: &str, b: &str, what: &str) {
    for by in ["command", "task", "cpu"] {
        let (left, right) = (stats_json(a, by), stats_json(b, by));
        assert!(left == right, "{what}: stats --by {by} differ:\n{left}\n{right}");
    }
    assert_eq!(check_json(a), check_json(b), "{what}: check JSON differs");
}

fn stats_json(path: &str, by: &str) -> String {
    schedlens(&["stats", "--by", by, "--format", "json", path])
}

#[test]
fn an_exported_trace_reads_back_to_the_same_stats_and_check() {
    let dir = fresh_dir("perfetto-round-trip");
    std::fs::create_dir_all(&dir).unwrap();
    // Real recordings (one with lost events, marked on the bundles; one with unrecorded
    // switches), markers, fork/exec: the compact file and the full one.
    for name in ["hackbench-v7zstd.dat", "lost-events-v7zstd.dat", "markers-v7zstd.dat", "scenario-forkexec-v7zstd.dat"]
    {
        let dat = fixture(name);
        assert_same_reading(&dat, &exported(&dir, name), &format!("{name} (compact)"));
        let full = exported_from(&dat, &dir, name, &["--all-events"]);
        assert_same_reading(&dat, &full, &format!("{name} (--all-events)"));
    }
}

/// The compact file and the full one read back to the same model, on every fixture
/// (trace.dat, perf.data, many-core and foreign traces; about 25 s).
#[test]
fn compact_matches_all_events_on_every_fixture() {
    let dir = fresh_dir("perfetto-compact-all");
    std::fs::create_dir_all(&dir).unwrap();
    let traces: Vec<String> =
        refcheck::fixtures().into_iter().chain(perf_fixtures()).map(|p| p.display().to_string()).collect();
    let mut compared = 0;
    for trace in &traces {
        if compact_matches_all_events(trace, &dir) {
            compared += 1;
        }
    }
    eprintln!("{compared} of {} fixtures compared (the others have no sched_switch)", traces.len());
    assert!(compared >= 40, "{compared} compared");
}

/// With a window or a task filter too: the window's end cuts a segment the file holds no
/// end of, and the file's first and last losses sit where they did.
#[test]
fn a_windowed_or_filtered_compact_file_reads_back_as_the_full_one() {
    let dir = fresh_dir("perfetto-compact-window");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["lost-events-v7zstd.dat", "hackbench-v7zstd.dat", "manycore/hackbench64-lost.dat"] {
        for scope in [&["--min", "0.2", "--max", "0.6"][..], &["--min", "0.05", "--max", "0.3"], &["--forked"]] {
            let sub = dir.join(format!("{}{}", name.replace('/', "-"), scope.concat()));
            std::fs::create_dir_all(&sub).unwrap();
            assert!(compact_matches_all_events_in(&fixture(name), &sub, scope), "{name} {scope:?}");
        }
    }
}

/// Exports `trace` both ways and compares what schedlens reads back; false when the
/// trace cannot be exported (no `sched_switch`).
fn compact_matches_all_events(trace: &str, dir: &Path) -> bool {
    compact_matches_all_events_in(trace, dir, &[])
}

/// As [`compact_matches_all_events`], both exports with the `scope` options.
fn compact_matches_all_events_in(trace: &str, dir: &Path, scope: &[&str]) -> bool {
    let name = Path::new(trace).file_name().unwrap().to_str().unwrap();
    let out = dir.join(format!("{name}.pftrace")).display().to_string();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["export", trace, "--format", "perfetto", "-o", &out])
        .args(scope)
        .output()
        .unwrap()
        .status;
    if status.code() == Some(1) {
        return false;
    }
    let full = exported_from(trace, dir, name, &[scope, &["--all-events"]].concat());
    assert_same_reading(&out, &full, &format!("{name}: compact vs --all-events"));
    let (compact_size, full_size) = (std::fs::metadata(&out).unwrap().len(), std::fs::metadata(&full).unwrap().len());
    assert!(compact_size < full_size, "{name}: compact {compact_size} bytes, full {full_size}");
    true
}

#[test]
fn info_and_dump_describe_a_perfetto_trace() {
    let dir = fresh_dir("perfetto-info");
    std::fs::create_dir_all(&dir).unwrap();
    let dat = fixture("lost-events-v7zstd.dat");
    let full = exported_from(&dat, &dir, "lost-events-v7zstd.dat", &["--all-events"]);
    let info = schedlens(&["info", &full]);
    assert!(info.contains("Perfetto trace"), "{info}");
    assert!(info.contains("7 bundles marked lost_events"), "{info}");
    assert!(info.contains("sched:sched_switch"), "{info}");
    let dat_events = schedlens(&["dump", "--json", &dat]);
    let dump = schedlens(&["dump", "--json", &full]);
    let events = |text: &str, kind: &str| text.lines().filter(|l| l.contains(kind)).count();
    assert_eq!(events(&dump, "\"event\""), events(&dat_events, "\"event\""), "every event of the trace.dat is dumped");
    assert_eq!(events(&dump, "\"lost\""), 7, "the losses");
    // The compact file: every switch, waking and wakeup, the losses; info counts the rows.
    let compact = exported(&dir, "lost-events-v7zstd.dat");
    let info = schedlens(&["info", &compact]);
    assert!(info.contains("7 bundles marked lost_events"), "{info}");
    assert!(info.contains("c.switch"), "{info}");
    let dump = schedlens(&["dump", "--json", &compact]);
    for kind in ["\"sched_switch\"", "\"sched_waking\"", "\"sched_wakeup\"", "\"lost\""] {
        assert_eq!(events(&dump, kind), events(&dat_events, kind), "{kind}");
    }
}

/// Damaged copies of a Perfetto trace: cut at the start, inside the first packets, in
/// the middle and near the end; 16 bytes flipped; the first packet's length made to
/// overrun the file; a key of wire type 3 (groups, which no Perfetto trace uses).
fn damaged_copies(path: &str, dir: &Path) -> Vec<PathBuf> {
    let bytes = std::fs::read(path).unwrap();
    let len = bytes.len();
    let mut copies = Vec::new();
    let mut write = |name: String, data: &[u8]| {
        let copy = dir.join(format!("{name}.pftrace"));
        std::fs::write(&copy, data).unwrap();
        copies.push(copy);
    };
    for cut in [1, 3, 40, len / 3, len / 2, len - 3] {
        write(format!("cut{cut}"), &bytes[..cut]);
    }
    for at in [2, len / 4, len / 2, len - 20] {
        let mut flipped = bytes.clone();
        flipped[at..at + 16].iter_mut().for_each(|b| *b ^= 0xff);
        write(format!("flip{at}"), &flipped);
    }
    let mut overrun = bytes.clone();
    overrun.splice(1..2, [0xff, 0xff, 0xff, 0xff, 0x0f]);
    write("overrun".into(), &overrun);
    let mut group = bytes.clone();
    group[len / 2] = 0x0b;
    write("group".into(), &group);
    copies
}

#[test]
fn every_command_survives_damaged_copies_of_a_perfetto_trace() {
    let dir = fresh_dir("damaged-perfetto");
    std::fs::create_dir_all(&dir).unwrap();
    let pftrace = exported(&dir, "markers-v7zstd.dat");
    let copies = damaged_copies(&pftrace, &dir);
    let verdicts = crate::robust::run_all(&copies, &dir);
    let problems = &verdicts.problems;
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n\n"));
    eprintln!("{} damaged Perfetto copies; runs by exit code: {:?}", copies.len(), verdicts.codes);
    let partial = verdicts.codes.get(&Some(3)).copied().unwrap_or(0);
    assert!(partial > 0, "no damaged copy reached past the reader: {:?}", verdicts.codes);
}

#[test]
fn a_cut_trace_names_the_file_the_packet_and_the_byte() {
    let dir = fresh_dir("perfetto-cut");
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(exported(&dir, "lost-events-v7zstd.dat")).unwrap();
    let cut = dir.join("cut.pftrace");
    std::fs::write(&cut, &bytes[..bytes.len() * 3 / 4]).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["stats", cut.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "a partial result: {stderr}");
    assert!(stderr.contains("cut.pftrace: Perfetto trace packet "), "{stderr}");
    assert!(stderr.contains(" at byte "), "{stderr}");
}
