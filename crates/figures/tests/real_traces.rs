//! The running/waiting figure's data on real traces recorded on a 2-CPU machine
//! (testdata/traces/README.md): `stress-ng --cpu 4` puts more runnable tasks than cores
//! (red above the dotted line); two threads pinned with `taskset -c 0` leave one waiting
//! while CPU 1 idles (red above green but not above the dotted line, shaded).

use analysis::occupancy::idle_while_waiting;
use analysis::{TaskFilter, WindowRequest};
use figures::running_waiting::{Column, columns};
use model::Model;
use tracedat::Trace;

fn model(name: &str) -> Model {
    model_with(name, model::Detail::FULL)
}

fn model_with(name: &str, detail: model::Detail) -> Model {
    let path = format!("{}/../../testdata/traces/{name}", env!("CARGO_MANIFEST_DIR"));
    let trace = Trace::open(&path).unwrap();
    Model::build(&trace, detail, &mut |_| {}).unwrap().0
}

#[test]
fn the_runqueues_without_their_waits_give_every_tasks_columns() {
    for name in ["scenario-overload-v7zstd.dat", "scenario-pinned-v7zstd.dat", "hackbench-counter-v7zstd.dat"] {
        let (full, queues) = (model(name), model_with(name, model::Detail::QUEUES));
        let every = TaskFilter::default();
        assert_eq!(workload_columns(&queues, &every), workload_columns(&full, &every), "{name}");
    }
}

#[test]
#[should_panic(expected = "a task filter needs the model's waits")]
fn a_task_filter_on_runqueues_without_waits_is_refused() {
    let queues = model_with("scenario-pinned-v7zstd.dat", model::Detail::QUEUES);
    workload_columns(&queues, &TaskFilter { command_prefix: Some("pinned-spin".into()), ..TaskFilter::default() });
}

/// The workload's columns: after the initial sleep, 1000 columns.
fn workload_columns(model: &Model, filter: &TaskFilter) -> Vec<Column> {
    let (window, _) = WindowRequest { after_sleep: true, ..WindowRequest::default() }.resolve(model).unwrap();
    columns(model, window, 1000, filter).columns
}

#[test]
fn more_busy_threads_than_cores_puts_red_above_the_core_count() {
    let model = model("scenario-overload-v7zstd.dat");
    let cores = model.cpu_count();
    let data = workload_columns(&model, &TaskFilter::default());
    // Whole columns (lowest value included) with more runnable tasks than cores.
    let overloaded = data.iter().filter(|c| c.total.min > cores).count();
    assert!(overloaded > 800, "{overloaded} of 1000 columns overloaded");
    assert!(data.iter().all(|c| c.running.max <= cores), "never more running tasks than cores");
}

#[test]
fn two_threads_pinned_to_one_cpu_wait_while_the_other_idles() {
    let model = model("scenario-pinned-v7zstd.dat");
    let filter = TaskFilter { command_prefix: Some("pinned-spin".into()), ..TaskFilter::default() };
    let data = workload_columns(&model, &filter);
    // Most of the run: one spinner running, the other waiting, below the two cores.
    let pinned = data.iter().filter(|c| c.running.max == 1 && c.total.min == 2 && c.total.max <= 2).count();
    assert!(pinned > 800, "{pinned} of 1000 columns with one running and one waiting");
    let shaded = data.iter().filter(|c| c.waiting_while_idle > 0.99).count();
    assert!(shaded > 800, "{shaded} of 1000 columns shaded");
    let (window, _) = WindowRequest { after_sleep: true, ..WindowRequest::default() }.resolve(&model).unwrap();
    let found = idle_while_waiting(&model, window, &filter);
    assert_eq!(found, columns(&model, window, 7, &filter).idle_while_waiting, "the plot's sweep sums the same");
    assert!(found.total.0 > window.len().0 * 8 / 10, "waiting while idle {} of {}", found.total, window.len());
}

/// `hackbench64-lost.dat` (testdata/traces/manycore): the kernel overwrote CPU 58's oldest
/// events (a loss notice before its first event, 20 s into the trace) and some of seven
/// other CPUs' (their statistics say so, without a notice there). What they did before
/// their first event is unknown: the timeline draws it grey, not white (idle), and the
/// running/waiting sweep counts it neither as idle nor as waste.
#[test]
fn cpus_whose_oldest_events_were_overwritten_are_grey_before_their_first_event() {
    use figures::palette::Rgb;
    use figures::timeline::{Coloring, TimelineRequest, rows};
    let model = model("manycore/hackbench64-lost.dat");
    let window = analysis::Window::new(model.start(), model.end());
    let cpus: Vec<model::Cpu> = [58, 2, 0].map(model::Cpu).to_vec();
    let request = TimelineRequest {
        window,
        columns: 1000,
        rows: &cpus,
        filter: &TaskFilter::default(),
        coloring: &Coloring::ByPid,
    };
    let drawn = rows(&model, &request);
    let column_of = |cpu: usize| {
        let first = model.cpus()[cpu].first_event().unwrap();
        (1000 * (first.0 - window.start.0) / window.len().0) as u32
    };
    // CPU 58: unknown from the trace's start to its first event (a tenth of the trace).
    let (head, unknown) = (column_of(58), &drawn[0].spans[0]);
    assert!(head > 100, "{head}");
    assert_eq!((unknown.x0, unknown.color), (0, Rgb::UNKNOWN));
    assert!(unknown.x1 >= head, "{:?}", &drawn[0].spans[..3]);
    // CPU 2 lost events later on, but its statistics count it as overwritten: unknown too.
    assert_eq!((drawn[1].spans[0].x0, drawn[1].spans[0].color), (0, Rgb::UNKNOWN));
    // CPU 0 lost nothing and idled until its first event: white (no span) there.
    assert!(drawn[2].spans.iter().all(|span| span.color != Rgb::UNKNOWN || span.x0 >= column_of(0)));
    // Tasks queued on such CPUs before their first event are not counted as waste.
    let found = idle_while_waiting(&model, window, &TaskFilter::default());
    assert!(found.unknown > model::Nanos(1_000_000_000), "{found:?}");
}
