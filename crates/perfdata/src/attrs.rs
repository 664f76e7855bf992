//! Event attributes (`struct perf_event_attr`, include/uapi/linux/perf_event.h) and what
//! they say about the records: which fields a sample carries and where (`sample_type`,
//! `read_format`), where the `sample_id` trailer of other records is (`sample_id_all`),
//! and how a record names its event (`PERF_SAMPLE_IDENTIFIER` or `PERF_SAMPLE_ID`).

use crate::damage::{Located, Part};
use tracedat::Endian;

/// `perf_event_attr.type` of tracepoints.
pub const TYPE_TRACEPOINT: u32 = 2;
/// The smallest attribute perf ever wrote (`PERF_ATTR_SIZE_VER0`).
pub const ATTR_SIZE_VER0: u32 = 64;

/// `PERF_SAMPLE_*` bits, in the order the fields follow each other in a sample.
pub mod sample {
    pub const IP: u64 = 1 << 0;
    pub const TID: u64 = 1 << 1;
    pub const TIME: u64 = 1 << 2;
    pub const ADDR: u64 = 1 << 3;
    pub const READ: u64 = 1 << 4;
    pub const CALLCHAIN: u64 = 1 << 5;
    pub const ID: u64 = 1 << 6;
    pub const CPU: u64 = 1 << 7;
    pub const PERIOD: u64 = 1 << 8;
    pub const STREAM_ID: u64 = 1 << 9;
    pub const RAW: u64 = 1 << 10;
    pub const IDENTIFIER: u64 = 1 << 16;
}

/// `PERF_FORMAT_*` bits of `read_format`.
mod read_format {
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    pub const ID: u64 = 1 << 2;
    pub const GROUP: u64 = 1 << 3;
    pub const LOST: u64 = 1 << 4;
}

/// `sample_id_all`: bit 18 of the attribute's flags word.
const FLAG_SAMPLE_ID_ALL: u64 = 1 << 18;

/// One event's attribute, as far as reading its records needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attr {
    pub kind: u32,
    /// For tracepoints, the event's id (`common_type` of its records).
    pub config: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub sample_id_all: bool,
    /// The sample ids the kernel gave this event (one per CPU or thread it was opened on).
    pub ids: Vec<u64>,
    /// The event's name, when the file says it (`EVENT_DESC`).
    pub name: Option<String>,
}

impl Attr {
    /// Reads an attribute from the start of `bytes` (its own `size` field says how many
    /// bytes it takes; later fields are not needed).
    pub fn parse(bytes: &[u8], endian: Endian, at: u64) -> Result<Attr, Located> {
        let word = |offset: usize| bytes.get(offset..offset + 8).map(|b| endian.u64(b.try_into().expect("8 bytes")));
        let short =
            || Located::new(Part::Attributes, at, format!("an attribute of {} bytes is too short", bytes.len()));
        let head = word(0).ok_or_else(short)?;
        let (kind, size) = match endian {
            Endian::Little => (head as u32, (head >> 32) as u32),
            Endian::Big => ((head >> 32) as u32, head as u32),
        };
        if size < ATTR_SIZE_VER0 {
            return Err(Located::new(Part::Attributes, at, format!("attribute size {size} (the smallest is 64)")));
        }
        let flags = word(40).ok_or_else(short)?;
        Ok(Attr {
            kind,
            config: word(8).ok_or_else(short)?,
            sample_type: word(24).ok_or_else(short)?,
            read_format: word(32).ok_or_else(short)?,
            sample_id_all: flags & FLAG_SAMPLE_ID_ALL != 0,
            ids: Vec::new(),
            name: None,
        })
    }

    /// The size the attribute says it has (its second 32-bit word).
    pub fn declared_size(bytes: &[u8], endian: Endian) -> Option<u32> {
        bytes.get(4..8).map(|b| endian.u32(b.try_into().expect("4 bytes")))
    }

