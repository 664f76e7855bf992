//! Raw trace.dat events as Perfetto ftrace events, grouped in per-CPU bundles as
//! Perfetto's own recorder writes them. Events Perfetto knows (the scheduler's, task
//! renames, trace markers) get their own messages, so its UI draws CPU tracks, thread
//! states and wakeups from them; every other event is a `GenericFtraceEvent` carrying all
//! its fields. Each field is resolved once per event format, and every event is written
//! straight into its bundle, in place (one buffer per CPU, no allocation per event).
//! With [`CleanStretches`], switches and wakings go into the bundles' compact columns
//! where that loses nothing, and events no reader uses are left out (see [`compact`]).

use super::compact::{self, CleanStretches, Columns, NameKey, Running, SwitchRow, WakingRow, name_key};
use super::proto::{self, KNOWN_EVENTS, Wire};
use crate::protobuf;
use std::io::{self, Write};
use tracedat::format::{Element, EventFormat, Field, FieldKind};
use tracedat::{Event, FieldRef, Formats, Value};

/// A bundle is closed when its events reach this many bytes.
const BUNDLE_BYTES: usize = 32 * 1024;
/// Closed bundles are written out when they reach this many bytes.
const WRITE_BYTES: usize = 1 << 20;

enum Access {
    Int(FieldRef),
    Text(TextRef),
}

/// A text field resolved for fast reads: a `char name[N]` array is read in place.
#[derive(Clone)]
enum TextRef {
    Fixed { offset: usize, size: usize },
    Other(Field),
}

impl TextRef {
    fn of(field: &Field) -> TextRef {
        let fixed =
            field.kind == FieldKind::StaticArray && field.element == Element::Char && field.count_field.is_none();
        match field.size {
            size @ 1.. if fixed => TextRef::Fixed { offset: field.offset as usize, size: size as usize },
            _ => TextRef::Other(field.clone()),
        }
    }

    /// The text up to its first NUL, as `Event::read_str` reads it.
    #[inline]
    fn read<'e>(&self, event: &Event<'e>) -> Option<&'e [u8]> {
        match *self {
            TextRef::Fixed { offset, size } => Some(until_nul(event.data.get(offset..offset + size)?)),
            TextRef::Other(ref field) => event.read_str(field),
        }
    }

    /// The text and its key (a task name's 16 bytes taken at once).
    #[inline]
    fn read_keyed<'e>(&self, event: &Event<'e>) -> Option<(&'e [u8], Option<NameKey>)> {
        if let TextRef::Fixed { offset, size: 16 } = *self {
            let bytes = event.data.get(offset..offset + 16)?;
            let word = u128::from_le_bytes(bytes.try_into().expect("16 bytes"));
            let len = first_nul(word);
            let key = if len == 16 { word } else { word & ((1u128 << (8 * len)) - 1) };
            return Some((&bytes[..len], Some((key, len))));
        }
        let text = self.read(event)?;
        Some((text, name_key(text)))
    }
}

/// Where the first zero byte of 16 (little-endian) is: 16 when there is none.
#[inline]
fn first_nul(word: u128) -> usize {
    const ONES: u128 = u128::MAX / 255;
    // The lowest byte whose high bit this sets is the first zero byte.
    let zero = word.wrapping_sub(ONES) & !word & (ONES << 7);
    (zero.trailing_zeros() / 8).min(16) as usize
}

