//! The one pass over a trace: packets in file order, each decoded where it is read
//! (ftrace bundles into records per CPU, names from process trees and track
//! descriptors, the trace config's buffers, ftrace statistics). Damage inside a packet
//! skips the rest of that packet and is kept as a warning naming the packet and the byte;
//! damage in the framing between packets ends the reading there (nothing after it can be
//! found), with what was read kept.

use crate::layout::{FIRST_GENERIC_ID, FieldValue, GENERIC, KNOWN, Kind, Layout, RecordWriter, known_layouts};
use crate::store::{CpuStore, SwitchFields, flag};
use crate::wire::{Fields, Value, WireError, packed};
use crate::{CpuCounts, Summary};
use std::collections::BTreeMap;

/// CPUs a bundle may name (a larger number is damage).
const MAX_CPUS: u64 = 1 << 16;
/// Generic event layouts kept (the rest are counted as unknown events).
const MAX_GENERIC: usize = 4096;
/// Fields a generic event's layout holds.
const MAX_GENERIC_FIELDS: usize = 64;

/// Where damage was found: the packet's number, the byte, what.
#[derive(Clone, Debug)]
pub struct Damage {
    pub packet: u64,
    pub offset: u64,
    pub message: String,
}

/// `TracePacket` fields read.
mod packet {
    pub const FTRACE_EVENTS: u32 = 1;
    pub const PROCESS_TREE: u32 = 2;
    pub const TRACE_CONFIG: u32 = 33;
    pub const FTRACE_STATS: u32 = 34;
    pub const TRACK_DESCRIPTOR: u32 = 60;
    /// Packets deflated together (`TraceConfig.compression_type`): not inflated here.
    pub const COMPRESSED_PACKETS: u32 = 50;
}

/// The state of the pass.
pub struct Reading {
    pub layouts: Vec<Layout>,
    generic_by_name: BTreeMap<String, usize>,
    slots: Vec<u32>,
    pub stores: Vec<CpuStore>,
    pub names: BTreeMap<i32, String>,
    pub summary: Summary,
    /// Per CPU, the overrun counts of the stats at the start and the end of the trace.
    overrun_start: BTreeMap<u32, u64>,
    overrun_end: BTreeMap<u32, u64>,
    pub damage: Vec<Damage>,
    pub damage_count: u64,
    writer: RecordWriter,
    packet: u64,
    /// The first packet holding deflated packets, and where.
    first_compressed: Option<(u64, u64)>,
}

/// Index of a known event in [`KNOWN`] by its `FtraceEvent` field number.
fn known_index(number: u32) -> Option<usize> {
    KNOWN.iter().position(|k| k.number == number)
}

impl Reading {
    pub fn new() -> Reading {
        Reading {
            layouts: known_layouts(),
            generic_by_name: BTreeMap::new(),
            slots: Vec::new(),
            stores: Vec::new(),
            names: BTreeMap::new(),
            summary: Summary::default(),
            overrun_start: BTreeMap::new(),
            overrun_end: BTreeMap::new(),
            damage: Vec::new(),
            damage_count: 0,
            writer: RecordWriter::new(),
            packet: 0,
            first_compressed: None,
        }
    }

    fn note(&mut self, error: WireError) {
        self.damage_count += 1;
        if self.damage.len() < 64 {
            self.damage.push(Damage { packet: self.packet, offset: error.offset, message: error.message });
        }
    }

    fn complain(&mut self, offset: u64, message: impl Into<String>) {
        self.note(WireError { offset, message: message.into() });
    }

    /// Reads the whole trace. An error only when not one packet could be read.
    pub fn trace(&mut self, bytes: &[u8]) -> Result<(), Damage> {
        let mut fields = Fields::new(bytes, 0);
        while let Some(field) = fields.next() {
            match field {
                Ok((1, Value::Bytes(body, at))) => {
                    self.summary.packets += 1;
                    self.packet_fields(body, at);
                    self.packet += 1;
                }
                Ok((number, _)) => self.complain(
                    fields.offset(),
                    format!("field {number} between packets (a trace holds only packets, field 1)"),
                ),
                Err(error) if self.packet == 0 => {
                    return Err(Damage { packet: 0, offset: error.offset, message: error.message });
                }
                Err(error) => self.note(error),
            }
        }
        if self.packet == 0 {
            return Err(Damage { packet: 0, offset: 0, message: "the file holds no trace packet".into() });
        }
        Ok(())
    }

