//! Scenario tests: tiny hand-built event streams, each checked against an ASCII drawing of
//! the timeline the model must build (see `model::scenario` for how to read them).

use model::scenario::*;
use model::*;

fn task(model: &Model, pid: i32) -> TaskId {
    model.tasks().by_pid(Pid(pid)).expect("task exists")
}

#[test]
fn preemption_puts_the_preempted_task_back_in_the_runqueue() {
    //  t   0    50   100
    //  0:  AAAAABBBBBAAAAA     A runs, B is woken onto CPU 0 at 20 and preempts A at 50;
    //  0q  ..bbbaaaaa.....     A waits until B sleeps at 100.
    let model = Scenario::new(1, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .wake(20, 0, 1, 2, 0)
        .switch(50, 0, 1, R, 2)
        .switch(100, 0, 2, S, 1)
        .other(150, 0, 1)
        .finish();
    assert_drawing(
        &model,
        "0: AAAAABBBBBAAAAA
         0q ..bbbaaaaa.....",
    );
    let a = task(&model, 1);
    let wait = model.waits().iter().find(|w| w.task == a).unwrap();
    assert_eq!(
        (wait.start, wait.end, wait.cause, wait.end_kind),
        (Nanos(50), Nanos(100), WaitCause::Preempted, WaitEnd::Ran)
    );
    let first = model.cpus()[0].segments().get(0);
    assert_eq!((first.end_kind, first.started_by_switch()), (SegmentEnd::Preempted, false));
}

#[test]
fn wakeup_onto_another_cpu_records_waker_and_placement() {
    //  0:  AAAAAAAAAA    A on CPU 0 wakes B at 30; B last ran on CPU 0 but is placed on
    //  1:  ...BBBB...    idle CPU 1 and runs there from 30 to 70.
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .switch(0, 1, 2, S, 0)
        .migrate(30, 0, 1, 2, 1, 1)
        .wake(30, 0, 1, 2, 1)
        .switch(30, 1, 0, R, 2)
        .switch(70, 1, 2, S, 0)
        .other(100, 0, 1)
        .other(100, 1, 0)
        .finish();
    assert_drawing(
        &model,
        "0: AAAAAAAAAA
         0q ..........
         1: ...BBBB...
         1q ..........",
    );
    let w = model.wakeups().iter().next().expect("a wakeup");
    assert_eq!(w.wakee, task(&model, 2));
    assert_eq!(
        (w.waker, w.waker_cpu, w.prev_cpu, w.target_cpu),
        (Some(task(&model, 1)), Some(Cpu(0)), Some(Cpu(1)), Cpu(1))
    );
    assert_eq!(
        (
            model.cpu_idle_at(Cpu(1), Nanos(29)),
            model.cpu_idle_at(w.target_cpu, Nanos(29)).map(|idle| !idle),
            model.wakeup_ran(&w),
            model.wakeup_latency(&w)
        ),
        (Some(true), Some(false), Some((Nanos(30), Cpu(1))), Some(Nanos(0)))
    );
}

#[test]
fn migration_while_runnable_moves_the_wait_between_runqueues() {
    //  0:  AAAAAAAAAA    B waits behind A on CPU 0 from 10; load balancing moves it to
    //  0q  .bbb......    CPU 1 at 40 (by migration/1), where it runs at 60 when C sleeps.
    //  1:  CCCCCCBBBB
    //  1q  ....bb....
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "charlie"), (9, "migration/1")])
        .other(0, 0, 1)
        .other(0, 1, 3)
        .wake(10, 0, 1, 2, 0)
        .migrate(40, 1, 3, 2, 0, 1)
        .switch(60, 1, 3, S, 2)
        .other(100, 0, 1)
        .other(100, 1, 2)
        .finish();
    assert_drawing(
        &model,
        "0: AAAAAAAAAA
         0q .bbb......
         1: CCCCCCBBBB
         1q ....bb....",
    );
    let b = task(&model, 2);
    let wait = model.waits().iter().find(|w| w.task == b).unwrap();
    assert_eq!((wait.start, wait.end, wait.ran_on), (Nanos(10), Nanos(60), Cpu(1)));
    let m = model.migrations().iter().next().expect("a migration");
    assert_eq!((m.from, m.to, m.reason, m.time), (Cpu(0), Cpu(1), MigrationReason::LoadBalance, Nanos(40)));
}

