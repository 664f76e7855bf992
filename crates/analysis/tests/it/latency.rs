//! Scheduling latency on hand-built scenarios whose every wait is drawn.

use analysis::latency::{self, Delay, DelayKind, Placement, bucket_edges_ns, bucket_of};
use analysis::records::Collector;
use analysis::{TaskFilter, Window};
use model::scenario::*;
use model::{Cpu, Model, Nanos, Pid, TaskId};

fn all(model: &Model) -> latency::Latencies {
    let window = Window::new(model.start(), model.end() + Nanos(1));
    latency::compute(model, window, &TaskFilter::default(), None, latency::Parts::ALL)
}

fn pid(model: &Model, task: TaskId) -> i32 {
    model.tasks().get(task).pid.0
}

/// (pid, kind, start, end, cpu, placement, migrated, allowed_idle_ns) of a delay.
type DelayRow = (i32, DelayKind, u64, u64, u32, Placement, bool, u64);

fn rows(model: &Model, delays: &[Delay]) -> Vec<DelayRow> {
    delays
        .iter()
        .map(|d| {
            let p = pid(model, d.task);
            (p, d.kind, d.start.0, d.end.0, d.cpu.0, d.placement, d.migrated, d.allowed_idle_ns)
        })
        .collect()
}

/// 0: AAAAABAAAAAAAAAAA?   A wakes B onto busy CPU 0 at 10 (B waits behind A while CPU 1
/// 0q .bbbba............   runs G, then idles from 30); A is preempted at 50, B runs and
/// 1: GGG....BBBB.......   sleeps at 60, A runs again. At 60 A wakes B onto idle CPU 1
/// 1q ......b...........   (it last ran on 0): B runs there at 70, migrated.
fn wakeups_and_a_preemption() -> Model {
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "gamma")])
        .switch(0, 0, 0, R, 1)
        .switch(0, 1, 0, R, 3)
        .wake(10, 0, 1, 2, 0)
        .switch(30, 1, 3, S, 0)
        .switch(50, 0, 1, R, 2)
        .switch(60, 0, 2, S, 1)
        .wake(60, 0, 1, 2, 1)
        .switch(70, 1, 0, R, 2)
        .switch(110, 1, 2, S, 0)
        .other(170, 0, 1)
        .other(180, 1, 0)
        .finish();
    assert_drawing(
        &model,
        "0: AAAAABAAAAAAAAAAA?
         0q .bbbba............
         1: GGG....BBBB.......
         1q ......b...........",
    );
    model
}

#[test]
fn each_wait_that_ran_is_a_delay_with_its_causes() {
    let model = wakeups_and_a_preemption();
    let result = all(&model);
    assert_eq!(
        rows(&model, &result.delays),
        [
            // Behind A on CPU 0; CPU 1 idled from 30 to 50.
            (2, DelayKind::Wakeup, 10, 50, 0, Placement::BehindTask, false, 20),
            // A preempted at 50, back at 60; CPU 1 idled all along.
            (1, DelayKind::Preemption, 50, 60, 0, Placement::BehindTask, false, 10),
            // Onto idle CPU 1; CPU 0 ran A meanwhile.
            (2, DelayKind::Wakeup, 60, 70, 1, Placement::IdleCpu, true, 0),
        ]
    );
    assert_eq!(result.delays[0].waker.map(|w| pid(&model, w)), Some(1));
    let beta = &result.by_task.iter().find(|(_, p, _, _)| *p == Pid(2)).unwrap().3;
    assert_eq!(
        (beta.wakeups.latencies.count, beta.wakeups.latencies.total_ns, beta.preemptions.latencies.count),
        (2, 50, 0)
    );
    assert_eq!((beta.wakeups.latencies.p50_ns, beta.wakeups.latencies.p99_ns), (10, 40));
    assert_eq!(
        (beta.wakeups.on_idle_cpu, beta.wakeups.migrated, beta.wakeups.allowed_idle),
        ((1, 10), (1, 10), (1, 20))
    );
    let worst = beta.wakeups.worst.unwrap();
    assert_eq!((worst.latency_ns, worst.start, worst.cpu), (40, Nanos(10), Cpu(0)));
    assert_eq!(result.overall.wakeups.latencies.count + result.overall.preemptions.latencies.count, 3);
    assert_eq!(
        result.by_cpu.iter().map(|(c, g)| (c.0, g.wakeups.latencies.count)).collect::<Vec<_>>(),
        [(0, 1), (1, 1)]
    );
    assert_eq!(result.by_command.iter().map(|(c, _)| c.as_str()).collect::<Vec<_>>(), ["alpha", "beta"]);
}

