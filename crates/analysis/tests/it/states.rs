//! Thread states on hand-built scenarios: every nanosecond of the window in one state.

use analysis::states::{self, StateTimes};
use analysis::{TaskFilter, Window};
use model::scenario::*;
use model::{Model, Nanos, Pid};

fn of(model: &Model, pid: i32) -> StateTimes {
    let window = Window::new(Nanos(0), model.end() + Nanos(1));
    let result = states::compute(model, window, &TaskFilter::default());
    result.by_task.iter().find(|(_, p, _)| *p == Pid(pid)).map(|(_, _, t)| *t).unwrap()
}

/// 0: AA...AABA...    A runs from the first event, sleeps at 20, is woken at 40 and runs
/// 0q ....a..a.....   at 50, is preempted by B at 70, runs again at 80 and blocks in D at
///                    90. B was never seen before it ran: unknown until 70; it sleeps
///                    from 80.
fn every_state() -> Model {
    Scenario::new(1, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .switch(20, 0, 1, S, 0)
        .wake(40, 0, 0, 1, 0)
        .switch(50, 0, 0, R, 1)
        .switch(70, 0, 1, R, 2)
        .switch(80, 0, 2, S, 1)
        .switch(90, 0, 1, 2, 0)
        .other(120, 0, 0)
        .finish()
}

#[test]
fn every_state_of_a_task_sums_to_the_window() {
    let model = every_state();
    assert_drawing(
        &model,
        "0: AA...AABA...
         0q ....a..a....",
    );
    let alpha = of(&model, 1);
    let expected = StateTimes {
        running_ns: 50,
        runnable_wakeup_ns: 10,
        runnable_preempted_ns: 10,
        sleeping_ns: 20,
        uninterruptible_ns: 31,
        dead_ns: 0,
        unknown_ns: 0,
    };
    assert_eq!(alpha, expected);
    let beta = of(&model, 2);
    assert_eq!((beta.unknown_ns, beta.running_ns, beta.sleeping_ns, beta.total_ns()), (70, 10, 41, 121));
}

/// A exits at 30 (dead from its last switch-out); B's CPU loses events while B runs: from
/// its last sign on, B's state is unknown (the switch-out at 80 ends the CPU's uncertain
/// stretch, but the model keeps no row of B there to say it slept after).
#[test]
fn dead_and_lost_time() {
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
        .switch(0, 0, 0, R, 1)
        .switch(0, 1, 0, R, 2)
        .exit(30, 0, 1)
        .switch(30, 0, 1, S, 0)
        .other(40, 1, 2)
        .lost(1, 5)
        .other(70, 1, 2)
        .switch(80, 1, 2, S, 0)
        .other(100, 0, 0)
        .other(100, 1, 0)
        .finish();
    let alpha = of(&model, 1);
    assert_eq!((alpha.running_ns, alpha.dead_ns, alpha.total_ns()), (30, 71, 101));
    let beta = of(&model, 2);
    assert_eq!(beta.total_ns(), 101);
    assert_eq!((beta.running_ns, beta.unknown_ns), (40, 61), "{beta:?}");
}

/// One task's stretches, as the viewer's state track shows them: in order, without gaps,
/// a runnable stretch naming its wait, and summing per state to what `compute` counts.
#[test]
fn one_tasks_stretches_are_its_states_in_order() {
    use states::ThreadState::*;
    let model = every_state();
    let window = Window::new(Nanos(0), model.end() + Nanos(1));
    for pid in [1, 2] {
        let task = model.tasks().by_pid(Pid(pid)).unwrap();
        let stretches = states::task_states(&model, task, window);
        let pieces: Vec<(u64, u64, states::ThreadState)> =
            stretches.iter().map(|s| (s.start.0, s.end.0, s.state)).collect();
        let expected: &[(u64, u64, states::ThreadState)] = match pid {
            1 => &[
                (0, 20, Running),
                (20, 40, Sleeping),
                (40, 50, RunnableWakeup),
                (50, 70, Running),
                (70, 80, RunnablePreempted),
                (80, 90, Running),
                (90, 121, Uninterruptible),
            ],
            _ => &[(0, 70, Unknown), (70, 80, Running), (80, 121, Sleeping)],
        };
        assert_eq!(pieces, expected, "pid {pid}");
        for s in &stretches {
            let runnable = matches!(s.state, RunnableWakeup | RunnablePreempted);
            assert_eq!(s.wait.is_some(), runnable, "{s:?}");
            if let Some(wait) = s.wait {
                assert_eq!((model.waits().task(wait), model.waits().start(wait)), (task, s.start));
            }
        }
        let mut sums = StateTimes::default();
        for s in &stretches {
            let ns = s.end.0 - s.start.0;
            let slot = match s.state {
                Running => &mut sums.running_ns,
                RunnableWakeup => &mut sums.runnable_wakeup_ns,
                RunnablePreempted => &mut sums.runnable_preempted_ns,
                Sleeping => &mut sums.sleeping_ns,
                Uninterruptible => &mut sums.uninterruptible_ns,
                Dead => &mut sums.dead_ns,
                Unknown => &mut sums.unknown_ns,
            };
            *slot += ns;
        }
        assert_eq!(sums, of(&model, pid), "pid {pid}");
    }
}
