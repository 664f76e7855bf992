//! The kernel ring buffer's page format: a page header (timestamp, commit word with the
//! "events were lost" flags) and compressed event headers (type_len, time_delta) with
//! data, padding, time-extend and absolute-timestamp records. Decoding is bounds-checked:
//! a damaged page ends early with an error instead of reading past its data.

use crate::endian::Endian;
use crate::error::ErrorKind;
use crate::read::format::Field;

/// Record types encoded in `type_len`.
pub mod type_len {
    /// Data record whose length is stored in the first 32-bit word of the payload.
    pub const DATA_WITH_LENGTH: u32 = 0;
    /// Largest `type_len` of a data record (length `type_len * 4`).
    pub const DATA_MAX: u32 = 28;
    pub const PADDING: u32 = 29;
    pub const TIME_EXTEND: u32 = 30;
    pub const TIME_STAMP: u32 = 31;
}

/// Bits of the time delta in an event header; a time extend supplies the bits above.
pub const TIME_DELTA_BITS: u32 = 27;
/// Bits of an absolute timestamp kept from the running time (the top 5).
pub(crate) const TIME_STAMP_KEPT_MSB: u64 = 0xf8 << 56;
/// Commit-word bits: the data length, and the flags for events lost before this page.
pub(crate) const COMMIT_LENGTH_MASK: u64 = (1 << 27) - 1;
pub(crate) const MISSED_EVENTS: u64 = 1 << 31;
pub(crate) const MISSED_COUNT_STORED: u64 = 1 << 30;

/// Where a page keeps its header fields, from the file's `header_page`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PageLayout {
    pub endian: Endian,
    pub timestamp_offset: usize,
    pub commit_offset: usize,
    /// The kernel's long size (4 or 8): the size of the commit word and of the stored
    /// lost-event count.
    pub commit_size: usize,
    pub data_offset: usize,
}

impl PageLayout {
    /// Reads the layout from the `header_page` fields; `None` when a field is missing or
    /// has a size the ring buffer never used.
    pub fn from_header_fields(fields: &[Field], endian: Endian) -> Option<PageLayout> {
        let find = |name: &str| fields.iter().find(|f| f.name == name);
        let timestamp = find("timestamp")?;
        let commit = find("commit")?;
        let data = find("data")?;
        let valid = timestamp.size == 8
            && matches!(commit.size, 4 | 8)
            && u64::from(data.offset) >= u64::from(commit.offset) + u64::from(commit.size);
        valid.then_some(PageLayout {
            endian,
            timestamp_offset: timestamp.offset as usize,
            commit_offset: commit.offset as usize,
            commit_size: commit.size as usize,
            data_offset: data.offset as usize,
        })
    }

    /// The layout of a kernel with the given long size, as every kernel since 2.6.31 has.
    pub fn standard(endian: Endian, long_size: usize) -> PageLayout {
        PageLayout { endian, timestamp_offset: 0, commit_offset: 8, commit_size: long_size, data_offset: 8 + long_size }
    }
}

/// Events the kernel dropped before a page, as its commit word reports them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Missed {
    None,
    /// Events were lost, but the kernel did not store how many.
    Unknown,
    Count(u64),
}

impl Missed {
    /// Losses reported one after the other add up; an unknown count wins.
    pub fn and(self, later: Missed) -> Missed {
        match (self, later) {
            (Missed::None, x) | (x, Missed::None) => x,
            (Missed::Count(x), Missed::Count(y)) => Missed::Count(x.saturating_add(y)),
            _ => Missed::Unknown,
        }
    }
}

/// A decoded page header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PageHeader {
    pub timestamp: u64,
    /// Length of the event data following the header.
    pub data_len: usize,
    pub missed: Missed,
}

