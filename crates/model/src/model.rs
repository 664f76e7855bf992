//! The model of one trace, built in one pass over its events, and the questions every
//! analysis asks of it first: its time span, and where the workload starts after the
//! recording's initial `sleep`. Its tables are read through accessors only, so nothing
//! outside the tracker can break their invariants.

use crate::anomalies::Anomalies;
use crate::events::SchedDecoder;
use crate::staging;
use crate::stream::WaitSink;
use crate::table::WakeupId;
use crate::tables::{CpuTimeline, MAX_CPUS, Migrations, Segments, WaitEnd, Waits, Wakeup, Wakeups};
use crate::tasks::{Comms, TaskId, Tasks};
use crate::tracker::{Tracker, TrackerOptions};
use tracedat::{Cpu, EventSource, Nanos};

/// Why a model could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(
        "{input}: the trace has no sched_switch events; record with `-e sched` (e.g. `trace-cmd record -e sched ...`)"
    )]
    NoSwitchEvents { input: String },
    #[error("{input}: the trace holds no events")]
    NoEvents { input: String },
}

/// Why `--after-sleep` has no start time.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AfterSleepError {
    #[error(
        "no task named `sleep` in the traced command's process tree; record the command as `sh -c 'sleep 1; COMMAND'` or choose a start with --min"
    )]
    NoSleepInCommand,
    #[error(
        "the trace has no task named `sleep` and no sched_process_exec to find the traced command by; record with `-e sched` and the command as `sh -c 'sleep 1; COMMAND'`, or choose a start with --min"
    )]
    NoSleep,
}

/// Which of the model's tables to build. Run segments and tasks are always built; the
/// others cost memory and time that a timeline does not need.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Detail {
    queues: bool,
    waits: bool,
    wakeups: bool,
    migrations: bool,
}

impl Detail {
    /// Every table.
    pub const FULL: Detail = Detail { queues: true, waits: true, wakeups: true, migrations: true };
    /// Run segments and tasks only (a timeline).
    pub const SEGMENTS: Detail = Detail { queues: false, waits: false, wakeups: false, migrations: false };
    /// Segments and runqueues, without the waits their pieces belong to (running/waiting
    /// counts of every task).
    pub const QUEUES: Detail = Detail { queues: true, waits: false, wakeups: false, migrations: false };
    /// Segments, waits and runqueues (running/waiting counts of some tasks).
    pub const WAITS: Detail = Detail { queues: true, waits: true, wakeups: false, migrations: false };
    /// Segments, waits, runqueues and migrations (statistics).
    pub const STATS: Detail = Detail { queues: true, waits: true, wakeups: false, migrations: true };
    /// Segments, waits, wakeups and migrations, without runqueue pieces (each wait's
    /// latency and causes, the critical path: they ask where a wait ended and what the
    /// CPUs did meanwhile, never which runqueue held it when).
    pub const WAKEUPS: Detail = Detail { queues: false, waits: true, wakeups: true, migrations: true };

    /// Runqueue pieces per CPU; each piece's wait is known only with [`Self::waits`].
    pub fn queues(self) -> bool {
        self.queues
    }

    pub fn waits(self) -> bool {
        self.waits
    }

    pub fn wakeups(self) -> bool {
        self.wakeups
    }

    pub fn migrations(self) -> bool {
        self.migrations
    }
}

impl Default for Detail {
    fn default() -> Self {
        Detail::FULL
    }
}

/// What building the model met in the file.
#[derive(Debug, Default)]
pub struct BuildReport {
    pub events: u64,
    /// Damaged parts of the file (the model covers the rest).
    pub damage: Vec<tracedat::Error>,
    /// Events with no format in the file.
    pub unknown_events: u64,
    /// Scheduler events whose format lacks a field the model needs.
    pub unusable_events: Vec<String>,
    /// The buffer the model was built from ("" is the top buffer).
    pub buffer: String,
    /// CPUs the trace declares beyond the [`MAX_CPUS`] the model holds.
    pub cpus_beyond_limit: u32,
}

/// What the tracker hands over.
pub(crate) struct Parts {
    pub cpus: Vec<CpuTimeline>,
    pub tasks: Tasks,
    pub comms: Comms,
    pub waits: Waits,
    pub wakeups: Wakeups,
    pub migrations: Migrations,
    pub anomalies: Anomalies,
    pub first_exec: Option<TaskId>,
    pub detail: Detail,
}

/// Tasks, CPUs, run segments, runqueues, wakeups and migrations of one trace.
#[derive(Clone, Debug)]
pub struct Model {
    cpus: Vec<CpuTimeline>,
    tasks: Tasks,
    comms: Comms,
    waits: Waits,
    wakeups: Wakeups,
    migrations: Migrations,
    anomalies: Anomalies,
    first_exec: Option<TaskId>,
    start: Nanos,
    end: Nanos,
    detail: Detail,
}

