//! schedlens's own knowledge as Perfetto tracks beside the ftrace data: how many tasks
//! run and wait machine-wide, each CPU's runqueue length (counter tracks, exact steps
//! from the model's sweep) and `check`'s incidents as slices carrying their explanation.

use super::proto::{
    self, AnnotationValue, CounterDescriptor, DebugAnnotation, TracePacket, TrackDescriptor, TrackEvent,
};
use crate::Scope;
use crate::protobuf;
use analysis::check::{Incident, Kind};
use analysis::occupancy::{cpu_queue_length, sweep};
use model::{Cpu, Model, Nanos};
use prost::Message;
use std::io::{self, Write};

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

/// Writes the track descriptors, counter values and incident slices.
pub fn write_tracks(
    model: &Model,
    scope: &Scope,
    incidents: &[Incident],
    out: &mut impl Write,
) -> io::Result<TrackCounts> {
    let mut counts = TrackCounts::default();
    let lanes = incident_lanes(incidents);
    write_packet(out, &first_packet())?;
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
    let mut described = Vec::new();
    for &(kind, lane) in &lanes {
        if !described.contains(&(kind, lane)) {
            described.push((kind, lane));
            write_packet(out, &incident_track(kind, lane))?;
        }
    }
    let mut counter = CounterWriter {
        out,
        buf: Vec::with_capacity(1 << 16),
        event: Vec::new(),
        packet: Vec::new(),
        values: 0,
        error: None,
    };
    let (mut running, mut waiting) = (None, None);
    sweep(model, scope.window, &scope.filter, |start, _, occupancy| {
        if running != Some(occupancy.running) {
            running = Some(occupancy.running);
            counter.value(start, RUNNING_UUID, occupancy.running.into());
        }
        if waiting != Some(occupancy.waiting) {
            waiting = Some(occupancy.waiting);
            counter.value(start, WAITING_UUID, occupancy.waiting.into());
        }
    });
    counter.drain()?;
    for cpu in 0..model.cpus().len() {
        cpu_queue_length(model, Cpu(cpu as u32), scope.window, &scope.filter, |start, _, length| {
            counter.value(start, QUEUE_UUID_BASE + cpu as u64, length.into());
        });
        counter.drain()?;
    }
    counts.counter_values = counter.values;
    for (incident, &(kind, lane)) in incidents.iter().zip(&lanes) {
        let uuid = incident_uuid(kind, lane);
        write_packet(out, &slice_begin(incident, uuid))?;
        write_packet(out, &slice_end(incident.end.max(incident.start), uuid))?;
        counts.incident_slices += 1;
    }
    Ok(counts)
}

/// Counter values, encoded field by field (there can be millions).
struct CounterWriter<'o, W: Write> {
    out: &'o mut W,
    buf: Vec<u8>,
    event: Vec<u8>,
    packet: Vec<u8>,
    values: u64,
    /// The first write error, kept until [`Self::drain`] (a sweep's callback cannot fail).
    error: Option<io::Error>,
}

impl<W: Write> CounterWriter<'_, W> {
    fn value(&mut self, time: Nanos, track: u64, value: i64) {
        use proto::{packet, track_event};
        self.event.clear();
        protobuf::int(&mut self.event, track_event::TYPE, track_event::TYPE_COUNTER);
        protobuf::uint(&mut self.event, track_event::TRACK_UUID, track);
        protobuf::int(&mut self.event, track_event::COUNTER_VALUE, value);
        self.packet.clear();
        protobuf::uint(&mut self.packet, packet::TIMESTAMP, time.0);
        protobuf::uint(&mut self.packet, packet::TRUSTED_PACKET_SEQUENCE_ID, SEQUENCE.into());
        protobuf::raw(&mut self.packet, packet::TRACK_EVENT, &self.event);
        protobuf::raw(&mut self.buf, proto::TRACE_PACKET, &self.packet);
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

    /// Writes what is left, or returns the first error.
    fn drain(&mut self) -> io::Result<()> {
        self.write_out();
        self.error.take().map_or(Ok(()), Err)
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
