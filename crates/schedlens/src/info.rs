//! `schedlens info`: what a trace file is and what it holds, after decoding every record
//! (one CPU per worker thread), so it doubles as the decoder's benchmark. A perf.data is
//! described from its feature sections (perf version, command line, machine) and its
//! records (events per type and CPU, losses, comm/fork/exit records).

use crate::progress::Progress;
use crate::{Outcome, report_damage};
use anyhow::Result;
use inputs::Input;
use model::Topology;
use perfdata::{PerfData, TaskChange};
use pftrace::PerfettoTrace;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use tracedat::{EventItems, EventSource, Formats, Item, Nanos, RecordedContext, Selection, Trace};

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
    for (label, text) in describe_file(trace) {
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

/// What the file is and what recorded it: (label, text) lines of `info`'s header, also
/// the start of `report`'s description of a trace.
pub fn describe_file(trace: &Trace) -> Vec<(&'static str, String)> {
    let meta = trace.metadata();
    let header = &meta.header;
    let size = std::fs::metadata(trace.input()).map(|m| m.len()).unwrap_or(0);
    let mut lines = vec![("file", format!("{} ({size} bytes)", trace.input()))];
    let compression = match header.version {
        6 => "uncompressed".to_string(),
        _ => format!("compression {} {}", header.compression.name(), header.compression_version).trim_end().to_string(),
    };
    lines.push((
        "format",
        format!("trace-cmd file version {}, {:?} endian, {compression}", header.version, header.endian),
    ));
    lines.push((
        "sizes",
        format!(
            "kernel long {} bytes, user long {} bytes, page {} bytes",
            meta.kernel_long_size, header.user_long_size, header.page_size
        ),
    ));
    let options = &meta.options;
    if let Some(uname) = &options.uname {
        lines.push(("uname", uname.clone()));
    }
    if let Some(version) = options.recorder_version.as_deref().and_then(|v| v.lines().next()) {
        let recorder = if version.starts_with("schedlens") { "" } else { "trace-cmd " };
        lines.push(("recorded by", format!("{recorder}{version}")));
    }
    lines.extend(trace.recorded_context().map(|c| describe(&c)).unwrap_or_default());
    lines
}

/// What `info` shows of a recorded context: (label, text) lines for the command and how
/// it ended, the topology and each tunable.
fn describe(context: &RecordedContext) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    if let Some(command) = context.command_line() {
        let ended = context.exit.map_or_else(|| "end not recorded".to_string(), |e| e.to_string());
        let pid = context.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
        lines.push(("command", format!("{command} ({ended}{pid})")));
    }
    if let Some(text) = &context.topology {
        let summary = Topology::from_lscpu(text).map_or_else(|e| format!("unreadable ({e})"), |t| topology_summary(&t));
        lines.push(("topology", summary));
    }
    if !context.affinity.is_empty() {
        lines.push(("affinity", affinity_summary(&context.affinity)));
    }
    lines.extend(collapse_per_cpu(&context.tunables).into_iter().map(|(n, v)| ("tunable", format!("{n} = {v}"))));
    lines
}

/// How many tasks' affinity was recorded, by their latest CPU list (the four commonest).
fn affinity_summary(seen: &[tracedat::TaskAffinity]) -> String {
    let mut latest: std::collections::BTreeMap<i32, &[u32]> = std::collections::BTreeMap::new();
    seen.iter().for_each(|a| _ = latest.insert(a.pid, &a.cpus));
    let mut lists: Vec<(usize, String)> = Vec::new();
    for cpus in latest.values() {
        let list = tracedat::recorded::format_cpu_list(cpus);
        match lists.iter_mut().find(|(_, l)| *l == list) {
            Some((count, _)) => *count += 1,
            None => lists.push((1, list)),
        }
    }
    lists.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let groups: Vec<String> = lists.iter().take(4).map(|(n, list)| format!("{n} on CPUs {list}")).collect();
    let more = if lists.len() > 4 { ", ..." } else { "" };
    format!("{} tasks: {}{more}", latest.len(), groups.join(", "))
}

