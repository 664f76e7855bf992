//! The scheduler events the model understands, decoded from raw trace events by field
//! names resolved once per file. Fields that a kernel lacks (e.g. `success` on recent
//! kernels) are simply absent; an event missing a field the model needs is skipped and
//! counted, never guessed.

use tracedat::format::EventFormat;
use tracedat::{Cpu, Event, FieldRef, Formats, Nanos, Pid};

/// A scheduler event, with borrowed names.
pub type SchedEvent<'a> = Sched<&'a [u8]>;

/// A scheduler event whose names (comms, exec file names) are of type `N`: borrowed
/// slices, or references into a batch when events travel between threads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sched<N> {
    Switch {
        prev_pid: Pid,
        prev_comm: N,
        prev_state: i64,
        next_pid: Pid,
        next_comm: N,
    },
    /// `sched_waking`: a wakeup begins (on the waker's CPU).
    Waking {
        pid: Pid,
        comm: N,
        target_cpu: Option<Cpu>,
    },
    /// `sched_wakeup`: the task is runnable on `target_cpu`. `success` exists on old kernels only.
    Wakeup {
        pid: Pid,
        comm: N,
        target_cpu: Option<Cpu>,
        success: Option<bool>,
    },
    WakeupNew {
        pid: Pid,
        comm: N,
        target_cpu: Option<Cpu>,
    },
    MigrateTask {
        pid: Pid,
        comm: N,
        orig_cpu: Cpu,
        dest_cpu: Cpu,
    },
    Fork {
        parent_pid: Pid,
        parent_comm: N,
        child_pid: Pid,
        child_comm: N,
    },
    Exec {
        pid: Pid,
        filename: N,
    },
    Exit {
        pid: Pid,
        comm: N,
    },
    Free {
        pid: Pid,
    },
    /// Any other event: it still shows which task was running on its CPU.
    Other,
}

impl<N: Copy> Sched<N> {
    /// The same event with every name passed through `f`.
    pub fn map_names<M>(self, mut f: impl FnMut(N) -> M) -> Sched<M> {
        match self {
            Sched::Switch { prev_pid, prev_comm, prev_state, next_pid, next_comm } => {
                Sched::Switch { prev_pid, prev_comm: f(prev_comm), prev_state, next_pid, next_comm: f(next_comm) }
            }
            Sched::Waking { pid, comm, target_cpu } => Sched::Waking { pid, comm: f(comm), target_cpu },
            Sched::Wakeup { pid, comm, target_cpu, success } => {
                Sched::Wakeup { pid, comm: f(comm), target_cpu, success }
            }
            Sched::WakeupNew { pid, comm, target_cpu } => Sched::WakeupNew { pid, comm: f(comm), target_cpu },
            Sched::MigrateTask { pid, comm, orig_cpu, dest_cpu } => {
                Sched::MigrateTask { pid, comm: f(comm), orig_cpu, dest_cpu }
            }
            Sched::Fork { parent_pid, parent_comm, child_pid, child_comm } => {
                Sched::Fork { parent_pid, parent_comm: f(parent_comm), child_pid, child_comm: f(child_comm) }
            }
            Sched::Exec { pid, filename } => Sched::Exec { pid, filename: f(filename) },
            Sched::Exit { pid, comm } => Sched::Exit { pid, comm: f(comm) },
            Sched::Free { pid } => Sched::Free { pid },
            Sched::Other => Sched::Other,
        }
    }
}

/// Where and when an event happened, and which task was running there.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EventContext {
    pub ts: Nanos,
    pub cpu: Cpu,
    /// `common_pid`: the task current on `cpu` when the event was recorded.
    pub pid: Pid,
}

/// A resolved text field (char array or `__data_loc char[]`).
#[derive(Clone, Debug)]
enum TextField {
    /// A char array inside the record (the common case: comms), read directly.
    Inline {
        offset: usize,
        size: usize,
    },
    Other(tracedat::format::Field),
}

