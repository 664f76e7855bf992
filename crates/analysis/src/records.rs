//! Waits kept as records instead of in the model's tables, for the passes that run over
//! a model built streaming (`model::Model::build_streaming`): `latency` reads them once
//! in order, the critical path reads them back from the end. Each wait, with what the
//! wakeup that began it says ([`Woken`]), is a record of [`RECORD_BYTES`] in a
//! [`RecordStore`] (memory, or a file the caller spills to); on a trace of ten million
//! waits that is 450 MB a store can keep out of memory, where the tables held them all.

use model::{Cpu, Migration, Model, Nanos, TaskId, Wait, WaitCause, WaitEnd, WaitSink, Wakeup};
use std::io;

/// The bytes of a wait's record: task, start, end, CPU, cause and end, and the wakeup's
/// `sched_waking` time, waker, waker's CPU and target CPU.
pub const RECORD_BYTES: usize = 45;

/// Records read at once, going forward or back: 3 MB (a few in the unit tests, so that
/// their traces take many blocks).
const BLOCK_RECORDS: usize = if cfg!(test) { 5 } else { 65_536 };

/// What the wakeup that began a wait tells: when `sched_waking` was (when recorded), the
/// task that woke it and where that ran, the CPU whose runqueue it was put on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Woken {
    pub waking: Option<Nanos>,
    pub waker: Option<TaskId>,
    pub waker_cpu: Option<Cpu>,
    pub target_cpu: Cpu,
}

impl From<&Wakeup> for Woken {
    fn from(wakeup: &Wakeup) -> Woken {
        Woken { waking: wakeup.waking, waker: wakeup.waker, waker_cpu: wakeup.waker_cpu, target_cpu: wakeup.target_cpu }
    }
}

/// Where the records go while the model is built, and are read back from.
pub trait RecordStore {
    fn append(&mut self, record: &[u8; RECORD_BYTES]);
    /// The records appended so far.
    fn count(&self) -> usize;
    /// Fills `into` (whole records) with the records from the `first`.
    fn read(&mut self, first: usize, into: &mut [u8]) -> io::Result<()>;
    /// The first records, those held in memory (whole records), to read without a copy.
    fn held(&self) -> &[u8];
    /// Hands over the records held in memory; reading them again is then an error.
    fn take_held(&mut self) -> Vec<u8>;
}

/// Records in memory.
impl RecordStore for Vec<u8> {
    fn append(&mut self, record: &[u8; RECORD_BYTES]) {
        self.extend_from_slice(record);
    }

    fn count(&self) -> usize {
        self.len() / RECORD_BYTES
    }

    fn read(&mut self, first: usize, into: &mut [u8]) -> io::Result<()> {
        let at = first * RECORD_BYTES;
        let held = self.get(at..at + into.len()).ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        into.copy_from_slice(held);
        Ok(())
    }

    fn held(&self) -> &[u8] {
        self
    }

    fn take_held(&mut self) -> Vec<u8> {
        std::mem::take(self)
    }
}

/// The sink of a model built streaming: each wait to `store` as a record, each task's
/// migrations kept (migrations are few: a few hundred thousand on a 5M-event trace), and
/// the latest end before each block of records (waits come about in order of their ends,
/// so reading back from the end knows, block by block, how late a wait not yet read can
/// end).
pub struct Collector<S> {
    store: S,
    migrations: Vec<Vec<Nanos>>,
    latest_end: Nanos,
    latest_end_before_block: Vec<Nanos>,
}

impl<S: RecordStore> Collector<S> {
    pub fn new(store: S) -> Collector<S> {
        Collector { store, migrations: Vec::new(), latest_end: Nanos::ZERO, latest_end_before_block: Vec::new() }
    }

    /// The waits handed over, and per task the times it migrated (for
    /// `latency::RecordPass`); `model`: the model built with this sink.
    pub fn finish(self, model: &Model) -> (RecordedWaits<S>, TaskMigrations) {
        let waits = RecordedWaits {
            store: self.store,
            latest_end_before_block: self.latest_end_before_block,
            tasks: model.tasks().ids().collect(),
            error: None,
        };
        (waits, TaskMigrations(self.migrations))
    }
}

/// Per task (by index), the times it moved between CPUs, in order.
pub struct TaskMigrations(pub(crate) Vec<Vec<Nanos>>);

impl<S: RecordStore> WaitSink for Collector<S> {
    fn wait(&mut self, wait: &Wait, wakeup: Option<&Wakeup>) {
        if self.store.count() % BLOCK_RECORDS == 0 {
            self.latest_end_before_block.push(self.latest_end);
        }
        self.latest_end = self.latest_end.max(wait.end);
        self.store.append(&encode(wait, wakeup.map(Woken::from)));
    }