/// Events the kernel reported lost: those it counted, and losses it gave no count for.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    pub events: u64,
    pub unknown_losses: u64,
}

impl Lost {
    pub fn any(&self) -> bool {
        self.events > 0 || self.unknown_losses > 0
    }
}

/// As `info` says it: `N`, or `at least N, plus M losses of unknown size`.
impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.unknown_losses {
            0 => write!(f, "{}", self.events),
            unknown => write!(f, "at least {}, plus {unknown} losses of unknown size", self.events),
        }
    }
}

/// The CPUs of `buffer` whose ring buffer overwrote events, by the recorder's per-CPU
/// statistics (the CPUSTAT option's `overrun:` lines; trace-cmd writes the top buffer's
/// first, then each instance's after a `Buffer: NAME` line). Empty when the trace has none.
fn overwritten_cpus(cpustats: &[String], buffer: &str) -> Vec<bool> {
    let mut overwritten = Vec::new();
    let mut current = "";
    for text in cpustats {
        let value = |key: &str| text.lines().find_map(|line| line.strip_prefix(key)).map(str::trim);
        if let Some(name) = value("Buffer:") {
            current = name;
        }
        let (Some(cpu), Some(overrun)) = (value("CPU:"), value("overrun:")) else { continue };
        let (Ok(cpu), Ok(overrun)) = (cpu.parse::<usize>(), overrun.parse::<u64>()) else { continue };
        if current == buffer && cpu < MAX_CPUS as usize {
            if overwritten.len() <= cpu {
                overwritten.resize(cpu + 1, false);
            }
            overwritten[cpu] = overrun > 0;
        }
    }
    overwritten
}

impl Model {
    /// Builds the model from a source of scheduler events (a trace.dat's top buffer, or
    /// its first buffer when it has no top buffer; a perf.data's samples), with the
    /// tables `detail` asks for. `progress` is called now and then with the bytes read
    /// so far.
    pub fn build<S: EventSource>(
        source: &S,
        detail: Detail,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(Model, BuildReport), ModelError> {
        Self::build_with(source, progress, |cpus, options| Tracker::new(cpus, TrackerOptions { detail, ..options }))
    }

    /// Builds the segments and tasks, and hands each wait (with the wakeup that began it)
    /// and each migration to `sink` instead of keeping them: for a pass that looks at each
    /// wait once, without the memory of their tables (see [`WaitSink`]). The model has the
    /// segments' detail ([`Detail::SEGMENTS`]).
    pub fn build_streaming<S: EventSource>(
        source: &S,
        progress: &mut dyn FnMut(u64),
        sink: &mut dyn WaitSink,
    ) -> Result<(Model, BuildReport), ModelError> {
        Self::build_with(source, progress, |cpus, options| Tracker::streaming(cpus, options, sink))
    }

    fn build_with<'s, S: EventSource>(
        source: &S,
        progress: &mut dyn FnMut(u64),
        tracker: impl FnOnce(u32, TrackerOptions) -> Tracker<'s>,
    ) -> Result<(Model, BuildReport), ModelError> {
        let decoder = SchedDecoder::new(source.formats());
        let input = source.input().to_string();
        if !decoder.has_switch() {
            return Err(ModelError::NoSwitchEvents { input });
        }
        let options = TrackerOptions {
            waking_enqueues: !decoder.has_wakeup(),
            initial_names: source.cmdlines().iter().map(|(pid, comm)| (pid, comm.to_string())).collect(),
            overwritten: overwritten_cpus(source.cpu_stats(), source.buffer()),
            detail: Detail::SEGMENTS,
        };
        let mut tracker = tracker(source.cpu_count(), options);
        let end = staging::track(source, &decoder, &mut tracker, progress);
        if end.events == 0 {
            return Err(ModelError::NoEvents { input });
        }
        let mut damage = source.damage();
        damage.extend(end.damage);
        let report = BuildReport {
            events: end.events,
            unknown_events: end.unknown_events,
            damage,
            unusable_events: decoder.unusable.clone(),
            buffer: source.buffer().to_string(),
            cpus_beyond_limit: source.cpu_count().saturating_sub(MAX_CPUS),
        };
        Ok((tracker.finish(), report))
    }

