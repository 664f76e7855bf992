//! Each CPU's tracepoint records and loss notices, copied out of the file in one pass and
//! kept in time order: perf writes each CPU's ring buffer in order, but orders records
//! across CPUs only within rounds, so a CPU whose records go back in time (several
//! buffers per CPU, damaged times) is sorted once, stably, by an index. Entries are packed
//! one after the other: 8 bytes of time, 4 of tag (the payload's length, or
//! [`LOSS_TAG`]), 4 of padding, then the payload (padded to 8) or the lost count.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tracedat::{Cpu, Endian, Event, EventItems, Formats, Item, Lost, Nanos};

/// The tag of an entry that notes lost records.
const LOSS_TAG: u32 = u32::MAX;
const ENTRY_HEADER: usize = 16;

/// One CPU's entries.
#[derive(Clone, Debug, Default)]
pub struct CpuStore {
    pub cpu: u32,
    bytes: Vec<u8>,
    /// Entry starts in time order, when file order is not.
    order: Option<Vec<usize>>,
    last_time: u64,
    out_of_order: bool,
    pub events: u64,
    pub losses: u64,
}

impl CpuStore {
    pub fn new(cpu: u32) -> CpuStore {
        CpuStore { cpu, ..CpuStore::default() }
    }

    fn note_time(&mut self, time: u64) {
        self.out_of_order |= time < self.last_time;
        self.last_time = time;
    }

    fn header(&mut self, time: u64, tag: u32) {
        self.note_time(time);
        self.bytes.extend_from_slice(&time.to_ne_bytes());
        self.bytes.extend_from_slice(&tag.to_ne_bytes());
        self.bytes.extend_from_slice(&[0; 4]);
    }

    pub fn push_event(&mut self, time: u64, payload: &[u8]) {
        self.header(time, payload.len() as u32);
        self.bytes.extend_from_slice(payload);
        self.bytes.resize(self.bytes.len().next_multiple_of(8), 0);
        self.events += 1;
    }

    /// Notes `count` lost records (`None`: perf did not say how many).
    pub fn push_loss(&mut self, time: u64, count: Option<u64>) {
        self.header(time, LOSS_TAG);
        self.bytes.extend_from_slice(&count.unwrap_or(u64::MAX).to_ne_bytes());
        self.losses += 1;
    }

    /// The time of the last entry (for a loss that does not say its own).
    pub fn last_time(&self) -> u64 {
        self.last_time
    }

    pub fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Puts the entries in time order if they are not (stable: equal times keep file
    /// order).
    pub fn finish(&mut self) {
        self.bytes.shrink_to_fit();
        if !self.out_of_order {
            return;
        }
        let mut starts = Vec::new();
        let mut at = 0;
        while at < self.bytes.len() {
            starts.push(at);
            at = next_entry(&self.bytes, at);
        }
        starts.sort_by_key(|&start| entry_time(&self.bytes, start));
        self.order = Some(starts);
    }
}

#[inline]
fn entry_time(bytes: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(bytes[at..at + 8].try_into().expect("an entry header"))
}

#[inline]
fn entry_tag(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(bytes[at + 8..at + 12].try_into().expect("an entry header"))
}

#[inline]
fn next_entry(bytes: &[u8], at: usize) -> usize {
    match entry_tag(bytes, at) {
        LOSS_TAG => at + ENTRY_HEADER + 8,
        len => at + ENTRY_HEADER + (len as usize).next_multiple_of(8),
    }
}

/// A cursor over one CPU's entries.
#[derive(Clone, Debug)]
struct Cursor<'s> {
    store: &'s CpuStore,
    /// Byte position (file order) or index into the order.
    next: usize,
}

impl<'s> Cursor<'s> {
    /// The start of the next entry, if any.
    #[inline]
    fn peek(&self) -> Option<usize> {
        match &self.store.order {
            None => (self.next < self.store.bytes.len()).then_some(self.next),
            Some(order) => order.get(self.next).copied(),
        }
    }

    #[inline]
    fn advance(&mut self, at: usize) {
        self.next = match self.store.order {
            None => next_entry(&self.store.bytes, at),
            Some(_) => self.next + 1,
        };
    }

    fn time(&self) -> Option<u64> {
        self.peek().map(|at| entry_time(&self.store.bytes, at))
    }
}

/// Events and loss notices of one CPU, or of several merged in time order (ties to the
/// lower CPU). Consecutive losses on a CPU are reported as one notice.
pub struct Events<'s> {
    cursors: Vec<Cursor<'s>>,
    /// Cursors by their next entry's time (with several), the earliest on top.
    waiting: BinaryHeap<Reverse<(u64, usize)>>,
    formats: &'s Formats,
    endian: Endian,
    unknown: u64,
    done: u64,
}

