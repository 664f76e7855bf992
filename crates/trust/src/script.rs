//! The model fuzzer's input: a script of scheduler events, decoded from any bytes (every
//! byte string is a valid script) through the `arbitrary` crate, and encoded back to
//! bytes so real traces can seed the fuzzer.
//!
//! The layout is compact and explicit (a tag byte per operation, little-endian numbers as
//! `arbitrary` reads them), so that a libFuzzer mutation of a byte changes one thing: a
//! CPU, a task, a time step, a CPU field. Values are chosen through small tables that
//! hold the interesting cases — pid 0 and pids near `i32::MAX`, CPU fields of -1, 65535
//! and `i32::MAX`, lost-event counts of `u64::MAX`, `prev_state` with every bit the
//! kernels use — rather than spread over the whole range where they would be rare.

use arbitrary::{Arbitrary, Result, Unstructured};

/// Operations read from one input at most: bounds the time one input takes.
pub const MAX_OPS: usize = 8192;
/// CPUs that can hold data (the declared count may be larger).
pub const MAX_DATA_CPUS: u8 = 8;

/// Pids of task bytes 248 and up (bytes 1 to 247 are those pids themselves, 0 is idle):
/// the limits of the kernel's pid space and of the model's dense pid index, and values
/// only damage produces. (Rare on purpose: a pid near 2^22 makes the model's pid index
/// tens of megabytes, which slows the fuzzer down.)
const EXTREME_PIDS: [i32; 8] = [4_194_304, (1 << 23) - 1, 1 << 23, i32::MAX, -1, i32::MIN, 65536, 1 << 30];

/// Values of a CPU field (`target_cpu`, `orig_cpu`, `dest_cpu`) from byte 224 up (bytes
/// below are CPUs 0 to 15): beyond any real machine, negative, at integer limits.
const EXTREME_CPUS: [i32; 10] = [-1, i32::MIN, i32::MAX, 65535, 65536, 60000, 255, 256, 4096, 1 << 20];

/// `prev_state` values: running, preempted (R+ on 4.14+ kernels), each sleeping and dead
/// state, several at once, and nonsense.
pub const PREV_STATES: [i64; 12] = [0, 1, 2, 0x80, 0x100, 0x10, 0x20, 0x40, 4, 0x101, -1, i64::MIN];

/// Lost-event counts from byte 201 up (0 is "count unknown", 1 to 200 are themselves).
const EXTREME_LOST: [u64; 5] = [0, u32::MAX as u64, u64::MAX, 1 << 63, 1_000_000];

/// Task names (comms) by pid, and exec file names: what the model and `check` treat
/// specially (`sleep`, kernel-thread prefixes), empty, over-long and non-UTF-8 names.
pub const NAMES: [&[u8]; 16] = [
    b"sh",
    b"sleep",
    b"hackbench",
    b"kworker/0:1",
    b"migration/1",
    b"ksoftirqd/0",
    b"",
    b"a-very-long-command-name",
    b"\xff\xfebad",
    b"rcu_preempt",
    b"barrier",
    b"stress-ng-cpu",
    b"/usr/bin/sleep",
    b"x/",
    b"trace-cmd",
    b"irq/9-acpi",
];

/// How the trace file is laid out: version and compression, byte order, long size and
/// page size (small pages put few events in each, so page boundaries are everywhere).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout(pub u8);

/// What the analyses are asked: window, filter, colors, topology (one byte each).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct View {
    pub flags: u8,
    /// 0: no `--min`; else the window starts `min * 10 µs` after the origin (255: far away).
    pub min: u8,
    /// 0: no `--max`; else as `min`.
    pub max: u8,
}

/// A task byte: 0 is the idle task, 1 to 247 that pid, 248 and up [`EXTREME_PIDS`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Task(pub u8);

/// The task an event shows running (`common_pid`): 255 is the task the script last
/// switched to on the event's CPU, anything else that [`Task`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Common(pub u8);

/// A CPU field's value: below 224 a CPU from 0 to 15 (`byte % 16`), 224 and up
/// [`EXTREME_CPUS`] (rare: a model of 65536 CPUs is slow to fuzz).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuField(pub u8);

/// Where and when an event happens: its CPU (modulo the CPUs with data), nanoseconds
/// after the previous event, and the running task.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct At {
    pub cpu: u8,
    pub dt: u16,
    pub common: Common,
}

