//! `schedlens check`: scheduler pathologies found automatically — episodes of waste
//! (tasks waiting while cores idle) located, ranked and explained, with the share of the
//! idle-while-waiting time they cover, migration cascades, overload, migration counts —
//! as text (80 columns) or JSON, with zoomed figures of the top episodes on request.
//! The JSON is `documents::check::CheckReport` (docs/json.md).

use crate::Outcome;
use crate::common::{WindowArgs, load_model};
use analysis::Window;
use analysis::check::{
    Affinity, BoundWaits, Cause, CheckRequest, Diffuse, Findings, Incident, Kind, MigrationMatrix, Pinning, check,
};
use anyhow::{Context, Result};
use documents::check::{
    BoundKthreadWait, BoundKthreadWaits, CauseTimes, CheckIncident, CheckReport, CheckSummary, CheckWindow,
    DiffuseWaste, IncidentCounts, IncidentEvidence, IncidentKind, IncidentMarker, IncidentTask, WakeupPlacements,
    WasteCause,
};
use figures::axis::seconds;
use figures::graph::{GraphRequest, PlotSize, graph, row_order};
use figures::running_waiting_plot::{RunningWaitingRequest, known_and_unknown, running_waiting_plot};
use figures::timeline::Coloring;
use model::{Cpu, Detail, Marker, Model, Nanos, Topology};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat file.
    trace: PathBuf,
    #[command(flatten)]
    window: WindowArgs,
    /// Leave out episodes that lost less CPU time than this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 0.25, value_parser = milliseconds)]
    min_lost: f64,
    /// Leave out overloaded stretches shorter than this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 4.0, value_parser = milliseconds)]
    min_overload: f64,
    /// Incidents listed in the text report (JSON lists them all).
    #[arg(long, default_value_t = 10)]
    top: usize,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// The machine's topology, for cross-socket and cross-node migration counts, when the
    /// trace has none: an `lscpu -p` file, a copy of /sys/devices/system/cpu, or
    /// `sockets=N,smt=M,layout=interleaved|contiguous`.
    #[arg(long, value_name = "FILE|SPEC")]
    topology: Option<String>,
    /// Write the migration heat map and zoomed timeline and running/waiting figures of
    /// the top 5 incidents here.
    #[arg(long, value_name = "DIR")]
    figures: Option<PathBuf>,
    /// Show the trace markers (trace_marker writes, trace_printk messages) inside each
    /// incident: all of them, or with `--markers=REGEX` those whose text matches.
    #[command(flatten)]
    markers: crate::figure::MarkerArgs,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

/// A number of milliseconds, 0 or more (for `value_parser`).
fn milliseconds(text: &str) -> Result<f64, String> {
    crate::common::seconds(text).map_err(|_| format!("{text:?} is not a number of milliseconds (0 or more)"))
}

pub fn run(args: Args) -> Result<Outcome> {
    args.window.validate()?;
    let (min_lost, min_overload) = (Nanos((args.min_lost * 1e6) as u64), Nanos((args.min_overload * 1e6) as u64));
    let loaded = load_model(&args.trace, Detail::FULL)?;
    let model = &loaded.model;
    let (window, origin) = args.window.resolve(model, &args.trace)?;
    let filter = args.window.filter();
    let affinity = loaded.trace.recorded_context().and_then(|c| Affinity::recorded(&c));
    let request = CheckRequest { window, filter: &filter, min_lost, min_overload, affinity: affinity.as_ref() };
    let findings = check(model, &request);
    let markers = args.markers.read(&loaded.trace)?;
    let topology = crate::topology::topology_of(args.topology.as_deref(), &loaded.trace, model.cpus().len())?;
    let crossings = topology.as_ref().map(|t| findings.migrations.crossings(t));
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            let document = to_document(&args.trace, window, &findings, affinity.as_ref(), &markers, crossings);
            writeln!(out, "{}", serde_json::to_string_pretty(&document)?)?
        }
        Format::Text => {
            let context = TextContext {
                window,
                origin,
                affinity: affinity.as_ref(),
                markers: &markers,
                topology: topology.as_ref(),
            };
            write_text(&mut out, &args, model, &findings, &context)?;
            if let Some((sockets, nodes)) = crossings {
                writeln!(out, "Across sockets: {sockets}; across NUMA nodes: {nodes}.")?;
            }
        }
    }
    if let Some(dir) = &args.figures {
        write_figures(dir, model, origin, &findings, &filter, topology.as_ref())?;
    }
    Ok(loaded.outcome)
}

