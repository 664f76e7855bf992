//! The scheduler events the model understands, decoded from raw trace events by field
//! names resolved once per file. Fields that a kernel lacks (e.g. `success` on recent
//! kernels) are simply absent; an event whose record is too short for a field the model
//! needs is [`Sched::Unreadable`]: skipped and counted, never guessed.

use tracedat::format::EventFormat;
use tracedat::{Cpu, Event, FieldRef, Formats, Nanos, Pid};

/// A scheduler event, with borrowed names.
pub type SchedEvent<'a> = Sched<&'a [u8]>;

/// A scheduler event as decoded from a record, names as the record holds them.
pub type RawEvent<'a> = Sched<RawName<'a>>;

/// A name as a record holds it: at most 16 bytes (every comm) packed into an integer,
/// zero-padded (names hold no NUL, so no two share a number; 0 is the empty name), or
/// the bytes of a longer one (exec file names).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RawName<'a> {
    Packed(u128),
    /// A 16-byte char array as stored, not yet cut at its first NUL (a kernel may leave
    /// junk after it): [`RawName::packed`] gives the name.
    Array(u128),
    Long(&'a [u8]),
}

impl<'a> RawName<'a> {
    /// The name of `bytes`, cut at the first NUL.
    pub fn of(bytes: &'a [u8]) -> RawName<'a> {
        let bytes = &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())];
        match bytes.len() {
            0..=16 => {
                let mut packed = [0u8; 16];
                packed[..bytes.len()].copy_from_slice(bytes);
                RawName::Packed(u128::from_le_bytes(packed))
            }
            _ => RawName::Long(bytes),
        }
    }

    /// A 16-byte char array, read in one go.
    #[inline]
    fn of_array(bytes: [u8; 16]) -> RawName<'static> {
        RawName::Array(u128::from_le_bytes(bytes))
    }

    /// The name packed and cut at its first NUL (`None` for a long name).
    pub fn word(self) -> Option<u128> {
        const ONES: u128 = u128::MAX / 255;
        const HIGHS: u128 = ONES << 7;
        match self {
            RawName::Packed(word) => Some(word),
            RawName::Array(word) => {
                // The lowest byte flagged here is the first zero byte (borrows only reach up).
                let zero_bytes = word.wrapping_sub(ONES) & !word & HIGHS;
                let kept = zero_bytes.trailing_zeros() / 8 * 8;
                Some(if zero_bytes == 0 { word } else { word & ((1u128 << kept) - 1) })
            }
            RawName::Long(_) => None,
        }
    }

    /// The same name, cut at its first NUL.
    pub fn packed(self) -> RawName<'a> {
        self.word().map_or(self, RawName::Packed)
    }

    pub fn is_empty(&self) -> bool {
        self.word() == Some(0)
    }

    /// The name's bytes.
    pub fn to_bytes(self) -> Vec<u8> {
        match (self.word(), self) {
            (Some(word), _) => {
                let bytes = word.to_le_bytes();
                bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(16)].to_vec()
            }
            (None, RawName::Long(bytes)) => bytes.to_vec(),
            (None, _) => Vec::new(),
        }
    }
}

/// A scheduler event whose names (comms, exec file names) are of type `N`: borrowed
/// slices, or references into a batch when events travel between threads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sched<N> {
    Switch {
        prev_pid: Pid,
        prev_comm: N,
        /// The low 16 bits of `prev_state`: every task state bit a kernel reports (its
        /// `long` holds no more), all the model keeps.
        prev_state: u16,
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
    /// A scheduler event whose record lacks a field the model needs (a damaged record).
    Unreadable,
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
            Sched::Unreadable => Sched::Unreadable,
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
    fn read<'a>(&self, event: &Event<'a>) -> RawName<'a> {
        match self {
            &TextField::Inline { offset, size: 16 } => match event.data.get(offset..offset + 16) {
                Some(bytes) => RawName::of_array(bytes.try_into().expect("16 bytes")),
                None => RawName::Packed(0),
            },
            &TextField::Inline { offset, size } => RawName::of(event.data.get(offset..offset + size).unwrap_or(b"")),
            TextField::Other(field) => RawName::of(event.read_str(field).unwrap_or(b"")),
        }
    }
}

