//! The model as tables: tasks and their names, run segments, waits and their runqueue
//! pieces, wakeups, migrations, `check`'s incidents, and per-CPU facts — clipped to the
//! export's window, for the tasks its filter accepts, so that sums over them equal
//! `schedlens stats` to the nanosecond. All reading of the model is in this file.

use super::columns::{Kind, Spec, TableWriter};
use super::layout::Layout;
use crate::{Input, Result};
use model::{
    Cpu, MigrationReason, Model, Nanos, QueuePiece, SegmentEnd, TaskId, WaitCause, WaitEnd, WaitId, WakeupKind,
};

/// Writes every model table; returns (table, rows) pairs.
pub fn write_all(input: &Input<'_>, layout: &Layout) -> Result<Vec<(&'static str, u64)>> {
    Ok(vec![
        ("tasks", tasks(input, layout)?),
        ("task_names", task_names(input, layout)?),
        ("segments", segments(input, layout)?),
        ("waits", waits(input, layout)?),
        ("runqueue", runqueue(input, layout)?),
        ("wakeups", wakeups(input, layout)?),
        ("migrations", migrations(input, layout)?),
        ("incidents", incidents(input, layout)?),
        ("cpus", cpus(input, layout)?),
        ("uncertain", uncertain(input, layout)?),
    ])
}

fn table(layout: &Layout, name: &str, specs: Vec<Spec>) -> Result<TableWriter> {
    TableWriter::create(&layout.table_file(name), specs)
}

fn keeps_task(input: &Input<'_>, task: TaskId) -> bool {
    task == TaskId::IDLE || input.scope.accepts(task)
}

fn comm_at(model: &Model, task: TaskId, time: Nanos) -> &str {
    model.comm_at(task, time)
}

fn tasks(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let model = input.model;
    let mut t = table(
        layout,
        "tasks",
        vec![
            Spec::new("task", Int),
            Spec::new("pid", Int),
            Spec::new("comm", Text),
            Spec::new("first_comm", Text),
            Spec::nullable("parent_task", Int),
            Spec::nullable("parent_pid", Int),
            Spec::new("forked", Bool),
            Spec::new("first_seen_ns", Time),
            Spec::nullable("exit_ns", Int),
            Spec::nullable("exec", Text),
        ],
    )?;
    for (id, task) in model.tasks().iter().filter(|(id, _)| keeps_task(input, *id)) {
        let first = task.comms.first().map_or("", |&(_, c)| model.comms().name(c));
        let parent = task.parent.map(|p| (p.index() as i64, i64::from(model.tasks().get(p).pid.0)));
        t.row()
            .int(id.index() as i64)
            .int(task.pid.0.into())
            .text(model.comms().name(task.last_comm()))
            .text(first)
            .opt_int(parent.map(|p| p.0))
            .opt_int(parent.map(|p| p.1))
            .bool(task.forked)
            .int(task.first_seen.0 as i64)
            .opt_int(task.exit.map(|t| t.0 as i64))
            .opt_text(task.execs.last().map(|(_, file)| file.as_str()))
            .end()?;
    }
    t.finish()
}

fn task_names(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let model = input.model;
    let specs =
        vec![Spec::new("task", Int), Spec::new("pid", Int), Spec::new("since_ns", Time), Spec::new("comm", Text)];
    let mut t = table(layout, "task_names", specs)?;
    for (id, task) in model.tasks().iter().filter(|(id, _)| keeps_task(input, *id)) {
        for &(since, comm) in &task.comms {
            t.row()
                .int(id.index() as i64)
                .int(task.pid.0.into())
                .int(since.0 as i64)
                .text(model.comms().name(comm))
                .end()?;
        }
    }
    t.finish()
}

fn segments(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let (model, window) = (input.model, input.scope.window);
    let mut t = table(
        layout,
        "segments",
        vec![
            Spec::new("cpu", Int),
            Spec::new("task", Int),
            Spec::new("pid", Int),
            Spec::new("comm", Text),
            Spec::new("start_ns", Time),
            Spec::new("end_ns", Time),
            Spec::new("end_kind", Text),
            Spec::new("switch_in", Bool),
            Spec::new("prev_state", Int),
        ],
    )?;
    for timeline in model.cpus() {
        let segments = &timeline.segments();
        for i in segments.overlapping(window.start, window.end) {
            let segment = segments.get(i);
            if !keeps_task(input, segment.task) {
                continue;
            }
            let (start, end) = window.clip(segment.start, segment.end);
            t.row()
                .int(timeline.cpu().0.into())
                .int(segment.task.index() as i64)
                .int(model.tasks().get(segment.task).pid.0.into())
                .text(comm_at(model, segment.task, segment.start))
                .int(start.0 as i64)
                .int(end.0 as i64)
                .text(segment_end(segment.end_kind))
                .bool(segment.started_by_switch() && window.contains(segment.start))
                .int(segment.prev_state.into())
                .end()?;
        }
    }
    t.finish()
}

