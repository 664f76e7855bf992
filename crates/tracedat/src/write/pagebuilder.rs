//! Packs events into kernel ring-buffer pages, the writer's side of [`crate::read::ringbuf`]: a
//! page header (timestamp, commit word with the lost-event flags) followed by records whose
//! headers hold a `type_len` and a 27-bit time delta, with time-extend or absolute-timestamp
//! records where a delta does not fit. Also generates the `header_page` and `header_event`
//! texts a kernel with the chosen layout would show, for files whose caller has none.

use crate::endian::Endian;
use crate::read::ringbuf::{
    COMMIT_LENGTH_MASK, MISSED_COUNT_STORED, MISSED_EVENTS, Missed, PageLayout, TIME_DELTA_BITS, TIME_STAMP_KEPT_MSB,
    join_event_header, type_len,
};

/// The largest payload a record's `type_len` can describe; longer ones carry a length word.
const MAX_SMALL_DATA: usize = type_len::DATA_MAX as usize * 4;
const DELTA_MASK: u64 = (1 << TIME_DELTA_BITS) - 1;

/// How records carry their time.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TimestampMode {
    /// A delta from the previous record, with a time-extend record before deltas of 27
    /// bits or more (what the kernel normally writes).
    #[default]
    Delta,
    /// An absolute-timestamp record before every event but a page's first, whose time
    /// the page header holds (the kernel's mode when absolute times are needed, e.g. by
    /// histogram triggers).
    Absolute,
}

/// Why an event cannot be put in a page.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PageError {
    #[error("an event of {size} bytes does not fit in a page holding {capacity} bytes of records")]
    EventTooLarge { size: usize, capacity: usize },
    #[error("page size {page_size} cannot hold a page header of {header} bytes and records")]
    BadPageSize { page_size: u32, header: usize },
    #[error("the page header's timestamp or commit word overlaps the data")]
    OverlappingHeader,
}

/// The timing records an event needs in the current page.
enum Timing {
    /// Only the event's own header delta.
    Delta(u32),
    /// A time-extend or absolute-timestamp record (`type_len`, delta, array word), then
    /// the event with delta 0.
    Prefixed(u32, u32, u32),
}

/// Builds one page at a time; [`PageBuilder::finish_into`] appends the finished page.
pub struct PageBuilder {
    layout: PageLayout,
    page: Vec<u8>,
    /// Bytes of records in the page so far.
    len: usize,
    events: usize,
    page_ts: u64,
    running_ts: u64,
    /// Events lost before this page.
    missed: Missed,
    /// Events lost after this page's events: the next page reports them.
    missed_after: Missed,
    mode: TimestampMode,
}

impl PageBuilder {
    pub fn new(layout: PageLayout, page_size: u32) -> Result<PageBuilder, PageError> {
        let header = layout.data_offset;
        if layout.timestamp_offset + 8 > header || layout.commit_offset + layout.commit_size > header {
            return Err(PageError::OverlappingHeader);
        }
        let room = (page_size as usize).saturating_sub(header);
        // Room for one record beside a stored lost-event count, and a length that fits
        // the commit word's 27 bits.
        if room < 8 + layout.commit_size || room as u64 > COMMIT_LENGTH_MASK {
            return Err(PageError::BadPageSize { page_size, header });
        }
        Ok(PageBuilder {
            layout,
            page: vec![0; page_size as usize],
            len: 0,
            events: 0,
            page_ts: 0,
            running_ts: 0,
            missed: Missed::None,
            missed_after: Missed::None,
            mode: TimestampMode::Delta,
        })
    }

    pub fn set_mode(&mut self, mode: TimestampMode) {
        self.mode = mode;
    }

    /// True while the page holds no event.
    pub fn is_empty(&self) -> bool {
        self.events == 0
    }

    /// Records events lost at this point (`None`: count not stored). The next event starts
    /// a page (unless this one is still empty) whose commit word reports the loss; marks
    /// before the same event add up.
    pub fn mark_lost(&mut self, count: Option<u64>) {
        let lost = count.map_or(Missed::Unknown, Missed::Count);
        if self.is_empty() {
            self.missed = self.missed.and(lost);
        } else {
            self.missed_after = self.missed_after.and(lost);
        }
    }

