//! `latency` over a model built streaming (`model::Model::build_streaming`): each wait is
//! kept as a record of [`RECORD_BYTES`] in a [`RecordStore`] (memory, or a file the
//! caller spills to) instead of in the model's wait and wakeup tables, and read back in
//! chunks, each shared over the cores ([`RecordPass`]). The delays, groups and
//! percentiles are [`super::compute`]'s: the same per-wait code, on the same waits with
//! the same wakeups (the model's tests check that the sink is handed exactly those).

use super::{Found, Groups, Latencies, Near, Parts, Pass, Woken, add_found, finish, on_cores_in_pieces};
use crate::check::Affinity;
use crate::window::{TaskFilter, Window};
use model::{Cpu, Migration, Model, Nanos, TaskId, Wait, WaitCause, WaitEnd, WaitSink, Wakeup};

/// The bytes of a wait's record: task, start, end, CPU, cause and end, and the wakeup's
/// `sched_waking` time, waker and target CPU.
pub const RECORD_BYTES: usize = 41;

/// Where the records go while the model is built.
pub trait RecordStore {
    fn append(&mut self, record: &[u8; RECORD_BYTES]);
}

/// The sink of a model built streaming for `latency`: each wait to `store` as a record,
/// each task's migrations kept (migrations are few: a few hundred thousand on a 5M-event
/// trace).
pub struct Collector<S> {
    store: S,
    migrations: Vec<Vec<Nanos>>,
}

impl<S: RecordStore> Collector<S> {
    pub fn new(store: S) -> Collector<S> {
        Collector { store, migrations: Vec::new() }
    }

    /// The store, and per task the times it migrated, for [`RecordPass::new`].
    pub fn into_parts(self) -> (S, TaskMigrations) {
        (self.store, TaskMigrations(self.migrations))
    }
}

/// Per task (by index), the times it moved between CPUs, in order.
pub struct TaskMigrations(Vec<Vec<Nanos>>);

impl<S: RecordStore> WaitSink for Collector<S> {
    fn wait(&mut self, wait: &Wait, wakeup: Option<&Wakeup>) {
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

const CAUSES: [WaitCause; 3] = [WaitCause::Wakeup, WaitCause::NewTask, WaitCause::Preempted];
const ENDS: [WaitEnd; 4] = [WaitEnd::Ran, WaitEnd::Lost, WaitEnd::TraceEnd, WaitEnd::Unrecorded];
const WOKEN: u8 = 1 << 4;
const WAKING: u8 = 1 << 5;
const WAKER: u8 = 1 << 6;

/// A wait's record, little-endian: task (4), start (8), end (8), CPU (4), bits (1: cause,
/// end, which wakeup fields are there), `sched_waking` (8), waker (4), target CPU (4).
fn encode(wait: &Wait, woken: Option<Woken>) -> [u8; RECORD_BYTES] {
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
        record[37..41].copy_from_slice(&woken.target_cpu.0.to_le_bytes());
    }
    record[24] = bits;
    record
}

/// A record's wait and wakeup; `task` turns a task index back into the model's id.
fn decode(record: &[u8], task: &impl Fn(u32) -> TaskId) -> (Wait, Option<Woken>) {
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
        target_cpu: Cpu(u32_at(37)),
    });
    (wait, woken)
}

/// [`super::compute`] over waits read back as records, chunk by chunk.
pub struct RecordPass<'m> {
    pass: Pass<'m>,
    /// The model's task ids, by index.
    tasks: Vec<TaskId>,
    found: Found,
}

impl<'m> RecordPass<'m> {
    /// `model`: built streaming; `migrations`: its collector's.
    pub fn new(
        model: &'m Model,
        migrations: TaskMigrations,
        window: Window,
        filter: &TaskFilter,
        affinity: Option<&'m Affinity>,
        parts: Parts,
    ) -> RecordPass<'m> {
        let pass = Pass::new(model, window, filter, affinity, parts, Vec::new(), migrations.0);
        RecordPass { pass, tasks: model.tasks().ids().collect(), found: (Vec::new(), Groups::new(parts)) }
    }

    /// Adds the delays of `records` (whole records, as the store got them), the records
    /// shared over the cores.
    pub fn add(&mut self, records: &[u8]) {
        let pass = &self.pass;
        // Records name the model's tasks.
        let task = |index: u32| self.tasks[index as usize];
        let count = records.len() / RECORD_BYTES;
        let pieces = on_cores_in_pieces(pass.model, count, |near: &mut Near, range| {
            let mut found = (Vec::new(), Groups::new(pass.parts));
            for record in records[range.start * RECORD_BYTES..range.end * RECORD_BYTES].chunks_exact(RECORD_BYTES) {
                let (wait, woken) = decode(record, &task);
                pass.add(&wait, woken, near, &mut found);
            }
            found
        });
        for piece in pieces {
            add_found(&mut self.found, piece);
        }
    }

    pub fn finish(self) -> Latencies {
        finish(self.pass.model, self.pass.window, self.found)
    }
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
            Some(Woken { waking: None, waker: None, target_cpu: Cpu(3) }),
            Some(Woken { waking: Some(Nanos(17)), waker: Some(ids[0]), target_cpu: Cpu(0) }),
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
