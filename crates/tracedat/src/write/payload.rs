//! Builds event payloads from an event's format file, so that a trace generator sets
//! fields by name (numbers, char arrays, `__data_loc` strings) instead of computing offsets,
//! and keeps working when a kernel adds, drops or resizes fields.

use crate::endian::Endian;
use crate::read::format::{Element, EventFormat, Field, FieldKind};

/// Why a field could not be set.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PayloadError {
    #[error("event {event} has no field {field:?}")]
    NoSuchField { event: String, field: String },
    #[error("field {field} of event {event} is not {wanted}")]
    WrongKind { event: String, field: String, wanted: &'static str },
    #[error("{value} does not fit field {field} of event {event} ({size} bytes)")]
    OutOfRange { event: String, field: String, value: i128, size: u32 },
    #[error("{len} bytes do not fit field {field} of event {event}")]
    TooLong { event: String, field: String, len: usize },
}

/// One event's payload under construction: the fixed part laid out as the format says,
/// dynamic (`__data_loc`/`__rel_loc`) data appended after it. `common_type` is set to the
/// format's id; everything not set is zero.
pub struct PayloadBuilder<'f> {
    format: &'f EventFormat,
    endian: Endian,
    fixed_len: usize,
    buf: Vec<u8>,
}

impl<'f> PayloadBuilder<'f> {
    pub fn new(format: &'f EventFormat, endian: Endian) -> PayloadBuilder<'f> {
        let fixed_len = format
            .common_fields
            .iter()
            .chain(&format.fields)
            .map(|f| f.offset as usize + f.size as usize)
            .max()
            .unwrap_or(0);
        let mut builder = PayloadBuilder { format, endian, fixed_len, buf: Vec::new() };
        builder.reset();
        builder
    }

    pub fn format(&self) -> &'f EventFormat {
        self.format
    }

