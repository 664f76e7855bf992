//! `schedlens check --format json`: the pathologies found in a window — incidents with
//! their evidence, and a summary of waste, wakeup placement and migrations. docs/check.md
//! explains how they are found.

use schemars::JsonSchema;
use serde::Serialize;

/// What `check` found in one trace's window.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct CheckReport {
    /// The trace's path as given on the command line.
    pub trace: String,
    /// The window checked.
    pub window: CheckWindow,
    /// Every incident found, most lost CPU time first (then the earliest first).
    pub incidents: Vec<CheckIncident>,
    /// The whole window in numbers.
    pub summary: CheckSummary,
}

/// A stretch of the trace, in ns of the trace's clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CheckWindow {
    /// Its start.
    pub start_ns: u64,
    /// Its end.
    pub end_ns: u64,
}

/// An incident: an episode of waste (tasks waiting while other CPUs idled), a migration
/// cascade or an overloaded stretch.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct CheckIncident {
    /// What kind of incident it is.
    pub kind: IncidentKind,
    /// Its start, in ns of the trace's clock.
    pub start_ns: u64,
    /// Its end, in ns of the trace's clock.
    pub end_ns: u64,
    /// Episodes: the CPUs tasks waited on, most lost first. Cascades: the CPUs in order.
    /// Overload: none.
    pub cpus: Vec<u32>,
    /// Episodes: the other CPUs that idled while its tasks waited, most idle first (at
    /// most 8).
    pub idle_cpus: Vec<u32>,
    /// How many CPUs idled while its tasks waited, in all.
    pub idle_cpu_count: usize,
    /// Episodes: over the instants its tasks waited, the idle CPUs on average.
    pub idle_cpus_on_average: f64,
    /// Episodes: over the instants its tasks waited, the most CPUs idle at once.
    pub idle_cpus_at_once: u32,
    /// Episodes: the most CPUs its tasks waited on at once.
    pub cpus_at_once: u32,
    /// The tasks involved: an episode's top tasks by lost time (then the kernel threads
    /// that preempted them), a cascade's moved tasks.
    pub pids: Vec<i32>,
    /// Episodes: the top tasks by lost time (at most 5).
    pub tasks: Vec<IncidentTask>,
    /// CPU time lost: waiting tasks that idle CPUs could have run, integrated over time
    /// (0 for cascades and overload).
    pub lost_cpu_ns: u64,
    /// `lost_cpu_ns` per ns of its span: how many CPUs were lost on average.
    pub density: f64,
    /// Episodes: the waits it is made of.
    pub waits: u32,
    /// Lost CPU time (ns) per cause.
    pub causes: CauseTimes,
    /// Whether its tasks were confined to the CPUs they waited on.
    pub pinning: Pinning,
    /// Episodes: its largest single waits (at most 3).
    pub evidence: Vec<IncidentEvidence>,
    /// The incident in a sentence or two.
    pub explanation: String,
    /// The trace markers inside its span, its ends included (with `--markers`; empty
    /// without).
    pub markers: Vec<IncidentMarker>,
}

/// What kind of incident: an episode's main cause (see `CauseTimes`; pinned waits count
/// as work conservation), a migration cascade or overload.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IncidentKind {
    WorkConservation,
    WakeupPlacement,
    KthreadPreemption,
    MigrationCascade,
    Overload,
}

/// Why a task waited while a CPU idled (see `CauseTimes`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WasteCause {
    WorkConservation,
    WakeupPlacement,
    KthreadPreemption,
    Pinned,
}

/// Whether tasks were confined to the CPUs they waited on: `no`, `possibly` (inferred
/// from where they ran) or `pinned` (by their recorded CPU affinity).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Pinning {
    No,
    Possibly,
    Pinned,
}

/// One task's part in an episode.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncidentTask {
    /// Its pid.
    pub pid: i32,
    /// Its command name.
    pub comm: String,
    /// CPU time lost while it waited.
    pub lost_ns: u64,
    /// Its waits in the episode.
    pub waits: u32,
    /// Whether it was confined to the CPUs it waited on.
    pub pinning: Pinning,
    /// When a possibly pinned task's confinement began, in ns of the trace's clock (null:
    /// all its life, by its recorded affinity, or not pinned).
    pub pinned_since_ns: Option<u64>,
}

/// Lost CPU time (ns) per cause.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CauseTimes {
    /// Waits on a busy CPU while another idled, of no other cause.
    #[serde(rename = "work-conservation")]
    pub work_conservation: u64,
    /// Waits of tasks woken onto the waker's busy CPU away from their previous one.
    #[serde(rename = "wakeup-placement")]
    pub wakeup_placement: u64,
    /// Waits of tasks preempted by a kernel thread.
    #[serde(rename = "kthread-preemption")]
    pub kthread_preemption: u64,
    /// Waits of tasks that could not (or, by the evidence, possibly could not) run on the
    /// idle CPUs, from their confinement's start.
    pub pinned: u64,
}

/// One wait inside an episode, as evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncidentEvidence {
    /// Why it lost CPU time.
    pub cause: WasteCause,
    /// Its start, in ns of the trace's clock.
    pub start_ns: u64,
    /// Its end, in ns of the trace's clock.
    pub end_ns: u64,
    /// The CPU it waited on.
    pub cpu: u32,
    /// The waiting task.
    pub pid: i32,
    /// CPU time lost.
    pub lost_ns: u64,
    /// The wait in a sentence.
    pub explanation: String,
}