/// The number of distinct values of a CPU's place field.
fn distinct(topology: &Topology, field: impl Fn(&model::CpuPlace) -> u32) -> usize {
    topology.places().iter().map(field).collect::<std::collections::BTreeSet<_>>().len()
}

fn topology_summary(t: &Topology) -> String {
    format!(
        "{} CPUs, {} cores, {} last-level caches, {} sockets, {} NUMA nodes",
        t.places().len(),
        distinct(t, |p| p.core),
        distinct(t, |p| p.llc),
        distinct(t, |p| p.socket),
        distinct(t, |p| p.node)
    )
}

/// Per-CPU tunables (`sched/fair_server/cpu3/runtime`) with one value on every CPU shown
/// once (`sched/fair_server/cpu*/runtime`); the others as they are.
fn collapse_per_cpu(tunables: &[(String, String)]) -> Vec<(String, String)> {
    let pattern = |name: &str| {
        let parts: Vec<&str> = name
            .split('/')
            .map(|part| match part.strip_prefix("cpu") {
                Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => "cpu*",
                _ => part,
            })
            .collect();
        parts.join("/")
    };
    let mut groups: Vec<(String, Vec<&(String, String)>)> = Vec::new();
    for tunable in tunables {
        let key = pattern(&tunable.0);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(tunable),
            None => groups.push((key, vec![tunable])),
        }
    }
    groups
        .into_iter()
        .flat_map(|(key, members)| match members.iter().all(|m| m.1 == members[0].1) {
            true => vec![(key, members[0].1.clone())],
            false => members.into_iter().cloned().collect(),
        })
        .collect()
}

/// `info` of a perf.data: the file and the machine, then events per CPU and per type
/// (decoded per CPU as for trace.dat), losses, records by type.
fn perf_info(perf: &PerfData) -> Result<Outcome> {
    let bytes_done = AtomicU64::new(0);
    let cpus: Vec<u32> = perf.cpu_sizes().iter().map(|&(cpu, _)| cpu).collect();
    let summaries = analysis::cores::on_cores(
        cpus.len(),
        || (),
        |_, job| scan_stream(perf.cpu_events(cpus[job]), "", cpus[job], &bytes_done),
    );
    print_perf_summary(&mut std::io::stdout().lock(), perf, &summaries)?;
    Ok(report_damage(&perf.damage_found()))
}