/// One step of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Switch {
        at: At,
        prev: Task,
        state: u8,
        next: Task,
    },
    Waking {
        at: At,
        task: Task,
        target: CpuField,
    },
    Wakeup {
        at: At,
        task: Task,
        target: CpuField,
    },
    WakeupNew {
        at: At,
        task: Task,
        target: CpuField,
    },
    Migrate {
        at: At,
        task: Task,
        orig: CpuField,
        dest: CpuField,
    },
    Fork {
        at: At,
        parent: Task,
        child: Task,
    },
    Exec {
        at: At,
        task: Task,
        file: u8,
    },
    Exit {
        at: At,
        task: Task,
    },
    /// An event the model does not decode (it still shows the running task).
    Other {
        at: At,
    },
    /// An event whose id has no format in the file.
    Unknown {
        at: At,
    },
    /// Events lost on a CPU before its next event: 0 count unknown, 1 to 200 that many,
    /// 201 and up [`EXTREME_LOST`].
    Lost {
        cpu: u8,
        count: u8,
    },
    /// The clock moves forward.
    Advance(u32),
    /// The clock moves back (the next events of a CPU go on a new page).
    Back(u32),
    /// The clock jumps anywhere, up to `u64::MAX`.
    SetTime(u64),
}

/// A whole input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    pub layout: Layout,
    /// CPUs with data: `1 + cpus % MAX_DATA_CPUS`.
    pub cpus: u8,
    /// The CPU count the file declares (`declared % 8`: 0 to 5 the CPUs with data, 6 one
    /// more, 7 64); bits 3 to 5 all set: render the figures.
    pub declared: u8,
    pub view: View,
    pub ops: Vec<Op>,
}

impl Task {
    pub const IDLE: Task = Task(0);

    pub fn pid(self) -> i32 {
        match self.0 {
            n @ 0..=247 => i32::from(n),
            n => EXTREME_PIDS[(n - 248) as usize],
        }
    }
}

impl Common {
    pub const CURRENT: Common = Common(255);
}

impl CpuField {
    pub const FIRST_EXTREME: u8 = 224;

    pub fn value(self) -> i32 {
        match self.0 {
            n if n < Self::FIRST_EXTREME => i32::from(n % 16),
            n => EXTREME_CPUS[(n - Self::FIRST_EXTREME) as usize % EXTREME_CPUS.len()],
        }
    }
}

/// The lost-event count a [`Op::Lost`] byte stands for (`None`: unknown).
pub fn lost_count(count: u8) -> Option<u64> {
    match count {
        0 => None,
        n @ 1..=200 => Some(u64::from(n)),
        n => Some(EXTREME_LOST[(n - 201) as usize % EXTREME_LOST.len()]),
    }
}

/// The comm the script gives a pid.
pub fn name_of(pid: i32) -> &'static [u8] {
    match pid {
        0 => b"swapper/0",
        pid => NAMES[pid.unsigned_abs() as usize % NAMES.len()],
    }
}

impl Script {
    /// CPUs with data.
    pub fn data_cpus(&self) -> u32 {
        1 + u32::from(self.cpus % MAX_DATA_CPUS)
    }

    /// Whether the figures are also written as SVG (one input in eight: it is slow).
    pub fn renders(&self) -> bool {
        self.declared & 0x38 == 0x38
    }

    /// The CPU count written in the file.
    pub fn declared_cpus(&self) -> u32 {
        match self.declared % 8 {
            0..=5 => self.data_cpus(),
            6 => self.data_cpus() + 1,
            _ => 64,
        }
    }

    /// Reads a script from any bytes.
    pub fn from_bytes(bytes: &[u8]) -> Script {
        Script::arbitrary_take_rest(Unstructured::new(bytes)).expect("every byte string is a script")
    }

    /// The bytes [`Script::from_bytes`] reads back as this script.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.layout.0, self.cpus, self.declared, self.view.flags, self.view.min, self.view.max];
        for op in &self.ops {
            op.encode(&mut out);
        }
        out
    }
}

