//! The record layouts this reader declares for the events it decodes, and the format
//! files that describe them. A Perfetto trace holds decoded fields, not the kernel's
//! records, so the reader writes each event back into an ftrace record of its own layout
//! (the common fields first, as every kernel has them) and hands the formats to the
//! stages above with the records: they then read a Perfetto trace exactly as a trace.dat.
//! The layouts follow Linux 6.18's where Perfetto has the same fields; `GenericFtraceEvent`s
//! get a layout made from their first occurrence. Everything here is the reader's own
//! declaration: no stage above is asked what layout it expects.

/// How a field is stored in a record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `char NAME[16]`, as the kernel keeps task names.
    Comm,
    /// `__data_loc char[] NAME`: a string after the fixed fields.
    Str,
    I32,
    I64,
    U64,
    /// `char NAME[]`: the rest of the record (print's `buf`).
    Tail,
}

impl Kind {
    fn size(self) -> usize {
        match self {
            Kind::Comm => 16,
            Kind::Str | Kind::I32 => 4,
            Kind::I64 | Kind::U64 => 8,
            Kind::Tail => 0,
        }
    }

    fn declaration(self, name: &str) -> String {
        match self {
            Kind::Comm => format!("char {name}[16]"),
            Kind::Str => format!("__data_loc char[] {name}"),
            Kind::I32 => format!("int {name}"),
            Kind::I64 => format!("s64 {name}"),
            Kind::U64 => format!("u64 {name}"),
            Kind::Tail => format!("char {name}[]"),
        }
    }

    fn conversion(self, name: &str) -> (&'static str, String) {
        match self {
            Kind::Comm | Kind::Tail => ("%s", format!("REC->{name}")),
            Kind::Str => ("%s", format!("__get_str({name})")),
            Kind::I32 => ("%d", format!("REC->{name}")),
            Kind::I64 => ("%lld", format!("REC->{name}")),
            Kind::U64 => ("%llu", format!("REC->{name}")),
        }
    }
}

/// Bytes of the common fields (`common_type`, `common_flags`, `common_preempt_count`,
/// `common_pid`).
pub const COMMON: usize = 8;
const COMMON_FIELDS: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";

/// A field of a layout: its name, its number in Perfetto's message, how it is stored and
/// where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub name: String,
    pub number: u32,
    pub kind: Kind,
    pub offset: usize,
}

/// The record layout of one event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The event's system (`sched`, `task`, `ftrace`; `perfetto` for generic events,
    /// whose system the trace does not say).
    pub system: String,
    pub name: String,
    pub id: u16,
    pub slots: Vec<Slot>,
    /// Bytes of the fixed part (common fields included).
    pub fixed: usize,
}

impl Layout {
    /// Lays fields out one after the other, each aligned to its size.
    pub fn new(system: &str, name: &str, id: u16, fields: &[(&str, u32, Kind)]) -> Layout {
        let mut offset = COMMON;
        let mut slots = Vec::with_capacity(fields.len());
        for &(field, number, kind) in fields {
            let align = kind.size().clamp(1, 8);
            offset = offset.next_multiple_of(if kind == Kind::Comm { 1 } else { align });
            slots.push(Slot { name: field.to_string(), number, kind, offset });
            offset += kind.size();
        }
        Layout { system: system.to_string(), name: name.to_string(), id, slots, fixed: offset }
    }

    pub fn slot(&self, number: u32) -> Option<&Slot> {
        self.slots.iter().find(|s| s.number == number)
    }

    pub fn slot_named(&self, name: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.name == name)
    }

    /// The format file, as tracefs would show it.
    pub fn format_text(&self) -> String {
        let mut text = format!("name: {}\nID: {}\nformat:\n{COMMON_FIELDS}\n", self.name, self.id);
        for slot in &self.slots {
            let (size, signed) = (slot.kind.size(), u8::from(matches!(slot.kind, Kind::I32 | Kind::I64)));
            let declaration = slot.kind.declaration(&slot.name);
            text.push_str(&format!(
                "\tfield:{declaration};\toffset:{};\tsize:{size};\tsigned:{signed};\n",
                slot.offset
            ));
        }
        let (conversions, arguments): (Vec<String>, Vec<String>) = self
            .slots
            .iter()
            .map(|slot| {
                let (conversion, argument) = slot.kind.conversion(&slot.name);
                (format!("{}={conversion}", slot.name), argument)
            })
            .unzip();
        let mut print = format!("\nprint fmt: \"{}\"", conversions.join(" "));
        for argument in arguments {
            print.push_str(", ");
            print.push_str(&argument);
        }
        text.push_str(&print);
        text.push('\n');
        text
    }
}