impl TextField {
    fn new(field: &tracedat::format::Field) -> TextField {
        match field.kind {
            tracedat::format::FieldKind::StaticArray if field.size > 0 => {
                TextField::Inline { offset: field.offset as usize, size: field.size as usize }
            }
            _ => TextField::Other(field.clone()),
        }
    }

    #[inline]
    fn read<'a>(&self, event: &Event<'a>) -> &'a [u8] {
        match self {
            TextField::Inline { offset, size } => {
                let bytes = event.data.get(*offset..offset + size).unwrap_or(b"");
                &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())]
            }
            TextField::Other(field) => event.read_str(field).unwrap_or(b""),
        }
    }
}

/// Which fields of which event the decoder reads.
#[derive(Clone, Debug)]
enum Decoder {
    Switch { prev_pid: FieldRef, prev_comm: TextField, prev_state: FieldRef, next_pid: FieldRef, next_comm: TextField },
    Wake { kind: WakeKind, pid: FieldRef, comm: TextField, target_cpu: Option<FieldRef>, success: Option<FieldRef> },
    Migrate { pid: FieldRef, comm: TextField, orig_cpu: FieldRef, dest_cpu: FieldRef },
    Fork { parent_pid: FieldRef, parent_comm: TextField, child_pid: FieldRef, child_comm: TextField },
    Exec { pid: FieldRef, filename: TextField },
    Exit { pid: FieldRef, comm: TextField },
    Free { pid: FieldRef },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum WakeKind {
    Waking,
    Wakeup,
    New,
}

/// Decodes raw events into [`SchedEvent`]s for one trace's formats.
#[derive(Clone, Debug, Default)]
pub struct SchedDecoder {
    /// Indexed by event id (ids fit in 16 bits).
    by_id: Vec<Option<Decoder>>,
    /// Scheduler events whose format lacks a field the model needs.
    pub unusable: Vec<String>,
}

impl SchedDecoder {
    pub fn new(formats: &Formats) -> SchedDecoder {
        let mut decoder = SchedDecoder::default();
        for format in formats.iter().filter(|f| f.system == "sched") {
            let Some(kind) = decoder_kind(&format.name) else {
                continue;
            };
            match resolve(kind, format) {
                Some(d) => {
                    let slot = format.id as usize;
                    if slot < 1 << 16 {
                        if decoder.by_id.len() <= slot {
                            decoder.by_id.resize(slot + 1, None);
                        }
                        decoder.by_id[slot] = Some(d);
                    }
                }
                None => decoder.unusable.push(format.name.clone()),
            }
        }
        decoder
    }

    /// Whether the trace has `sched_wakeup` (if not, `sched_waking` stands for it).
    pub fn has_wakeup(&self) -> bool {
        self.by_id.iter().flatten().any(|d| matches!(d, Decoder::Wake { kind: WakeKind::Wakeup, .. }))
    }

    pub fn has_switch(&self) -> bool {
        self.by_id.iter().flatten().any(|d| matches!(d, Decoder::Switch { .. }))
    }

    #[inline]
    pub fn decode<'a>(&self, event: &Event<'a>) -> SchedEvent<'a> {
        let Some(Some(decoder)) = self.by_id.get(event.id as usize) else {
            return SchedEvent::Other;
        };
        decode_with(decoder, event).unwrap_or(SchedEvent::Other)
    }
}

fn decoder_kind(name: &str) -> Option<&'static str> {
    Some(match name {
        "sched_switch" => "switch",
        "sched_waking" => "waking",
        "sched_wakeup" => "wakeup",
        "sched_wakeup_new" => "wakeup_new",
        "sched_migrate_task" => "migrate",
        "sched_process_fork" => "fork",
        "sched_process_exec" => "exec",
        "sched_process_exit" => "exit",
        "sched_process_free" => "free",
        _ => return None,
    })
}

