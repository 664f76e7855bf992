//! `schedlens export --format perfetto`: a Perfetto trace (`.pftrace`) that Perfetto's
//! UI and trace processor open like one of their own recordings.
//!
//! The file holds, as Perfetto's recorder writes them, the trace's events in per-CPU
//! ftrace bundles (so CPU tracks, thread states, wakeup arrows, process names and trace
//! markers come from Perfetto's own parsers), and schedlens's tracks: running and
//! waiting task counts, per-CPU runqueue length and `check`'s incidents. Events stream
//! from the file to the output in bounded memory (a bundle per CPU); the tracks (and
//! `check`) are computed on a second thread into a scratch file appended at the end.
//!
//! Full `sched_switch` events are written rather than the column-wise `compact_sched`
//! bundles: compact switches leave out the previous task, which Perfetto then infers
//! from the CPU's previous switch — wrong on kernels that do not record every switch
//! (the "uncertain" case of the model), and lossy for a round trip.

mod ftrace;
pub mod proto;
mod tracks;

pub use tracks::TrackCounts;

use crate::{ExportError, Input, ProgressFn, Result, Scope};
use ftrace::FtraceEncoder;
use prost::Message;
use std::io::{Seek, Write};
use std::path::Path;
use tracedat::{Item, Selection, Trace};

/// What the file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfettoSummary {
    /// Events written with Perfetto's own messages, and as generic events.
    pub known_events: u64,
    pub generic_events: u64,
    /// Bundles marked as following lost events.
    pub lost_marks: u64,
    pub tracks: TrackCounts,
    pub bytes: u64,
}

/// Writes the Perfetto trace of `input` to `path` (and, while it works, the tracks to a
/// scratch file beside it, removed at the end).
pub fn write(input: &Input<'_>, path: &Path, progress: ProgressFn<'_>) -> Result<PerfettoSummary> {
    let io = |e| ExportError::io(path, e);
    let file = std::fs::File::create(path).map_err(io)?;
    let scratch_path = path.with_extension("tracks-scratch");
    let scratch = std::fs::File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&scratch_path)
        .map_err(|e| ExportError::io(&scratch_path, e))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let written = write_to(input, &mut out, scratch, progress);
    let _ = std::fs::remove_file(&scratch_path);
    let mut summary = written.map_err(io)?;
    let file = out.into_inner().map_err(|e| io(e.into_error()))?;
    summary.bytes = file.metadata().map_err(io)?.len();
    Ok(summary)
}

/// Writes the events to `out` while a second thread runs `check` and writes the tracks to
/// `scratch`; then appends the tracks. (Interleaving the two as they come would be as
/// fast but would make the bytes depend on timing.)
fn write_to(
    input: &Input<'_>,
    out: &mut impl Write,
    scratch: std::fs::File,
    progress: ProgressFn<'_>,
) -> std::io::Result<PerfettoSummary> {
    write_packet(out, &system_info(input.trace))?;
    let mut encoder = FtraceEncoder::new(input.trace.formats());
    let (events, tracks) = std::thread::scope(|scope| {
        let tracks = std::thread::Builder::new()
            .name("perfetto-tracks".into())
            .spawn_scoped(scope, move || {
                let incidents = input.incidents();
                let mut buffered = std::io::BufWriter::with_capacity(1 << 20, scratch);
                let counts = tracks::write_tracks(input.model, input.scope, &incidents, &mut buffered)?;
                let scratch = buffered.into_inner().map_err(|e| e.into_error())?;
                Ok::<_, std::io::Error>((counts, scratch))
            })
            .expect("a thread can be started");
        let events = stream_events(input.trace, input.buffer, input.scope, &mut encoder, out, progress);
        (events, tracks.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    events?;
    let (tracks, mut scratch) = tracks?;
    scratch.seek(std::io::SeekFrom::Start(0))?;
    std::io::copy(&mut scratch, out)?;
    out.flush()?;
    Ok(PerfettoSummary {
        known_events: encoder.known_events,
        generic_events: encoder.generic_events,
        lost_marks: encoder.lost_marks,
        tracks,
        bytes: 0,
    })
}

fn stream_events(
    trace: &Trace,
    buffer: &str,
    scope: &Scope,
    encoder: &mut FtraceEncoder,
    out: &mut impl Write,
    progress: ProgressFn<'_>,
) -> std::io::Result<()> {
    let selection = Selection { buffers: Some(vec![buffer.to_string()]), ..Selection::all() };
    let total = trace.data_size(&selection);
    let filter = crate::EventFilter::new(scope, trace.formats());
    let mut stream = trace.events_of(&selection);
    let mut count = 0u64;
    loop {
        count += 1;
        if count % (1 << 16) == 0 {
            progress(stream.bytes_done(), total);
        }
        match stream.next() {
            None => break,
            Some(Item::Lost(lost)) => encoder.lost(lost.cpu.index(), out)?,
            Some(Item::Event(event)) => {
                if event.ts >= scope.window.end {
                    break;
                }
                if filter.keeps(&event) {
                    encoder.event(&event, out)?;
                }
            }
        }
    }
    progress(total, total);
    encoder.finish(out)
}

fn write_packet(out: &mut impl Write, packet: &proto::TracePacket) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(packet.encoded_len() + 8);
    crate::protobuf::header(&mut buf, proto::TRACE_PACKET, packet.encoded_len());
    packet.encode(&mut buf).expect("a Vec grows as needed");
    out.write_all(&buf)
}

/// The kernel's name and version (Perfetto decodes `prev_state` by kernel version) and
/// the CPU count.
fn system_info(trace: &Trace) -> proto::TracePacket {
    let utsname = trace.metadata().options.uname.as_deref().map(parse_uname);
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
