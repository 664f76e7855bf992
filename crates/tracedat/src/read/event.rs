//! A decoded record and lazy, typed access to its fields. Nothing is decoded until asked:
//! a hot loop resolves a [`FieldRef`] once per event type and then reads numbers straight
//! from the record bytes.

use crate::endian::Endian;
use crate::ids::{Cpu, Nanos, Pid};
use crate::read::format::{Element, EventFormat, Field, FieldKind};
use crate::read::formats::Formats;

/// A field resolved for fast repeated reads of numbers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FieldRef {
    pub offset: u32,
    pub size: u8,
    pub signed: bool,
}

impl FieldRef {
    /// The accessor for a scalar field; `None` for arrays and dynamic fields.
    pub fn of(field: &Field) -> Option<FieldRef> {
        (field.kind == FieldKind::Scalar && matches!(field.size, 1 | 2 | 4 | 8)).then_some(FieldRef {
            offset: field.offset,
            size: field.size as u8,
            signed: field.signed,
        })
    }
}

/// A field's value as stored: numbers raw (signed ones sign-extended), text as bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Unsigned(u64),
    Signed(i64),
    /// Characters up to the first NUL (not necessarily UTF-8).
    Str(&'a [u8]),
    /// An array of integers of `size` bytes each.
    Array {
        bytes: &'a [u8],
        size: u8,
        signed: bool,
        endian: Endian,
    },
    /// Bytes of a type this reader cannot interpret.
    Bytes(&'a [u8]),
}

impl<'a> Value<'a> {
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Unsigned(v) => Some(v as i64),
            Value::Signed(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        self.as_i64().map(|v| v as u64)
    }

    /// Text fields as a string (invalid UTF-8 replaced).
    pub fn as_str(&self) -> Option<std::borrow::Cow<'a, str>> {
        match *self {
            Value::Str(b) => Some(String::from_utf8_lossy(b)),
            _ => None,
        }
    }

    /// The elements of an array, each as a signed or unsigned number.
    pub fn elements(&self) -> impl Iterator<Item = Value<'a>> + 'a {
        let (bytes, size, signed, endian) = match *self {
            Value::Array { bytes, size, signed, endian } => (bytes, size, signed, endian),
            _ => (&[][..], 1, false, Endian::Little),
        };
        bytes.chunks_exact(size.max(1) as usize).map(move |b| number(b, endian, signed))
    }
}

fn number(bytes: &[u8], endian: Endian, signed: bool) -> Value<'static> {
    let size = bytes.len();
    let raw = endian.read_uint(bytes, size).unwrap_or(0);
    if signed {
        let shift = 64 - 8 * size as u32;
        Value::Signed(((raw << shift) as i64) >> shift)
    } else {
        Value::Unsigned(raw)
    }
}

/// One event of the trace.
#[derive(Copy, Clone, Debug)]
pub struct Event<'a> {
    /// Index of the buffer (0 is the top buffer when the file has one).
    pub buffer: u16,
    pub cpu: Cpu,
    /// Corrected timestamp, as `trace-cmd report` shows it.
    pub ts: Nanos,
    /// The event's id (`common_type`).
    pub id: u32,
    /// `None` when the file has no format for the id.
    pub format: Option<&'a EventFormat>,
    /// The record's payload, starting with the common fields.
    pub data: &'a [u8],
    pub endian: Endian,
    pub(crate) pid: i32,
    /// The bytes after the record in its page: what libtraceevent shows of an array
    /// declared longer than the record holds (`kernel_stack` with fewer than 8 entries).
    pub(crate) following: &'a [u8],
}

