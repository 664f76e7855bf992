//! The viewer's questions about single runs and single tasks, answered from the model:
//! which run is under the mouse, how it ended and what it waited for before, and every
//! run, migration and wakeup of a followed task. This is the one module that reads the
//! model's tables directly (the figures crate reads them for tiles), so a change of the
//! model's API touches this file only.
//!
//! The model has no per-task index; the viewer builds one ([`TaskIndex`]: each task's
//! waits, wakeups and migrations, 4 bytes per row) once, in the background, and finds a
//! followed task's runs with one scan of the segments, cached.

use crate::recent::Recent;
use model::{Cpu, MigrationId, Model, Nanos, RowId, Segment, SegmentEnd, TaskId, WaitCause, WaitEnd, WaitId, WakeupId};
use std::sync::Arc;

/// Rows of one table grouped by task: `items[offsets[t]..offsets[t + 1]]` are task `t`'s,
/// in table order (time order for every table used here).
#[derive(Debug)]
struct ByTask<Id> {
    offsets: Vec<u32>,
    items: Vec<Id>,
}

impl<Id: RowId> ByTask<Id> {
    /// `owners()` gives each row's id and task, in row order.
    fn build<I: Iterator<Item = (Id, TaskId)>>(tasks: usize, owners: impl Fn() -> I) -> ByTask<Id> {
        let mut offsets = vec![0u32; tasks + 1];
        for (_, task) in owners() {
            if let Some(count) = offsets.get_mut(task.index() + 1) {
                *count += 1;
            }
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        let mut next = offsets.clone();
        let mut items = vec![None; *offsets.last().unwrap_or(&0) as usize];
        for (row, task) in owners() {
            if let Some(slot) = next.get_mut(task.index()) {
                items[*slot as usize] = Some(row);
                *slot += 1;
            }
        }
        ByTask { offsets, items: items.into_iter().map(|row| row.expect("every slot filled")).collect() }
    }

    fn of(&self, task: TaskId) -> &[Id] {
        let (Some(&a), Some(&b)) = (self.offsets.get(task.index()), self.offsets.get(task.index() + 1)) else {
            return &[];
        };
        &self.items[a as usize..b as usize]
    }
}

/// Each task's waits, wakeups and migrations.
#[derive(Debug)]
pub struct TaskIndex {
    waits: ByTask<WaitId>,
    wakeups: ByTask<WakeupId>,
    migrations: ByTask<MigrationId>,
}

impl TaskIndex {
    pub fn build(model: &Model) -> TaskIndex {
        let tasks = model.tasks().len();
        let (waits, wakeups, migrations) = (model.waits(), model.wakeups(), model.migrations());
        TaskIndex {
            waits: ByTask::build(tasks, || waits.ids().zip(waits.iter().map(|w| w.task))),
            wakeups: ByTask::build(tasks, || wakeups.ids().zip(wakeups.iter().map(|w| w.wakee))),
            migrations: ByTask::build(tasks, || migrations.ids().zip(migrations.iter().map(|m| m.task))),
        }
    }
}

/// One run of a task: a segment and its CPU.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub cpu: Cpu,
    pub start: Nanos,
    pub end: Nanos,
    pub end_kind: SegmentEnd,
}

/// Runs of followed and highlighted tasks, found by one scan of all segments and kept
/// for the tasks asked for most recently.
#[derive(Debug)]
pub struct RunCache(Recent<TaskId, Vec<Run>>);

/// Tasks whose runs are kept.
const KEPT_TASKS: usize = 64;

impl Default for RunCache {
    fn default() -> RunCache {
        RunCache(Recent::new(KEPT_TASKS))
    }
}

impl RunCache {
    /// The runs of each task, in time order (a scan for those not cached yet).
    pub fn runs_of(&self, model: &Model, tasks: &[TaskId]) -> Vec<Arc<Vec<Run>>> {
        let missing: Vec<TaskId> = tasks.iter().copied().filter(|task| self.0.get(task).is_none()).collect();
        let found: Vec<(TaskId, Arc<Vec<Run>>)> =
            scan_runs(model, &missing).into_iter().map(|(task, runs)| (task, self.0.put(task, runs))).collect();
        let known = |task: &TaskId| found.iter().find(|(t, _)| t == task).map(|(_, runs)| runs.clone());
        tasks.iter().map(|task| known(task).or_else(|| self.0.get(task)).unwrap_or_default()).collect()
    }
}