/// Which fields of which event the decoder reads.
#[derive(Clone, Debug)]
enum Decoder {
    Switch {
        prev_pid: FieldRef,
        prev_comm: TextField,
        prev_state: FieldRef,
        next_pid: FieldRef,
        next_comm: TextField,
        layout: Option<SwitchLayout>,
    },
    Wake {
        kind: WakeKind,
        pid: FieldRef,
        comm: TextField,
        target_cpu: Option<FieldRef>,
        success: Option<FieldRef>,
        layout: Option<WakeLayout>,
    },
    Migrate {
        pid: FieldRef,
        comm: TextField,
        orig_cpu: FieldRef,
        dest_cpu: FieldRef,
    },
    Fork {
        parent_pid: FieldRef,
        parent_comm: TextField,
        child_pid: FieldRef,
        child_comm: TextField,
    },
    Exec {
        pid: FieldRef,
        filename: TextField,
    },
    Exit {
        pid: FieldRef,
        comm: TextField,
    },
    Free {
        pid: FieldRef,
    },
}

/// `sched_switch` as every kernel lays it out (16-byte comms, 4-byte pids, a 4- or
/// 8-byte state): read with one length check, for the most frequent event.
#[derive(Copy, Clone, Debug)]
struct SwitchLayout {
    prev_comm: usize,
    prev_pid: usize,
    prev_state: usize,
    next_comm: usize,
    next_pid: usize,
    len: usize,
}

impl SwitchLayout {
    fn of(
        prev_pid: FieldRef,
        prev_comm: &TextField,
        prev_state: FieldRef,
        next_pid: FieldRef,
        next_comm: &TextField,
    ) -> Option<SwitchLayout> {
        let (&TextField::Inline { offset: prev_comm, size: 16 }, &TextField::Inline { offset: next_comm, size: 16 }) =
            (prev_comm, next_comm)
        else {
            return None;
        };
        let pid_ok = |f: FieldRef| f.size == 4;
        if !(pid_ok(prev_pid) && pid_ok(next_pid) && matches!(prev_state.size, 4 | 8) && prev_state.signed) {
            return None;
        }
        let ends = [prev_comm + 16, next_comm + 16, prev_pid.offset as usize + 4, next_pid.offset as usize + 4];
        let state_end = prev_state.offset as usize + usize::from(prev_state.size);
        Some(SwitchLayout {
            prev_comm,
            prev_pid: prev_pid.offset as usize,
            prev_state: prev_state.offset as usize,
            next_comm,
            next_pid: next_pid.offset as usize,
            len: ends.into_iter().fold(state_end, usize::max),
        })
    }

    #[inline]
    fn read<'a, N>(&self, data: &'a [u8], name: &mut impl FnMut(RawName<'a>) -> N) -> Option<Sched<N>> {
        let data = data.get(..self.len)?;
        Some(Sched::Switch {
            prev_pid: Pid(le_i32(data, self.prev_pid)),
            prev_comm: name(comm_at(data, self.prev_comm)),
            // Little-endian: the low bits come first, whether the field is 4 or 8 bytes.
            prev_state: u16::from_le_bytes([data[self.prev_state], data[self.prev_state + 1]]),
            next_pid: Pid(le_i32(data, self.next_pid)),
            next_comm: name(comm_at(data, self.next_comm)),
        })
    }
}

/// The wakeup events as recent kernels lay them out (16-byte comm, 4-byte pid and
/// target CPU, no `success`).
#[derive(Copy, Clone, Debug)]
struct WakeLayout {
    comm: usize,
    pid: usize,
    target_cpu: usize,
    len: usize,
}

