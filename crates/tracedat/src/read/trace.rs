//! The friendly API: open a trace, look at its metadata, stream its events merged across
//! CPUs and buffers in timestamp order (ties to the lower buffer, then the lower CPU, as
//! `trace-cmd report` does), or one CPU at a time.

use crate::error::{Error, Result};
use crate::ids::{Cpu, Nanos};
use crate::read::blocks::{BlockFetcher, BlockPlan, Prefetcher};
use crate::read::cursor::{CpuCursor, CursorSetup, MergeKey};
use crate::read::event::Event;
use crate::read::formats::Formats;
use crate::read::input::{SizedFile, Source};
use crate::read::metadata::{BufferInfo, Metadata, read_kallsyms, read_metadata};
use crate::read::ringbuf::Missed;
use crate::read::symbols::Kallsyms;
use crate::read::timestamps::TimeCorrection;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// An open trace.dat file.
pub struct Trace {
    input: String,
    source: Arc<dyn Source>,
    meta: Metadata,
    corrections: Vec<TimeCorrection>,
    /// The kernel's symbols, or why they are unreadable, found on first use.
    kallsyms: OnceLock<Result<Kallsyms>>,
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace").field("input", &self.input).finish_non_exhaustive()
    }
}

impl Trace {
    /// Opens a file and reads its metadata (not its events).
    pub fn open(path: impl AsRef<Path>) -> Result<Trace> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file =
            std::fs::File::open(path).and_then(|file| Ok(SizedFile { len: file.metadata()?.len(), file })).map_err(
                |e| Error { input: name.clone(), section: crate::Section::FileHeader, offset: 0, kind: e.into() },
            )?;
        Trace::from_source(name, Arc::new(file))
    }

    /// Reads a trace held in memory; `name` is used in messages.
    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Result<Trace> {
        Trace::from_source(name.into(), Arc::new(bytes))
    }

    pub fn from_source(input: String, source: Arc<dyn Source>) -> Result<Trace> {
        let meta = read_metadata(&*source).map_err(|e| e.named(&input))?;
        let corrections =
            meta.buffers.iter().map(|b| TimeCorrection::from_options(&meta.options, b.name.is_empty())).collect();
        Ok(Trace { input, source, meta, corrections, kallsyms: OnceLock::new() })
    }

    /// The input's name (the path it was opened from).
    pub fn input(&self) -> &str {
        &self.input
    }

    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// The kernel's symbols as recorded (none when the trace holds no kallsyms), read
    /// from the file the first time they are asked for: they take megabytes that most
    /// work never needs, so a damaged kallsyms section is reported here (every time it
    /// is asked for, read once), not at `open`.
    pub fn kallsyms(&self) -> std::result::Result<&Kallsyms, &Error> {
        let read = || read_kallsyms(&*self.source, &self.meta.header, self.meta.kallsyms_at);
        self.kallsyms.get_or_init(|| read().map_err(|e| e.named(&self.input))).as_ref()
    }

    pub fn formats(&self) -> &Formats {
        &self.meta.formats
    }

    /// The top buffer first (when recorded), then named instances.
    pub fn buffers(&self) -> &[BufferInfo] {
        &self.meta.buffers
    }

    /// The number of CPUs of the traced machine, counting CPUs that recorded nothing.
    pub fn cpu_count(&self) -> u32 {
        let with_data =
            self.meta.buffers.iter().flat_map(|b| &b.cpus).map(|c| c.cpu.saturating_add(1)).max().unwrap_or(0);
        self.meta.cpu_count.unwrap_or(0).max(with_data)
    }

    /// The clock of the top buffer (`local`, `mono`, `x86-tsc`, ...).
    pub fn clock(&self) -> Option<&str> {
        self.meta.buffers.first().and_then(|b| b.clock.as_deref())
    }

    /// Total bytes of ring-buffer data (as stored) in the selection; for progress bars.
    pub fn data_size(&self, selection: &Selection) -> u64 {
        self.selected(selection).map(|(_, _, cpu)| cpu.size).sum()
    }

    /// All events of all buffers, merged in timestamp order.
    pub fn events(&self) -> EventStream<'_> {
        self.events_of(&Selection::all())
    }

    /// The events of some buffers and CPUs, merged in timestamp order.
    pub fn events_of(&self, selection: &Selection) -> EventStream<'_> {
        let compressed = self.selected(selection).any(|(_, _, cpu)| cpu.compressed);
        let threads = match selection.workers {
            Some(n) => n,
            None if compressed => std::thread::available_parallelism().map_or(1, |n| n.get()),
            None => 0,
        };
        let prefetcher = (threads > 0).then(|| Prefetcher::new(threads));
        let mut damage = Vec::new();
        let cursors: Vec<CpuCursor> = self
            .selected(selection)
            .map(|(index, buffer, cpu)| {
                let (plan, planning_damage) = if cpu.compressed {
                    BlockPlan::chunks(&*self.source, cpu.offset, self.meta.header.endian, self.meta.header.compression)
                } else {
                    BlockPlan::raw(cpu.offset, cpu.size, buffer.page_size, self.source.len())
                };
                let setup = CursorSetup {
                    buffer: index as u16,
                    buffer_name: buffer.name.clone(),
                    cpu: cpu.cpu,
                    input: self.input.clone(),
                    layout: self.meta.page_layout,
                    page_size: buffer.page_size,
                    correction: self.corrections[index].clone(),
                };
                let cursor = CpuCursor::new(setup, BlockFetcher::new(plan, Arc::clone(&self.source)));
                damage.extend(planning_damage.map(|e| cursor.block_error(e)));
                cursor
            })
            .collect();
        EventStream::new(self, cursors, prefetcher, damage)
    }

    /// One CPU's ring-buffer pages of the main buffer as stored (decompressed), in file
    /// order, each `page_size` bytes, handed to `each`: what a recorder read from the
    /// kernel, for replaying a recording page by page (`schedlens watch`'s tests). Damage
    /// ends the CPU's pages with the error.
    pub fn raw_pages(&self, cpu: u32, mut each: impl FnMut(&[u8])) -> Result<()> {
        let name = crate::EventSource::buffer(self);
        let Some(buffer) = self.meta.buffers.iter().find(|b| b.name == name) else { return Ok(()) };
        let Some(data) = buffer.cpus.iter().find(|c| c.cpu == cpu) else { return Ok(()) };
        let (plan, damage) = if data.compressed {
            BlockPlan::chunks(&*self.source, data.offset, self.meta.header.endian, self.meta.header.compression)
        } else {
            BlockPlan::raw(data.offset, data.size, buffer.page_size, self.source.len())
        };
        let failed = |e: crate::read::blocks::BlockError| Error {
            input: self.input.clone(),
            section: crate::Section::CpuData { buffer: buffer.name.clone(), cpu },
            offset: e.offset,
            kind: crate::ErrorKind::Malformed(e.message),
        };
        if let Some(e) = damage {
            return Err(failed(e));
        }
        let page_size = buffer.page_size as usize;
        let mut block = Vec::new();
        for index in 0..plan.block_count() {
            plan.read_block(&*self.source, index, &mut block).map_err(failed)?;
            block.chunks_exact(page_size).for_each(&mut each);
        }
        Ok(())
    }

    fn selected<'a>(
        &'a self,
        selection: &'a Selection,
    ) -> impl Iterator<Item = (usize, &'a BufferInfo, &'a crate::read::metadata::CpuData)> + 'a {
        self.meta
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| selection.buffers.as_ref().is_none_or(|names| names.contains(&b.name)))
            .flat_map(|(i, b)| b.cpus.iter().map(move |c| (i, b, c)))
            .filter(|(_, _, c)| selection.cpus.as_ref().is_none_or(|cpus| cpus.contains(&c.cpu)))
    }
}

