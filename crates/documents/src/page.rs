//! The viewer page's documents: what `schedlens view`'s server answers to the page's
//! requests, and what `schedlens report` embeds for the same page (the server's answers
//! in the same shapes, so the page's code reads both unchanged). Times are ns from the
//! trace's origin (`origin` in [`MetaTrace`]) unless a name says otherwise; a `trace` in a
//! request is an index into [`Meta`]'s `traces`.

use schemars::JsonSchema;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// The traces shown and the geometry of their tiles.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// The version of schedlens that wrote it.
    pub version: String,
    /// Columns of the tiles the page asks for.
    pub tile_columns: u32,
    /// Columns a tile may have at most.
    pub max_columns: u32,
    /// The coarsest tile level: its columns are 2^maxLevel ns.
    pub max_level: u32,
    /// The traces, top to bottom on one time scale.
    pub traces: Vec<MetaTrace>,
    /// What the page shows first unless its address says otherwise.
    pub initial: InitialView,
}

/// One trace as the page lays it out.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MetaTrace {
    /// Its title (the file name).
    pub name: String,
    /// CPUs in the trace.
    pub cpus: usize,
    /// The first event.
    pub start: i64,
    /// Just after the last event.
    pub end: i64,
    /// Where times are counted from, in ns of the trace's clock, as decimal text (it may
    /// be beyond JavaScript's exact integers).
    pub origin: String,
    /// Tasks in the model, the idle task included.
    pub tasks: usize,
    /// Events the kernel said were lost.
    pub lost_events: u64,
    /// Losses of an unknown number of events.
    pub lost_unknown: u64,
    /// The rows, bottom to top, in CPU order.
    pub rows_by_number: Vec<Row>,
    /// The rows, bottom to top, in socket order; null without a topology.
    pub rows_by_socket: Option<Vec<Row>>,
    /// Where each CPU sits, in CPU order, for the hover; null without a topology.
    pub places: Option<Vec<Place>>,
}

/// One row of the timeline: always labelled by its CPU number; in socket order also
/// grouped by socket and NUMA node, a core's hardware threads adjacent.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct Row {
    /// The CPU drawn in it.
    pub cpu: u32,
    /// Its socket, in socket order.
    pub socket: Option<u32>,
    /// Its NUMA node, in socket order.
    pub node: Option<u32>,
    /// Its physical core (SMT siblings share it), in socket order.
    pub core: Option<u32>,
}

/// Where one CPU (hardware thread) sits in the machine.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct Place {
    /// The CPU number.
    pub cpu: u32,
    /// Its physical core, numbered as the topology source numbers it.
    pub core: u32,
    /// Its socket (package).
    pub socket: u32,
    /// Its NUMA node.
    pub node: u32,
    /// The other CPUs on the same core (SMT siblings), in CPU order.
    pub siblings: Vec<u32>,
}

/// The page's first state.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct InitialView {
    /// `[start, end)` shown first; null: every trace whole.
    pub window: Option<[i64; 2]>,
    /// Only the tasks forked during the recording.
    pub forked: bool,
    /// Rows in socket order.
    pub socket_order: bool,
}

/// The answer to a request for something still being computed (HTTP 202): the page asks
/// again.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct NotReady {
    /// What is being done.
    pub status: Working,
}

/// What the server is still doing.
#[derive(Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Working {
    /// Running `check` (incidents).
    Computing,
    /// Reading the trace's markers.
    Reading,
}

/// Said by a document whose content is complete.
#[derive(Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Ready {
    /// Complete.
    Ready,
}

/// The answer to `/api/meta` while the traces' models are still being built (HTTP 202,
/// after a while): the page asks again.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct Pending {
    /// What the server is doing.
    pub pending: String,
}

/// The answer to a request that is refused (HTTP 4xx or 5xx).
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct ErrorMessage {
    /// Why, in one line.
    pub error: String,
}

/// How far the server's background work has come.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// The background work (coarse tiles, markers, task index, incidents) is done.
    pub prepared: bool,
    /// Bytes of computed tiles the server keeps.
    pub cached_tile_bytes: usize,
}

/// `check`'s incidents over the whole trace, ranked as `check` ranks them.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct Incidents {
    /// Always `ready` (while they are computed the answer is `{"status": "computing"}`).
    pub status: Ready,
    /// The first incidents, most important first.
    pub incidents: Vec<PageIncident>,
    /// How many incidents `check` found in all.
    pub total: usize,
}