    fn packet_fields(&mut self, body: &[u8], at: u64) {
        let mut fields = Fields::new(body, at);
        while let Some(field) = fields.next() {
            let (number, value) = match field {
                Ok(field) => field,
                Err(error) => return self.note(error),
            };
            let Value::Bytes(bytes, at) = value else { continue };
            if number == packet::COMPRESSED_PACKETS {
                self.summary.compressed_packets += 1;
                self.first_compressed.get_or_insert((self.packet, at));
                continue;
            }
            let kind = match number {
                packet::FTRACE_EVENTS => "ftrace bundles",
                packet::PROCESS_TREE => "process trees",
                packet::TRACE_CONFIG => "trace configs",
                packet::FTRACE_STATS => "ftrace stats",
                packet::TRACK_DESCRIPTOR => "track descriptors",
                _ => continue,
            };
            *self.summary.packet_kinds.entry(kind).or_default() += 1;
            let result = match number {
                packet::FTRACE_EVENTS => self.bundle(bytes, at),
                packet::PROCESS_TREE => self.process_tree(bytes, at),
                packet::TRACE_CONFIG => self.trace_config(bytes, at),
                packet::FTRACE_STATS => self.ftrace_stats(bytes, at),
                _ => self.track_descriptor(bytes, at),
            };
            if let Err(error) = result {
                return self.note(error);
            }
        }
    }

    fn store(&mut self, cpu: u32) -> usize {
        let slot = cpu as usize;
        if slot >= self.slots.len() {
            self.slots.resize(slot + 1, u32::MAX);
        }
        if self.slots[slot] == u32::MAX {
            self.slots[slot] = self.stores.len() as u32;
            self.stores.push(CpuStore::new(cpu));
        }
        self.slots[slot] as usize
    }

    /// An `FtraceEventBundle`: its CPU and loss flag first (wherever they are), then its
    /// events and compact sched arrays.
    fn bundle(&mut self, bytes: &[u8], at: u64) -> Result<(), WireError> {
        let (mut cpu, mut lost) = (None, false);
        let mut fields = Fields::new(bytes, at);
        while let Some(field) = fields.next() {
            match field? {
                (1, value) => cpu = value.int(),
                (3, value) => lost = value.int().is_some_and(|v| v != 0),
                _ => {}
            }
        }
        let Some(cpu) = cpu.filter(|&cpu| cpu < MAX_CPUS) else {
            let message = match cpu {
                Some(cpu) => format!("an ftrace bundle of CPU {cpu}"),
                None => "an ftrace bundle without its CPU".to_string(),
            };
            return Err(WireError { offset: at, message });
        };
        let cpu = cpu as u32;
        let store = self.store(cpu);
        let counts = self.summary.cpus.entry(cpu).or_default();
        counts.bundles += 1;
        let loss = lost.then(|| {
            counts.lost_bundles += 1;
            let time = self.stores[store].latest_time();
            self.stores[store].push_loss(time, None)
        });
        let mut first_time = None::<u64>;
        let mut fields = Fields::new(bytes, at);
        while let Some(field) = fields.next() {
            match field? {
                (2, Value::Bytes(event, at)) => {
                    if let Some(time) = self.event(store, event, at)? {
                        first_time = Some(first_time.map_or(time, |t| t.min(time)));
                    }
                }
                (4, Value::Bytes(compact, at)) => {
                    if let Some(time) = self.compact_sched(store, compact, at)? {
                        first_time = Some(first_time.map_or(time, |t| t.min(time)));
                    }
                }
                _ => {}
            }
        }
        if let (Some(entry), Some(time)) = (loss, first_time) {
            self.stores[store].set_time(entry, time);
        }
        Ok(())
    }