    pub fn is_tracepoint(&self) -> bool {
        self.kind == TYPE_TRACEPOINT
    }

    fn has(&self, bit: u64) -> bool {
        self.sample_type & bit != 0
    }

    /// Where a sample of this event keeps its id, if it carries one.
    fn sample_id_offset(&self) -> Option<usize> {
        if self.has(sample::IDENTIFIER) {
            return Some(0);
        }
        self.has(sample::ID)
            .then(|| 8 * popcount(self.sample_type & (sample::IP | sample::TID | sample::TIME | sample::ADDR)))
    }

    /// Where another record of this event keeps its id, counted from the record's end.
    fn trailer_id_from_end(&self) -> Option<usize> {
        if !self.sample_id_all {
            return None;
        }
        if self.has(sample::IDENTIFIER) {
            return Some(8);
        }
        self.has(sample::ID).then(|| 8 * (1 + popcount(self.sample_type & (sample::STREAM_ID | sample::CPU))))
    }

    /// The fields of a sample of this event that the reader needs.
    pub fn sample(&self, body: &[u8], endian: Endian) -> Result<Sample, &'static str> {
        let mut r = Fields { body, pos: 0, endian };
        if self.has(sample::IDENTIFIER) {
            r.skip(8)?;
        }
        if self.has(sample::IP) {
            r.skip(8)?;
        }
        let tid = if self.has(sample::TID) { Some(r.pair()?) } else { None };
        let time = if self.has(sample::TIME) { Some(r.u64()?) } else { None };
        r.skip(8 * popcount(self.sample_type & (sample::ADDR | sample::ID | sample::STREAM_ID)))?;
        let cpu = if self.has(sample::CPU) { Some(r.pair()?.0) } else { None };
        if self.has(sample::PERIOD) {
            r.skip(8)?;
        }
        if self.has(sample::READ) {
            self.skip_read(&mut r)?;
        }
        if self.has(sample::CALLCHAIN) {
            let entries = r.u64()?;
            r.skip_words(entries)?;
        }
        let raw = if self.has(sample::RAW) {
            let size = r.u32()? as usize;
            Some(
                r.pos
                    ..r.pos
                        .checked_add(size)
                        .filter(|&end| end <= body.len())
                        .ok_or("its raw data runs past the record")?,
            )
        } else {
            None
        };
        Ok(Sample { tid: tid.map(|(pid, tid)| (pid as i32, tid as i32)), time, cpu, raw })
    }

    /// Steps over a `PERF_SAMPLE_READ` block (one value, or a group's).
    fn skip_read(&self, r: &mut Fields<'_>) -> Result<(), &'static str> {
        let format = self.read_format;
        let per_value = 1 + popcount(format & (read_format::ID | read_format::LOST));
        let times = popcount(format & (read_format::TOTAL_TIME_ENABLED | read_format::TOTAL_TIME_RUNNING));
        if format & read_format::GROUP != 0 {
            let values = r.u64()?;
            r.skip(8 * times)?;
            r.skip_words(values.checked_mul(per_value as u64).ok_or("its read group is too large")?)
        } else {
            r.skip(8 * (per_value + times))
        }
    }

    /// The `sample_id` trailer of another record of this event.
    pub fn trailer(&self, body: &[u8], endian: Endian) -> Trailer {
        if !self.sample_id_all {
            return Trailer::default();
        }
        let bits = sample::TID | sample::TIME | sample::ID | sample::STREAM_ID | sample::CPU | sample::IDENTIFIER;
        let Some(start) = body.len().checked_sub(8 * popcount(self.sample_type & bits)) else {
            return Trailer::default();
        };
        let mut r = Fields { body, pos: start, endian };
        let tid = if self.has(sample::TID) { r.pair().ok() } else { None };
        let time = if self.has(sample::TIME) { r.u64().ok() } else { None };
        let _ = r.skip(8 * popcount(self.sample_type & (sample::ID | sample::STREAM_ID)));
        let cpu = if self.has(sample::CPU) { r.pair().ok().map(|(cpu, _)| cpu) } else { None };
        Trailer { tid: tid.map(|(pid, tid)| (pid as i32, tid as i32)), time, cpu }
    }
}

