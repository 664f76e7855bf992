//! How much memory a model of each detail takes: the bytes its tables hold and the
//! process's peak resident size, one detail per run (`SEGMENTS` is what `graph` builds,
//! `WAKEUPS` what `latency` and `critical-path` build, `FULL` what `check` builds), and the
//! time the build took.
//!
//! `cargo run --release -p model --example model_memory -- TRACE segments|wakeups|full`

use model::{Detail, Model};

fn peak_resident_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    kb / 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(which)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: model_memory TRACE segments|wakeups|full");
        std::process::exit(2);
    };
    let detail = match which.as_str() {
        "segments" => Detail::SEGMENTS,
        "wakeups" => Detail::WAKEUPS,
        "full" => Detail::FULL,
        _ => {
            eprintln!("model_memory: {which}: segments, wakeups or full");
            std::process::exit(2);
        }
    };
    let trace = tracedat::Trace::open(path).unwrap_or_else(|e| {
        eprintln!("model_memory: {path}: {e}");
        std::process::exit(1)
    });
    let started = std::time::Instant::now();
    let (model, _) = Model::build(&trace, detail, &mut |_| {}).unwrap_or_else(|e| {
        eprintln!("model_memory: {path}: {e}");
        std::process::exit(1)
    });
    println!(
        "{which}: built in {:.3} s, tables {:.1} MB, peak resident {:.1} MB",
        started.elapsed().as_secs_f64(),
        model.heap_bytes() as f64 / 1e6,
        peak_resident_mb()
    );
}