impl<'s> Events<'s> {
    pub(crate) fn new(stores: impl Iterator<Item = &'s CpuStore>, formats: &'s Formats, endian: Endian) -> Self {
        let cursors: Vec<Cursor<'s>> = stores.map(|store| Cursor { store, next: 0 }).collect();
        let waiting = match cursors.len() {
            1 => BinaryHeap::new(),
            _ => cursors.iter().enumerate().filter_map(|(index, c)| Some(Reverse((c.time()?, index)))).collect(),
        };
        Events { cursors, waiting, formats, endian, unknown: 0, done: 0 }
    }

    /// The cursor whose next entry comes first, taken off the heap (put back by
    /// [`Self::requeue`]).
    #[inline]
    fn earliest(&mut self) -> Option<usize> {
        if let [only] = &self.cursors[..] {
            return only.peek().map(|_| 0);
        }
        self.waiting.pop().map(|Reverse((_, index))| index)
    }

    #[inline]
    fn requeue(&mut self, index: usize) {
        if self.cursors.len() > 1 {
            if let Some(time) = self.cursors[index].time() {
                self.waiting.push(Reverse((time, index)));
            }
        }
    }
}

impl EventItems for Events<'_> {
    #[inline]
    fn next(&mut self) -> Option<Item<'_>> {
        let index = self.earliest()?;
        let item = self.take(index);
        self.requeue(index);
        item
    }

    fn bytes_done(&self) -> u64 {
        self.done
    }

    fn unknown_events(&self) -> u64 {
        self.unknown
    }

    fn take_damage(&mut self) -> Vec<tracedat::Error> {
        Vec::new()
    }
}

impl<'s> Events<'s> {
    /// The next item of one cursor: an event, or all its consecutive losses as one.
    #[inline]
    fn take(&mut self, index: usize) -> Option<Item<'s>> {
        let cursor = &mut self.cursors[index];
        let store = cursor.store;
        let bytes = &store.bytes[..];
        let at = cursor.peek()?;
        let time = entry_time(bytes, at);
        let cpu = Cpu(store.cpu);
        match entry_tag(bytes, at) {
            LOSS_TAG => {
                let mut count = Some(0u64);
                while let Some(at) = cursor.peek().filter(|&at| entry_tag(bytes, at) == LOSS_TAG) {
                    let lost = u64::from_ne_bytes(
                        bytes[at + ENTRY_HEADER..at + ENTRY_HEADER + 8].try_into().expect("8 bytes"),
                    );
                    count = count.zip((lost != u64::MAX).then_some(lost)).map(|(a, b)| a.saturating_add(b));
                    cursor.advance(at);
                    self.done += (ENTRY_HEADER + 8) as u64;
                }
                Some(Item::Lost(Lost { buffer: 0, cpu, count }))
            }
            len => {
                cursor.advance(at);
                let data = &bytes[at + ENTRY_HEADER..at + ENTRY_HEADER + len as usize];
                self.done += (ENTRY_HEADER + len as usize) as u64;
                let event = Event::of_record(self.formats, self.endian, cpu, Nanos(time), data);
                if event.format.is_none() {
                    self.unknown += 1;
                }
                Some(Item::Event(event))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_entries_are_read_in_time_order_and_losses_merge() {
        let formats = Formats::default();
        let mut store = CpuStore::new(3);
        store.push_event(30, b"c");
        store.push_event(10, b"abc");
        store.push_loss(20, Some(5));
        store.push_loss(20, Some(6));
        store.push_event(20, b"b");
        store.finish();
        assert_eq!(store.order.as_ref().map(Vec::len), Some(5));
        let stores = [store];
        let mut events = Events::new(stores.iter(), &formats, Endian::Little);
        let mut seen = Vec::new();
        while let Some(item) = events.next() {
            seen.push(match item {
                Item::Event(e) => format!("{}:{}", e.ts.0, String::from_utf8_lossy(e.data)),
                Item::Lost(l) => format!("lost {:?} on {}", l.count, l.cpu.0),
            });
        }
        assert_eq!(seen, ["10:abc", "lost Some(11) on 3", "20:b", "30:c"]);
    }

    #[test]
    fn cpus_merge_by_time_then_cpu() {
        let formats = Formats::default();
        let mut a = CpuStore::new(0);
        let mut b = CpuStore::new(1);
        for t in [1, 5, 9] {
            a.push_event(t, b"a");
        }
        for t in [1, 2, 9] {
            b.push_event(t, b"b");
        }
        let stores = [a, b];
        let mut events = Events::new(stores.iter(), &formats, Endian::Little);
        let mut seen = Vec::new();
        while let Some(Item::Event(e)) = events.next() {
            seen.push((e.ts.0, e.cpu.0));
        }
        assert_eq!(seen, [(1, 0), (1, 1), (2, 1), (5, 0), (9, 0), (9, 1)]);
    }
}