fn popcount(bits: u64) -> usize {
    bits.count_ones() as usize
}

/// What a sample says, as far as the reader needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// (pid, tid)
    pub tid: Option<(i32, i32)>,
    pub time: Option<u64>,
    pub cpu: Option<u32>,
    /// Where the raw payload lies in the record's body.
    pub raw: Option<std::ops::Range<usize>>,
}

/// What a `sample_id` trailer says.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Trailer {
    pub tid: Option<(i32, i32)>,
    pub time: Option<u64>,
    pub cpu: Option<u32>,
}

/// A bounds-checked walk over a record's body.
struct Fields<'a> {
    body: &'a [u8],
    pos: usize,
    endian: Endian,
}

impl Fields<'_> {
    fn skip(&mut self, n: usize) -> Result<(), &'static str> {
        self.pos =
            self.pos.checked_add(n).filter(|&end| end <= self.body.len()).ok_or("its fields run past the record")?;
        Ok(())
    }

    fn skip_words(&mut self, words: u64) -> Result<(), &'static str> {
        let bytes =
            words.checked_mul(8).and_then(|b| usize::try_from(b).ok()).ok_or("its fields run past the record")?;
        self.skip(bytes)
    }

    fn u64(&mut self) -> Result<u64, &'static str> {
        let at = self.pos;
        self.skip(8)?;
        Ok(self.endian.u64(self.body[at..at + 8].try_into().expect("8 bytes")))
    }

    fn u32(&mut self) -> Result<u32, &'static str> {
        let at = self.pos;
        self.skip(4)?;
        Ok(self.endian.u32(self.body[at..at + 4].try_into().expect("4 bytes")))
    }

    /// Two 32-bit numbers (pid and tid, cpu and reserved).
    fn pair(&mut self) -> Result<(u32, u32), &'static str> {
        Ok((self.u32()?, self.u32()?))
    }
}

/// How records name their event, decided once for all attributes.
#[derive(Clone, Debug)]
pub enum IdLayout {
    /// One event: every record is its.
    Single,
    /// Samples keep the id at this offset; other records this far from their end (or
    /// not at all).
    At { sample: usize, trailer_from_end: Option<usize> },
}

impl IdLayout {
    /// The layout every attribute agrees on, or why records cannot be told apart.
    pub fn of(attrs: &[Attr]) -> Result<IdLayout, String> {
        if attrs.len() <= 1 {
            return Ok(IdLayout::Single);
        }
        let first = &attrs[0];
        let sample = first.sample_id_offset();
        let trailer = first.trailer_id_from_end();
        if let Some(other) = attrs.iter().find(|a| a.sample_id_offset() != sample || a.trailer_id_from_end() != trailer)
        {
            return Err(format!(
                "the events record their ids at different places (sample_type {:#x} and {:#x}); perf writes PERF_SAMPLE_IDENTIFIER when it records several events",
                first.sample_type, other.sample_type
            ));
        }
        match sample {
            Some(sample) => Ok(IdLayout::At { sample, trailer_from_end: trailer }),
            None => {
                Err("several events, but their samples carry no id (PERF_SAMPLE_ID or PERF_SAMPLE_IDENTIFIER)".into())
            }
        }
    }
}

/// Finds the attribute of a record by its id.
#[derive(Clone, Debug)]
pub struct Attrs {
    pub list: Vec<Attr>,
    layout: IdLayout,
    /// (id, attribute index), sorted by id.
    by_id: Vec<(u64, usize)>,
    endian: Endian,
}