/// The wait a runqueue piece is part of (the export's model has every table).
fn wait_of(piece: &QueuePiece) -> WaitId {
    piece.wait.expect("an exported model has waits")
}

/// The CPU whose runqueue each wait was in last (where it got the CPU, when it did).
fn last_queue_of_waits(model: &Model) -> Vec<Option<(Nanos, Cpu)>> {
    let mut last = vec![None; model.waits().len()];
    for timeline in model.cpus() {
        for piece in timeline.queue().iter() {
            let slot: &mut Option<(Nanos, Cpu)> = &mut last[wait_of(&piece).index()];
            if slot.is_none_or(|(start, _)| start <= piece.start) {
                *slot = Some((piece.start, timeline.cpu()));
            }
        }
    }
    last
}

fn waits(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let (model, window) = (input.model, input.scope.window);
    let mut t = table(
        layout,
        "waits",
        vec![
            Spec::new("wait", Int),
            Spec::new("task", Int),
            Spec::new("pid", Int),
            Spec::new("comm", Text),
            Spec::nullable("cpu", Int),
            Spec::new("start_ns", Time),
            Spec::new("end_ns", Time),
            Spec::new("cause", Text),
            Spec::new("end_kind", Text),
            Spec::nullable("ran_on", Int),
        ],
    )?;
    let queues = last_queue_of_waits(model);
    for (index, wait) in model.waits().iter().enumerate() {
        if !input.scope.accepts(wait.task) || window.overlap(wait.start, wait.end) == Nanos::ZERO {
            continue;
        }
        let (start, end) = window.clip(wait.start, wait.end);
        t.row()
            .int(index as i64)
            .int(wait.task.index() as i64)
            .int(model.tasks().get(wait.task).pid.0.into())
            .text(comm_at(model, wait.task, wait.start))
            .opt_int(queues[index].map(|(_, cpu)| cpu.0.into()))
            .int(start.0 as i64)
            .int(end.0 as i64)
            .text(wait_cause(wait.cause))
            .text(wait_end(wait.end_kind))
            .opt_int((wait.end_kind == WaitEnd::Ran).then_some(wait.ran_on.0.into()))
            .end()?;
    }
    t.finish()
}

fn runqueue(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let (model, window) = (input.model, input.scope.window);
    let specs = vec![
        Spec::new("cpu", Int),
        Spec::new("wait", Int),
        Spec::new("task", Int),
        Spec::new("pid", Int),
        Spec::new("start_ns", Time),
        Spec::new("end_ns", Time),
    ];
    let mut t = table(layout, "runqueue", specs)?;
    for timeline in model.cpus() {
        for piece in timeline.queue().iter() {
            let wait = wait_of(&piece);
            let task = model.waits().get(wait).task;
            if !input.scope.accepts(task) || window.overlap(piece.start, piece.end) == Nanos::ZERO {
                continue;
            }
            let (start, end) = window.clip(piece.start, piece.end);
            t.row()
                .int(timeline.cpu().0.into())
                .int(wait.index() as i64)
                .int(task.index() as i64)
                .int(model.tasks().get(task).pid.0.into())
                .int(start.0 as i64)
                .int(end.0 as i64)
                .end()?;
        }
    }
    t.finish()
}

fn wakeups(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let (model, window) = (input.model, input.scope.window);
    let mut t = table(
        layout,
        "wakeups",
        vec![
            Spec::new("time_ns", Time),
            Spec::new("kind", Text),
            Spec::new("task", Int),
            Spec::new("pid", Int),
            Spec::new("comm", Text),
            Spec::nullable("waking_ns", Int),
            Spec::nullable("waker_pid", Int),
            Spec::nullable("waker_cpu", Int),
            Spec::nullable("prev_cpu", Int),
            Spec::new("target_cpu", Int),
            Spec::nullable("enqueued_ns", Int),
            Spec::nullable("ran_ns", Int),
            Spec::nullable("ran_cpu", Int),
            Spec::nullable("latency_ns", Int),
        ],
    )?;
    for wakeup in model.wakeups().iter() {
        let enqueued = model.wakeup_enqueued(&wakeup);
        let Some(time) = wakeup.waking.or(enqueued) else { continue };
        if !input.scope.accepts(wakeup.wakee) || !window.contains(time) {
            continue;
        }
        let ran = model.wakeup_ran(&wakeup);
        let ns = |t: Option<Nanos>| t.map(|t| t.0 as i64);
        let cpu = |c: Option<Cpu>| c.map(|c| i64::from(c.0));
        t.row()
            .int(time.0 as i64)
            .text(match wakeup.kind {
                WakeupKind::Wakeup => "wakeup",
                WakeupKind::NewTask => "new-task",
            })
            .int(wakeup.wakee.index() as i64)
            .int(model.tasks().get(wakeup.wakee).pid.0.into())
            .text(comm_at(model, wakeup.wakee, time))
            .opt_int(ns(wakeup.waking))
            .opt_int(wakeup.waker.map(|w| model.tasks().get(w).pid.0.into()))
            .opt_int(cpu(wakeup.waker_cpu))
            .opt_int(cpu(wakeup.prev_cpu))
            .int(wakeup.target_cpu.0.into())
            .opt_int(ns(enqueued))
            .opt_int(ns(ran.map(|r| r.0)))
            .opt_int(cpu(ran.map(|r| r.1)))
            .opt_int(ns(model.wakeup_latency(&wakeup)))
            .end()?;
    }
    t.finish()
}

