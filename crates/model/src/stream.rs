//! Waits handed over as they end instead of kept in tables: [`Model::build_streaming`]
//! builds the segments and tasks as usual and gives each wait (with the wakeup that began
//! it) and each migration to a [`WaitSink`]. A pass that looks at every wait once
//! (`latency`) then needs no memory for the waits' and wakeups' tables, which on a trace of
//! ten million waits are twice the segments' size.
//!
//! A task waits at most once at a time, and is woken at most once per wait, so the
//! tracker keeps one open wait and one wakeup per task, named by the task's index, and
//! hands each wait over the moment it is closed: the sink sees exactly the waits the
//! tables would hold, with the wakeup `Model::wakeups_by_wait` gives each.
//!
//! [`Model::build_streaming`]: crate::Model::build_streaming

use crate::table::{WaitId, WakeupId, sealed::FromIndex};
use crate::tables::{Migration, Migrations, Wait, WaitCause, WaitEnd, Waits, Wakeup, WakeupKind, Wakeups};
use crate::tasks::TaskId;
use tracedat::{Cpu, Nanos};

/// Receives what a model built by [`crate::Model::build_streaming`] does not keep.
pub trait WaitSink {
    /// A wait, once it is over: ended (`end_kind` says how), or still open when the trace
    /// ended (`TraceEnd`), or left open by the tracker (its end is its start, as the tables
    /// keep it). `wakeup` began it, if one did; its `wait` is `None` (there is no table to
    /// name). Waits come in the order they are closed, which is about the order of their ends.
    fn wait(&mut self, wait: &Wait, wakeup: Option<&Wakeup>);
    /// A migration, in time order.
    fn migration(&mut self, migration: &Migration);
}

/// Where the tracker puts waits, wakeups and migrations: the model's tables, or a
/// [`Stream`] to a sink. The one place that tells the two apart.
// One per tracker, its tables written for every wait: not boxed behind a pointer.
#[allow(clippy::large_enum_variant)]
pub(crate) enum WaitStore<'s> {
    Tables { waits: Waits, wakeups: Wakeups, migrations: Migrations },
    Streamed(Stream<'s>),
}

impl<'s> WaitStore<'s> {
    pub fn tables() -> WaitStore<'s> {
        WaitStore::Tables { waits: Waits::default(), wakeups: Wakeups::default(), migrations: Migrations::default() }
    }

    pub fn streamed(sink: &'s mut dyn WaitSink) -> WaitStore<'s> {
        WaitStore::Streamed(Stream { sink, waits: Vec::new(), wakeups: Vec::new() })
    }

    pub fn begin_wait(&mut self, task: TaskId, start: Nanos, cause: WaitCause, queue: Cpu) -> WaitId {
        match self {
            WaitStore::Tables { waits, .. } => waits.begin(task, start, cause, queue),
            WaitStore::Streamed(stream) => stream.begin_wait(task, start, cause, queue),
        }
    }

    /// Ends wait `id` at `end` (no earlier than its start).
    pub fn end_wait(&mut self, id: WaitId, end: Nanos, how: WaitEnd, ran_on: Cpu) {
        match self {
            WaitStore::Tables { waits, .. } => waits.end(id, end, how, ran_on),
            WaitStore::Streamed(stream) => stream.end_wait(id, end, how, ran_on),
        }
    }

    /// Sets the end of a wait still open when the trace ended.
    pub fn close_wait(&mut self, id: WaitId, end: Nanos) {
        match self {
            WaitStore::Tables { waits, .. } => waits.set_end(id, end),
            WaitStore::Streamed(stream) => stream.close_wait(id, end),
        }
    }

    /// A wakeup starting at `time` (see [`Wakeups::begin`]).
    pub fn begin_wakeup(
        &mut self,
        time: Nanos,
        wakee: TaskId,
        waker: Option<(TaskId, Cpu)>,
        prev_cpu: Option<Cpu>,
        target_cpu: Cpu,
    ) -> WakeupId {
        match self {
            WaitStore::Tables { wakeups, .. } => wakeups.begin(time, wakee, waker, prev_cpu, target_cpu),
            WaitStore::Streamed(stream) => stream.begin_wakeup(time, wakee, waker, prev_cpu, target_cpu),
        }
    }

    /// The wakee of wakeup `id` was enqueued on `target`, beginning wait `wait`.
    pub fn enqueued(&mut self, id: WakeupId, kind: WakeupKind, target: Cpu, wait: Option<WaitId>) {
        match self {
            WaitStore::Tables { wakeups, .. } => wakeups.enqueued(id, kind, target, wait),
            WaitStore::Streamed(stream) => stream.enqueued(id, kind, target),
        }
    }

    pub fn migration(&mut self, migration: Migration) {
        match self {
            WaitStore::Tables { migrations, .. } => migrations.push(migration),
            WaitStore::Streamed(stream) => stream.sink.migration(&migration),
        }
    }

    /// The tables (empty when streamed: every wait still held is handed over now), and
    /// whether they were streamed.
    pub fn finish(self) -> (Waits, Wakeups, Migrations, bool) {
        match self {
            WaitStore::Tables { waits, wakeups, migrations } => (waits, wakeups, migrations, false),
            WaitStore::Streamed(mut stream) => {
                for index in 0..stream.waits.len() {
                    stream.hand_over(index);
                }
                (Waits::default(), Wakeups::default(), Migrations::default(), true)
            }
        }
    }
}