fn print_perf_summary(out: &mut dyn Write, perf: &PerfData, summaries: &[CpuSummary]) -> std::io::Result<()> {
    for (label, text) in describe_perf(perf) {
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

/// What a perf.data is and what recorded it: (label, text) lines of `info`'s header and
/// `report`'s description.
pub fn describe_perf(perf: &PerfData) -> Vec<(&'static str, String)> {
    let features = perf.features();
    let mode = if perf.is_pipe_mode() { "pipe mode" } else { "file mode" };
    let mut lines = vec![
        ("file", format!("{} ({} bytes)", perf.input(), perf.size())),
        ("format", format!("perf.data, {mode}, {:?} endian", perf.endian())),
    ];
    if let Some(version) = &features.perf_version {
        lines.push(("recorded by", format!("perf {version}")));
    }
    if let Some(cmdline) = &features.cmdline {
        lines.push(("command", cmdline.join(" ")));
    }
    let machine = [&features.hostname, &features.os_release, &features.arch, &features.cpu_description];
    let machine: Vec<&str> = machine.iter().filter_map(|v| v.as_deref()).collect();
    if !machine.is_empty() {
        lines.push(("machine", machine.join(", ")));
    }
    if let Some((avail, online)) = features.nr_cpus {
        lines.push(("nrcpus", format!("{online} online, {avail} available")));
    }
    if let Some(topology) = &features.topology {
        lines.push((
            "topology",
            format!(
                "sockets' CPUs {}; cores' threads {}",
                topology.sibling_cores.join(" "),
                topology.sibling_threads.join(" ")
            ),
        ));
    }
    if let Some(tracing) = perf.tracing() {
        lines.push((
            "sizes",
            format!(
                "kernel long {} bytes, user long {} bytes, page {} bytes",
                tracing.kernel_long_size, tracing.user_long_size, tracing.page_size
            ),
        ));
    }
    lines
}

/// `info` of a Perfetto trace: packets, bundles and events per CPU (expanded and
/// compact), events per type, losses, the trace config's buffers.
fn perfetto_info(trace: &PerfettoTrace) -> Result<Outcome> {
    let bytes_done = AtomicU64::new(0);
    let cpus: Vec<u32> = trace.cpu_sizes().iter().map(|&(cpu, _)| cpu).collect();
    let summaries = analysis::cores::on_cores(
        cpus.len(),
        || (),
        |_, job| scan_stream(trace.cpu_events(cpus[job]), "", cpus[job], &bytes_done),
    );
    print_perfetto_summary(&mut std::io::stdout().lock(), trace, &summaries)?;
    Ok(report_damage(trace.damage_found()))
}

fn print_perfetto_summary(out: &mut dyn Write, trace: &PerfettoTrace, summaries: &[CpuSummary]) -> std::io::Result<()> {
    for (label, text) in describe_perfetto(trace) {
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

/// What a Perfetto trace is: (label, text) lines of `info`'s header and `report`'s
/// description.
pub fn describe_perfetto(trace: &PerfettoTrace) -> Vec<(&'static str, String)> {
    vec![
        ("file", format!("{} ({} bytes)", trace.input(), trace.size())),
        ("format", "Perfetto trace (protobuf), ftrace bundles".to_string()),
    ]
}

/// What the file is and what recorded it, whichever format.
pub fn describe_input(input: &Input) -> Vec<(&'static str, String)> {
    match input {
        Input::TraceDat(trace) => describe_file(trace),
        Input::PerfData(perf) => describe_perf(perf),
        Input::Perfetto(trace) => describe_perfetto(trace),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use tracedat::CommandExit;

    #[test]
    fn description_collapses_equal_per_cpu_tunables() {
        let tunable = |n: &str, v: &str| (n.to_string(), v.to_string());
        let context = RecordedContext {
            topology: Some(Topology::from_spec("sockets=2,smt=2", 8).unwrap().to_lscpu()),
            tunables: vec![
                tunable("sched/fair_server/cpu0/runtime", "50"),
                tunable("sched/fair_server/cpu1/runtime", "50"),
                tunable("sched/fair_server/cpu0/period", "1"),
                tunable("sched/fair_server/cpu1/period", "2"),
            ],
            command: Some(vec!["true".into()]),
            exit: Some(CommandExit::Code(0)),
            pid: Some(42),
            affinity: [(7, vec![0]), (8, vec![0, 1]), (9, vec![0]), (7, vec![1])]
                .into_iter()
                .map(|(pid, cpus)| tracedat::TaskAffinity { pid, cpus })
                .collect(),
        };
        let text: Vec<String> = describe(&context).iter().map(|(l, t)| format!("{l}: {t}")).collect();
        assert_eq!(
            text,
            [
                "command: true (exit status 0, pid 42)",
                "topology: 8 CPUs, 4 cores, 2 last-level caches, 2 sockets, 2 NUMA nodes",
                "affinity: 3 tasks: 1 on CPUs 0, 1 on CPUs 0-1, 1 on CPUs 1",
                "tunable: sched/fair_server/cpu*/runtime = 50",
                "tunable: sched/fair_server/cpu0/period = 1",
                "tunable: sched/fair_server/cpu1/period = 2",
            ]
        );
    }
}
