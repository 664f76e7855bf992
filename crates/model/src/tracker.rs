//! The one-pass state machine that turns scheduler events into the model: per CPU who
//! runs, per task whether it runs, waits in a runqueue or sleeps, and the wakeups and
//! migrations in between. It never does I/O and never invents state: when the stream
//! does not say what happened (lost events, a switch the kernel did not record), the
//! stretch is marked uncertain and the state resynchronises at the next clear sign.
//!
//! Its input is checked here, once: CPU numbers from event fields against the trace's
//! CPU count, timestamps against the clock (which never goes backwards), so that every
//! index below is in range by construction.

use crate::anomalies::{Anomalies, Anomaly};
use crate::events::{EventContext, Sched};
use crate::model::{Detail, Model};
use crate::stream::{WaitSink, WaitStore};
use crate::table::{WaitId, WakeupId};
use crate::tables::*;
use crate::tasks::{CommId, Comms, TaskId, Tasks};
use std::collections::BTreeMap;
use tracedat::{Cpu, Nanos, Pid};

/// The kernel's comm is at most 15 characters.
const COMM_LEN: usize = 15;
/// An idle CPU switches to a task queued on it within microseconds; one still queued
/// this long while the CPU shows idle again was switched in without a record.
const QUEUED_ON_IDLE_LIMIT: Nanos = Nanos(1_000_000);
/// A table row that was not recorded (the model was built without that table).
const NO_ROW: u32 = u32::MAX;

/// What a CPU is known to be doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Current {
    /// No event seen yet.
    NotStarted,
    Running {
        task: TaskId,
        since: Nanos,
        flags: u8,
    },
    /// Unknown since `since` (`None`: since before the first event). After lost events
    /// only a `sched_switch` resynchronises; otherwise any event does.
    Uncertain {
        since: Option<Nanos>,
        until_switch: bool,
    },
}

#[derive(Clone, Debug)]
struct CpuState {
    current: Current,
    first_event: Option<Nanos>,
    last_event: Option<Nanos>,
    /// The last time the current task was seen running here.
    last_evidence: Nanos,
    /// Tasks waiting in this CPU's runqueue.
    queued: Vec<TaskId>,
    /// When the first of `queued` was queued since the runqueue was last empty: none of
    /// them was queued earlier (tasks are queued in time order; one leaving does not
    /// make the others' times earlier).
    queued_since: Nanos,
}

impl CpuState {
    const NEW: CpuState = CpuState {
        current: Current::NotStarted,
        first_event: None,
        last_event: None,
        last_evidence: Nanos::ZERO,
        queued: Vec::new(),
        queued_since: Nanos::ZERO,
    };
}

/// What a task is known to be doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    Unknown,
    /// Forked, not yet runnable.
    New,
    Blocked,
    /// Between `sched_waking` and `sched_wakeup` (its wakeup, when wakeups are built).
    Waking {
        wakeup: Option<WakeupId>,
    },
    /// Waiting in `queue`'s runqueue since `queued` (its wait began at `waiting`); `wait`
    /// and `piece` are its rows in the tables (when they are built).
    Runnable {
        wait: Option<WaitId>,
        queue: Cpu,
        piece: u32,
        waiting: Nanos,
        queued: Nanos,
    },
    Running {
        cpu: Cpu,
    },
}

#[derive(Copy, Clone, Debug)]
struct TaskRuntime {
    state: State,
    /// The CPU the task is on (last ran, or was placed on).
    cpu: Option<Cpu>,
    exiting: bool,
    /// Where the task is in its CPU's `queued` list while it waits there (checked before
    /// use: a hint that makes leaving a long runqueue O(1)).
    queue_slot: u32,
}

impl TaskRuntime {
    const NEW: TaskRuntime = TaskRuntime { state: State::Unknown, cpu: None, exiting: false, queue_slot: 0 };
}

/// Options for building.
#[derive(Clone, Debug, Default)]
pub(crate) struct TrackerOptions {
    /// The trace has no `sched_wakeup`: treat `sched_waking` as the enqueue.
    pub waking_enqueues: bool,
    /// Names of pids known before any event (the trace's saved cmdlines).
    pub initial_names: BTreeMap<i32, String>,
    /// Per CPU, whether the recorder says the kernel overwrote some of its events (then
    /// nothing before its first event is known, even without a loss notice there).
    pub overwritten: Vec<bool>,
    /// Which tables to fill.
    pub detail: Detail,
}