/// Each task's open wait and latest wakeup, until the wait is handed to the sink.
pub(crate) struct Stream<'s> {
    sink: &'s mut dyn WaitSink,
    waits: Vec<Option<Wait>>,
    /// A task's latest wakeup, and whether it began the task's open wait.
    wakeups: Vec<Option<(Wakeup, bool)>>,
}

impl Stream<'_> {
    fn begin_wait(&mut self, task: TaskId, start: Nanos, cause: WaitCause, queue: Cpu) -> WaitId {
        self.hand_over(task.index());
        let wait = Wait { task, start, end: start, cause, end_kind: WaitEnd::TraceEnd, ran_on: queue };
        *slot(&mut self.waits, task.index()) = Some(wait);
        WaitId::from_index(task.index())
    }

    /// Ends the open wait `id` at `end` (no earlier than its start) and hands it over.
    fn end_wait(&mut self, id: WaitId, end: Nanos, how: WaitEnd, ran_on: Cpu) {
        if let Some(wait) = self.waits.get_mut(id.index()).and_then(Option::as_mut) {
            wait.end = end.max(wait.start);
            wait.end_kind = how;
            wait.ran_on = ran_on;
        }
        self.hand_over(id.index());
    }

    /// Sets the end of a wait still open when the trace ended, and hands it over.
    fn close_wait(&mut self, id: WaitId, end: Nanos) {
        if let Some(wait) = self.waits.get_mut(id.index()).and_then(Option::as_mut) {
            wait.end = end.max(wait.start);
        }
        self.hand_over(id.index());
    }

    fn begin_wakeup(
        &mut self,
        time: Nanos,
        wakee: TaskId,
        waker: Option<(TaskId, Cpu)>,
        prev_cpu: Option<Cpu>,
        target_cpu: Cpu,
    ) -> WakeupId {
        // A wakeup begins only while its task does not wait: a wait still open there was
        // left without an end.
        self.hand_over(wakee.index());
        let wakeup = Wakeup {
            kind: WakeupKind::Wakeup,
            wakee,
            waking: waker.map(|_| time),
            waker: waker.map(|(task, _)| task),
            waker_cpu: waker.map(|(_, cpu)| cpu),
            prev_cpu,
            target_cpu,
            wait: None,
        };
        *slot(&mut self.wakeups, wakee.index()) = Some((wakeup, false));
        WakeupId::from_index(wakee.index())
    }

    /// Wakeup `id`'s wakee was enqueued on `target`, beginning its open wait.
    fn enqueued(&mut self, id: WakeupId, kind: WakeupKind, target: Cpu) {
        if let Some((wakeup, began)) = self.wakeups.get_mut(id.index()).and_then(Option::as_mut) {
            wakeup.kind = kind;
            wakeup.target_cpu = target;
            *began = true;
        }
    }

    /// Hands the held wait of the task at `index` to the sink with the wakeup that began it.
    fn hand_over(&mut self, index: usize) {
        let Some(wait) = self.waits.get_mut(index).and_then(Option::take) else { return };
        let wakeup = match self.wakeups.get_mut(index) {
            Some(held @ Some((_, true))) => held.take().map(|(wakeup, _)| wakeup),
            _ => None,
        };
        self.sink.wait(&wait, wakeup.as_ref());
    }
}

/// `slots[index]`, the slots grown to hold it.
fn slot<T>(slots: &mut Vec<Option<T>>, index: usize) -> &mut Option<T> {
    if slots.len() <= index {
        slots.resize_with(index + 1, || None);
    }
    &mut slots[index]
}