fn scan_runs(model: &Model, tasks: &[TaskId]) -> Vec<(TaskId, Vec<Run>)> {
    if tasks.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<(TaskId, Vec<Run>)> = tasks.iter().map(|&t| (t, Vec::new())).collect();
    for timeline in model.cpus() {
        for segment in timeline.segments().iter() {
            if let Some(slot) = found.iter_mut().find(|(t, _)| *t == segment.task) {
                let run =
                    Run { cpu: timeline.cpu(), start: segment.start, end: segment.end, end_kind: segment.end_kind };
                slot.1.push(run);
            }
        }
    }
    for (_, runs) in &mut found {
        runs.sort_by_key(|r| (r.start, r.cpu));
    }
    found
}

/// The run under the mouse: on `cpu`, among the segments overlapping `[from, to)`, the
/// non-idle one that covers most of it (what the column shows).
pub fn segment_at(model: &Model, cpu: Cpu, from: Nanos, to: Nanos) -> Option<Segment> {
    let segments = model.cpus().get(cpu.index())?.segments();
    segments
        .overlapping(from, to)
        .map(|i| segments.get(i))
        .filter(|s| s.task != TaskId::IDLE)
        .max_by_key(|s| (s.end.min(to).saturating_sub(s.start.max(from)), std::cmp::Reverse(s.start)))
}

/// How a run ended, in words.
pub fn ending(segment: &Segment) -> String {
    match segment.end_kind {
        SegmentEnd::Preempted => "preempted (still runnable)".into(),
        SegmentEnd::Blocked => format!("slept ({})", state_letters(segment.prev_state)),
        SegmentEnd::Exited => "exited".into(),
        SegmentEnd::TraceEnd => "still running at the end of the trace".into(),
        SegmentEnd::Lost => "unknown: events were lost".into(),
        SegmentEnd::Unrecorded => "switched out without a recorded sched_switch".into(),
    }
}

/// `prev_state` as `sched_switch` prints it (S, D, T, t, X, Z, P, I).
fn state_letters(state: u16) -> String {
    const LETTERS: [(u16, char); 8] =
        [(1, 'S'), (2, 'D'), (4, 'T'), (8, 't'), (16, 'X'), (32, 'Z'), (64, 'P'), (128, 'I')];
    let letters: String = LETTERS.iter().filter(|(bit, _)| state & bit != 0).map(|(_, c)| *c).collect();
    if letters.is_empty() { "R".into() } else { letters }
}

/// What preceded a run: the wait that ended when it began, and the wakeup that began it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitBefore {
    pub start: Nanos,
    pub end: Nanos,
    pub cause: WaitCause,
    pub wakeup: Option<WakeupInfo>,
}

/// Who woke a task, from where, to where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WakeupInfo {
    pub time: Nanos,
    pub waker: Option<TaskId>,
    pub waker_cpu: Option<Cpu>,
    pub prev_cpu: Option<Cpu>,
    pub target_cpu: Cpu,
    /// When and where the wakee then ran.
    pub ran: Option<(Nanos, Cpu)>,
}

/// The wait of `task` that ended with its run starting at `start` on `cpu`.
pub fn wait_before(model: &Model, index: &TaskIndex, task: TaskId, cpu: Cpu, start: Nanos) -> Option<WaitBefore> {
    let waits = index.waits.of(task);
    let upto = waits.partition_point(|&w| model.waits().get(w).start <= start);
    let found = waits[..upto].iter().rev().take(4).copied().find(|&w| {
        let wait = model.waits().get(w);
        wait.end == start && wait.ran_on == cpu && wait.end_kind == WaitEnd::Ran
    })?;
    let wait = model.waits().get(found);
    let wakeup = index.wakeups.of(task).iter().rev().find_map(|&w| {
        let wakeup = model.wakeups().get(w);
        (wakeup.wait == Some(found)).then(|| wakeup_info(model, &wakeup))
    });
    Some(WaitBefore { start: wait.start, end: wait.end, cause: wait.cause, wakeup })
}

fn wakeup_info(model: &Model, wakeup: &model::Wakeup) -> WakeupInfo {
    WakeupInfo {
        time: wakeup.waking.or_else(|| model.wakeup_enqueued(wakeup)).unwrap_or_default(),
        waker: wakeup.waker,
        waker_cpu: wakeup.waker_cpu,
        prev_cpu: wakeup.prev_cpu,
        target_cpu: wakeup.target_cpu,
        ran: model.wakeup_ran(wakeup),
    }
}