/// One incident as the page lists it.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PageIncident {
    /// Its rank, from 1.
    pub rank: usize,
    /// Its kind, as `check` names it (`work-conservation`, `overload`, ...).
    pub kind: String,
    /// Where it starts.
    pub start: i64,
    /// Where it ends.
    pub end: i64,
    /// The CPUs tasks waited on, most lost first (cascades: the CPUs in order).
    pub cpus: Vec<u32>,
    /// The tasks involved, by pid.
    pub pids: Vec<i32>,
    /// The same tasks as indices into the model's task table, to highlight (the viewer
    /// only; the report leaves it empty).
    pub tasks: Vec<usize>,
    /// CPU time lost, in ns.
    pub lost_cpu_ns: u64,
    /// The tasks were pinned or possibly pinned.
    pub possibly_pinned: bool,
    /// What happened, in words.
    pub explanation: String,
}

/// Statistics of a range: per command and per CPU, as `schedlens stats` counts them.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RangeStats {
    /// Where the range starts.
    pub start: i64,
    /// Where it ends.
    pub end: i64,
    /// The commands that ran longest, longest first (at most 200).
    pub commands: Vec<CommandStats>,
    /// How many commands there were in all.
    pub command_count: usize,
    /// Every CPU.
    pub cpus: Vec<CpuStats>,
}

/// One command's tasks over the range.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CommandStats {
    /// The command's name.
    pub comm: String,
    /// Tasks that ran under it.
    pub pids: u32,
    /// When one of them first ran within the range.
    pub first_run: Option<i64>,
    /// When one of them last stopped running within the range.
    pub last_run: Option<i64>,
    /// Time running, in ns.
    pub runtime: u64,
    /// Context switches to them.
    pub switches: u64,
    /// Time runnable but not running, in ns.
    pub wait: u64,
    /// The longest single wait, in ns.
    pub max_wait: u64,
    /// Their migrations.
    pub migrations: u64,
    /// The command's colour in the timeline, `#rrggbb`.
    pub color: String,
}

/// How one CPU spent the range, in ns.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct CpuStats {
    /// The CPU.
    pub cpu: u32,
    /// Running a task.
    pub busy: u64,
    /// Idle.
    pub idle: u64,
    /// In a state the trace does not show (lost events, unrecorded switches).
    pub uncertain: u64,
    /// With at least one task waiting in its runqueue.
    pub waiting: u64,
}

/// A task as the page names and colours it.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TaskHead {
    /// Its index in the model's task table.
    pub task: usize,
    /// Its pid.
    pub pid: i32,
    /// Its command name (the last one, or the one at the time asked about).
    pub comm: String,
    /// Its colour by pid, `#rrggbb`.
    pub pid_color: String,
    /// Its colour by command, `#rrggbb`.
    pub command_color: String,
}

/// The run under the mouse: the task the column shows on that CPU, or `{"found": false}`
/// where only idle or unknown time is.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum RunAt {
    /// A task ran there.
    Found(Box<FoundRun>),
    /// Only idle or unknown time there.
    Nothing(NoRun),
}

/// No run under the mouse.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct NoRun {
    /// Always false.
    pub found: bool,
}

/// A run, what preceded it and where its task went next.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FoundRun {
    /// The task, named as it was called during the run.
    #[serde(flatten)]
    pub task: TaskHead,
    /// Always true.
    pub found: bool,
    /// The CPU it ran on.
    pub cpu: u32,
    /// Where the run starts.
    pub start: i64,
    /// Where it ends.
    pub end: i64,
    /// How it ended, in words.
    pub ended: String,
    /// The CPU of the task's next run, when the trace shows it.
    pub next_cpu: Option<u32>,
    /// The wait that ended when the run began, when there was one.
    pub wait: Option<WaitBefore>,
}

/// A wait for a CPU.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct WaitBefore {
    /// Where the task became runnable.
    pub start: i64,
    /// Where it got the CPU.
    pub end: i64,
    /// Why it became runnable.
    pub cause: WaitCause,
    /// The wakeup that began it, when it was one.
    pub wakeup: Option<Wakeup>,
}