/// Feeds on events in timestamp order; [`Tracker::finish`] returns the model.
pub(crate) struct Tracker<'s> {
    options: TrackerOptions,
    cpu_state: Vec<CpuState>,
    timelines: Vec<CpuTimeline>,
    tasks: Tasks,
    comms: Comms,
    runtime: Vec<TaskRuntime>,
    /// The waits, wakeups and migrations the detail asks for.
    store: WaitStore<'s>,
    anomalies: Anomalies,
    first_exec: Option<TaskId>,
    /// The latest time seen: no event is placed before it.
    clock: Nanos,
    /// The time of the trace's first event (on any CPU), once seen.
    trace_start: Option<Nanos>,
}

impl<'s> Tracker<'s> {
    /// A tracker for a machine of `cpu_count` CPUs (at most [`MAX_CPUS`]).
    pub fn new(cpu_count: u32, options: TrackerOptions) -> Tracker<'s> {
        let cpu_count = cpu_count.min(MAX_CPUS);
        let mut comms = Comms::default();
        let tasks = Tasks::new(&mut comms);
        Tracker {
            options,
            cpu_state: vec![CpuState::NEW; cpu_count as usize],
            timelines: (0..cpu_count).map(|cpu| CpuTimeline::new(Cpu(cpu))).collect(),
            tasks,
            comms,
            runtime: vec![TaskRuntime::NEW],
            store: WaitStore::tables(),
            anomalies: Anomalies::default(),
            first_exec: None,
            clock: Nanos::ZERO,
            trace_start: None,
        }
    }

    /// A tracker that hands waits, wakeups and migrations to `sink` instead of keeping
    /// them (see [`crate::stream`]); the model it returns has segments and tasks.
    pub fn streaming(cpu_count: u32, mut options: TrackerOptions, sink: &'s mut dyn WaitSink) -> Tracker<'s> {
        options.detail = Detail::WAKEUPS;
        Tracker { store: WaitStore::streamed(sink), ..Tracker::new(cpu_count, options) }
    }

    /// Notes that the recorder says the kernel overwrote some of `cpu`'s events.
    #[cfg(feature = "scenario")]
    pub(crate) fn note_overwritten(&mut self, cpu: Cpu) {
        let overwritten = &mut self.options.overwritten;
        overwritten.resize(overwritten.len().max(cpu.index() + 1), false);
        overwritten[cpu.index()] = true;
    }

    /// Whether `cpu` is one of the machine's, counting the anomaly when it is not.
    #[inline]
    fn in_range(&mut self, cpu: Cpu, time: Nanos) -> bool {
        let ok = cpu.index() < self.cpu_state.len();
        if !ok {
            self.anomalies.count(Anomaly::CpuOutOfRange, time);
        }
        ok
    }

    /// Processes one event; `name` gives the model's name for each of the event's names
    /// (`None` for an empty one), interning it in the table it is given.
    pub fn event<N: Copy>(
        &mut self,
        ctx: EventContext,
        event: &Sched<N>,
        name: &mut impl FnMut(N, &mut Comms) -> Option<CommId>,
    ) {
        if !self.in_range(ctx.cpu, ctx.ts) {
            return;
        }
        let ctx = self.note_time(ctx);
        let common = self.task_for(ctx.pid, None, ctx.ts);
        self.observe_running(ctx.cpu, common, ctx.ts);
        let mut name = |n: N, tracker: &mut Tracker<'s>| name(n, &mut tracker.comms);
        match *event {
            Sched::Switch { prev_pid, prev_comm, prev_state, next_pid, next_comm } => {
                let prev_comm = name(prev_comm, self);
                let prev = self.task_for(prev_pid, prev_comm, ctx.ts);
                let next_comm = name(next_comm, self);
                let next = self.task_for(next_pid, next_comm, ctx.ts);
                self.switch(ctx, prev, prev_state, next);
            }
            Sched::Waking { pid, comm, target_cpu } => {
                let comm = name(comm, self);
                let task = self.task_for(pid, comm, ctx.ts);
                let target_cpu = target_cpu.filter(|&cpu| self.in_range(cpu, ctx.ts));
                self.waking(ctx, common, task, target_cpu);
            }
            Sched::Wakeup { pid, comm, target_cpu, success } => {
                let comm = name(comm, self);
                let task = self.task_for(pid, comm, ctx.ts);
                let target = target_cpu.unwrap_or(ctx.cpu);
                if success != Some(false) && self.in_range(target, ctx.ts) {
                    self.wakeup(ctx, task, target, WakeupKind::Wakeup);
                }
            }
            Sched::WakeupNew { pid, comm, target_cpu } => {
                let comm = name(comm, self);
                let task = self.task_for(pid, comm, ctx.ts);
                if task != TaskId::IDLE {
                    self.tasks.get_mut(task).forked = true;
                }
                let target = target_cpu.unwrap_or(ctx.cpu);
                if self.in_range(target, ctx.ts) {
                    self.wakeup(ctx, task, target, WakeupKind::NewTask);
                }
            }
            Sched::MigrateTask { pid, comm, orig_cpu, dest_cpu } => {
                let comm = name(comm, self);
                let task = self.task_for(pid, comm, ctx.ts);
                if self.in_range(orig_cpu, ctx.ts) && self.in_range(dest_cpu, ctx.ts) {
                    self.migrate(ctx, common, task, orig_cpu, dest_cpu);
                }
            }
            Sched::Fork { parent_pid, parent_comm, child_pid, child_comm } => {
                let parent_comm = name(parent_comm, self);
                let parent = self.task_for(parent_pid, parent_comm, ctx.ts);
                let child_comm = name(child_comm, self);
                self.fork(ctx, parent, child_pid, child_comm);
            }
            Sched::Exec { pid, filename } => {
                let task = self.task_for(pid, None, ctx.ts);
                let filename = name(filename, self);
                self.exec(ctx, task, filename);
            }
            Sched::Exit { pid, comm } => {
                let comm = name(comm, self);
                let task = self.task_for(pid, comm, ctx.ts);
                if task != TaskId::IDLE {
                    self.tasks.get_mut(task).exit = Some(ctx.ts);
                    self.runtime[task.index()].exiting = true;
                }
            }
            Sched::Unreadable => self.anomalies.count(Anomaly::MissingField, ctx.ts),
            Sched::Free { .. } | Sched::Other => {}
        }
    }

    /// Events were lost on `cpu` after its last event; `count` when the kernel said how many.
    pub fn lost(&mut self, cpu: Cpu, count: Option<u64>) {
        if !self.in_range(cpu, self.clock) {
            return;
        }
        let timeline = &mut self.timelines[cpu.index()];
        match count {
            Some(n) => timeline.lost_events = timeline.lost_events.saturating_add(n),
            None => timeline.lost_unknown += 1,
        }
        let (current, since) = (self.cpu_state[cpu.index()].current, self.cpu_state[cpu.index()].last_event);
        if let Current::Running { task, since: start, flags } = current {
            let end = since.unwrap_or(start).max(start);
            self.end_segment(cpu, task, start, end, flags, SegmentEnd::Lost, 0);
            self.runtime[task.index()].state = State::Unknown;
        }
        let since = match current {
            // Already uncertain: the earlier start stands.
            Current::Uncertain { since: Some(earlier), .. } => Some(earlier),
            _ => since,
        };
        self.cpu_state[cpu.index()].current = Current::Uncertain { since, until_switch: true };
        let end = since.unwrap_or(Nanos::ZERO);
        for task in std::mem::take(&mut self.cpu_state[cpu.index()].queued) {
            self.end_wait(task, end, WaitEnd::Lost, cpu);
            self.runtime[task.index()].state = State::Unknown;
        }
    }

    /// Notes the event's time on its CPU and places it on the clock: a timestamp earlier
    /// than its CPU's previous one (a damaged page) is counted, and no event is placed
    /// before one already seen, so every table stays in time order.
    #[inline]
    fn note_time(&mut self, mut ctx: EventContext) -> EventContext {
        if self.cpu_state[ctx.cpu.index()].last_event.is_some_and(|last| ctx.ts < last) {
            self.anomalies.count(Anomaly::TimeWentBackwards, ctx.ts);
        }
        ctx.ts = ctx.ts.max(self.clock);
        self.clock = ctx.ts;
        let trace_start = *self.trace_start.get_or_insert(ctx.ts);
        let state = &mut self.cpu_state[ctx.cpu.index()];
        if state.last_event.is_none() {
            state.first_event = Some(ctx.ts);
        }
        state.last_event = Some(ctx.ts);
        if let Current::Uncertain { since: since @ None, .. } = &mut state.current {
            // Events were lost before this CPU's first event (the kernel overwrote its
            // oldest ones): what it did is unknown from the trace's start on.
            *since = Some(trace_start);
        }
        ctx
    }

    /// The task with `pid`, created at its first sighting; notes its name if given.
    #[inline(always)]
    fn task_for(&mut self, pid: Pid, comm: Option<CommId>, time: Nanos) -> TaskId {
        if pid.is_idle() {
            return TaskId::IDLE;
        }
        match self.tasks.by_pid(pid) {
            Some(task) => {
                self.tasks.seen(task, time, comm);
                task
            }
            None => self.first_sighting(pid, comm, time),
        }
    }

    #[cold]
    fn first_sighting(&mut self, pid: Pid, comm: Option<CommId>, time: Nanos) -> TaskId {
        let comm = comm.unwrap_or_else(|| {
            let name = self.options.initial_names.get(&pid.0).map_or("<...>", |n| n.as_str());
            self.comms.intern(name.as_bytes())
        });
        let task = self.tasks.create(pid, comm, time);
        self.runtime.push(TaskRuntime::NEW);
        task
    }

    /// An event on `cpu` shows `task` running there at `time`.
    #[inline(always)]
    fn observe_running(&mut self, cpu: Cpu, task: TaskId, time: Nanos) {
        let state = &mut self.cpu_state[cpu.index()];
        // The usual case: the task the model has running there, with nothing to check.
        if let Current::Running { task: current, .. } = state.current {
            if current == task && (task != TaskId::IDLE || state.queued.is_empty()) {
                state.last_evidence = time;
                return;
            }
        }
        self.observe_running_otherwise(cpu, task, time);
    }

    fn observe_running_otherwise(&mut self, cpu: Cpu, task: TaskId, time: Nanos) {
        let state = &mut self.cpu_state[cpu.index()];
        match state.current {
            Current::Running { task: current, since, flags } if current == task => {
                state.last_evidence = time;
                if task != TaskId::IDLE {
                    return;
                }
                if let Some(first) = self.run_stale_queue(cpu, since, time) {
                    self.anomalies.count(Anomaly::UnrecordedSwitch, time);
                    self.end_segment(cpu, TaskId::IDLE, since, first, flags, SegmentEnd::Unrecorded, 0);
                    self.close_uncertain(cpu, Some(first), time);
                    self.start_running(cpu, TaskId::IDLE, time, segment_flags::NO_SWITCH_IN);
                }
            }
            Current::NotStarted => {
                // Nothing was lost before this first event, and any switch since the
                // recording began would be in the trace: an idle CPU idled from the start
                // (unless the recorder says events of this CPU were overwritten).
                let complete = !self.options.overwritten.get(cpu.index()).copied().unwrap_or(false);
                let since = if task == TaskId::IDLE && complete { self.trace_start.unwrap_or(time) } else { time };
                self.start_running(cpu, task, since, segment_flags::NO_SWITCH_IN);
                self.cpu_state[cpu.index()].last_evidence = time;
            }
            Current::Uncertain { until_switch: true, .. } => {}
            Current::Uncertain { since, until_switch: false } => {
                self.close_uncertain(cpu, since, time);
                self.start_running(cpu, task, time, segment_flags::NO_SWITCH_IN);
            }
            Current::Running { task: current, since, flags } => {
                // The CPU changed tasks without a recorded switch.
                self.anomalies.count(Anomaly::UnrecordedSwitch, time);
                let mut last_seen = state.last_evidence.max(since);
                if current == TaskId::IDLE {
                    if let Some(first) = self.run_stale_queue(cpu, since, time) {
                        last_seen = last_seen.min(first);
                    }
                }
                self.end_segment(cpu, current, since, last_seen, flags, SegmentEnd::Unrecorded, 0);
                self.runtime[current.index()].state = State::Unknown;
                self.close_uncertain(cpu, Some(last_seen), time);
                self.start_running(cpu, task, time, segment_flags::NO_SWITCH_IN);
            }
        }
    }

    /// Tasks still queued on `cpu`, which has idled since `idle_since`, although they
    /// were queued there (while it idled) well before `time`. The kernel never leaves a
    /// task queued on an idle CPU, so they ran without a recorded switch: their waits end
    /// where they began on this CPU, and the earliest such time is returned, from which
    /// the CPU's state is uncertain.
    fn run_stale_queue(&mut self, cpu: Cpu, idle_since: Nanos, time: Nanos) -> Option<Nanos> {
        let CpuState { queued, queued_since, .. } = &self.cpu_state[cpu.index()];
        // None can be stale before the first was queued the limit ago.
        if queued.is_empty() || time.saturating_sub((*queued_since).max(idle_since)) <= QUEUED_ON_IDLE_LIMIT {
            return None;
        }
        let stale_since = |runtime: &TaskRuntime| match runtime.state {
            State::Runnable { queued, .. } => {
                let since = queued.max(idle_since);
                (time.saturating_sub(since) > QUEUED_ON_IDLE_LIMIT).then_some(since)
            }
            _ => None,
        };
        let first = queued.iter().filter_map(|&task| stale_since(&self.runtime[task.index()])).min()?;
        let stale: Vec<(TaskId, Nanos)> =
            queued.iter().filter_map(|&task| Some((task, stale_since(&self.runtime[task.index()])?))).collect();
        for (task, since) in stale {
            self.end_wait(task, since, WaitEnd::Unrecorded, cpu);
            self.runtime[task.index()].state = State::Unknown;
        }
        Some(first)
    }

    fn close_uncertain(&mut self, cpu: Cpu, since: Option<Nanos>, until: Nanos) {
        let since = since.unwrap_or(until);
        if until > since {
            self.timelines[cpu.index()].uncertain.push((since, until));
        }
    }

    /// `task` starts running on `cpu` at `time`.
    fn start_running(&mut self, cpu: Cpu, task: TaskId, time: Nanos, flags: u8) {
        let state = &mut self.cpu_state[cpu.index()];
        state.current = Current::Running { task, since: time, flags };
        state.last_evidence = time;
        if task == TaskId::IDLE {
            return;
        }
        let runtime = self.runtime[task.index()];
        match runtime.state {
            State::Running { cpu: other } if other != cpu => self.lose_track_elsewhere(other, task, time),
            State::Runnable { queue, .. } => {
                self.end_wait(task, time, WaitEnd::Ran, cpu);
                if queue != cpu {
                    self.migrated(time, task, queue, cpu, MigrationReason::Inferred);
                }
            }
            _ => {
                if let Some(from) = runtime.cpu.filter(|&c| c != cpu) {
                    self.migrated(time, task, from, cpu, MigrationReason::Inferred);
                }
            }
        }
        let runtime = &mut self.runtime[task.index()];
        runtime.state = State::Running { cpu };
        runtime.cpu = Some(cpu);
    }

    fn migrated(&mut self, time: Nanos, task: TaskId, from: Cpu, to: Cpu, reason: MigrationReason) {
        if self.options.detail.migrations() {
            self.store.migration(Migration { time, task, from, to, reason });
        }
    }

    /// `task`, believed running on `cpu`, now runs elsewhere: its switch-out on `cpu` was
    /// not recorded, so `cpu` is uncertain until its next event.
    fn lose_track_elsewhere(&mut self, cpu: Cpu, task: TaskId, time: Nanos) {
        let state = &self.cpu_state[cpu.index()];
        let last_evidence = state.last_evidence;
        if let Current::Running { task: current, since, flags } = state.current {
            if current == task {
                self.anomalies.count(Anomaly::UnrecordedSwitch, time);
                let last_seen = last_evidence.max(since);
                self.end_segment(cpu, task, since, last_seen, flags, SegmentEnd::Unrecorded, 0);
                self.cpu_state[cpu.index()].current =
                    Current::Uncertain { since: Some(last_seen), until_switch: false };
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn end_segment(
        &mut self,
        cpu: Cpu,
        task: TaskId,
        start: Nanos,
        end: Nanos,
        flags: u8,
        end_kind: SegmentEnd,
        prev_state: u16,
    ) {
        let end = end.max(start);
        self.timelines[cpu.index()].segments.push(Segment { start, end, task, end_kind, flags, prev_state });
    }

    fn switch(&mut self, ctx: EventContext, prev: TaskId, prev_state: u16, next: TaskId) {
        let cpu = ctx.cpu;
        match self.cpu_state[cpu.index()].current {
            Current::Uncertain { since, .. } => {
                self.anomalies.count(Anomaly::SwitchDuringLoss, ctx.ts);
                self.close_uncertain(cpu, since, ctx.ts);
                // `prev` ran here unseen: whatever the model believed it was doing
                // elsewhere ended, at the latest, when this CPU's view was lost.
                self.settle_unseen_run(prev, cpu, since.unwrap_or(ctx.ts), ctx.ts);
                self.leave_cpu(cpu, prev, prev_state, ctx.ts);
            }
            Current::NotStarted => self.leave_cpu(cpu, prev, prev_state, ctx.ts),
            Current::Running { task, since, flags } => {
                if task != prev {
                    // `observe_running` made the event's task current; a prev_pid that
                    // differs from it is a switch-out of a task that was not running.
                    self.observe_running(cpu, prev, ctx.ts);
                    return self.switch(ctx, prev, prev_state, next);
                }
                let end_kind = self.segment_end_kind(prev, prev_state);
                self.end_segment(cpu, prev, since, ctx.ts, flags, end_kind, prev_state);
                self.leave_cpu(cpu, prev, prev_state, ctx.ts);
            }
        }
        self.start_running(cpu, next, ctx.ts, 0);
    }

    /// `task` ran on `cpu` without the switch to it being seen (the CPU was unknown since
    /// `unknown_since`): a wait it was in ended unseen (no earlier than it began), and a
    /// CPU it was believed running on lost track of it.
    fn settle_unseen_run(&mut self, task: TaskId, cpu: Cpu, unknown_since: Nanos, time: Nanos) {
        if task == TaskId::IDLE {
            return;
        }
        match self.runtime[task.index()].state {
            State::Runnable { queue, waiting, .. } => {
                self.end_wait(task, unknown_since.max(waiting), WaitEnd::Lost, queue)
            }
            State::Running { cpu: other } if other != cpu => self.lose_track_elsewhere(other, task, time),
            _ => {}
        }
    }

    /// `task` is gone (its pid now names a new task): a wait it was in ends here, and a
    /// CPU it was believed running on loses track of it.
    fn abandon(&mut self, task: TaskId, time: Nanos) {
        match self.runtime[task.index()].state {
            State::Runnable { queue, .. } => self.end_wait(task, time, WaitEnd::Lost, queue),
            State::Running { cpu } => self.lose_track_elsewhere(cpu, task, time),
            _ => {}
        }
        self.runtime[task.index()].state = State::Unknown;
    }

    fn segment_end_kind(&self, task: TaskId, prev_state: u16) -> SegmentEnd {
        if task != TaskId::IDLE && (self.runtime[task.index()].exiting || prev_state & EXIT_STATES != 0) {
            SegmentEnd::Exited
        } else if is_runnable_state(prev_state) {
            SegmentEnd::Preempted
        } else {
            SegmentEnd::Blocked
        }
    }

    /// `task` stops running on `cpu`: preempted (runnable), blocked or gone.
    fn leave_cpu(&mut self, cpu: Cpu, task: TaskId, prev_state: u16, time: Nanos) {
        if task == TaskId::IDLE {
            return;
        }
        match self.segment_end_kind(task, prev_state) {
            SegmentEnd::Preempted => {
                self.enqueue(task, cpu, time, WaitCause::Preempted);
            }
            _ => self.runtime[task.index()].state = State::Blocked,
        }
    }

    /// `task` becomes runnable on `cpu`'s runqueue; returns its wait's row.
    fn enqueue(&mut self, task: TaskId, cpu: Cpu, time: Nanos, cause: WaitCause) -> Option<WaitId> {
        let wait = self.options.detail.waits().then(|| self.store.begin_wait(task, time, cause, cpu));
        let piece = self.start_queue_piece(cpu, task, wait, time);
        let runtime = &mut self.runtime[task.index()];
        runtime.state = State::Runnable { wait, queue: cpu, piece, waiting: time, queued: time };
        runtime.cpu = Some(cpu);
        wait
    }

    /// Pieces are recorded when they start, so each CPU's pieces are in start order.
    fn start_queue_piece(&mut self, cpu: Cpu, task: TaskId, wait: Option<WaitId>, time: Nanos) -> u32 {
        let state = &mut self.cpu_state[cpu.index()];
        if state.queued.is_empty() {
            state.queued_since = time;
        }
        self.runtime[task.index()].queue_slot = state.queued.len() as u32;
        state.queued.push(task);
        if !self.options.detail.queues() {
            return NO_ROW;
        }
        self.timelines[cpu.index()].queue.begin(time, wait)
    }

    /// Ends `task`'s wait at `time`; `cpu` is where it ran (when `how` is `Ran`).
    fn end_wait(&mut self, task: TaskId, time: Nanos, how: WaitEnd, cpu: Cpu) {
        let State::Runnable { wait, queue, piece, waiting, .. } = self.runtime[task.index()].state else { return };
        let time = time.max(waiting);
        self.end_queue_piece(queue, task, piece, time);
        if let Some(wait) = wait {
            self.store.end_wait(wait, time, how, cpu);
        }
        self.runtime[task.index()].state = State::Blocked;
    }

    fn end_queue_piece(&mut self, queue: Cpu, task: TaskId, piece: u32, end: Nanos) {
        let queued = &mut self.cpu_state[queue.index()].queued;
        let hint = self.runtime[task.index()].queue_slot as usize;
        let position = match queued.get(hint) {
            Some(&t) if t == task => Some(hint),
            _ => queued.iter().position(|&t| t == task),
        };
        if let Some(position) = position {
            queued.swap_remove(position);
            if let Some(&moved) = queued.get(position) {
                self.runtime[moved.index()].queue_slot = position as u32;
            }
        }
        if piece != NO_ROW {
            self.timelines[queue.index()].queue.end(piece, end);
        }
    }

    fn waking(&mut self, ctx: EventContext, waker: TaskId, task: TaskId, target_cpu: Option<Cpu>) {
        if task == TaskId::IDLE {
            return;
        }
        let runtime = self.runtime[task.index()];
        match runtime.state {
            State::Running { .. } | State::Runnable { .. } | State::Waking { .. } => return,
            State::New | State::Blocked | State::Unknown => {}
        }
        let prev_cpu = runtime.cpu.or(target_cpu);
        let wakeup = self.options.detail.wakeups().then(|| {
            self.store.begin_wakeup(ctx.ts, task, Some((waker, ctx.cpu)), prev_cpu, prev_cpu.unwrap_or(ctx.cpu))
        });
        self.runtime[task.index()].state = State::Waking { wakeup };
        if self.options.waking_enqueues {
            self.wakeup(ctx, task, target_cpu.unwrap_or(ctx.cpu), WakeupKind::Wakeup);
        }
    }

    fn wakeup(&mut self, ctx: EventContext, task: TaskId, target: Cpu, kind: WakeupKind) {
        if task == TaskId::IDLE {
            return;
        }
        let runtime = self.runtime[task.index()];
        let wakeup = match runtime.state {
            State::Running { .. } | State::Runnable { .. } => {
                self.anomalies.count(Anomaly::WakeupOfRunningTask, ctx.ts);
                return;
            }
            State::Waking { wakeup } => wakeup,
            State::New | State::Blocked | State::Unknown => {
                self.options.detail.wakeups().then(|| self.store.begin_wakeup(ctx.ts, task, None, runtime.cpu, target))
            }
        };
        if let Some(from) = runtime.cpu.filter(|&c| c != target) {
            self.migrated(ctx.ts, task, from, target, MigrationReason::Inferred);
        }
        let cause = if kind == WakeupKind::NewTask { WaitCause::NewTask } else { WaitCause::Wakeup };
        let wait = self.enqueue(task, target, ctx.ts, cause);
        if let Some(wakeup) = wakeup {
            self.store.enqueued(wakeup, kind, target, wait);
        }
    }

    fn migrate(&mut self, ctx: EventContext, mover: TaskId, task: TaskId, orig: Cpu, dest: Cpu) {
        if task == TaskId::IDLE || orig == dest {
            return;
        }
        let runtime = self.runtime[task.index()];
        if runtime.cpu.is_some_and(|c| c != orig) {
            self.anomalies.count(Anomaly::MigrateFromUnexpectedCpu, ctx.ts);
        }
        let by_stopper = self.comms.name(self.tasks.get(mover).comm_at(ctx.ts)).starts_with("migration/");
        let reason = match runtime.state {
            State::Waking { .. } => MigrationReason::WakeupPlacement,
            State::New => MigrationReason::ForkPlacement,
            _ if by_stopper => MigrationReason::Stopper,
            State::Runnable { .. } | State::Running { .. } => MigrationReason::LoadBalance,
            State::Blocked | State::Unknown => MigrationReason::Other,
        };
        if let State::Runnable { wait, queue, piece, waiting, .. } = runtime.state {
            self.end_queue_piece(queue, task, piece, ctx.ts);
            let piece = self.start_queue_piece(dest, task, wait, ctx.ts);
            self.runtime[task.index()].state = State::Runnable { wait, queue: dest, piece, waiting, queued: ctx.ts };
        }
        self.runtime[task.index()].cpu = Some(dest);
        self.migrated(ctx.ts, task, orig, dest, reason);
    }

    fn fork(&mut self, ctx: EventContext, parent: TaskId, child_pid: Pid, child_comm: Option<CommId>) {
        if child_pid.is_idle() {
            return;
        }
        if let Some(old) = self.tasks.by_pid(child_pid) {
            if self.tasks.get(old).exit.is_none() {
                self.anomalies.count(Anomaly::PidReused, ctx.ts);
            }
            self.abandon(old, ctx.ts);
        }
        let comm = child_comm.unwrap_or_else(|| self.comms.intern(b""));
        let child = self.tasks.create(child_pid, comm, ctx.ts);
        self.runtime.push(TaskRuntime { state: State::New, cpu: Some(ctx.cpu), ..TaskRuntime::NEW });
        let task = self.tasks.get_mut(child);
        task.parent = (parent != TaskId::IDLE).then_some(parent);
        task.forked = true;
    }

    fn exec(&mut self, ctx: EventContext, task: TaskId, filename: Option<CommId>) {
        if task == TaskId::IDLE {
            return;
        }
        let filename = filename.map_or(String::new(), |f| self.comms.name(f).to_string());
        let base = filename.rsplit('/').next().unwrap_or(&filename);
        let comm = truncate_comm(base.as_bytes());
        let comm = (!comm.is_empty()).then(|| self.comms.intern(comm));
        self.tasks.seen(task, ctx.ts, comm);
        self.tasks.get_mut(task).execs.push((ctx.ts, filename));
        self.first_exec.get_or_insert(task);
    }

    /// Closes what is still open at each CPU's last event and returns the model.
    pub fn finish(mut self) -> Model {
        let trace_end = self.cpu_state.iter().filter_map(|s| s.last_event).max().unwrap_or_default();
        for (timeline, state) in self.timelines.iter_mut().zip(&self.cpu_state) {
            (timeline.first_event, timeline.last_event) = (state.first_event, state.last_event);
        }
        for index in 0..self.cpu_state.len() {
            let cpu = Cpu(index as u32);
            let Some(end) = self.cpu_state[index].last_event else {
                continue;
            };
            match self.cpu_state[index].current {
                // An idle CPU stays idle until the recording ends: a switch would be in
                // the trace (the kernel overwrites its oldest events, never its newest).
                Current::Running { task: TaskId::IDLE, since, flags } => {
                    self.end_segment(cpu, TaskId::IDLE, since, trace_end, flags, SegmentEnd::TraceEnd, 0)
                }
                Current::Running { task, since, flags } => {
                    self.end_segment(cpu, task, since, end, flags, SegmentEnd::TraceEnd, 0)
                }
                Current::Uncertain { since, .. } => self.close_uncertain(cpu, since, end),
                Current::NotStarted => {}
            }
        }
        for index in 0..self.runtime.len() {
            let State::Runnable { wait, queue, piece, waiting, .. } = self.runtime[index].state else { continue };
            let end = self.cpu_state[queue.index()].last_event.unwrap_or(trace_end).max(waiting);
            if piece != NO_ROW {
                self.timelines[queue.index()].queue.end(piece, end);
            }
            if let Some(wait) = wait {
                self.store.close_wait(wait, end);
            }
        }
        let (waits, wakeups, migrations, streamed) = self.store.finish();
        // A streamed model's tables are empty: it has segments and tasks.
        let detail = if streamed { Detail::SEGMENTS } else { self.options.detail };
        self.timelines.iter_mut().for_each(|timeline| timeline.queue.index_ends());
        Model::from_parts(crate::model::Parts {
            cpus: self.timelines,
            tasks: self.tasks,
            comms: self.comms,
            waits,
            wakeups,
            migrations,
            anomalies: self.anomalies,
            first_exec: self.first_exec,
            detail,
        })
    }
}

/// A file name's first 15 bytes, as the kernel names a task after exec (not cut inside
/// a UTF-8 character, so the name stays readable).
fn truncate_comm(name: &[u8]) -> &[u8] {
    &name[..name.len().min(COMM_LEN)]
}

/// `prev_state` bits of a dead task on every kernel: EXIT_ZOMBIE and EXIT_DEAD are 0x10
/// and 0x20 in both the old and the 4.14+ encoding.
const EXIT_STATES: u16 = 0x30;

/// A switched-out task is still runnable when no sleeping bit of the low byte is set
/// (R is 0; the "preempted" flag sits above the low byte on every kernel version).
fn is_runnable_state(prev_state: u16) -> bool {
    prev_state & 0xff == 0
}
