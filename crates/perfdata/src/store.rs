//! Each CPU's tracepoint records and loss notices, found in one pass over the file and
//! kept in time order as small entries that point into the file's bytes (the payloads
//! are not copied): perf writes each CPU's ring buffer in order, but orders records
//! across CPUs only within rounds, so a CPU whose records go back in time (several
//! buffers per CPU, damaged times) is sorted once, stably. An entry is 16 bytes: the
//! time, and where the payload lies (offset and length) or which loss count it notes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tracedat::{Cpu, Endian, Event, EventItems, Formats, Item, Lost, Nanos};

/// The length of an entry that notes lost records (a payload is shorter: a record is
/// at most 64 KiB including its header).
const LOSS_TAG: u64 = 0xffff;
/// Bytes counted for an entry's header in sizes and progress (as when payloads were
/// copied behind a 16-byte header), and for a loss notice's count.
const ENTRY_HEADER: u64 = 16;
const LOSS_SIZE: u64 = 8;

/// CPUs a file may name (a larger number is damage).
pub const MAX_CPUS: u32 = 1 << 16;

/// The stores of the CPUs seen so far, made on first use.
#[derive(Clone, Debug, Default)]
pub struct Stores {
    /// Index in `list` per CPU number (dense, grown as CPUs are seen; `u32::MAX`: none).
    slots: Vec<u32>,
    list: Vec<CpuStore>,
}

impl Stores {
    /// The store of a CPU, made on first use; `None` for an implausible CPU number.
    pub fn of_cpu(&mut self, cpu: u32) -> Option<&mut CpuStore> {
        if cpu >= MAX_CPUS {
            return None;
        }
        let slot = cpu as usize;
        if slot >= self.slots.len() {
            self.slots.resize(slot + 1, u32::MAX);
        }
        if self.slots[slot] == u32::MAX {
            self.slots[slot] = self.list.len() as u32;
            self.list.push(CpuStore::new(cpu));
        }
        Some(&mut self.list[self.slots[slot] as usize])
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut CpuStore> {
        self.list.iter_mut()
    }

    /// Appends the entries of stores read from a later part of the file.
    pub fn append(&mut self, later: Stores) {
        for store in later.list {
            self.of_cpu(store.cpu).expect("a CPU number below MAX_CPUS").append(store);
        }
    }

    /// Every store in time order, in CPU order.
    pub fn finish(self) -> Vec<CpuStore> {
        let mut list = self.list;
        for store in &mut list {
            store.finish();
        }
        list.sort_by_key(|s| s.cpu);
        list
    }
}

/// One event or loss notice of a CPU.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Entry {
    time: u64,
    /// The payload's file offset shifted left 16 bits, its length in the low 16 bits;
    /// or, for a loss, the index of its count shifted left 16 bits and [`LOSS_TAG`].
    place: u64,
}

impl Entry {
    #[inline]
    fn len(self) -> u64 {
        self.place & 0xffff
    }

    #[inline]
    fn at(self) -> usize {
        (self.place >> 16) as usize
    }
}

/// One CPU's entries.
#[derive(Clone, Debug, Default)]
pub struct CpuStore {
    pub cpu: u32,
    /// Entries in file order: those read by one thread each, in the file's order (so
    /// that joining what several threads read copies nothing); one run once sorted.
    runs: Vec<Vec<Entry>>,
    /// The counts of loss notices (`None`: perf did not say how many).
    lost: Vec<Option<u64>>,
    last_time: u64,
    out_of_order: bool,
    size: u64,
    pub events: u64,
    pub losses: u64,
}

impl CpuStore {
    pub fn new(cpu: u32) -> CpuStore {
        CpuStore { cpu, ..CpuStore::default() }
    }

    fn push(&mut self, time: u64, place: u64) {
        self.out_of_order |= time < self.last_time;
        self.last_time = time;
        match self.runs.last_mut() {
            Some(run) => run.push(Entry { time, place }),
            None => self.runs.push(vec![Entry { time, place }]),
        }
    }

