//! Real traces as scripts, to seed the fuzzer with what kernels really do: a stretch of a
//! trace's scheduler events and losses (top buffer, as the model reads it) becomes a
//! script with the same CPUs, order, time steps, switch states and CPU fields. Pids are
//! renumbered into the script's task bytes so that each task keeps a name of its kind
//! (`sleep`, kernel threads, the benchmark), which `check` and `--after-sleep` care about.

use crate::script::{At, Common, CpuField, Layout, MAX_DATA_CPUS, NAMES, Op, PREV_STATES, Script, Task, View};
use model::{Sched, SchedDecoder};
use std::collections::HashMap;
use tracedat::{Cpu, Item, Nanos, Pid, Selection, Trace};

/// Which events of a trace a seed takes.
#[derive(Copy, Clone, Debug)]
pub struct Slice {
    /// Events and losses skipped first.
    pub skip: usize,
    pub take: usize,
}

/// The script of `slice` of `trace`'s events, written with `layout` and analysed as
/// `view` asks.
pub fn script_of(trace: &Trace, slice: Slice, layout: Layout, view: View) -> Script {
    let decoder = SchedDecoder::new(trace.formats());
    let top = trace.buffers().iter().find(|b| b.name.is_empty()).or(trace.buffers().first());
    let selection =
        Selection { buffers: Some(top.map(|b| vec![b.name.clone()]).unwrap_or_default()), ..Selection::all() };
    let cpus = trace.cpu_count().clamp(1, u32::from(MAX_DATA_CPUS)) as u8;
    let mut script = Script { layout, cpus: cpus - 1, declared: 0, view, ops: Vec::new() };
    let mut seed = Seed { trace, tasks: HashMap::new(), next_of_kind: [0; 16], current: [Task::IDLE; 8], now: None };
    let mut stream = trace.events_of(&selection);
    let mut index = 0;
    while let Some(item) = stream.next() {
        index += 1;
        if index <= slice.skip {
            continue;
        }
        if index > slice.skip + slice.take {
            break;
        }
        match item {
            Item::Event(event) => {
                let sched = decoder.decode(&event).map_names(|name| name.to_bytes());
                seed.event(&mut script.ops, event.cpu, event.ts, event.pid(), &sched);
            }
            Item::Lost(lost) => {
                let count = lost.count.map_or(0, |n| n.clamp(1, 200) as u8);
                script.ops.push(Op::Lost { cpu: lost.cpu.0 as u8, count });
            }
        }
    }
    script
}

/// The conversion's state.
struct Seed<'t> {
    trace: &'t Trace,
    /// Real pid → task byte.
    tasks: HashMap<i32, Task>,
    /// Per name kind, how many task bytes of that kind were handed out.
    next_of_kind: [u8; 16],
    /// The task the script last switched to on each CPU.
    current: [Task; MAX_DATA_CPUS as usize],
    now: Option<u64>,
}

