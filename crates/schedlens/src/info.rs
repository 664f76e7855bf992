//! `schedlens info`: what a trace file is and what it holds, after decoding every record
//! (one CPU per worker thread), so it doubles as the decoder's benchmark.

use crate::progress::Progress;
use crate::{Outcome, report_damage};
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use tracedat::{Item, Nanos, Selection, Trace};

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat file.
    trace: PathBuf,
}

/// What one CPU of one buffer holds.
#[derive(Default)]
struct CpuSummary {
    buffer: String,
    cpu: u32,
    events: u64,
    by_id: BTreeMap<u32, u64>,
    lost_known: u64,
    lost_unknown_pages: u64,
    first: Option<Nanos>,
    last: Option<Nanos>,
    damage: Vec<tracedat::Error>,
}

pub fn run(args: Args) -> Result<Outcome> {
    let trace = crate::common::open_trace(&args.trace)?;
    let summaries = scan(&trace);
    print_summary(&mut std::io::stdout().lock(), &trace, &summaries)?;
    let damage: Vec<tracedat::Error> = summaries.into_iter().flat_map(|s| s.damage).collect();
    Ok(report_damage(&damage))
}

/// Decodes every CPU of every buffer, CPUs spread over the machine's cores.
fn scan(trace: &Trace) -> Vec<CpuSummary> {
    let jobs: Vec<(String, u32)> =
        trace.buffers().iter().flat_map(|b| b.cpus.iter().map(move |c| (b.name.clone(), c.cpu))).collect();
    let progress = Progress::bytes(trace.data_size(&Selection::all()), "decoding");
    let next_job = AtomicUsize::new(0);
    let bytes_done = AtomicU64::new(0);
    let results = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len().max(1));
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    while let Some((buffer, cpu)) = jobs.get(next_job.fetch_add(1, Ordering::Relaxed)) {
                        let summary = scan_cpu(trace, buffer, *cpu, &bytes_done);
                        results.lock().unwrap_or_else(|e| e.into_inner()).push(summary);
                    }
                })
            })
            .collect();
        // Until every worker is done, finished or not: a worker that panicked passes its
        // panic on at the join below instead of leaving this loop waiting for its results.
        while !workers.iter().all(|w| w.is_finished()) {
            progress.set(bytes_done.load(Ordering::Relaxed));
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        for worker in workers {
            worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        }
    });
    let mut summaries = results.into_inner().unwrap_or_else(|e| e.into_inner());
    summaries.sort_by(|a, b| (&a.buffer, a.cpu).cmp(&(&b.buffer, b.cpu)));
    summaries
}

fn scan_cpu(trace: &Trace, buffer: &str, cpu: u32, bytes_done: &AtomicU64) -> CpuSummary {
    let mut summary = CpuSummary { buffer: buffer.to_string(), cpu, ..CpuSummary::default() };
    let mut stream = trace.events_of(&Selection::one_cpu(buffer, cpu));
    let mut reported = 0;
    loop {
        if summary.events % 4096 == 0 {
            let done = stream.bytes_done();
            bytes_done.fetch_add(done - reported, Ordering::Relaxed);
            reported = done;
        }
        let Some(item) = stream.next() else { break };
        match item {
            Item::Event(event) => {
                summary.events += 1;
                *summary.by_id.entry(event.id).or_default() += 1;
                summary.first.get_or_insert(event.ts);
                summary.last = Some(event.ts);
            }
            Item::Lost(lost) => match lost.count {
                Some(n) => summary.lost_known = summary.lost_known.saturating_add(n),
                None => summary.lost_unknown_pages += 1,
            },
        }
    }
    bytes_done.fetch_add(stream.bytes_done() - reported, Ordering::Relaxed);
    summary.damage = stream.take_damage();
    summary
}

