//! The details behind a click, as the page's documents: the run under the mouse (what
//! preceded it, where its task went next), a followed task (its life, totals, moves and
//! wakeups), its state under the mouse on its state track, and the tasks waiting in a
//! runqueue under the mouse — each wait with who held the CPU it waited for
//! (`analysis::latency::wait_antagonists`, as `latency --task` counts them) — answered
//! from the model through `lookup` and `states`.

use crate::lookup::{self, WakeupInfo};
use crate::shown::{Shown, ShownTrace};
use crate::states::stretch_at;
use analysis::latency::wait_antagonists;
use analysis::states::ThreadState;
use documents::page::{
    self, FoundRun, FoundState, HeldWait, Holder, Move, NoRun, QueueAt, QueuedTask, Ran, RunAt, StateAt, TaskAnswer,
    TaskHead, WaitBefore, Waker, Wakeup,
};
use figures::palette::{color_of, color_of_name};
use model::{Cpu, Nanos, TaskId, WaitEnd, WaitId};
use std::collections::BTreeSet;

/// Items listed at most in one answer.
pub const LIST_LIMIT: usize = 2000;

/// The run on `cpu` that covers most of `[from, to)` (what the column under the mouse
/// shows), the wait before it and the CPU its task ran on next.
pub fn run_at(shown: &Shown, cpu: Cpu, from: Nanos, to: Nanos) -> RunAt {
    let model = shown.model();
    let Some(segment) = lookup::segment_at(model, cpu, from, to) else {
        return RunAt::Nothing(NoRun { found: false });
    };
    let index = shown.task_index();
    let next = lookup::next_cpu(model, index, segment.task, segment.end);
    let wait = lookup::wait_before(model, index, segment.task, cpu, segment.start).map(|wait| WaitBefore {
        start: shown.relative(wait.start),
        end: shown.relative(wait.end),
        cause: wait_cause(wait.cause),
        wakeup: wait.wakeup.map(|w| wakeup(shown, &w)),
    });
    let task =
        TaskHead { comm: model.comm_at(segment.task, segment.start).to_string(), ..head(&shown.trace, segment.task) };
    RunAt::Found(Box::new(FoundRun {
        task,
        found: true,
        cpu: cpu.0,
        start: shown.relative(segment.start),
        end: shown.relative(segment.end),
        ended: lookup::ending(&segment),
        next_cpu: next.map(|c| c.0),
        wait,
    }))
}

/// A followed task: its whole life's totals, and its moves and wakeups within
/// `[start, end)` (at most [`LIST_LIMIT`] of each).
pub fn task(shown: &Shown, task: TaskId, start: Nanos, end: Nanos) -> TaskAnswer {
    let model = shown.model();
    let index = shown.task_index();
    let info = model.tasks().get(task);
    let runs = shown.runs.runs_of(model, &[task]).remove(0);
    let runtime: u64 = runs.iter().map(|r| r.end.saturating_sub(r.start).0).sum();
    let (waits, waited) = lookup::wait_totals(model, index, task);
    let migrations = lookup::migrations_of(model, index, task);
    // Moves between consecutive runs on different CPUs, drawn as arrows.
    let moves = runs
        .windows(2)
        .filter(|pair| pair[0].cpu != pair[1].cpu && pair[1].start >= start && pair[0].end < end)
        .take(LIST_LIMIT)
        .map(|pair| Move {
            from: pair[0].cpu.0,
            left: shown.relative(pair[0].end),
            to: pair[1].cpu.0,
            arrived: shown.relative(pair[1].start),
        });
    let (wakeups, wakeup_count) = lookup::wakeups_in(model, index, task, start, end, LIST_LIMIT);
    let cpus_used: BTreeSet<u32> = runs.iter().map(|r| r.cpu.0).collect();
    TaskAnswer {
        task: head(&shown.trace, task),
        names: info.comms.iter().map(|&(_, c)| model.comms().name(c).to_string()).collect(),
        parent: info.parent.map(|p| head(&shown.trace, p)),
        forked: info.forked,
        first_seen: shown.relative(info.first_seen),
        exit: info.exit.map(|t| shown.relative(t)),
        runs: runs.len(),
        runtime,
        waits,
        waited: waited.0,
        migrations: migrations.len(),
        cpus_used: cpus_used.into_iter().collect(),
        first_run: runs.first().map(|r| shown.relative(r.start)),
        last_run: runs.last().map(|r| shown.relative(r.end)),
        moves: moves.collect(),
        wakeups: wakeups.iter().map(|w| wakeup(shown, w)).collect(),
        wakeups_in_range: wakeup_count,
    }
}

/// Holders of a CPU listed per wait at most.
const HOLDERS: usize = 8;
/// Waits listed per runqueue under the mouse at most.
const QUEUED: usize = 6;

