//! Where `latency`'s time goes on one trace: the model's build (the waits, wakeups and
//! migrations it needs), the idle index, and the pass over every wait with the groups
//! `latency --by command` shows; with the delays and waits counted.
//!
//! `cargo run --release -p analysis --example latency_phases -- TRACE`

use analysis::idle::IdleIndex;
use analysis::latency::{self, Parts};
use analysis::window::{TaskFilter, Window};
use model::{Detail, Model, Nanos};
use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: latency_phases TRACE");
        std::process::exit(2);
    };
    let trace = tracedat::Trace::open(&path).unwrap_or_else(|e| {
        eprintln!("latency_phases: {path}: {e}");
        std::process::exit(1)
    });
    let started = Instant::now();
    let (model, _) = Model::build(&trace, Detail::WAKEUPS, &mut |_| {}).unwrap_or_else(|e| {
        eprintln!("latency_phases: {path}: {e}");
        std::process::exit(1)
    });
    println!("model: {:.3} s, {} waits", started.elapsed().as_secs_f64(), model.waits().len());
    let started = Instant::now();
    let index = IdleIndex::new(&model);
    println!("idle index alone: {:.3} s, {:.1} MB", started.elapsed().as_secs_f64(), index.heap_bytes() as f64 / 1e6);
    drop(index);
    let started = Instant::now();
    let window = Window::new(Nanos(0), Nanos(u64::MAX));
    let parts = Parts { by_command: true, ..Parts::OVERALL };
    let latencies = latency::compute(&model, window, &TaskFilter::default(), None, parts);
    println!(
        "compute (idle index included): {:.3} s, {} delays",
        started.elapsed().as_secs_f64(),
        latencies.overall.wakeups.latencies.count + latencies.overall.preemptions.latencies.count
    );
}