    /// One `FtraceEvent`; returns its time when it was kept.
    fn event(&mut self, store: usize, bytes: &[u8], at: u64) -> Result<Option<u64>, WireError> {
        let (mut time, mut pid, mut flags, mut payload) = (None, 0i32, 0u8, None);
        let mut fields = Fields::new(bytes, at);
        while let Some(field) = fields.next() {
            match field? {
                (1, value) => time = value.int(),
                (2, value) => pid = value.int().unwrap_or(0) as i32,
                (5, value) => flags = value.int().unwrap_or(0) as u8,
                (number, Value::Bytes(body, at)) if number > 5 || number == 3 || number == 4 => {
                    payload = Some((number, body, at))
                }
                _ => {}
            }
        }
        let Some((number, body, body_at)) = payload else { return Ok(None) };
        let Some(time) = time else {
            return Err(WireError { offset: at, message: "an ftrace event without its timestamp".into() });
        };
        let layout = match known_index(number) {
            Some(index) => index,
            None if number == GENERIC => match self.generic_layout(body, body_at)? {
                Some(index) => index,
                None => return Ok(None),
            },
            None => {
                *self.summary.unknown_events.entry(number).or_default() += 1;
                return Ok(None);
            }
        };
        let layout_ref = &self.layouts[layout];
        self.writer.begin(layout_ref, flags, pid);
        let mut fields = Fields::new(body, body_at);
        if number == GENERIC {
            while let Some(field) = fields.next() {
                if let (2, Value::Bytes(field, at)) = field? {
                    if let Some((name, value)) = generic_field(field, at)? {
                        if let Some(slot) = layout_ref.slot_named(&identifier(name)) {
                            self.writer.set(slot, value);
                        }
                    }
                }
            }
        } else {
            while let Some(field) = fields.next() {
                let (number, value) = field?;
                if let Some(slot) = layout_ref.slot(number) {
                    let value = match value {
                        Value::Bytes(text, _) => FieldValue::Text(text),
                        other => FieldValue::Int(other.int().unwrap_or(0)),
                    };
                    self.writer.set(slot, value);
                }
            }
        }
        self.stores[store].push_event(time, &self.writer.bytes, 0);
        *self.summary.events.entry(layout_ref.name.clone()).or_default() += 1;
        let cpu = self.stores[store].cpu;
        self.summary.cpus.entry(cpu).or_default().expanded += 1;
        Ok(Some(time))
    }

    /// The layout of a generic event, made from its first occurrence; `None` past the
    /// limit of layouts.
    fn generic_layout(&mut self, body: &[u8], at: u64) -> Result<Option<usize>, WireError> {
        let mut name = None;
        let mut declared: Vec<(String, Kind)> = Vec::new();
        let mut fields = Fields::new(body, at);
        while let Some(field) = fields.next() {
            match field? {
                (1, Value::Bytes(text, _)) => name = Some(identifier(text)),
                (2, Value::Bytes(field, at)) => {
                    if let Some((field_name, value)) = generic_field(field, at)? {
                        let kind = match value {
                            FieldValue::Text(_) => Kind::Str,
                            FieldValue::Int(_) if field_int_is_signed(field, at)? => Kind::I64,
                            FieldValue::Int(_) => Kind::U64,
                        };
                        let field_name = identifier(field_name);
                        if declared.len() < MAX_GENERIC_FIELDS && declared.iter().all(|(n, _)| *n != field_name) {
                            declared.push((field_name, kind));
                        }
                    }
                }
                _ => {}
            }
        }
        let Some(name) = name else {
            return Err(WireError { offset: at, message: "a generic ftrace event without its name".into() });
        };
        if let Some(&index) = self.generic_by_name.get(&name) {
            return Ok(Some(index));
        }
        if self.generic_by_name.len() >= MAX_GENERIC {
            *self.summary.unknown_events.entry(GENERIC).or_default() += 1;
            return Ok(None);
        }
        let id = FIRST_GENERIC_ID + self.generic_by_name.len() as u16;
        let fields: Vec<(&str, u32, Kind)> =
            declared.iter().enumerate().map(|(index, (n, kind))| (n.as_str(), index as u32 + 1, *kind)).collect();
        self.layouts.push(Layout::new("perfetto", &name, id, &fields));
        self.generic_by_name.insert(name, self.layouts.len() - 1);
        Ok(Some(self.layouts.len() - 1))
    }

