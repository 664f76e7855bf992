//! Times latency's phases on one trace.
use model::{Detail, Model};
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let trace = tracedat::Trace::open(&path).unwrap();
    let t = Instant::now();
    let (model, _) = Model::build(&trace, Detail::WAKEUPS, &mut |_| {}).unwrap();
    println!("model {:.3}", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let window = analysis::window::Window::new(model::Nanos(0), model::Nanos(u64::MAX));
    let l = analysis::latency::compute(
        &model,
        window,
        &analysis::window::TaskFilter::default(),
        None,
        analysis::latency::Parts { by_command: true, ..analysis::latency::Parts::OVERALL },
    );
    println!("compute {:.3} delays {} waits {}", t.elapsed().as_secs_f64(), l.delays.len(), model.waits().len());
    let t = Instant::now();
    let idle = analysis::idle::IdleIndex::new(&model);
    println!("idle index {:.3}", t.elapsed().as_secs_f64());
    drop(idle);
    let t = Instant::now();
    let w = model.wakeups_by_wait();
    println!("wakeups_by_wait {:.3} {}", t.elapsed().as_secs_f64(), w.len());
    let t = Instant::now();
    let t0 = Instant::now();
    drop(l);
    println!("drop {:.3}", t0.elapsed().as_secs_f64());
    let _ = t;
}
