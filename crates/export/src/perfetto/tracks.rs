//! schedlens's own knowledge as Perfetto tracks beside the ftrace data: how many tasks
//! run and wait machine-wide, each CPU's runqueue length (counter tracks, exact steps
//! from the model's sweep) and `check`'s incidents as slices carrying their explanation.

use super::proto::{
    self, AnnotationValue, CounterDescriptor, DebugAnnotation, TracePacket, TrackDescriptor, TrackEvent,
};
use crate::Scope;
use crate::protobuf;
use analysis::check::{Incident, Kind};
use analysis::occupancy::{CpuSweepVisitor, Cuts, Occupancy, sweep_cpus_in_parts};
use model::{Cpu, Model, Nanos};
use prost::Message;
use std::fs::File;
use std::io::{self, Write};
use std::sync::Mutex;

/// The packet sequence of schedlens's tracks (ftrace bundles need none).
const SEQUENCE: u32 = 1;
const RUNNING_UUID: u64 = 1;
const WAITING_UUID: u64 = 2;
const QUEUE_UUID_BASE: u64 = 1 << 20;
const INCIDENT_UUID_BASE: u64 = 1 << 40;

/// What the tracks hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrackCounts {
    pub counter_values: u64,
    pub incident_slices: u64,
}

/// The sweep is cut into this many stretches of time, swept in parallel. A constant, so
/// that the bytes do not depend on the machine.
pub const SWEEP_PARTS: usize = 16;

/// Writes the first packet of the tracks' sequence.
pub fn write_first_packet(out: &mut impl Write) -> io::Result<()> {
    write_packet(out, &first_packet())
}

/// Writes the counter tracks' descriptors.
pub fn write_counter_tracks(model: &Model, out: &mut impl Write) -> io::Result<()> {
    write_packet(
        out,
        &counter_track(RUNNING_UUID, "schedlens: running tasks", "tasks the filter accepts running on a CPU"),
    )?;
    write_packet(
        out,
        &counter_track(WAITING_UUID, "schedlens: waiting tasks", "tasks runnable in a runqueue, not running"),
    )?;
    for cpu in 0..model.cpus().len() {
        let name = format!("schedlens: runqueue length cpu {cpu}");
        write_packet(
            out,
            &counter_track(QUEUE_UUID_BASE + cpu as u64, &name, "running plus waiting tasks on this CPU"),
        )?;
    }
    Ok(())
}

/// The counters' values, swept in parts: each part's changes in a scratch file (in time
/// order), and the values at the parts' starts that differ from the previous part's ends.
pub struct CounterValues {
    pub parts: Vec<File>,
    pub openings: Vec<u8>,
    pub values: u64,
}

/// Sweeps the machine-wide running and waiting counts and each CPU's runqueue length
/// (running plus waiting accepted tasks) in [`SWEEP_PARTS`] parts on their own threads,
/// each part into one of the `scratch` files.
pub fn write_counter_values(model: &Model, scope: &Scope, scratch: Vec<File>) -> io::Result<CounterValues> {
    let cpus = model.cpus().len();
    let pool = Mutex::new(scratch);
    let parts = sweep_cpus_in_parts(model, scope.window, &scope.filter, SWEEP_PARTS, Cuts::EqualTime, |_| {
        let file = pool.lock().expect("no sweep panics holding it").pop().expect("a scratch file per part");
        CounterPart::new(file, cpus)
    });
    let mut openings = CounterWriter::new(Vec::new());
    let (mut running, mut waiting, mut lengths) = (None, None, vec![None; cpus]);
    let mut files = Vec::with_capacity(parts.len());
    for part in parts {
        if let Some((time, opening)) = part.opening {
            openings.changed(time, RUNNING_UUID, &mut running, opening.running);
            openings.changed(time, WAITING_UUID, &mut waiting, opening.waiting);
        }
        for (cpu, opening) in part.cpu_openings.iter().enumerate() {
            if let &Some((time, length)) = opening {
                openings.changed(time, QUEUE_UUID_BASE + cpu as u64, &mut lengths[cpu], length);
            }
        }
        running = part.running.or(running);
        waiting = part.waiting.or(waiting);
        for (last, part_last) in lengths.iter_mut().zip(&part.lengths) {
            *last = part_last.or(*last);
        }
        let (file, values) = part.writer.finish()?;
        openings.values += values;
        files.push(file);
    }
    let (openings, values) = openings.finish()?;
    Ok(CounterValues { parts: files, openings, values })
}

