//! The running/waiting sweep on hand-built scenarios whose counts are known at every instant.

use analysis::occupancy::{
    Cuts, IdleWhileWaitingSum, Occupancy, cpu_queue_length, idle_while_waiting, sweep, sweep_in_parts,
};
use analysis::{TaskFilter, Window};
use model::scenario::*;
use model::{Cpu, Model, Nanos};

/// 0: AAAAABBBBBAAAAA   B is woken onto busy CPU 0 at 20 and waits until A is preempted
/// 0q ..bbbaaaaa.....   at 50; A then waits until B sleeps at 100. CPU 1 idles all along,
/// 1: ...............   so a task waits while a core idles from 20 to 100.
/// 1q ...............
fn waiting_behind_a_busy_cpu() -> Model {
    let model = waiting_behind_a_busy_cpu_slowed(1);
    assert_drawing(
        &model,
        "0: AAAAABBBBBAAAAA
         0q ..bbbaaaaa.....
         1: ...............
         1q ...............",
    );
    model
}

/// The same scenario with every time multiplied by `factor`.
fn waiting_behind_a_busy_cpu_slowed(factor: u64) -> Model {
    Scenario::new(2, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .switch(0, 1, 7, S, 0)
        .wake(20 * factor, 0, 1, 2, 0)
        .switch(50 * factor, 0, 1, R, 2)
        .switch(100 * factor, 0, 2, S, 1)
        .other(150 * factor, 0, 1)
        .other(150 * factor, 1, 0)
        .finish()
}

fn stretches(model: &Model, window: Window) -> Vec<(u64, u64, Occupancy)> {
    let mut out = Vec::new();
    sweep(model, window, &TaskFilter::default(), |s, e, o| out.push((s.0, e.0, o)));
    out
}

/// The machine's counts (2 CPUs), no task waiting where the state is unknown.
fn occupancy(running: u32, waiting: u32, idle: u32, known: u32) -> Occupancy {
    Occupancy { running, waiting, idle, known, waiting_unknown: 0, cpus: 2 }
}

/// One CPU's own counts.
fn own(running: u32, waiting: u32, idle: u32, known: u32) -> Occupancy {
    let waiting_unknown = if known == 0 { waiting } else { 0 };
    Occupancy { running, waiting, idle, known, waiting_unknown, cpus: 1 }
}

#[test]
fn counts_are_exact_at_every_instant() {
    let model = waiting_behind_a_busy_cpu();
    let all = stretches(&model, Window::new(Nanos(0), Nanos(150)));
    assert_eq!(
        all,
        [(0, 20, occupancy(1, 0, 1, 2)), (20, 100, occupancy(1, 1, 1, 2)), (100, 150, occupancy(1, 0, 1, 2)),]
    );
    // A window inside: the state at its start is carried in.
    assert_eq!(stretches(&model, Window::new(Nanos(30), Nanos(60))), [(30, 60, occupancy(1, 1, 1, 2))]);
}

#[test]
fn a_trace_of_many_seconds_is_swept_in_blocks_with_the_same_counts() {
    // 15 s: the sweep cuts it into blocks whose times fit 32 bits (4.3 s each at most).
    let factor = 100_000_000;
    let model = waiting_behind_a_busy_cpu_slowed(factor);
    let slowed = stretches(&model, Window::new(Nanos(0), Nanos(150 * factor)));
    let scaled: Vec<_> = stretches(&waiting_behind_a_busy_cpu(), Window::new(Nanos(0), Nanos(150)))
        .into_iter()
        .map(|(s, e, o)| (s * factor, e * factor, o))
        .collect();
    assert_eq!(slowed, scaled);
}

#[test]
fn waiting_while_idle_is_summed_with_its_longest_stretch() {
    let model = waiting_behind_a_busy_cpu();
    let result = idle_while_waiting(&model, Window::new(Nanos(0), Nanos(150)), &TaskFilter::default());
    assert_eq!(result.total, Nanos(80));
    assert_eq!(result.longest, Some((Nanos(20), Nanos(100))));
}

#[test]
fn per_cpu_queue_length_counts_the_running_task_and_the_waiting_ones() {
    let model = waiting_behind_a_busy_cpu();
    let mut lengths = Vec::new();
    cpu_queue_length(&model, Cpu(0), Window::new(Nanos(0), Nanos(150)), &TaskFilter::default(), |s, e, n| {
        lengths.push((s.0, e.0, n))
    });
    assert_eq!(lengths, [(0, 20, 1), (20, 100, 2), (100, 150, 1)]);
}

#[test]
fn forked_filter_counts_only_tasks_created_in_the_trace() {
    // P forks C on CPU 0 at 10; C waits until P sleeps at 40.
    let model = Scenario::new(1, &[(1, "parent")])
        .other(0, 0, 1)
        .fork(10, 0, 1, 2)
        .switch(40, 0, 1, S, 2)
        .other(80, 0, 2)
        .finish();
    let mut forked = Vec::new();
    sweep(
        &model,
        Window::new(Nanos(0), Nanos(80)),
        &TaskFilter { forked_only: true, ..TaskFilter::default() },
        |s, e, o| forked.push((s.0, e.0, o.running, o.waiting)),
    );
    assert_eq!(forked, [(0, 10, 0, 0), (10, 40, 0, 1), (40, 80, 1, 0)]);
}

/// Stretches of a sweep cut into parts, glued back: neighbours with equal counts merged.
fn glued_parts(model: &Model, window: Window, parts: usize, cuts: Cuts) -> Vec<(u64, u64, Occupancy)> {
    let pieces = sweep_in_parts(
        model,
        window,
        &TaskFilter::default(),
        parts,
        cuts,
        |_| Vec::new(),
        |out, s, e, o| out.push((s.0, e.0, o)),
    );
    let mut glued: Vec<(u64, u64, Occupancy)> = Vec::new();
    for (start, end, occupancy) in pieces.into_iter().flatten() {
        match glued.last_mut() {
            Some(last) if last.1 == start && last.2 == occupancy => last.1 = end,
            _ => glued.push((start, end, occupancy)),
        }
    }
    glued
}

#[test]
fn a_sweep_cut_into_parts_is_the_whole_sweep() {
    let model = waiting_behind_a_busy_cpu();
    for window in [Window::new(Nanos(0), Nanos(150)), Window::new(Nanos(35), Nanos(120))] {
        let whole = stretches(&model, window);
        for (parts, cuts) in (1..=9).flat_map(|parts| [(parts, Cuts::EqualTime), (parts, Cuts::EqualChanges)]) {
            assert_eq!(glued_parts(&model, window, parts, cuts), whole, "{parts} {cuts:?} parts of {window:?}");
            let sums = sweep_in_parts(
                &model,
                window,
                &TaskFilter::default(),
                parts,
                cuts,
                |_| IdleWhileWaitingSum::default(),
                |sum, s, e, o| sum.add(s, e, o),
            );
            let merged = sums.into_iter().reduce(IdleWhileWaitingSum::then).unwrap().finish();
            assert_eq!(merged, idle_while_waiting(&model, window, &TaskFilter::default()), "{parts} {cuts:?} parts");
        }
    }
}

#[test]
fn idle_while_waiting_sums_join_stretches_across_cuts() {
    let waiting = occupancy(1, 1, 1, 2);
    let busy = occupancy(2, 0, 0, 2);
    let sum = |stretches: &[(u64, u64, Occupancy)]| {
        let mut sum = IdleWhileWaitingSum::default();
        for &(s, e, o) in stretches {
            sum.add(Nanos(s), Nanos(e), o);
        }
        sum
    };
    // |--w--|-b-|--w--|  cut  |--w--|-b-|-w-|
    let before = sum(&[(0, 10, waiting), (10, 15, busy), (15, 20, waiting)]);
    let after = sum(&[(20, 30, waiting), (30, 35, busy), (35, 37, waiting)]);
    let whole = before.then(after).finish();
    assert_eq!(whole.total, Nanos(27));
    assert_eq!(whole.longest, Some((Nanos(15), Nanos(30))));
    // A part entirely waiting joins both neighbours.
    let middle = sum(&[(20, 40, waiting)]);
    let next = sum(&[(40, 45, waiting), (45, 50, busy)]);
    assert_eq!(before.then(middle).then(next).finish().longest, Some((Nanos(15), Nanos(45))));
    assert_eq!(before.then(middle.then(next)).finish().longest, Some((Nanos(15), Nanos(45))));
}

/// Records what a per-CPU sweep reports.
#[derive(Default)]
struct Recorder {
    stretches: Vec<(u64, u64, Occupancy)>,
    cpus: Vec<(u64, u32, Occupancy)>,
}

impl analysis::occupancy::CpuSweepVisitor for Recorder {
    fn stretch(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
        self.stretches.push((start.0, end.0, occupancy));
    }
    fn cpu(&mut self, time: Nanos, cpu: Cpu, counts: Occupancy) {
        self.cpus.push((time.0, cpu.0, counts));
    }
}

#[test]
fn a_per_cpu_sweep_reports_each_cpus_changes_between_stretches() {
    let model = waiting_behind_a_busy_cpu();
    let parts = analysis::occupancy::sweep_cpus_in_parts(
        &model,
        Window::new(Nanos(0), Nanos(150)),
        &TaskFilter::default(),
        1,
        Cuts::EqualTime,
        |_| Recorder::default(),
    );
    let recorded = &parts[0];
    // Both CPUs start at 0 (nothing before it). CPU 0 runs A, then B from 50 (its counts
    // stay the same), then A again; B waits from 20 to 100 in its queue. CPU 1 idles.
    assert_eq!(
        recorded.cpus,
        [
            (0, 0, own(0, 0, 0, 0)),
            (0, 1, own(0, 0, 0, 0)),
            (0, 0, own(1, 0, 0, 1)),
            (0, 1, own(0, 0, 1, 1)),
            (20, 0, own(1, 1, 0, 1)),
            (100, 0, own(1, 0, 0, 1)),
        ]
    );
    assert_eq!(
        recorded.stretches,
        [(0, 20, occupancy(1, 0, 1, 2)), (20, 100, occupancy(1, 1, 1, 2)), (100, 150, occupancy(1, 0, 1, 2))]
    );
    // Cut in three, each part starts with every CPU's counts and the stretches cover it.
    let parts = analysis::occupancy::sweep_cpus_in_parts(
        &model,
        Window::new(Nanos(0), Nanos(150)),
        &TaskFilter::default(),
        3,
        Cuts::EqualTime,
        |_| Recorder::default(),
    );
    assert_eq!(parts[1].cpus[..2], [(50, 0, own(1, 1, 0, 1)), (50, 1, own(0, 0, 1, 1))]);
    let covered: u64 = parts.iter().flat_map(|p| &p.stretches).map(|(s, e, _)| e - s).sum();
    assert_eq!(covered, 150);
}

/// 0: AAAAAAAAAA   300 tasks woken onto busy CPU 0 at one instant (20) wait there until
/// 0q ..wwwwwwww   the end while CPU 1 idles: the sweep sums one CPU's changes of one
/// 1: ..........   instant, and this many must not overflow that sum.
#[test]
fn hundreds_of_tasks_queued_at_one_instant_are_all_counted() {
    let tasks: Vec<(i32, &'static str)> = (1..=301).map(|pid| (pid, "task")).collect();
    let mut scenario = Scenario::new(2, &tasks);
    scenario.other(0, 0, 1).other(0, 1, 0);
    for pid in 2..=301 {
        scenario.wake(20, 1, 0, pid, 0);
    }
    let model = scenario.other(100, 0, 1).other(100, 1, 0).finish();
    assert_eq!(
        stretches(&model, Window::new(Nanos(0), Nanos(100))),
        [(0, 20, occupancy(1, 0, 1, 2)), (20, 100, occupancy(1, 300, 1, 2))]
    );
}

/// 0: ABABABABABABABABABABA....(idle until 10,000)
/// Busy for its first 100 ns only: cut by time, the first half holds every change; cut
/// by changes, each holds about half of them.
#[test]
fn cuts_by_changes_share_the_changes_out_evenly() {
    let mut scenario = Scenario::new(1, &[(1, "a"), (2, "b")]);
    scenario.other(0, 0, 1);
    for i in 1..=20u64 {
        let (prev, next) = if i % 2 == 1 { (1, 2) } else { (2, 1) };
        scenario.switch(i * 5, 0, prev, R, next);
    }
    scenario.switch(101, 0, 1, S, 0).other(10_000, 0, 0);
    let model = scenario.finish();
    let window = Window::new(Nanos(0), Nanos(10_000));
    let part_windows =
        |cuts| sweep_in_parts(&model, window, &TaskFilter::default(), 2, cuts, |part| part, |_, _, _, _| ());
    assert_eq!(part_windows(Cuts::EqualTime)[0], Window::new(Nanos(0), Nanos(5_000)));
    let by_changes = part_windows(Cuts::EqualChanges);
    assert!((45..=60).contains(&by_changes[0].end.0), "{by_changes:?}");
    assert_eq!((by_changes[0].end, by_changes[1].end), (by_changes[1].start, window.end));
    assert_eq!(glued_parts(&model, window, 2, Cuts::EqualChanges), stretches(&model, window));
}

/// 0: ..........   Idle CPU 0 wakes B onto CPU 1 at 10. CPU 1's first event, at 40,
/// 0q ..........   shows A running (what it ran before is unknown): B waits behind it
/// 1:     AABBB.   until 60. From 10 to 40 B waits where the state is unknown: whether a
/// 1q .bbbbb....   task waited while a core idled is unknown then, and known from 40.
#[test]
fn a_task_waiting_where_the_state_is_unknown_is_not_idle_while_waiting() {
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 0)
        .wake(10, 0, 0, 2, 1)
        .other(40, 1, 1)
        .switch(60, 1, 1, S, 2)
        .switch(90, 1, 2, S, 0)
        .other(100, 0, 0)
        .finish();
    assert_drawing(
        &model,
        "0: ..........
         0q ..........
         1:     AABBB.
         1q .bbbbb....",
    );
    let unknown = |running, waiting, idle, known| Occupancy {
        waiting_unknown: waiting,
        ..occupancy(running, waiting, idle, known)
    };
    assert_eq!(
        stretches(&model, Window::new(Nanos(0), Nanos(100))),
        [
            (0, 10, occupancy(0, 0, 1, 1)),
            (10, 40, unknown(0, 1, 1, 1)),
            (40, 60, occupancy(1, 1, 1, 2)),
            (60, 90, occupancy(1, 0, 1, 2)),
            (90, 100, occupancy(0, 0, 2, 2)),
        ]
    );
    let found = idle_while_waiting(&model, Window::new(Nanos(0), Nanos(100)), &TaskFilter::default());
    assert_eq!((found.total, found.unknown, found.longest), (Nanos(20), Nanos(30), Some((Nanos(40), Nanos(60)))));
}
