//! `schedlens info`: what a trace file is and what it holds, after decoding every record
//! (one CPU per worker thread), so it doubles as the decoder's benchmark. A perf.data is
//! described from its feature sections (perf version, command line, machine) and its
//! records (events per type and CPU, losses, comm/fork/exit records).

use crate::progress::Progress;
use crate::{Outcome, report_damage};
use anyhow::Result;
use inputs::Input;
use perfdata::{PerfData, TaskChange};
use pftrace::PerfettoTrace;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use tracedat::{EventItems, EventSource, Formats, Item, Nanos, Selection, Trace};

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat or perf.data file.
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
    let trace = match crate::common::open_trace(&args.trace)? {
        Input::TraceDat(trace) => trace,
        Input::PerfData(perf) => return perf_info(&perf),
        Input::Perfetto(trace) => return perfetto_info(&trace),
    };
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
    let bytes_done = AtomicU64::new(0);
    let mut summaries = analysis::cores::on_cores_ticking(
        jobs.len(),
        || (),
        |_, job| scan_cpu(trace, &jobs[job].0, jobs[job].1, &bytes_done),
        || progress.set(bytes_done.load(Ordering::Relaxed)),
    );
    summaries.sort_by(|a, b| (&a.buffer, a.cpu).cmp(&(&b.buffer, b.cpu)));
    summaries
}

fn scan_cpu(trace: &Trace, buffer: &str, cpu: u32, bytes_done: &AtomicU64) -> CpuSummary {
    scan_stream(trace.events_of(&Selection::one_cpu(buffer, cpu)), buffer, cpu, bytes_done)
}

