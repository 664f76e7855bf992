//! Raw trace.dat events as Perfetto ftrace events, grouped in per-CPU bundles as
//! Perfetto's own recorder writes them. Events Perfetto knows (the scheduler's, task
//! renames, trace markers) get their own messages, so its UI draws CPU tracks, thread
//! states and wakeups from them; every other event is a `GenericFtraceEvent` carrying all
//! its fields. Each field is resolved once per event format, and every event is written
//! straight into its bundle, in place (one buffer per CPU, no allocation per event).

use super::proto::{self, KNOWN_EVENTS, Wire};
use crate::protobuf;
use std::io::{self, Write};
use tracedat::format::{EventFormat, Field};
use tracedat::{Event, FieldRef, Formats, Value};

/// A bundle is closed when its events reach this many bytes.
const BUNDLE_BYTES: usize = 32 * 1024;
/// Closed bundles are written out when they reach this many bytes.
const WRITE_BYTES: usize = 1 << 20;

enum Access {
    Int(FieldRef),
    Text(Field),
}

/// How to write one event format.
enum Plan {
    Known { tag: u32, fields: Vec<(u32, Access)> },
    Generic { name: String, fields: Vec<Field> },
}

/// How every event format of a trace is written, shared by the CPUs' encoders.
pub struct Plans {
    plans: Vec<Option<Plan>>,
    common_flags: Option<FieldRef>,
}

impl Plans {
    pub fn new(formats: &Formats) -> Plans {
        let mut plans: Vec<Option<Plan>> = Vec::new();
        for format in formats.iter() {
            let slot = format.id as usize;
            if slot >= 1 << 16 {
                continue;
            }
            if plans.len() <= slot {
                plans.resize_with(slot + 1, || None);
            }
            plans[slot] = Some(plan_of(format));
        }
        let common_flags = formats.iter().next().and_then(|f| f.field("common_flags")).and_then(FieldRef::of);
        Plans { plans, common_flags }
    }
}

/// What an encoder wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventCounts {
    /// Events written as Perfetto's own messages, and as generic events.
    pub known: u64,
    pub generic: u64,
    /// Bundles marked as following lost events.
    pub lost_marks: u64,
}

impl EventCounts {
    pub fn add(&mut self, other: &EventCounts) {
        self.known += other.known;
        self.generic += other.generic;
        self.lost_marks += other.lost_marks;
    }
}

/// Where the bundle being filled starts: its trace packet and its bundle message.
#[derive(Copy, Clone)]
struct Open {
    packet: usize,
    bundle: usize,
}

/// Encodes one CPU's events into bundles, written as trace packets to `out`.
pub struct CpuEncoder<'p, W: Write> {
    plans: &'p Plans,
    cpu: u32,
    buf: Vec<u8>,
    open: Option<Open>,
    lost: bool,
    out: W,
    pub counts: EventCounts,
}

impl<'p, W: Write> CpuEncoder<'p, W> {
    pub fn new(plans: &'p Plans, cpu: u32, out: W) -> Self {
        let buf = Vec::with_capacity(WRITE_BYTES + BUNDLE_BYTES + 4096);
        CpuEncoder { plans, cpu, buf, open: None, lost: false, out, counts: EventCounts::default() }
    }

    /// Adds an event to the bundle, closing it when it is full.
    #[inline]
    pub fn event(&mut self, event: &Event<'_>) -> io::Result<()> {
        let Some(Some(plan)) = self.plans.plans.get(event.id as usize) else { return Ok(()) };
        if self.open.is_none() {
            self.open_bundle();
        }
        let buf = &mut self.buf;
        let start = protobuf::begin_message(buf, proto::bundle::EVENT);
        protobuf::uint(buf, proto::ftrace_event::TIMESTAMP, event.ts.0);
        protobuf::int(buf, proto::ftrace_event::PID, event.pid().0.into());
        if let Some(flags) = self.plans.common_flags.and_then(|f| event.read(f)) {
            protobuf::int(buf, proto::ftrace_event::COMMON_FLAGS, flags);
        }
        match plan {
            Plan::Known { tag, fields } => {
                let message = protobuf::begin_message(buf, *tag);
                encode_known(buf, fields, event);
                protobuf::end_message(buf, message);
                self.counts.known += 1;
            }
            Plan::Generic { name, fields } => {
                let message = protobuf::begin_message(buf, proto::ftrace_event::GENERIC);
                encode_generic(buf, name, fields, event);
                protobuf::end_message(buf, message);
                self.counts.generic += 1;
            }
        }
        protobuf::end_message(buf, start);
        if self.open.is_some_and(|open| buf.len() - open.bundle >= BUNDLE_BYTES) {
            self.close_bundle()?;
        }
        Ok(())
    }