fn migrations(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let (model, window) = (input.model, input.scope.window);
    let specs = vec![
        Spec::new("time_ns", Time),
        Spec::new("task", Int),
        Spec::new("pid", Int),
        Spec::new("comm", Text),
        Spec::new("from_cpu", Int),
        Spec::new("to_cpu", Int),
        Spec::new("reason", Text),
    ];
    let mut t = table(layout, "migrations", specs)?;
    for migration in model.migrations().iter() {
        if !input.scope.accepts(migration.task) || !window.contains(migration.time) {
            continue;
        }
        t.row()
            .int(migration.time.0 as i64)
            .int(migration.task.index() as i64)
            .int(model.tasks().get(migration.task).pid.0.into())
            .text(comm_at(model, migration.task, migration.time))
            .int(migration.from.0.into())
            .int(migration.to.0.into())
            .text(migration_reason(migration.reason))
            .end()?;
    }
    t.finish()
}

fn incidents(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let specs = vec![
        Spec::new("rank", Int),
        Spec::new("kind", Text),
        Spec::new("start_ns", Time),
        Spec::new("end_ns", Time),
        Spec::new("cpus", IntList),
        Spec::new("pids", IntList),
        Spec::new("lost_cpu_ns", Int),
        Spec::new("pinning", Text),
        Spec::new("explanation", Text),
    ];
    let mut t = table(layout, "incidents", specs)?;
    for (rank, incident) in input.incidents().iter().enumerate() {
        t.row()
            .int(rank as i64 + 1)
            .text(incident.kind.name())
            .int(incident.start.0 as i64)
            .int(incident.end.0 as i64)
            .ints(incident.cpus.iter().map(|c| c.0.into()))
            .ints(incident.pids.iter().map(|p| p.0.into()))
            .int(incident.lost_cpu_ns as i64)
            .text(incident.pinning.name())
            .text(&incident.explanation)
            .end()?;
    }
    t.finish()
}

fn cpus(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let specs = vec![
        Spec::new("cpu", Int),
        Spec::nullable("first_event_ns", Int),
        Spec::nullable("last_event_ns", Int),
        Spec::new("lost_events", Int),
        Spec::new("lost_unknown", Int),
    ];
    let mut t = table(layout, "cpus", specs)?;
    for timeline in input.model.cpus() {
        t.row()
            .int(timeline.cpu().0.into())
            .opt_int(timeline.first_event().map(|t| t.0 as i64))
            .opt_int(timeline.last_event().map(|t| t.0 as i64))
            .int(timeline.lost_events() as i64)
            .int(timeline.lost_unknown() as i64)
            .end()?;
    }
    t.finish()
}

fn uncertain(input: &Input<'_>, layout: &Layout) -> Result<u64> {
    use Kind::*;
    let window = input.scope.window;
    let specs = vec![Spec::new("cpu", Int), Spec::new("start_ns", Time), Spec::new("end_ns", Time)];
    let mut t = table(layout, "uncertain", specs)?;
    for timeline in input.model.cpus() {
        for &(start, end) in timeline.uncertain() {
            if window.overlap(start, end) > Nanos::ZERO {
                let (start, end) = window.clip(start, end);
                t.row().int(timeline.cpu().0.into()).int(start.0 as i64).int(end.0 as i64).end()?;
            }
        }
    }
    t.finish()
}

pub fn segment_end(kind: SegmentEnd) -> &'static str {
    match kind {
        SegmentEnd::Preempted => "preempted",
        SegmentEnd::Blocked => "blocked",
        SegmentEnd::Exited => "exited",
        SegmentEnd::TraceEnd => "trace-end",
        SegmentEnd::Lost => "lost",
        SegmentEnd::Unrecorded => "unrecorded",
    }
}

fn wait_cause(cause: WaitCause) -> &'static str {
    match cause {
        WaitCause::Wakeup => "wakeup",
        WaitCause::NewTask => "new-task",
        WaitCause::Preempted => "preempted",
    }
}

fn wait_end(kind: WaitEnd) -> &'static str {
    match kind {
        WaitEnd::Ran => "ran",
        WaitEnd::Unrecorded => "unrecorded",
        WaitEnd::TraceEnd => "trace-end",
        WaitEnd::Lost => "lost",
    }
}

pub fn migration_reason(reason: MigrationReason) -> &'static str {
    match reason {
        MigrationReason::WakeupPlacement => "wakeup-placement",
        MigrationReason::ForkPlacement => "fork-placement",
        MigrationReason::LoadBalance => "load-balance",
        MigrationReason::Stopper => "stopper",
        MigrationReason::Other => "other",
        MigrationReason::Inferred => "inferred",
    }
}