    fn migration(&mut self, migration: &Migration) {
        let index = migration.task.index();
        if self.migrations.len() <= index {
            self.migrations.resize_with(index + 1, Vec::new);
        }
        self.migrations[index].push(migration.time);
    }
}

/// A store's records as waits: read in order a block at a time, or back from the end
/// with each wait's key, the latest end among it and the waits before it (never less
/// than its end, never rising going back). The first read error ends the reading; it is
/// kept for [`RecordedWaits::error`].
pub struct RecordedWaits<S> {
    store: S,
    latest_end_before_block: Vec<Nanos>,
    /// The model's task ids, by index (records name tasks by index).
    tasks: Vec<TaskId>,
    error: Option<io::Error>,
}

impl<S: RecordStore> RecordedWaits<S> {
    /// How many waits there are.
    pub fn count(&self) -> usize {
        self.store.count()
    }

    /// The error that ended a reading, if one did.
    pub fn error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// Hands the records to `each` in order, `per_chunk` at a time (whole records): those
    /// held in memory where they are, the others through one buffer.
    pub fn read_chunks(&mut self, per_chunk: usize, each: &mut dyn FnMut(&[u8])) -> io::Result<()> {
        let held = self.store.held();
        held.chunks(per_chunk.max(1) * RECORD_BYTES).for_each(&mut *each);
        let held_records = held.len() / RECORD_BYTES;
        self.read_chunks_from(held_records, per_chunk, each)
    }

    /// [`Self::read_chunks`] once: the records held in memory are let go as soon as they
    /// are read, before the rest is.
    pub fn read_chunks_once(mut self, per_chunk: usize, each: &mut dyn FnMut(&[u8])) -> io::Result<()> {
        let held = self.store.take_held();
        held.chunks(per_chunk.max(1) * RECORD_BYTES).for_each(&mut *each);
        let held_records = held.len() / RECORD_BYTES;
        drop(held);
        self.read_chunks_from(held_records, per_chunk, each)
    }

    /// Hands the records from `first` on to `each` through one buffer.
    fn read_chunks_from(&mut self, first: usize, per_chunk: usize, each: &mut dyn FnMut(&[u8])) -> io::Result<()> {
        let per_chunk = per_chunk.max(1);
        let mut chunk = Vec::new();
        for first in (first..self.store.count()).step_by(per_chunk) {
            self.read_into(first, per_chunk, &mut chunk)?;
            each(&chunk);
        }
        Ok(())
    }

    /// Reads up to `count` records from the `first` into `bytes`.
    fn read_into(&mut self, first: usize, count: usize, bytes: &mut Vec<u8>) -> io::Result<()> {
        bytes.resize(count.min(self.store.count() - first) * RECORD_BYTES, 0);
        self.store.read(first, bytes)
    }

    /// Calls `visit` on every wait, in the order they were handed over.
    pub fn each(&mut self, visit: &mut dyn FnMut(&Wait)) {
        let tasks = std::mem::take(&mut self.tasks);
        let read = self.read_chunks(BLOCK_RECORDS, &mut |records| {
            for record in records.chunks_exact(RECORD_BYTES) {
                visit(&decode(record, &|index| tasks[index as usize]).0);
            }
        });
        self.tasks = tasks;
        if let Err(error) = read {
            self.error.get_or_insert(error);
        }
    }

    /// The waits from the last to the first, each with its key.
    pub fn back(&mut self) -> impl Iterator<Item = (Nanos, Wait, Option<Woken>)> + '_ {
        let mut block = self.store.count().div_ceil(BLOCK_RECORDS);
        let (mut bytes, mut decoded) = (Vec::new(), Vec::new());
        std::iter::from_fn(move || {
            while decoded.is_empty() {
                block = block.checked_sub(1)?;
                if !self.read_block(block, &mut bytes) {
                    return None;
                }
                let mut key = self.latest_end_before_block.get(block).copied().unwrap_or(Nanos::ZERO);
                decoded.extend(bytes.chunks_exact(RECORD_BYTES).map(|record| {
                    let (wait, woken) = decode(record, &|index| self.tasks[index as usize]);
                    key = key.max(wait.end);
                    (key, wait, woken)
                }));
            }
            decoded.pop()
        })
    }

    /// Reads block `block` into `bytes`; false (the error kept) when it cannot.
    fn read_block(&mut self, block: usize, bytes: &mut Vec<u8>) -> bool {
        match self.read_into(block * BLOCK_RECORDS, BLOCK_RECORDS, bytes) {
            Ok(()) => true,
            Err(error) => {
                self.error.get_or_insert(error);
                false
            }
        }
    }
}

