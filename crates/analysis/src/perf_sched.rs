//! `perf sched latency` and `perf sched timehist` under perf's own definitions (perf
//! 6.1's `builtin-sched.c`, read, not copied), so schedlens's numbers can be set beside
//! the tool users know and checked against it on the same events.
//!
//! perf keeps, per thread id, the last "atom": a switch-out leaves the task waiting for a
//! CPU when `prev_state` is 0 (running; perf 6.1 reads the state as an index into its
//! state letters, so a preempted `R+` is not 'R' to it) and asleep otherwise; a
//! `sched_wakeup` or `sched_wakeup_new` of a sleeping task starts its wait (perf 6.1's
//! latency does not read `sched_waking`, which `perf sched record` records instead of
//! `sched_wakeup` on recent kernels: woken tasks' delays are then not measured); the next switch-in of a waiting task measures a delay. A task first met being
//! switched in counts a delay of zero, one first met in a `sched_stat_runtime` waits from
//! then. "Runtime" sums `sched_stat_runtime`'s `runtime`. timehist prints, per switch
//! out, the run time since the CPU's previous switch, the wait since the task's last
//! switch-out and the scheduling delay since its first wakeup (`sched_waking` too; perf
//! 6.1 does not count a preempted task's wait as a delay), until the CPU's previous switch.
//!
//! Where schedlens differs (it starts a wakeup at `sched_waking`, counts preempted
//! tasks' waits, knows unrecorded switches and lost events): docs/latency.md.

use model::{Cpu, Nanos, Pid, Sched, SchedDecoder};
use std::collections::BTreeMap;
use tracedat::{EventItems, EventSource, FieldRef, Item};

/// One of the events perf's latency and timehist read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PerfEvent {
    /// `sched_switch`; `task` is the sample's task (timehist's row), normally `prev`.
    Switch { prev: Pid, prev_state: u16, next: Pid, task: Pid },
    /// `sched_wakeup` or `sched_wakeup_new` of `pid`: latency and timehist read it.
    Wakeup { pid: Pid },
    /// `sched_waking` of `pid`: only timehist reads it.
    Waking { pid: Pid },
    /// `sched_stat_runtime`.
    Runtime { pid: Pid, runtime_ns: u64 },
}

/// One task's row of `perf sched latency -p`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfTask {
    pub pid: Pid,
    /// The sum of its `sched_stat_runtime` events.
    pub runtime_ns: u64,
    /// Delays measured ("Switches").
    pub switches: u64,
    pub total_delay_ns: u64,
    pub max_delay_ns: u64,
    pub max_start: Nanos,
    pub max_end: Nanos,
}

impl PerfTask {
    /// perf's average: the integer division of the total by the count.
    pub fn avg_delay_ns(&self) -> u64 {
        self.total_delay_ns.checked_div(self.switches).unwrap_or(0)
    }
}

/// One line of `perf sched timehist`: a task switched out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PerfSwitch {
    pub time: Nanos,
    pub cpu: Cpu,
    /// The sample's task (0: the CPU's idle task).
    pub pid: Pid,
    pub wait_ns: u64,
    pub delay_ns: u64,
    pub run_ns: u64,
}

/// perf's view of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfSched {
    /// Tasks with at least one delay measured, by pid (the idle task left out).
    pub tasks: Vec<PerfTask>,
    /// Every switch, in event order.
    pub switches: Vec<PerfSwitch>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum AtomState {
    Sleeping,
    WaitingForCpu { since: Nanos },
    Done,
}

/// What latency keeps per task.
#[derive(Copy, Clone, Debug)]
struct LatencyTask {
    last: AtomState,
    last_out: Nanos,
    row: PerfTask,
}

/// What timehist keeps per task.
#[derive(Copy, Clone, Debug, Default)]
struct TimehistTask {
    last_time: Option<Nanos>,
    ready_to_run: Option<Nanos>,
}

/// perf's state machine, fed events in time order.
#[derive(Clone, Debug, Default)]
pub struct PerfState {
    latency: BTreeMap<Pid, LatencyTask>,
    timehist: BTreeMap<Pid, TimehistTask>,
    last_switch: BTreeMap<Cpu, Nanos>,
    switches: Vec<PerfSwitch>,
}

impl PerfState {
    pub fn feed(&mut self, time: Nanos, cpu: Cpu, event: PerfEvent) {
        match event {
            PerfEvent::Switch { prev, prev_state, next, task } => {
                self.timehist_switch(time, cpu, task);
                self.latency_switch(time, prev, prev_state, next);
            }
            PerfEvent::Wakeup { pid } => {
                let task = self.latency_task(pid, time, AtomState::Sleeping);
                if task.last == AtomState::Sleeping && task.last_out <= time {
                    task.last = AtomState::WaitingForCpu { since: time };
                }
                self.timehist_wakeup(pid, time);
            }
            PerfEvent::Waking { pid } => self.timehist_wakeup(pid, time),
            PerfEvent::Runtime { pid, runtime_ns } => {
                let task = self.latency_task(pid, time, AtomState::WaitingForCpu { since: time });
                task.row.runtime_ns = task.row.runtime_ns.saturating_add(runtime_ns);
            }
        }
    }