    /// Notes an event whose payload is `len` bytes at `at` in the file's bytes.
    pub fn push_event(&mut self, time: u64, at: u64, len: usize) {
        debug_assert!((len as u64) < LOSS_TAG && at < 1 << 48);
        self.push(time, at << 16 | len as u64);
        self.size += ENTRY_HEADER + (len as u64).next_multiple_of(8);
        self.events += 1;
    }

    /// Notes `count` lost records (`None`: perf did not say how many).
    pub fn push_loss(&mut self, time: u64, count: Option<u64>) {
        self.push(time, (self.lost.len() as u64) << 16 | LOSS_TAG);
        self.lost.push(count);
        self.size += ENTRY_HEADER + LOSS_SIZE;
        self.losses += 1;
    }

    /// The time of the last entry (for a loss that does not say its own).
    pub fn last_time(&self) -> u64 {
        self.last_time
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Appends the entries of the same CPU read from a later part of the file, as if
    /// they had been pushed here.
    fn append(&mut self, mut later: CpuStore) {
        if let Some(first) = later.runs.first().and_then(|run| run.first()) {
            self.out_of_order |= first.time < self.last_time || later.out_of_order;
            self.last_time = later.last_time;
        }
        let shift = (self.lost.len() as u64) << 16;
        if shift > 0 && !later.lost.is_empty() {
            for entry in later.runs.iter_mut().flatten().filter(|e| e.len() == LOSS_TAG) {
                entry.place += shift;
            }
        }
        self.runs.append(&mut later.runs);
        self.lost.append(&mut later.lost);
        self.size += later.size;
        self.events += later.events;
        self.losses += later.losses;
    }

    /// What the store holds, whatever threads read it: for tests.
    #[cfg(test)]
    pub(crate) fn flat(&self) -> String {
        let entries: Vec<Entry> = self.runs.concat();
        let Self { cpu, lost, last_time, out_of_order, size, events, losses, .. } = self;
        format!("{cpu} {entries:?} {lost:?} {last_time} {out_of_order} {size} {events} {losses}")
    }

    /// Bytes of entries and payloads (as if they were copied), for progress and balance.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Puts the entries in time order if they are not (stable: equal times keep file
    /// order).
    pub fn finish(&mut self) {
        if self.out_of_order {
            let mut all: Vec<Entry> = self.runs.concat();
            all.sort_by_key(|entry| entry.time);
            self.runs = vec![all];
        }
        for run in &mut self.runs {
            run.shrink_to_fit();
        }
    }
}

/// A cursor over one CPU's entries.
#[derive(Clone, Debug)]
struct Cursor<'s> {
    store: &'s CpuStore,
    /// The run and the entry in it (runs are never empty).
    run: usize,
    next: usize,
}

impl Cursor<'_> {
    #[inline]
    fn peek(&self) -> Option<Entry> {
        self.store.runs.get(self.run)?.get(self.next).copied()
    }

    #[inline]
    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.store.runs[self.run].len() {
            self.run += 1;
            self.next = 0;
        }
    }

    fn time(&self) -> Option<u64> {
        self.peek().map(|entry| entry.time)
    }
}

/// Events and loss notices of one CPU, or of several merged in time order (ties to the
/// lower CPU). Consecutive losses on a CPU are reported as one notice.
pub struct Events<'s> {
    cursors: Vec<Cursor<'s>>,
    /// Cursors by their next entry's time (with several), the earliest on top.
    waiting: BinaryHeap<Reverse<(u64, usize)>>,
    /// The file's bytes, where the payloads lie.
    bytes: &'s [u8],
    formats: &'s Formats,
    endian: Endian,
    unknown: u64,
    done: u64,
}

