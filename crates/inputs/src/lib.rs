//! The one place that opens a recording, told apart by its magic bytes (never by its
//! name): trace.dat (trace-cmd, `schedlens record`), perf.data (`perf sched record`,
//! `perf record -e 'sched:*'`, file or pipe mode) or a Perfetto trace (protobuf packets
//! with ftrace bundles). All are event sources ([`tracedat::EventSource`]), so every stage
//! above reads any of them the same way; what only one of them has (trace.dat's recorded
//! context and buffers, perf.data's feature sections, a Perfetto trace's packet counts) is
//! reached through [`Input::trace_dat`], [`Input::perf_data`] and [`Input::perfetto`];
//! what it says of itself through [`Input::describe`], [`Input::recorded_topology`] and
//! [`Input::command_pid`].

pub mod describe;

pub use describe::{describe_perf_data, describe_perfetto, describe_trace_dat};
use model::{Pid, Topology};
use perfdata::PerfData;
use pftrace::PerfettoTrace;
use std::io::Read;
use std::path::Path;
use tracedat::{
    Cmdlines, Error, Event, EventItems, EventSource, EventStream, Formats, Item, RecordedContext, Selection, Trace,
};

/// An open recording.
#[derive(Debug)]
pub enum Input {
    TraceDat(Trace),
    PerfData(PerfData),
    Perfetto(PerfettoTrace),
}

/// The formats this crate opens.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    TraceDat,
    PerfData,
    Perfetto,
}

/// trace.dat's magic: `\x17\x08\x44` and "tracing".
const TRACE_DAT_MAGIC: &[u8] = b"\x17\x08\x44tracing";
/// Bytes read to tell the formats apart.
const SNIFF_BYTES: u64 = 32;

/// The format a file's first bytes say: trace.dat's and perf.data's magics first, then
/// the start of a plausible Perfetto packet; anything else goes to trace.dat's reader,
/// which says what is wrong with it.
pub fn kind_of(first_bytes: &[u8]) -> Kind {
    named_kind(first_bytes).unwrap_or(Kind::TraceDat)
}

/// The format a file's first bytes name, if they name one (a Perfetto trace has no magic:
/// its first bytes only look like a packet, as many files' do).
pub fn named_kind(first_bytes: &[u8]) -> Option<Kind> {
    if first_bytes.starts_with(TRACE_DAT_MAGIC) {
        Some(Kind::TraceDat)
    } else if perfdata::endian_of_magic(first_bytes).is_some() {
        Some(Kind::PerfData)
    } else if pftrace::looks_like_perfetto(first_bytes) {
        Some(Kind::Perfetto)
    } else {
        None
    }
}

impl Kind {
    /// The format of a file by its first bytes (trace.dat when it cannot be read: its
    /// reader then says why).
    pub fn of_file(path: &Path) -> Kind {
        Kind::named_by_file(path).unwrap_or(Kind::TraceDat)
    }

    /// The format a file's first bytes name ([`named_kind`]); `None` when they name none
    /// or the file cannot be opened.
    pub fn named_by_file(path: &Path) -> Option<Kind> {
        let mut first = Vec::with_capacity(SNIFF_BYTES as usize);
        let file = std::fs::File::open(path).ok()?;
        let _ = file.take(SNIFF_BYTES).read_to_end(&mut first);
        named_kind(&first)
    }
}

impl Input {
    /// Opens a file by what its first bytes say it is.
    pub fn open(path: impl AsRef<Path>) -> Result<Input, Error> {
        let path = path.as_ref();
        match Kind::of_file(path) {
            Kind::PerfData => PerfData::open(path).map(Input::PerfData),
            Kind::Perfetto => PerfettoTrace::open(path).map(Input::Perfetto),
            Kind::TraceDat => Trace::open(path).map(Input::TraceDat),
        }
    }

    /// Reads a recording held in memory; `name` is used in messages.
    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Result<Input, Error> {
        match kind_of(&bytes) {
            Kind::PerfData => PerfData::from_bytes(name, bytes).map(Input::PerfData),
            Kind::Perfetto => PerfettoTrace::from_bytes(name, bytes).map(Input::Perfetto),
            Kind::TraceDat => Trace::from_bytes(name, bytes).map(Input::TraceDat),
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Input::TraceDat(_) => Kind::TraceDat,
            Input::PerfData(_) => Kind::PerfData,
            Input::Perfetto(_) => Kind::Perfetto,
        }
    }

    pub fn trace_dat(&self) -> Option<&Trace> {
        match self {
            Input::TraceDat(trace) => Some(trace),
            _ => None,
        }
    }

    pub fn perf_data(&self) -> Option<&PerfData> {
        match self {
            Input::PerfData(perf) => Some(perf),
            _ => None,
        }
    }

    pub fn perfetto(&self) -> Option<&PerfettoTrace> {
        match self {
            Input::Perfetto(trace) => Some(trace),
            _ => None,
        }
    }

    /// What `schedlens record` stored about the recording (topology, command, affinity);
    /// perf.data and Perfetto traces keep none of it.
    pub fn recorded_context(&self) -> Option<RecordedContext> {
        self.trace_dat().and_then(Trace::recorded_context)
    }