impl Attrs {
    pub fn new(list: Vec<Attr>, endian: Endian) -> Result<Attrs, String> {
        let layout = IdLayout::of(&list)?;
        let mut by_id: Vec<(u64, usize)> =
            list.iter().enumerate().flat_map(|(index, attr)| attr.ids.iter().map(move |&id| (id, index))).collect();
        by_id.sort_unstable();
        Ok(Attrs { list, layout, by_id, endian })
    }

    fn find(&self, id: u64) -> Option<usize> {
        self.by_id.binary_search_by_key(&id, |&(id, _)| id).ok().map(|i| self.by_id[i].1)
    }

    fn word(&self, body: &[u8], at: usize) -> Option<u64> {
        body.get(at..at.checked_add(8)?).map(|b| self.endian.u64(b.try_into().expect("8 bytes")))
    }

    /// The attribute of a sample: `Err(id)` when its id names none (`None` when the
    /// record is too short to hold an id).
    pub fn of_sample(&self, body: &[u8]) -> Result<usize, Option<u64>> {
        match self.layout {
            IdLayout::Single => Ok(0),
            IdLayout::At { sample, .. } => {
                let id = self.word(body, sample).ok_or(None)?;
                self.find(id).ok_or(Some(id))
            }
        }
    }

    /// The attribute of another record, when it says.
    pub fn of_other(&self, body: &[u8]) -> Option<usize> {
        match self.layout {
            IdLayout::Single => Some(0),
            IdLayout::At { trailer_from_end, .. } => {
                let id = self.word(body, body.len().checked_sub(trailer_from_end?)?)?;
                self.find(id)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(sample_type: u64, read_format: u64) -> Attr {
        Attr { kind: 2, config: 1, sample_type, read_format, sample_id_all: true, ids: vec![7], name: None }
    }

    fn words(values: &[u64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn finds_the_raw_payload_after_a_read_group_and_a_callchain() {
        use sample::*;
        let a =
            attr(IDENTIFIER | TID | TIME | CPU | PERIOD | READ | CALLCHAIN | RAW, read_format::GROUP | read_format::ID);
        let mut body = words(&[7, (5u64 << 32) | 4, 1000, 3, 1, 2, 10, 11, 20, 21, 2, 0xa, 0xb]);
        body.extend(6u32.to_le_bytes());
        body.extend(b"abcdef");
        let s = a.sample(&body, Endian::Little).unwrap();
        assert_eq!((s.tid, s.time, s.cpu), (Some((4, 5)), Some(1000), Some(3)));
        assert_eq!(&body[s.raw.unwrap()], b"abcdef");
    }

    #[test]
    fn damaged_counts_are_errors_not_overflows() {
        use sample::*;
        let a = attr(CALLCHAIN | RAW, 0);
        assert!(a.sample(&words(&[u64::MAX]), Endian::Little).is_err());
        let b = attr(READ | RAW, read_format::GROUP | read_format::ID | read_format::LOST);
        assert!(b.sample(&words(&[u64::MAX / 2]), Endian::Little).is_err());
        let c = attr(RAW, 0);
        let mut body = u32::MAX.to_le_bytes().to_vec();
        body.extend([0; 4]);
        assert!(c.sample(&body, Endian::Little).is_err());
    }

    #[test]
    fn trailers_are_read_from_the_end() {
        use sample::*;
        let a = attr(IDENTIFIER | TID | TIME | CPU, 0);
        let body = words(&[99, 98, (2u64 << 32) | 1, 500, 3, 7]);
        let t = a.trailer(&body, Endian::Little);
        assert_eq!((t.tid, t.time, t.cpu), (Some((1, 2)), Some(500), Some(3)));
        let attrs = Attrs::new(vec![a.clone(), Attr { ids: vec![8], ..a }], Endian::Little).unwrap();
        assert_eq!(attrs.of_other(&body), Some(0));
        assert_eq!(attrs.of_sample(&words(&[8])), Ok(1));
        assert_eq!(attrs.of_sample(&words(&[9])), Err(Some(9)));
    }
}
