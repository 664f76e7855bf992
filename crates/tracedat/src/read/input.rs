//! Bounds-checked, endian-aware reading of the file's metadata, from a file on disk or
//! from bytes in memory (decompressed sections, tests, the fuzzer). Every read is checked
//! against what is left, so a corrupt size can neither panic nor allocate unbounded memory.

use crate::endian::Endian;
use crate::error::{ErrorKind, LResult, Located, Section};
use std::io;

/// Random-access bytes: a trace file on disk or a buffer in memory.
pub trait Source: Send + Sync {
    fn len(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fills `buf` from `offset`; an error if the source ends first.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
}

impl Source for std::fs::File {
    fn len(&self) -> u64 {
        self.metadata().map(|m| m.len()).unwrap_or(0)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }
}

/// A file whose length is taken once, at open, so that every bounds check agrees.
pub(crate) struct SizedFile {
    pub file: std::fs::File,
    pub len: u64,
}

impl Source for SizedFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
    }
}

impl Source for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let bytes =
            start.checked_add(buf.len()).and_then(|end| self.get(start..end)).ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

/// Where a [`Reader`] gets its bytes.
#[derive(Copy, Clone)]
enum Backing<'a> {
    Source(&'a dyn Source),
    /// In-memory bytes, e.g. a decompressed section; `base` is the file offset
    /// reported in errors (the section's own offset).
    Memory {
        bytes: &'a [u8],
        base: u64,
    },
}

/// A sequential reader over a window of the input, naming its section in errors.
pub(crate) struct Reader<'a> {
    backing: Backing<'a>,
    pos: u64,
    end: u64,
    pub endian: Endian,
    pub section: Section,
}

impl<'a> Reader<'a> {
    pub fn over_source(source: &'a dyn Source, pos: u64, endian: Endian, section: Section) -> Self {
        Reader { backing: Backing::Source(source), pos, end: source.len(), endian, section }
    }

    pub fn over_memory(bytes: &'a [u8], base: u64, endian: Endian, section: Section) -> Self {
        let end = bytes.len() as u64;
        Reader { backing: Backing::Memory { bytes, base }, pos: 0, end, endian, section }
    }

    /// The file offset of the next byte (for memory readers, the section's offset plus
    /// the position inside it).
    pub fn offset(&self) -> u64 {
        match self.backing {
            Backing::Source(_) => self.pos,
            Backing::Memory { base, .. } => base.saturating_add(self.pos),
        }
    }

    pub fn remaining(&self) -> u64 {
        self.end.saturating_sub(self.pos)
    }

    pub fn is_at_end(&self) -> bool {
        self.remaining() == 0
    }

    pub fn error(&self, kind: ErrorKind) -> Located {
        Located::new(self.section.clone(), self.offset(), kind)
    }

    pub fn malformed(&self, message: impl Into<String>) -> Located {
        self.error(ErrorKind::Malformed(message.into()))
    }

    fn check(&self, n: u64) -> LResult<()> {
        if n > self.remaining() {
            return Err(self.error(ErrorKind::Truncated { needed: n, available: self.remaining() }));
        }
        Ok(())
    }

    pub fn read_into(&mut self, buf: &mut [u8]) -> LResult<()> {
        self.check(buf.len() as u64)?;
        match self.backing {
            Backing::Source(src) => src.read_exact_at(self.pos, buf).map_err(|e| self.error(e.into()))?,
            Backing::Memory { bytes, .. } => {
                let start = self.pos as usize;
                buf.copy_from_slice(&bytes[start..start + buf.len()]);
            }
        }
        self.pos += buf.len() as u64;
        Ok(())
    }

    fn array<const N: usize>(&mut self) -> LResult<[u8; N]> {
        let mut b = [0u8; N];
        self.read_into(&mut b)?;
        Ok(b)
    }

    pub fn u8(&mut self) -> LResult<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> LResult<u16> {
        Ok(self.endian.u16(self.array()?))
    }

    pub fn u32(&mut self) -> LResult<u32> {
        Ok(self.endian.u32(self.array()?))
    }

    pub fn u64(&mut self) -> LResult<u64> {
        Ok(self.endian.u64(self.array()?))
    }

    /// Reads `n` bytes; fails before allocating when fewer are left.
    pub fn bytes(&mut self, n: u64) -> LResult<Vec<u8>> {
        self.check(n)?;
        let mut v = vec![0u8; n as usize];
        self.read_into(&mut v)?;
        Ok(v)
    }

    pub fn skip(&mut self, n: u64) -> LResult<()> {
        self.check(n)?;
        self.pos += n;
        Ok(())
    }

    /// Reads a NUL-terminated string of at most `max` bytes (terminator excluded).
    pub fn cstr(&mut self, max: usize) -> LResult<String> {
        let start = self.offset();
        let mut out = Vec::new();
        loop {
            let b = self.u8()?;
            if b == 0 {
                return Ok(String::from_utf8_lossy(&out).into_owned());
            }
            if out.len() == max {
                return Err(Located::malformed(
                    self.section.clone(),
                    start,
                    format!("string longer than {max} bytes without terminator"),
                ));
            }
            out.push(b);
        }
    }

    /// Checks that the next bytes are exactly `expected`.
    pub fn expect(&mut self, expected: &'static [u8], what: &'static str) -> LResult<()> {
        let at = self.offset();
        let found = self.bytes(expected.len() as u64)?;
        if found != expected {
            return Err(Located::new(
                self.section.clone(),
                at,
                ErrorKind::Unexpected { expected: what, found: String::from_utf8_lossy(&found).into_owned() },
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_numbers_in_both_byte_orders() {
        let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let mut le = Reader::over_memory(&data, 0, Endian::Little, Section::Options);
        assert_eq!(le.u32().unwrap(), 0x0403_0201);
        let mut be = Reader::over_memory(&data, 0, Endian::Big, Section::Options);
        assert_eq!(be.u64().unwrap(), 0x0102_0304_0506_0708);
    }

    #[test]
    fn refuses_to_read_past_the_end_without_allocating() {
        let data = [0u8; 4];
        let mut r = Reader::over_memory(&data, 100, Endian::Little, Section::Kallsyms);
        let err = r.bytes(u64::MAX).unwrap_err();
        assert!(matches!(err.kind, ErrorKind::Truncated { available: 4, .. }));
        assert_eq!(err.offset, 100);
    }

    #[test]
    fn cstr_needs_a_terminator_within_the_limit() {
        let data = b"abc\0defg";
        let mut r = Reader::over_memory(data, 0, Endian::Little, Section::FileHeader);
        assert_eq!(r.cstr(10).unwrap(), "abc");
        assert!(r.cstr(2).is_err());
    }
}
