//! What the stages above the reader read, whatever the container: ftrace event records
//! with their formats, per CPU in time order, with loss notices. trace.dat keeps them in
//! ring-buffer pages; perf.data keeps the same records as the raw payloads of its samples,
//! with the same formats in its tracing-data section. [`EventSource`] is that common
//! ground, implemented here by [`Trace`] (its main buffer) and by the perf.data reader;
//! the model is generic over it, so each container's stream is inlined into the model's
//! hot loop instead of being called through a pointer per event.

use crate::error::Error;
use crate::read::event::Event;
use crate::read::formats::Formats;
use crate::read::symbols::Cmdlines;
use crate::read::trace::{EventStream, Item, Selection, Trace};

/// A stream of events and loss notices in time order (one CPU's, or several merged).
/// Not an `Iterator`: each item borrows the stream until the next call, so reading
/// allocates nothing per event.
pub trait EventItems: Send {
    /// The next event or loss notice; `None` at the end.
    fn next(&mut self) -> Option<Item<'_>>;
    /// Bytes of stored data read so far (for progress).
    fn bytes_done(&self) -> u64;
    /// Events whose id has no format.
    fn unknown_events(&self) -> u64;
    /// Damage found while streaming, leaving none.
    fn take_damage(&mut self) -> Vec<Error>;
}

/// A source of ftrace event records with their formats, per CPU in time order, with loss
/// notices.
pub trait EventSource: Sync {
    type Items<'s>: EventItems
    where
        Self: 's;

    /// The input's name (the path it was opened from), for messages.
    fn input(&self) -> &str;
    fn formats(&self) -> &Formats;
    /// The number of CPUs of the traced machine, counting CPUs that recorded nothing.
    fn cpu_count(&self) -> u32;
    /// The CPUs whose events [`Self::cpu_events`] reads, each with the bytes it holds
    /// (to balance work between threads and to show progress), in CPU order.
    fn cpu_sizes(&self) -> Vec<(u32, u64)>;
    /// One CPU's events in time order, read on the calling thread.
    fn cpu_events(&self, cpu: u32) -> Self::Items<'_>;
    /// Every event the source holds, merged in time order (ties to the lower CPU).
    fn all_events(&self) -> Self::Items<'_>;
    /// The name of the buffer [`Self::cpu_events`] reads ("" is the top buffer).
    fn buffer(&self) -> &str;
    /// The comm of each pid known before the first event.
    fn cmdlines(&self) -> &Cmdlines;
    /// The recorder's per-CPU statistics (trace.dat's CPUSTAT texts: `CPU:`, `overrun:`,
    /// ... lines, each instance's after a `Buffer: NAME` line); none where the container
    /// keeps none.
    fn cpu_stats(&self) -> &[String] {
        &[]
    }
    /// Damage found before any event was streamed (a container read whole when opened).
    fn damage(&self) -> Vec<Error> {
        Vec::new()
    }
    /// The message of a `bprint` event (`trace_printk`), as [`crate::bprint_message`]
    /// writes it; `false` where the source cannot format it.
    fn bprint_message(&self, _event: &Event<'_>, _out: &mut Vec<u8>) -> bool {
        false
    }
}

impl EventItems for EventStream<'_> {
    #[inline]
    fn next(&mut self) -> Option<Item<'_>> {
        EventStream::next(self)
    }

    fn bytes_done(&self) -> u64 {
        EventStream::bytes_done(self)
    }

    fn unknown_events(&self) -> u64 {
        EventStream::unknown_events(self)
    }

    fn take_damage(&mut self) -> Vec<Error> {
        EventStream::take_damage(self)
    }
}

/// A trace.dat file as an event source: its main buffer (the top one, else the first)
/// per CPU; [`EventSource::all_events`] reads every buffer.
impl EventSource for Trace {
    type Items<'s> = EventStream<'s>;

    fn input(&self) -> &str {
        Trace::input(self)
    }

    fn formats(&self) -> &Formats {
        Trace::formats(self)
    }

    fn cpu_count(&self) -> u32 {
        Trace::cpu_count(self)
    }

    fn cpu_sizes(&self) -> Vec<(u32, u64)> {
        let buffer = EventSource::buffer(self);
        let cpus = self.buffers().iter().filter(|b| b.name == buffer).flat_map(|b| &b.cpus);
        cpus.map(|c| (c.cpu, c.size)).collect()
    }

    fn cpu_events(&self, cpu: u32) -> EventStream<'_> {
        self.events_of(&Selection::one_cpu(EventSource::buffer(self), cpu))
    }

    fn all_events(&self) -> EventStream<'_> {
        self.events_of(&Selection::all())
    }

    fn buffer(&self) -> &str {
        let buffers = self.buffers();
        buffers.iter().find(|b| b.name.is_empty()).or(buffers.first()).map_or("", |b| b.name.as_str())
    }

    fn cmdlines(&self) -> &Cmdlines {
        &self.metadata().cmdlines
    }

    fn cpu_stats(&self) -> &[String] {
        &self.metadata().options.cpustats
    }

    fn bprint_message(&self, event: &Event<'_>, out: &mut Vec<u8>) -> bool {
        crate::bprint_message(self, event, out)
    }
}
