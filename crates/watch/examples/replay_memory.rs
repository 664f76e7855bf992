//! Where `watch`'s memory goes over a long run, without tracefs: a recorded trace's pages
//! replayed in real-time order in half-second ticks, with the CLI's keep, lookback, settle
//! and hold cap, printing every 10 s of trace time the ring's bytes and span, whether an
//! episode holds the ring open, the process's resident size and the bytes it holds
//! (counted by the allocator: resident size growing while these do not is the
//! allocator's fragmentation, not a leak). `LOOPS=N` replays the trace N times in one
//! process (a fresh ring and detector each time).
//!
//! `cargo run --release -p watch --example replay_memory -- TRACE [KEEP_S] [MIN_LOST_MS]`;
//! with `MALLOC_MMAP_THRESHOLD_=1048576 MALLOC_TRIM_THRESHOLD_=4194304` in the
//! environment, glibc's allocator behaves as `schedlens watch` sets it up.

use model::Nanos;
use tracedat::Trace;
use watch::{DetectOptions, Detector, Ring, Setup};

const TICK_NS: u64 = 500_000_000;
const MAX_HOLD: u64 = 3;

/// Counts the bytes the program holds, to tell a leak from the allocator's fragmentation.
struct Counting;

static LIVE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        LIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, std::sync::atomic::Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), std::sync::atomic::Ordering::Relaxed);
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn resident_mb() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0.0);
    pages * 4096.0 / 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: replay_memory TRACE [KEEP_S] [MIN_LOST_MS]");
        std::process::exit(2);
    };
    let keep_ns = (args.get(2).and_then(|s| s.parse::<f64>().ok()).unwrap_or(10.0) * 1e9) as u64;
    let min_lost = Nanos((args.get(3).and_then(|s| s.parse::<f64>().ok()).unwrap_or(10.0) * 1e6) as u64);
    let trace = Trace::open(path).unwrap_or_else(|e| {
        eprintln!("replay_memory: {path}: {e}");
        std::process::exit(1)
    });
    let setup = Setup::of_trace(&trace);
    let layout = setup.layout();
    let pages: Vec<Vec<(u64, u64, Vec<u8>)>> = (0..trace.cpu_count())
        .map(|cpu| {
            let mut pages = Vec::new();
            let _ = trace.raw_pages(cpu, |bytes| {
                if let Some(page) = watch::Page::parse(bytes, &layout) {
                    pages.push((page.first_ns, page.last_ns, bytes.to_vec()));
                }
            });
            pages
        })
        .collect();
    let start = pages.iter().filter_map(|p| p.first()).map(|p| p.0).min().expect("a page");
    let end = pages.iter().filter_map(|p| p.last()).map(|p| p.1).max().expect("a page");
    let options =
        DetectOptions { min_lost, settle_ns: 300_000_000, lookback_ns: 1_500_000_000, spill_dir: std::env::temp_dir() };
    let loops: u32 = std::env::var("LOOPS").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    println!("loop trace_s ring_MB ring_s open incidents resident_MB live_MB");
    for round in 0..loops {
        let mut ring = Ring::new(layout, trace.cpu_count());
        let mut detector = Detector::new(options.clone());
        let mut next = vec![0; pages.len()];
        let (mut now, mut incidents, mut next_report) = (start, 0, start);
        loop {
            now = (now + TICK_NS).min(end);
            for (cpu, cpu_pages) in pages.iter().enumerate() {
                while next[cpu] < cpu_pages.len() && cpu_pages[next[cpu]].1 <= now {
                    ring.add_page(cpu as u32, &cpu_pages[next[cpu]].2);
                    next[cpu] += 1;
                }
                let until = cpu_pages.get(next[cpu]).map_or(now, |p| now.min(p.0.saturating_sub(1)));
                ring.drained(cpu as u32, until);
            }
            let at_end = now == end;
            let watermark = ring.watermark(None).unwrap_or(start);
            incidents += detector.tick(&setup, &ring, watermark, at_end).expect("a tick").len();
            let forget = detector.keep_from(watermark, keep_ns);
            ring.evict_before(forget.max(watermark.saturating_sub(keep_ns * MAX_HOLD)));
            if now >= next_report || at_end {
                next_report = now + 10_000_000_000;
                let held_s = ring.start_ns().map_or(0.0, |s| watermark.saturating_sub(s) as f64 / 1e9);
                println!(
                    "{round} {:7.1} {:7.1} {:6.1} {:>4} {:9} {:11.1} {:7.1}",
                    (now - start) as f64 / 1e9,
                    ring.bytes() as f64 / 1e6,
                    held_s,
                    if detector.open_since().is_some() { "yes" } else { "no" },
                    incidents,
                    resident_mb(),
                    LIVE.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e6
                );
            }
            if at_end {
                println!(
                    "{round} watched {} ns, a task waited while a core idled {} ns, {incidents} incidents",
                    detector.totals.watched_ns, detector.totals.idle_while_waiting_ns
                );
                break;
            }
        }
    }
}