impl<'a> Arbitrary<'a> for Script {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut script = Script {
            layout: Layout(u8::arbitrary(u)?),
            cpus: u8::arbitrary(u)?,
            declared: u8::arbitrary(u)?,
            view: View { flags: u8::arbitrary(u)?, min: u8::arbitrary(u)?, max: u8::arbitrary(u)? },
            ops: Vec::new(),
        };
        while !u.is_empty() && script.ops.len() < MAX_OPS {
            script.ops.push(Op::arbitrary(u)?);
        }
        Ok(script)
    }

    fn arbitrary_take_rest(mut u: Unstructured<'a>) -> Result<Self> {
        Script::arbitrary(&mut u)
    }
}

/// Operation tags: several values for the common events, so mutations land on them
/// more often.
mod tag {
    pub const SWITCH: u8 = 0;
    pub const WAKING: u8 = 4;
    pub const WAKEUP: u8 = 6;
    pub const WAKEUP_NEW: u8 = 8;
    pub const MIGRATE: u8 = 9;
    pub const FORK: u8 = 10;
    pub const EXEC: u8 = 11;
    pub const EXIT: u8 = 12;
    pub const OTHER: u8 = 13;
    pub const LOST: u8 = 14;
    pub const ADVANCE: u8 = 15;
    pub const BACK: u8 = 16;
    pub const SET_TIME: u8 = 17;
    pub const UNKNOWN: u8 = 18;
    pub const COUNT: u8 = 20;
}

impl<'a> Arbitrary<'a> for Op {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let byte = |u: &mut Unstructured<'a>| u8::arbitrary(u);
        let at = |u: &mut Unstructured<'a>| -> Result<At> {
            Ok(At { cpu: u8::arbitrary(u)?, dt: u16::arbitrary(u)?, common: Common(u8::arbitrary(u)?) })
        };
        Ok(match u8::arbitrary(u)? % tag::COUNT {
            0..=3 | 19 => Op::Switch { at: at(u)?, prev: Task(byte(u)?), state: byte(u)?, next: Task(byte(u)?) },
            4 | 5 => Op::Waking { at: at(u)?, task: Task(byte(u)?), target: CpuField(byte(u)?) },
            6 | 7 => Op::Wakeup { at: at(u)?, task: Task(byte(u)?), target: CpuField(byte(u)?) },
            tag::WAKEUP_NEW => Op::WakeupNew { at: at(u)?, task: Task(byte(u)?), target: CpuField(byte(u)?) },
            tag::MIGRATE => {
                Op::Migrate { at: at(u)?, task: Task(byte(u)?), orig: CpuField(byte(u)?), dest: CpuField(byte(u)?) }
            }
            tag::FORK => Op::Fork { at: at(u)?, parent: Task(byte(u)?), child: Task(byte(u)?) },
            tag::EXEC => Op::Exec { at: at(u)?, task: Task(byte(u)?), file: byte(u)? },
            tag::EXIT => Op::Exit { at: at(u)?, task: Task(byte(u)?) },
            tag::OTHER => Op::Other { at: at(u)? },
            tag::LOST => Op::Lost { cpu: byte(u)?, count: byte(u)? },
            tag::ADVANCE => Op::Advance(u32::arbitrary(u)?),
            tag::BACK => Op::Back(u32::arbitrary(u)?),
            tag::SET_TIME => Op::SetTime(u64::arbitrary(u)?),
            _ => Op::Unknown { at: at(u)? },
        })
    }
}