/// Why a task became runnable.
#[derive(Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum WaitCause {
    /// Woken up.
    Wakeup,
    /// Forked (`newtask`).
    NewTask,
    /// Preempted while it ran.
    Preempted,
}

/// Who woke a task, from where, to where.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Wakeup {
    /// When (`sched_waking`, else the enqueueing).
    pub t: i64,
    /// The waking task; null for an interrupt or the idle task.
    pub waker: Option<Waker>,
    /// The CPU the wakeup ran on.
    pub waker_cpu: Option<u32>,
    /// The CPU the task last ran on.
    pub prev_cpu: Option<u32>,
    /// The CPU it was queued on.
    pub target_cpu: u32,
    /// When and where it then ran.
    pub ran: Option<Ran>,
}

/// A waking task.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct Waker {
    /// Its index in the model's task table.
    pub task: usize,
    /// Its pid.
    pub pid: i32,
    /// Its command name at the wakeup.
    pub comm: String,
}

/// When and where a woken task ran.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct Ran {
    /// When it started running.
    pub t: i64,
    /// Where.
    pub cpu: u32,
}

/// A followed task: its life, totals, moves and wakeups.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TaskAnswer {
    /// The task, under its last name.
    #[serde(flatten)]
    pub task: TaskHead,
    /// Its command names, in order.
    pub names: Vec<String>,
    /// The task that forked it, when the trace shows it.
    pub parent: Option<TaskHead>,
    /// Forked during the recording.
    pub forked: bool,
    /// When the trace first shows it.
    pub first_seen: i64,
    /// When it exited, if it did.
    pub exit: Option<i64>,
    /// Its runs in the whole trace.
    pub runs: usize,
    /// Time running in the whole trace, in ns.
    pub runtime: u64,
    /// Its waits in the whole trace.
    pub waits: usize,
    /// Time waiting in the whole trace, in ns.
    pub waited: u64,
    /// Its recorded migrations in the whole trace.
    pub migrations: usize,
    /// The CPUs it ran on, in order.
    pub cpus_used: Vec<u32>,
    /// Where its first run starts.
    pub first_run: Option<i64>,
    /// Where its last run ends.
    pub last_run: Option<i64>,
    /// Moves between consecutive runs on different CPUs within the range (at most 2000).
    pub moves: Vec<Move>,
    /// Its wakeups within the range (at most 2000).
    pub wakeups: Vec<Wakeup>,
    /// How many wakeups there were within the range.
    pub wakeups_in_range: usize,
}

/// A task leaving one CPU and next running on another.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct Move {
    /// The CPU it left.
    pub from: u32,
    /// When its run there ended.
    pub left: i64,
    /// The CPU it ran on next.
    pub to: u32,
    /// When it started running there.
    pub arrived: i64,
}

/// A task's state, as the state track colours it (Perfetto's thread states).
#[derive(Serialize, JsonSchema, Copy, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ThreadState {
    /// On a CPU.
    Running,
    /// Runnable after a wakeup (or as a new task), until it ran.
    RunnableWakeup,
    /// Runnable after being switched out while runnable, until it ran again.
    RunnablePreempted,
    /// Blocked in S (or any state but D).
    Sleeping,
    /// Blocked in D (`prev_state`).
    Uninterruptible,
    /// After its last switch-out on exit.
    Dead,
    /// Before it was first seen, after lost events or an unrecorded switch.
    Unknown,
}

/// A followed task's state under the mouse on its state track, or `{"found": false}`
/// outside its life in the trace.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum StateAt {
    /// The stretch of one state that covers most of the pixel.
    Found(Box<FoundState>),
    /// Nothing there.
    Nothing(NoRun),
}

/// One stretch of a task in one state.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FoundState {
    /// Always true.
    pub found: bool,
    /// The task's index in the model's task table.
    pub task: usize,
    /// Its state.
    pub state: ThreadState,
    /// Where the stretch starts.
    pub start: i64,
    /// Where it ends.
    pub end: i64,
    /// For a runnable stretch: its wait, and who held the CPU it waited for.
    pub wait: Option<HeldWait>,
}