/// `bytes` up to the first NUL; a task name's 16 bytes at once.
#[inline]
fn until_nul(bytes: &[u8]) -> &[u8] {
    if let Ok(word) = <[u8; 16]>::try_from(bytes) {
        return &bytes[..first_nul(u128::from_le_bytes(word))];
    }
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// How to write one event format.
enum Plan {
    /// `read`: Perfetto's importer or schedlens's model reads it (see [`KNOWN_EVENTS`]).
    Known {
        tag: u32,
        fields: Vec<(u32, Access)>,
        read: bool,
    },
    Generic {
        name: String,
        fields: Vec<Field>,
    },
}

impl Plan {
    fn is_read(&self) -> bool {
        matches!(self, Plan::Known { read: true, .. })
    }
}

/// How every event format of a trace is written, shared by the CPUs' encoders.
pub struct Plans {
    plans: Vec<Option<Plan>>,
    common_flags: Option<FieldRef>,
    /// Where compact rows take their fields from (`None` when the trace's format lacks one).
    switch: Option<SwitchPlan>,
    waking: Option<WakingPlan>,
}

/// The fields of `sched_switch` a compact row holds or is inferred from.
struct SwitchPlan {
    id: u32,
    prev_comm: TextRef,
    prev_pid: FieldRef,
    prev_prio: FieldRef,
    prev_state: FieldRef,
    next_comm: TextRef,
    next_pid: FieldRef,
    next_prio: FieldRef,
}

/// A switch's fields as read (the names with their keys).
struct Switch<'e> {
    prev_comm: Option<NameKey>,
    prev_pid: i64,
    prev_prio: i64,
    prev_state: i64,
    next_comm: (&'e [u8], Option<NameKey>),
    next_pid: i64,
    next_prio: i64,
}

impl SwitchPlan {
    fn of(format: &EventFormat) -> Option<SwitchPlan> {
        let number = |name: &str| format.field(name).and_then(FieldRef::of);
        let text = |name: &str| format.field(name).map(TextRef::of);
        Some(SwitchPlan {
            id: format.id,
            prev_comm: text("prev_comm")?,
            prev_pid: number("prev_pid")?,
            prev_prio: number("prev_prio")?,
            prev_state: number("prev_state")?,
            next_comm: text("next_comm")?,
            next_pid: number("next_pid")?,
            next_prio: number("next_prio")?,
        })
    }

    fn read<'e>(&self, event: &Event<'e>) -> Option<Switch<'e>> {
        Some(Switch {
            prev_comm: self.prev_comm.read_keyed(event)?.1,
            prev_pid: event.read(self.prev_pid)?,
            prev_prio: event.read(self.prev_prio)?,
            prev_state: event.read(self.prev_state)?,
            next_comm: self.next_comm.read_keyed(event)?,
            next_pid: event.read(self.next_pid)?,
            next_prio: event.read(self.next_prio)?,
        })
    }
}

/// The fields of `sched_waking` a compact row holds.
struct WakingPlan {
    id: u32,
    comm: TextRef,
    pid: FieldRef,
    prio: FieldRef,
    target_cpu: FieldRef,
}

impl WakingPlan {
    fn of(format: &EventFormat) -> Option<WakingPlan> {
        let number = |name: &str| format.field(name).and_then(FieldRef::of);
        Some(WakingPlan {
            id: format.id,
            comm: format.field("comm").map(TextRef::of)?,
            pid: number("pid")?,
            prio: number("prio")?,
            target_cpu: number("target_cpu")?,
        })
    }
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
        let named = |name: &str| formats.iter().find(|f| f.name == name);
        Plans {
            plans,
            common_flags,
            switch: named("sched_switch").and_then(SwitchPlan::of),
            waking: named("sched_waking").and_then(WakingPlan::of),
        }
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
    /// Switches and wakings written as compact rows (not in `known`).
    pub compact_switches: u64,
    pub compact_wakings: u64,
    /// Events left out: no reader uses them, and the model saw every switch around them.
    pub left_out: u64,
}

impl EventCounts {
    pub fn add(&mut self, other: &EventCounts) {
        self.known += other.known;
        self.generic += other.generic;
        self.lost_marks += other.lost_marks;
        self.compact_switches += other.compact_switches;
        self.compact_wakings += other.compact_wakings;
        self.left_out += other.left_out;
    }

    /// Events written, compact or full.
    pub fn written(&self) -> u64 {
        self.known + self.generic + self.compact_switches + self.compact_wakings
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
    compact: Option<Compactor<'p>>,
    pub counts: EventCounts,
}

/// A CPU's compact encoding: where it may be used, what readers will infer, the open
/// bundle's rows.
struct Compactor<'c> {
    clean: compact::Cursor<'c>,
    /// Whether events no reader uses may be left out (see [`CleanStretches::leave_out`]).
    leave_out: bool,
    running: Option<Running>,
    columns: Columns,
    /// The latest full event of the open bundle. Readers take a bundle's compact rows and
    /// its events apart, so a row and an event at the same time go in different bundles
    /// to keep their order.
    last_full: Option<u64>,
}