    pub(crate) fn from_parts(parts: Parts) -> Model {
        let start = parts.cpus.iter().filter_map(|c| c.first_event).min().unwrap_or_default();
        let end = parts.cpus.iter().filter_map(|c| c.last_event).max().unwrap_or_default();
        Model {
            cpus: parts.cpus,
            tasks: parts.tasks,
            comms: parts.comms,
            waits: parts.waits,
            wakeups: parts.wakeups,
            migrations: parts.migrations,
            anomalies: parts.anomalies,
            first_exec: parts.first_exec,
            start,
            end,
            detail: parts.detail,
        }
    }

    /// CPUs of the traced machine, including those that recorded nothing.
    pub fn cpu_count(&self) -> u32 {
        self.cpus.len() as u32
    }

    /// One timeline per CPU, indexed by CPU number.
    pub fn cpus(&self) -> &[CpuTimeline] {
        &self.cpus
    }

    /// The events the kernel reported lost, over every CPU.
    pub fn lost(&self) -> Lost {
        // Saturating: a damaged page can claim u64::MAX lost events.
        self.cpus.iter().fold(Lost::default(), |total, cpu| Lost {
            events: total.events.saturating_add(cpu.lost_events()),
            unknown_losses: total.unknown_losses.saturating_add(cpu.lost_unknown()),
        })
    }

    pub fn cpu(&self, cpu: Cpu) -> Option<&CpuTimeline> {
        self.cpus.get(cpu.index())
    }

    pub fn tasks(&self) -> &Tasks {
        &self.tasks
    }

    pub fn comms(&self) -> &Comms {
        &self.comms
    }

    /// The tables this model was built with.
    pub fn detail(&self) -> Detail {
        self.detail
    }

    /// Every wait in a runqueue. Panics when the model was built without waits (a
    /// program error: ask for them with [`Detail`]).
    pub fn waits(&self) -> &Waits {
        assert!(self.detail.waits, "the model was built without waits (see model::Detail)");
        &self.waits
    }

    /// Every wakeup. Panics when the model was built without wakeups.
    pub fn wakeups(&self) -> &Wakeups {
        assert!(self.detail.wakeups, "the model was built without wakeups (see model::Detail)");
        &self.wakeups
    }

    /// Every migration. Panics when the model was built without migrations.
    pub fn migrations(&self) -> &Migrations {
        assert!(self.detail.migrations, "the model was built without migrations (see model::Detail)");
        &self.migrations
    }

    pub fn anomalies(&self) -> &Anomalies {
        &self.anomalies
    }

    /// The task of the trace's first `sched_process_exec`: the traced command.
    pub fn first_exec(&self) -> Option<TaskId> {
        self.first_exec
    }

    /// The trace's first event.
    pub fn start(&self) -> Nanos {
        self.start
    }

    /// The trace's last event.
    pub fn end(&self) -> Nanos {
        self.end
    }

    /// Bytes the model's tables hold.
    pub fn heap_bytes(&self) -> usize {
        self.cpus.iter().map(CpuTimeline::heap_bytes).sum::<usize>()
            + self.waits.heap_bytes()
            + self.wakeups.heap_bytes()
            + self.migrations.heap_bytes()
    }

    /// Whether `cpu` was idle at `time` (`None` where its state is unknown).
    pub fn cpu_idle_at(&self, cpu: Cpu, time: Nanos) -> Option<bool> {
        let segments = self.cpu(cpu)?.segments();
        idle_before(segments, segments.first_starting_after(time), time)
    }

    /// [`Self::cpu_idle_at`], its segment searched from `near` (the last answer's
    /// position on that CPU, updated): for passes that ask about times in about their order.
    pub fn cpu_idle_at_near(&self, cpu: Cpu, time: Nanos, near: &mut usize) -> Option<bool> {
        let segments = self.cpu(cpu)?.segments();
        *near = segments.first_starting_after_near(time, *near);
        idle_before(segments, *near, time)
    }

    /// When and where a wakeup's wakee then ran, if it did.
    pub fn wakeup_ran(&self, wakeup: &Wakeup) -> Option<(Nanos, Cpu)> {
        let wait = self.waits().get(wakeup.wait?);
        (wait.end_kind == WaitEnd::Ran).then_some((wait.end, wait.ran_on))
    }

    /// For each wait (by its index), the wakeup that began it: the wakeups name their
    /// waits, this turns that around (a vector built on each call).
    pub fn wakeups_by_wait(&self) -> Vec<Option<WakeupId>> {
        let mut of = vec![None; self.waits().len()];
        for id in self.wakeups().ids() {
            // Waits named by wakeups are rows of the model's waits: in range.
            if let Some(wait) = self.wakeups().wait(id) {
                of[wait.index()] = Some(id);
            }
        }
        of
    }