/// A field's value as decoded from Perfetto's message.
#[derive(Copy, Clone, Debug)]
pub enum FieldValue<'a> {
    Int(u64),
    Text(&'a [u8]),
}

/// Writes records of a layout.
pub struct RecordWriter {
    pub bytes: Vec<u8>,
}

impl RecordWriter {
    pub fn new() -> RecordWriter {
        RecordWriter { bytes: Vec::with_capacity(256) }
    }

    /// Starts a record: the common fields, the fixed part zeroed.
    pub fn begin(&mut self, layout: &Layout, flags: u8, pid: i32) {
        self.bytes.clear();
        self.bytes.resize(layout.fixed, 0);
        self.bytes[..2].copy_from_slice(&layout.id.to_le_bytes());
        self.bytes[2] = flags;
        self.bytes[4..8].copy_from_slice(&pid.to_le_bytes());
    }

    /// Sets a field; a text for a number field or a number for a text field is ignored.
    pub fn set(&mut self, slot: &Slot, value: FieldValue<'_>) {
        let at = slot.offset;
        match (slot.kind, value) {
            (Kind::I32, FieldValue::Int(v)) => self.bytes[at..at + 4].copy_from_slice(&(v as i32).to_le_bytes()),
            (Kind::I64 | Kind::U64, FieldValue::Int(v)) => self.bytes[at..at + 8].copy_from_slice(&v.to_le_bytes()),
            (Kind::Comm, FieldValue::Text(text)) => {
                let len = text.len().min(16);
                self.bytes[at..at + 16].fill(0);
                self.bytes[at..at + len].copy_from_slice(&text[..len]);
            }
            (Kind::Str | Kind::Tail, FieldValue::Text(text)) => {
                // Strings go after the fixed part; a record is at most 64 KiB, as in a
                // ring buffer, and a `__data_loc` holds 16 bits of offset and length.
                let text = &text[..text.len().min(4000)];
                let start = self.bytes.len();
                self.bytes.extend_from_slice(text);
                self.bytes.push(0);
                if slot.kind == Kind::Str {
                    let location = ((text.len() as u32 + 1) << 16) | start as u32;
                    self.bytes[at..at + 4].copy_from_slice(&location.to_le_bytes());
                }
            }
            _ => {}
        }
    }
}

use Kind::{Comm, I32, I64, Str, Tail, U64};

/// Fields of the wakeup events' messages.
const WAKE: &[(&str, u32, Kind)] = &[("comm", 1, Comm), ("pid", 2, I32), ("prio", 3, I32), ("target_cpu", 5, I32)];
const TASK: &[(&str, u32, Kind)] = &[("comm", 1, Comm), ("pid", 2, I32), ("prio", 3, I32)];

/// An event Perfetto has a message for, which this reader decodes: its name, its field
/// number in `FtraceEvent` (protos/perfetto/trace/ftrace/ftrace_event.proto), and its
/// message's fields (sched.proto, task.proto, ftrace.proto).
pub struct Known {
    pub system: &'static str,
    pub name: &'static str,
    pub number: u32,
    pub fields: &'static [(&'static str, u32, Kind)],
}