    /// A bundle's `CompactSched`: switches and wakings in columns, times as deltas, task
    /// names as indexes into the bundle's table of names. Returns the earliest time.
    // A row is read across five columns: indexing them by row says so best.
    #[allow(clippy::needless_range_loop)]
    fn compact_sched(&mut self, store: usize, bytes: &[u8], at: u64) -> Result<Option<u64>, WireError> {
        let mut names: Vec<&[u8]> = Vec::new();
        let mut columns: [Vec<u64>; 13] = Default::default();
        let mut fields = Fields::new(bytes, at);
        while let Some(field) = fields.next() {
            match field? {
                (5, Value::Bytes(name, _)) => names.push(name),
                (number @ 1..=12, Value::Bytes(values, at)) if number != 5 => {
                    columns[number as usize].extend(packed(values, at)?)
                }
                (number @ 1..=12, Value::Varint(value)) if number != 5 => columns[number as usize].push(value),
                _ => {}
            }
        }
        let switch = self.layout_index("sched_switch");
        let waking = self.layout_index("sched_waking");
        let mut first = None::<u64>;
        let switches = self.column_rows(at, &columns, &[1, 2, 3, 4, 6], "switch");
        let mut time = 0u64;
        for row in 0..switches {
            time = time.wrapping_add(columns[1][row]);
            first = Some(first.map_or(time, |f| f.min(time)));
            let layout = &self.layouts[switch];
            self.writer.begin(layout, 0, 0);
            self.writer.set(layout.slot(4).expect("prev_state"), FieldValue::Int(columns[2][row]));
            self.writer.set(layout.slot(6).expect("next_pid"), FieldValue::Int(columns[3][row]));
            self.writer.set(layout.slot(7).expect("next_prio"), FieldValue::Int(columns[4][row]));
            let name = names.get(columns[6][row] as usize).copied().unwrap_or(b"");
            self.writer.set(layout.slot(5).expect("next_comm"), FieldValue::Text(name));
            self.stores[store].push_event(time, &self.writer.bytes, flag::COMPACT_SWITCH);
        }
        let wakings = self.column_rows(at, &columns, &[7, 8, 9, 10, 11], "waking");
        let mut time = 0u64;
        for row in 0..wakings {
            time = time.wrapping_add(columns[7][row]);
            first = Some(first.map_or(time, |f| f.min(time)));
            let layout = &self.layouts[waking];
            let flags = columns[12].get(row).copied().unwrap_or(0) as u8;
            self.writer.begin(layout, flags, 0);
            self.writer.set(layout.slot(2).expect("pid"), FieldValue::Int(columns[8][row]));
            self.writer.set(layout.slot(5).expect("target_cpu"), FieldValue::Int(columns[9][row]));
            self.writer.set(layout.slot(3).expect("prio"), FieldValue::Int(columns[10][row]));
            let name = names.get(columns[11][row] as usize).copied().unwrap_or(b"");
            self.writer.set(layout.slot(1).expect("comm"), FieldValue::Text(name));
            self.stores[store].push_event(time, &self.writer.bytes, flag::COMPACT_WAKING);
        }
        let bad_names = (0..switches)
            .map(|row| columns[6][row])
            .chain((0..wakings).map(|row| columns[11][row]))
            .filter(|&index| index as usize >= names.len())
            .count();
        if bad_names > 0 {
            self.complain(at, format!("{bad_names} compact sched name indexes past the {} names", names.len()));
        }
        *self.summary.events.entry("sched_switch".into()).or_default() += switches as u64;
        *self.summary.events.entry("sched_waking".into()).or_default() += wakings as u64;
        let cpu = self.stores[store].cpu;
        let counts: &mut CpuCounts = self.summary.cpus.entry(cpu).or_default();
        counts.compact_switches += switches as u64;
        counts.compact_wakings += wakings as u64;
        Ok(first)
    }