#[test]
fn fork_exec_changes_the_name_and_exit_ends_the_task() {
    //  0:  BBBBBSSSSS.   bash forks a child (named bash too) at 20, which runs at 30,
    //  0q  ..b........   execs sleep at 50 and exits at 90, switching out at 100.
    let mut s = Scenario::new(1, &[(1, "bash"), (2, "bash")]);
    let model = s
        .other(0, 0, 1)
        .fork(20, 0, 1, 2)
        .switch(30, 0, 1, S, 2)
        .exec(50, 0, 2, "/usr/bin/sleep")
        .exit(90, 0, 2)
        .switch(100, 0, 2, 0x10, 0)
        .other(110, 0, 0)
        .finish();
    let child = model.tasks().get(task(&model, 2));
    let names: Vec<_> = child.comms.iter().map(|&(t, c)| (t, model.comms().name(c).to_string())).collect();
    assert_eq!(names, [(Nanos(20), "bash".to_string()), (Nanos(50), "sleep".to_string())]);
    assert!(child.forked);
    assert_eq!((child.parent, child.exit), (Some(task(&model, 1)), Some(Nanos(90))));
    assert_drawing(
        &model,
        "0: BBBBBSSSSS.
         0q ..b........",
    );
    let last = model.cpus()[0].segments().iter().find(|s| s.task == task(&model, 2)).unwrap();
    assert_eq!(last.end_kind, SegmentEnd::Exited);
    assert_eq!(model.comm_at(task(&model, 2), Nanos(40)), "bash");
}

#[test]
fn a_task_running_at_trace_start_runs_from_the_cpus_first_event() {
    //  0:   AAAABBBB     Nothing is known before CPU 0's first event at 10; A runs from
    //  0q  .........     there although no switch brought it in.
    let model =
        Scenario::new(1, &[(1, "alpha"), (2, "beta")]).other(10, 0, 1).switch(50, 0, 1, S, 2).other(90, 0, 2).finish();
    assert_drawing(
        &model,
        "0:  AAAABBBB
         0q .........",
    );
    let first = model.cpus()[0].segments().get(0);
    assert_eq!((first.start, first.started_by_switch()), (Nanos(10), false));
}