pub const KNOWN: &[Known] = &[
    Known { system: "ftrace", name: "print", number: 3, fields: &[("ip", 1, U64), ("buf", 2, Tail)] },
    Known {
        system: "sched",
        name: "sched_switch",
        number: 4,
        fields: &[
            ("prev_comm", 1, Comm),
            ("prev_pid", 2, I32),
            ("prev_prio", 3, I32),
            ("prev_state", 4, I64),
            ("next_comm", 5, Comm),
            ("next_pid", 6, I32),
            ("next_prio", 7, I32),
        ],
    },
    Known { system: "sched", name: "sched_wakeup", number: 17, fields: WAKE },
    Known { system: "sched", name: "sched_waking", number: 20, fields: WAKE },
    Known { system: "sched", name: "sched_wakeup_new", number: 114, fields: WAKE },
    Known {
        system: "task",
        name: "task_newtask",
        number: 235,
        fields: &[("pid", 1, I32), ("comm", 2, Comm), ("clone_flags", 3, U64), ("oom_score_adj", 4, I32)],
    },
    Known {
        system: "task",
        name: "task_rename",
        number: 236,
        fields: &[("pid", 1, I32), ("oldcomm", 2, Comm), ("newcomm", 3, Comm), ("oom_score_adj", 4, I32)],
    },
    Known {
        system: "sched",
        name: "sched_process_exec",
        number: 237,
        fields: &[("filename", 1, Str), ("pid", 2, I32), ("old_pid", 3, I32)],
    },
    Known {
        system: "sched",
        name: "sched_process_exit",
        number: 238,
        fields: &[("comm", 1, Comm), ("pid", 2, I32), ("prio", 4, I32), ("tgid", 3, I32)],
    },
    Known {
        system: "sched",
        name: "sched_process_fork",
        number: 239,
        fields: &[("parent_comm", 1, Str), ("parent_pid", 2, I32), ("child_comm", 3, Str), ("child_pid", 4, I32)],
    },
    Known { system: "sched", name: "sched_process_free", number: 240, fields: TASK },
    Known { system: "sched", name: "sched_process_wait", number: 242, fields: TASK },
    Known {
        system: "sched",
        name: "sched_migrate_task",
        number: 491,
        fields: &[("comm", 1, Str), ("pid", 2, I32), ("prio", 3, I32), ("orig_cpu", 4, I32), ("dest_cpu", 5, I32)],
    },
];

/// `FtraceEvent`'s field holding a `GenericFtraceEvent`.
pub const GENERIC: u32 = 327;
/// The first id given to a generic event's layout (the known events take 1..).
pub const FIRST_GENERIC_ID: u16 = 1000;

/// The layouts of the known events, ids from 1 in [`KNOWN`]'s order.
pub fn known_layouts() -> Vec<Layout> {
    KNOWN
        .iter()
        .enumerate()
        .map(|(index, known)| Layout::new(known.system, known.name, index as u16 + 1, known.fields))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracedat::{Cpu, Endian, Event, Formats, Nanos};

    #[test]
    fn records_decode_through_their_own_format_files() {
        let layouts = known_layouts();
        let texts: Vec<String> = layouts.iter().map(Layout::format_text).collect();
        let formats = Formats::parse(layouts.iter().zip(&texts).map(|(l, t)| (l.system.as_str(), t.as_str())), 8);
        assert!(formats.rejected.is_empty(), "{:?}", formats.rejected);
        assert_eq!(formats.len(), KNOWN.len());

        let fork = layouts.iter().find(|l| l.name == "sched_process_fork").unwrap();
        let mut writer = RecordWriter::new();
        writer.begin(fork, 1, 42);
        writer.set(fork.slot(1).unwrap(), FieldValue::Text(b"bash"));
        writer.set(fork.slot(2).unwrap(), FieldValue::Int(42));
        writer.set(fork.slot(3).unwrap(), FieldValue::Text(b"child"));
        writer.set(fork.slot(4).unwrap(), FieldValue::Int(-1i64 as u64));
        let event = Event::of_record(&formats, Endian::Little, Cpu(0), Nanos(5), &writer.bytes);
        assert_eq!(event.name(), "sched_process_fork");
        assert_eq!(event.pid().0, 42);
        assert_eq!(
            event.field("parent_comm").and_then(|v| v.as_str().map(|s| s.into_owned())).as_deref(),
            Some("bash")
        );
        assert_eq!(
            event.field("child_comm").and_then(|v| v.as_str().map(|s| s.into_owned())).as_deref(),
            Some("child")
        );
        assert_eq!(event.field("child_pid").and_then(|v| v.as_i64()), Some(-1));

        let print = layouts.iter().find(|l| l.name == "print").unwrap();
        writer.begin(print, 0, 7);
        writer.set(print.slot(2).unwrap(), FieldValue::Text(b"hello\n"));
        let event = Event::of_record(&formats, Endian::Little, Cpu(0), Nanos(5), &writer.bytes);
        assert_eq!(event.field("buf").and_then(|v| v.as_str().map(|s| s.into_owned())).as_deref(), Some("hello\n"));
    }
}
