//! `dump` of a perf.data: each event in `perf script`'s layout (the task's comm as perf
//! knew it at that time, its pid, `[CPU]`, seconds with microseconds, `system:event:`),
//! with every field as `name=value` in its raw value (perf prints some through the
//! event's print format instead: `prev_state` as letters, `[ns]` units; the numbers are
//! the same), or as the JSON lines `dump --json` writes for trace.dat.

use crate::dump::json_value;
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

    /// Names known from the start only (a Perfetto trace's descriptors).
    fn of_names(cmdlines: &tracedat::Cmdlines) -> Comms {
        let initial = cmdlines.iter().map(|(pid, comm)| (pid, comm.to_string())).collect();
        Comms { initial, changes: HashMap::new() }
    }

    /// The comm of `tid` at `time`, if perf knew it.
    fn at(&self, tid: i32, time: u64) -> Option<&str> {
        let changed = self.changes.get(&tid).and_then(|list| {
            let later = list.partition_point(|&(t, _)| t <= time);
            later.checked_sub(1).map(|i| list[i].1.as_str())
        });
        changed.or_else(|| self.initial.get(&tid).map(String::as_str))
    }
}

/// Writes a perf.data's events as text or JSON lines into `out`.
pub struct PerfPrinter {
    json: bool,
    comms: Comms,
    keys: Keys,
    pub out: Vec<u8>,
    numbers: itoa::Buffer,
}

impl PerfPrinter {
    pub fn new(perf: &PerfData, json: bool) -> PerfPrinter {
        PerfPrinter {
            json,
            comms: Comms::of(perf),
            keys: Keys::default(),
            out: Vec::with_capacity(1 << 17),
            numbers: itoa::Buffer::new(),
        }
    }

    /// A printer for a recording whose names are known from its start only.
    pub fn with_names(cmdlines: &tracedat::Cmdlines, json: bool) -> PerfPrinter {
        PerfPrinter {
            json,
            comms: Comms::of_names(cmdlines),
            keys: Keys::default(),
            out: Vec::with_capacity(1 << 17),
            numbers: itoa::Buffer::new(),
        }
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
        let (out, numbers) = (&mut self.out, &mut self.numbers);
        out.extend_from_slice(b"{\"cpu\":");
        out.extend_from_slice(numbers.format(event.cpu.0).as_bytes());
        out.extend_from_slice(b",\"ts\":");
        out.extend_from_slice(numbers.format(event.ts.0).as_bytes());
        let Some(format) = event.format else {
            out.extend_from_slice(b",\"event\":null,\"id\":");
            out.extend_from_slice(numbers.format(event.id).as_bytes());
            out.extend_from_slice(b",\"pid\":");
            out.extend_from_slice(numbers.format(event.pid().0).as_bytes());
            out.extend_from_slice(b",\"fields\":{}}\n");
            return;
        };
        let keys = self.keys.of(format);
        out.extend_from_slice(&keys.event);
        out.extend_from_slice(b",\"pid\":");
        out.extend_from_slice(numbers.format(event.pid().0).as_bytes());
        out.extend_from_slice(b",\"fields\":{");
        for (index, (_, value)) in event.fields().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&keys.fields[index]);
            json_value(out, numbers, value);
        }
        out.extend_from_slice(b"}}\n");
    }

    /// `  COMM   PID [CPU] SECS.MICROS: SYSTEM:EVENT: field=value ...`, written piece by
    /// piece (no allocation per event).
    fn text_event(&mut self, event: &Event<'_>) {
        let (out, numbers) = (&mut self.out, &mut self.numbers);
        let pid = event.pid().0;
        match self.comms.at(pid, event.ts.0) {
            Some(comm) => padded(out, comm.as_bytes(), 16),
            None => padded(out, format!(":{pid}").as_bytes(), 16),
        }
        out.push(b' ');
        padded(out, numbers.format(pid).as_bytes(), 5);
        out.extend_from_slice(b" [");
        zero_padded(out, numbers.format(event.cpu.0).as_bytes(), 3);
        out.extend_from_slice(b"] ");
        padded(out, numbers.format(event.ts.0 / 1_000_000_000).as_bytes(), 5);
        out.push(b'.');
        zero_padded(out, numbers.format(event.ts.0 % 1_000_000_000 / 1000).as_bytes(), 6);
        out.extend_from_slice(b": ");
        match event.format {
            Some(format) => {
                out.extend_from_slice(format.system.as_bytes());
                out.push(b':');
                out.extend_from_slice(format.name.as_bytes());
            }
            None => out.extend_from_slice(format!("(unknown id {})", event.id).as_bytes()),
        }
        out.push(b':');
        for (field, value) in event.fields() {
            out.push(b' ');
            out.extend_from_slice(field.name.as_bytes());
            out.push(b'=');
            match value {
                None => out.push(b'?'),
                Some(Value::Str(text)) => out.extend_from_slice(text),
                Some(Value::Unsigned(v)) => out.extend_from_slice(numbers.format(v).as_bytes()),
                Some(Value::Signed(v)) => out.extend_from_slice(numbers.format(v).as_bytes()),
                other => json_value(out, numbers, other),
            }
        }
        out.push(b'\n');
    }
}

/// `text` right-aligned in `width` columns.
fn padded(out: &mut Vec<u8>, text: &[u8], width: usize) {
    out.resize(out.len() + width.saturating_sub(text.len()), b' ');
    out.extend_from_slice(text);
}

/// Digits with leading zeros to `width`.
fn zero_padded(out: &mut Vec<u8>, digits: &[u8], width: usize) {
    out.resize(out.len() + width.saturating_sub(digits.len()), b'0');
    out.extend_from_slice(digits);
}

/// Each format's `"event":"NAME"` and fields' `"NAME":`, escaped once.
#[derive(Default)]
struct Keys {
    by_id: HashMap<u32, FormatKeys>,
}

struct FormatKeys {
    event: Vec<u8>,
    fields: Vec<Vec<u8>>,
}

impl Keys {
    fn of(&mut self, format: &tracedat::format::EventFormat) -> &FormatKeys {
        self.by_id.entry(format.id).or_insert_with(|| {
            let (event, fields) = crate::dump::json_keys(format, b",\"event\":");
            FormatKeys { event, fields }
        })
    }
}