fn print_summary(out: &mut dyn Write, trace: &Trace, summaries: &[CpuSummary]) -> std::io::Result<()> {
    let meta = trace.metadata();
    let header = &meta.header;
    let size = std::fs::metadata(trace.input()).map(|m| m.len()).unwrap_or(0);
    writeln!(out, "file:         {} ({size} bytes)", trace.input())?;
    let compression = match header.version {
        6 => "uncompressed".to_string(),
        _ => format!("compression {} {}", header.compression.name(), header.compression_version).trim_end().to_string(),
    };
    writeln!(
        out,
        "format:       trace-cmd file version {}, {:?} endian, {compression}",
        header.version, header.endian
    )?;
    writeln!(
        out,
        "sizes:        kernel long {} bytes, user long {} bytes, page {} bytes",
        meta.kernel_long_size, header.user_long_size, header.page_size
    )?;
    let options = &meta.options;
    if let Some(uname) = &options.uname {
        writeln!(out, "uname:        {uname}")?;
    }
    if let Some(version) = options.recorder_version.as_deref().and_then(|v| v.lines().next()) {
        let recorder = if version.starts_with("schedlens") { "" } else { "trace-cmd " };
        writeln!(out, "recorded by:  {recorder}{version}")?;
    }
    for (label, text) in ::record::recorded_context(trace).map(|c| c.describe()).unwrap_or_default() {
        writeln!(out, "{:<14}{text}", format!("{label}:"))?;
    }
    writeln!(out, "clock:        {}", trace.clock().unwrap_or("unknown"))?;
    let cpus_with_data: std::collections::BTreeSet<u32> = summaries.iter().map(|s| s.cpu).collect();
    writeln!(out, "CPUs:         {} ({} with data)", trace.cpu_count(), cpus_with_data.len())?;
    for buffer in trace.buffers().iter().filter(|b| !b.name.is_empty()) {
        writeln!(
            out,
            "instance:     {:?} (clock {}, page {} bytes)",
            buffer.name,
            buffer.clock.as_deref().unwrap_or("?"),
            buffer.page_size
        )?;
    }
    writeln!(out, "formats:      {} event formats, {} saved cmdlines", meta.formats.len(), meta.cmdlines.len())?;
    for note in &meta.notes {
        writeln!(out, "note:         {note}")?;
    }
    let total: u64 = summaries.iter().map(|s| s.events).sum();
    let first = summaries.iter().filter_map(|s| s.first).min();
    let last = summaries.iter().filter_map(|s| s.last).max();
    if let (Some(first), Some(last)) = (first, last) {
        writeln!(out, "time span:    {first} .. {last} ({:.6} s)", last.saturating_sub(first).as_secs_f64())?;
    }
    writeln!(out, "events:       {total}")?;
    print_losses(out, summaries)?;
    writeln!(out)?;
    writeln!(out, "{:<10} {:>5} {:>12} {:>20} {:>20} {:>12}", "buffer", "CPU", "events", "first", "last", "lost")?;
    for s in summaries {
        let buffer = if s.buffer.is_empty() { "(top)" } else { &s.buffer };
        let fmt = |t: Option<Nanos>| t.map_or("-".to_string(), |t| t.to_string());
        writeln!(
            out,
            "{buffer:<10} {:>5} {:>12} {:>20} {:>20} {:>12}",
            s.cpu,
            s.events,
            fmt(s.first),
            fmt(s.last),
            lost_text(s)
        )?;
    }
    writeln!(out)?;
    let mut by_id: BTreeMap<u32, u64> = BTreeMap::new();
    for s in summaries {
        for (&id, &n) in &s.by_id {
            *by_id.entry(id).or_default() += n;
        }
    }
    let mut rows: Vec<(String, u64)> = by_id
        .into_iter()
        .map(|(id, n)| {
            let name =
                trace.formats().by_id(id).map_or(format!("(unknown id {id})"), |f| format!("{}:{}", f.system, f.name));
            (name, n)
        })
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    writeln!(out, "{:<40} {:>12}", "event", "count")?;
    for (name, n) in rows {
        writeln!(out, "{name:<40} {n:>12}")?;
    }
    Ok(())
}

fn lost_text(s: &CpuSummary) -> String {
    match (s.lost_known, s.lost_unknown_pages) {
        (0, 0) => "0".into(),
        (n, 0) => n.to_string(),
        (n, pages) => format!("{n}+? ({pages}x)"),
    }
}

fn print_losses(out: &mut dyn Write, summaries: &[CpuSummary]) -> std::io::Result<()> {
    // Saturating: a damaged page can claim u64::MAX lost events.
    let known = summaries.iter().map(|s| s.lost_known).fold(0, u64::saturating_add);
    let unknown = summaries.iter().map(|s| s.lost_unknown_pages).fold(0, u64::saturating_add);
    match (known, unknown) {
        (0, 0) => writeln!(out, "lost events:  none")?,
        (n, 0) => writeln!(out, "lost events:  {n}")?,
        (n, pages) => writeln!(out, "lost events:  at least {n}, plus {pages} losses of unknown size")?,
    }
    Ok(())
}
