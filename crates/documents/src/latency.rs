//! `schedlens latency --format json`: the distribution of scheduling delays per command,
//! task or CPU and over the window, with their causes; `--perf --format json`: perf sched
//! latency's columns per task.

use schemars::JsonSchema;
use serde::Serialize;

/// The whole answer of `latency`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LatencyReport {
    /// The window's start, in ns of the trace's clock.
    pub window_start_ns: u64,
    /// The window's end (exclusive), in ns of the trace's clock.
    pub window_end_ns: u64,
    /// The lower edge of each histogram bucket, in ns: 0, then 1 µs doubling up to 8.4 s;
    /// a bucket holds delays from its edge to the next one's (the last: and beyond).
    pub bucket_edges_ns: Vec<u64>,
    /// Every delay of the window.
    pub overall: LatencyGroup,
    /// One row per command, task or CPU (`--by`), largest p99 wakeup latency first.
    pub rows: Vec<LatencyRow>,
}

/// One command's, task's or CPU's delays.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LatencyRow {
    /// The command name (`--by command`), or the task's last name (`--by task`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
    /// The task's pid (`--by task`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// The CPU the tasks ran on (`--by cpu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u32>,
    /// Its delays.
    pub delays: LatencyGroup,
}

/// Delays of one group: wakeups and preemptions apart, and the waits whose end is unknown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LatencyGroup {
    /// Wakeup latencies: from `sched_waking` (else the enqueue; a new task's
    /// `sched_wakeup_new`) to running.
    pub wakeups: LatencySummary,
    /// Preemption waits: from being switched out runnable to running again.
    pub preemptions: LatencySummary,
    /// Waits ended by lost events (never given a latency).
    pub unknown_lost: u64,
    /// Waits still under way when the trace ended.
    pub unknown_trace_end: u64,
    /// Waits ended by a switch the kernel did not record.
    pub unknown_unrecorded: u64,
}

/// A distribution of delays and their causes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LatencySummary {
    /// Delays measured.
    pub count: u64,
    /// Their sum.
    pub total_ns: u64,
    /// Delays per bucket (edges in `bucket_edges_ns`).
    pub histogram: Vec<u64>,
    /// Median (nearest rank).
    pub p50_ns: u64,
    /// 90th percentile (nearest rank).
    pub p90_ns: u64,
    /// 99th percentile (nearest rank).
    pub p99_ns: u64,
    /// 99.9th percentile (nearest rank).
    pub p999_ns: u64,
    /// The largest delay and where it happened; null when none.
    pub max: Option<LatencyMax>,
    /// Delays placed on an idle CPU's runqueue.
    pub on_idle_cpu: u64,
    /// Delays that ended on another CPU than the task last ran on.
    pub migrated: u64,
    /// Delays during which another CPU the task was allowed on idled.
    pub allowed_idle: u64,
    /// How long such CPUs idled over all the delays (the scheduler's share).
    pub allowed_idle_ns: u64,
}

/// Where a group's largest delay happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LatencyMax {
    /// Its length.
    pub latency_ns: u64,
    /// When it began (the wakeup or the switch-out), in ns of the trace's clock.
    pub start_ns: u64,
    /// When the task ran.
    pub end_ns: u64,
    /// The CPU it ran on.
    pub cpu: u32,
    /// The task that waited.
    pub pid: i32,
    /// The waking task's pid (0: an interrupt on an idle CPU); null when not recorded.
    pub waker_pid: Option<i32>,
}

/// One task's row of `perf sched latency -p`, computed as perf does (`latency --perf`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PerfLatencyRow {
    /// The task's last name.
    pub comm: String,
    /// The task's pid.
    pub pid: i32,
    /// perf's "Runtime": the sum of its `sched_stat_runtime` events.
    pub runtime_ns: u64,
    /// schedlens's run time from switch to switch, beside perf's.
    pub switch_runtime_ns: u64,
    /// perf's "Switches": the delays it measured.
    pub switches: u64,
    /// perf's "Avg delay" (total over count, truncated).
    pub avg_delay_ns: u64,
    /// perf's "Max delay".
    pub max_delay_ns: u64,
    /// perf's "Max delay start", in ns of the trace's clock.
    pub max_start_ns: u64,
    /// perf's "Max delay end", in ns of the trace's clock.
    pub max_end_ns: u64,
}
