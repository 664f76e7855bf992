//! The records of the data section (or of the whole stream in pipe mode), one after the
//! other: `struct perf_event_header` (type, misc, size) and the body. Read in chunks
//! through a bounds-checked window, so a record that claims more bytes than the file has
//! is an error naming it, never a read past the end or an allocation of its claim.

use crate::damage::{Located, Part};
use tracedat::{Endian, Source};

const HEADER: u64 = 8;
/// Bytes read at a time: records are at most 64 KiB, so a chunk always holds one.
const CHUNK: usize = 4 << 20;

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

/// Reads records from `start` up to `end` of a source.
pub struct Records<'s> {
    source: &'s dyn Source,
    endian: Endian,
    pos: u64,
    end: u64,
    number: u64,
    chunk: Vec<u8>,
    /// The file offset of `chunk[0]`.
    chunk_at: u64,
}

impl<'s> Records<'s> {
    pub fn new(source: &'s dyn Source, endian: Endian, start: u64, end: u64) -> Records<'s> {
        Records {
            source,
            endian,
            pos: start,
            end: end.min(source.len()),
            number: 0,
            chunk: Vec::new(),
            chunk_at: start,
        }
    }

    /// Where the next record starts.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Makes `[at, at + len)` available in the chunk.
    fn window(&mut self, at: u64, len: u64) -> std::io::Result<&[u8]> {
        let inside = at >= self.chunk_at && at + len <= self.chunk_at + self.chunk.len() as u64;
        if !inside {
            let want = (self.end - at).min(CHUNK.max(len as usize) as u64) as usize;
            self.chunk.resize(want, 0);
            self.source.read_exact_at(at, &mut self.chunk)?;
            self.chunk_at = at;
        }
        let start = (at - self.chunk_at) as usize;
        Ok(&self.chunk[start..start + len as usize])
    }

    /// The next record; `None` at the end; an error ends the reading (nothing after a
    /// record whose size is wrong can be found again).
    pub fn next(&mut self) -> Option<Result<RawRecord<'_>, Located>> {
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
        let header = match self.window(offset, HEADER) {
            Ok(bytes) => <[u8; 8]>::try_from(bytes).expect("8 bytes"),
            Err(error) => {
                self.pos = self.end;
                return fail(None, format!("cannot read record {number}: {error}"));
            }
        };
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
        if let Err(error) = self.window(offset + HEADER, size - HEADER) {
            self.pos = self.end;
            return fail(Some(kind), format!("cannot read it: {error}"));
        }
        let start = (offset + HEADER - self.chunk_at) as usize;
        let body = &self.chunk[start..start + (size - HEADER) as usize];
        Some(Ok(RawRecord { number, offset, kind, misc, body }))
    }

    /// Takes `len` bytes that follow the last record outside its size (pipe mode's
    /// tracing data, AUXTRACE data); `None` when the data has fewer left.
    pub fn take_following(&mut self, len: u64) -> Option<std::io::Result<Vec<u8>>> {
        if len > self.end - self.pos {
            return None;
        }
        let mut bytes = vec![0; len as usize];
        let read = self.source.read_exact_at(self.pos, &mut bytes);
        self.pos += len;
        Some(read.map(|()| bytes))
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
