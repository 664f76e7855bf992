//! The parts of Perfetto's trace protobuf (`protos/perfetto/trace/...`) that schedlens
//! writes, with the field numbers of the published definitions: constants for the
//! messages written field by field in hot loops (ftrace bundles, counter values), prost
//! structs for the few descriptive packets.

/// `Trace`: the file is a sequence of `packet` fields.
pub const TRACE_PACKET: u32 = 1;

/// `TracePacket` fields.
pub mod packet {
    pub const FTRACE_EVENTS: u32 = 1;
    pub const TIMESTAMP: u32 = 8;
    pub const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
    pub const TRACK_EVENT: u32 = 11;
}

/// `FtraceEventBundle` fields.
pub mod bundle {
    pub const CPU: u32 = 1;
    pub const EVENT: u32 = 2;
    pub const LOST_EVENTS: u32 = 3;
    pub const COMPACT_SCHED: u32 = 4;
}

/// `FtraceEvent` fields; the event's own message goes in the field named after it.
pub mod ftrace_event {
    pub const TIMESTAMP: u32 = 1;
    pub const PID: u32 = 2;
    pub const COMMON_FLAGS: u32 = 5;
    pub const GENERIC: u32 = 327;
}

/// `GenericFtraceEvent` (for events Perfetto has no message for) and its `Field`.
pub mod generic {
    pub const EVENT_NAME: u32 = 1;
    pub const FIELD: u32 = 2;
    pub const FIELD_NAME: u32 = 1;
    pub const STR_VALUE: u32 = 3;
    pub const INT_VALUE: u32 = 4;
    pub const UINT_VALUE: u32 = 5;
}

/// `TrackEvent` fields used for counter values.
pub mod track_event {
    pub const TYPE: u32 = 9;
    pub const TRACK_UUID: u32 = 11;
    pub const COUNTER_VALUE: u32 = 30;
    pub const TYPE_COUNTER: i64 = 4;
}

/// How a trace.dat field becomes a field of Perfetto's message for the event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Wire {
    Int,
    Text,
}

/// An ftrace event Perfetto parses itself (CPU tracks, thread states, wakeups, names).
pub struct KnownEvent {
    /// The event's name in trace.dat (and in Perfetto's `FtraceEvent`).
    pub name: &'static str,
    /// Its field number in `FtraceEvent`.
    pub tag: u32,
    /// Its message's fields: trace.dat field name, field number, kind.
    pub fields: &'static [(&'static str, u32, Wire)],
    /// Whether Perfetto's importer (CPU tracks, thread states, names, markers) or
    /// schedlens's model reads it; the compact export leaves the others out where it can.
    pub read: bool,
}

use Wire::{Int, Text};

const WAKE_FIELDS: &[(&str, u32, Wire)] =
    &[("comm", 1, Text), ("pid", 2, Int), ("prio", 3, Int), ("success", 4, Int), ("target_cpu", 5, Int)];
const TASK_FIELDS: &[(&str, u32, Wire)] = &[("comm", 1, Text), ("pid", 2, Int), ("prio", 3, Int)];

/// The events written as Perfetto's own messages; every other event is written as a
/// `GenericFtraceEvent` with all its fields.
pub const KNOWN_EVENTS: &[KnownEvent] = &[
    KnownEvent { name: "print", tag: 3, fields: &[("ip", 1, Int), ("buf", 2, Text)], read: true },
    KnownEvent {
        name: "sched_switch",
        tag: 4,
        fields: &[
            ("prev_comm", 1, Text),
            ("prev_pid", 2, Int),
            ("prev_prio", 3, Int),
            ("prev_state", 4, Int),
            ("next_comm", 5, Text),
            ("next_pid", 6, Int),
            ("next_prio", 7, Int),
        ],
        read: true,
    },
    KnownEvent { name: "sched_wakeup", tag: 17, fields: WAKE_FIELDS, read: true },
    KnownEvent { name: "sched_waking", tag: 20, fields: WAKE_FIELDS, read: true },
    KnownEvent { name: "sched_wakeup_new", tag: 114, fields: WAKE_FIELDS, read: true },
    KnownEvent {
        name: "task_newtask",
        tag: 235,
        fields: &[("pid", 1, Int), ("comm", 2, Text), ("clone_flags", 3, Int), ("oom_score_adj", 4, Int)],
        read: true,
    },
    KnownEvent {
        name: "task_rename",
        tag: 236,
        fields: &[("pid", 1, Int), ("oldcomm", 2, Text), ("newcomm", 3, Text), ("oom_score_adj", 4, Int)],
        read: true,
    },
    KnownEvent {
        name: "sched_process_exec",
        tag: 237,
        fields: &[("filename", 1, Text), ("pid", 2, Int), ("old_pid", 3, Int)],
        read: true,
    },
    KnownEvent {
        name: "sched_process_exit",
        tag: 238,
        fields: &[("comm", 1, Text), ("pid", 2, Int), ("tgid", 3, Int), ("prio", 4, Int)],
        read: true,
    },
    KnownEvent {
        name: "sched_process_fork",
        tag: 239,
        fields: &[("parent_comm", 1, Text), ("parent_pid", 2, Int), ("child_comm", 3, Text), ("child_pid", 4, Int)],
        read: true,
    },
    KnownEvent { name: "sched_process_free", tag: 240, fields: TASK_FIELDS, read: true },
    KnownEvent { name: "sched_process_wait", tag: 242, fields: TASK_FIELDS, read: false },
    KnownEvent {
        name: "sched_migrate_task",
        tag: 491,
        fields: &[
            ("comm", 1, Text),
            ("pid", 2, Int),
            ("prio", 3, Int),
            ("orig_cpu", 4, Int),
            ("dest_cpu", 5, Int),
            ("running", 6, Int),
            ("load", 7, Int),
        ],
        read: true,
    },
];

/// `TracePacket`, with the fields the descriptive packets use.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    #[prost(message, optional, tag = "2")]
    pub process_tree: Option<ProcessTree>,
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(message, optional, tag = "45")]
    pub system_info: Option<SystemInfo>,
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `TracePacket.sequence_flags`: `SEQ_INCREMENTAL_STATE_CLEARED`.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

/// `ProcessTree`: here only its threads, the task names known before the first event.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<ProcessTreeThread>,
}

/// `ProcessTree.Thread`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessTreeThread {
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SystemInfo {
    #[prost(message, optional, tag = "1")]
    pub utsname: Option<Utsname>,
    #[prost(uint32, optional, tag = "8")]
    pub num_cpus: Option<u32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Utsname {
    #[prost(string, optional, tag = "1")]
    pub sysname: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub version: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub release: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub machine: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
    #[prost(string, optional, tag = "14")]
    pub description: Option<String>,
}

/// `CounterDescriptor`: present (even empty) makes a track a counter track.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    #[prost(string, optional, tag = "6")]
    pub unit_name: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
}

/// `TrackEvent.Type`.
pub const TYPE_SLICE_BEGIN: i32 = 1;
pub const TYPE_SLICE_END: i32 = 2;

#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
    #[prost(oneof = "AnnotationValue", tags = "2, 3, 6")]
    pub value: Option<AnnotationValue>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum AnnotationValue {
    #[prost(bool, tag = "2")]
    Bool(bool),
    #[prost(uint64, tag = "3")]
    Uint(u64),
    #[prost(string, tag = "6")]
    Text(String),
}
