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
    /// `compressed_packets` fields, which this reader does not inflate.
    pub compressed_packets: u64,
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

#[cfg(test)]
mod tests {
    use super::*;
    use tracedat::{EventItems, Item};

    /// Protobuf fields written by hand, so the test says byte for byte what it reads.
    fn varint(out: &mut Vec<u8>, mut value: u64) {
        while value >= 0x80 {
            out.push(value as u8 | 0x80);
            value >>= 7;
        }
        out.push(value as u8);
    }

    fn int(out: &mut Vec<u8>, number: u32, value: u64) {
        varint(out, u64::from(number) << 3);
        varint(out, value);
    }

    fn bytes(out: &mut Vec<u8>, number: u32, body: &[u8]) {
        varint(out, u64::from(number) << 3 | 2);
        varint(out, body.len() as u64);
        out.extend_from_slice(body);
    }

    fn packed(out: &mut Vec<u8>, number: u32, values: &[i64]) {
        let mut body = Vec::new();
        for &v in values {
            varint(&mut body, v as u64);
        }
        bytes(out, number, &body);
    }

    fn packet_of_bundle(bundle: &[u8]) -> Vec<u8> {
        let mut packet = Vec::new();
        bytes(&mut packet, 1, bundle);
        let mut trace = Vec::new();
        bytes(&mut trace, 1, &packet);
        trace
    }

    /// Each item as text: `time cpu name common_pid field=value...`, or a loss.
    fn items(trace: &PerfettoTrace) -> Vec<String> {
        let mut events = trace.all_events();
        let mut seen = Vec::new();
        while let Some(item) = events.next() {
            seen.push(match item {
                Item::Lost(lost) => format!("lost {:?} on {}", lost.count, lost.cpu.0),
                Item::Event(event) => {
                    let fields: Vec<String> = event
                        .fields()
                        .map(|(field, value)| match value.as_ref().and_then(|v| v.as_str()) {
                            Some(text) => format!("{}={text}", field.name),
                            None => format!("{}={}", field.name, value.and_then(|v| v.as_i64()).unwrap_or(-1)),
                        })
                        .collect();
                    format!("{} {} {} {} {}", event.ts.0, event.cpu.0, event.name(), event.pid().0, fields.join(" "))
                }
            });
        }
        seen
    }