/// Which buffers and CPUs to read.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Buffer names ("" is the top buffer); `None` for all.
    pub buffers: Option<Vec<String>>,
    pub cpus: Option<Vec<u32>>,
    /// Worker threads for reading ahead; `None` picks: one per core for compressed data,
    /// none for raw pages. `Some(0)` reads on the calling thread only.
    pub workers: Option<usize>,
}

impl Selection {
    pub fn all() -> Selection {
        Selection::default()
    }

    /// One CPU of one buffer, read on the calling thread (for per-CPU parallel work).
    pub fn one_cpu(buffer: &str, cpu: u32) -> Selection {
        Selection { buffers: Some(vec![buffer.to_string()]), cpus: Some(vec![cpu]), workers: Some(0) }
    }
}

/// Events the kernel dropped on a CPU, reported just before the next event there.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    pub buffer: u16,
    pub cpu: Cpu,
    /// `None` when the kernel did not store the count.
    pub count: Option<u64>,
}

/// What an event stream yields.
#[derive(Copy, Clone, Debug)]
pub enum Item<'a> {
    Event(Event<'a>),
    Lost(Lost),
}

/// Events in timestamp order. Not an `Iterator`: each event borrows the stream's buffers
/// until the next call, so reading allocates nothing per event.
pub struct EventStream<'t> {
    trace: &'t Trace,
    cursors: Vec<CpuCursor>,
    /// Cursors waiting to be merged, by their current record's key.
    waiting: BinaryHeap<Reverse<(MergeKey, usize)>>,
    /// The cursor whose record is current (not in `waiting`).
    current: Option<usize>,
    /// The current record was already returned (the cursor must move on first).
    returned: bool,
    loss_reported: bool,
    prefetcher: Option<Prefetcher>,
    damage: Vec<Error>,
    unknown_events: u64,
    started: bool,
}

