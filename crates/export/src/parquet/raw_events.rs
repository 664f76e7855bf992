//! The raw events, one table per event type with the event's fields as columns (after
//! `ts`, `cpu`, `common_pid` and `buffer`): numbers as 64-bit integers (unsigned 64-bit
//! fields as `UINT_64`), text as strings, integer arrays as lists, anything else as
//! bytes. A field the record is too short for is null.

use super::columns::{Kind, Spec, TableWriter};
use super::layout::Layout;
use crate::{EventFilter, ProgressFn, Result, Scope};
use inputs::Input as Recording;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use tracedat::format::{Element, EventFormat, Field, FieldKind};
use tracedat::{Event, EventItems, EventSource, FieldRef, Item, Value};

/// Columns every event table starts with.
const FIXED: [&str; 4] = ["ts", "cpu", "common_pid", "buffer"];

struct EventTable {
    writer: TableWriter,
    /// Each field, its column's kind, and for plain numbers a resolved accessor.
    fields: Vec<(Field, Kind, Option<FieldRef>)>,
}

/// What the raw-event pass wrote.
#[derive(Clone, Debug, Default)]
pub struct RawSummary {
    /// Rows per event table, by table name.
    pub tables: Vec<(String, u64)>,
    /// Events lost by the kernel, per CPU (count known) and losses of unknown size.
    pub lost: u64,
    pub lost_unknown: u64,
    /// Events without a format in the file (not exported).
    pub unknown: u64,
    pub damage: Vec<String>,
}

/// Streams every buffer's events into per-type tables.
pub fn write(trace: &Recording, scope: &Scope, layout: &Layout, progress: ProgressFn<'_>) -> Result<RawSummary> {
    let names = table_names(trace.formats());
    let filter = EventFilter::new(scope, trace.formats());
    let mut tables: HashMap<u32, EventTable> = HashMap::new();
    let mut summary = RawSummary::default();
    let total = trace.data_size();
    let mut stream = trace.all_events();
    let mut count = 0u64;
    loop {
        count += 1;
        if count % (1 << 16) == 0 {
            progress(stream.bytes_done(), total);
        }
        let Some(item) = stream.next() else { break };
        let event = match item {
            Item::Lost(lost) => {
                match lost.count {
                    Some(n) => summary.lost = summary.lost.saturating_add(n),
                    None => summary.lost_unknown += 1,
                }
                continue;
            }
            Item::Event(event) => event,
        };
        if event.ts >= scope.window.end {
            break;
        }
        let Some(format) = event.format else { continue };
        if !filter.keeps(&event) {
            continue;
        }
        let table = match tables.entry(event.id) {
            Entry::Occupied(table) => table.into_mut(),
            Entry::Vacant(slot) => slot.insert(EventTable::create(layout, &names[&event.id], format)?),
        };
        let buffer =
            trace.trace_dat().and_then(|t| t.buffers().get(event.buffer as usize)).map_or("", |b| b.name.as_str());
        table.push(&event, buffer)?;
    }
    progress(total, total);
    summary.unknown = stream.unknown_events();
    summary.damage = stream.take_damage().iter().chain(&trace.damage()).map(|e| e.to_string()).collect();
    for (id, table) in tables {
        summary.tables.push((names[&id].clone(), table.writer.finish()?));
    }
    summary.tables.sort();
    Ok(summary)
}

/// Table names: the event's name, or `system_name` when two systems share the name.
fn table_names(formats: &tracedat::Formats) -> HashMap<u32, String> {
    let mut uses: HashMap<&str, u32> = HashMap::new();
    for format in formats.iter() {
        *uses.entry(format.name.as_str()).or_default() += 1;
    }
    formats
        .iter()
        .map(|f| {
            let name = if uses[f.name.as_str()] > 1 { format!("{}_{}", f.system, f.name) } else { f.name.clone() };
            (f.id, super::layout::partition_value(&name))
        })
        .collect()
}

fn field_kind(field: &Field) -> Kind {
    match (field.kind, field.element) {
        (FieldKind::Scalar, _) if matches!(field.size, 1 | 2 | 4) => Kind::Int,
        (FieldKind::Scalar, _) if field.size == 8 => {
            if field.signed {
                Kind::Int
            } else {
                Kind::Uint
            }
        }
        (FieldKind::Scalar, _) => Kind::Bytes,
        (_, Element::Char) => Kind::Text,
        (_, Element::Int { .. }) => Kind::IntList,
        (_, Element::Byte) => Kind::Bytes,
    }
}

impl EventTable {
    fn create(layout: &Layout, name: &str, format: &EventFormat) -> Result<EventTable> {
        let fields: Vec<(Field, Kind, Option<FieldRef>)> =
            format.fields.iter().map(|f| (f.clone(), field_kind(f), FieldRef::of(f))).collect();
        let mut specs = vec![
            Spec::new("ts", Kind::Time),
            Spec::new("cpu", Kind::Int),
            Spec::new("common_pid", Kind::Int),
            Spec::new("buffer", Kind::Text),
        ];
        for (field, kind, _) in &fields {
            let name =
                if FIXED.contains(&field.name.as_str()) { format!("field_{}", field.name) } else { field.name.clone() };
            specs.push(Spec::nullable(name, *kind));
        }
        Ok(EventTable { writer: TableWriter::create(&layout.event_file(name), specs)?, fields })
    }

    fn push(&mut self, event: &Event<'_>, buffer: &str) -> Result<()> {
        let mut row =
            self.writer.row().int(event.ts.0 as i64).int(event.cpu.0.into()).int(event.pid().0.into()).text(buffer);
        for (field, kind, number) in &self.fields {
            if let Some(number) = number {
                row = row.opt_int(event.read(*number));
                continue;
            }
            row = match (event.value(field), kind) {
                (None, _) => row.null(),
                (Some(Value::Str(s)), Kind::Text) => row.bytes(s),
                (Some(Value::Bytes(b)), Kind::Bytes) => row.bytes(b),
                (Some(array @ Value::Array { .. }), Kind::IntList) => {
                    row.ints(array.elements().map(|v| v.as_i64().unwrap_or(0)))
                }
                (Some(value), Kind::Int | Kind::Uint) => match value.as_i64() {
                    Some(v) => row.int(v),
                    None => row.null(),
                },
                _ => row.null(),
            };
        }
        row.end()
    }
}