    /// Bytes of records the page can take.
    fn capacity(&self) -> usize {
        let stored_count = match self.missed {
            Missed::Count(_) => self.layout.commit_size,
            _ => 0,
        };
        self.page.len() - self.layout.data_offset - stored_count
    }

    /// Adds an event; `Ok(false)` when it belongs in a new page (this one is full, events
    /// were lost since its last event, or the time cannot be expressed here). An empty page
    /// always takes an event that fits a page.
    pub fn add(&mut self, ts: u64, payload: &[u8]) -> Result<bool, PageError> {
        if self.missed_after != Missed::None {
            return Ok(false);
        }
        let padded = payload.len().max(1).next_multiple_of(4);
        let small = padded <= MAX_SMALL_DATA;
        let record_len = if small { 4 + padded } else { 8 + padded };
        // A page's first event takes its time from the page header. (libtraceevent
        // reports a page's lost events only when its first record is an event.)
        let timing = if self.is_empty() {
            Timing::Delta(0)
        } else {
            match self.timing(ts) {
                Some(timing) => timing,
                None => return Ok(false),
            }
        };
        let needed = record_len + if matches!(timing, Timing::Prefixed(..)) { 8 } else { 0 };
        if self.len + needed > self.capacity() {
            if self.is_empty() {
                return Err(PageError::EventTooLarge { size: needed, capacity: self.capacity() });
            }
            return Ok(false);
        }
        if self.is_empty() {
            self.page_ts = ts;
        }
        let delta = match timing {
            Timing::Delta(delta) => delta,
            Timing::Prefixed(kind, delta, array) => {
                self.put_word(join_event_header(kind, delta, self.layout.endian));
                self.put_word(array);
                0
            }
        };
        if small {
            self.put_word(join_event_header(padded as u32 / 4, delta, self.layout.endian));
        } else {
            self.put_word(join_event_header(type_len::DATA_WITH_LENGTH, delta, self.layout.endian));
            self.put_word(padded as u32 + 4);
        }
        let at = self.layout.data_offset + self.len;
        self.page[at..at + payload.len()].copy_from_slice(payload);
        self.len += padded;
        self.running_ts = ts;
        self.events += 1;
        Ok(true)
    }

    /// How `ts` follows the previous record; `None` when it cannot in this page.
    fn timing(&self, ts: u64) -> Option<Timing> {
        match self.mode {
            TimestampMode::Absolute => {
                let same_msb = ts & TIME_STAMP_KEPT_MSB == self.running_ts & TIME_STAMP_KEPT_MSB;
                same_msb.then(|| absolute(ts))
            }
            TimestampMode::Delta => {
                let delta = ts.checked_sub(self.running_ts)?;
                if delta <= DELTA_MASK {
                    return Some(Timing::Delta(delta as u32));
                }
                let high = u32::try_from(delta >> TIME_DELTA_BITS).ok()?;
                Some(Timing::Prefixed(type_len::TIME_EXTEND, (delta & DELTA_MASK) as u32, high))
            }
        }
    }

    fn put_word(&mut self, word: u32) {
        let at = self.layout.data_offset + self.len;
        self.page[at..at + 4].copy_from_slice(&self.layout.endian.to_bytes_u32(word));
        self.len += 4;
    }

    /// Writes the page header, appends the whole page to `out` and starts a new page.
    pub fn finish_into(&mut self, out: &mut Vec<u8>) {
        let layout = self.layout;
        let mut commit = self.len as u64;
        if self.missed != Missed::None {
            commit |= MISSED_EVENTS;
        }
        if let Missed::Count(count) = self.missed {
            commit |= MISSED_COUNT_STORED;
            let at = layout.data_offset + self.len;
            put_uint(&mut self.page[at..], layout.commit_size, count, layout.endian);
        }
        put_uint(&mut self.page[layout.timestamp_offset..], 8, self.page_ts, layout.endian);
        put_uint(&mut self.page[layout.commit_offset..], layout.commit_size, commit, layout.endian);
        out.extend_from_slice(&self.page);
        self.page.fill(0);
        self.len = 0;
        self.events = 0;
        self.missed = std::mem::replace(&mut self.missed_after, Missed::None);
    }
}