    /// Clears every field (for the next event), keeping `common_type`.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.buf.resize(self.fixed_len, 0);
        if let Some(field) = self.format.field("common_type") {
            self.put_number(field, self.format.id.into());
        }
    }

    /// The payload as built so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Sets a number field (1, 2, 4 or 8 bytes); the value must fit the field, signed or
    /// unsigned.
    pub fn set_int(&mut self, name: &str, value: impl Into<i128>) -> Result<&mut Self, PayloadError> {
        let field = self.field(name)?;
        if field.kind != FieldKind::Scalar || !matches!(field.size, 1 | 2 | 4 | 8) {
            return Err(self.wrong_kind(field, "a number"));
        }
        let value = value.into();
        let bits = 8 * field.size;
        if value < -(1i128 << (bits - 1)) || value >= 1i128 << bits {
            return Err(PayloadError::OutOfRange {
                event: self.format.name.clone(),
                field: field.name.clone(),
                value,
                size: field.size,
            });
        }
        self.put_number(field, value as u64);
        Ok(self)
    }

    /// Sets a text field: a char array (cut to leave a terminating NUL, as the kernel
    /// does with comms) or a `__data_loc char[]` (stored with its NUL).
    pub fn set_str(&mut self, name: &str, text: impl AsRef<[u8]>) -> Result<&mut Self, PayloadError> {
        let field = self.field(name)?;
        if field.element != Element::Char {
            return Err(self.wrong_kind(field, "text"));
        }
        let text = text.as_ref();
        if field.kind == FieldKind::StaticArray {
            let kept = text.len().min((field.size as usize).saturating_sub(1));
            return self.set_bytes(name, &text[..kept]);
        }
        let mut with_nul = Vec::with_capacity(text.len() + 1);
        with_nul.extend_from_slice(text);
        with_nul.push(0);
        self.set_bytes(name, &with_nul)
    }

    /// Sets an array or dynamic field to raw bytes (elements already in the file's byte
    /// order). A static array is zero-filled after the bytes. Each dynamic field should
    /// be set once per event: its data is appended to the payload.
    pub fn set_bytes(&mut self, name: &str, bytes: &[u8]) -> Result<&mut Self, PayloadError> {
        let field = self.field(name)?;
        let start = field.offset as usize;
        match field.kind {
            FieldKind::Scalar => Err(self.wrong_kind(field, "an array")),
            FieldKind::StaticArray => {
                let slot = &mut self.buf[start..start + field.size as usize];
                if bytes.len() > slot.len() {
                    return Err(self.too_long(field, bytes.len()));
                }
                slot.fill(0);
                slot[..bytes.len()].copy_from_slice(bytes);
                Ok(self)
            }
            FieldKind::DataLoc | FieldKind::RelLoc => {
                let at = self.buf.len();
                let base = if field.kind == FieldKind::RelLoc { start + field.size as usize } else { 0 };
                let offset = at - base;
                let word = if field.size == 2 {
                    // Pre-2012 kernels: a 16-bit offset of a NUL-terminated string.
                    u16::try_from(offset).ok().map(u64::from)
                } else {
                    u16::try_from(offset)
                        .ok()
                        .zip(u16::try_from(bytes.len()).ok())
                        .map(|(o, l)| u64::from(o) | u64::from(l) << 16)
                };
                let Some(word) = word else {
                    return Err(self.too_long(field, bytes.len()));
                };
                self.buf.extend_from_slice(bytes);
                self.put_number(field, word);
                Ok(self)
            }
        }
    }

    fn field(&self, name: &str) -> Result<&'f Field, PayloadError> {
        self.format
            .field(name)
            .ok_or_else(|| PayloadError::NoSuchField { event: self.format.name.clone(), field: name.to_string() })
    }

    fn put_number(&mut self, field: &Field, value: u64) {
        let start = field.offset as usize;
        let size = field.size as usize;
        let bytes = self.endian.to_bytes_u64(value);
        let low = match self.endian {
            Endian::Little => &bytes[..size],
            Endian::Big => &bytes[8 - size..],
        };
        self.buf[start..start + size].copy_from_slice(low);
    }

    fn wrong_kind(&self, field: &Field, wanted: &'static str) -> PayloadError {
        PayloadError::WrongKind { event: self.format.name.clone(), field: field.name.clone(), wanted }
    }

    fn too_long(&self, field: &Field, len: usize) -> PayloadError {
        PayloadError::TooLong { event: self.format.name.clone(), field: field.name.clone(), len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{Cpu, Nanos};
    use crate::read::event::{Event, Value};
    use crate::read::format::parse_event_format;

    const FORMAT: &str = "name: demo\nID: 300\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:char comm[8];\toffset:8;\tsize:8;\tsigned:0;\n\
        \tfield:short delta;\toffset:16;\tsize:2;\tsigned:1;\n\
        \tfield:u64 big;\toffset:24;\tsize:8;\tsigned:0;\n\
        \tfield:__data_loc char[] msg;\toffset:32;\tsize:4;\tsigned:0;\n\
        \tfield:__rel_loc u8[] raw;\toffset:36;\tsize:4;\tsigned:0;\n";

    fn decode<'a>(format: &'a EventFormat, data: &'a [u8], endian: Endian) -> Event<'a> {
        Event {
            buffer: 0,
            cpu: Cpu(0),
            ts: Nanos(0),
            id: format.id,
            format: Some(format),
            data,
            endian,
            pid: 0,
            following: &[],
        }
    }

    #[test]
    fn fields_set_by_name_decode_with_the_reader() {
        let format = parse_event_format("s", FORMAT, 8).unwrap();
        for endian in [Endian::Little, Endian::Big] {
            let mut b = PayloadBuilder::new(&format, endian);
            b.set_int("common_pid", 4321)
                .unwrap()
                .set_str("comm", "a-very-long-comm")
                .unwrap()
                .set_int("delta", -2)
                .unwrap()
                .set_int("big", u64::MAX)
                .unwrap()
                .set_str("msg", "hello")
                .unwrap()
                .set_bytes("raw", &[1, 2, 3])
                .unwrap();
            let ev = decode(&format, b.bytes(), endian);
            assert_eq!(ev.field("common_type"), Some(Value::Unsigned(300)));
            assert_eq!(ev.field("common_pid"), Some(Value::Signed(4321)));
            assert_eq!(ev.field("comm"), Some(Value::Str(b"a-very-")));
            assert_eq!(ev.field("delta"), Some(Value::Signed(-2)));
            assert_eq!(ev.field("big"), Some(Value::Unsigned(u64::MAX)));
            assert_eq!(ev.field("msg"), Some(Value::Str(b"hello")));
            let raw: Vec<_> = ev.field("raw").unwrap().elements().collect();
            assert_eq!(raw, [1, 2, 3].map(Value::Unsigned), "rel_loc data is found relative to the field's end");
            b.reset();
            assert_eq!(b.bytes().len(), 40);
            assert!(b.bytes()[2..].iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn mistakes_are_errors() {
        let format = parse_event_format("s", FORMAT, 8).unwrap();
        let mut b = PayloadBuilder::new(&format, Endian::Little);
        assert!(matches!(b.set_int("success", 1), Err(PayloadError::NoSuchField { .. })));
        assert!(matches!(b.set_int("delta", 70_000), Err(PayloadError::OutOfRange { .. })));
        assert!(b.set_int("delta", -32768).is_ok());
        assert!(b.set_int("delta", 65535).is_ok(), "unsigned views fit too");
        assert!(matches!(b.set_int("comm", 1), Err(PayloadError::WrongKind { .. })));
        assert!(matches!(b.set_str("big", "x"), Err(PayloadError::WrongKind { .. })));
        assert!(matches!(b.set_bytes("comm", &[0; 9]), Err(PayloadError::TooLong { .. })));
        assert!(matches!(b.set_bytes("msg", &vec![0; 70_000]), Err(PayloadError::TooLong { .. })));
    }
}
