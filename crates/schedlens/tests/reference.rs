//! schedlens against the reference: on every real trace in testdata/traces, `dump --json`
//! must agree with `trace-cmd report -R -t` on every event and every loss, and
//! `stats --by task` with an independent per-task computation from trace-cmd's output.

use refcheck::{FieldValue, Line, TaskTotals};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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

fn schedlens(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens")).args(args).output().expect("run schedlens");
    assert!(out.status.success(), "schedlens {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn field_value(value: &Value) -> FieldValue {
    match value {
        Value::Number(n) => FieldValue::Int(n.as_i64().map_or_else(|| n.as_u64().unwrap() as i128, |v| v as i128)),
        // trace-cmd drops one final newline of a string when it prints the event.
        Value::String(s) => FieldValue::Str(s.strip_suffix('\n').unwrap_or(s).to_string()),
        Value::Array(items) => FieldValue::Array(items.iter().map(|v| v.as_i64().unwrap() as i128).collect()),
        _ => FieldValue::Any,
    }
}

/// Compares one of our JSON lines with one reference line; `Err` describes the difference.
fn compare(ours: &Value, reference: &Line) -> Result<(), String> {
    let buffer = ours.get("buffer").and_then(Value::as_str).map(str::to_string);
    match reference {
        Line::Lost { buffer: b, cpu, count } => {
            let same =
                ours.get("lost").is_some() && ours["cpu"] == *cpu && ours["lost"].as_u64() == *count && buffer == *b;
            if same { Ok(()) } else { Err(format!("lost line differs: {ours} vs cpu {cpu} count {count:?}")) }
        }
        Line::Event(e) => {
            let header_same = ours["cpu"] == e.cpu
                && ours["ts"] == e.ts_ns
                && ours["event"] == e.event.as_str()
                && ours["pid"] == e.pid
                && buffer == e.buffer;
            if !header_same {
                return Err(format!("event differs: {ours} vs {e:?}"));
            }
            let fields: Vec<(String, FieldValue)> = ours["fields"]
                .as_object()
                .expect("fields object")
                .iter()
                .map(|(name, value)| (name.clone(), field_value(value)))
                .collect();
            refcheck::match_fields(&e.payload, &fields).map_err(|why| format!("{why}: {ours} vs {:?}", e.payload))
        }
    }
}

#[test]
fn dump_json_agrees_with_trace_cmd_on_every_event() {
    for path in fixtures() {
        let name = path.display().to_string();
        let reference = refcheck::report(&path).unwrap_or_else(|e| panic!("{e}"));
        let ours: Vec<Value> = schedlens(&["dump", "--json", &name])
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON line"))
            .collect();
        assert_eq!(ours.len(), reference.lines.len(), "{name}: number of events and losses");
        let differences: Vec<String> =
            ours.iter().zip(&reference.lines).filter_map(|(o, r)| compare(o, r).err()).take(5).collect();
        assert!(differences.is_empty(), "{name}:\n{}", differences.join("\n"));
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