/// A wait for a CPU and who held that CPU meanwhile, as `schedlens latency --task` counts
/// them: per runqueue piece of the wait, the tasks that ran on that CPU while it waited
/// there.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HeldWait {
    /// Where the wait began (the enqueue, or the switch-out of a preempted task).
    pub start: i64,
    /// Where it ended.
    pub end: i64,
    /// Why the task became runnable.
    pub cause: WaitCause,
    /// Whether it ended with the task running (else: lost events, an unrecorded switch,
    /// the trace's end).
    pub ran: bool,
    /// The CPUs whose runqueue it waited on, in order.
    pub cpus: Vec<u32>,
    /// Who held them while it waited, longest first (at most 8).
    pub held_by: Vec<Holder>,
    /// How many tasks held them in all.
    pub holder_count: usize,
}

/// A task that held a CPU another task waited for.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Holder {
    /// Its index in the model's task table.
    pub task: usize,
    /// Its pid.
    pub pid: i32,
    /// Its command name (the last one).
    pub comm: String,
    /// How long it ran there while the task waited, in ns.
    pub held: u64,
    /// A kernel thread (by name, as `check` tells them).
    pub kernel_thread: bool,
}

/// The tasks waiting in one CPU's runqueue under the mouse (the runqueue strip), each with
/// who held that CPU while it waited.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct QueueAt {
    /// The CPU.
    pub cpu: u32,
    /// The waits in its runqueue during the pixel, longest first (at most 6).
    pub waiting: Vec<QueuedTask>,
    /// How many waits there were in all.
    pub waiting_count: usize,
}

/// A task waiting in a runqueue.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct QueuedTask {
    /// The task, named as it was called when the wait began.
    pub task: TaskHead,
    /// Its wait and who held the CPUs it waited for.
    pub wait: HeldWait,
}

/// The critical path on the timeline: the breakdown of the wall time (as `schedlens
/// critical-path` gives it) and, within the range asked for, the hops and the stretches
/// of scheduler cost to draw.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PagePath {
    /// What was followed: `command` (the traced command's process tree) or `task`.
    pub target: String,
    /// The task the walk starts from, at the end of the wall time.
    pub task: TaskHead,
    /// Where the wall time starts.
    pub start: i64,
    /// Where it ends.
    pub end: i64,
    /// The breakdown in one sentence to quote.
    pub sentence: String,
    /// Every nanosecond of the wall time, by cause.
    pub breakdown: crate::critical_path::PathBreakdown,
    /// The scheduler's share of the known time (at most).
    pub scheduler_share: f64,
    /// Where the allowed CPUs came from: `recorded` or `inferred`.
    pub affinity: String,
    /// Hops on the whole path.
    pub hop_count: usize,
    /// The hops overlapping the range, in time order (an even sample of at most 2000).
    pub hops: Vec<PageHop>,
    /// How many hops overlap the range.
    pub hops_in_range: usize,
    /// The largest stretches of scheduler cost on the path (at most 2000), those that
    /// overlap the range, in time order.
    pub costs: Vec<PageCost>,
    /// The largest stretches of scheduler cost on the whole path, largest first (at most 10).
    pub top: Vec<PageCost>,
}

/// One task's part of the path, and how the path came to it.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PageHop {
    /// The task on the path, named as it was called at the hop's start.
    pub task: TaskHead,
    /// Where its part starts (for a woken task: the wakeup's start).
    pub start: i64,
    /// Where it ends.
    pub end: i64,
    /// The task that woke it at `start` (the previous hop's); null for the first hop.
    pub woken_by: Option<usize>,
    /// The CPU the waker ran on when it woke it, when recorded.
    pub from_cpu: Option<u32>,
    /// When and where the woken task then ran, when it did.
    pub ran: Option<Ran>,
}

/// A stretch of scheduler cost on the path: its task runnable while an allowed CPU idled.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PageCost {
    /// The task, its index in the model's task table.
    pub task: usize,
    /// Its pid.
    pub pid: i32,
    /// Its command name at the stretch's start.
    pub comm: String,
    /// Where the stretch starts.
    pub start: i64,
    /// Where it ends.
    pub end: i64,
    /// Of the stretch, the time an allowed CPU idled, in ns.
    pub scheduler: u64,
    /// The CPU whose runqueue it waited on (where it then ran), when known.
    pub waited_on: Option<u32>,
    /// The allowed CPU that idled longest in the stretch (the largest stretches only).
    pub idle_cpu: Option<u32>,
}

