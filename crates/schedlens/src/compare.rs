//! `schedlens compare A.dat B.dat`: the schedgraph paper's comparison of the fastest
//! and the slowest run. Each trace's workload (from the end of its initial sleep to the
//! traced command's exit) is drawn as a timeline and a running/waiting plot on one time
//! scale, and what differs is listed — per command (with its wakeup latency's p50 and
//! p99), per CPU, per kind of incident, and the critical path's parts side by side —
//! ranked by how much of the difference in running time it accounts for, as text or
//! JSON on stdout and as a figure (the plots, then the differences as bars).

use crate::Outcome;
use crate::common::load_model;
use crate::figure::OutputArgs;
use analysis::check::Affinity;
use anyhow::Result;
use experiment::compare::{Comparison, MeasureUnit, compare};
use experiment::profile::Profile;
use figures::difference_bars::difference_bars;
use figures::graph::{GraphRequest, PlotSize, graph, row_order};
use figures::running_waiting_plot::{RunningWaitingRequest, running_waiting_plot};
use figures::timeline::Coloring;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
#[command(after_help = "Example (the fastest and slowest runs `schedlens runs --record` names):\n  \
                        schedlens compare out/traces/run-003-s1-r1.dat out/traces/run-007-s1-r3.dat -o cmp.pdf")]
pub struct Args {
    /// The first trace (A), e.g. the fastest run.
    a: PathBuf,
    /// The second trace (B), e.g. the slowest run.
    b: PathBuf,
    /// Count every task, not only the traced command's process tree (or, when the trace
    /// does not say which command it traced, the tasks forked during the trace).
    #[arg(long)]
    all_tasks: bool,
    /// Rows of each table in the text output (JSON has them all).
    #[arg(long, default_value_t = 15)]
    top: usize,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// The machines' topology when the traces carry none (for cross-socket and cross-node
    /// migrations): an `lscpu -p` file, a copy of /sys/devices/system/cpu, or a spec.
    #[arg(long, value_name = "FILE|SPEC")]
    topology: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

/// A trace loaded and profiled.
struct Side {
    path: PathBuf,
    loaded: crate::common::Loaded,
    profile: Profile,
}

fn side(path: &Path, args: &Args) -> Result<Side> {
    let loaded = load_model(path, model::Detail::FULL)?;
    let model = &loaded.model;
    let topology = crate::topology::topology_of(args.topology.as_deref(), &loaded.trace, model.cpus().len())?;
    let pid = loaded.trace.command_pid();
    let affinity = loaded.trace.recorded_context().and_then(|c| Affinity::recorded(&c));
    let profile = Profile::of(model, topology.as_ref(), affinity.as_ref(), pid, args.all_tasks);
    Ok(Side { path: path.to_path_buf(), loaded, profile })
}

pub fn run(args: Args) -> Result<Outcome> {
    let (figure_path, figure_format) = args.output.target(&args.a, "compare")?;
    let sides = [side(&args.a, &args)?, side(&args.b, &args)?];
    let comparison = compare(&sides[0].profile, &sides[1].profile);
    let (a, b) = (args.a.display().to_string(), args.b.display().to_string());
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Text => out.write_all(comparison.to_text(&a, &b, args.top).as_bytes())?,
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&comparison.to_document(&a, &b))?)?,
    }
    let pages = figure_pages(&args, &sides, &comparison, figure_format);
    args.output.write(&figure_path, figure_format, pages)?;
    let outcome = sides.iter().map(|s| s.loaded.outcome).find(|o| *o != Outcome::Complete);
    Ok(outcome.unwrap_or(Outcome::Complete))
}

/// Both timelines, both running/waiting plots (all on the scale of the longer run), and
/// the differences in time as bars.
fn figure_pages(args: &Args, sides: &[Side; 2], comparison: &Comparison, format: render::Format) -> Vec<render::Scene> {
    let span = sides.iter().map(|s| s.profile.workload.window.len()).max().unwrap_or(model::Nanos(1));
    let size = PlotSize { width: args.output.width, height: args.output.height };
    let columns_per_px = args.output.columns_per_px(format);
    let names = ["A", "B"];
    let mut pages = Vec::new();
    for (side, name) in sides.iter().zip(names) {
        let workload = &side.profile.workload;
        let rows = row_order(side.loaded.model.cpus().len(), None, false);
        let request = GraphRequest {
            title: format!("{name}: {}", args.output.title_of(&side.path, 1)),
            window: workload.window,
            origin: workload.origin,
            span,
            rows: &rows,
            filter: &workload.filter,
            coloring: &Coloring::ByPid,
            markers: &[],
            size,
            columns_per_px,
        };
        pages.push(graph(&side.loaded.model, &request));
    }
    for (side, name) in sides.iter().zip(names) {
        let workload = &side.profile.workload;
        let request = RunningWaitingRequest {
            title: format!("{name}: {} running and waiting", args.output.title_of(&side.path, 1)),
            window: workload.window,
            origin: workload.origin,
            span,
            filter: &workload.filter,
            per_cpu: &[],
            markers: &[],
            size,
            columns_per_px,
        };
        pages.push(running_waiting_plot(&side.loaded.model, &request).0);
    }
    let bars: Vec<(String, f64)> = comparison
        .rows
        .iter()
        .filter(|r| r.unit == MeasureUnit::Seconds)
        .take(args.top)
        .map(|r| (r.what.clone(), r.delta()))
        .collect();
    let mut notes = vec![format!(
        "A {:.4} s, B {:.4} s: B - A = {:+.4} s (dashed line); red: B more, blue: B less",
        comparison.running_a,
        comparison.running_b,
        comparison.difference()
    )];
    for (name, path) in ["A", "B"].iter().zip(&comparison.paths) {
        if let Some(path) = path {
            notes.push(format!("{name}'s critical path: {}", experiment::critical_path::sentence(path)));
        }
    }
    pages.push(difference_bars(
        "What differs in time (B - A)",
        &bars,
        comparison.difference(),
        &notes,
        args.output.width.min(700.0),
    ));
    pages
}
