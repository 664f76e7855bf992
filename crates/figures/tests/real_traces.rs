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