    #[test]
    fn a_compact_sched_bundle_decodes_to_the_events_it_stands_for() {
        // Bundle 1, CPU 1: three switches and two wakings in compact columns.
        let mut compact = Vec::new();
        bytes(&mut compact, 5, b"bash");
        bytes(&mut compact, 5, b"worker");
        packed(&mut compact, 1, &[1000, 10, 20]);
        packed(&mut compact, 2, &[0, 1, 0]);
        packed(&mut compact, 3, &[10, 20, 10]);
        packed(&mut compact, 4, &[120, 100, 120]);
        packed(&mut compact, 6, &[0, 1, 0]);
        packed(&mut compact, 7, &[1005, 20]);
        packed(&mut compact, 8, &[20, 10]);
        packed(&mut compact, 9, &[1, 1]);
        packed(&mut compact, 10, &[100, 120]);
        packed(&mut compact, 11, &[1, 0]);
        packed(&mut compact, 12, &[1, 0]);
        let mut bundle = Vec::new();
        int(&mut bundle, 1, 1);
        bytes(&mut bundle, 4, &compact);
        let mut file = packet_of_bundle(&bundle);

        // Bundle 2, CPU 1, later in the file but earlier in time: a print by pid 5.
        let (mut print, mut event) = (Vec::new(), Vec::new());
        bytes(&mut print, 2, b"hi\n");
        int(&mut event, 1, 900);
        int(&mut event, 2, 5);
        bytes(&mut event, 3, &print);
        let mut bundle = Vec::new();
        int(&mut bundle, 1, 1);
        bytes(&mut bundle, 2, &event);
        file.extend(packet_of_bundle(&bundle));

        // Bundle 3, CPU 1, after lost events: a switch whose previous task is unknown.
        let mut compact = Vec::new();
        bytes(&mut compact, 5, b"bash");
        for (number, value) in [(1, 2000), (2, 0), (3, 10), (4, 120), (6, 0)] {
            packed(&mut compact, number, &[value]);
        }
        let mut bundle = Vec::new();
        int(&mut bundle, 1, 1);
        int(&mut bundle, 3, 1);
        bytes(&mut bundle, 4, &compact);
        file.extend(packet_of_bundle(&bundle));

        assert!(looks_like_perfetto(&file));
        let trace = PerfettoTrace::from_bytes("hand-made", file).unwrap();
        assert!(trace.damage_found().is_empty(), "{:?}", trace.damage_found());
        assert_eq!(
            items(&trace),
            [
                "900 1 print 5 ip=0 buf=hi\n",
                "1000 1 sched_switch 5 prev_comm= prev_pid=5 prev_prio=0 prev_state=0 next_comm=bash next_pid=10 next_prio=120",
                "1005 1 sched_waking 10 comm=worker pid=20 prio=100 target_cpu=1",
                "1010 1 sched_switch 10 prev_comm=bash prev_pid=10 prev_prio=120 prev_state=1 next_comm=worker next_pid=20 next_prio=100",
                "1025 1 sched_waking 20 comm=bash pid=10 prio=120 target_cpu=1",
                "1030 1 sched_switch 20 prev_comm=worker prev_pid=20 prev_prio=100 prev_state=0 next_comm=bash next_pid=10 next_prio=120",
                "lost None on 1",
                "2000 1 sched_switch 0 prev_comm= prev_pid=0 prev_prio=0 prev_state=0 next_comm=bash next_pid=10 next_prio=120",
            ]
        );
        let summary = trace.summary();
        assert_eq!(summary.unknown_prev, 1);
        let cpu = &summary.cpus[&1];
        assert_eq!(
            (cpu.bundles, cpu.lost_bundles, cpu.expanded, cpu.compact_switches, cpu.compact_wakings),
            (3, 1, 1, 4, 2)
        );
        assert_eq!(summary.events["sched_switch"], 4);
    }

    #[test]
    fn damage_is_an_error_before_the_first_packet_and_a_warning_after() {
        let mut bundle = Vec::new();
        int(&mut bundle, 1, 0);
        let good = packet_of_bundle(&bundle);
        let error = PerfettoTrace::from_bytes("x", vec![0x0a, 0x7f, 0x08]).unwrap_err().to_string();
        assert!(error.contains("x: Perfetto trace packet 0 at byte 0: field 1 claims 127 bytes"), "{error}");

        let mut damaged = good.clone();
        damaged.extend([0x0a, 0x05, 0x0f]);
        let trace = PerfettoTrace::from_bytes("y", damaged).unwrap();
        assert_eq!(trace.damage_count(), 1);
        let warning = trace.damage_found()[0].to_string();
        assert!(warning.contains(&format!("packet 1 at byte {}", good.len())), "{warning}");

        // A bundle whose CPU is beyond any machine: the packet is skipped, counted.
        let mut bundle = Vec::new();
        int(&mut bundle, 1, 1 << 40);
        let mut file = good.clone();
        file.extend(packet_of_bundle(&bundle));
        let trace = PerfettoTrace::from_bytes("z", file).unwrap();
        assert_eq!(trace.damage_count(), 1);
        assert!(trace.damage_found()[0].to_string().contains("CPU 1099511627776"));

        // Deflated packets are not inflated: said once, with how to inflate them.
        let mut packet = Vec::new();
        bytes(&mut packet, 50, b"x\x9c\x03\x00");
        let mut file = good.clone();
        bytes(&mut file, 1, &packet);
        let trace = PerfettoTrace::from_bytes("w", file).unwrap();
        assert_eq!(trace.summary().compressed_packets, 1);
        let warning = trace.damage_found()[0].to_string();
        assert!(warning.contains("packet 1 at byte") && warning.contains("traceconv decompress_packets"), "{warning}");
    }
}