fn absolute(ts: u64) -> Timing {
    let without_msb = ts & !TIME_STAMP_KEPT_MSB;
    Timing::Prefixed(type_len::TIME_STAMP, (without_msb & DELTA_MASK) as u32, (without_msb >> TIME_DELTA_BITS) as u32)
}

/// Stores the low `size` (4 or 8) bytes of `value` at the start of `buf`.
fn put_uint(buf: &mut [u8], size: usize, value: u64, endian: Endian) {
    if size == 8 {
        buf[..8].copy_from_slice(&endian.to_bytes_u64(value));
    } else {
        buf[..4].copy_from_slice(&endian.to_bytes_u32(value as u32));
    }
}

/// The `header_page` text of a kernel with this long size and page size, as the kernel's
/// `events/header_page` file shows it.
pub fn standard_header_page(long_size: u8, page_size: u32) -> String {
    let data_offset = 8 + long_size as u32;
    format!(
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
         \tfield: local_t commit;\toffset:8;\tsize:{long_size};\tsigned:1;\n\
         \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
         \tfield: char data;\toffset:{data_offset};\tsize:{};\tsigned:0;\n",
        page_size.saturating_sub(data_offset)
    )
}

/// The `header_event` text of every kernel since 2.6.31 (`events/header_event`).
pub const STANDARD_HEADER_EVENT: &str = "# compressed entry header\n\
    \ttype_len    :    5 bits\n\
    \ttime_delta  :   27 bits\n\
    \tarray       :   32 bits\n\
    \n\
    \tpadding     : type == 29\n\
    \ttime_extend : type == 30\n\
    \ttime_stamp : type == 31\n\
    \tdata max type_len  == 28\n";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::format::parse_field_list;
    use crate::read::ringbuf::{PageRecords, read_page_header};

    fn builder(endian: Endian, long_size: usize, page_size: u32) -> PageBuilder {
        PageBuilder::new(PageLayout::standard(endian, long_size), page_size).unwrap()
    }

    /// Decodes a finished page with the reader: (timestamp, payload) of every record.
    fn decode(page: &[u8], layout: &PageLayout) -> (Missed, Vec<(u64, Vec<u8>)>) {
        let header = read_page_header(page, layout).unwrap();
        let data = &page[layout.data_offset..layout.data_offset + header.data_len];
        let records = PageRecords::new(data, header.timestamp, layout.endian)
            .map(|r| {
                let r = r.unwrap();
                (r.timestamp, data[r.start..r.end].to_vec())
            })
            .collect();
        (header.missed, records)
    }

    #[test]
    fn records_of_every_kind_decode_in_both_byte_orders_and_long_sizes() {
        for endian in [Endian::Little, Endian::Big] {
            for long_size in [4, 8] {
                let mut b = builder(endian, long_size, 4096);
                let big = vec![7u8; 200]; // needs a length word
                let stamps = [1000, 1001, 1001 + (1 << 27) + 5, 1 << 60];
                b.add(stamps[0], b"abc").unwrap();
                b.add(stamps[1], &big).unwrap();
                b.add(stamps[2], b"").unwrap(); // time extend
                b.set_mode(TimestampMode::Absolute);
                assert!(!b.add(stamps[3], b"x").unwrap(), "other top bits: new page");
                b.add(stamps[2] + 3, b"abs").unwrap();
                let mut out = Vec::new();
                b.finish_into(&mut out);
                let layout = PageLayout::standard(endian, long_size);
                let (missed, records) = decode(&out, &layout);
                assert_eq!(missed, Missed::None);
                let got: Vec<u64> = records.iter().map(|r| r.0).collect();
                assert_eq!(got, [stamps[0], stamps[1], stamps[2], stamps[2] + 3]);
                assert_eq!(&records[0].1, b"abc\0");
                assert_eq!(records[1].1, big);
                assert_eq!(records[2].1, [0; 4]);
            }
        }
    }

    #[test]
    fn a_page_starts_with_an_event_in_every_mode() {
        for mode in [TimestampMode::Delta, TimestampMode::Absolute] {
            let layout = PageLayout::standard(Endian::Little, 8);
            let mut b = PageBuilder::new(layout, 4096).unwrap();
            b.set_mode(mode);
            b.add(1 << 40, b"first").unwrap();
            b.add((1 << 40) + 5, b"second").unwrap();
            let mut out = Vec::new();
            b.finish_into(&mut out);
            let first = u32::from_le_bytes(out[16..20].try_into().unwrap());
            assert_eq!(first & 31, 2, "{mode:?}: a data record of 8 bytes");
            let second = u32::from_le_bytes(out[28..32].try_into().unwrap());
            let expected_kind = match mode {
                TimestampMode::Delta => 2,
                TimestampMode::Absolute => type_len::TIME_STAMP,
            };
            assert_eq!(second & 31, expected_kind, "{mode:?}");
            let stamps: Vec<u64> = decode(&out, &layout).1.iter().map(|r| r.0).collect();
            assert_eq!(stamps, [1 << 40, (1 << 40) + 5]);
        }
    }

    #[test]
    fn full_pages_and_backward_time_start_new_pages() {
        let mut b = builder(Endian::Little, 8, 256);
        let mut added = 0;
        while b.add(10 + added, &[1u8; 40]).unwrap() {
            added += 1;
        }
        assert_eq!(added, (256 - 16) / 44);
        let mut out = Vec::new();
        b.finish_into(&mut out);
        assert!(b.is_empty());
        b.add(100, b"late").unwrap();
        assert!(!b.add(99, b"early").unwrap());
        assert_eq!(
            b.add(0, &[0u8; 300]),
            Ok(false),
            "an event too large for any page is refused by an empty page only"
        );
        b.finish_into(&mut out);
        assert_eq!(b.add(0, &[0u8; 300]), Err(PageError::EventTooLarge { size: 308, capacity: 240 }));
    }

    #[test]
    fn lost_events_with_and_without_count() {
        for long_size in [4, 8] {
            let layout = PageLayout::standard(Endian::Big, long_size);
            let mut b = PageBuilder::new(layout, 128).unwrap();
            b.mark_lost(Some(5));
            b.mark_lost(Some(7));
            while b.add(1, &[0u8; 12]).unwrap() {}
            let mut out = Vec::new();
            b.finish_into(&mut out);
            let (missed, records) = decode(&out, &layout);
            assert_eq!(missed, Missed::Count(12));
            assert_eq!(records.len(), (128 - 8 - 2 * long_size) / 16);
            b.add(2, b"x").unwrap();
            b.mark_lost(None);
            assert!(!b.add(3, b"y").unwrap(), "a loss ends the page");
            out.clear();
            b.finish_into(&mut out);
            assert_eq!(decode(&out, &layout).0, Missed::None);
            b.add(3, b"y").unwrap();
            out.clear();
            b.finish_into(&mut out);
            assert_eq!(decode(&out, &layout).0, Missed::Unknown);
        }
    }

    #[test]
    fn generated_header_page_describes_the_layout() {
        for (long_size, page_size) in [(8u8, 4096u32), (4, 1024)] {
            let text = standard_header_page(long_size, page_size);
            let fields = parse_field_list(&text, long_size).unwrap();
            let layout = PageLayout::from_header_fields(&fields, Endian::Little).unwrap();
            assert_eq!(layout, PageLayout::standard(Endian::Little, long_size as usize));
        }
        assert!(standard_header_page(8, 4096).contains("size:4080;"));
    }

    #[test]
    fn tiny_pages_are_refused() {
        let layout = PageLayout::standard(Endian::Little, 8);
        assert!(PageBuilder::new(layout, 24).is_err());
        assert!(PageBuilder::new(layout, 1 << 28).is_err());
    }
}