impl<'s> Events<'s> {
    pub(crate) fn new(
        stores: impl Iterator<Item = &'s CpuStore>,
        bytes: &'s [u8],
        formats: &'s Formats,
        endian: Endian,
    ) -> Self {
        let cursors: Vec<Cursor<'s>> = stores.map(|store| Cursor { store, run: 0, next: 0 }).collect();
        let waiting = match cursors.len() {
            1 => BinaryHeap::new(),
            _ => cursors.iter().enumerate().filter_map(|(index, c)| Some(Reverse((c.time()?, index)))).collect(),
        };
        Events { cursors, waiting, bytes, formats, endian, unknown: 0, done: 0 }
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
        let entry = cursor.peek()?;
        let cpu = Cpu(store.cpu);
        if entry.len() == LOSS_TAG {
            let mut count = Some(0u64);
            while let Some(loss) = cursor.peek().filter(|e| e.len() == LOSS_TAG) {
                let lost = store.lost[loss.at()];
                count = count.zip(lost).map(|(a, b)| a.saturating_add(b));
                cursor.advance();
                self.done += ENTRY_HEADER + LOSS_SIZE;
            }
            return Some(Item::Lost(Lost { buffer: 0, cpu, count }));
        }
        cursor.advance();
        let len = entry.len();
        let data = &self.bytes[entry.at()..entry.at() + len as usize];
        self.done += ENTRY_HEADER + len;
        let event = Event::of_record(self.formats, self.endian, cpu, Nanos(entry.time), data);
        if event.format.is_none() {
            self.unknown += 1;
        }
        Some(Item::Event(event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store's bytes: the payloads one after the other.
    fn push_events(store: &mut CpuStore, bytes: &mut Vec<u8>, events: &[(u64, &[u8])]) {
        for &(time, payload) in events {
            store.push_event(time, bytes.len() as u64, payload.len());
            bytes.extend_from_slice(payload);
        }
    }

    #[test]
    fn out_of_order_entries_are_read_in_time_order_and_losses_merge() {
        let formats = Formats::default();
        let mut bytes = Vec::new();
        let mut store = CpuStore::new(3);
        push_events(&mut store, &mut bytes, &[(30, b"c"), (10, b"abc")]);
        store.push_loss(20, Some(5));
        store.push_loss(20, Some(6));
        push_events(&mut store, &mut bytes, &[(20, b"b")]);
        store.finish();
        assert_eq!(store.size(), 3 * 24 + 2 * 24);
        assert_eq!(store.runs.len(), 1);
        let stores = [store];
        let mut events = Events::new(stores.iter(), &bytes, &formats, Endian::Little);
        let mut seen = Vec::new();
        while let Some(item) = events.next() {
            seen.push(match item {
                Item::Event(e) => format!("{}:{}", e.ts.0, String::from_utf8_lossy(e.data)),
                Item::Lost(l) => format!("lost {:?} on {}", l.count, l.cpu.0),
            });
        }
        assert_eq!(seen, ["10:abc", "lost Some(11) on 3", "20:b", "30:c"]);
        assert_eq!(events.bytes_done(), 5 * 16 + 5 + 2 * 8);
    }

    #[test]
    fn cpus_merge_by_time_then_cpu() {
        let formats = Formats::default();
        let mut bytes = Vec::new();
        let mut a = CpuStore::new(0);
        let mut b = CpuStore::new(1);
        push_events(&mut a, &mut bytes, &[(1, b"a"), (5, b"a"), (9, b"a")]);
        push_events(&mut b, &mut bytes, &[(1, b"b"), (2, b"b"), (9, b"b")]);
        let stores = [a, b];
        let mut events = Events::new(stores.iter(), &bytes, &formats, Endian::Little);
        let mut seen = Vec::new();
        while let Some(Item::Event(e)) = events.next() {
            seen.push((e.ts.0, e.cpu.0));
        }
        assert_eq!(seen, [(1, 0), (1, 1), (2, 1), (5, 0), (9, 0), (9, 1)]);
    }
}