impl<'a> Event<'a> {
    /// The event of a record kept outside trace.dat's pages (a perf.data sample's raw
    /// payload), decoded with `formats`: its id and pid from the common fields.
    #[inline]
    pub fn of_record(formats: &'a Formats, endian: Endian, cpu: Cpu, ts: Nanos, data: &'a [u8]) -> Event<'a> {
        let id = formats.common.event_id(data, endian).unwrap_or(u32::MAX);
        let pid = formats.common.pid(data, endian).unwrap_or(-1);
        Event { buffer: 0, cpu, ts, id, format: formats.by_id(id), data, endian, pid, following: &[] }
    }

    /// The event's name, or "" when it has no format.
    pub fn name(&self) -> &'a str {
        self.format.map_or("", |f| f.name.as_str())
    }

    /// `common_pid`: the task that was running when the event was recorded.
    pub fn pid(&self) -> Pid {
        Pid(self.pid)
    }

    /// Reads a number through a resolved accessor; `None` if the record is too short.
    #[inline]
    pub fn read(&self, field: FieldRef) -> Option<i64> {
        let bytes = self.data.get(field.offset as usize..)?;
        let raw = self.endian.read_uint(bytes, field.size as usize)?;
        Some(if field.signed {
            let shift = 64 - 8 * field.size as u32;
            ((raw << shift) as i64) >> shift
        } else {
            raw as i64
        })
    }

    /// Reads the text of a char-array or `__data_loc char[]` field.
    pub fn read_str(&self, field: &Field) -> Option<&'a [u8]> {
        match self.value(field)? {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A field by name (the event's own fields, then the common ones).
    pub fn field(&self, name: &str) -> Option<Value<'a>> {
        self.value(self.format?.field(name)?)
    }

    /// The event's own (non-common) fields with their values, in format order.
    /// A field that does not fit the record gives `None`.
    pub fn fields(&self) -> impl Iterator<Item = (&'a Field, Option<Value<'a>>)> + '_ {
        self.format.into_iter().flat_map(|f| f.fields.iter()).map(|field| (field, self.value(field)))
    }

    /// Decodes `field` from this record.
    pub fn value(&self, field: &Field) -> Option<Value<'a>> {
        let bytes = match field.kind {
            FieldKind::Scalar => {
                let fixed = self.fixed_bytes(field)?;
                return Some(match field.size {
                    1 | 2 | 4 | 8 => number(fixed, self.endian, field.signed),
                    _ => Value::Bytes(fixed),
                });
            }
            FieldKind::StaticArray => self.array_bytes(field)?,
            FieldKind::DataLoc | FieldKind::RelLoc => self.dynamic_bytes(field, self.fixed_bytes(field)?)?,
        };
        Some(match field.element {
            Element::Char => Value::Str(until_nul(bytes)),
            Element::Int { size, signed } => Value::Array { bytes, size, signed, endian: self.endian },
            Element::Byte => Value::Bytes(bytes),
        })
    }

    /// The `size` bytes at the field's offset.
    fn fixed_bytes(&self, field: &Field) -> Option<&'a [u8]> {
        let start = field.offset as usize;
        self.data.get(start..start.checked_add(field.size as usize)?)
    }

    /// An array's bytes: its declared size, or, for a flexible array member (size 0), the
    /// rest of the record, or, for an array whose count another field holds, that many
    /// elements (as many as the record holds).
    fn array_bytes(&self, field: &Field) -> Option<&'a [u8]> {
        let start = field.offset as usize;
        let Some(count_index) = field.count_field else {
            return if field.size == 0 { self.data.get(start..) } else { self.fixed_bytes(field) };
        };
        let count_field = self.format?.fields.get(count_index)?;
        let count = self.value(count_field)?.as_i64()?.max(0) as usize;
        let element = match field.element {
            Element::Int { size, .. } => size.max(1) as usize,
            _ => 1,
        };
        let available = self.data.len().saturating_sub(start) / element;
        self.data.get(start..start + count.min(available) * element)
    }

    /// The bytes a `__data_loc`/`__rel_loc` word points at.
    fn dynamic_bytes(&self, field: &Field, word: &[u8]) -> Option<&'a [u8]> {
        let data = self.data;
        let raw = self.endian.read_uint(word, word.len())?;
        if field.size == 2 {
            // Pre-2012 form: a 16-bit offset of a NUL-terminated string.
            return Some(until_nul(data.get(raw as usize..)?));
        }
        let mut offset = (raw & 0xffff) as usize;
        let len = ((raw >> 16) & 0xffff) as usize;
        if field.kind == FieldKind::RelLoc {
            offset += (field.offset + field.size) as usize;
        }
        data.get(offset..offset.checked_add(len)?)
    }
}