#[test]
fn recorded_affinity_limits_the_idle_cpus_that_count() {
    let model = wakeups_and_a_preemption();
    let window = Window::new(model.start(), model.end() + Nanos(1));
    let pinned = analysis::check::Affinity::new([(Pid(2), vec![Cpu(0)])]);
    let result = latency::compute(&model, window, &TaskFilter::default(), Some(&pinned), latency::Parts::ALL);
    let idle: Vec<u64> = result.delays.iter().map(|d| d.allowed_idle_ns).collect();
    assert_eq!(idle, [0, 10, 0], "B may only run on CPU 0: CPU 1 idling is not the scheduler's to use");
}

/// 0: AAAAA?????AA   A wakes B onto busy CPU 0 at 10; events are lost on CPU 0 before 100,
/// 0q .bbbb.......   so when (and whether) B ran is unknown. At 100 A wakes C: it still
/// 1: ............   waits when the trace ends. Neither gets a latency; both are counted.
#[test]
fn waits_whose_end_is_unknown_are_counted_apart() {
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "gamma")])
        .switch(0, 0, 0, R, 1)
        .other(0, 1, 0)
        .wake(10, 0, 1, 2, 0)
        .other(50, 0, 1)
        .lost(0, 3)
        .other(100, 0, 1)
        .wake(100, 0, 1, 3, 0)
        .other(120, 0, 1)
        .other(120, 1, 0)
        .finish();
    let result = all(&model);
    assert!(result.delays.is_empty(), "{:?}", result.delays);
    assert_eq!((result.overall.unknown.lost, result.overall.unknown.trace_end), (1, 1));
    assert_eq!(result.by_task.len(), 2);
}

/// A task running when the trace starts has no wait before its first run: its first
/// switch-in is not a delay, its later preemption is.
#[test]
fn a_task_alive_before_the_trace_has_no_invented_first_wait() {
    let model = Scenario::new(1, &[(1, "alpha"), (2, "beta")])
        .other(0, 0, 1)
        .switch(20, 0, 1, R, 2)
        .switch(40, 0, 2, S, 1)
        .other(60, 0, 1)
        .finish();
    let result = all(&model);
    assert_eq!(rows(&model, &result.delays), [(1, DelayKind::Preemption, 20, 40, 0, Placement::BehindTask, false, 0)]);
}

#[test]
fn buckets_are_log2_microseconds() {
    let edges = bucket_edges_ns();
    assert_eq!(&edges[..4], [0, 1000, 2000, 4000]);
    assert_eq!(edges[24], 1000 << 23);
    assert_eq!([bucket_of(0), bucket_of(999), bucket_of(1000), bucket_of(1999), bucket_of(2000)], [0, 0, 1, 1, 2]);
    assert_eq!(bucket_of(u64::MAX), 24);
    for (k, &edge) in edges.iter().enumerate() {
        assert_eq!(bucket_of(edge), k, "{edge}");
    }
}

/// CPU 0 runs kworker K until 60, then A until 80, then B. A waits from 10 to 60 and B
/// from 20 to 80: while A waited K held the CPU 50 ns; while B waited K held it 40 ns and
/// A 20 ns. K is a kernel thread by its name.
#[test]
fn who_held_the_cpu_while_a_task_waited() {
    let model = Scenario::new(1, &[(1, "alpha"), (2, "beta"), (3, "kworker/0:1")])
        .switch(0, 0, 0, R, 3)
        .wake(10, 0, 3, 1, 0)
        .wake(20, 0, 3, 2, 0)
        .switch(60, 0, 3, S, 1)
        .switch(80, 0, 1, S, 0)
        .switch(80, 0, 0, R, 2)
        .other(90, 0, 2)
        .finish();
    let window = Window::new(model.start(), model.end() + Nanos(1));
    let task = |pid: i32| model.tasks().by_pid(Pid(pid)).unwrap();
    let held = |tasks: &[TaskId]| -> Vec<(i32, u64, bool)> {
        latency::antagonists(&model, window, tasks)
            .iter()
            .map(|a| (pid(&model, a.task), a.held_ns, a.kernel_thread))
            .collect()
    };
    assert_eq!(held(&[task(1)]), [(3, 50, true)]);
    assert_eq!(held(&[task(2)]), [(3, 40, true), (1, 20, false)]);
    assert_eq!(held(&[task(1), task(2)]), [(3, 90, true), (1, 20, false)]);
    // One wait at a time (the viewer's hover): beta's one wait is held by both.
    let waits: Vec<model::WaitId> = model.waits().ids().filter(|&w| model.waits().task(w) == task(2)).collect();
    assert_eq!(waits.len(), 1);
    let holders = latency::wait_antagonists(&model, waits[0]);
    assert_eq!(holders.cpus, [model::Cpu(0)]);
    let one: Vec<(i32, u64, bool)> =
        holders.antagonists.iter().map(|a| (pid(&model, a.task), a.held_ns, a.kernel_thread)).collect();
    assert_eq!(one, held(&[task(2)]));
}

