//! Reading and decoding run on their own thread, ahead of the tracker: events come over
//! in batches of decoded scheduler events, their names copied into the batch, so that on
//! two or more cores merging, decoding and tracking overlap. Batches are recycled, so
//! the pipeline allocates nothing in the steady state and holds a bounded number of
//! events in flight.

use crate::events::{EventContext, Sched, SchedDecoder};
use std::ops::Range;
use std::sync::mpsc::{Receiver, SyncSender};
use tracedat::{Cpu, EventStream, Item};

/// Events per batch: large enough that channel traffic is negligible, small enough to
/// stay in cache.
const BATCH_EVENTS: usize = 16384;

/// Where a name lies in its batch's name bytes.
#[derive(Copy, Clone, Debug)]
pub(crate) struct NameRef {
    start: u32,
    end: u32,
}

impl NameRef {
    fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One item of the stream, decoded.
pub(crate) enum Staged {
    Event(EventContext, Sched<NameRef>),
    Lost(Cpu, Option<u64>),
}

/// A run of decoded items and the bytes their names point into.
#[derive(Default)]
pub(crate) struct Batch {
    pub items: Vec<Staged>,
    names: Vec<u8>,
    /// Bytes of trace data read when the batch was sent (for progress).
    pub bytes_done: u64,
}

impl Batch {
    pub fn name(&self, name: NameRef) -> &[u8] {
        &self.names[name.range()]
    }

    fn keep_name(&mut self, name: &[u8]) -> NameRef {
        let start = self.names.len() as u32;
        self.names.extend_from_slice(name);
        NameRef { start, end: self.names.len() as u32 }
    }

    fn clear(&mut self) {
        self.items.clear();
        self.names.clear();
    }
}

/// What the stream reports once it is exhausted.
pub(crate) struct StreamEnd {
    pub events: u64,
    pub unknown_events: u64,
    pub damage: Vec<tracedat::Error>,
}

/// Reads `stream` to its end, sending decoded batches to `full` and reusing those that
/// come back on `empty`. Stops early when the receiving side has gone.
pub(crate) fn stage(
    mut stream: EventStream<'_>,
    decoder: &SchedDecoder,
    full: SyncSender<Batch>,
    empty: Receiver<Batch>,
) -> StreamEnd {
    let mut events = 0u64;
    let mut batch = Batch::default();
    while let Some(item) = stream.next() {
        match item {
            Item::Event(event) => {
                events += 1;
                let ctx = EventContext { ts: event.ts, cpu: event.cpu, pid: event.pid() };
                let decoded = decoder.decode(&event).map_names(|name| batch.keep_name(name));
                batch.items.push(Staged::Event(ctx, decoded));
            }
            Item::Lost(lost) => batch.items.push(Staged::Lost(lost.cpu, lost.count)),
        }
        if batch.items.len() >= BATCH_EVENTS {
            batch.bytes_done = stream.bytes_done();
            let next = empty.try_recv().unwrap_or_default();
            if full.send(std::mem::replace(&mut batch, next)).is_err() {
                break;
            }
            batch.clear();
        }
    }
    if !batch.items.is_empty() {
        batch.bytes_done = stream.bytes_done();
        let _ = full.send(batch);
    }
    StreamEnd { events, unknown_events: stream.unknown_events(), damage: stream.take_damage() }
}