fn to_document(
    trace: &Path,
    window: Window,
    findings: &Findings,
    affinity: Option<&Affinity>,
    markers: &[Marker],
    crossings: Option<(u64, u64)>,
) -> CheckReport {
    CheckReport {
        trace: trace.display().to_string(),
        window: CheckWindow { start_ns: window.start.0, end_ns: window.end.0 },
        incidents: findings.incidents.iter().map(|i| incident_document(i, markers)).collect(),
        summary: summary_document(findings, affinity, crossings),
    }
}

fn summary_document(findings: &Findings, affinity: Option<&Affinity>, crossings: Option<(u64, u64)>) -> CheckSummary {
    let episodes = findings.episodes().count();
    let wakeups = &findings.wakeups;
    CheckSummary {
        idle_while_waiting_ns: findings.idle_while_waiting.0,
        idle_while_waiting_share: share(findings),
        idle_while_waiting_unknown_ns: findings.idle_while_waiting_unknown.0,
        lost_cpu_ns: findings.episodes().map(|i| i.lost_cpu_ns).fold(0, u64::saturating_add),
        episodes_cover_ns: findings.covered(episodes).0,
        episodes_cover_share: cover_share(findings, episodes),
        affinity_recorded_tasks: affinity.map_or(0, Affinity::len),
        counts: IncidentCounts {
            work_conservation: findings.count(Kind::WorkConservation),
            wakeup_placement: findings.count(Kind::WakeupPlacement),
            kthread_preemption: findings.count(Kind::KthreadPreemption),
            migration_cascade: findings.count(Kind::MigrationCascade),
            overload: findings.count(Kind::Overload),
        },
        migrations: findings.migrations.dense(DENSE_JSON_CPUS),
        migration_pairs: findings
            .migrations
            .pairs
            .iter()
            .map(|&(from, to, n)| [u64::from(from.0), u64::from(to.0), n])
            .collect(),
        migrations_outside: findings.migrations.outside,
        bound_kthread_waits: bound_waits_document(&findings.bound_waits),
        diffuse: findings.diffuse.as_ref().map(|d| DiffuseWaste {
            start_ns: d.start.0,
            end_ns: d.end.0,
            lost_cpu_ns: d.lost_ns,
            cpus_lost_on_average: d.cpus_lost(findings.window),
            cpus: d.cpus,
            tasks: d.tasks,
            stretch_ns: d.stretch_ns,
        }),
        wakeups: WakeupPlacements {
            total: wakeups.total,
            previous_cpu: wakeups.previous_cpu,
            waker_cpu: wakeups.waker_cpu,
            waker_cpu_previous_idle: wakeups.waker_cpu_previous_idle,
            elsewhere: wakeups.elsewhere,
            waited_previous_idle: wakeups.waited_previous_idle,
        },
        cross_socket_migrations: crossings.map(|(sockets, _)| sockets),
        cross_node_migrations: crossings.map(|(_, nodes)| nodes),
    }
}

fn bound_waits_document(bound: &BoundWaits) -> BoundKthreadWaits {
    let longest = bound.longest.as_ref().map(|w| BoundKthreadWait {
        pid: w.pid.0,
        comm: w.comm.clone(),
        cpu: w.cpu.0,
        start_ns: w.start.0,
        end_ns: w.end.0,
        held_by_pid: w.held_by.as_ref().map(|(pid, _)| pid.0),
        held_by_comm: w.held_by.as_ref().map(|(_, comm)| comm.clone()),
    });
    BoundKthreadWaits { waits: bound.waits, waited_ns: bound.waited_ns, longest }
}

/// The dense `migrations` matrix is left out (null) beyond this many CPUs; the pairs are
/// always there.
const DENSE_JSON_CPUS: usize = 1024;