    /// The task's state, made when first met: a new atom in `first` at `time`.
    fn latency_task(&mut self, pid: Pid, time: Nanos, first: AtomState) -> &mut LatencyTask {
        self.latency.entry(pid).or_insert(LatencyTask {
            last: first,
            last_out: time,
            row: PerfTask { pid, ..PerfTask::default() },
        })
    }

    fn latency_switch(&mut self, time: Nanos, prev: Pid, prev_state: u16, next: Pid) {
        let out = if prev_state == 0 { AtomState::WaitingForCpu { since: time } } else { AtomState::Sleeping };
        let task = self.latency_task(prev, time, out);
        (task.last, task.last_out) = (out, time);
        let task = self.latency_task(next, time, AtomState::WaitingForCpu { since: time });
        if let AtomState::WaitingForCpu { since } = task.last {
            task.last = AtomState::Done;
            if time >= since {
                let delay = time.saturating_sub(since).0;
                let row = &mut task.row;
                row.switches += 1;
                row.total_delay_ns = row.total_delay_ns.saturating_add(delay);
                if delay > row.max_delay_ns {
                    (row.max_delay_ns, row.max_start, row.max_end) = (delay, since, time);
                }
            }
        }
    }

    fn timehist_wakeup(&mut self, pid: Pid, time: Nanos) {
        let task = self.timehist.entry(pid).or_default();
        task.ready_to_run = task.ready_to_run.or(Some(time));
    }

    fn timehist_switch(&mut self, time: Nanos, cpu: Cpu, pid: Pid) {
        let tprev = self.last_switch.insert(cpu, time);
        // The idle task is one per CPU to timehist.
        let key = if pid.0 == 0 { Pid(-1 - cpu.0 as i32) } else { pid };
        let task = self.timehist.entry(key).or_default();
        let mut row = PerfSwitch { time, cpu, pid, wait_ns: 0, delay_ns: 0, run_ns: 0 };
        if let Some(tprev) = tprev.filter(|t| t.0 != 0) {
            row.run_ns = time.saturating_sub(tprev).0;
            if let Some(ready) = task.ready_to_run.filter(|&r| r <= tprev) {
                row.delay_ns = tprev.saturating_sub(ready).0;
            }
            if let Some(last) = task.last_time.filter(|&l| l <= tprev) {
                row.wait_ns = tprev.saturating_sub(last).0;
            }
        }
        task.last_time = Some(time);
        task.ready_to_run = None;
        self.switches.push(row);
    }

    pub fn finish(self) -> PerfSched {
        let tasks =
            self.latency.into_values().map(|t| t.row).filter(|row| row.switches > 0 && row.pid.0 != 0).collect();
        PerfSched { tasks, switches: self.switches }
    }
}

/// The `sched_stat_runtime` fields perf reads.
struct RuntimeFields {
    id: u32,
    pid: FieldRef,
    runtime: FieldRef,
}

fn runtime_fields(source: &impl EventSource) -> Option<RuntimeFields> {
    let format = source.formats().by_name("sched_stat_runtime")?;
    let field = |name: &str| format.field(name).and_then(FieldRef::of);
    Some(RuntimeFields { id: format.id, pid: field("pid")?, runtime: field("runtime")? })
}

/// Reads every event of `source` in time order through perf's state machine.
pub fn read(source: &impl EventSource) -> PerfSched {
    let decoder = SchedDecoder::new(source.formats());
    let runtime = runtime_fields(source);
    let mut state = PerfState::default();
    let mut events = source.all_events();
    while let Some(item) = events.next() {
        let Item::Event(event) = item else { continue };
        let perf_event = match decoder.decode(&event) {
            Sched::Switch { prev_pid, prev_state, next_pid, .. } => {
                Some(PerfEvent::Switch { prev: prev_pid, prev_state, next: next_pid, task: prev_pid })
            }
            Sched::Wakeup { pid, .. } | Sched::WakeupNew { pid, .. } => Some(PerfEvent::Wakeup { pid }),
            Sched::Waking { pid, .. } => Some(PerfEvent::Waking { pid }),
            _ => runtime.as_ref().filter(|r| r.id == event.id).and_then(|r| {
                let pid = Pid(event.read(r.pid)? as i32);
                Some(PerfEvent::Runtime { pid, runtime_ns: event.read(r.runtime)? as u64 })
            }),
        };
        if let Some(perf_event) = perf_event {
            state.feed(event.ts, event.cpu, perf_event);
        }
    }
    state.finish()
}