impl<'t> EventStream<'t> {
    fn new(trace: &'t Trace, cursors: Vec<CpuCursor>, prefetcher: Option<Prefetcher>, damage: Vec<Error>) -> Self {
        EventStream {
            trace,
            cursors,
            waiting: BinaryHeap::new(),
            current: None,
            returned: false,
            loss_reported: false,
            prefetcher,
            damage,
            unknown_events: 0,
            started: false,
        }
    }

    /// The next event or loss notice; `None` at the end.
    #[allow(clippy::should_implement_trait)]
    #[inline]
    pub fn next(&mut self) -> Option<Item<'_>> {
        if !self.started {
            self.start();
        }
        if self.returned {
            self.returned = false;
            self.move_current_on();
        }
        let index = self.current?;
        let cursor = &self.cursors[index];
        if cursor.missed != Missed::None && !self.loss_reported {
            self.loss_reported = true;
            let count = match cursor.missed {
                Missed::Count(n) => Some(n),
                _ => None,
            };
            return Some(Item::Lost(Lost { buffer: cursor.buffer, cpu: Cpu(cursor.cpu), count }));
        }
        self.returned = true;
        let event = event_of(self.trace, &self.cursors[index]);
        if event.format.is_none() {
            self.unknown_events += 1;
        }
        Some(Item::Event(event))
    }

    fn start(&mut self) {
        self.started = true;
        for index in 0..self.cursors.len() {
            if self.cursors[index].advance(self.prefetcher.as_ref(), &mut self.damage) {
                self.waiting.push(Reverse((self.cursors[index].key(), index)));
            }
        }
        self.current = self.waiting.pop().map(|Reverse((_, i))| i);
    }

    /// Advances the current cursor and picks whichever cursor is now earliest. A cursor
    /// usually stays earliest for a run of events, so the heap is touched only on changes.
    fn move_current_on(&mut self) {
        let Some(index) = self.current else { return };
        self.loss_reported = false;
        if !self.cursors[index].advance(self.prefetcher.as_ref(), &mut self.damage) {
            self.current = self.waiting.pop().map(|Reverse((_, i))| i);
            return;
        }
        let key = self.cursors[index].key();
        if let Some(&Reverse((top, _))) = self.waiting.peek() {
            if top < key {
                let Reverse((_, next)) = self.waiting.pop().expect("peeked");
                self.waiting.push(Reverse((key, index)));
                self.current = Some(next);
            }
        }
    }

    /// Damage found so far: each names the file, CPU data and byte offset. The events
    /// before and after each damaged page were still read.
    pub fn damage(&self) -> &[Error] {
        &self.damage
    }

    /// Takes the damage found so far, leaving none.
    pub fn take_damage(&mut self) -> Vec<Error> {
        std::mem::take(&mut self.damage)
    }

    /// Events whose id has no format in the file.
    pub fn unknown_events(&self) -> u64 {
        self.unknown_events
    }

    /// Bytes of stored data read so far (compare with [`Trace::data_size`]).
    pub fn bytes_done(&self) -> u64 {
        self.cursors.iter().map(|c| c.bytes_done).sum()
    }

    pub fn trace(&self) -> &'t Trace {
        self.trace
    }
}

/// The event a cursor's current record holds.
#[inline]
fn event_of<'a>(trace: &'a Trace, cursor: &'a CpuCursor) -> Event<'a> {
    let data = cursor.record();
    let meta = &trace.meta;
    let endian = meta.header.endian;
    let common = meta.formats.common;
    let id = common.event_id(data, endian).unwrap_or(u32::MAX);
    Event {
        buffer: cursor.buffer,
        cpu: Cpu(cursor.cpu),
        ts: Nanos(cursor.ts),
        id,
        format: meta.formats.by_id(id),
        data,
        endian,
        pid: common.pid(data, endian).unwrap_or(-1),
        following: cursor.page_rest(),
    }
}
