//! `schedlens check`: scheduler pathologies found automatically — located, ranked
//! incidents with a one-line explanation each, the time a task waited while a core
//! idled, migration counts — as text (80 columns) or JSON, with zoomed figures of the
//! top incidents on request.
//!
//! JSON shape (stable): `{"trace", "window": {"start_ns", "end_ns"}, "incidents": [{"kind",
//! "start_ns", "end_ns", "cpus", "pids", "lost_cpu_ns", "possibly_pinned", "explanation"}],
//! "summary": {"idle_while_waiting_ns", "idle_while_waiting_share", "lost_cpu_ns",
//! "counts": {KIND: N}, "migrations": [[from-to counts]] (null beyond 1024 CPUs),
//! "migration_pairs": [[from, to, count]] (the pairs with migrations), "migrations_outside",
//! "wakeups": {"total", "previous_cpu", "waker_cpu", "waker_cpu_previous_idle",
//! "elsewhere", "waited_previous_idle"}}}`; kinds are
//! `work-conservation`, `wakeup-placement`, `kthread-preemption`, `migration-cascade`,
//! `overload`.

use crate::Outcome;
use crate::common::{WindowArgs, load_model};
use analysis::Window;
use analysis::check::{CheckRequest, Findings, Incident, Kind, MigrationMatrix, check};
use anyhow::{Context, Result};
use figures::axis::seconds;
use figures::graph::{GraphRequest, PlotSize, graph, row_order};
use figures::running_waiting_plot::{RunningWaitingRequest, running_waiting_plot};
use figures::timeline::Coloring;
use model::{Detail, Model, Nanos};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat file.
    trace: PathBuf,
    #[command(flatten)]
    window: WindowArgs,
    /// Leave out incidents shorter than this many milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 4.0, value_parser = milliseconds)]
    min_duration: f64,
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
    let loaded = load_model(&args.trace, Detail::FULL)?;
    let model = &loaded.model;
    let (window, origin) = args.window.resolve(model, &args.trace)?;
    let filter = args.window.filter();
    let request = CheckRequest { window, filter: &filter, min_duration: Nanos((args.min_duration * 1e6) as u64) };
    let findings = check(model, &request);
    let topology = crate::topology::topology_of(args.topology.as_deref(), &loaded.trace, model.cpus().len())?;
    let crossings = topology.as_ref().map(|t| findings.migrations.crossings(t));
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            let mut json = to_json(&args.trace, window, &findings);
            if let Some((sockets, nodes)) = crossings {
                json["summary"]["cross_socket_migrations"] = json!(sockets);
                json["summary"]["cross_node_migrations"] = json!(nodes);
            }
            writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?
        }
        Format::Text => {
            write_text(&mut out, &args, model, window, origin, &findings)?;
            if let Some((sockets, nodes)) = crossings {
                writeln!(out, "Across sockets: {sockets}; across NUMA nodes: {nodes}.")?;
            }
        }
    }
    if let Some(dir) = &args.figures {
        write_figures(dir, model, origin, &findings, &filter)?;
    }
    Ok(loaded.outcome)
}

fn to_json(trace: &Path, window: Window, findings: &Findings) -> serde_json::Value {
    let incidents: Vec<serde_json::Value> = findings
        .incidents
        .iter()
        .map(|i| {
            json!({"kind": i.kind.name(), "start_ns": i.start.0, "end_ns": i.end.0,
                   "cpus": i.cpus.iter().map(|c| c.0).collect::<Vec<_>>(),
                   "pids": i.pids.iter().map(|p| p.0).collect::<Vec<_>>(),
                   "lost_cpu_ns": i.lost_cpu_ns, "possibly_pinned": i.possibly_pinned, "explanation": i.explanation})
        })
        .collect();
    let counts: serde_json::Map<String, serde_json::Value> =
        Kind::ALL.iter().map(|k| (k.name().to_string(), json!(findings.count(*k)))).collect();
    json!({
        "trace": trace.display().to_string(),
        "window": {"start_ns": window.start.0, "end_ns": window.end.0},
        "incidents": incidents,
        "summary": {
            "idle_while_waiting_ns": findings.idle_while_waiting.0,
            "idle_while_waiting_share": share(findings),
            "lost_cpu_ns": findings.incidents.iter().map(|i| i.lost_cpu_ns).fold(0, u64::saturating_add),
            "counts": counts,
            "migrations": findings.migrations.dense(DENSE_JSON_CPUS),
            "migration_pairs": findings.migrations.pairs.iter().map(|&(from, to, n)| [u64::from(from.0), u64::from(to.0), n]).collect::<Vec<_>>(),
            "migrations_outside": findings.migrations.outside,
            "wakeups": {
                "total": findings.wakeups.total,
                "previous_cpu": findings.wakeups.previous_cpu,
                "waker_cpu": findings.wakeups.waker_cpu,
                "waker_cpu_previous_idle": findings.wakeups.waker_cpu_previous_idle,
                "elsewhere": findings.wakeups.elsewhere,
                "waited_previous_idle": findings.wakeups.waited_previous_idle,
            },
        }
    })
}

