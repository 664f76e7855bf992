//! `schedlens watch --format json`: one object per line on stdout, an incident as it is
//! found or a summary (on exit and on SIGUSR1), told apart by `type`.

use schemars::JsonSchema;
use serde::Serialize;

/// An episode of waste found while watching, and the file it was written to.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct WatchIncident {
    /// Always `incident`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Its number, from 1, as in the file's name.
    pub number: u32,
    /// `work-conservation`, `wakeup-placement` or `kthread-preemption` (as `check`).
    pub kind: String,
    /// When it began, in ns of the trace's clock (as in the incident file).
    pub start_ns: u64,
    /// When it ended, in ns of the trace's clock.
    pub end_ns: u64,
    /// The CPUs tasks waited on, most lost first.
    pub cpus: Vec<u32>,
    /// The CPUs that idled meanwhile (at most 8).
    pub idle_cpus: Vec<u32>,
    /// The tasks that lost most, as `comm:pid` (at most 5).
    pub tasks: Vec<String>,
    /// CPU time lost: waiting tasks that idle CPUs could have run.
    pub lost_cpu_ns: u64,
    /// `no`, `possibly` or `pinned`: whether the tasks were confined where they waited.
    pub pinning: String,
    /// `check`'s explanation.
    pub explanation: String,
    /// The incident's trace.dat; null when it could not be written (a warning says why).
    pub file: Option<String>,
    /// The time from the episode's end to its report, in ns of the trace's clock: the
    /// detection lag (bounded by the readers' polling, the watermark over CPUs, the
    /// settling time and the tick).
    pub lag_ns: u64,
}

/// What watching saw so far.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct WatchSummary {
    /// Always `summary`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Wall-clock time watched.
    pub watched_s: f64,
    /// Trace time analysed to its end (up to the last watermark).
    pub analysed_ns: u64,
    /// Events read from the kernel.
    pub events: u64,
    /// Events the kernel reported lost.
    pub events_lost: u64,
    /// Losses whose size the kernel did not store.
    pub losses_unknown: u64,
    /// Episodes left out because events were lost around them.
    pub suppressed_by_losses: u64,
    /// Incidents of kind `work-conservation`.
    pub work_conservation: u64,
    /// Incidents of kind `wakeup-placement`.
    pub wakeup_placement: u64,
    /// Incidents of kind `kthread-preemption`.
    pub kthread_preemption: u64,
    /// Of the analysed time, the share during which a task waited while a core idled.
    pub idle_while_waiting_share: f64,
    /// The ring's size now, in bytes.
    pub ring_bytes: u64,
    /// The watcher's own CPU time (user and system).
    pub cpu_time_s: f64,
}
