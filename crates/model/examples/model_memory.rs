//! How much memory a model of each detail takes: the bytes its tables hold and the
//! process's peak resident size, one detail per run (`SEGMENTS` is what `graph` builds,
//! `WAKEUPS` what `critical-path` builds, `FULL` what `check` builds; `streaming` is
//! `latency`'s build, whose waits go to a sink, here one that counts them), and the time
//! the build took.
//!
//! `cargo run --release -p model --example model_memory -- TRACE segments|wakeups|full|streaming`

use model::{Detail, Migration, Model, Wait, WaitSink, Wakeup};

/// Counts the waits a streaming build hands over.
#[derive(Default)]
struct Count(u64);

impl WaitSink for Count {
    fn wait(&mut self, _: &Wait, _: Option<&Wakeup>) {
        self.0 += 1;
    }

    fn migration(&mut self, _: &Migration) {}
}

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
        eprintln!("usage: model_memory TRACE segments|wakeups|full|streaming");
        std::process::exit(2);
    };
    let detail = match which.as_str() {
        "segments" => Detail::SEGMENTS,
        "wakeups" => Detail::WAKEUPS,
        "full" => Detail::FULL,
        "streaming" => Detail::SEGMENTS,
        _ => {
            eprintln!("model_memory: {which}: segments, wakeups, full or streaming");
            std::process::exit(2);
        }
    };
    let trace = tracedat::Trace::open(path).unwrap_or_else(|e| {
        eprintln!("model_memory: {path}: {e}");
        std::process::exit(1)
    });
    let started = std::time::Instant::now();
    let mut count = Count::default();
    let built = match which.as_str() {
        "streaming" => Model::build_streaming(&trace, &mut |_| {}, &mut count),
        _ => Model::build(&trace, detail, &mut |_| {}),
    };
    let (model, _) = built.unwrap_or_else(|e| {
        eprintln!("model_memory: {path}: {e}");
        std::process::exit(1)
    });
    println!(
        "{which}: built in {:.3} s, tables {:.1} MB, peak resident {:.1} MB{}",
        started.elapsed().as_secs_f64(),
        model.heap_bytes() as f64 / 1e6,
        peak_resident_mb(),
        if count.0 > 0 { format!(", {} waits handed over", count.0) } else { String::new() }
    );
}
