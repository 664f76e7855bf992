//! `schedlens graph`: the per-core timeline of the schedgraph paper (dat2graph) for one
//! or several traces, on the time scale of the slowest.

use crate::common::WindowArgs;
use crate::figure::{MarkerArgs, OutputArgs, common_span, load_runs};
use crate::topology::TopologyArgs;
use crate::{Outcome, usage};
use anyhow::Result;
use figures::graph::{GraphRequest, PlotSize, graph, row_order};
use figures::timeline::Coloring;
use model::Detail;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat files: one figure each, all on the time scale of the slowest.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    #[command(flatten)]
    window: WindowArgs,
    /// Color tasks whose command starts with CMD by pid, all others black.
    #[arg(long, value_name = "CMD", conflicts_with = "color_by_command")]
    target: Option<String>,
    /// Color by command name, with a legend: per command its first and last run, run
    /// time, context switches and pids.
    #[arg(long)]
    color_by_command: bool,
    #[command(flatten)]
    markers: MarkerArgs,
    #[command(flatten)]
    topology: TopologyArgs,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(args: Args) -> Result<Outcome> {
    let (path, format) = args.output.target(&args.traces[0], "graph")?;
    let coloring = match (&args.target, args.color_by_command) {
        (Some(prefix), _) if prefix.is_empty() => return Err(usage("--target needs a command name prefix")),
        (Some(prefix), _) => Coloring::Target(prefix.clone()),
        (None, true) => Coloring::ByCommand,
        (None, false) => Coloring::ByPid,
    };
    let (runs, outcome) = load_runs(&args.traces, &args.window, Detail::SEGMENTS)?;
    let span = common_span(&runs);
    let filter = args.window.filter();
    let mut pages = Vec::with_capacity(runs.len());
    for run in &runs {
        let model = &run.loaded.model;
        let topology = args.topology.resolve(&run.loaded.trace, model.cpus().len(), &run.path)?;
        let markers = args.markers.read(&run.loaded.trace)?;
        let rows = row_order(model.cpus().len(), topology.as_ref(), args.topology.socket_order);
        let request = GraphRequest {
            title: args.output.title_of(&run.path, runs.len()),
            window: run.window,
            origin: run.origin,
            span,
            rows: &rows,
            filter: &filter,
            coloring: &coloring,
            size: PlotSize { width: args.output.width, height: args.output.height },
            columns_per_px: args.output.columns_per_px(format),
            markers: &markers,
        };
        pages.push(graph(model, &request));
    }
    args.output.write(&path, format, pages)?;
    Ok(outcome)
}