    /// Marks that the kernel lost events before the next events.
    pub fn lost(&mut self) -> io::Result<()> {
        self.close_bundle()?;
        self.lost = true;
        self.counts.lost_marks += 1;
        Ok(())
    }

    /// Writes what is left (a loss at the very end as an empty bundle) and returns the
    /// output.
    pub fn finish(mut self) -> io::Result<(W, EventCounts)> {
        if self.lost {
            self.open_bundle();
        }
        self.close_bundle()?;
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok((self.out, self.counts))
    }

    fn open_bundle(&mut self) {
        let packet = protobuf::begin_padded(&mut self.buf, proto::TRACE_PACKET);
        let bundle = protobuf::begin_padded(&mut self.buf, proto::packet::FTRACE_EVENTS);
        protobuf::uint(&mut self.buf, proto::bundle::CPU, self.cpu.into());
        if std::mem::take(&mut self.lost) {
            protobuf::uint(&mut self.buf, proto::bundle::LOST_EVENTS, 1);
        }
        self.open = Some(Open { packet, bundle });
    }

    fn close_bundle(&mut self) -> io::Result<()> {
        let Some(open) = self.open.take() else { return Ok(()) };
        protobuf::end_padded(&mut self.buf, open.bundle);
        protobuf::end_padded(&mut self.buf, open.packet);
        if self.buf.len() >= WRITE_BYTES {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

fn plan_of(format: &EventFormat) -> Plan {
    match KNOWN_EVENTS.iter().find(|k| k.name == format.name) {
        Some(known) => Plan::Known {
            tag: known.tag,
            fields: known
                .fields
                .iter()
                .filter_map(|&(name, tag, wire)| {
                    let field = format.fields.iter().find(|f| f.name == name)?;
                    let access = match wire {
                        Wire::Int => Access::Int(FieldRef::of(field)?),
                        Wire::Text => Access::Text(field.clone()),
                    };
                    Some((tag, access))
                })
                .collect(),
        },
        None => Plan::Generic { name: format.name.clone(), fields: format.fields.clone() },
    }
}

fn encode_known(buf: &mut Vec<u8>, fields: &[(u32, Access)], event: &Event<'_>) {
    for (tag, access) in fields {
        match access {
            Access::Int(field) => {
                if let Some(value) = event.read(*field) {
                    protobuf::int(buf, *tag, value);
                }
            }
            Access::Text(field) => {
                if let Some(text) = event.read_str(field) {
                    protobuf::text(buf, *tag, text);
                }
            }
        }
    }
}

fn encode_generic(buf: &mut Vec<u8>, name: &str, fields: &[Field], event: &Event<'_>) {
    use proto::generic::*;
    protobuf::text(buf, EVENT_NAME, name.as_bytes());
    for field in fields {
        let Some(value) = event.value(field) else { continue };
        let start = protobuf::begin_message(buf, FIELD);
        protobuf::text(buf, FIELD_NAME, field.name.as_bytes());
        match value {
            Value::Unsigned(v) => protobuf::uint(buf, UINT_VALUE, v),
            Value::Signed(v) => protobuf::int(buf, INT_VALUE, v),
            Value::Str(s) => protobuf::text(buf, STR_VALUE, s),
            other => protobuf::text(buf, STR_VALUE, list_text(&other).as_bytes()),
        }
        protobuf::end_message(buf, start);
    }
}

/// An array or undecoded bytes as `[1,2,3]`, the way `schedlens dump --json` shows them.
pub fn list_text(value: &Value<'_>) -> String {
    let items: Vec<String> = match value {
        Value::Bytes(bytes) => bytes.iter().map(u8::to_string).collect(),
        array => array
            .elements()
            .map(|v| match v {
                Value::Signed(n) => n.to_string(),
                other => other.as_u64().unwrap_or(0).to_string(),
            })
            .collect(),
    };
    format!("[{}]", items.join(","))
}
