//! `latency` over a model built streaming (`model::Model::build_streaming`): its waits,
//! kept as records (`crate::records`) instead of in the model's wait and wakeup tables,
//! read back in chunks, each shared over the cores ([`RecordPass`]). The delays, groups and
//! percentiles are [`super::compute`]'s: the same per-wait code, on the same waits with
//! the same wakeups (the model's tests check that the sink is handed exactly those).

use super::{Found, Groups, Latencies, Near, Parts, Pass, add_found, finish, on_cores_in_pieces};
use crate::check::Affinity;
use crate::records::{RECORD_BYTES, TaskMigrations, decode};
use crate::window::{TaskFilter, Window};
use model::{Model, TaskId};

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