fn incident_document(i: &Incident, markers: &[Marker]) -> CheckIncident {
    let cpus = |list: &[Cpu]| list.iter().map(|c| c.0).collect::<Vec<_>>();
    let tasks = i
        .tasks
        .iter()
        .map(|t| IncidentTask {
            pid: t.pid.0,
            comm: t.comm.clone(),
            lost_ns: t.lost_ns,
            waits: t.waits,
            pinning: pinning_document(t.pinning),
            pinned_since_ns: t.pinned_since.map(|n| n.0),
        })
        .collect();
    let evidence = i
        .evidence
        .iter()
        .map(|e| IncidentEvidence {
            cause: cause_document(e.cause),
            start_ns: e.start.0,
            end_ns: e.end.0,
            cpu: e.cpu.0,
            pid: e.pid.0,
            lost_ns: e.lost_ns,
            explanation: e.explanation.clone(),
        })
        .collect();
    let markers = markers_within(markers, i)
        .iter()
        .map(|m| IncidentMarker { ts_ns: m.time.0, cpu: m.cpu.0, pid: m.pid.0, text: m.text.clone() })
        .collect();
    CheckIncident {
        kind: kind_document(i.kind),
        start_ns: i.start.0,
        end_ns: i.end.0,
        cpus: cpus(&i.cpus),
        idle_cpus: cpus(&i.idle_cpus),
        idle_cpu_count: i.idle_cpu_count,
        idle_cpus_on_average: i.idle_cpus_on_average,
        idle_cpus_at_once: i.idle_cpus_at_once,
        cpus_at_once: i.cpus_at_once,
        pids: i.pids.iter().map(|p| p.0).collect(),
        tasks,
        lost_cpu_ns: i.lost_cpu_ns,
        density: i.density(),
        waits: i.waits,
        causes: CauseTimes {
            work_conservation: i.causes.get(Cause::WorkConservation),
            wakeup_placement: i.causes.get(Cause::WakeupPlacement),
            kthread_preemption: i.causes.get(Cause::KthreadPreemption),
            pinned: i.causes.get(Cause::Pinned),
        },
        pinning: pinning_document(i.pinning),
        evidence,
        explanation: i.explanation.clone(),
        markers,
    }
}

fn kind_document(kind: Kind) -> IncidentKind {
    match kind {
        Kind::WorkConservation => IncidentKind::WorkConservation,
        Kind::WakeupPlacement => IncidentKind::WakeupPlacement,
        Kind::KthreadPreemption => IncidentKind::KthreadPreemption,
        Kind::MigrationCascade => IncidentKind::MigrationCascade,
        Kind::Overload => IncidentKind::Overload,
    }
}

fn cause_document(cause: Cause) -> WasteCause {
    match cause {
        Cause::WorkConservation => WasteCause::WorkConservation,
        Cause::WakeupPlacement => WasteCause::WakeupPlacement,
        Cause::KthreadPreemption => WasteCause::KthreadPreemption,
        Cause::Pinned => WasteCause::Pinned,
    }
}

fn pinning_document(pinning: Pinning) -> documents::check::Pinning {
    match pinning {
        Pinning::No => documents::check::Pinning::No,
        Pinning::Possibly => documents::check::Pinning::Possibly,
        Pinning::Recorded => documents::check::Pinning::Pinned,
    }
}

/// The markers inside an incident's span, its ends included (markers are in time order).
fn markers_within<'m>(markers: &'m [Marker], incident: &Incident) -> &'m [Marker] {
    markers_between(markers, incident.start, incident.end)
}

fn markers_between(markers: &[Marker], start: Nanos, end: Nanos) -> &[Marker] {
    let first = markers.partition_point(|m| m.time < start);
    let last = markers.partition_point(|m| m.time <= end);
    &markers[first..last.max(first)]
}

/// What the text report needs besides the findings.
struct TextContext<'a> {
    window: Window,
    origin: Nanos,
    affinity: Option<&'a Affinity>,
    markers: &'a [Marker],
    /// Names the NUMA nodes of an incident's CPUs.
    topology: Option<&'a Topology>,
}

fn share(findings: &Findings) -> f64 {
    findings.idle_while_waiting.0 as f64 / findings.window.0.max(1) as f64
}

/// The share of the idle-while-waiting time the first `count` episodes cover.
fn cover_share(findings: &Findings, count: usize) -> f64 {
    findings.covered(count).0 as f64 / findings.idle_while_waiting.0.max(1) as f64
}