#[test]
fn lost_events_make_the_cpu_uncertain_until_the_next_switch() {
    //  0:  AAAA????BBB   A runs; events are lost after 30; the CPU is unknown until the
    //  0q  ...........   switch at 80 (A to B); A's segment ends at its last event.
    let model = Scenario::new(1, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .other(30, 0, 1)
        .lost(0, 12)
        .other(60, 0, 1)
        .switch(80, 0, 1, S, 2)
        .other(110, 0, 2)
        .finish();
    assert_drawing(
        &model,
        "0: AAA?????BBB
         0q ...........",
    );
    let timeline = &model.cpus()[0];
    assert_eq!((timeline.lost_events(), timeline.uncertain().to_vec()), (12, vec![(Nanos(30), Nanos(80))]));
    assert_eq!(timeline.segments().get(0).end_kind, SegmentEnd::Lost);
}

#[test]
fn an_unrecorded_switch_is_resolved_by_the_next_sign_of_life() {
    //  0:  ....??BBB.   idle; B is woken onto CPU 0 at 20 by an interrupt in idle; the
    //  0q  ..bbbb....   switch to B is not in the trace, but B shows up running at 60.
    let model = Scenario::new(1, &[(2, "beta")])
        .switch(0, 0, 5, S, 0)
        .wake(20, 0, 0, 2, 0)
        .other(40, 0, 0)
        .other(60, 0, 2)
        .switch(90, 0, 2, S, 0)
        .other(100, 0, 0)
        .finish();
    assert_drawing(
        &model,
        "0: ....??BBB.
         0q ..bbbb....",
    );
    assert_eq!(model.anomalies().get(Anomaly::UnrecordedSwitch), 1);
    let b = model.cpus()[0].segments().iter().find(|s| s.task == task(&model, 2)).unwrap();
    assert!(!b.started_by_switch());
}

#[test]
fn inconsistent_streams_are_counted_not_fatal() {
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "gamma")])
        .other(0, 0, 1)
        // A switch-out of a task that never ran here.
        .switch(10, 0, 3, S, 2)
        // A wakeup of a task that is running.
        .wake(20, 0, 2, 2, 0)
        // A fork reusing a live pid.
        .fork(30, 0, 2, 1)
        // A migration from a CPU the task is not on, and CPUs out of range.
        .migrate(40, 0, 2, 3, 1, 0)
        .switch(50, 70_000, 2, S, 1)
        .other(60, 0, 2)
        .finish();
    assert!(model.anomalies().get(Anomaly::UnrecordedSwitch) >= 1);
    assert_eq!(model.anomalies().get(Anomaly::WakeupOfRunningTask), 1);
    assert_eq!(model.anomalies().get(Anomaly::PidReused), 1);
    assert_eq!(model.anomalies().get(Anomaly::CpuOutOfRange), 1);
    assert_eq!(model.tasks().iter().filter(|(_, t)| t.pid == Pid(1)).count(), 2);
}

#[test]
fn after_sleep_is_the_exit_of_the_first_sleep_in_the_commands_tree() {
    let model = Scenario::new(1, &[(1, "trace-cmd"), (2, "sh"), (3, "sleep")])
        .other(0, 0, 1)
        .exec(10, 0, 1, "/bin/sh")
        .fork(20, 0, 1, 3)
        .switch(30, 0, 1, S, 3)
        .exec(40, 0, 3, "/bin/sleep")
        .exit(70, 0, 3)
        .switch(80, 0, 3, 0x10, 1)
        .other(90, 0, 1)
        .finish();
    assert_eq!(model.after_sleep(), Ok(Nanos(70)));
    let no_sleep = Scenario::new(1, &[(1, "a")]).other(0, 0, 1).exec(5, 0, 1, "/bin/a").finish();
    assert_eq!(no_sleep.after_sleep(), Err(AfterSleepError::NoSleepInCommand));
    let no_exec = Scenario::new(1, &[(1, "a")]).other(0, 0, 1).finish();
    assert_eq!(no_exec.after_sleep(), Err(AfterSleepError::NoSleep));
}

#[test]
fn after_sleep_without_exec_events_is_when_a_sleep_stops_running_for_good() {
    //  0:  SS.SS.WWWW   Recorded with switches and wakeups only: `sleep` runs twice and
    //  0q  ..........   then never again; the workload starts when it stops at 50.
    let model = Scenario::new(1, &[(3, "sleep"), (4, "work")])
        .other(0, 0, 3)
        .switch(20, 0, 3, S, 0)
        .switch(30, 0, 0, R, 3)
        .switch(50, 0, 3, S, 0)
        .switch(60, 0, 0, R, 4)
        .other(100, 0, 4)
        .finish();
    assert_eq!(model.after_sleep(), Ok(Nanos(50)));
}

#[test]
fn unreadable_events_and_cpus_beyond_the_machine_are_counted() {
    let model = Scenario::new(2, &[(1, "alpha")])
        .other(0, 0, 1)
        .unreadable(10, 0, 1)
        .migrate(20, 0, 1, 1, 0, 60_000)
        .wake(30, 1, 0, 1, 7)
        .finish();
    assert_eq!(model.anomalies().get(Anomaly::MissingField), 1);
    assert_eq!(model.anomalies().get(Anomaly::CpuOutOfRange), 2);
    assert_eq!((model.cpu_count(), model.migrations().len()), (2, 0));
}