/// Reads a page header; the data length must fit in the page.
pub fn read_page_header(page: &[u8], layout: &PageLayout) -> Result<PageHeader, ErrorKind> {
    let e = layout.endian;
    let too_short = || ErrorKind::Malformed(format!("page of {} bytes is too short for its header", page.len()));
    let timestamp = e.read_uint(page.get(layout.timestamp_offset..).ok_or_else(too_short)?, 8).ok_or_else(too_short)?;
    let commit = e
        .read_uint(page.get(layout.commit_offset..).ok_or_else(too_short)?, layout.commit_size)
        .ok_or_else(too_short)?;
    let data_len = (commit & COMMIT_LENGTH_MASK) as usize;
    let data_end = layout.data_offset + data_len;
    if data_end > page.len() {
        return Err(ErrorKind::Malformed(format!(
            "page claims {data_len} bytes of data but only {} fit",
            page.len().saturating_sub(layout.data_offset)
        )));
    }
    let missed = if commit & MISSED_EVENTS == 0 {
        Missed::None
    } else if commit & MISSED_COUNT_STORED != 0 {
        page.get(data_end..).and_then(|b| e.read_uint(b, layout.commit_size)).map_or(Missed::Unknown, Missed::Count)
    } else {
        Missed::Unknown
    };
    Ok(PageHeader { timestamp, data_len, missed })
}

/// Splits an event header word into (type_len, time_delta).
#[inline]
pub fn split_event_header(word: u32, endian: Endian) -> (u32, u32) {
    match endian {
        Endian::Little => (word & 31, word >> 5),
        Endian::Big => (word >> 27, word & ((1 << TIME_DELTA_BITS) - 1)),
    }
}

/// Builds an event header word (for the writer).
pub fn join_event_header(type_len: u32, delta: u32, endian: Endian) -> u32 {
    match endian {
        Endian::Little => (delta << 5) | (type_len & 31),
        Endian::Big => (type_len << 27) | (delta & ((1 << TIME_DELTA_BITS) - 1)),
    }
}

/// A data record found in a page: its raw timestamp and where its payload lies
/// (offsets relative to the start of the page's data area).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawRecord {
    pub timestamp: u64,
    pub start: usize,
    pub end: usize,
}

/// Walks the records of one page's data area, yielding data records with their absolute
/// (uncorrected) timestamps. Ends at the end of the data, or with one error at damage.
pub struct PageRecords<'p> {
    data: &'p [u8],
    pos: usize,
    timestamp: u64,
    endian: Endian,
    failed: bool,
}

impl<'p> PageRecords<'p> {
    /// `data` is the page's data area (after the header, `data_len` bytes);
    /// `timestamp` the page header's timestamp.
    pub fn new(data: &'p [u8], timestamp: u64, endian: Endian) -> Self {
        Self::resume(data, 0, timestamp, endian)
    }

    /// Continues a walk stopped at `position()` with the running `timestamp()`.
    pub fn resume(data: &'p [u8], pos: usize, timestamp: u64, endian: Endian) -> Self {
        PageRecords { data, pos, timestamp, endian, failed: false }
    }

    /// Offset in the data area of the next record header.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The running timestamp after the records walked so far.
    pub fn timestamp(&self) -> u64 {
        self.timestamp
    }

    fn word(&self, at: usize) -> Option<u32> {
        self.data.get(at..at + 4).map(|b| self.endian.u32(b.try_into().expect("4 bytes")))
    }

    #[cold]
    fn fail(&mut self, message: String) -> Option<Result<RawRecord, ErrorKind>> {
        self.failed = true;
        Some(Err(ErrorKind::Malformed(message)))
    }
}

