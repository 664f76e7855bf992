//! Shared by the CLI tests: running the binary, a fresh scratch directory, whether this
//! machine can record a hackbench run, and checking that `dump --json` agrees with
//! `trace-cmd report -R -t` on every event and every loss of a trace.

// Each test binary uses only part of these helpers.
#![allow(dead_code)]

use refcheck::{FieldValue, Line};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tracedat::format::{Element, FieldKind};

/// Tests that trace through tracefs (record, watch, runs --record, trace-cmd record) take
/// turns: there is one tracefs, and a recorder changing buffer sizes or turning tracing
/// off under another one empties that one's trace.
pub static TRACEFS_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The standard output of a successful run, as bytes.
pub fn schedlens_bytes(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens")).args(args).output().expect("run schedlens");
    assert!(out.status.success(), "schedlens {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

pub fn schedlens(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens")).args(args).output().expect("run schedlens");
    assert!(out.status.success(), "schedlens {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// An empty directory of this name under the tests' scratch space.
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Why `schedlens record` of a hackbench run cannot work here (root, tracefs and
/// hackbench are needed), if it cannot.
pub fn recording_unavailable() -> Option<&'static str> {
    let hackbench = Command::new("hackbench").arg("--help").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if !is_root() {
        Some("recording needs root")
    } else if !Path::new("/sys/kernel/tracing").is_dir() {
        Some("no tracefs")
    } else if hackbench.is_err() {
        Some("hackbench is not installed (apt-get install rt-tests)")
    } else {
        None
    }
}

fn field_value(value: &Value) -> FieldValue {
    match value {
        Value::Number(n) => FieldValue::Int(n.as_i64().map_or_else(|| n.as_u64().unwrap() as i128, |v| v as i128)),
        // trace-cmd drops one final newline of a string when it prints the event.
        Value::String(s) => FieldValue::Str(s.strip_suffix('\n').unwrap_or(s).to_string()),
        Value::Array(items) => FieldValue::Array(
            items
                .iter()
                .map(|v| v.as_i64().map_or_else(|| v.as_u64().expect("a number") as i128, i128::from))
                .collect(),
        ),
        _ => FieldValue::Any,
    }
}

/// Per event name, the fields trace-cmd shows only in part (zero-size trailing arrays of
/// numbers, arrays counted by another field), with their element size.
type PartlyShown = BTreeMap<String, BTreeMap<String, u8>>;

fn partly_shown(path: &Path) -> PartlyShown {
    let trace = tracedat::Trace::open(path).expect("open the trace");
    let mut out = PartlyShown::new();
    for format in trace.formats().iter() {
        for field in &format.fields {
            let counted = field.kind == FieldKind::StaticArray && (field.size == 0 || field.count_field.is_some());
            if let (true, Element::Int { size, .. }) = (counted, field.element) {
                out.entry(format.name.clone()).or_default().insert(field.name.clone(), size);
            }
        }
    }
    out
}

/// Compares one of our JSON lines with one reference line; `Err` describes the difference.
/// Fields trace-cmd shows as symbols are compared through the name in `"symbols"`.
fn compare(ours: &Value, reference: &Line, partly: &PartlyShown) -> Result<(), String> {
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
            let symbols = ours.get("symbols").and_then(Value::as_object);
            let partial = partly.get(&e.event);
            let fields: Vec<(String, FieldValue)> = ours["fields"]
                .as_object()
                .expect("fields object")
                .iter()
                .map(|(name, value)| {
                    let expected = match (symbols.and_then(|s| s.get(name)), partial.and_then(|p| p.get(name))) {
                        (Some(symbol), _) => FieldValue::Str(symbol.as_str().expect("symbol name").to_string()),
                        (None, Some(&size)) => match field_value(value) {
                            FieldValue::Array(values) => FieldValue::ArrayPrefix { size, values },
                            other => other,
                        },
                        (None, None) => field_value(value),
                    };
                    (name.clone(), expected)
                })
                .collect();
            refcheck::match_fields(&e.payload, &fields).map_err(|why| format!("{why}: {ours} vs {:?}", e.payload))
        }
    }
}

/// Panics, showing the first differences, unless `dump --json` and `trace-cmd report -R -t`
/// show the same events and losses of `path`, in the same order; returns their number.
pub fn assert_dump_agrees_with_trace_cmd(path: &Path) -> usize {
    let name = path.display().to_string();
    let reference = refcheck::report(path).unwrap_or_else(|e| panic!("{e}"));
    let ours: Vec<Value> =
        schedlens(&["dump", "--json", &name]).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(ours.len(), reference.lines.len(), "{name}: number of events and losses");
    let partly = partly_shown(path);
    let differences: Vec<String> =
        ours.iter().zip(&reference.lines).filter_map(|(o, r)| compare(o, r, &partly).err()).take(5).collect();
    assert!(differences.is_empty(), "{name}:\n{}", differences.join("\n"));
    ours.len()
}

/// The perf.data fixtures (testdata/perf), in name order.
pub fn perf_fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/perf");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    files.sort();
    files
}

/// Where trace-cmd's per-pid figures (`expected`) and schedlens's (`ours`) differ: the
/// first five pids, each said in a line (a pid missing on one side counts as zeros).
pub fn per_pid_differences<V: Copy + Default + PartialEq + std::fmt::Debug>(
    expected: &BTreeMap<i32, V>,
    ours: &BTreeMap<i32, V>,
) -> Vec<String> {
    expected
        .keys()
        .chain(ours.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter_map(|pid| {
            let (e, o) = (expected.get(pid).copied().unwrap_or_default(), ours.get(pid).copied().unwrap_or_default());
            (e != o).then(|| format!("pid {pid}: trace-cmd {e:?}, schedlens {o:?}"))
        })
        .take(5)
        .collect()
}