    /// Rows of a group of compact columns: the shortest column's length, with a warning
    /// when they differ.
    fn column_rows(&mut self, at: u64, columns: &[Vec<u64>; 13], group: &[usize], what: &str) -> usize {
        let lengths: Vec<usize> = group.iter().map(|&c| columns[c].len()).collect();
        let rows = lengths.iter().copied().min().unwrap_or(0);
        if lengths.iter().any(|&len| len != rows) {
            self.complain(at, format!("compact sched {what} columns of different lengths {lengths:?}"));
        }
        rows
    }

    fn layout_index(&self, name: &str) -> usize {
        self.layouts.iter().position(|l| l.name == name).expect("a known event")
    }

    /// `ProcessTree`: processes (pid, cmdline) and threads (tid, name).
    fn process_tree(&mut self, bytes: &[u8], at: u64) -> Result<(), WireError> {
        let mut fields = Fields::new(bytes, at);
        let mut threads = Vec::new();
        while let Some(field) = fields.next() {
            match field? {
                (1, Value::Bytes(process, at)) => {
                    let (pid, name) = (int_field(process, at, 1)?, text_field(process, at, 3)?);
                    if let (Some(pid), Some(name)) = (pid, name) {
                        let base = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
                        self.names.entry(pid as i32).or_insert_with(|| String::from_utf8_lossy(base).into_owned());
                    }
                }
                (2, Value::Bytes(thread, at)) => threads.push((int_field(thread, at, 1)?, text_field(thread, at, 2)?)),
                _ => {}
            }
        }
        for (tid, name) in threads {
            if let (Some(tid), Some(name)) = (tid, name) {
                self.names.insert(tid as i32, String::from_utf8_lossy(name).into_owned());
            }
        }
        Ok(())
    }

