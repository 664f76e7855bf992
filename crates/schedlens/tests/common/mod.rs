//! Shared by the tests that compare schedlens with the reference decoder: running the
//! binary, and checking that `dump --json` agrees with `trace-cmd report -R -t` on every
//! event and every loss of a trace.

// Each test binary uses only part of these helpers.
#![allow(dead_code)]

use refcheck::{FieldValue, Line};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

pub fn schedlens(args: &[&str]) -> String {
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

/// Panics, showing the first differences, unless `dump --json` and `trace-cmd report -R -t`
/// show the same events and losses of `path`, in the same order; returns their number.
pub fn assert_dump_agrees_with_trace_cmd(path: &Path) -> usize {
    let name = path.display().to_string();
    let reference = refcheck::report(path).unwrap_or_else(|e| panic!("{e}"));
    let ours: Vec<Value> =
        schedlens(&["dump", "--json", &name]).lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(ours.len(), reference.lines.len(), "{name}: number of events and losses");
    let differences: Vec<String> =
        ours.iter().zip(&reference.lines).filter_map(|(o, r)| compare(o, r).err()).take(5).collect();
    assert!(differences.is_empty(), "{name}:\n{}", differences.join("\n"));
    ours.len()
}
