//! `schedlens stats --format json`: per command or task, and per CPU, the window's
//! statistics.

use schemars::JsonSchema;
use serde::Serialize;

/// One command's or task's statistics (`--by command`, `--by task`), in the order
/// `--sort` asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StatsRow {
    /// The command name.
    pub comm: String,
    /// Tasks counted in the row.
    pub pids: u32,
    /// When it first ran in the window, in ns of the trace's clock; null: never.
    pub first_ns: Option<u64>,
    /// When it last ran in the window, in ns of the trace's clock; null: never.
    pub last_ns: Option<u64>,
    /// Context switches to it: `sched_switch` events with it as `next`.
    pub switches: u64,
    /// Time it ran.
    pub runtime_ns: u64,
    /// Time runnable but not running.
    pub wait_ns: u64,
    /// The longest single wait.
    pub max_wait_ns: u64,
    /// Times it moved to another CPU.
    pub migrations: u64,
    /// The task's pid (present with `--by task` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// Of `migrations`, those between CPUs on different NUMA nodes (present with a
    /// topology only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_node_migrations: Option<u64>,
    /// Where its time in the window went (present with `--states` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub states: Option<ThreadStates>,
    /// Its wakeup latency (present with `--latency` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<StatsLatency>,
}

/// A command's or task's time in each thread state over the window (summed over its
/// tasks; each task's states sum to the window). See docs/latency.md.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ThreadStates {
    /// On a CPU.
    pub running_ns: u64,
    /// Runnable after a wakeup (or, new, after its fork).
    pub runnable_wakeup_ns: u64,
    /// Runnable after being preempted.
    pub runnable_preempted_ns: u64,
    /// Sleeping (S, and every blocked state but D).
    pub sleeping_ns: u64,
    /// Uninterruptible (D, from `prev_state`).
    pub uninterruptible_ns: u64,
    /// After its exit.
    pub dead_ns: u64,
    /// Unknown: before it was first seen, after lost events or unrecorded switches.
    pub unknown_ns: u64,
}

/// A command's or task's wakeup latency over the window (see `schedlens latency`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StatsLatency {
    /// Wakeup latencies measured.
    pub wakeups: u64,
    /// Their median (nearest rank).
    pub p50_ns: u64,
    /// Their 99th percentile (nearest rank).
    pub p99_ns: u64,
}

/// One CPU's statistics (`--by cpu`), in CPU order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CpuStatsRow {
    /// The CPU.
    pub cpu: u32,
    /// Time running a task.
    pub busy_ns: u64,
    /// Time idle.
    pub idle_ns: u64,
    /// Time whose state is unknown (lost events, unrecorded switches, before the CPU's
    /// first event or after its last).
    pub uncertain_ns: u64,
    /// Time with at least one task waiting in its runqueue.
    pub waiting_ns: u64,
}
