//! The ground truth of a synthetic trace, as the `--truth` JSON file:
//!
//! ```json
//! {"seed":1,"cpus":8,"seconds":0.2,"workload":"mixed","difficulty":"hard","events":123456,
//!  "tasks":[{"pid":1001,"comm":"barrier","runtime_ns":...,"switches":...,"wait_ns":...}],
//!  "injections":[{"kind":"wakeup-placement","pinned":false,"start_ns":...,"end_ns":...,
//!                 "cpus":[3,5],"pids":[1004],"lost_cpu_ns":...}],
//!  "noise":{"kthread_wakeups":...,"daemon_wakeups":...}}
//! ```
//!
//! The chain workloads (pipeline, fork-join, late-barrier) add
//! `"critical_path":{"scheduler_ns":...,"delays":[{"pid":...,"start_ns":...,"end_ns":...,
//! "on_path":true}]}`: the time the traced command's critical path was runnable while a
//! CPU it could run on idled, and the scheduler delays injected on the path and off it.
//!
//! Times are the trace's own timestamps in ns (what `schedlens dump --json` prints as
//! `ts`). Per task, `runtime_ns` sums its runs (switch-in to switch-out), `switches`
//! counts `sched_switch` events that switch to it, `wait_ns` sums its time runnable but
//! not running (from `sched_wakeup`/`sched_wakeup_new` or a preemption to its switch-in):
//! the definitions of `schedlens stats`. Idle tasks (pid 0) and tasks that never ran are
//! not listed. For an
//! injection, `cpus` lists the CPU it happened on first (for waiting incidents, the busy
//! CPU the task waited on, then its idle previous CPU), `pids` the tasks involved, and
//! `lost_cpu_ns` the time a task waited while a CPU could have run it (0 for overload).

use crate::Kind;
use crate::machine::Task;
use serde_json::{Value, json};

/// One injected incident.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injection {
    pub kind: Kind,
    pub pinned: bool,
    pub start_ns: u64,
    pub end_ns: u64,
    pub cpus: Vec<u32>,
    pub pids: Vec<i32>,
    pub lost_cpu_ns: u64,
}

/// A scheduler delay injected into a chain workload: a running task kept off its idle
/// CPU for `[start_ns, end_ns)`, on the critical path or off it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delay {
    pub pid: i32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub on_path: bool,
}

/// What a chain workload's critical path holds: the time its tasks were runnable (each
/// time on an idle CPU), the scheduler's share, delays on it included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTruth {
    pub scheduler_ns: u64,
    pub delays: Vec<Delay>,
}

/// What a synthetic trace holds, for checking analyses against.
#[derive(Clone, Debug, PartialEq)]
pub struct Truth {
    pub seed: u64,
    pub cpus: u32,
    pub seconds: f64,
    pub workload: &'static str,
    pub difficulty: &'static str,
    pub events: u64,
    pub file_bytes: u64,
    pub tasks: Vec<TaskTruth>,
    pub injections: Vec<Injection>,
    pub noise: Noise,
    /// The chain workloads' critical path (`None` for the others).
    pub critical_path: Option<PathTruth>,
}

/// Background events that are not incidents.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Noise {
    /// Kernel threads woken on a CPU (preempting what ran there, for microseconds).
    pub kthread_wakeups: u64,
    /// Synchronous wakeups between daemons: the wakee waits behind its waker briefly.
    pub daemon_wakeups: u64,
}

/// One task's truth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskTruth {
    pub pid: i32,
    pub comm: String,
    pub runtime_ns: u64,
    pub switches: u64,
    pub wait_ns: u64,
}

impl TaskTruth {
    pub(crate) fn of(task: &Task) -> TaskTruth {
        TaskTruth {
            pid: task.pid,
            comm: task.comm.clone(),
            runtime_ns: task.truth.runtime_ns,
            switches: task.truth.switches,
            wait_ns: task.truth.wait_ns,
        }
    }
}

impl Truth {
    pub fn to_json(&self) -> Value {
        let tasks: Vec<Value> = self
            .tasks
            .iter()
            .map(|t| {
                json!({"pid": t.pid, "comm": t.comm, "runtime_ns": t.runtime_ns, "switches": t.switches, "wait_ns": t.wait_ns})
            })
            .collect();
        let injections: Vec<Value> = self
            .injections
            .iter()
            .map(|i| {
                json!({"kind": i.kind.name(), "pinned": i.pinned, "start_ns": i.start_ns, "end_ns": i.end_ns,
                       "cpus": i.cpus, "pids": i.pids, "lost_cpu_ns": i.lost_cpu_ns})
            })
            .collect();
        let noise = json!({"kthread_wakeups": self.noise.kthread_wakeups, "daemon_wakeups": self.noise.daemon_wakeups});
        let mut truth = json!({"seed": self.seed, "cpus": self.cpus, "seconds": self.seconds, "workload": self.workload,
               "difficulty": self.difficulty, "events": self.events, "tasks": tasks, "injections": injections,
               "noise": noise});
        if let Some(path) = &self.critical_path {
            let delays: Vec<Value> = path
                .delays
                .iter()
                .map(|d| json!({"pid": d.pid, "start_ns": d.start_ns, "end_ns": d.end_ns, "on_path": d.on_path}))
                .collect();
            truth["critical_path"] = json!({"scheduler_ns": path.scheduler_ns, "delays": delays});
        }
        truth
    }
}