fn write_text(
    out: &mut dyn Write,
    args: &Args,
    model: &Model,
    findings: &Findings,
    context: &TextContext,
) -> Result<()> {
    let TextContext { window, origin, affinity, markers, topology } = *context;
    let name = args.trace.file_name().map_or_else(|| args.trace.display().to_string(), |n| n.to_string_lossy().into());
    writeln!(
        out,
        "{name}: {} CPUs, window {:.6} to {:.6} s",
        model.cpu_count(),
        seconds(window.start, origin),
        seconds(window.end, origin)
    )?;
    let (known, unknown) = known_and_unknown(findings.idle_while_waiting_unknown, findings.window);
    let headline = format!(
        "A task waited while a core idled for {:.6} s{known} ({:.2}% of the window){unknown}.",
        findings.idle_while_waiting.0 as f64 / 1e9,
        100.0 * share(findings)
    );
    for line in wrap(&headline, 80) {
        writeln!(out, "{line}")?;
    }
    for line in wrap(&summary(args, findings, affinity), 80) {
        writeln!(out, "{line}")?;
    }
    if !findings.incidents.is_empty() {
        writeln!(out)?;
        writeln!(out, "{:>3}  {:<18} {:>12} {:>10} {:>10}  cpus", "#", "kind", "start (s)", "length", "lost")?;
    }
    for (rank, incident) in findings.incidents.iter().take(args.top).enumerate() {
        write_incident(out, rank + 1, incident, origin, topology)?;
        write_markers(out, markers_within(markers, incident), origin)?;
    }
    if findings.incidents.len() > args.top {
        writeln!(out, "     ... and {} more (--top N, or --format json for all)", findings.incidents.len() - args.top)?;
    }
    write_wakeups(out, &findings.wakeups)?;
    write_migrations(out, &findings.migrations)?;
    Ok(())
}

/// What was found, in a few sentences: the episodes, their lost time and the share of the
/// idle-while-waiting time they cover, then the counts of each kind.
fn summary(args: &Args, findings: &Findings, affinity: Option<&Affinity>) -> String {
    let episodes = findings.episodes().count();
    let lost: u64 = findings.episodes().map(|i| i.lost_cpu_ns).sum();
    let shown = episodes.min(args.top);
    let mut text = format!(
        "Episodes of waste (losing {:.2} ms of CPU time or more): {episodes}, losing {:.1} ms in all; they cover \
         {:.1}% of that idle-while-waiting time",
        args.min_lost,
        lost as f64 / 1e6,
        100.0 * cover_share(findings, episodes)
    );
    if shown < episodes {
        text.push_str(&format!(" (the {shown} listed: {:.1}%)", 100.0 * cover_share(findings, shown)));
    }
    let counts: Vec<String> = Kind::ALL.iter().map(|k| format!("{} {}", k.name(), findings.count(*k))).collect();
    text.push_str(&format!(". Incidents: {}.", counts.join(", ")));
    match affinity {
        Some(a) => text.push_str(&format!(" CPU affinity recorded for {} tasks.", a.len())),
        None => text.push_str(" No CPU affinity in the trace: pinning is inferred."),
    }
    if let Some(diffuse) = &findings.diffuse {
        text.push_str(&diffuse_text(diffuse, findings.window));
    }
    text.push_str(&bound_waits_text(&findings.bound_waits));
    text
}

/// Diffuse waste in a sentence.
fn diffuse_text(diffuse: &Diffuse, window: Nanos) -> String {
    format!(
        " Diffuse waste: for {:.1} s tasks waited while other CPUs idled a little everywhere ({} CPUs, {} tasks), \
         losing {:.2} CPUs on average over the window ({:.1} ms of CPU time), no CPU more than a sixteenth of its \
         time; its densest stretches (up to {:.1} ms each) are listed.",
        diffuse.end.saturating_sub(diffuse.start).as_secs_f64(),
        diffuse.cpus,
        diffuse.tasks,
        diffuse.cpus_lost(window),
        diffuse.lost_ns as f64 / 1e6,
        diffuse.stretch_ns as f64 / 1e6
    )
}