fn until_nul(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::format::{EventFormat, parse_event_format};

    const FORMAT: &str = "name: demo\nID: 9\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:char comm[8];\toffset:8;\tsize:8;\tsigned:0;\n\
        \tfield:short delta;\toffset:16;\tsize:2;\tsigned:1;\n\
        \tfield:__data_loc char[] msg;\toffset:20;\tsize:4;\tsigned:0;\n\
        \tfield:__rel_loc u16[] vals;\toffset:24;\tsize:4;\tsigned:0;\n";

    fn record() -> Vec<u8> {
        let mut d = vec![0u8; 40];
        d[0..2].copy_from_slice(&9u16.to_le_bytes());
        d[4..8].copy_from_slice(&1234i32.to_le_bytes());
        d[8..12].copy_from_slice(b"cat\0");
        d[16..18].copy_from_slice(&(-3i16).to_le_bytes());
        d[20..24].copy_from_slice(&((4u32 << 16) | 28).to_le_bytes()); // "hi!\0" at 28
        d[28..32].copy_from_slice(b"hi!\0");
        d[24..28].copy_from_slice(&((4u32 << 16) | 4).to_le_bytes()); // 2 u16 at 28+4
        d[32..36].copy_from_slice(&[1, 0, 2, 0]);
        d
    }

    #[test]
    fn decodes_every_kind_of_field() {
        let format = parse_event_format("s", FORMAT, 8).unwrap();
        let data = record();
        let ev = Event {
            buffer: 0,
            cpu: Cpu(0),
            ts: Nanos(1),
            id: 9,
            format: Some(&format),
            data: &data,
            endian: Endian::Little,
            pid: 1234,
            following: &[],
        };
        assert_eq!(ev.field("comm"), Some(Value::Str(b"cat")));
        assert_eq!(ev.field("delta"), Some(Value::Signed(-3)));
        assert_eq!(ev.field("msg").unwrap().as_str().unwrap(), "hi!");
        let vals: Vec<_> = ev.field("vals").unwrap().elements().collect();
        assert_eq!(vals, [Value::Unsigned(1), Value::Unsigned(2)]);
        assert_eq!(ev.field("common_pid"), Some(Value::Signed(1234)));
        let delta = FieldRef::of(format.field("delta").unwrap()).unwrap();
        assert_eq!(ev.read(delta), Some(-3));
        assert_eq!(ev.fields().count(), 4);
    }

    fn event<'a>(format: &'a EventFormat, data: &'a [u8]) -> Event<'a> {
        Event {
            buffer: 0,
            cpu: Cpu(0),
            ts: Nanos(1),
            id: format.id,
            format: Some(format),
            data,
            endian: Endian::Little,
            pid: 0,
            following: &[],
        }
    }

    const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

    #[test]
    fn zero_size_trailing_fields_run_to_the_end_of_the_record() {
        // Linux 6.x declares `char buf[]`; 3.x and 4.x kernels `char buf` and `u32 buf`.
        for (decl, text) in [("char buf[]", true), ("char buf", true), ("u32 buf[]", false), ("u32 buf", false)] {
            let source = format!(
                "name: x\nID: 5\nformat:\n{COMMON}\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\
                 \tfield:{decl};\toffset:16;\tsize:0;\tsigned:0;\n"
            );
            let format = parse_event_format("ftrace", &source, 8).unwrap();
            let mut data = vec![0u8; 16];
            data.extend(b"hello\n\0\0\x07\0\0\0");
            let value = event(&format, &data).field("buf").unwrap();
            if text {
                assert_eq!(value, Value::Str(b"hello\n"), "{decl}");
            } else {
                let words: Vec<_> = value.elements().collect();
                assert_eq!(words, [Value::Unsigned(0x6c6c6568), Value::Unsigned(0x0a6f), Value::Unsigned(7)], "{decl}");
            }
        }
    }

    #[test]
    fn kernel_stack_holds_size_entries() {
        let source = format!(
            "name: kernel_stack\nID: 4\nformat:\n{COMMON}\tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n\
             \tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n"
        );
        let format = parse_event_format("ftrace", &source, 8).unwrap();
        for entries in [3usize, 8, 12] {
            let mut data = vec![0u8; 16];
            data[8..12].copy_from_slice(&(entries as i32).to_le_bytes());
            for i in 0..entries {
                data.extend((0xffffffff81000000u64 + i as u64).to_le_bytes());
            }
            let callers: Vec<_> = event(&format, &data).field("caller").unwrap().elements().collect();
            assert_eq!(callers.len(), entries);
            assert_eq!(callers.last(), Some(&Value::Unsigned(0xffffffff81000000 + entries as u64 - 1)));
            // A count larger than the record: only the entries present.
            data[8..12].copy_from_slice(&100i32.to_le_bytes());
            assert_eq!(event(&format, &data).field("caller").unwrap().elements().count(), entries);
        }
    }

    #[test]
    fn out_of_range_fields_are_none_not_panics() {
        let format = parse_event_format("s", FORMAT, 8).unwrap();
        let mut data = record();
        data[20..24].copy_from_slice(&((200u32 << 16) | 30).to_le_bytes());
        let ev = Event {
            buffer: 0,
            cpu: Cpu(0),
            ts: Nanos(1),
            id: 9,
            format: Some(&format),
            data: &data[..30],
            endian: Endian::Little,
            pid: 0,
            following: &[],
        };
        assert_eq!(ev.field("msg"), None);
        assert_eq!(ev.field("vals"), None, "record cut before the field's data");
        let short = &data[..10];
        let ev = Event { data: short, ..ev };
        assert_eq!(ev.field("comm"), None);
        assert!(ev.fields().all(|(_, v)| v.is_none()));
    }
}
