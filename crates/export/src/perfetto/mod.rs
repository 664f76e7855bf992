//! `schedlens export --format perfetto`: a Perfetto trace (`.pftrace`) that Perfetto's
//! UI and trace processor open like one of their own recordings.
//!
//! The file holds, as Perfetto's recorder writes them, the trace's events in per-CPU
//! ftrace bundles (so CPU tracks, thread states, wakeup arrows, process names and trace
//! markers come from Perfetto's own parsers), and schedlens's tracks: running and
//! waiting task counts, per-CPU runqueue length and `check`'s incidents.
//!
//! The work is split so that it runs in parallel and in bounded memory:
//! [`PerfettoFile::encode_events`] encodes each CPU's events straight from the reader's
//! per-CPU stream on worker threads, into the file in CPU order (see [`sequence`]: the
//! first unfinished CPU writes to the file, the others hold their bytes until their turn),
//! [`PerfettoFile::encode_tracks`] sweeps the model's counters in parallel parts (into
//! scratch files) while `check` runs beside it, and [`PerfettoFile::finish`] appends the
//! tracks — so the bytes never depend on timing. The events need no model when
//! nothing filters them: the caller can encode them while it builds the model.
//!
//! Two contents ([`Content`]): by default switches and wakings go into the bundles'
//! column-wise `compact_sched` rows wherever the model saw every switch (compact switches
//! leave out the previous task, which readers infer from the CPU's previous switch: wrong
//! where a switch went unrecorded, so full events stay there), events no reader uses are
//! left out, and of schedlens's tracks only `check`'s incidents are written (the counters
//! would take more than the events); [`Content::AllEvents`] writes every event in full and
//! every track. The compact file needs the model before its events; the full one does not.

mod compact;
mod ftrace;
pub mod proto;
mod sequence;
mod tracks;

pub use compact::CleanStretches;
pub use ftrace::EventCounts;
pub use tracks::TrackCounts;

use crate::{EventFilter, ExportError, Input, ProgressFn, Result, Scope};
use ftrace::{CpuEncoder, Plans};
use inputs::Input as Recording;
use prost::Message;
use sequence::Sequence;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use tracedat::{EventItems, EventSource, Item, Selection};

/// What the file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfettoSummary {
    pub events: EventCounts,
    pub tracks: TrackCounts,
    pub bytes: u64,
}

/// What the file holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Content {
    /// Compact switches and wakings where the model saw every switch, full events
    /// elsewhere, no event that no reader uses, `check`'s incidents; with `counters`,
    /// the counter tracks too.
    Compact { counters: bool },
    /// Every event in full, the counter tracks and `check`'s incidents.
    AllEvents,
}

impl Content {
    /// Whether schedlens's counter tracks are written.
    pub fn counters(self) -> bool {
        match self {
            Content::Compact { counters } => counters,
            Content::AllEvents => true,
        }
    }
}

/// Writes the Perfetto trace of `input` to `path`: the events and the tracks at once.
pub fn write(input: &Input<'_>, path: &Path, content: Content, progress: ProgressFn<'_>) -> Result<PerfettoSummary> {
    let file = PerfettoFile::create(path, input.trace)?;
    let clean = match content {
        Content::Compact { .. } => CleanStretches::of(input.model, input.scope),
        Content::AllEvents => None,
    };
    let (events, tracks) = std::thread::scope(|scope| {
        let tracks = std::thread::Builder::new()
            .name("perfetto-tracks".into())
            .spawn_scoped(scope, || file.encode_tracks(input, content.counters()))
            .expect("a thread can be started");
        let events = file.encode_events(input.trace, input.buffer, Some(input.scope), clean.as_ref(), progress);
        (events, joined(tracks))
    });
    file.finish(events?, tracks?)
}

/// A Perfetto trace being written.
pub struct PerfettoFile {
    path: PathBuf,
    file: File,
}

/// The events of every CPU, in the file in CPU order.
pub struct EncodedEvents {
    pub counts: EventCounts,
}

/// The tracks: the counters' descriptors, their values in scratch files, then the values
/// at the parts' seams and the incidents' slices (few).
pub struct EncodedTracks {
    head: Vec<u8>,
    scratch: Vec<File>,
    tail: Vec<u8>,
    pub counts: TrackCounts,
}

impl PerfettoFile {
    /// Creates the file and writes its first packets: the kernel's name and version
    /// (Perfetto decodes `prev_state` by kernel version) and the CPU count, then the task
    /// names known before the first event (trace.dat's saved cmdlines) as a process tree.
    pub fn create(path: &Path, trace: &Recording) -> Result<PerfettoFile> {
        let io = |e| ExportError::io(path, e);
        let mut file = File::create(path).map_err(io)?;
        let mut first = Vec::new();
        packet_bytes(&mut first, &system_info(trace));
        if let Some(names) = initial_names(trace) {
            packet_bytes(&mut first, &names);
        }
        file.write_all(&first).map_err(io)?;
        Ok(PerfettoFile { path: path.to_path_buf(), file })
    }