/// The bound kernel threads' waits in a sentence (none: nothing).
fn bound_waits_text(bound: &BoundWaits) -> String {
    let Some(longest) = &bound.longest else { return String::new() };
    let held = longest.held_by.as_ref().map_or_else(String::new, |(pid, comm)| format!(" behind {comm}:{pid}"));
    format!(
        " Kernel threads bound to one CPU waited on it while other CPUs idled {} times, {:.1} ms of waiting in all (not \
         waste: no other CPU could run them); the longest, {}:{}, {:.1} ms on CPU {}{held}.",
        bound.waits,
        bound.waited_ns as f64 / 1e6,
        longest.comm,
        longest.pid.0,
        longest.end.saturating_sub(longest.start).0 as f64 / 1e6,
        longest.cpu.0
    )
}

fn write_wakeups(out: &mut dyn Write, w: &analysis::check::WakeupPlacements) -> Result<()> {
    let percent = |n: u64| 100.0 * n as f64 / w.total.max(1) as f64;
    writeln!(out)?;
    let text = format!(
        "Wakeups: {}; onto the previous CPU {:.1}%, onto the waker's CPU {:.1}% ({} while the previous CPU \
         idled), elsewhere {:.1}%. {} left an idle previous CPU and then waited 100 us or more.",
        w.total,
        percent(w.previous_cpu),
        percent(w.waker_cpu),
        w.waker_cpu_previous_idle,
        percent(w.elsewhere),
        w.waited_previous_idle
    );
    for line in wrap(&text, 80) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Up to this many characters of an incident's CPU list in the text report.
const CPU_COLUMN: usize = 24;

/// An incident's CPUs compactly: ranges, cut at a comma to fit, and with a topology their
/// NUMA nodes: "2-3 (node 0)", "0-15,17,... (nodes 0-1)".
fn cpu_column(cpus: &[Cpu], topology: Option<&Topology>) -> String {
    let mut list = model::ranges(cpus.iter().map(|c| c.0));
    if list.len() > CPU_COLUMN {
        let cut = list[..CPU_COLUMN].rfind(',').unwrap_or(CPU_COLUMN);
        list.truncate(cut);
        list.push_str(",...");
    }
    match topology.and_then(|t| t.nodes_of(cpus)) {
        Some(nodes) => format!("{list} ({nodes})"),
        None => list,
    }
}

fn write_incident(
    out: &mut dyn Write,
    rank: usize,
    incident: &Incident,
    origin: Nanos,
    topology: Option<&Topology>,
) -> Result<()> {
    let length = incident.end.saturating_sub(incident.start).0 as f64 / 1e6;
    let pinned = match incident.pinning {
        Pinning::No => "",
        Pinning::Possibly => " possibly pinned",
        Pinning::Recorded => " pinned",
    };
    writeln!(
        out,
        "{rank:>3}  {:<18} {:>12.6} {:>7.1} ms {:>7.1} ms  {}{pinned}",
        incident.kind.name(),
        seconds(incident.start, origin),
        length,
        incident.lost_cpu_ns as f64 / 1e6,
        cpu_column(&incident.cpus, topology)
    )?;
    for line in wrap(&incident.explanation, 74) {
        writeln!(out, "     {line}")?;
    }
    if let Some(largest) = incident.evidence.first().filter(|_| incident.waits > 1) {
        for line in wrap(&format!("Largest wait: {}.", largest.explanation), 74) {
            writeln!(out, "     {line}")?;
        }
    }
    Ok(())
}

/// The markers inside an incident, a line each (the first 5).
fn write_markers(out: &mut dyn Write, markers: &[Marker], origin: Nanos) -> Result<()> {
    const SHOWN: usize = 5;
    for marker in markers.iter().take(SHOWN) {
        writeln!(
            out,
            "     marker at {:.6} s (CPU {}, pid {}): {}",
            seconds(marker.time, origin),
            marker.cpu.0,
            marker.pid.0,
            marker.text
        )?;
    }
    if markers.len() > SHOWN {
        writeln!(out, "     ... and {} more markers", markers.len() - SHOWN)?;
    }
    Ok(())
}

/// Words of `text` in lines of at most `width` characters (longer words alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The CPU-to-CPU matrix when it fits in 80 columns, else the busiest pairs.
fn write_migrations(out: &mut dyn Write, matrix: &MigrationMatrix) -> Result<()> {
    let total = matrix.total();
    writeln!(out)?;
    writeln!(out, "Migrations: {total}.")?;
    if matrix.outside > 0 {
        let text = format!(
            "{} more named a CPU beyond the trace's {} (damaged CPU fields) and are left out.",
            matrix.outside, matrix.cpus
        );
        wrap(&text, 80).iter().try_for_each(|line| writeln!(out, "{line}"))?;
    }
    if total == 0 {
        return Ok(());
    }
    // Each column as wide as the largest count, and a space; the whole matrix when it
    // fits in 80 columns.
    let width = matrix.pairs.iter().map(|&(_, _, n)| n.to_string().len()).max().unwrap_or(1).max(3) + 1;
    if let Some(rows) = matrix.dense(72 / width).filter(|_| 8 + width * matrix.cpus <= 80) {
        writeln!(out, "from\\to {}", (0..rows.len()).map(|c| format!("{c:>width$}")).collect::<String>())?;
        for (from, row) in rows.iter().enumerate() {
            writeln!(out, "{from:>7} {}", row.iter().map(|n| format!("{n:>width$}")).collect::<String>())?;
        }
        return Ok(());
    }
    let mut pairs = matrix.pairs.clone();
    pairs.sort_by(|a, b| b.2.cmp(&a.2).then((a.0, a.1).cmp(&(b.0, b.1))));
    let shown: Vec<String> = pairs.iter().take(10).map(|(from, to, n)| format!("{}->{}: {n}", from.0, to.0)).collect();
    for line in wrap(&format!("busiest: {}", shown.join(", ")), 78) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Zoomed figures around the top incidents: the incident and half its length each side.
fn write_figures(
    dir: &Path,
    model: &Model,
    origin: Nanos,
    findings: &Findings,
    filter: &analysis::TaskFilter,
    topology: Option<&Topology>,
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let map = figures::migration_map::migration_map("CPU-to-CPU migrations", &findings.migrations, 600.0, topology);
    write_png(&dir.join("migrations.png"), &map)?;
    // With a topology, in socket order with the sockets' bands.
    let rows = row_order(model.cpus().len(), topology, true);
    for (rank, incident) in findings.incidents.iter().take(5).enumerate() {
        let margin = incident.end.saturating_sub(incident.start).0 / 2;
        let window = Window::new(Nanos(incident.start.0.saturating_sub(margin)), incident.end + Nanos(margin));
        let title =
            format!("incident {}: {} at {:.6} s", rank + 1, incident.kind.name(), seconds(incident.start, origin));
        let size = PlotSize { width: 1000.0, height: None };
        let timeline = GraphRequest {
            title: title.clone(),
            window,
            origin,
            span: window.len(),
            rows: &rows,
            filter,
            coloring: &Coloring::ByPid,
            size,
            columns_per_px: 1.0,
            markers: &[],
        };
        let plot = RunningWaitingRequest {
            title,
            window,
            origin,
            span: window.len(),
            filter,
            per_cpu: &[],
            size,
            columns_per_px: 1.0,
            markers: &[],
        };
        let (running_waiting, _) = running_waiting_plot(model, &plot);
        for (scene, kind) in [(graph(model, &timeline), "graph"), (running_waiting, "running-waiting")] {
            write_png(&dir.join(format!("incident-{}-{kind}.png", rank + 1)), &scene)?;
        }
    }
    Ok(())
}

fn write_png(path: &Path, scene: &render::Scene) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    render::write_png(scene, &render::PngOptions::default(), std::io::BufWriter::new(file))
        .with_context(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::Pid;

    #[test]
    fn markers_inside_a_span_ends_included() {
        let marker = |t: u64| Marker { time: Nanos(t), cpu: Cpu(0), pid: Pid(1), text: format!("m{t}") };
        let markers: Vec<Marker> = [5, 10, 15, 20, 25].into_iter().map(marker).collect();
        let texts = |start, end| -> Vec<String> {
            markers_between(&markers, Nanos(start), Nanos(end)).iter().map(|m| m.text.clone()).collect()
        };
        assert_eq!(texts(10, 20), ["m10", "m15", "m20"]);
        assert_eq!(texts(11, 14), Vec::<String>::new());
        assert_eq!(texts(0, 100).len(), 5);
        assert_eq!(texts(30, 20), Vec::<String>::new(), "an empty span");
    }
}
