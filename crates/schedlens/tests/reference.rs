//! schedlens against the reference: on every real trace in testdata/traces, `dump --json`
//! must agree with `trace-cmd report -R -t` on every event and every loss, and
//! `stats --by task` with an independent per-task computation from trace-cmd's output.

mod common;

use common::schedlens;
use refcheck::TaskTotals;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "dat"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "expected the fixture corpus in {}", dir.display());
    files
}

#[test]
fn dump_json_agrees_with_trace_cmd_on_every_event() {
    for path in fixtures() {
        common::assert_dump_agrees_with_trace_cmd(&path);
    }
}

/// Per pid (tasks of a reused pid summed) switches and run time from `stats --by task`.
fn our_totals(path: &Path) -> BTreeMap<i32, TaskTotals> {
    let json: Value =
        serde_json::from_str(&schedlens(&["stats", "--by", "task", "--format", "json", &path.display().to_string()]))
            .expect("stats JSON");
    let mut totals: BTreeMap<i32, TaskTotals> = BTreeMap::new();
    for row in json.as_array().expect("array of rows") {
        let t = totals.entry(row["pid"].as_i64().unwrap() as i32).or_default();
        t.switches += row["switches"].as_u64().unwrap();
        t.runtime_ns += row["runtime_ns"].as_u64().unwrap();
    }
    totals
}

#[test]
fn stats_agree_with_an_independent_count_from_trace_cmd() {
    let mut compared = 0;
    for path in fixtures() {
        let reference = refcheck::report(&path).unwrap_or_else(|e| panic!("{e}"));
        let Ok(mut expected) = reference.task_totals() else {
            continue;
        };
        expected.remove(&0); // idle is not a task in the statistics
        expected.retain(|_, t| *t != TaskTotals::default());
        let ours = our_totals(&path);
        let differences: Vec<String> = expected
            .keys()
            .chain(ours.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter_map(|pid| {
                let (e, o) =
                    (expected.get(pid).copied().unwrap_or_default(), ours.get(pid).copied().unwrap_or_default());
                (e != o).then(|| format!("pid {pid}: trace-cmd {e:?}, schedlens {o:?}"))
            })
            .take(5)
            .collect();
        assert!(differences.is_empty(), "{}:\n{}", path.display(), differences.join("\n"));
        compared += 1;
    }
    assert!(compared >= 8, "only {compared} traces without lost events");
}