/// `distributions` gives `compute`'s delays without their causes: the same commands,
/// the same counts, sums, histograms, percentiles and largest delays, over all and per
/// command, on the scenarios and on real traces (local, lost events, 64 CPUs).
#[test]
fn distributions_are_the_delays_of_compute_without_their_causes() {
    let same = |model: &Model, what: &str| {
        let window = Window::new(model.start(), model.end() + Nanos(1));
        let filter = TaskFilter::default();
        let (full, bare) = (
            latency::compute(model, window, &filter, None, latency::Parts::ALL),
            latency::distributions(model, window, &filter),
        );
        let agree = |s: &latency::Summary, d: &latency::Distribution, name: &str| {
            let summary = (
                s.latencies.count,
                s.latencies.total_ns,
                s.latencies.histogram,
                s.latencies.p50_ns,
                s.latencies.p90_ns,
                s.latencies.p99_ns,
                s.latencies.p999_ns,
            );
            let distribution = (d.count, d.total_ns, d.histogram, d.p50_ns, d.p90_ns, d.p99_ns, d.p999_ns);
            assert_eq!(summary, distribution, "{what}: {name}");
            assert_eq!(s.worst.map_or(0, |w| w.latency_ns), d.max_ns, "{what}: {name}");
        };
        agree(&full.overall.wakeups, &bare.wakeups, "wakeups");
        agree(&full.overall.preemptions, &bare.preemptions, "preemptions");
        let names = |rows: Vec<&str>| rows.join(",");
        assert_eq!(
            names(full.by_command.iter().map(|(c, _)| c.as_str()).collect()),
            names(bare.by_command.iter().map(|(c, _)| c.as_str()).collect()),
            "{what}: the commands"
        );
        for ((comm, group), (_, wakeups)) in full.by_command.iter().zip(&bare.by_command) {
            agree(&group.wakeups, wakeups, comm);
        }
    };
    same(&wakeups_and_a_preemption(), "wakeups and a preemption");
    let traces = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces");
    for name in
        ["hackbench-v7zstd.dat", "lost-events-v7zstd.dat", "barrier-pinned-record.dat", "manycore/hackbench64-lost.dat"]
    {
        let trace = tracedat::Trace::open(traces.join(name)).unwrap();
        let (model, _) = Model::build(&trace, model::Detail::FULL, &mut |_| {}).unwrap();
        same(&model, name);
    }
}

#[test]
fn waits_read_back_as_records_give_what_the_tables_give_on_every_fixture() {
    let mut compared = 0;
    for path in refcheck::fixtures() {
        let trace = tracedat::Trace::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Ok((whole, _)) = Model::build(&trace, model::Detail::WAKEUPS, &mut |_| {}) else { continue };
        let mut collector = Collector::new(Vec::new());
        let (streamed, _) = Model::build_streaming(&trace, &mut |_| {}, &mut collector).expect("built once already");
        let (mut records, migrations) = collector.finish(&streamed);
        // The middle half of the trace: delays and unknown ends are cut at both ends.
        let quarter = Nanos((whole.end().0 - whole.start().0) / 4);
        let window = Window::new(whole.start() + quarter, Nanos(whole.end().0 - quarter.0));
        let filter = TaskFilter::default();
        let expected = latency::compute(&whole, window, &filter, None, latency::Parts::ALL);
        let mut pass = latency::RecordPass::new(&streamed, migrations, window, &filter, None, latency::Parts::ALL);
        // In two chunks, as records come back from memory and then from a file.
        let half = records.count().div_ceil(2);
        records.read_chunks(half, &mut |chunk| pass.add(chunk)).expect("records in memory");
        assert!(pass.finish() == expected, "{}: the latencies differ", path.display());
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} fixtures compared");
}
