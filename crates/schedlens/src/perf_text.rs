//! `dump` of a perf.data: each event in `perf script`'s layout (the task's comm as perf
//! knew it at that time, its pid, `[CPU]`, seconds with microseconds, `system:event:`),
//! with every field as `name=value` in its raw value (perf prints some through the
//! event's print format instead: `prev_state` as letters, `[ns]` units; the numbers are
//! the same), or as the JSON lines `dump --json` writes for trace.dat.

use crate::dump::{json_str, json_value};
use perfdata::{PerfData, TaskChange};
use std::collections::HashMap;
use tracedat::{Event, EventSource, Lost, Value};

/// Comm changes of each thread in time order, from the recording's COMM records.
struct Comms {
    initial: HashMap<i32, String>,
    changes: HashMap<i32, Vec<(u64, String)>>,
}

impl Comms {
    fn of(perf: &PerfData) -> Comms {
        let initial = perf.cmdlines().iter().map(|(pid, comm)| (pid, comm.to_string())).collect();
        let mut changes: HashMap<i32, Vec<(u64, String)>> = HashMap::new();
        for task in perf.tasks() {
            if let (Some(time), TaskChange::Comm { tid, comm, .. }) = (task.time, &task.what) {
                changes.entry(*tid).or_default().push((time, comm.clone()));
            }
        }
        for list in changes.values_mut() {
            list.sort_by_key(|&(time, _)| time);
        }
        Comms { initial, changes }
    }

    /// The comm of `tid` at `time` (`:TID` as perf shows an unknown one).
    fn at(&self, tid: i32, time: u64) -> String {
        let changed = self.changes.get(&tid).and_then(|list| {
            let later = list.partition_point(|&(t, _)| t <= time);
            later.checked_sub(1).map(|i| list[i].1.clone())
        });
        changed.or_else(|| self.initial.get(&tid).cloned()).unwrap_or_else(|| format!(":{tid}"))
    }
}

/// Writes a perf.data's events as text or JSON lines into `out`.
pub struct PerfPrinter {
    json: bool,
    comms: Comms,
    pub out: Vec<u8>,
    numbers: itoa::Buffer,
}

impl PerfPrinter {
    pub fn new(perf: &PerfData, json: bool) -> PerfPrinter {
        PerfPrinter { json, comms: Comms::of(perf), out: Vec::with_capacity(1 << 17), numbers: itoa::Buffer::new() }
    }

    /// A loss notice: `{"cpu":1,"lost":1204}`, or a line as trace-cmd writes one.
    pub fn lost(&mut self, lost: &Lost) {
        let count = lost.count.map_or_else(|| "unknown".to_string(), |n| n.to_string());
        if self.json {
            let count = lost.count.map_or_else(|| "null".to_string(), |n| n.to_string());
            self.out.extend_from_slice(format!("{{\"cpu\":{},\"lost\":{count}}}\n", lost.cpu.0).as_bytes());
        } else {
            self.out.extend_from_slice(format!("CPU:{} [LOST {count} EVENTS]\n", lost.cpu.0).as_bytes());
        }
    }

    pub fn event(&mut self, event: &Event<'_>) {
        if self.json {
            self.json_event(event);
        } else {
            self.text_event(event);
        }
    }

    fn json_event(&mut self, event: &Event<'_>) {
        let out = &mut self.out;
        out.extend_from_slice(format!("{{\"cpu\":{},\"ts\":{},", event.cpu.0, event.ts.0).as_bytes());
        let Some(format) = event.format else {
            out.extend_from_slice(
                format!("\"event\":null,\"id\":{},\"pid\":{},\"fields\":{{}}}}\n", event.id, event.pid().0).as_bytes(),
            );
            return;
        };
        out.extend_from_slice(b"\"event\":");
        json_str(out, &format.name);
        out.extend_from_slice(format!(",\"pid\":{},\"fields\":{{", event.pid().0).as_bytes());
        for (index, (field, value)) in event.fields().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            json_str(out, &field.name);
            out.push(b':');
            json_value(out, &mut self.numbers, value);
        }
        out.extend_from_slice(b"}}\n");
    }

    fn text_event(&mut self, event: &Event<'_>) {
        let pid = event.pid().0;
        let comm = self.comms.at(pid, event.ts.0);
        let (secs, micros) = (event.ts.0 / 1_000_000_000, event.ts.0 % 1_000_000_000 / 1000);
        let name =
            event.format.map_or_else(|| format!("(unknown id {})", event.id), |f| format!("{}:{}", f.system, f.name));
        let line = format!("{comm:>16} {pid:>5} [{:03}] {secs:>5}.{micros:06}: {name}:", event.cpu.0);
        self.out.extend_from_slice(line.as_bytes());
        for (field, value) in event.fields() {
            self.out.push(b' ');
            self.out.extend_from_slice(field.name.as_bytes());
            self.out.push(b'=');
            text_value(&mut self.out, value);
        }
        self.out.push(b'\n');
    }
}

/// A raw value as text: numbers in decimal, text as is, arrays as `[a,b]`.
fn text_value(out: &mut Vec<u8>, value: Option<Value<'_>>) {
    match value {
        None => out.extend_from_slice(b"?"),
        Some(Value::Str(text)) => out.extend_from_slice(text),
        Some(other) => {
            let mut json = Vec::new();
            json_value(&mut json, &mut itoa::Buffer::new(), Some(other));
            out.extend_from_slice(&json);
        }
    }
}