/// The CPU of the task's next run after `end`, when the trace shows it.
pub fn next_cpu(model: &Model, index: &TaskIndex, task: TaskId, end: Nanos) -> Option<Cpu> {
    let waits = index.waits.of(task);
    let from = waits.partition_point(|&w| model.waits().get(w).start < end);
    let wait = model.waits().get(*waits.get(from)?);
    (wait.end_kind == WaitEnd::Ran).then_some(wait.ran_on)
}

/// A task's wakeups (who woke it, from where) with their time in `[from, to)`, at most
/// `limit`, and how many there were in all.
pub fn wakeups_in(
    model: &Model,
    index: &TaskIndex,
    task: TaskId,
    from: Nanos,
    to: Nanos,
    limit: usize,
) -> (Vec<WakeupInfo>, usize) {
    let all: Vec<WakeupInfo> = index
        .wakeups
        .of(task)
        .iter()
        .map(|&w| wakeup_info(model, &model.wakeups().get(w)))
        .filter(|w| w.time >= from && w.time < to)
        .collect();
    let count = all.len();
    (all.into_iter().take(limit).collect(), count)
}

/// A task's recorded migrations: (time, from, to, reason).
pub fn migrations_of(model: &Model, index: &TaskIndex, task: TaskId) -> Vec<model::Migration> {
    index.migrations.of(task).iter().map(|&m| model.migrations().get(m)).collect()
}

/// A task's totals over the whole trace: waits, the time waited, wakeups.
pub fn wait_totals(model: &Model, index: &TaskIndex, task: TaskId) -> (usize, Nanos) {
    let waits = index.waits.of(task);
    let waited = waits.iter().map(|&w| model.waits().get(w).duration()).fold(Nanos(0), |a, b| a + b);
    (waits.len(), waited)
}

/// The task with `pid` alive at `time` (the latest one created by then), if any.
pub fn task_of_pid(model: &Model, pid: model::Pid, time: Nanos) -> Option<TaskId> {
    model
        .tasks()
        .iter()
        .filter(|(_, task)| task.pid == pid && task.first_seen <= time.max(model.start()))
        .max_by_key(|(_, task)| task.first_seen)
        .or_else(|| model.tasks().iter().find(|(_, task)| task.pid == pid))
        .map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::scenario::*;

    /// 0: AAAABB....   B waits behind A from 20 to 40, then sleeps; A is woken by B
    /// 1: ......AA..   onto CPU 1 at 60 and runs there.
    fn model() -> Model {
        Scenario::new(2, &[(1, "alpha"), (2, "beta")])
            .other(0, 0, 1)
            .wake(20, 0, 1, 2, 0)
            .switch(40, 0, 1, S, 2)
            .wake(55, 0, 2, 1, 1)
            .switch(60, 0, 2, S, 0)
            .switch(60, 1, 0, R, 1)
            .switch(80, 1, 1, S, 0)
            .other(100, 0, 0)
            .other(100, 1, 0)
            .finish()
    }

    fn task(model: &Model, pid: i32) -> TaskId {
        task_of_pid(model, model::Pid(pid), Nanos(0)).unwrap()
    }

    #[test]
    fn the_run_under_the_mouse_and_what_came_before() {
        let model = model();
        let index = TaskIndex::build(&model);
        let run = segment_at(&model, Cpu(0), Nanos(35), Nanos(50)).unwrap();
        assert_eq!((run.task, run.start, run.end), (task(&model, 2), Nanos(40), Nanos(60)));
        assert_eq!(ending(&run), "slept (S)");
        let before = wait_before(&model, &index, run.task, Cpu(0), run.start).unwrap();
        assert_eq!((before.start, before.end, before.cause), (Nanos(20), Nanos(40), WaitCause::Wakeup));
        let wakeup = before.wakeup.unwrap();
        assert_eq!((wakeup.waker, wakeup.target_cpu), (Some(task(&model, 1)), Cpu(0)));
        let alpha = task(&model, 1);
        assert_eq!(next_cpu(&model, &index, alpha, Nanos(40)), Some(Cpu(1)));
        assert!(segment_at(&model, Cpu(1), Nanos(0), Nanos(50)).is_none(), "idle only");
    }

    #[test]
    fn runs_of_a_task_across_cpus() {
        let model = model();
        let cache = RunCache::default();
        let alpha = task(&model, 1);
        let runs = cache.runs_of(&model, &[alpha]);
        let cpus: Vec<(u32, u64, u64)> = runs[0].iter().map(|r| (r.cpu.0, r.start.0, r.end.0)).collect();
        assert_eq!(cpus, [(0, 0, 40), (1, 60, 80)]);
        assert!(Arc::ptr_eq(&runs[0], &cache.runs_of(&model, &[alpha])[0]), "cached");
    }
}