    /// Encodes the events of `buffer` in `scope` (`None`: all of them), each CPU on a
    /// worker thread; compact where `clean` allows (`None`: every event in full).
    pub fn encode_events(
        &self,
        trace: &Recording,
        buffer: &str,
        scope: Option<&Scope>,
        clean: Option<&CleanStretches>,
        progress: ProgressFn<'_>,
    ) -> Result<EncodedEvents> {
        let cpus = trace.cpu_count();
        let plans = Plans::new(trace.formats());
        let filter = scope.map(|scope| EventFilter::new(scope, trace.formats()));
        let total = match trace {
            Recording::TraceDat(trace) => {
                trace.data_size(&Selection { buffers: Some(vec![buffer.to_string()]), ..Selection::all() })
            }
            Recording::PerfData(perf) => perf.cpu_sizes().iter().map(|&(_, size)| size).sum(),
            Recording::Perfetto(trace) => trace.cpu_sizes().iter().map(|&(_, size)| size).sum(),
        };
        let done = AtomicU64::new(0);
        let sequence = Sequence::new(&self.file, &self.path);
        let results = analysis::cores::on_cores_ticking(
            cpus as usize,
            || (),
            |_, cpu| {
                let job = CpuJob {
                    trace,
                    buffer,
                    cpu: cpu as u32,
                    plans: &plans,
                    filter: filter.as_ref(),
                    clean,
                    done: &done,
                };
                self.encode_cpu(&job, &sequence)
            },
            || progress(done.load(Ordering::Relaxed), total),
        );
        progress(total, total);
        let mut encoded = EncodedEvents { counts: EventCounts::default() };
        for counts in results {
            encoded.counts.add(&counts?);
        }
        Ok(encoded)
    }

    /// Encodes one CPU's events as the CPU's part of `sequence`.
    fn encode_cpu(&self, job: &CpuJob<'_>, sequence: &Sequence<'_>) -> Result<EventCounts> {
        let io = |e| ExportError::io(&self.path, e);
        let part = sequence.part(job.cpu);
        let (mut stream, size) = crate::cpu_events(job.trace, job.buffer, job.cpu);
        if size == 0 {
            part.finish().map_err(io)?;
            return Ok(EventCounts::default());
        }
        let mut encoder = CpuEncoder::new(job.plans, job.cpu, job.clean, part);
        let (mut count, mut reported) = (0u32, 0u64);
        loop {
            count = count.wrapping_add(1);
            if count % (1 << 16) == 0 {
                let bytes = stream.bytes_done();
                job.done.fetch_add(bytes - reported, Ordering::Relaxed);
                reported = bytes;
            }
            match stream.next() {
                None => break,
                Some(Item::Lost(_)) => encoder.lost().map_err(io)?,
                Some(Item::Event(event)) => {
                    if let Some(filter) = job.filter {
                        if event.ts >= filter.window().end {
                            break;
                        }
                        if !filter.keeps(&event) {
                            continue;
                        }
                    }
                    encoder.event(&event).map_err(io)?;
                }
            }
        }
        job.done.fetch_add(stream.bytes_done().saturating_sub(reported), Ordering::Relaxed);
        let (part, counts) = encoder.finish().map_err(io)?;
        part.finish().map_err(io)?;
        Ok(counts)
    }

    /// schedlens's tracks: the counters (with `counters`) swept from the model in parallel
    /// parts (into scratch files) while `check` runs, then `check`'s incidents.
    pub fn encode_tracks(&self, input: &Input<'_>, counters: bool) -> Result<EncodedTracks> {
        let io = |e| ExportError::io(&self.path, e);
        let mut head = Vec::new();
        tracks::write_first_packet(&mut head).map_err(io)?;
        if !counters {
            let mut tail = Vec::new();
            let incident_slices = tracks::write_incidents(&input.incidents(), &mut tail).map_err(io)?;
            let counts = TrackCounts { counter_values: 0, incident_slices };
            return Ok(EncodedTracks { head, scratch: Vec::new(), tail, counts });
        }
        tracks::write_counter_tracks(input.model, &mut head).map_err(io)?;
        let scratch: Vec<File> =
            (0..tracks::SWEEP_PARTS).map(|part| self.scratch(&format!("counters{part}"))).collect::<Result<_>>()?;
        let (values, incidents) = std::thread::scope(|threads| {
            let check = std::thread::Builder::new()
                .name("perfetto-check".into())
                .spawn_scoped(threads, || input.incidents())
                .expect("a thread can be started");
            (tracks::write_counter_values(input.model, input.scope, scratch), joined(check))
        });
        let values = values.map_err(io)?;
        let mut tail = values.openings;
        let incident_slices = tracks::write_incidents(&incidents, &mut tail).map_err(io)?;
        let counts = TrackCounts { counter_values: values.values, incident_slices };
        Ok(EncodedTracks { head, scratch: values.parts, tail, counts })
    }