#[test]
fn time_that_goes_backwards_never_makes_segments_overlap() {
    //  A damaged page puts CPU 0's switch at 30 after an event at 60: it is placed at 60.
    let model = Scenario::new(1, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .other(60, 0, 1)
        .switch(30, 0, 1, S, 2)
        .other(100, 0, 2)
        .finish();
    assert_eq!(model.anomalies().get(Anomaly::TimeWentBackwards), 1);
    let spans: Vec<_> = model.cpus()[0].segments().iter().map(|s| (s.start, s.end)).collect();
    assert_eq!(spans, [(Nanos(0), Nanos(60)), (Nanos(60), Nanos(100))]);
}

#[test]
fn a_task_cannot_stay_queued_on_an_idle_cpu() {
    // Idle CPU 0 wakes T at 1 ms; T's switch-in and its whole run are not recorded (some
    // tasks are invisible to tracing on the VM the fixtures come from). When CPU 0 shows
    // idle again 3 ms later, T must have run: the CPU is uncertain from 1 ms to 4 ms and
    // T's wait ends where it began.
    let model = Scenario::new(1, &[(5, "task")])
        .switch(0, 0, 9, S, 0)
        .wake(1_000_000, 0, 0, 5, 0)
        .other(1_000_100, 0, 0) // the same interrupt: too soon to tell
        .other(4_000_000, 0, 0)
        .other(5_000_000, 0, 0)
        .finish();
    let timeline = &model.cpus()[0];
    assert_eq!(timeline.uncertain(), [(Nanos(1_000_000), Nanos(4_000_000))]);
    let wait = model.waits().iter().next().expect("a wait");
    assert_eq!((wait.start, wait.end, wait.end_kind), (Nanos(1_000_000), Nanos(1_000_000), WaitEnd::Unrecorded));
    let idle: Vec<_> =
        timeline.segments().iter().filter(|s| s.task == TaskId::IDLE).map(|s| (s.start, s.end)).collect();
    assert_eq!(idle, [(Nanos(0), Nanos(1_000_000)), (Nanos(4_000_000), Nanos(5_000_000))]);
    assert_eq!(model.anomalies().get(Anomaly::UnrecordedSwitch), 1);
}

#[test]
fn a_queued_task_that_turns_up_on_a_cpu_after_lost_events_leaves_its_old_runqueue() {
    //  0:  DD?????....   Events are lost on CPU 0 after 20. A, queued on CPU 1 at 30,
    //  0q  .......aaaa   turns up at 70 as the task CPU 0 switches out (preempted): its
    //  1:  AAABBBBBBBB   wait on CPU 1 ended unseen (its end is unknown: it is cut where
    //  1q  ...........   it began), and a new wait begins on CPU 0's runqueue.
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (4, "delta")])
        .other(0, 0, 4)
        .other(0, 1, 1)
        .other(20, 0, 4)
        .lost(0, 5)
        .switch(30, 1, 1, R, 2)
        .switch(70, 0, 1, R, 0)
        .other(110, 1, 2)
        .other(110, 0, 0)
        .finish();
    let a = task(&model, 1);
    let waits: Vec<_> = model.waits().iter().filter(|w| w.task == a).map(|w| (w.start, w.end, w.end_kind)).collect();
    assert_eq!(
        waits,
        [(Nanos(30), Nanos(30), WaitEnd::Lost), (Nanos(70), Nanos(110), WaitEnd::TraceEnd)],
        "\n{}",
        draw(&model)
    );
    assert_drawing(
        &model,
        "0: DD?????....
         0q .......aaaa
         1: AAABBBBBBBB
         1q ...........",
    );
}

