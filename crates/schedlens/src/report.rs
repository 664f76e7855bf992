//! `schedlens report`: builds each trace's model, then writes one self-contained HTML
//! file (crates/report) describing the traces, with the interactive timeline, the
//! incidents, the statistics and the migrations, within a size budget.

use crate::Outcome;
use crate::common::WindowArgs;
use crate::figure::{MarkerArgs, load_runs};
use crate::progress::Progress;
use crate::topology::TopologyArgs;
use anyhow::{Context, Result, bail};
use model::Detail;
use report::{Options, ReportTrace, Stage};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
#[command(after_help = "Example:\n  schedlens report run.dat -o run.html\n  \
                        schedlens report fastest.dat slowest.dat -o compare.html   (one time scale, and the compare table)")]
pub struct Args {
    /// The trace.dat files, shown one below the other on one time scale.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// The HTML file to write (default: named after the first trace, `NAME-report.html`).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The file's size at most, in megabytes (10^6 bytes): less detail to zoom into when
    /// smaller.
    #[arg(long, value_name = "MB", default_value_t = 5.0)]
    size_budget: f64,
    #[command(flatten)]
    topology: TopologyArgs,
    #[command(flatten)]
    markers: MarkerArgs,
}

pub fn run(args: Args) -> Result<Outcome> {
    if !(args.size_budget.is_finite() && (0.2..=2000.0).contains(&args.size_budget)) {
        bail!("--size-budget {} is out of range (0.2 to 2000 MB)", args.size_budget);
    }
    let output = args.output.clone().unwrap_or_else(|| default_name(&args.traces[0]));
    let (runs, outcome) = load_runs(&args.traces, &WindowArgs::default(), Detail::FULL)?;
    let mut traces = Vec::with_capacity(runs.len());
    for run in runs {
        let trace = &run.loaded.trace;
        let topology = args.topology.resolve(trace, run.loaded.model.cpus().len(), &run.path)?;
        let markers = args.markers.read(trace)?;
        let description: Vec<(String, String)> =
            crate::info::describe_file(trace).into_iter().map(|(l, t)| (l.to_string(), t)).collect();
        let command_pid = trace.recorded_context().and_then(|c| c.pid).map(|p| model::Pid(p as i32));
        let name = run.path.file_name().map_or_else(|| run.path.display().to_string(), |n| n.to_string_lossy().into());
        traces.push(ReportTrace {
            name,
            description,
            model: run.loaded.model,
            topology,
            origin: run.origin,
            markers,
            command_pid,
            affinity: crate::check::recorded_affinity(&run.loaded.trace),
        });
    }
    let options = Options { size_budget: (args.size_budget * 1e6) as usize, socket_order: args.topology.socket_order };
    let progress = Progress::steps(2 * traces.len() as u64 + 1, "report");
    let mut step = 0;
    let report = report::build(&traces, &options, &mut |stage| {
        step += 1;
        progress.set(step);
        progress.message(match stage {
            Stage::Analysing(n) => format!("checking {}", traces[n].name),
            Stage::Tiles(n) => format!("tiles of {}", traces[n].name),
            Stage::Comparing => "comparing".to_string(),
        });
    });
    drop(progress);
    std::fs::write(&output, &report.html).with_context(|| format!("cannot write {}", output.display()))?;
    let levels: Vec<String> = report
        .coverage
        .iter()
        .map(|c| format!("{} levels ({} ns columns at most)", c.top - c.finest + 1, 1u64 << c.finest))
        .collect();
    eprintln!("schedlens: wrote {} ({} bytes; {})", output.display(), report.html.len(), levels.join(", "));
    if report.html.len() > options.size_budget {
        eprintln!(
            "schedlens: warning: the report is larger than --size-budget {} MB: the whole trace at the coarsest level alone does not fit",
            args.size_budget
        );
    }
    Ok(outcome)
}

/// `dir/run.dat` → `run-report.html` in the current directory.
fn default_name(trace: &Path) -> PathBuf {
    let stem = trace.file_stem().map_or_else(|| "trace".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}-report.html"))
}