impl WakeLayout {
    fn of(
        pid: FieldRef,
        comm: &TextField,
        target_cpu: Option<FieldRef>,
        success: Option<FieldRef>,
    ) -> Option<WakeLayout> {
        let (&TextField::Inline { offset: comm, size: 16 }, Some(target), None) = (comm, target_cpu, success) else {
            return None;
        };
        (pid.size == 4 && target.size == 4).then(|| WakeLayout {
            comm,
            pid: pid.offset as usize,
            target_cpu: target.offset as usize,
            len: (comm + 16).max(pid.offset as usize + 4).max(target.offset as usize + 4),
        })
    }

    #[inline]
    fn read<'a, N>(&self, kind: WakeKind, data: &'a [u8], name: &mut impl FnMut(RawName<'a>) -> N) -> Option<Sched<N>> {
        let data = data.get(..self.len)?;
        let (pid, comm) = (Pid(le_i32(data, self.pid)), name(comm_at(data, self.comm)));
        // A CPU number that does not fit is kept as one no trace has, for the model to count.
        let target_cpu = Some(Cpu(u32::try_from(le_i32(data, self.target_cpu)).unwrap_or(u32::MAX)));
        Some(match kind {
            WakeKind::Waking => Sched::Waking { pid, comm, target_cpu },
            WakeKind::Wakeup => Sched::Wakeup { pid, comm, target_cpu, success: None },
            WakeKind::New => Sched::WakeupNew { pid, comm, target_cpu },
        })
    }
}

#[inline(always)]
fn le_i32(data: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes"))
}

