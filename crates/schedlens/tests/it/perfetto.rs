//! Perfetto traces as input: a trace.dat exported to Perfetto and read back gives the same
//! `stats` and `check` JSON as the trace.dat itself, and damaged copies of an exported
//! trace (cut anywhere, bytes flipped, a packet length that overruns, an unknown wire
//! type) give exit 0, 1 or 3 with a message from every command, never a panic or a hang.

use crate::common::{fresh_dir, schedlens};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    refcheck::fixture(name)
}

fn exported(dir: &Path, name: &str) -> String {
    let out = dir.join(name.replace(".dat", ".pftrace")).display().to_string();
    schedlens(&["export", &fixture(name), "--format", "perfetto", "-o", &out]);
    out
}

/// `check --format json` without the trace's path.
fn check_json(path: &str) -> Value {
    let mut json: Value = serde_json::from_str(&schedlens(&["check", "--format", "json", path])).unwrap();
    json.as_object_mut().unwrap().remove("trace");
    json
}

#[test]
fn an_exported_trace_reads_back_to_the_same_stats_and_check() {
    let dir = fresh_dir("perfetto-round-trip");
    std::fs::create_dir_all(&dir).unwrap();
    // Real recordings (one with lost events, marked on the bundles), markers, fork/exec.
    for name in ["hackbench-v7zstd.dat", "lost-events-v7zstd.dat", "markers-v7zstd.dat", "scenario-forkexec-v7zstd.dat"]
    {
        let (dat, pftrace) = (fixture(name), exported(&dir, name));
        for by in ["command", "task", "cpu"] {
            let a = schedlens(&["stats", "--by", by, "--format", "json", &dat]);
            let b = schedlens(&["stats", "--by", by, "--format", "json", &pftrace]);
            assert!(a == b, "{name}: stats --by {by} differ:\n{a}\n{b}");
        }
        assert_eq!(check_json(&dat), check_json(&pftrace), "{name}: check JSON differs");
    }
}

#[test]
fn info_and_dump_describe_a_perfetto_trace() {
    let dir = fresh_dir("perfetto-info");
    std::fs::create_dir_all(&dir).unwrap();
    let pftrace = exported(&dir, "lost-events-v7zstd.dat");
    let info = schedlens(&["info", &pftrace]);
    assert!(info.contains("Perfetto trace"), "{info}");
    assert!(info.contains("7 bundles marked lost_events"), "{info}");
    assert!(info.contains("sched:sched_switch"), "{info}");
    let dat_events = schedlens(&["dump", "--json", &fixture("lost-events-v7zstd.dat")]);
    let dump = schedlens(&["dump", "--json", &pftrace]);
    let events = |text: &str| text.lines().filter(|l| l.contains("\"event\"")).count();
    assert_eq!(events(&dump), events(&dat_events), "every event of the trace.dat is dumped");
    assert_eq!(dump.lines().filter(|l| l.contains("\"lost\"")).count(), 7, "the losses");
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