    /// When the wakee was put on a runqueue.
    pub fn wakeup_enqueued(&self, wakeup: &Wakeup) -> Option<Nanos> {
        Some(self.waits().start(wakeup.wait?))
    }

    /// Time from the wakeup's start (`sched_waking`, else the enqueue) until the wakee ran.
    pub fn wakeup_latency(&self, wakeup: &Wakeup) -> Option<Nanos> {
        let start = wakeup.waking.or_else(|| self.wakeup_enqueued(wakeup))?;
        Some(self.wakeup_ran(wakeup)?.0.saturating_sub(start))
    }

    /// The name of a task at a time.
    pub fn comm_at(&self, task: TaskId, time: Nanos) -> &str {
        self.comms.name(self.tasks.get(task).comm_at(time))
    }

    /// When the recording's initial `sleep` ended. The rule: the traced command is the
    /// task of the trace's first `sched_process_exec`; among it and the tasks it forked
    /// (directly or not), take those that were ever named `sleep`; the answer is the
    /// earliest time one of them exited (`sched_process_exit`, else its last run). A
    /// trace without exec events (recorded with only switches and wakeups) gives no
    /// command: then any task ever named `sleep` counts, and it ends when it stops
    /// running for good.
    pub fn after_sleep(&self) -> Result<Nanos, AfterSleepError> {
        let sleep = self.comms.find("sleep");
        let named_sleep =
            |task: &crate::tasks::Task| sleep.is_some_and(|sleep| task.comms.iter().any(|&(_, c)| c == sleep));
        let candidates: Vec<TaskId> = match self.first_exec {
            Some(root) => self
                .tasks
                .iter()
                .filter(|(id, task)| named_sleep(task) && self.descends_from(*id, root))
                .map(|(id, _)| id)
                .collect(),
            None => self.tasks.iter().filter(|(_, task)| named_sleep(task)).map(|(id, _)| id).collect(),
        };
        let missing =
            if self.first_exec.is_some() { AfterSleepError::NoSleepInCommand } else { AfterSleepError::NoSleep };
        let last_runs = self.last_run_ends(&candidates);
        candidates
            .iter()
            .zip(last_runs)
            .map(|(&id, last_run)| self.tasks.get(id).exit.unwrap_or(last_run))
            .min()
            .ok_or(missing)
    }

    fn descends_from(&self, mut task: TaskId, ancestor: TaskId) -> bool {
        for _ in 0..self.tasks.len() {
            if task == ancestor {
                return true;
            }
            match self.tasks.get(task).parent {
                Some(parent) => task = parent,
                None => return false,
            }
        }
        false
    }

    /// When each task last stopped running (its last sighting when it never ran), in one
    /// pass over the segments.
    fn last_run_ends(&self, tasks: &[TaskId]) -> Vec<Nanos> {
        let mut ends: Vec<Option<Nanos>> = vec![None; tasks.len()];
        if tasks.is_empty() {
            return Vec::new();
        }
        let mut slot_of = vec![usize::MAX; self.tasks.len()];
        for (slot, task) in tasks.iter().enumerate() {
            slot_of[task.index()] = slot;
        }
        for timeline in &self.cpus {
            let segments = timeline.segments();
            for (index, task) in segments.tasks().enumerate() {
                let slot = slot_of[task.index()];
                if slot != usize::MAX {
                    let end = segments.end(index);
                    ends[slot] = Some(ends[slot].map_or(end, |e: Nanos| e.max(end)));
                }
            }
        }
        ends.iter().zip(tasks).map(|(end, &task)| end.unwrap_or(self.tasks.last_seen(task))).collect()
    }
}

/// Whether the segment before `next` (the first segment starting after `time`) idled at
/// `time` (`None` where no segment covers it).
fn idle_before(segments: &Segments, next: usize, time: Nanos) -> Option<bool> {
    let index = next.checked_sub(1)?;
    (time < segments.end(index) || segments.start(index) == time).then(|| segments.task(index) == TaskId::IDLE)
}

#[cfg(test)]
mod tests {
    use super::overwritten_cpus;

    #[test]
    fn overwritten_cpus_come_from_the_buffers_own_statistics() {
        let stats = |cpu: u32, overrun: u32| format!("CPU: {cpu}\nentries: 0\noverrun: {overrun}\nbytes: 0\n");
        let texts =
            [stats(0, 0), stats(1, 70), format!("Buffer: inst\n{}", stats(0, 9)), stats(1, 0), "garbage".into()];
        assert_eq!(overwritten_cpus(&texts, ""), [false, true]);
        assert_eq!(overwritten_cpus(&texts, "inst"), [true, false]);
        assert_eq!(overwritten_cpus(&[], ""), Vec::<bool>::new());
    }
}