/// What becomes of an event in the compact encoding: a row (with the name it interns and
/// that name's key), nothing, or a full event.
enum Route<'e> {
    Row(Row, &'e [u8], Option<NameKey>),
    LeftOut,
    Full,
}

enum Row {
    Switch(SwitchRow),
    Waking(WakingRow),
}

impl<'p, W: Write> CpuEncoder<'p, W> {
    /// An encoder of full events, or with `clean` of compact rows where they lose nothing.
    pub fn new(plans: &'p Plans, cpu: u32, clean: Option<&'p CleanStretches>, out: W) -> Self {
        let buf = Vec::with_capacity(WRITE_BYTES + BUNDLE_BYTES + 4096);
        let compact = clean.map(|clean| Compactor {
            clean: clean.cursor(cpu),
            leave_out: clean.leave_out(),
            running: None,
            columns: Columns::default(),
            last_full: None,
        });
        CpuEncoder { plans, cpu, buf, open: None, lost: false, out, compact, counts: EventCounts::default() }
    }

    /// Adds an event to the bundle, closing it when it is full.
    #[inline]
    pub fn event(&mut self, event: &Event<'_>) -> io::Result<()> {
        let Some(Some(plan)) = self.plans.plans.get(event.id as usize) else { return Ok(()) };
        if self.compact.is_some() {
            match self.route(plan, event) {
                Route::Full => self.before_full(event.ts.0)?,
                Route::LeftOut => {
                    self.counts.left_out += 1;
                    return Ok(());
                }
                Route::Row(row, name, key) => return self.compact_row(row, name, key),
            }
        }
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
            Plan::Known { tag, fields, .. } => {
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
        self.close_if_full()
    }

    /// Marks that the kernel lost events before the next events.
    pub fn lost(&mut self) -> io::Result<()> {
        self.close_bundle()?;
        self.lost = true;
        self.counts.lost_marks += 1;
        if let Some(compactor) = &mut self.compact {
            compactor.running = None;
        }
        Ok(())
    }

    /// How the compact encoding takes `event`, noting what readers will infer after it.
    #[inline]
    fn route<'e>(&mut self, plan: &Plan, event: &Event<'e>) -> Route<'e> {
        let plans = self.plans;
        let Some(compactor) = &mut self.compact else { return Route::Full };
        let (ts, pid) = (event.ts.0, i64::from(event.pid().0));
        let clean = compactor.clean.is_clean(ts);
        if let Some(fields) = plans.switch.as_ref().filter(|p| p.id == event.id) {
            let Some(switch) = fields.read(event) else {
                compactor.running = None;
                return Route::Full;
            };
            let inferred = compactor.running.is_some_and(|r| r.is(switch.prev_pid, switch.prev_prio, switch.prev_comm));
            compactor.running = Some(Running::new(switch.next_pid, switch.next_prio, switch.next_comm.1));
            let (name, key) = switch.next_comm;
            if !(clean && inferred && compactor.columns.can_intern(name, key)) {
                return Route::Full;
            }
            let row =
                SwitchRow { ts, prev_state: switch.prev_state, next_pid: switch.next_pid, next_prio: switch.next_prio };
            return Route::Row(Row::Switch(row), name, key);
        }
        let shown = compactor.running.is_some_and(|r| r.pid == pid);
        if !shown {
            // Readers would take this event's task as the CPU's from here on.
            compactor.running = None;
        }
        if let Some(fields) = plans.waking.as_ref().filter(|p| p.id == event.id) {
            if !(clean && shown) {
                return Route::Full;
            }
            let values = (
                fields.comm.read_keyed(event),
                event.read(fields.pid),
                event.read(fields.prio),
                event.read(fields.target_cpu),
            );
            let (Some(comm), Some(pid), Some(prio), Some(target_cpu)) = values else { return Route::Full };
            if !compactor.columns.can_intern(comm.0, comm.1) {
                return Route::Full;
            }
            let common_flags = plans.common_flags.and_then(|f| event.read(f)).unwrap_or(0);
            return Route::Row(Row::Waking(WakingRow { ts, pid, target_cpu, prio, common_flags }), comm.0, comm.1);
        }
        if clean && shown && !plan.is_read() && compactor.leave_out { Route::LeftOut } else { Route::Full }
    }

    /// Appends a compact row to the open bundle (a new one when a reader would put the
    /// row before an earlier entry of the same time, or its table of names is full).
    fn compact_row(&mut self, row: Row, name: &[u8], key: Option<NameKey>) -> io::Result<()> {
        let ts = match &row {
            Row::Switch(row) => row.ts,
            Row::Waking(row) => row.ts,
        };
        let compactor = self.compact.as_ref().expect("compact rows come from a compactor");
        let after_full = compactor.last_full.is_some_and(|full| ts <= full);
        let after_waking = matches!(row, Row::Switch(_)) && compactor.columns.waking_at_or_after(ts);
        if self.open.is_some() && (after_full || after_waking) {
            self.close_bundle()?;
        }
        let index = match self.columns().intern(name, key) {
            Some(index) => index,
            None => {
                self.close_bundle()?;
                self.columns().intern(name, key).expect("an empty table has room")
            }
        };
        if self.open.is_none() {
            self.open_bundle();
        }
        match row {
            Row::Switch(row) => {
                self.columns().switch(&row, index);
                self.counts.compact_switches += 1;
            }
            Row::Waking(row) => {
                self.columns().waking(&row, index);
                self.counts.compact_wakings += 1;
            }
        }
        self.close_if_full()
    }

    /// Before a full event at `ts`: a new bundle when the open one has a compact row at
    /// or after `ts` (see [`Compactor::last_full`]).
    fn before_full(&mut self, ts: u64) -> io::Result<()> {
        let Some(compactor) = &self.compact else { return Ok(()) };
        if self.open.is_some() && compactor.columns.last_row().is_some_and(|row| ts <= row) {
            self.close_bundle()?;
        }
        if let Some(compactor) = &mut self.compact {
            compactor.last_full = Some(compactor.last_full.map_or(ts, |t| t.max(ts)));
        }
        Ok(())
    }

    fn columns(&mut self) -> &mut Columns {
        &mut self.compact.as_mut().expect("compact rows come from a compactor").columns
    }

    /// Closes the bundle once its events and rows reach [`BUNDLE_BYTES`].
    fn close_if_full(&mut self) -> io::Result<()> {
        let Some(open) = self.open else { return Ok(()) };
        let rows = self.compact.as_ref().map_or(0, |c| c.columns.len());
        if self.buf.len() - open.bundle + rows >= BUNDLE_BYTES {
            self.close_bundle()?;
        }
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
        if let Some(compactor) = &mut self.compact {
            compactor.columns.write_and_clear(&mut self.buf, proto::bundle::COMPACT_SCHED);
            compactor.last_full = None;
        }
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
            read: known.read,
            tag: known.tag,
            fields: known
                .fields
                .iter()
                .filter_map(|&(name, tag, wire)| {
                    let field = format.fields.iter().find(|f| f.name == name)?;
                    let access = match wire {
                        Wire::Int => Access::Int(FieldRef::of(field)?),
                        Wire::Text => Access::Text(TextRef::of(field)),
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
                if let Some(text) = field.read(event) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_ends_at_its_first_nul() {
        let simple = |b: &[u8]| b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())].to_vec();
        let mut names: Vec<Vec<u8>> =
            vec![[0u8; 16].to_vec(), [b'x'; 16].to_vec(), b"swapper/1\0\0\0\0\0\0\0".to_vec()];
        for len in 0..16 {
            let mut name = [0x80u8 | len as u8; 16];
            name[len] = 0;
            name[(len + 3).min(15)] = 0;
            names.push(name.to_vec());
            names.push(b"short\0x"[..(len % 7) + 1].to_vec());
        }
        for name in &names {
            assert_eq!(until_nul(name), simple(name), "{name:?}");
        }
    }
}