#[inline(always)]
fn comm_at(data: &[u8], at: usize) -> RawName<'static> {
    RawName::of_array(data[at..at + 16].try_into().expect("16 bytes"))
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

    /// Decodes `event`, its names as the record holds them.
    pub fn decode<'a>(&self, event: &Event<'a>) -> RawEvent<'a> {
        self.decode_named(event, &mut |name| name)
    }

    /// Decodes `event`, passing each name through `name` as it is read.
    #[inline]
    pub fn decode_named<'a, N>(&self, event: &Event<'a>, name: &mut impl FnMut(RawName<'a>) -> N) -> Sched<N> {
        let Some(Some(decoder)) = self.by_id.get(event.id as usize) else {
            return Sched::Other;
        };
        decode_with(decoder, event, name).unwrap_or(Sched::Unreadable)
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
        let (pid, comm) = (num("pid")?, text("comm").unwrap_or(TextField::Inline { offset: 0, size: 0 }));
        let (target_cpu, success) = (num("target_cpu"), num("success"));
        let layout = WakeLayout::of(pid, &comm, target_cpu, success);
        Some(Decoder::Wake { kind, pid, comm, target_cpu, success, layout })
    };
    match kind {
        "switch" => {
            let (prev_pid, prev_comm, prev_state) = (num("prev_pid")?, text("prev_comm")?, num("prev_state")?);
            let (next_pid, next_comm) = (num("next_pid")?, text("next_comm")?);
            let layout = SwitchLayout::of(prev_pid, &prev_comm, prev_state, next_pid, &next_comm);
            Some(Decoder::Switch { prev_pid, prev_comm, prev_state, next_pid, next_comm, layout })
        }
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

/// Reads a number field of a record (little- or big-endian, sign-extended when signed).
#[inline(always)]
fn number(data: &[u8], field: FieldRef, little: bool) -> Option<i64> {
    let at = field.offset as usize;
    let raw = match field.size {
        4 => {
            let bytes: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
            u64::from(if little { u32::from_le_bytes(bytes) } else { u32::from_be_bytes(bytes) })
        }
        8 => {
            let bytes: [u8; 8] = data.get(at..at + 8)?.try_into().ok()?;
            if little { u64::from_le_bytes(bytes) } else { u64::from_be_bytes(bytes) }
        }
        2 => {
            let bytes: [u8; 2] = data.get(at..at + 2)?.try_into().ok()?;
            u64::from(if little { u16::from_le_bytes(bytes) } else { u16::from_be_bytes(bytes) })
        }
        1 => u64::from(*data.get(at)?),
        _ => return None,
    };
    let shift = 64 - 8 * u32::from(field.size);
    Some(if field.signed { ((raw << shift) as i64) >> shift } else { raw as i64 })
}

#[inline]
fn decode_with<'a, N>(decoder: &Decoder, e: &Event<'a>, name: &mut impl FnMut(RawName<'a>) -> N) -> Option<Sched<N>> {
    let (data, little) = (e.data, e.endian == tracedat::Endian::Little);
    match decoder {
        Decoder::Switch { layout: Some(layout), .. } if little => return layout.read(data, name),
        Decoder::Wake { kind, layout: Some(layout), .. } if little => return layout.read(*kind, data, name),
        _ => {}
    }
    let pid = |f: FieldRef| number(data, f, little).map(|v| Pid(v as i32));
    // A CPU number that does not fit is kept as one no trace has, for the model to count.
    let cpu = |f: FieldRef| number(data, f, little).map(|v| Cpu(u32::try_from(v).unwrap_or(u32::MAX)));
    Some(match decoder {
        Decoder::Switch { prev_pid, prev_comm, prev_state, next_pid, next_comm, .. } => {
            let (prev_pid, prev_state, next_pid) =
                (pid(*prev_pid)?, number(data, *prev_state, little)? as u16, pid(*next_pid)?);
            Sched::Switch {
                prev_pid,
                prev_comm: name(prev_comm.read(e)),
                prev_state,
                next_pid,
                next_comm: name(next_comm.read(e)),
            }
        }
        Decoder::Wake { kind, pid: p, comm, target_cpu, success, .. } => {
            let target_cpu = match target_cpu {
                Some(field) => Some(cpu(*field)?),
                None => None,
            };
            let (pid, comm) = (pid(*p)?, name(comm.read(e)));
            match kind {
                WakeKind::Waking => Sched::Waking { pid, comm, target_cpu },
                WakeKind::Wakeup => {
                    let success = success.and_then(|s| number(data, s, little)).map(|v| v != 0);
                    Sched::Wakeup { pid, comm, target_cpu, success }
                }
                WakeKind::New => Sched::WakeupNew { pid, comm, target_cpu },
            }
        }
        Decoder::Migrate { pid: p, comm, orig_cpu, dest_cpu } => {
            let (pid, orig_cpu, dest_cpu) = (pid(*p)?, cpu(*orig_cpu)?, cpu(*dest_cpu)?);
            Sched::MigrateTask { pid, comm: name(comm.read(e)), orig_cpu, dest_cpu }
        }
        Decoder::Fork { parent_pid, parent_comm, child_pid, child_comm } => {
            let (parent_pid, child_pid) = (pid(*parent_pid)?, pid(*child_pid)?);
            Sched::Fork {
                parent_pid,
                parent_comm: name(parent_comm.read(e)),
                child_pid,
                child_comm: name(child_comm.read(e)),
            }
        }
        Decoder::Exec { pid: p, filename } => Sched::Exec { pid: pid(*p)?, filename: name(filename.read(e)) },
        Decoder::Exit { pid: p, comm } => Sched::Exit { pid: pid(*p)?, comm: name(comm.read(e)) },
        Decoder::Free { pid: p } => Sched::Free { pid: pid(*p)? },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_at_their_first_nul() {
        let array = |text: &[u8]| {
            let mut bytes = [0u8; 16];
            bytes[..text.len()].copy_from_slice(text);
            bytes
        };
        for text in [&b""[..], b"a", b"hackbench", b"fifteen-chars-x", b"sixteen-chars-xy"] {
            assert_eq!(RawName::of_array(array(text)).packed(), RawName::of(text), "{text:?}");
            assert_eq!(RawName::of(text).to_bytes(), text);
        }
        let mut junk = array(b"ab");
        junk[5] = b'z';
        assert_eq!(RawName::of_array(junk).packed(), RawName::of(b"ab"));
        assert!(matches!(RawName::of(b"/usr/lib/a-long-file-name"), RawName::Long(_)));
    }
}
