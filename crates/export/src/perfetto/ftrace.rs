//! Raw trace.dat events as Perfetto ftrace events, grouped in per-CPU bundles as
//! Perfetto's own recorder writes them. Events Perfetto knows (the scheduler's, task
//! renames, trace markers) get their own messages, so its UI draws CPU tracks, thread
//! states and wakeups from them; every other event is a `GenericFtraceEvent` carrying all
//! its fields. Each field is resolved once per event format.

use super::proto::{self, KNOWN_EVENTS, Wire};
use crate::protobuf;
use std::io::{self, Write};
use tracedat::format::{EventFormat, Field};
use tracedat::{Event, FieldRef, Formats, Value};

/// A bundle is written out when its events reach this many bytes.
const BUNDLE_BYTES: usize = 32 * 1024;

enum Access {
    Int(FieldRef),
    Text(Field),
}

/// How to write one event format.
enum Plan {
    Known { tag: u32, fields: Vec<(u32, Access)> },
    Generic { name: String, fields: Vec<Field> },
}

#[derive(Default)]
struct Bundle {
    events: Vec<u8>,
    count: u64,
    lost: bool,
}

/// Encodes events into per-CPU bundles and writes full bundles as trace packets.
pub struct FtraceEncoder {
    plans: Vec<Option<Plan>>,
    common_flags: Option<FieldRef>,
    bundles: Vec<Bundle>,
    message: Vec<u8>,
    event: Vec<u8>,
    field: Vec<u8>,
    /// Events written, as Perfetto's own messages and as generic events.
    pub known_events: u64,
    pub generic_events: u64,
    pub lost_marks: u64,
}

impl FtraceEncoder {
    pub fn new(formats: &Formats) -> FtraceEncoder {
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
        FtraceEncoder {
            plans,
            common_flags,
            bundles: Vec::new(),
            message: Vec::with_capacity(256),
            event: Vec::with_capacity(256),
            field: Vec::with_capacity(64),
            known_events: 0,
            generic_events: 0,
            lost_marks: 0,
        }
    }

    /// Adds an event to its CPU's bundle, writing the bundle out when it is full.
    pub fn event(&mut self, event: &Event<'_>, out: &mut impl Write) -> io::Result<()> {
        let Some(Some(plan)) = self.plans.get(event.id as usize) else { return Ok(()) };
        self.message.clear();
        let tag = match plan {
            Plan::Known { tag, fields } => {
                encode_known(&mut self.message, fields, event);
                self.known_events += 1;
                *tag
            }
            Plan::Generic { name, fields } => {
                encode_generic(&mut self.message, &mut self.field, name, fields, event);
                self.generic_events += 1;
                proto::ftrace_event::GENERIC
            }
        };
        self.event.clear();
        protobuf::uint(&mut self.event, proto::ftrace_event::TIMESTAMP, event.ts.0);
        protobuf::int(&mut self.event, proto::ftrace_event::PID, event.pid().0.into());
        if let Some(flags) = self.common_flags.and_then(|f| event.read(f)) {
            protobuf::int(&mut self.event, proto::ftrace_event::COMMON_FLAGS, flags);
        }
        protobuf::raw(&mut self.event, tag, &self.message);
        let bundle = bundle_of(&mut self.bundles, event.cpu.index());
        protobuf::raw(&mut bundle.events, proto::bundle::EVENT, &self.event);
        bundle.count += 1;
        if bundle.events.len() >= BUNDLE_BYTES {
            self.flush(event.cpu.index(), out)?;
        }
        Ok(())
    }

    /// Marks that the kernel lost events on `cpu` before its next events.
    pub fn lost(&mut self, cpu: usize, out: &mut impl Write) -> io::Result<()> {
        self.flush(cpu, out)?;
        bundle_of(&mut self.bundles, cpu).lost = true;
        self.lost_marks += 1;
        Ok(())
    }

    /// Writes every bundle still open.
    pub fn finish(&mut self, out: &mut impl Write) -> io::Result<()> {
        for cpu in 0..self.bundles.len() {
            self.flush(cpu, out)?;
        }
        Ok(())
    }

    fn flush(&mut self, cpu: usize, out: &mut impl Write) -> io::Result<()> {
        let Some(bundle) = self.bundles.get_mut(cpu) else { return Ok(()) };
        if bundle.count == 0 && !bundle.lost {
            return Ok(());
        }
        let mut head = Vec::with_capacity(8);
        protobuf::uint(&mut head, proto::bundle::CPU, cpu as u64);
        if bundle.lost {
            protobuf::uint(&mut head, proto::bundle::LOST_EVENTS, 1);
        }
        let bundle_len = head.len() + bundle.events.len();
        let mut headers = Vec::with_capacity(16);
        protobuf::header(
            &mut headers,
            proto::TRACE_PACKET,
            protobuf::field_len(proto::packet::FTRACE_EVENTS, bundle_len),
        );
        protobuf::header(&mut headers, proto::packet::FTRACE_EVENTS, bundle_len);
        out.write_all(&headers)?;
        out.write_all(&head)?;
        out.write_all(&bundle.events)?;
        bundle.events.clear();
        bundle.count = 0;
        bundle.lost = false;
        Ok(())
    }
}

fn bundle_of(bundles: &mut Vec<Bundle>, cpu: usize) -> &mut Bundle {
    if bundles.len() <= cpu {
        bundles.resize_with(cpu + 1, Bundle::default);
    }
    &mut bundles[cpu]
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

fn encode_generic(buf: &mut Vec<u8>, scratch: &mut Vec<u8>, name: &str, fields: &[Field], event: &Event<'_>) {
    use proto::generic::*;
    protobuf::text(buf, EVENT_NAME, name.as_bytes());
    for field in fields {
        let Some(value) = event.value(field) else { continue };
        scratch.clear();
        protobuf::text(scratch, FIELD_NAME, field.name.as_bytes());
        match value {
            Value::Unsigned(v) => protobuf::uint(scratch, UINT_VALUE, v),
            Value::Signed(v) => protobuf::int(scratch, INT_VALUE, v),
            Value::Str(s) => protobuf::text(scratch, STR_VALUE, s),
            other => protobuf::text(scratch, STR_VALUE, list_text(&other).as_bytes()),
        }
        protobuf::raw(buf, FIELD, scratch);
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