/// One part of the sweep: the values that change within it; its first values are kept
/// aside (whether they change depends on the previous part).
struct CounterPart {
    writer: CounterWriter<File>,
    opening: Option<(Nanos, Occupancy)>,
    cpu_openings: Vec<Option<(Nanos, u32)>>,
    running: Option<u32>,
    waiting: Option<u32>,
    lengths: Vec<Option<u32>>,
}

impl CounterPart {
    fn new(file: File, cpus: usize) -> CounterPart {
        CounterPart {
            writer: CounterWriter::new(file),
            opening: None,
            cpu_openings: vec![None; cpus],
            running: None,
            waiting: None,
            lengths: vec![None; cpus],
        }
    }
}

impl CpuSweepVisitor for CounterPart {
    fn stretch(&mut self, start: Nanos, _: Nanos, occupancy: Occupancy) {
        if self.opening.is_none() {
            self.opening = Some((start, occupancy));
            self.running = Some(occupancy.running);
            self.waiting = Some(occupancy.waiting);
            return;
        }
        self.writer.changed(start, RUNNING_UUID, &mut self.running, occupancy.running);
        self.writer.changed(start, WAITING_UUID, &mut self.waiting, occupancy.waiting);
    }

    fn cpu(&mut self, time: Nanos, cpu: Cpu, counts: Occupancy) {
        let i = cpu.index();
        let length = counts.running.saturating_add(counts.waiting);
        if self.cpu_openings[i].is_none() {
            self.cpu_openings[i] = Some((time, length));
            self.lengths[i] = Some(length);
            return;
        }
        self.writer.changed(time, QUEUE_UUID_BASE + u64::from(cpu.0), &mut self.lengths[i], length);
    }
}

/// Writes the incidents' tracks and slices (after the counters: the packets share one
/// sequence); returns how many slices.
pub fn write_incidents(incidents: &[Incident], out: &mut impl Write) -> io::Result<u64> {
    let lanes = incident_lanes(incidents);
    let mut described = Vec::new();
    for &(kind, lane) in &lanes {
        if !described.contains(&(kind, lane)) {
            described.push((kind, lane));
            write_packet(out, &incident_track(kind, lane))?;
        }
    }
    for (incident, &(kind, lane)) in incidents.iter().zip(&lanes) {
        let uuid = incident_uuid(kind, lane);
        write_packet(out, &slice_begin(incident, uuid))?;
        write_packet(out, &slice_end(incident.end.max(incident.start), uuid))?;
    }
    Ok(incidents.len() as u64)
}

/// Counter values, encoded field by field (there can be millions).
struct CounterWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    values: u64,
    /// The first write error, kept until [`Self::finish`] (a sweep's visitor cannot fail).
    error: Option<io::Error>,
}

impl<W: Write> CounterWriter<W> {
    fn new(out: W) -> Self {
        CounterWriter { out, buf: Vec::with_capacity(1 << 20), values: 0, error: None }
    }

    /// Writes `value` if it differs from `last`.
    #[inline]
    fn changed(&mut self, time: Nanos, track: u64, last: &mut Option<u32>, value: u32) {
        if *last != Some(value) {
            *last = Some(value);
            self.value(time, track, value.into());
        }
    }

    fn value(&mut self, time: Nanos, track: u64, value: i64) {
        use proto::{packet, track_event};
        let buf = &mut self.buf;
        let start = protobuf::begin_message(buf, proto::TRACE_PACKET);
        protobuf::uint(buf, packet::TIMESTAMP, time.0);
        protobuf::uint(buf, packet::TRUSTED_PACKET_SEQUENCE_ID, SEQUENCE.into());
        let event = protobuf::begin_message(buf, packet::TRACK_EVENT);
        protobuf::int(buf, track_event::TYPE, track_event::TYPE_COUNTER);
        protobuf::uint(buf, track_event::TRACK_UUID, track);
        protobuf::int(buf, track_event::COUNTER_VALUE, value);
        protobuf::end_message(buf, event);
        protobuf::end_message(buf, start);
        self.values += 1;
        if self.buf.len() >= 1 << 20 {
            self.write_out();
        }
    }

    fn write_out(&mut self) {
        if self.error.is_none() {
            self.error = self.out.write_all(&self.buf).err();
        }
        self.buf.clear();
    }

    /// Writes what is left; the output and the number of values, or the first error.
    fn finish(mut self) -> io::Result<(W, u64)> {
        self.write_out();
        match self.error {
            Some(error) => Err(error),
            None => Ok((self.out, self.values)),
        }
    }
}