    /// Appends the tracks after the events.
    pub fn finish(self, events: EncodedEvents, tracks: EncodedTracks) -> Result<PerfettoSummary> {
        let io = |e| ExportError::io(&self.path, e);
        let mut file = self.file;
        file.seek(SeekFrom::End(0)).map_err(io)?;
        file.write_all(&tracks.head).map_err(io)?;
        append(&mut file, tracks.scratch).map_err(io)?;
        file.write_all(&tracks.tail).map_err(io)?;
        let bytes = file.metadata().map_err(io)?.len();
        Ok(PerfettoSummary { events: events.counts, tracks: tracks.counts, bytes })
    }

    /// A scratch file beside the output, removed at once (it lives while it is open).
    fn scratch(&self, part: &str) -> Result<File> {
        sequence::scratch_file(&self.path, part).map_err(|e| ExportError::io(&self.path, e))
    }
}

/// One CPU's share of [`PerfettoFile::encode_events`].
struct CpuJob<'a> {
    trace: &'a Recording,
    buffer: &'a str,
    cpu: u32,
    plans: &'a Plans,
    filter: Option<&'a EventFilter<'a>>,
    /// Where compact rows may be written (`None`: every event in full).
    clean: Option<&'a CleanStretches>,
    /// Bytes of trace data read so far, over all CPUs.
    done: &'a AtomicU64,
}

/// Copies scratch files to the end of `file` (in the kernel where it can).
fn append(file: &mut File, parts: Vec<File>) -> std::io::Result<()> {
    for mut part in parts {
        part.seek(SeekFrom::Start(0))?;
        std::io::copy(&mut part, file)?;
    }
    Ok(())
}

/// A thread's result; its panic goes on.
fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// A packet as a `Trace.packet` field.
fn packet_bytes(buf: &mut Vec<u8>, packet: &proto::TracePacket) {
    crate::protobuf::header(buf, proto::TRACE_PACKET, packet.encoded_len());
    packet.encode(buf).expect("a Vec grows as needed");
}

/// The names the recording knew before its first event, as a `ProcessTree` of threads.
fn initial_names(trace: &Recording) -> Option<proto::TracePacket> {
    let threads: Vec<proto::ProcessTreeThread> = trace
        .cmdlines()
        .iter()
        .map(|(tid, name)| proto::ProcessTreeThread { tid: Some(tid), name: Some(name.to_string()) })
        .collect();
    if threads.is_empty() {
        return None;
    }
    Some(proto::TracePacket { process_tree: Some(proto::ProcessTree { threads }), ..Default::default() })
}

fn system_info(trace: &Recording) -> proto::TracePacket {
    let utsname = match trace {
        Recording::TraceDat(trace) => trace.metadata().options.uname.as_deref().map(parse_uname),
        Recording::PerfData(perf) => perf.features().os_release.as_ref().map(|release| proto::Utsname {
            sysname: Some("Linux".into()),
            release: Some(release.clone()),
            version: None,
            machine: perf.features().arch.clone(),
        }),
        Recording::Perfetto(_) => None,
    };
    proto::TracePacket {
        system_info: Some(proto::SystemInfo { utsname, num_cpus: Some(trace.cpu_count()) }),
        ..Default::default()
    }
}

/// trace-cmd's UNAME option: `sysname nodename release version... machine`.
fn parse_uname(text: &str) -> proto::Utsname {
    let words: Vec<&str> = text.split_whitespace().collect();
    let word = |i: usize| words.get(i).map(|w| w.to_string());
    let version = (words.len() > 4).then(|| words[3..words.len() - 1].join(" "));
    proto::Utsname {
        sysname: word(0),
        release: word(2),
        version,
        machine: (words.len() > 3).then(|| words[words.len() - 1].to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uname_words() {
        let u = parse_uname("Linux box 6.18.44-fc #1 SMP PREEMPT_DYNAMIC x86_64");
        assert_eq!(u.sysname.as_deref(), Some("Linux"));
        assert_eq!(u.release.as_deref(), Some("6.18.44-fc"));
        assert_eq!(u.version.as_deref(), Some("#1 SMP PREEMPT_DYNAMIC"));
        assert_eq!(u.machine.as_deref(), Some("x86_64"));
    }
}