impl Seed<'_> {
    fn event(&mut self, ops: &mut Vec<Op>, cpu: Cpu, ts: Nanos, pid: Pid, sched: &Sched<Vec<u8>>) {
        let dt = self.time_step(ops, ts.0);
        let slot = cpu.index() % self.current.len();
        let running = self.task(pid, None);
        let common = if running == self.current[slot] { Common::CURRENT } else { Common(running.0) };
        let at = At { cpu: cpu.0 as u8, dt, common };
        let op = match *sched {
            Sched::Switch { prev_pid, ref prev_comm, prev_state, next_pid, ref next_comm } => {
                let (prev, next) = (self.task(prev_pid, Some(prev_comm)), self.task(next_pid, Some(next_comm)));
                self.current[slot] = next;
                Op::Switch { at, prev, state: state_byte(prev_state), next }
            }
            Sched::Waking { pid, ref comm, target_cpu } => {
                Op::Waking { at, task: self.task(pid, Some(comm)), target: cpu_field(target_cpu) }
            }
            Sched::Wakeup { pid, ref comm, target_cpu, .. } => {
                Op::Wakeup { at, task: self.task(pid, Some(comm)), target: cpu_field(target_cpu) }
            }
            Sched::WakeupNew { pid, ref comm, target_cpu } => {
                Op::WakeupNew { at, task: self.task(pid, Some(comm)), target: cpu_field(target_cpu) }
            }
            Sched::MigrateTask { pid, ref comm, orig_cpu, dest_cpu } => Op::Migrate {
                at,
                task: self.task(pid, Some(comm)),
                orig: cpu_field(Some(orig_cpu)),
                dest: cpu_field(Some(dest_cpu)),
            },
            Sched::Fork { parent_pid, ref parent_comm, child_pid, ref child_comm } => Op::Fork {
                at,
                parent: self.task(parent_pid, Some(parent_comm)),
                child: self.task(child_pid, Some(child_comm)),
            },
            Sched::Exec { pid, ref filename } => Op::Exec { at, task: self.task(pid, None), file: file_byte(filename) },
            Sched::Exit { pid, ref comm } => Op::Exit { at, task: self.task(pid, Some(comm)) },
            Sched::Free { .. } | Sched::Other | Sched::Unreadable => Op::Other { at },
        };
        ops.push(op);
    }

    /// The script's time step to `ts`: small steps in the event, larger ones before it.
    fn time_step(&mut self, ops: &mut Vec<Op>, ts: u64) -> u16 {
        let now = self.now.replace(ts);
        match now.map(|now| ts.checked_sub(now)) {
            Some(Some(step)) if step <= u64::from(u16::MAX) => step as u16,
            Some(Some(step)) if step <= u64::from(u32::MAX) => {
                ops.push(Op::Advance(step as u32));
                0
            }
            _ => {
                ops.push(Op::SetTime(ts));
                0
            }
        }
    }

    /// The task byte of a real pid: the next free byte whose name is of the same kind as
    /// the task's real name.
    fn task(&mut self, pid: Pid, comm: Option<&[u8]>) -> Task {
        if pid.is_idle() {
            return Task::IDLE;
        }
        if let Some(&task) = self.tasks.get(&pid.0) {
            return task;
        }
        let name = comm
            .map(<[u8]>::to_vec)
            .or_else(|| self.trace.metadata().cmdlines.get(pid.0).map(|c| c.as_bytes().to_vec()));
        let kind = name_kind(name.as_deref().unwrap_or(b""));
        // Bytes of a kind are kind + 16 k (below 240); byte 0 is the idle task.
        let per_kind = 15 - u8::from(kind == 0);
        let k = self.next_of_kind[kind] % per_kind + u8::from(kind == 0);
        self.next_of_kind[kind] = self.next_of_kind[kind].wrapping_add(1);
        let task = Task(kind as u8 + 16 * k);
        self.tasks.insert(pid.0, task);
        task
    }
}

/// Which entry of [`NAMES`] a real name is like.
fn name_kind(name: &[u8]) -> usize {
    let prefixes: [(&[u8], usize); 11] = [
        (b"sleep", 1),
        (b"hackbench", 2),
        (b"kworker", 3),
        (b"migration", 4),
        (b"ksoftirqd", 5),
        (b"rcu_", 9),
        (b"barrier", 10),
        (b"stress", 11),
        (b"trace-cmd", 14),
        (b"irq/", 15),
        (b"sh", 0),
    ];
    prefixes.iter().find(|(prefix, _)| name.starts_with(prefix)).map_or(7, |&(_, kind)| kind)
}

/// The [`PREV_STATES`] entry nearest a real `prev_state`: itself, else running or sleeping.
fn state_byte(state: u16) -> u8 {
    let fallback = if state & 0xff == 0 { 0 } else { 1 };
    PREV_STATES.iter().position(|&s| s as u16 == state).unwrap_or(fallback) as u8
}

fn cpu_field(cpu: Option<Cpu>) -> CpuField {
    match cpu {
        Some(Cpu(n)) if n < 16 => CpuField(n as u8),
        Some(_) => CpuField(CpuField::FIRST_EXTREME + 6), // 255: a CPU beyond the machine
        None => CpuField(CpuField::FIRST_EXTREME),        // -1
    }
}

/// The [`NAMES`] entry of an exec'd file: `sleep` stays `sleep`.
fn file_byte(filename: &[u8]) -> u8 {
    let base = filename.rsplit(|&b| b == b'/').next().unwrap_or(filename);
    NAMES.iter().position(|&n| n == base).unwrap_or(0) as u8
}
