//! Where `latency`'s time goes on one trace: the model's build (segments and tasks, each
//! wait handed over as a record, as `latency` builds it), the idle index, and the pass
//! over every record with the groups `latency --by command` shows; with the waits and
//! delays counted. The records stay in memory here (`latency` spills past 33 MB).
//!
//! `cargo run --release -p analysis --example latency_phases -- TRACE`

use analysis::idle::IdleIndex;
use analysis::latency::{self, Parts, RecordPass};
use analysis::records::Collector;
use analysis::window::{TaskFilter, Window};
use model::{Model, Nanos};
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
    let mut collector = Collector::new(Vec::new());
    let (model, _) = Model::build_streaming(&trace, &mut |_| {}, &mut collector).unwrap_or_else(|e| {
        eprintln!("latency_phases: {path}: {e}");
        std::process::exit(1)
    });
    let (mut records, migrations) = collector.finish(&model);
    let waits = records.count();
    println!("model, waits as records: {:.3} s, {waits} waits", started.elapsed().as_secs_f64());
    let started = Instant::now();
    let index = IdleIndex::new(&model);
    println!("idle index alone: {:.3} s, {:.1} MB", started.elapsed().as_secs_f64(), index.heap_bytes() as f64 / 1e6);
    drop(index);
    let started = Instant::now();
    let window = Window::new(Nanos(0), Nanos(u64::MAX));
    let parts = Parts { by_command: true, ..Parts::OVERALL };
    let mut pass = RecordPass::new(&model, migrations, window, &TaskFilter::default(), None, parts);
    records.read_chunks(200_000, &mut |chunk| pass.add(chunk)).expect("records in memory");
    let latencies: latency::Latencies = pass.finish();
    println!(
        "pass (idle index included): {:.3} s, {} delays",
        started.elapsed().as_secs_f64(),
        latencies.overall.wakeups.latencies.count + latencies.overall.preemptions.latencies.count
    );
}