fn write_packet(out: &mut impl Write, packet: &TracePacket) -> io::Result<()> {
    let mut buf = Vec::with_capacity(packet.encoded_len() + 8);
    protobuf::header(&mut buf, proto::TRACE_PACKET, packet.encoded_len());
    packet.encode(&mut buf).expect("a Vec grows as needed");
    out.write_all(&buf)
}

fn on_sequence(packet: TracePacket) -> TracePacket {
    TracePacket { trusted_packet_sequence_id: Some(SEQUENCE), ..packet }
}

fn first_packet() -> TracePacket {
    on_sequence(TracePacket { sequence_flags: Some(proto::SEQ_INCREMENTAL_STATE_CLEARED), ..Default::default() })
}

fn counter_track(uuid: u64, name: &str, description: &str) -> TracePacket {
    on_sequence(TracePacket {
        track_descriptor: Some(TrackDescriptor {
            uuid: Some(uuid),
            name: Some(name.to_string()),
            counter: Some(CounterDescriptor { unit_name: Some("tasks".into()) }),
            description: Some(description.to_string()),
            ..Default::default()
        }),
        ..Default::default()
    })
}

fn incident_uuid(kind: Kind, lane: usize) -> u64 {
    INCIDENT_UUID_BASE + ((kind as u64) << 20) + lane as u64
}

fn incident_track(kind: Kind, lane: usize) -> TracePacket {
    let name = match lane {
        0 => format!("schedlens check: {}", kind.name()),
        n => format!("schedlens check: {} ({})", kind.name(), n + 1),
    };
    on_sequence(TracePacket {
        track_descriptor: Some(TrackDescriptor {
            uuid: Some(incident_uuid(kind, lane)),
            name: Some(name),
            description: Some("incidents found by `schedlens check`".into()),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// For each incident, a lane of its kind where it overlaps no other (slices on one track
/// must nest; incidents of one kind on different CPUs may overlap).
fn incident_lanes(incidents: &[Incident]) -> Vec<(Kind, usize)> {
    let mut order: Vec<usize> = (0..incidents.len()).collect();
    order.sort_by_key(|&i| (incidents[i].start, i));
    let mut lane_ends: Vec<(Kind, Vec<Nanos>)> = Vec::new();
    let mut lanes = vec![(Kind::Overload, 0); incidents.len()];
    for i in order {
        let incident = &incidents[i];
        let ends = match lane_ends.iter_mut().find(|(k, _)| *k == incident.kind) {
            Some((_, ends)) => ends,
            None => {
                lane_ends.push((incident.kind, Vec::new()));
                &mut lane_ends.last_mut().expect("just pushed").1
            }
        };
        let lane = match ends.iter().position(|&end| end <= incident.start) {
            Some(lane) => lane,
            None => {
                ends.push(Nanos::ZERO);
                ends.len() - 1
            }
        };
        ends[lane] = incident.end.max(incident.start);
        lanes[i] = (incident.kind, lane);
    }
    lanes
}

fn annotation(name: &str, value: AnnotationValue) -> DebugAnnotation {
    DebugAnnotation { name: Some(name.to_string()), value: Some(value) }
}

fn slice_begin(incident: &Incident, track: u64) -> TracePacket {
    let list = |items: Vec<String>| items.join(",");
    on_sequence(TracePacket {
        timestamp: Some(incident.start.0),
        track_event: Some(TrackEvent {
            r#type: Some(proto::TYPE_SLICE_BEGIN),
            track_uuid: Some(track),
            name: Some(incident.kind.name().to_string()),
            debug_annotations: vec![
                annotation("explanation", AnnotationValue::Text(incident.explanation.clone())),
                annotation("lost_cpu_ns", AnnotationValue::Uint(incident.lost_cpu_ns)),
                annotation("cpus", AnnotationValue::Text(list(incident.cpus.iter().map(|c| c.to_string()).collect()))),
                annotation("pids", AnnotationValue::Text(list(incident.pids.iter().map(|p| p.to_string()).collect()))),
                annotation("pinning", AnnotationValue::Text(incident.pinning.name().to_string())),
            ],
        }),
        ..Default::default()
    })
}

fn slice_end(time: Nanos, track: u64) -> TracePacket {
    on_sequence(TracePacket {
        timestamp: Some(time.0),
        track_event: Some(TrackEvent {
            r#type: Some(proto::TYPE_SLICE_END),
            track_uuid: Some(track),
            ..Default::default()
        }),
        ..Default::default()
    })
}