fn resolve(kind: &str, format: &EventFormat) -> Option<Decoder> {
    let num = |name: &str| format.field(name).and_then(FieldRef::of);
    let text = |name: &str| format.field(name).map(TextField::new);
    let wake = |kind: WakeKind| {
        Some(Decoder::Wake {
            kind,
            pid: num("pid")?,
            comm: text("comm").unwrap_or(TextField::Inline { offset: 0, size: 0 }),
            target_cpu: num("target_cpu"),
            success: num("success"),
        })
    };
    match kind {
        "switch" => Some(Decoder::Switch {
            prev_pid: num("prev_pid")?,
            prev_comm: text("prev_comm")?,
            prev_state: num("prev_state")?,
            next_pid: num("next_pid")?,
            next_comm: text("next_comm")?,
        }),
        "waking" => wake(WakeKind::Waking),
        "wakeup" => wake(WakeKind::Wakeup),
        "wakeup_new" => wake(WakeKind::New),
        "migrate" => Some(Decoder::Migrate {
            pid: num("pid")?,
            comm: text("comm")?,
            orig_cpu: num("orig_cpu")?,
            dest_cpu: num("dest_cpu")?,
        }),
        "fork" => Some(Decoder::Fork {
            parent_pid: num("parent_pid")?,
            parent_comm: text("parent_comm")?,
            child_pid: num("child_pid")?,
            child_comm: text("child_comm")?,
        }),
        "exec" => Some(Decoder::Exec { pid: num("pid")?, filename: text("filename")? }),
        "exit" => Some(Decoder::Exit { pid: num("pid")?, comm: text("comm")? }),
        "free" => Some(Decoder::Free { pid: num("pid")? }),
        _ => None,
    }
}

fn decode_with<'a>(decoder: &Decoder, e: &Event<'a>) -> Option<SchedEvent<'a>> {
    let pid = |f: FieldRef| e.read(f).map(|v| Pid(v as i32));
    let cpu = |f: FieldRef| e.read(f).and_then(|v| u32::try_from(v).ok()).map(Cpu);
    Some(match decoder {
        Decoder::Switch { prev_pid, prev_comm, prev_state, next_pid, next_comm } => SchedEvent::Switch {
            prev_pid: pid(*prev_pid)?,
            prev_comm: prev_comm.read(e),
            prev_state: e.read(*prev_state)?,
            next_pid: pid(*next_pid)?,
            next_comm: next_comm.read(e),
        },
        Decoder::Wake { kind, pid: p, comm, target_cpu, success } => {
            let (pid, comm, target_cpu) = (pid(*p)?, comm.read(e), target_cpu.and_then(cpu));
            match kind {
                WakeKind::Waking => SchedEvent::Waking { pid, comm, target_cpu },
                WakeKind::Wakeup => {
                    let success = success.and_then(|s| e.read(s)).map(|v| v != 0);
                    SchedEvent::Wakeup { pid, comm, target_cpu, success }
                }
                WakeKind::New => SchedEvent::WakeupNew { pid, comm, target_cpu },
            }
        }
        Decoder::Migrate { pid: p, comm, orig_cpu, dest_cpu } => SchedEvent::MigrateTask {
            pid: pid(*p)?,
            comm: comm.read(e),
            orig_cpu: cpu(*orig_cpu)?,
            dest_cpu: cpu(*dest_cpu)?,
        },
        Decoder::Fork { parent_pid, parent_comm, child_pid, child_comm } => SchedEvent::Fork {
            parent_pid: pid(*parent_pid)?,
            parent_comm: parent_comm.read(e),
            child_pid: pid(*child_pid)?,
            child_comm: child_comm.read(e),
        },
        Decoder::Exec { pid: p, filename } => SchedEvent::Exec { pid: pid(*p)?, filename: filename.read(e) },
        Decoder::Exit { pid: p, comm } => SchedEvent::Exit { pid: pid(*p)?, comm: comm.read(e) },
        Decoder::Free { pid: p } => SchedEvent::Free { pid: pid(*p)? },
    })
}