    /// The machine's topology as `schedlens record` stored it, if it did and it reads.
    pub fn recorded_topology(&self) -> Option<Topology> {
        self.recorded_context().and_then(|c| c.topology).and_then(|t| Topology::from_lscpu(&t).ok())
    }

    /// The recorded command's process id, when `schedlens record` ran a command.
    pub fn command_pid(&self) -> Option<Pid> {
        self.recorded_context().and_then(|c| c.pid).map(|p| Pid(p as i32))
    }

    /// Bytes of event data, for progress bars.
    pub fn data_size(&self) -> u64 {
        match self {
            Input::TraceDat(trace) => trace.data_size(&Selection::all()),
            Input::PerfData(perf) => perf.cpu_sizes().iter().map(|&(_, size)| size).sum(),
            Input::Perfetto(trace) => trace.cpu_sizes().iter().map(|&(_, size)| size).sum(),
        }
    }
}

/// Any container's stream.
pub enum InputItems<'s> {
    TraceDat(EventStream<'s>),
    PerfData(perfdata::Events<'s>),
    Perfetto(pftrace::Events<'s>),
}

impl EventItems for InputItems<'_> {
    #[inline]
    fn next(&mut self) -> Option<Item<'_>> {
        match self {
            InputItems::TraceDat(stream) => stream.next(),
            InputItems::PerfData(stream) => stream.next(),
            InputItems::Perfetto(stream) => stream.next(),
        }
    }

    fn bytes_done(&self) -> u64 {
        match self {
            InputItems::TraceDat(stream) => stream.bytes_done(),
            InputItems::PerfData(stream) => stream.bytes_done(),
            InputItems::Perfetto(stream) => stream.bytes_done(),
        }
    }

    fn unknown_events(&self) -> u64 {
        match self {
            InputItems::TraceDat(stream) => stream.unknown_events(),
            InputItems::PerfData(stream) => stream.unknown_events(),
            InputItems::Perfetto(stream) => stream.unknown_events(),
        }
    }

    fn take_damage(&mut self) -> Vec<Error> {
        match self {
            InputItems::TraceDat(stream) => stream.take_damage(),
            InputItems::PerfData(stream) => stream.take_damage(),
            InputItems::Perfetto(stream) => stream.take_damage(),
        }
    }
}

/// Calls the same method of whichever source is inside.
macro_rules! either {
    ($input:expr, $source:ident => $body:expr) => {
        match $input {
            Input::TraceDat($source) => $body,
            Input::PerfData($source) => $body,
            Input::Perfetto($source) => $body,
        }
    };
}

impl EventSource for Input {
    type Items<'s> = InputItems<'s>;

    fn input(&self) -> &str {
        either!(self, s => EventSource::input(s))
    }

    fn formats(&self) -> &Formats {
        either!(self, s => EventSource::formats(s))
    }

    fn cpu_count(&self) -> u32 {
        either!(self, s => EventSource::cpu_count(s))
    }

    fn cpu_sizes(&self) -> Vec<(u32, u64)> {
        either!(self, s => s.cpu_sizes())
    }

    fn cpu_events(&self, cpu: u32) -> InputItems<'_> {
        match self {
            Input::TraceDat(trace) => InputItems::TraceDat(trace.cpu_events(cpu)),
            Input::PerfData(perf) => InputItems::PerfData(perf.cpu_events(cpu)),
            Input::Perfetto(trace) => InputItems::Perfetto(trace.cpu_events(cpu)),
        }
    }

    fn all_events(&self) -> InputItems<'_> {
        match self {
            Input::TraceDat(trace) => InputItems::TraceDat(trace.all_events()),
            Input::PerfData(perf) => InputItems::PerfData(perf.all_events()),
            Input::Perfetto(trace) => InputItems::Perfetto(trace.all_events()),
        }
    }

    fn buffer(&self) -> &str {
        either!(self, s => s.buffer())
    }

    fn cmdlines(&self) -> &Cmdlines {
        either!(self, s => s.cmdlines())
    }

    fn cpu_stats(&self) -> &[String] {
        either!(self, s => s.cpu_stats())
    }

    fn damage(&self) -> Vec<Error> {
        either!(self, s => EventSource::damage(s))
    }

    fn bprint_message(&self, event: &Event<'_>, out: &mut Vec<u8>) -> bool {
        either!(self, s => s.bprint_message(event, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_told_apart_by_their_magic() {
        assert_eq!(kind_of(b"PERFILE2\x68\0\0\0"), Kind::PerfData);
        assert_eq!(kind_of(b"2ELIFREP"), Kind::PerfData);
        assert_eq!(kind_of(b"\x17\x08\x44tracing6"), Kind::TraceDat);
        assert_eq!(kind_of(b"PERF"), Kind::TraceDat, "anything else goes to trace.dat's reader, which says why not");
        // A packet of 3 bytes holding an ftrace bundle's start; then damage of it.
        assert_eq!(kind_of(b"\x0a\x03\x0a\x01\x08"), Kind::Perfetto);
        assert_eq!(kind_of(b"\x0a\x03\x0f"), Kind::TraceDat, "wire type 7 is no protobuf");
        assert_eq!(kind_of(b"\x0a"), Kind::TraceDat);
        assert_eq!(kind_of(b"\x17\x08\x44tracing6\x0a"), Kind::TraceDat);
    }
}