/// Counts one CPU's events per type, its losses and its time span.
fn scan_stream(mut stream: impl EventItems, buffer: &str, cpu: u32, bytes_done: &AtomicU64) -> CpuSummary {
    let mut summary = CpuSummary { buffer: buffer.to_string(), cpu, ..CpuSummary::default() };
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
    for (label, text) in inputs::describe_trace_dat(trace) {
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
    print_event_counts(out, trace.formats(), summaries)
}

/// The events of each type, most frequent first.
fn print_event_counts(out: &mut dyn Write, formats: &Formats, summaries: &[CpuSummary]) -> std::io::Result<()> {
    let mut by_id: BTreeMap<u32, u64> = BTreeMap::new();
    for s in summaries {
        for (&id, &n) in &s.by_id {
            *by_id.entry(id).or_default() += n;
        }
    }
    let mut rows: Vec<(String, u64)> = by_id
        .into_iter()
        .map(|(id, n)| {
            let name = formats.by_id(id).map_or(format!("(unknown id {id})"), |f| format!("{}:{}", f.system, f.name));
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

/// Each CPU's events of a container that keeps them per CPU (perf.data, Perfetto),
/// decoded on the cores.
fn scan_source<S: EventSource + Sync>(source: &S) -> Vec<CpuSummary> {
    let bytes_done = AtomicU64::new(0);
    let cpus: Vec<u32> = source.cpu_sizes().iter().map(|&(cpu, _)| cpu).collect();
    analysis::cores::on_cores(
        cpus.len(),
        || (),
        |_, job| scan_stream(source.cpu_events(cpus[job]), "", cpus[job], &bytes_done),
    )
}

/// `info` of a perf.data: the file and the machine, then events per CPU and per type
/// (decoded per CPU as for trace.dat), losses, records by type.
fn perf_info(perf: &PerfData) -> Result<Outcome> {
    let summaries = scan_source(perf);
    print_perf_summary(&mut std::io::stdout().lock(), perf, &summaries)?;
    Ok(report_damage(&perf.damage_found()))
}

fn print_perf_summary(out: &mut dyn Write, perf: &PerfData, summaries: &[CpuSummary]) -> std::io::Result<()> {
    for (label, text) in inputs::describe_perf_data(perf) {
        writeln!(out, "{:<14}{text}", format!("{label}:"))?;
    }
    let with_data = summaries.iter().filter(|s| s.events > 0).count();
    writeln!(out, "CPUs:         {} ({with_data} with data)", perf.cpu_count())?;
    let tracing = perf.tracing();
    writeln!(
        out,
        "formats:      {} event formats, {} saved cmdlines",
        perf.formats().len(),
        tracing.map_or(0, |t| t.cmdlines.len())
    )?;
    for note in tracing.iter().flat_map(|t| &t.notes) {
        writeln!(out, "note:         {note}")?;
    }
    let counts = perf.counts();
    if counts.other_samples > 0 {
        writeln!(
            out,
            "note:         {} samples of events that are not tracepoints were left out",
            counts.other_samples
        )?;
    }
    let total: u64 = summaries.iter().map(|s| s.events).sum();
    let first = summaries.iter().filter_map(|s| s.first).min();
    let last = summaries.iter().filter_map(|s| s.last).max();
    if let (Some(first), Some(last)) = (first, last) {
        writeln!(out, "time span:    {first} .. {last} ({:.6} s)", last.saturating_sub(first).as_secs_f64())?;
    }
    writeln!(out, "events:       {total}")?;
    let (lost, lost_samples): (Vec<_>, Vec<_>) = perf.losses().iter().partition(|l| !l.samples);
    let sum = |list: &[&perfdata::Loss]| list.iter().map(|l| l.count).fold(0u64, u64::saturating_add);
    writeln!(
        out,
        "lost events:  {} in {} PERF_RECORD_LOST; {} in {} PERF_RECORD_LOST_SAMPLES (perf's count per event)",
        sum(&lost),
        lost.len(),
        sum(&lost_samples),
        lost_samples.len()
    )?;
    let (mut comms, mut forks, mut exits) = (0, 0, 0);
    for task in perf.tasks() {
        match task.what {
            TaskChange::Comm { .. } => comms += 1,
            TaskChange::Fork { .. } => forks += 1,
            TaskChange::Exit { .. } => exits += 1,
        }
    }
    writeln!(out, "tasks:        {comms} comm, {forks} fork, {exits} exit records")?;
    writeln!(out)?;
    writeln!(out, "{:<5} {:>12} {:>20} {:>20} {:>12}", "CPU", "events", "first", "last", "lost")?;
    for s in summaries {
        let fmt = |t: Option<Nanos>| t.map_or("-".to_string(), |t| t.to_string());
        writeln!(out, "{:<5} {:>12} {:>20} {:>20} {:>12}", s.cpu, s.events, fmt(s.first), fmt(s.last), lost_text(s))?;
    }
    writeln!(out)?;
    print_event_counts(out, perf.formats(), summaries)?;
    writeln!(out)?;
    writeln!(out, "{:<40} {:>12}", "record", "count")?;
    for &(kind, n) in &counts.by_kind {
        writeln!(out, "{:<40} {n:>12}", perfdata::record_name(kind))?;
    }
    Ok(())
}

/// `info` of a Perfetto trace: packets, bundles and events per CPU (expanded and
/// compact), events per type, losses, the trace config's buffers.
fn perfetto_info(trace: &PerfettoTrace) -> Result<Outcome> {
    let summaries = scan_source(trace);
    print_perfetto_summary(&mut std::io::stdout().lock(), trace, &summaries)?;
    Ok(report_damage(trace.damage_found()))
}

fn print_perfetto_summary(out: &mut dyn Write, trace: &PerfettoTrace, summaries: &[CpuSummary]) -> std::io::Result<()> {
    for (label, text) in inputs::describe_perfetto(trace) {
        writeln!(out, "{:<14}{text}", format!("{label}:"))?;
    }
    let summary = trace.summary();
    let kinds: Vec<String> = summary.packet_kinds.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
    writeln!(out, "packets:      {} ({})", summary.packets, kinds.join(", "))?;
    if summary.compressed_packets > 0 {
        writeln!(out, "note:         {} deflated packets were not read", summary.compressed_packets)?;
    }
    for (index, &(size_kb, policy)) in summary.buffers.iter().enumerate() {
        let policy = match policy {
            1 => "ring buffer",
            2 => "discard",
            _ => "unspecified",
        };
        writeln!(out, "buffer {index}:     {size_kb} KiB, {policy}")?;
    }
    let with_data = summaries.iter().filter(|s| s.events > 0).count();
    writeln!(out, "CPUs:         {} ({with_data} with data)", trace.cpu_count())?;
    writeln!(out, "formats:      {} event layouts, {} task names", trace.formats().len(), trace.cmdlines().len())?;
    let total: u64 = summaries.iter().map(|s| s.events).sum();
    let first = summaries.iter().filter_map(|s| s.first).min();
    let last = summaries.iter().filter_map(|s| s.last).max();
    if let (Some(first), Some(last)) = (first, last) {
        writeln!(out, "time span:    {first} .. {last} ({:.6} s)", last.saturating_sub(first).as_secs_f64())?;
    }
    writeln!(out, "events:       {total}")?;
    let lost_bundles: u64 = summary.cpus.values().map(|c| c.lost_bundles).sum();
    let overruns: u64 = summary.overruns.values().sum();
    writeln!(
        out,
        "lost events:  {lost_bundles} bundles marked lost_events; {overruns} overwritten or dropped by ftrace_stats"
    )?;
    if summary.unknown_prev > 0 {
        writeln!(
            out,
            "note:         {} compact switches followed no sign of their CPU's task: switched out pid 0",
            summary.unknown_prev
        )?;
    }
    for (number, n) in &summary.unknown_events {
        writeln!(out, "note:         {n} events of FtraceEvent field {number} were left out (no layout)")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<5} {:>8} {:>10} {:>10} {:>10} {:>12} {:>20} {:>20} {:>10}",
        "CPU", "bundles", "expanded", "c.switch", "c.waking", "events", "first", "last", "lost"
    )?;
    for s in summaries {
        let counts = summary.cpus.get(&s.cpu).cloned().unwrap_or_default();
        let fmt = |t: Option<Nanos>| t.map_or("-".to_string(), |t| t.to_string());
        writeln!(
            out,
            "{:<5} {:>8} {:>10} {:>10} {:>10} {:>12} {:>20} {:>20} {:>10}",
            s.cpu,
            counts.bundles,
            counts.expanded,
            counts.compact_switches,
            counts.compact_wakings,
            s.events,
            fmt(s.first),
            fmt(s.last),
            lost_text(s)
        )?;
    }
    writeln!(out)?;
    print_event_counts(out, trace.formats(), summaries)
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
