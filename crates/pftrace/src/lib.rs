//! Perfetto trace reading: the protobuf traces Perfetto's recorder (Android, ChromeOS),
//! the sched_ext tools (scxtop, systing) and `schedlens export --format perfetto` write.
//! This crate knows no scheduling: it reads the trace's packets (protos/perfetto/trace/
//! trace.proto, trace_packet.proto), decodes the ftrace bundles' events — expanded
//! `FtraceEvent`s and the delta-encoded `CompactSched` columns — and writes each back as
//! an ftrace record in layouts it declares with format files of its own (`layout`), so the
//! stages above read it through [`tracedat::EventSource`] exactly as a trace.dat.
//!
//! ```no_run
//! use tracedat::{EventItems, EventSource, Item};
//! let trace = pftrace::PerfettoTrace::open("trace.pftrace")?;
//! let mut events = trace.all_events();
//! while let Some(item) = events.next() {
//!     if let Item::Event(event) = item {
//!         println!("{} {} {}", event.ts, event.cpu, event.name());
//!     }
//! }
//! # Ok::<(), tracedat::Error>(())
//! ```
//!
//! The wire format is read by hand (`wire`) rather than through prost's derived structs;
//! docs/ARCHITECTURE.md's dependency table says why.

mod layout;
mod read;
mod store;
mod wire;

pub use store::Events;

use std::collections::BTreeMap;
use std::path::Path;
use tracedat::{Cmdlines, Error, ErrorKind, EventSource, Formats, Section};

/// What a trace held, for `info`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub packets: u64,
    /// Packets of the kinds this reader reads, by kind (one packet may hold several).
    pub packet_kinds: BTreeMap<&'static str, u64>,
    pub cpus: BTreeMap<u32, CpuCounts>,
    /// Events decoded, by name (compact ones included).
    pub events: BTreeMap<String, u64>,
    /// Events this reader has no layout for, by their field number in `FtraceEvent`.
    pub unknown_events: BTreeMap<u32, u64>,
    /// The trace config's buffers: size in KiB and fill policy (1 ring buffer, 2 discard).
    pub buffers: Vec<(u64, u64)>,
    /// Events the kernel overwrote or dropped per CPU, by the ftrace statistics.
    pub overruns: BTreeMap<u32, u64>,
    /// Compact switches that followed no sign of their CPU's task (given pid 0).
    pub unknown_prev: u64,
}

/// One CPU's bundles and events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuCounts {
    pub bundles: u64,
    /// Bundles marked as following lost events.
    pub lost_bundles: u64,
    pub expanded: u64,
    pub compact_switches: u64,
    pub compact_wakings: u64,
}

/// An open Perfetto trace, read whole.
pub struct PerfettoTrace {
    input: String,
    size: u64,
    formats: Formats,
    format_texts: Vec<String>,
    stores: Vec<store::CpuStore>,
    cmdlines: Cmdlines,
    summary: Summary,
    damage: Vec<Error>,
    damage_count: u64,
}

impl std::fmt::Debug for PerfettoTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfettoTrace").field("input", &self.input).finish_non_exhaustive()
    }
}

/// Whether a file's first bytes look like a Perfetto trace: a packet (field 1,
/// length-delimited) whose length is plausible and whose first field is a known packet
/// field of a valid wire type. Checked after trace.dat's and perf.data's magics.
pub fn looks_like_perfetto(first: &[u8]) -> bool {
    let Some((&0x0a, rest)) = first.split_first() else { return false };
    let Some((len, used)) = wire::varint(rest) else { return false };
    let body = &rest[used..];
    if len == 0 {
        return true;
    }
    match wire::varint(body) {
        Some((key, _)) => {
            let (number, wire_type) = (key >> 3, key & 7);
            number != 0 && number < (1 << 20) && matches!(wire_type, 0 | 1 | 2 | 5)
        }
        None => body.len() < 10,
    }
}