impl Iterator for PageRecords<'_> {
    type Item = Result<RawRecord, ErrorKind>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed && self.pos < self.data.len() {
            let at = self.pos;
            let Some(header) = self.word(at) else {
                return self.fail(format!("record header at data offset {at} is cut off"));
            };
            let (kind, delta) = split_event_header(header, self.endian);
            match kind {
                type_len::PADDING => {
                    // The padding's length word may be missing when it fills the page's end.
                    let length = self.word(at + 4).unwrap_or(0) as usize;
                    self.timestamp = self.timestamp.wrapping_add(delta as u64);
                    self.pos = (at + 4).saturating_add(length).max(at + 4);
                }
                type_len::TIME_EXTEND | type_len::TIME_STAMP => {
                    let Some(high) = self.word(at + 4) else {
                        return self.fail(format!("time record at data offset {at} is cut off"));
                    };
                    let value = ((high as u64) << TIME_DELTA_BITS) + delta as u64;
                    self.timestamp = if kind == type_len::TIME_STAMP {
                        value | (self.timestamp & TIME_STAMP_KEPT_MSB)
                    } else {
                        self.timestamp.wrapping_add(value)
                    };
                    self.pos = at + 8;
                }
                _ => {
                    let (start, length) = if kind == type_len::DATA_WITH_LENGTH {
                        match self.word(at + 4) {
                            Some(len) if len >= 4 => (at + 8, ((len as usize - 4) + 3) & !3),
                            _ => {
                                return self.fail(format!("bad length word of record at data offset {at}"));
                            }
                        }
                    } else {
                        (at + 4, kind as usize * 4)
                    };
                    let end = start + length;
                    if end > self.data.len() {
                        return self.fail(format!(
                            "record at data offset {at} needs {length} bytes, the page has {}",
                            self.data.len() - start.min(self.data.len())
                        ));
                    }
                    self.timestamp = self.timestamp.wrapping_add(delta as u64);
                    self.pos = end;
                    return Some(Ok(RawRecord { timestamp: self.timestamp, start, end }));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kind: u32, delta: u32) -> [u8; 4] {
        join_event_header(kind, delta, Endian::Little).to_le_bytes()
    }

    #[test]
    fn event_header_bits_in_both_byte_orders() {
        for endian in [Endian::Little, Endian::Big] {
            let word = join_event_header(7, 0x123_4567, endian);
            assert_eq!(split_event_header(word, endian), (7, 0x123_4567));
        }
    }

    #[test]
    fn walks_every_record_type() {
        let mut data = Vec::new();
        data.extend(header(2, 10)); // 8-byte data record
        data.extend([1u8; 8]);
        data.extend(header(type_len::TIME_EXTEND, 5));
        data.extend(2u32.to_le_bytes()); // + (2 << 27) + 5
        data.extend(header(0, 1)); // length-word record: 6 payload bytes, padded to 8
        data.extend(10u32.to_le_bytes());
        data.extend([2u8; 8]);
        data.extend(header(type_len::PADDING, 0)); // its length counts from after the header
        data.extend(8u32.to_le_bytes());
        data.extend([0u8; 4]);
        data.extend(header(type_len::TIME_STAMP, 3));
        data.extend(1u32.to_le_bytes()); // absolute (1 << 27) + 3
        data.extend(header(1, 0));
        data.extend([3u8; 4]);
        let records: Vec<_> = PageRecords::new(&data, 1000, Endian::Little).map(Result::unwrap).collect();
        let stamps: Vec<_> = records.iter().map(|r| r.timestamp).collect();
        let extended = 1010 + (2 << 27) + 5 + 1;
        assert_eq!(stamps, [1010, extended, (1 << 27) + 3]);
        assert_eq!(&data[records[1].start..records[1].end], &[2u8; 8]);
        assert_eq!(records[2].end - records[2].start, 4);
    }

    #[test]
    fn header_page_offsets_near_the_limit_are_refused() {
        let text = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
                    \tfield: local_t commit;\toffset:4294967295;\tsize:8;\tsigned:1;\n\
                    \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        let fields = crate::read::format::parse_field_list(text, 8).unwrap();
        assert_eq!(PageLayout::from_header_fields(&fields, Endian::Little), None);
    }

    #[test]
    fn overrunning_record_is_one_error() {
        let mut data = Vec::new();
        data.extend(header(5, 0)); // claims 20 bytes
        data.extend([0u8; 8]);
        let mut it = PageRecords::new(&data, 0, Endian::Little);
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
    }

    #[test]
    fn page_header_with_stored_lost_count() {
        let layout = PageLayout::standard(Endian::Little, 8);
        let mut page = vec![0u8; 64];
        page[..8].copy_from_slice(&77u64.to_le_bytes());
        let commit = 8u64 | MISSED_EVENTS | MISSED_COUNT_STORED;
        page[8..16].copy_from_slice(&commit.to_le_bytes());
        page[24..32].copy_from_slice(&160u64.to_le_bytes());
        let h = read_page_header(&page, &layout).unwrap();
        assert_eq!(h, PageHeader { timestamp: 77, data_len: 8, missed: Missed::Count(160) });
        page[8..16].copy_from_slice(&(8u64 | MISSED_EVENTS).to_le_bytes());
        assert_eq!(read_page_header(&page, &layout).unwrap().missed, Missed::Unknown);
        page[8..16].copy_from_slice(&4000u64.to_le_bytes());
        assert!(read_page_header(&page, &layout).is_err());
    }
}
