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

/// The CPU numbers a figure writes right-aligned (row labels), with their baselines,
/// below `below` (pixels from the top).
fn row_labels(scene: &render::Scene, below: f32) -> Vec<u32> {
    let mut labels: Vec<(f32, u32)> = scene
        .items
        .iter()
        .filter_map(|item| match item {
            render::Item::Text(t) if t.anchor == render::Anchor::End && !t.vertical && t.pos.y > below => {
                t.content.parse().ok().map(|cpu| (t.pos.y, cpu))
            }
            _ => None,
        })
        .collect();
    labels.sort_by(|a, b| a.0.total_cmp(&b.0));
    labels.into_iter().map(|(_, cpu)| cpu).collect()
}

/// `barrier64.dat` (testdata/traces/manycore; 4 sockets × 8 cores × 2 threads, CPU 2k and
/// 2k+1 on core k): in socket order with either topology source — the spec the user
/// writes or the guest's `lscpu` file — every row of the timeline and of the heat strips
/// is labelled with its CPU number, each once (issue 31, defect 4: the spec labelled the
/// rows by core, 0-28, two rows per label).
#[test]
fn every_row_names_its_cpu_whatever_the_topology_source() {
    use figures::graph::{GraphRequest, PlotSize, graph, row_order};
    use figures::running_waiting_plot::{RunningWaitingRequest, running_waiting_plot};
    use figures::timeline::Coloring;
    let model = model("manycore/barrier64.dat");
    let lscpu = std::fs::read_to_string(format!(
        "{}/../../testdata/traces/manycore/barrier64.dat.lscpu",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let window = analysis::Window::new(model.start(), model.end());
    let every: Vec<u32> = (0..64).collect();
    for topology in [
        model::Topology::from_spec("sockets=4,smt=2,layout=contiguous", 64).unwrap(),
        model::Topology::from_lscpu(&lscpu).unwrap(),
    ] {
        let rows = row_order(64, Some(&topology), true);
        let request = GraphRequest {
            title: "barrier64".into(),
            window,
            origin: model.start(),
            span: window.len(),
            rows: &rows,
            filter: &TaskFilter::default(),
            coloring: &Coloring::ByPid,
            size: PlotSize { width: 600.0, height: None },
            columns_per_px: 1.0,
            markers: &[],
        };
        let mut labels = row_labels(&graph(&model, &request), 0.0);
        // Top to bottom is the rows' order reversed (row 0 at the bottom).
        labels.reverse();
        assert_eq!(labels, rows.iter().map(|r| r.cpu.0).collect::<Vec<_>>());
        labels.sort_unstable();
        assert_eq!(labels, every);
        let request = RunningWaitingRequest {
            title: "barrier64".into(),
            window,
            origin: model.start(),
            span: window.len(),
            filter: &TaskFilter::default(),
            per_cpu: &rows,
            size: PlotSize { width: 600.0, height: None },
            columns_per_px: 1.0,
            markers: &[],
        };
        let (scene, _) = running_waiting_plot(&model, &request);
        // The strips are below the plot, whose value axis ends at 0.
        let axis_zero = scene.items.iter().filter_map(|item| match item {
            render::Item::Text(t) if t.content == "0" => Some(t.pos.y),
            _ => None,
        });
        let axis_zero = axis_zero.fold(f32::MAX, f32::min);
        let strips = row_labels(&scene, axis_zero + 1.0);
        assert_eq!(strips, rows.iter().map(|r| r.cpu.0).collect::<Vec<_>>());
    }
}