    /// `TrackDescriptor`: a thread's or a process's name.
    fn track_descriptor(&mut self, bytes: &[u8], at: u64) -> Result<(), WireError> {
        let mut fields = Fields::new(bytes, at);
        while let Some(field) = fields.next() {
            match field? {
                (3, Value::Bytes(process, at)) => {
                    if let (Some(pid), Some(name)) = (int_field(process, at, 1)?, text_field(process, at, 6)?) {
                        self.names.entry(pid as i32).or_insert_with(|| String::from_utf8_lossy(name).into_owned());
                    }
                }
                (4, Value::Bytes(thread, at)) => {
                    if let (Some(tid), Some(name)) = (int_field(thread, at, 2)?, text_field(thread, at, 5)?) {
                        self.names.insert(tid as i32, String::from_utf8_lossy(name).into_owned());
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `TraceConfig`: its buffers' sizes and fill policies.
    fn trace_config(&mut self, bytes: &[u8], at: u64) -> Result<(), WireError> {
        let mut fields = Fields::new(bytes, at);
        while let Some(field) = fields.next() {
            if let (1, Value::Bytes(buffer, at)) = field? {
                let size_kb = int_field(buffer, at, 1)?.unwrap_or(0);
                let policy = int_field(buffer, at, 4)?.unwrap_or(0);
                self.summary.buffers.push((size_kb, policy));
            }
        }
        Ok(())
    }

    /// `FtraceStats`: per CPU, the events the kernel overwrote or dropped, at the start
    /// and at the end of the trace.
    fn ftrace_stats(&mut self, bytes: &[u8], at: u64) -> Result<(), WireError> {
        let (mut phase, mut cpus) = (0, Vec::new());
        let mut fields = Fields::new(bytes, at);
        while let Some(field) = fields.next() {
            match field? {
                (1, value) => phase = value.int().unwrap_or(0),
                (2, Value::Bytes(stats, at)) => {
                    let cpu = int_field(stats, at, 1)?.unwrap_or(0);
                    let lost =
                        int_field(stats, at, 3)?.unwrap_or(0).saturating_add(int_field(stats, at, 8)?.unwrap_or(0));
                    cpus.push((cpu, lost));
                }
                _ => {}
            }
        }
        let table = match phase {
            1 => &mut self.overrun_start,
            2 => &mut self.overrun_end,
            _ => return Ok(()),
        };
        for (cpu, lost) in cpus.into_iter().filter(|&(cpu, _)| cpu < MAX_CPUS) {
            table.insert(cpu as u32, lost);
        }
        Ok(())
    }

    /// Ends the pass: losses the statistics count on CPUs whose bundles marked none
    /// become a notice at the CPU's start (when they happened is not known), the stores
    /// are put in time order and compact events completed.
    pub fn finish(&mut self) {
        if let Some((packet, at)) = self.first_compressed {
            self.packet = packet;
            let message = format!(
                "this and {} more packets are deflated (compression_type: DEFLATE) and were not read; \
                 write an uncompressed copy with `traceconv decompress_packets IN OUT`",
                self.summary.compressed_packets - 1
            );
            self.complain(at, message);
        }
        let ends: Vec<(u32, u64)> = self.overrun_end.iter().map(|(&cpu, &end)| (cpu, end)).collect();
        for (cpu, end) in ends {
            let lost = end.saturating_sub(self.overrun_start.get(&cpu).copied().unwrap_or(0));
            if lost == 0 {
                continue;
            }
            self.summary.overruns.insert(cpu, lost);
            let store = self.store(cpu);
            if self.summary.cpus.get(&cpu).is_none_or(|c| c.lost_bundles == 0) {
                let entry = self.stores[store].push_loss(0, Some(lost));
                self.stores[store].set_time(entry, 0);
            }
        }
        let switch = &self.layouts[self.layout_index("sched_switch")];
        let at = |name: &str| switch.slot_named(name).expect("a switch field").offset;
        let fields = SwitchFields {
            prev_comm: at("prev_comm"),
            prev_pid: at("prev_pid"),
            prev_prio: at("prev_prio"),
            next_comm: at("next_comm"),
            next_pid: at("next_pid"),
            next_prio: at("next_prio"),
            id: switch.id,
        };
        for store in &mut self.stores {
            store.finish(Some(fields));
            self.summary.unknown_prev += store.unknown_prev;
        }
        self.stores.sort_by_key(|s| s.cpu);
    }
}

/// A `GenericFtraceEvent.Field`: its name and value.
fn generic_field(bytes: &[u8], at: u64) -> Result<Option<(&[u8], FieldValue<'_>)>, WireError> {
    let (mut name, mut value) = (None, None);
    let mut fields = Fields::new(bytes, at);
    while let Some(field) = fields.next() {
        match field? {
            (1, Value::Bytes(text, _)) => name = Some(text),
            (3, Value::Bytes(text, _)) => value = Some(FieldValue::Text(text)),
            (4 | 5, v) => value = v.int().map(FieldValue::Int),
            _ => {}
        }
    }
    Ok(name.zip(value))
}

/// Whether a generic field holds `int_value` (signed) rather than `uint_value`.
fn field_int_is_signed(bytes: &[u8], at: u64) -> Result<bool, WireError> {
    let mut fields = Fields::new(bytes, at);
    while let Some(field) = fields.next() {
        if field?.0 == 4 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A name as a C identifier, as format files need.
fn identifier(name: &[u8]) -> String {
    let text: String =
        name.iter().map(|&b| if b.is_ascii_alphanumeric() || b == b'_' { b as char } else { '_' }).collect();
    if text.is_empty() || text.as_bytes()[0].is_ascii_digit() { format!("_{text}") } else { text }
}

/// The last integer field `number` of a message.
fn int_field(bytes: &[u8], at: u64, number: u32) -> Result<Option<u64>, WireError> {
    let mut found = None;
    let mut fields = Fields::new(bytes, at);
    while let Some(field) = fields.next() {
        let (n, value) = field?;
        if n == number {
            found = value.int().or(found);
        }
    }
    Ok(found)
}

/// The first length-delimited field `number` of a message.
fn text_field(bytes: &[u8], at: u64, number: u32) -> Result<Option<&[u8]>, WireError> {
    let mut fields = Fields::new(bytes, at);
    while let Some(field) = fields.next() {
        if let (n, Value::Bytes(text, _)) = field? {
            if n == number {
                return Ok(Some(text));
            }
        }
    }
    Ok(None)
}