impl PerfettoTrace {
    pub fn open(path: impl AsRef<Path>) -> Result<PerfettoTrace, Error> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error {
            input: name.clone(),
            section: Section::Named("Perfetto trace".into()),
            offset: 0,
            kind: ErrorKind::Io(e),
        })?;
        PerfettoTrace::from_bytes(name, bytes)
    }

    /// Reads a trace held in memory; `name` is used in messages.
    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Result<PerfettoTrace, Error> {
        let input = name.into();
        let mut reading = read::Reading::new();
        reading.trace(&bytes).map_err(|damage| error_of(&input, damage))?;
        reading.finish();
        let format_texts: Vec<String> = reading.layouts.iter().map(layout::Layout::format_text).collect();
        let systems = reading.layouts.iter().map(|l| l.system.as_str());
        let formats = Formats::parse(systems.zip(&format_texts).map(|(system, text)| (system, text.as_str())), 8);
        let names: String =
            reading.names.iter().map(|(pid, comm)| format!("{pid} {}\n", comm.replace('\n', " "))).collect();
        let damage = reading.damage.iter().map(|d| error_of(&input, d.clone())).collect();
        Ok(PerfettoTrace {
            input,
            size: bytes.len() as u64,
            formats,
            format_texts,
            stores: reading.stores,
            cmdlines: Cmdlines::parse(&names),
            summary: reading.summary,
            damage,
            damage_count: reading.damage_count,
        })
    }

    /// The file's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The format files of the records this reader wrote (one per event it decoded).
    pub fn format_texts(&self) -> &[String] {
        &self.format_texts
    }

    /// Damage found, the first 64 places (also given by [`EventSource::damage`]).
    pub fn damage_found(&self) -> &[Error] {
        &self.damage
    }

    /// How many places were damaged (more than [`Self::damage_found`] lists past 64).
    pub fn damage_count(&self) -> u64 {
        self.damage_count
    }

    /// Each CPU: its number, events and loss notices.
    pub fn cpus(&self) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        self.stores.iter().map(|s| (s.cpu, s.events, s.losses))
    }

    /// The events of some CPUs (`None`: all), merged in time order.
    pub fn events_of(&self, cpus: Option<&[u32]>) -> Events<'_> {
        let chosen = self.stores.iter().filter(|s| cpus.is_none_or(|cpus| cpus.contains(&s.cpu)));
        Events::new(chosen, &self.formats)
    }
}

fn error_of(input: &str, damage: read::Damage) -> Error {
    Error {
        input: input.to_string(),
        section: Section::Named(format!("Perfetto trace packet {}", damage.packet)),
        offset: damage.offset,
        kind: ErrorKind::Malformed(damage.message),
    }
}

impl EventSource for PerfettoTrace {
    type Items<'s> = Events<'s>;

    fn input(&self) -> &str {
        &self.input
    }

    fn formats(&self) -> &Formats {
        &self.formats
    }

    fn cpu_count(&self) -> u32 {
        self.stores.last().map_or(0, |s| s.cpu + 1)
    }

    fn cpu_sizes(&self) -> Vec<(u32, u64)> {
        self.stores.iter().map(|s| (s.cpu, s.size())).collect()
    }

    fn cpu_events(&self, cpu: u32) -> Events<'_> {
        let store = self.stores.binary_search_by_key(&cpu, |s| s.cpu).ok().map(|i| &self.stores[i]);
        Events::new(store.into_iter(), &self.formats)
    }

    fn all_events(&self) -> Events<'_> {
        Events::new(self.stores.iter(), &self.formats)
    }

    fn buffer(&self) -> &str {
        ""
    }

    fn cmdlines(&self) -> &Cmdlines {
        &self.cmdlines
    }

    fn damage(&self) -> Vec<Error> {
        let mut errors: Vec<Error> = self
            .damage
            .iter()
            .map(|e| Error {
                input: e.input.clone(),
                section: e.section.clone(),
                offset: e.offset,
                kind: ErrorKind::Malformed(e.kind.to_string()),
            })
            .collect();
        let unlisted = self.damage_count.saturating_sub(self.damage.len() as u64);
        if unlisted > 0 {
            errors.push(Error {
                input: self.input.clone(),
                section: Section::Named("Perfetto trace".into()),
                offset: 0,
                kind: ErrorKind::Malformed(format!("{unlisted} more damaged places")),
            });
        }
        errors
    }
}
