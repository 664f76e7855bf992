//! `schedlens export --format perfetto`: a Perfetto trace (`.pftrace`) that Perfetto's
//! UI and trace processor open like one of their own recordings.
//!
//! The file holds, as Perfetto's recorder writes them, the trace's events in per-CPU
//! ftrace bundles (so CPU tracks, thread states, wakeup arrows, process names and trace
//! markers come from Perfetto's own parsers), and schedlens's tracks: running and
//! waiting task counts, per-CPU runqueue length and `check`'s incidents. Events stream
//! from the file to the output in bounded memory (a bundle per CPU); the tracks (and
//! `check`) are computed on a second thread and their packets written between bundles,
//! through a bounded channel.
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
use std::io::Write;
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

/// Writes the Perfetto trace of `input` to `path`.
pub fn write(input: &Input<'_>, path: &Path, progress: ProgressFn<'_>) -> Result<PerfettoSummary> {
    let file = std::fs::File::create(path).map_err(|e| ExportError::io(path, e))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut summary = write_to(input, &mut out, progress).map_err(|e| ExportError::io(path, e))?;
    let file = out.into_inner().map_err(|e| ExportError::io(path, e.into_error()))?;
    summary.bytes = file.metadata().map_err(|e| ExportError::io(path, e))?.len();
    Ok(summary)
}

/// Writes the Perfetto trace of `input` to `out`.
pub fn write_to(input: &Input<'_>, out: &mut impl Write, progress: ProgressFn<'_>) -> std::io::Result<PerfettoSummary> {
    write_packet(out, &system_info(input.trace))?;
    let mut encoder = FtraceEncoder::new(input.trace.formats());
    let (sender, chunks) = std::sync::mpsc::sync_channel::<Vec<u8>>(32);
    let tracks = std::thread::scope(|scope| {
        let tracks = std::thread::Builder::new()
            .name("perfetto-tracks".into())
            .spawn_scoped(scope, move || {
                let incidents = input.incidents();
                tracks::write_tracks(input.model, input.scope, &incidents, &mut ChunkWriter(sender))
            })
            .expect("a thread can be started");
        let mut out = Interleaved { out, chunks: &chunks };
        let events = stream_events(input.trace, input.buffer, input.scope, &mut encoder, &mut out, progress);
        // The tracks' remaining packets (or, after an error, none: the thread then stops
        // at its next send).
        let drained = events.and_then(|()| chunks.iter().try_for_each(|chunk| out.out.write_all(&chunk)));
        drop(chunks);
        let tracks = tracks.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        drained.and(tracks)
    })?;
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
    out: &mut Interleaved<'_, impl Write>,
    progress: ProgressFn<'_>,
) -> std::io::Result<()> {
    let selection = Selection { buffers: Some(vec![buffer.to_string()]), ..Selection::all() };
    let total = trace.data_size(&selection);
    let filter = crate::EventFilter::new(scope, trace.formats());
    let mut stream = trace.events_of(&selection);
    let mut count = 0u64;
    loop {
        count += 1;
        if count % (1 << 12) == 0 {
            out.drain_ready()?;
            if count % (1 << 16) == 0 {
                progress(stream.bytes_done(), total);
            }
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

/// Sends each write (whole packets) to the writing thread.
struct ChunkWriter(std::sync::mpsc::SyncSender<Vec<u8>>);

impl Write for ChunkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.send(buf.to_vec()).map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "writer stopped"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The output of the event pass, which writes the tracks' waiting chunks between its
/// packets.
struct Interleaved<'a, W: Write> {
    out: &'a mut W,
    chunks: &'a std::sync::mpsc::Receiver<Vec<u8>>,
}

impl<W: Write> Interleaved<'_, W> {
    /// Called between packets.
    fn drain_ready(&mut self) -> std::io::Result<()> {
        while let Ok(chunk) = self.chunks.try_recv() {
            self.out.write_all(&chunk)?;
        }
        Ok(())
    }
}

impl<W: Write> Write for Interleaved<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
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
