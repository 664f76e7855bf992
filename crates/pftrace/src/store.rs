//! Each CPU's records and loss notices, in time order. Perfetto writes bundles of a CPU
//! in the order it read the kernel's pages, but packets of different sequences (and
//! bundles a reader thread flushed late) may come out of time order: as Perfetto's sorter
//! does, events are put in time order before anything reads them (stably: equal times
//! keep file order). Compact `sched_switch` events do not say which task they switch out
//! and compact `sched_waking` events not which task woke: both are filled in here, in
//! time order, from the CPU's previous switch, as Perfetto's importer infers them.
//! Entries are packed one after the other: 8 bytes of time, 4 of tag (the record's
//! length, or [`LOSS_TAG`]), 4 of flags, then the record (padded to 8) or the lost count.

use crate::layout::COMMON;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tracedat::{Cpu, Endian, Event, EventItems, Formats, Item, Lost, Nanos};

const LOSS_TAG: u32 = u32::MAX;
const ENTRY_HEADER: usize = 16;

/// What an entry's record still lacks.
pub mod flag {
    /// A compact `sched_switch`: its previous task (and `common_pid`) is inferred.
    pub const COMPACT_SWITCH: u32 = 1;
    /// A compact `sched_waking`: its `common_pid` is the task running on the CPU.
    pub const COMPACT_WAKING: u32 = 2;
}

/// Where a switch record keeps the fields the inference reads and fills.
#[derive(Copy, Clone, Debug)]
pub struct SwitchFields {
    pub prev_comm: usize,
    pub prev_pid: usize,
    pub prev_prio: usize,
    pub next_comm: usize,
    pub next_pid: usize,
    pub next_prio: usize,
    pub id: u16,
}

/// The task running on a CPU, as far as its events say.
#[derive(Copy, Clone, Debug)]
struct Running {
    pid: i32,
    comm: [u8; 16],
    prio: i32,
}

#[derive(Clone, Debug, Default)]
pub struct CpuStore {
    pub cpu: u32,
    bytes: Vec<u8>,
    order: Option<Vec<usize>>,
    last_time: u64,
    /// The latest time of any entry so far.
    latest: u64,
    out_of_order: bool,
    pub events: u64,
    pub losses: u64,
    /// Compact switches whose previous task no earlier event of the CPU showed.
    pub unknown_prev: u64,
}

impl CpuStore {
    pub fn new(cpu: u32) -> CpuStore {
        CpuStore { cpu, ..CpuStore::default() }
    }

    fn header(&mut self, time: u64, tag: u32, flags: u32) -> usize {
        self.out_of_order |= time < self.last_time;
        self.last_time = time;
        self.latest = self.latest.max(time);
        let at = self.bytes.len();
        self.bytes.extend_from_slice(&time.to_ne_bytes());
        self.bytes.extend_from_slice(&tag.to_ne_bytes());
        self.bytes.extend_from_slice(&flags.to_ne_bytes());
        at
    }

    pub fn push_event(&mut self, time: u64, record: &[u8], flags: u32) {
        self.header(time, record.len() as u32, flags);
        self.bytes.extend_from_slice(record);
        self.bytes.resize(self.bytes.len().next_multiple_of(8), 0);
        self.events += 1;
    }

    /// Notes lost events (`None`: how many is not known); returns the entry, whose time
    /// [`Self::set_time`] may move.
    pub fn push_loss(&mut self, time: u64, count: Option<u64>) -> usize {
        let at = self.header(time, LOSS_TAG, 0);
        self.bytes.extend_from_slice(&count.unwrap_or(u64::MAX).to_ne_bytes());
        self.losses += 1;
        at
    }

    /// Moves an entry to another time (a loss placed before the events of its bundle).
    pub fn set_time(&mut self, entry: usize, time: u64) {
        self.bytes[entry..entry + 8].copy_from_slice(&time.to_ne_bytes());
        self.out_of_order = true;
    }

    /// The latest time of the entries so far: where a loss whose bundle holds nothing
    /// goes (after everything the CPU recorded before it, whichever order a bundle's
    /// events and compact rows came in).
    pub fn latest_time(&self) -> u64 {
        self.latest
    }