/// A followed task's state on its state track under the mouse: the stretch that covers
/// most of `[from, to)` and, when it is runnable, who held the CPU it waited for.
pub fn state_at(shown: &Shown, task: TaskId, from: Nanos, to: Nanos) -> StateAt {
    let states = shown.states.states_of(shown.model(), task);
    let Some(stretch) = stretch_at(&states, from, to) else {
        return StateAt::Nothing(NoRun { found: false });
    };
    StateAt::Found(Box::new(FoundState {
        found: true,
        task: task.index(),
        state: thread_state(stretch.state),
        start: shown.relative(stretch.start),
        end: shown.relative(stretch.end),
        wait: stretch.wait.map(|wait| held_wait(&shown.trace, wait)),
    }))
}

/// The waits in `cpu`'s runqueue during `[from, to)`, longest first, each with who held
/// the CPUs it waited for.
pub fn queue_at(shown: &Shown, cpu: Cpu, from: Nanos, to: Nanos) -> QueueAt {
    let model = shown.model();
    let mut waits: Vec<WaitId> = Vec::new();
    if let Some(timeline) = model.cpu(cpu) {
        let queue = timeline.queue();
        let starting = queue.first_starting_at_or_after(from)..queue.first_starting_after(to);
        let pieces = queue.open_at(from).chain(starting).map(|i| queue.wait(i));
        waits.extend(pieces.flatten());
    }
    waits.sort_unstable();
    waits.dedup();
    let length = |&w: &WaitId| model.waits().get(w).duration();
    waits.sort_by(|a, b| length(b).cmp(&length(a)).then(a.cmp(b)));
    QueueAt {
        cpu: cpu.0,
        waiting_count: waits.len(),
        waiting: waits
            .iter()
            .take(QUEUED)
            .map(|&wait| {
                let row = model.waits().get(wait);
                let task =
                    TaskHead { comm: model.comm_at(row.task, row.start).to_string(), ..head(&shown.trace, row.task) };
                QueuedTask { task, wait: held_wait(&shown.trace, wait) }
            })
            .collect(),
    }
}

/// A wait and who held the CPUs it waited for.
pub fn held_wait(trace: &ShownTrace, wait: WaitId) -> HeldWait {
    let model = &trace.model;
    let row = model.waits().get(wait);
    let holders = wait_antagonists(model, wait);
    HeldWait {
        start: trace.relative(row.start),
        end: trace.relative(row.end),
        cause: wait_cause(row.cause),
        ran: row.end_kind == WaitEnd::Ran,
        cpus: holders.cpus.iter().map(|c| c.0).collect(),
        holder_count: holders.antagonists.len(),
        held_by: holders
            .antagonists
            .iter()
            .take(HOLDERS)
            .map(|a| {
                let info = model.tasks().get(a.task);
                Holder {
                    task: a.task.index(),
                    pid: info.pid.0,
                    comm: model.comms().name(info.last_comm()).to_string(),
                    held: a.held_ns,
                    kernel_thread: a.kernel_thread,
                }
            })
            .collect(),
    }
}

/// A thread state as the page's documents name it.
fn thread_state(state: ThreadState) -> page::ThreadState {
    match state {
        ThreadState::Running => page::ThreadState::Running,
        ThreadState::RunnableWakeup => page::ThreadState::RunnableWakeup,
        ThreadState::RunnablePreempted => page::ThreadState::RunnablePreempted,
        ThreadState::Sleeping => page::ThreadState::Sleeping,
        ThreadState::Uninterruptible => page::ThreadState::Uninterruptible,
        ThreadState::Dead => page::ThreadState::Dead,
        ThreadState::Unknown => page::ThreadState::Unknown,
    }
}

/// A task under its last name, with its colours.
pub fn head(trace: &ShownTrace, task: TaskId) -> TaskHead {
    let model = &trace.model;
    let info = model.tasks().get(task);
    let comm = model.comms().name(info.last_comm());
    TaskHead {
        task: task.index(),
        pid: info.pid.0,
        comm: comm.to_string(),
        pid_color: color_of(info.pid.0 as u64).hex(),
        command_color: color_of_name(comm).hex(),
    }
}

fn wakeup(shown: &Shown, wakeup: &WakeupInfo) -> Wakeup {
    let model = shown.model();
    let waker = wakeup.waker.filter(|&t| t != TaskId::IDLE).map(|t| Waker {
        task: t.index(),
        pid: model.tasks().get(t).pid.0,
        comm: model.comm_at(t, wakeup.time).to_string(),
    });
    Wakeup {
        t: shown.relative(wakeup.time),
        waker,
        waker_cpu: wakeup.waker_cpu.map(|c| c.0),
        prev_cpu: wakeup.prev_cpu.map(|c| c.0),
        target_cpu: wakeup.target_cpu.0,
        ran: wakeup.ran.map(|(t, cpu)| Ran { t: shown.relative(t), cpu: cpu.0 }),
    }
}

fn wait_cause(cause: model::WaitCause) -> page::WaitCause {
    match cause {
        model::WaitCause::Wakeup => page::WaitCause::Wakeup,
        model::WaitCause::NewTask => page::WaitCause::NewTask,
        model::WaitCause::Preempted => page::WaitCause::Preempted,
    }
}
