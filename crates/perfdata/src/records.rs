//! The records of the data section (or of the whole stream in pipe mode), one after the
//! other: `struct perf_event_header` (type, misc, size) and the body, read in place from
//! the file's bytes with every bound checked, so a record that claims more bytes than the
//! file has is an error naming it, never a read past the end or an allocation of its claim.

use crate::damage::{Located, Part};
use tracedat::Endian;

const HEADER: u64 = 8;

/// One record.
pub struct RawRecord<'a> {
    /// Its number, from 0, in file order.
    pub number: u64,
    /// Where it starts in the file.
    pub offset: u64,
    pub kind: u32,
    pub misc: u16,
    /// What follows the 8-byte header.
    pub body: &'a [u8],
}

impl RawRecord<'_> {
    pub fn part(&self) -> Part {
        Part::Record { number: self.number, kind: self.kind }
    }

    pub fn damage(&self, message: impl Into<String>) -> Located {
        Located::new(self.part(), self.offset, message)
    }
}

/// Reads records from `start` up to `end` of the file's bytes.
pub struct Records<'s> {
    bytes: &'s [u8],
    endian: Endian,
    pos: u64,
    end: u64,
    number: u64,
}

impl<'s> Records<'s> {
    pub fn new(bytes: &'s [u8], endian: Endian, start: u64, end: u64) -> Records<'s> {
        Records { bytes, endian, pos: start, end: end.min(bytes.len() as u64), number: 0 }
    }

    /// Where the next record starts.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The next record; `None` at the end; an error ends the reading (nothing after a
    /// record whose size is wrong can be found again).
    pub fn next(&mut self) -> Option<Result<RawRecord<'s>, Located>> {
        if self.pos >= self.end {
            return None;
        }
        let (offset, number, endian) = (self.pos, self.number, self.endian);
        let left = self.end - offset;
        let fail = |kind: Option<u32>, message: String| {
            let part = kind.map_or(Part::Data, |kind| Part::Record { number, kind });
            Some(Err(Located::new(part, offset, message)))
        };
        if left < HEADER {
            self.pos = self.end;
            return fail(None, format!("the data ends {left} bytes into record {number}'s header"));
        }
        let header: [u8; 8] = self.bytes[offset as usize..(offset + HEADER) as usize].try_into().expect("8 bytes");
        let kind = endian.u32(header[..4].try_into().expect("4 bytes"));
        let misc = endian.u16(header[4..6].try_into().expect("2 bytes"));
        let size = u64::from(endian.u16(header[6..8].try_into().expect("2 bytes")));
        if size < HEADER {
            self.pos = self.end;
            return fail(Some(kind), format!("its size is {size} bytes, less than its own header"));
        }
        if size > left {
            self.pos = self.end;
            return fail(Some(kind), format!("it claims {size} bytes, the data has {left} left"));
        }
        self.pos += size;
        self.number += 1;
        let body = &self.bytes[(offset + HEADER) as usize..(offset + size) as usize];
        Some(Ok(RawRecord { number, offset, kind, misc, body }))
    }

    /// Takes `len` bytes that follow the last record outside its size (pipe mode's
    /// tracing data, AUXTRACE data); `None` when the data has fewer left.
    pub fn take_following(&mut self, len: u64) -> Option<&'s [u8]> {
        if len > self.end - self.pos {
            return None;
        }
        let bytes = &self.bytes[self.pos as usize..(self.pos + len) as usize];
        self.pos += len;
        Some(bytes)
    }

    /// Skips `len` bytes that follow the last record; false when the data ends first.
    pub fn skip_following(&mut self, len: u64) -> bool {
        if len > self.end - self.pos {
            self.pos = self.end;
            return false;
        }
        self.pos += len;
        true
    }
}