    pub fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Puts the entries in time order and fills in what compact events lack.
    pub fn finish(&mut self, switch: Option<SwitchFields>) {
        self.bytes.shrink_to_fit();
        if self.out_of_order {
            let mut starts = Vec::new();
            let mut at = 0;
            while at < self.bytes.len() {
                starts.push(at);
                at = next_entry(&self.bytes, at);
            }
            starts.sort_by_key(|&start| entry_time(&self.bytes, start));
            self.order = Some(starts);
        }
        if let Some(switch) = switch {
            self.infer_compact(switch);
        }
    }

    /// Walks the entries in time order, keeping the task each event shows running, and
    /// gives compact events their previous or waking task. A switch that follows no sign
    /// of the CPU's task (the first, or the first after lost events) gets pid 0 with no
    /// name, counted in [`Self::unknown_prev`]; Perfetto's importer leaves that slice
    /// unclosed.
    fn infer_compact(&mut self, f: SwitchFields) {
        let starts: Vec<usize> = match &self.order {
            Some(order) => order.clone(),
            None => {
                let mut starts = Vec::new();
                let mut at = 0;
                while at < self.bytes.len() {
                    starts.push(at);
                    at = next_entry(&self.bytes, at);
                }
                starts
            }
        };
        let mut running: Option<Running> = None;
        for at in starts {
            let tag = entry_tag(&self.bytes, at);
            if tag == LOSS_TAG {
                running = None;
                continue;
            }
            let flags = u32::from_ne_bytes(self.bytes[at + 12..at + 16].try_into().expect("an entry header"));
            let record = &mut self.bytes[at + ENTRY_HEADER..at + ENTRY_HEADER + tag as usize];
            if record.len() < COMMON {
                continue;
            }
            let id = u16::from_le_bytes([record[0], record[1]]);
            let read_i32 = |r: &[u8], o: usize| i32::from_le_bytes(r[o..o + 4].try_into().expect("4 bytes"));
            if flags & flag::COMPACT_SWITCH != 0 {
                let prev = running.unwrap_or_else(|| {
                    self.unknown_prev += 1;
                    Running { pid: 0, comm: [0; 16], prio: 0 }
                });
                record[f.prev_comm..f.prev_comm + 16].copy_from_slice(&prev.comm);
                record[f.prev_pid..f.prev_pid + 4].copy_from_slice(&prev.pid.to_le_bytes());
                record[f.prev_prio..f.prev_prio + 4].copy_from_slice(&prev.prio.to_le_bytes());
                record[4..8].copy_from_slice(&prev.pid.to_le_bytes());
            } else if flags & flag::COMPACT_WAKING != 0 {
                let pid = running.map_or(0, |r| r.pid);
                record[4..8].copy_from_slice(&pid.to_le_bytes());
                continue;
            }
            if id == f.id {
                let mut comm = [0; 16];
                comm.copy_from_slice(&record[f.next_comm..f.next_comm + 16]);
                let (pid, prio) = (read_i32(record, f.next_pid), read_i32(record, f.next_prio));
                running = Some(Running { pid, comm, prio });
            } else {
                let pid = read_i32(record, 4);
                if running.is_none_or(|r| r.pid != pid) {
                    running = Some(Running { pid, comm: [0; 16], prio: 0 });
                }
            }
        }
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

#[derive(Clone, Debug)]
struct Cursor<'s> {
    store: &'s CpuStore,
    next: usize,
}

impl Cursor<'_> {
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
    waiting: BinaryHeap<Reverse<(u64, usize)>>,
    formats: &'s Formats,
    unknown: u64,
    done: u64,
}

impl<'s> Events<'s> {
    pub(crate) fn new(stores: impl Iterator<Item = &'s CpuStore>, formats: &'s Formats) -> Self {
        let cursors: Vec<Cursor<'s>> = stores.map(|store| Cursor { store, next: 0 }).collect();
        let waiting = match cursors.len() {
            1 => BinaryHeap::new(),
            _ => cursors.iter().enumerate().filter_map(|(index, c)| Some(Reverse((c.time()?, index)))).collect(),
        };
        Events { cursors, waiting, formats, unknown: 0, done: 0 }
    }

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
                let event = Event::of_record(self.formats, Endian::Little, cpu, Nanos(time), data);
                if event.format.is_none() {
                    self.unknown += 1;
                }
                Some(Item::Event(event))
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