/// A trace marker (a trace_marker write or trace_printk message).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncidentMarker {
    /// When, in ns of the trace's clock.
    pub ts_ns: u64,
    /// On which CPU.
    pub cpu: u32,
    /// By which pid.
    pub pid: i32,
    /// The text.
    pub text: String,
}

/// The whole window in numbers.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct CheckSummary {
    /// Time a task waited while a core idled.
    pub idle_while_waiting_ns: u64,
    /// `idle_while_waiting_ns` over the window's length.
    pub idle_while_waiting_share: f64,
    /// Time during which it is unknown whether a task waited while a CPU idled (CPUs whose
    /// state is unknown: lost events, before their first event), not in
    /// `idle_while_waiting_ns`.
    pub idle_while_waiting_unknown_ns: u64,
    /// CPU time lost by all episodes.
    pub lost_cpu_ns: u64,
    /// Idle-while-waiting time within the episodes' spans.
    pub episodes_cover_ns: u64,
    /// `episodes_cover_ns` over `idle_while_waiting_ns`.
    pub episodes_cover_share: f64,
    /// Tasks whose CPU affinity the trace recorded (0: pinning is inferred).
    pub affinity_recorded_tasks: usize,
    /// Incidents of each kind.
    pub counts: IncidentCounts,
    /// Migrations from CPU (row) to CPU (column); null beyond 1024 CPUs.
    pub migrations: Option<Vec<Vec<u64>>>,
    /// `[from, to, count]` of each pair of CPUs with migrations, in `(from, to)` order.
    pub migration_pairs: Vec<[u64; 3]>,
    /// Migrations naming a CPU beyond the trace's (damaged CPU fields), not in the pairs.
    pub migrations_outside: u64,
    /// Per-CPU kernel threads waiting on their own CPU while others idled: not waste, not
    /// in any episode.
    pub bound_kthread_waits: BoundKthreadWaits,
    /// Waste spread thin over many CPUs; its densest stretches (at most `stretch_ns`) are
    /// the episodes. Null when there is none.
    pub diffuse: Option<DiffuseWaste>,
    /// Where wakeups (not of new tasks) put their task.
    pub wakeups: WakeupPlacements,
    /// Migrations between sockets (present with a topology only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_socket_migrations: Option<u64>,
    /// Migrations between NUMA nodes (present with a topology only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_node_migrations: Option<u64>,
}

/// Incidents of each kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncidentCounts {
    /// Episodes whose main cause is work conservation.
    #[serde(rename = "work-conservation")]
    pub work_conservation: usize,
    /// Episodes whose main cause is wakeup placement.
    #[serde(rename = "wakeup-placement")]
    pub wakeup_placement: usize,
    /// Episodes whose main cause is kernel-thread preemption.
    #[serde(rename = "kthread-preemption")]
    pub kthread_preemption: usize,
    /// Migration cascades.
    #[serde(rename = "migration-cascade")]
    pub migration_cascade: usize,
    /// Overloaded stretches.
    pub overload: usize,
}

/// Kernel threads bound to one CPU waiting on it while other CPUs idled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BoundKthreadWaits {
    /// How many such waits.
    pub waits: u32,
    /// Their time waiting while other CPUs idled.
    pub waited_ns: u64,
    /// The longest such wait; null when there is none.
    pub longest: Option<BoundKthreadWait>,
}

/// A bound kernel thread's wait, and who held its CPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BoundKthreadWait {
    /// The kernel thread's pid.
    pub pid: i32,
    /// Its command name.
    pub comm: String,
    /// Its CPU.
    pub cpu: u32,
    /// The wait's start, in ns of the trace's clock.
    pub start_ns: u64,
    /// The wait's end, in ns of the trace's clock.
    pub end_ns: u64,
    /// The pid of the task that ran longest on the CPU meanwhile.
    pub held_by_pid: Option<i32>,
    /// That task's command name.
    pub held_by_comm: Option<String>,
}

/// Diffuse waste: tasks waiting while other CPUs idled a little everywhere.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct DiffuseWaste {
    /// Its start, in ns of the trace's clock.
    pub start_ns: u64,
    /// Its end, in ns of the trace's clock.
    pub end_ns: u64,
    /// CPU time it lost in all.
    pub lost_cpu_ns: u64,
    /// CPUs it lost on average over the window.
    pub cpus_lost_on_average: f64,
    /// The CPUs tasks waited on.
    pub cpus: usize,
    /// The tasks that waited.
    pub tasks: usize,
    /// The longest stretch listed as an episode.
    pub stretch_ns: u64,
}

/// Where wakeups (not of new tasks) in the window put their task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WakeupPlacements {
    /// Wakeups in all.
    pub total: u64,
    /// Back onto the CPU it last ran on.
    pub previous_cpu: u64,
    /// Onto the waker's CPU (another than its previous one).
    pub waker_cpu: u64,
    /// Of those, while its previous CPU was idle.
    pub waker_cpu_previous_idle: u64,
    /// Onto any other CPU.
    pub elsewhere: u64,
    /// Moved away from its idle previous CPU, then waited 100 µs or more to run.
    pub waited_previous_idle: u64,
}