#[test]
fn a_reused_pid_ends_the_old_tasks_wait() {
    //  0:  AAAAAAAAAA   B waits on CPU 0 from 10; A forks a new task with B's pid at 40
    //  0q  .bbbn.....   (B's exit was not seen): B's wait ends there, the new task waits.
    let model = Scenario::new(1, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .wake(10, 0, 1, 2, 0)
        .fork(40, 0, 1, 2)
        .other(100, 0, 1)
        .finish();
    let waits: Vec<_> = model.waits().iter().map(|w| (w.start, w.end, w.end_kind)).collect();
    assert_eq!(waits, [(Nanos(10), Nanos(40), WaitEnd::Lost), (Nanos(40), Nanos(100), WaitEnd::TraceEnd)]);
    assert_eq!(model.anomalies().get(Anomaly::PidReused), 1);
}

#[test]
fn lost_events_add_up_over_cpus_without_overflowing_and_say_what_is_unknown() {
    let mut scenario = Scenario::new(2, &[(1, "alpha")]);
    let model = scenario.other(0, 0, 1).other(0, 1, 0).lost(0, 5).lost(1, 7).finish();
    assert_eq!(model.lost(), Lost { events: 12, unknown_losses: 0 });
    assert_eq!(model.lost().to_string(), "12");
    let damaged = scenario.other(0, 0, 1).other(0, 1, 0).lost(0, u64::MAX).lost(1, u64::MAX).finish();
    assert_eq!(damaged.lost().events, u64::MAX);
    let unknown = Lost { events: 3, unknown_losses: 2 };
    assert_eq!(unknown.to_string(), "at least 3, plus 2 losses of unknown size");
}

#[test]
fn an_idle_cpu_idled_from_the_traces_start_until_its_end() {
    //  0:  AAAAAAAAA     CPU 1's first event, at 40, shows it idle, and nothing was lost
    //  0q  .........     before it: it idled since the recording began (any switch would
    //  1:  ....BBB..     be in the trace). Its last event, at 70, leaves it idle: it idles
    //  1q  .........     until the trace ends, at 90.
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .switch(40, 1, 0, S, 2)
        .switch(70, 1, 2, S, 0)
        .other(90, 0, 1)
        .finish();
    assert_drawing(
        &model,
        "0: AAAAAAAAA
         0q .........
         1: ....BBB..
         1q .........",
    );
    assert_eq!(model.cpus()[1].uncertain(), []);
}

#[test]
fn an_idle_cpu_whose_events_were_overwritten_is_unknown_before_its_first_event() {
    //  0:  AAAAAAAAA     As above, but the recorder's statistics say CPU 1's ring buffer
    //  0q  .........     overwrote events (with no loss notice before its first event):
    //  1:      BBB..     its first event does not prove what it did before.
    //  1q  .........
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
        .overwritten(1)
        .other(0, 0, 1)
        .switch(40, 1, 0, S, 2)
        .switch(70, 1, 2, S, 0)
        .other(90, 0, 1)
        .finish();
    assert_drawing(
        &model,
        "0: AAAAAAAAA
         0q .........
         1:     BBB..
         1q .........",
    );
}

#[test]
fn a_cpu_that_lost_its_oldest_events_is_unknown_from_the_traces_start() {
    //  0:  AAAAAAAAA     The kernel overwrote CPU 1's oldest events (a loss before its
    //  0q  .........     first event, at 40): what it did before is unknown, from the
    //  1:  ??????...     trace's start until its first switch, at 60. A CPU that runs a
    //  1q  .........     task at its last event is unknown after it (CPU 0 after 90).
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .lost(1, 3)
        .other(40, 1, 2)
        .switch(60, 1, 2, S, 0)
        .other(90, 0, 1)
        .other(100, 1, 0)
        .finish();
    assert_drawing(
        &model,
        "0: AAAAAAAAA?
         0q ..........
         1: ??????....
         1q ..........",
    );
    assert_eq!(model.cpus()[1].uncertain(), [(Nanos(0), Nanos(60))]);
}