const CAUSES: [WaitCause; 3] = [WaitCause::Wakeup, WaitCause::NewTask, WaitCause::Preempted];
const ENDS: [WaitEnd; 4] = [WaitEnd::Ran, WaitEnd::Lost, WaitEnd::TraceEnd, WaitEnd::Unrecorded];
const WOKEN: u8 = 1 << 4;
const WAKING: u8 = 1 << 5;
const WAKER: u8 = 1 << 6;
const WAKER_CPU: u8 = 1 << 7;

/// A wait's record, little-endian: task (4), start (8), end (8), CPU (4), bits (1: cause,
/// end, which wakeup fields are there), `sched_waking` (8), waker (4), waker's CPU (4),
/// target CPU (4).
pub(crate) fn encode(wait: &Wait, woken: Option<Woken>) -> [u8; RECORD_BYTES] {
    let mut record = [0u8; RECORD_BYTES];
    let cause = CAUSES.iter().position(|&c| c == wait.cause).unwrap_or(0) as u8;
    let end = ENDS.iter().position(|&e| e == wait.end_kind).unwrap_or(0) as u8;
    let mut bits = cause | end << 2;
    record[0..4].copy_from_slice(&(wait.task.index() as u32).to_le_bytes());
    record[4..12].copy_from_slice(&wait.start.0.to_le_bytes());
    record[12..20].copy_from_slice(&wait.end.0.to_le_bytes());
    record[20..24].copy_from_slice(&wait.ran_on.0.to_le_bytes());
    if let Some(woken) = woken {
        bits |= WOKEN;
        if let Some(waking) = woken.waking {
            bits |= WAKING;
            record[25..33].copy_from_slice(&waking.0.to_le_bytes());
        }
        if let Some(waker) = woken.waker {
            bits |= WAKER;
            record[33..37].copy_from_slice(&(waker.index() as u32).to_le_bytes());
        }
        if let Some(cpu) = woken.waker_cpu {
            bits |= WAKER_CPU;
            record[37..41].copy_from_slice(&cpu.0.to_le_bytes());
        }
        record[41..45].copy_from_slice(&woken.target_cpu.0.to_le_bytes());
    }
    record[24] = bits;
    record
}

/// A record's wait and wakeup; `task` turns a task index back into the model's id.
pub(crate) fn decode(record: &[u8], task: &impl Fn(u32) -> TaskId) -> (Wait, Option<Woken>) {
    let u32_at = |at: usize| u32::from_le_bytes(record[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(record[at..at + 8].try_into().expect("8 bytes"));
    let bits = record[24];
    let wait = Wait {
        task: task(u32_at(0)),
        start: Nanos(u64_at(4)),
        end: Nanos(u64_at(12)),
        cause: CAUSES[usize::from(bits & 3).min(CAUSES.len() - 1)],
        end_kind: ENDS[usize::from(bits >> 2 & 3)],
        ran_on: Cpu(u32_at(20)),
    };
    let woken = (bits & WOKEN != 0).then(|| Woken {
        waking: (bits & WAKING != 0).then(|| Nanos(u64_at(25))),
        waker: (bits & WAKER != 0).then(|| task(u32_at(33))),
        waker_cpu: (bits & WAKER_CPU != 0).then(|| Cpu(u32_at(37))),
        target_cpu: Cpu(u32_at(41)),
    });
    (wait, woken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_gives_back_its_wait_and_wakeup() {
        let ids: Vec<TaskId> = vec![TaskId::IDLE];
        let wait = Wait {
            task: ids[0],
            start: Nanos(u64::MAX - 5),
            end: Nanos(u64::MAX),
            cause: WaitCause::Preempted,
            end_kind: WaitEnd::Unrecorded,
            ran_on: Cpu(70_000),
        };
        let woken = [
            None,
            Some(Woken { waking: None, waker: None, waker_cpu: None, target_cpu: Cpu(3) }),
            Some(Woken { waking: Some(Nanos(17)), waker: Some(ids[0]), waker_cpu: Some(Cpu(9)), target_cpu: Cpu(0) }),
        ];
        for cause in CAUSES {
            for end_kind in ENDS {
                for woken in woken {
                    let wait = Wait { cause, end_kind, ..wait };
                    assert_eq!(decode(&encode(&wait, woken), &|i| ids[i as usize]), (wait, woken));
                }
            }
        }
    }
}