/// Trace markers in a range.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Markers {
    /// Always `ready` (while they are read the answer is `{"status": "reading"}`).
    pub status: Ready,
    /// The markers, in time order: an even sample when there are more than asked for.
    pub markers: Vec<Marker>,
    /// How many markers lie in the range.
    pub in_range: usize,
    /// How many markers the trace has (those beyond the first 100,000 are not kept).
    pub total: usize,
}

/// A trace marker (a `print` or `bprint` event's text).
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct Marker {
    /// When it was written.
    pub t: i64,
    /// On which CPU.
    pub cpu: u32,
    /// By which pid.
    pub pid: i32,
    /// The writer's command name, when known (the report does not look it up).
    pub comm: Option<String>,
    /// The text.
    pub text: String,
}

/// The data `schedlens report` embeds for the page, compressed in the file.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct ReportDocument {
    /// As `/api/meta` (every tile has 512 columns).
    pub meta: Meta,
    /// The embedded parts by name (`TRACE/LAYERS/LEVEL/INDEX` for a tile): the offset
    /// and length of each in the data block.
    #[serde(serialize_with = "ordered_map")]
    #[schemars(with = "BTreeMap<String, [usize; 2]>")]
    pub tiles: Vec<(String, [usize; 2])>,
    /// Per trace, in `meta`'s order.
    pub traces: Vec<EmbeddedTrace>,
}

/// What the report embeds of one trace besides its tiles.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedTrace {
    /// `check`'s incidents (at most 1000).
    pub incidents: Incidents,
    /// The whole trace's statistics.
    pub stats: RangeStats,
    /// The trace's markers (an even sample of at most 5000).
    pub markers: Vec<Marker>,
    /// How many markers the trace has.
    pub marker_total: usize,
    /// Per timeline colour (`#rrggbb`), the tasks drawn in it: `[pid, command]`, by pid.
    pub colors: BTreeMap<String, Vec<(i32, String)>>,
    /// How often a task moved from one CPU to another.
    pub migrations: MigrationCounts,
    /// The finest tile level embedded for the whole trace.
    pub finest_level: Option<u32>,
    /// The coarsest tile level.
    pub top_level: Option<u32>,
    /// Incidents (by rank) whose zoomed view is embedded.
    pub zoomed_incidents: Option<Vec<usize>>,
    /// The traced command's critical path over the whole trace (as `/api/path` answers
    /// it); null when the trace names no command.
    pub critical_path: Option<PagePath>,
}

/// The migration matrix.
#[derive(Serialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct MigrationCounts {
    /// The matrix is this many CPUs square.
    pub cpus: usize,
    /// `[from, to, count]` of each pair of CPUs with migrations.
    pub pairs: Vec<(u32, u32, u64)>,
}

/// Pairs as a JSON object, in their order.
fn ordered_map<S: Serializer>(pairs: &[(String, [usize; 2])], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(pairs.iter().map(|(name, value)| (name, value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head() -> TaskHead {
        TaskHead { task: 3, pid: 42, comm: "a".into(), pid_color: "#000001".into(), command_color: "#000002".into() }
    }

    #[test]
    fn a_flattened_task_comes_first_and_no_run_is_found_false() {
        let run = FoundRun {
            task: head(),
            found: true,
            cpu: 1,
            start: -5,
            end: 7,
            ended: "exited".into(),
            next_cpu: None,
            wait: None,
        };
        assert_eq!(
            serde_json::to_string(&RunAt::Found(Box::new(run))).unwrap(),
            r##"{"task":3,"pid":42,"comm":"a","pidColor":"#000001","commandColor":"#000002","found":true,"cpu":1,"start":-5,"end":7,"ended":"exited","nextCpu":null,"wait":null}"##
        );
        assert_eq!(serde_json::to_string(&RunAt::Nothing(NoRun { found: false })).unwrap(), r#"{"found":false}"#);
    }

    #[test]
    fn tiles_are_an_object_in_the_order_given() {
        let pairs = vec![("b".to_string(), [1, 2]), ("a".to_string(), [3, 4])];
        let mut out = serde_json::Serializer::new(Vec::new());
        ordered_map(&pairs, &mut out).unwrap();
        assert_eq!(String::from_utf8(out.into_inner()).unwrap(), r#"{"b":[1,2],"a":[3,4]}"#);
    }
}
