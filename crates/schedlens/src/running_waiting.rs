//! `schedlens running-waiting`: running versus runnable tasks against the core count
//! (the schedgraph paper's second tool), for one or several traces on one time scale,
//! with the time a task waited while a core idled printed and shaded.

use crate::common::WindowArgs;
use crate::figure::{MarkerArgs, OutputArgs, Run, common_span, load_runs};
use crate::topology::TopologyArgs;
use crate::{Outcome, usage};
use analysis::occupancy::IdleWhileWaiting;
use anyhow::Result;
use figures::graph::{PlotSize, row_order};
use figures::running_waiting_plot::{RunningWaitingRequest, known_and_unknown, running_waiting_plot};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat files: one figure each, all on the time scale of the slowest.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    #[command(flatten)]
    window: WindowArgs,
    /// Count only tasks whose command starts with CMD (idle CPUs count whatever ran).
    #[arg(long, value_name = "CMD")]
    target: Option<String>,
    /// Add a heat strip per CPU with its runqueue length (running plus waiting there).
    #[arg(long)]
    per_cpu: bool,
    #[command(flatten)]
    markers: MarkerArgs,
    #[command(flatten)]
    topology: TopologyArgs,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(args: Args) -> Result<Outcome> {
    let (path, format) = args.output.target(&args.traces[0], "running-waiting")?;
    if args.target.as_deref() == Some("") {
        return Err(usage("--target needs a command name prefix"));
    }
    let filter = analysis::TaskFilter { command_prefix: args.target.clone(), ..args.window.filter() };
    let (runs, outcome) = load_runs(&args.traces, &args.window, analysis::occupancy::detail_for(&filter))?;
    let span = common_span(&runs);
    let mut pages = Vec::with_capacity(runs.len());
    for run in &runs {
        let model = &run.loaded.model;
        let topology = args.topology.resolve(&run.loaded.trace, model.cpus().len(), &run.path)?;
        let markers = args.markers.read(&run.loaded.trace)?;
        let mut strips = if args.per_cpu {
            row_order(model.cpus().len(), topology.as_ref(), args.topology.socket_order)
        } else {
            Vec::new()
        };
        strips.reverse();
        let request = RunningWaitingRequest {
            title: args.output.title_of(&run.path, runs.len()),
            window: run.window,
            origin: run.origin,
            span,
            filter: &filter,
            per_cpu: &strips,
            size: PlotSize { width: args.output.width, height: args.output.height },
            columns_per_px: args.output.columns_per_px(format),
            markers: &markers,
        };
        let (page, found) = running_waiting_plot(model, &request);
        print_summary(&run.path, found, run)?;
        pages.push(page);
    }
    args.output.write(&path, format, pages)?;
    Ok(outcome)
}

/// The summary on stdout: how long a task waited while a core idled.
fn print_summary(path: &std::path::Path, found: IdleWhileWaiting, run: &Run) -> std::io::Result<()> {
    let window_ns = run.window.len().0.max(1);
    let share = 100.0 * found.total.0 as f64 / window_ns as f64;
    let longest = found.longest.map_or(String::new(), |(start, end)| {
        let from_s = (start.0 as f64 - run.origin.0 as f64) / 1e9;
        format!("; longest stretch {:.6} s, from {from_s:.6} s", end.saturating_sub(start).as_secs_f64())
    });
    let (known, unknown) = known_and_unknown(found.unknown, run.window.len());
    writeln!(
        std::io::stdout().lock(),
        "{}: a task waited while a core idled for {:.6} s{known} ({share:.2}% of the {:.6} s window){longest}{unknown}",
        path.display(),
        found.total.0 as f64 / 1e9,
        window_ns as f64 / 1e9
    )
}
