//! `schedlens critical-path --format json`: where a program's wall time went along its
//! critical path, and how much of it was the scheduler's (see docs/critical-path.md).

use schemars::JsonSchema;
use serde::Serialize;

/// The critical path of the traced command or of one task.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct CriticalPathReport {
    /// The trace file, as named on the command line.
    pub trace: String,
    /// What was followed: `command` (the traced command's process tree) or `task`.
    pub target: String,
    /// The task the walk starts from, at the end of the wall time.
    pub pid: i32,
    /// Its name at the end.
    pub comm: String,
    /// The wall time: from its start (the end of the initial sleep for a command, else the
    /// trace's or task's first event), in ns of the trace's clock.
    pub start_ns: u64,
    /// ... to its end (the command's or task's exit, else its last event).
    pub end_ns: u64,
    /// `end_ns - start_ns`; the parts of `breakdown` sum to it.
    pub wall_ns: u64,
    /// Every nanosecond of the wall time, by cause.
    pub breakdown: PathBreakdown,
    /// `breakdown.scheduler_ns` over the known time (`wall_ns` less
    /// `breakdown.unknown_ns`): at most this share of the time whose cause is known is
    /// the scheduler's cost.
    pub scheduler_share: f64,
    /// Where the CPUs a task was allowed on came from: `recorded` (the recording stored
    /// affinity) or `inferred` (where tasks ran, as `check` infers pinning).
    pub affinity: String,
    /// Tasks on the path possibly pinned by that inference (empty with recorded affinity).
    pub possibly_pinned: Vec<PinnedTask>,
    /// The unknown part by reason, in a fixed order (every reason listed).
    pub unknown: Vec<UnknownPart>,
    /// The largest stretches of scheduler cost on the path, largest first (`--top`).
    pub top: Vec<CostStretch>,
    /// The path, task by task, in time order.
    pub hops: Vec<PathHop>,
}

/// The wall time by cause.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PathBreakdown {
    /// The task on the path ran.
    pub running_ns: u64,
    /// It was runnable while a CPU it was allowed on idled: the scheduler's cost.
    pub scheduler_ns: u64,
    /// It was runnable while only CPUs it was not allowed on idled: the cost of pinning.
    pub pinning_ns: u64,
    /// It was runnable while every CPU was busy.
    pub contention_ns: u64,
    /// The path was on a task outside the followed ones (the program waited for it).
    pub other_task_ns: u64,
    /// The task was blocked and no task woke it (an interrupt, a timer, I/O).
    pub blocked_ns: u64,
    /// Not known: lost events, outside the trace, no waker recorded, a cycle, a CPU's
    /// state unknown (by reason in the `critical path` document's `unknown`).
    pub unknown_ns: u64,
}

/// A possibly pinned task on the path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PinnedTask {
    pub pid: i32,
    pub comm: String,
    /// From when it ran only on `cpus` (0: all its life).
    pub since_ns: u64,
    pub cpus: Vec<u32>,
}

/// The unknown stretches of one reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnknownPart {
    /// `outside-trace` (before the trace's or task's first event, after its last),
    /// `lost-events` (lost events or an unrecorded switch where the path was), `no-waker`
    /// (a wakeup without `sched_waking`), `cycle` (wakers waking each other at one
    /// instant), `cpu-state` (runnable while a CPU that decides the cause was unknown).
    pub reason: String,
    /// How many stretches.
    pub stretches: u64,
    /// How long in all.
    pub ns: u64,
}

/// A stretch of scheduler cost: a task on the path runnable while an allowed CPU idled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CostStretch {
    pub pid: i32,
    pub comm: String,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Of the stretch, the time an allowed CPU idled.
    pub scheduler_ns: u64,
    /// The CPU whose runqueue it waited on (where it then ran); null when not known.
    pub waited_on_cpu: Option<u32>,
    /// The allowed CPU that idled longest in the stretch.
    pub idle_cpu: Option<u32>,
    /// How long that CPU idled in the stretch.
    pub idle_cpu_ns: u64,
}

/// One task's part of the path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PathHop {
    pub pid: i32,
    pub comm: String,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The task that woke it at `start_ns` (the previous hop's); null for the first hop.
    pub woken_by_pid: Option<i32>,
}