impl Op {
    /// Appends the bytes `Op::arbitrary` reads back as this operation.
    fn encode(&self, out: &mut Vec<u8>) {
        let at = |out: &mut Vec<u8>, at: &At| {
            out.push(at.cpu);
            out.extend_from_slice(&at.dt.to_le_bytes());
            out.push(at.common.0);
        };
        match self {
            Op::Switch { at: a, prev, state, next } => {
                out.push(tag::SWITCH);
                at(out, a);
                out.extend_from_slice(&[prev.0, *state, next.0]);
            }
            Op::Waking { at: a, task, target }
            | Op::Wakeup { at: a, task, target }
            | Op::WakeupNew { at: a, task, target } => {
                out.push(match self {
                    Op::Waking { .. } => tag::WAKING,
                    Op::Wakeup { .. } => tag::WAKEUP,
                    _ => tag::WAKEUP_NEW,
                });
                at(out, a);
                out.extend_from_slice(&[task.0, target.0]);
            }
            Op::Migrate { at: a, task, orig, dest } => {
                out.push(tag::MIGRATE);
                at(out, a);
                out.extend_from_slice(&[task.0, orig.0, dest.0]);
            }
            Op::Fork { at: a, parent, child } => {
                out.push(tag::FORK);
                at(out, a);
                out.extend_from_slice(&[parent.0, child.0]);
            }
            Op::Exec { at: a, task, file } => {
                out.push(tag::EXEC);
                at(out, a);
                out.extend_from_slice(&[task.0, *file]);
            }
            Op::Exit { at: a, task } => {
                out.push(tag::EXIT);
                at(out, a);
                out.push(task.0);
            }
            Op::Other { at: a } => {
                out.push(tag::OTHER);
                at(out, a);
            }
            Op::Unknown { at: a } => {
                out.push(tag::UNKNOWN);
                at(out, a);
            }
            Op::Lost { cpu, count } => out.extend_from_slice(&[tag::LOST, *cpu, *count]),
            Op::Advance(ns) => {
                out.push(tag::ADVANCE);
                out.extend_from_slice(&ns.to_le_bytes());
            }
            Op::Back(ns) => {
                out.push(tag::BACK);
                out.extend_from_slice(&ns.to_le_bytes());
            }
            Op::SetTime(ns) => {
                out.push(tag::SET_TIME);
                out.extend_from_slice(&ns.to_le_bytes());
            }
        }
    }

    /// The event part of an operation, if it writes an event.
    pub fn at(&self) -> Option<&At> {
        match self {
            Op::Switch { at, .. }
            | Op::Waking { at, .. }
            | Op::Wakeup { at, .. }
            | Op::WakeupNew { at, .. }
            | Op::Migrate { at, .. }
            | Op::Fork { at, .. }
            | Op::Exec { at, .. }
            | Op::Exit { at, .. }
            | Op::Other { at }
            | Op::Unknown { at } => Some(at),
            Op::Lost { .. } | Op::Advance(_) | Op::Back(_) | Op::SetTime(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_kind() -> Script {
        let at = At { cpu: 1, dt: 513, common: Common::CURRENT };
        Script {
            layout: Layout(0x13),
            cpus: 1,
            declared: 6,
            view: View { flags: 0xa5, min: 3, max: 200 },
            ops: vec![
                Op::SetTime(u64::MAX - 5),
                Op::Switch { at, prev: Task(3), state: 4, next: Task(250) },
                Op::Waking { at, task: Task(7), target: CpuField(227) },
                Op::Wakeup { at, task: Task(7), target: CpuField(1) },
                Op::WakeupNew { at, task: Task(8), target: CpuField(0) },
                Op::Migrate { at, task: Task(8), orig: CpuField(0), dest: CpuField(20) },
                Op::Fork { at, parent: Task(8), child: Task(9) },
                Op::Exec { at, task: Task(9), file: 12 },
                Op::Exit { at, task: Task(9) },
                Op::Other { at: At { cpu: 0, dt: 0, common: Common(4) } },
                Op::Unknown { at },
                Op::Lost { cpu: 1, count: 250 },
                Op::Advance(1 << 31),
                Op::Back(77),
            ],
        }
    }

    #[test]
    fn scripts_read_back_from_their_bytes() {
        let script = every_kind();
        assert_eq!(Script::from_bytes(&script.to_bytes()), script);
    }

    #[test]
    fn any_bytes_are_a_script() {
        assert_eq!(Script::from_bytes(&[]), Script::default());
        let noise: Vec<u8> = (0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let script = Script::from_bytes(&noise);
        assert!(!script.ops.is_empty());
        assert_eq!(Script::from_bytes(&script.to_bytes()).ops.len(), script.ops.len());
    }

    #[test]
    fn tables_cover_the_extremes() {
        assert_eq!(Task(0).pid(), 0);
        assert_eq!(Task(247).pid(), 247);
        assert!((248..=255).map(|b| Task(b).pid()).any(|p| p == i32::MAX));
        assert!((224..=255).map(|b| CpuField(b).value()).any(|c| c == -1));
        assert_eq!(CpuField(17).value(), 1);
        assert_eq!(lost_count(0), None);
        assert!((201..=255).any(|b| lost_count(b) == Some(u64::MAX)));
    }
}