/// JSON holds the dense migration matrix up to this many CPUs (a million cells), and
/// `null` beyond: `migration_pairs` has the counts at any size.
const DENSE_JSON_CPUS: usize = 1024;

fn share(findings: &Findings) -> f64 {
    findings.idle_while_waiting.0 as f64 / findings.window.0.max(1) as f64
}

fn write_text(
    out: &mut dyn Write,
    args: &Args,
    model: &Model,
    window: Window,
    origin: Nanos,
    findings: &Findings,
) -> Result<()> {
    let name = args.trace.file_name().map_or_else(|| args.trace.display().to_string(), |n| n.to_string_lossy().into());
    writeln!(
        out,
        "{name}: {} CPUs, window {:.6} to {:.6} s",
        model.cpu_count(),
        seconds(window.start, origin),
        seconds(window.end, origin)
    )?;
    writeln!(
        out,
        "A task waited while a core idled for {:.6} s ({:.2}% of the window).",
        findings.idle_while_waiting.0 as f64 / 1e9,
        100.0 * share(findings)
    )?;
    let counts: Vec<String> = Kind::ALL.iter().map(|k| format!("{} {}", k.name(), findings.count(*k))).collect();
    for line in wrap(&format!("Incidents of {:.1} ms or more: {}.", args.min_duration, counts.join(", ")), 80) {
        writeln!(out, "{line}")?;
    }
    if !findings.incidents.is_empty() {
        writeln!(out)?;
        writeln!(out, "{:>3}  {:<18} {:>12} {:>10} {:>10}  cpus", "#", "kind", "start (s)", "length", "lost")?;
    }
    for (rank, incident) in findings.incidents.iter().take(args.top).enumerate() {
        write_incident(out, rank + 1, incident, origin)?;
    }
    if findings.incidents.len() > args.top {
        writeln!(out, "     ... and {} more (--top N, or --format json for all)", findings.incidents.len() - args.top)?;
    }
    write_wakeups(out, &findings.wakeups)?;
    write_migrations(out, &findings.migrations)?;
    Ok(())
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

fn write_incident(out: &mut dyn Write, rank: usize, incident: &Incident, origin: Nanos) -> Result<()> {
    let length = incident.end.saturating_sub(incident.start).0 as f64 / 1e6;
    let cpus: Vec<String> = incident.cpus.iter().take(4).map(|c| c.0.to_string()).collect();
    let more = if incident.cpus.len() > 4 { ",..." } else { "" };
    writeln!(
        out,
        "{rank:>3}  {:<18} {:>12.6} {:>7.1} ms {:>7.1} ms  {}{more}",
        incident.kind.name(),
        seconds(incident.start, origin),
        length,
        incident.lost_cpu_ns as f64 / 1e6,
        cpus.join(",")
    )?;
    for line in wrap(&incident.explanation, 74) {
        writeln!(out, "     {line}")?;
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

/// The CPU-to-CPU matrix for up to 16 CPUs, else the busiest pairs; and the migrations
/// that named CPUs the trace does not have.
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
    if let Some(rows) = matrix.dense(16) {
        writeln!(out, "from\\to {}", (0..rows.len()).map(|c| format!("{c:>4}")).collect::<String>())?;
        for (from, row) in rows.iter().enumerate() {
            writeln!(out, "{from:>7} {}", row.iter().map(|n| format!("{n:>4}")).collect::<String>())?;
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
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let map = figures::migration_map::migration_map("CPU-to-CPU migrations", &findings.migrations, 600.0);
    write_png(&dir.join("migrations.png"), &map)?;
    let rows = row_order(model.cpus().len(), None, false);
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
