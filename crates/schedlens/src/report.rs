//! `schedlens report`: builds each trace's model, then writes one self-contained HTML
//! file (crates/report) describing the traces, with the interactive timeline, the
//! incidents, the statistics and the migrations, within a size budget.

use crate::Outcome;
use crate::common::{Loaded, WindowArgs, load_model};
use crate::figure::{MarkerArgs, load_runs};
use crate::progress::Progress;
use crate::topology::TopologyArgs;
use analysis::check::Affinity;
use anyhow::{Context, Result, bail};
use documents::runs::Results;
use experiment::profile::WorkloadWindow;
use model::Detail;
use report::{Options, ReportTrace, RunSeries, Stage};
use std::path::{Path, PathBuf};
use tiles::ShownTrace;

#[derive(clap::Args)]
#[command(after_help = "Example:\n  schedlens report run.dat -o run.html\n  \
                        schedlens report fastest.dat slowest.dat -o compare.html   (one time scale, and the compare table)\n  \
                        schedlens report runs-dir   (a `schedlens runs` series: its statistics, and its fastest and slowest runs)")]
pub struct Args {
    /// The trace.dat files, shown one below the other on one time scale (with several,
    /// times count from each workload's start, as `compare` counts them); or one results
    /// directory of `schedlens runs` (the report then goes to DIR/report.html).
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// The HTML file to write (default: named after the first trace, `NAME-report.html`).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The file's size at most, in megabytes (10^6 bytes): less detail to zoom into when
    /// smaller.
    #[arg(long, value_name = "MB", default_value_t = DEFAULT_SIZE_BUDGET_MB)]
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
    let options = Options { size_budget: (args.size_budget * 1e6) as usize, socket_order: args.topology.socket_order };
    if let [dir] = args.traces.as_slice()
        && dir.is_dir()
    {
        let output = args.output.clone().unwrap_or_else(|| dir.join(SERIES_REPORT));
        let results = runs::files::load_results(dir)?;
        let (report, outcome) = series_report(dir, results, &options, &args.topology, &args.markers)?;
        write(&output, &report, &options)?;
        return Ok(outcome);
    }
    if let Some(dir) = args.traces.iter().find(|p| p.is_dir()) {
        bail!("{} is a directory: give one results directory of `schedlens runs`, or trace files", dir.display());
    }
    let output = args.output.clone().unwrap_or_else(|| default_name(&args.traces[0]));
    let (runs, outcome) = load_runs(&args.traces, &WindowArgs::default(), Detail::FULL)?;
    let several = runs.len() > 1;
    let mut traces = Vec::with_capacity(runs.len());
    for run in runs {
        let name = run.path.file_name().map_or_else(|| run.path.display().to_string(), |n| n.to_string_lossy().into());
        traces.push(report_trace(name, &run.path, run.loaded, several, &args.topology, &args.markers)?);
    }
    let report = build(&traces, None, &options);
    write(&output, &report, &options)?;
    Ok(outcome)
}

/// The file's size at most unless `--size-budget` says otherwise, in megabytes.
pub const DEFAULT_SIZE_BUDGET_MB: f64 = 5.0;

/// The name of a run series' report in its results directory.
pub const SERIES_REPORT: &str = "report.html";

/// The report of the run series in `dir`: its statistics, and its fastest and slowest
/// runs' traces when they were recorded.
pub fn series_report(
    dir: &Path,
    results: Results,
    options: &Options,
    topology: &TopologyArgs,
    markers: &MarkerArgs,
) -> Result<(report::Report, Outcome)> {
    let series = RunSeries { dir: dir.display().to_string(), results };
    let extremes = series.extremes();
    let mut traces = Vec::new();
    let mut outcome = Outcome::Complete;
    for (&index, role) in extremes.iter().zip(["fastest", "slowest"]) {
        let Some(relative) = &series.results.runs[index].trace else { continue };
        let path = dir.join(relative);
        let loaded = load_model(&path, Detail::FULL)?;
        if loaded.outcome != Outcome::Complete {
            outcome = loaded.outcome;
        }
        let mut trace = report_trace(relative.clone(), &path, loaded, true, topology, markers)?;
        trace.description.insert(0, ("run".into(), series.describe_run(index, role)));
        traces.push(trace);
    }
    Ok((build(&traces, Some(&series), options), outcome))
}

/// One trace as the report takes it. With `workload_origin`, times count from its
/// workload's start (the end of the recording's initial sleep), as `compare` counts them.
fn report_trace(
    name: String,
    path: &Path,
    loaded: Loaded,
    workload_origin: bool,
    topology: &TopologyArgs,
    markers: &MarkerArgs,
) -> Result<ReportTrace> {
    let trace = &loaded.trace;
    let model = loaded.model;
    let topology = topology.resolve(trace, model.cpus().len(), path)?;
    let markers = markers.read(trace)?;
    let description: Vec<(String, String)> = trace.describe().into_iter().map(|(l, t)| (l.to_string(), t)).collect();
    let command_pid = trace.command_pid();
    let origin = if workload_origin { WorkloadWindow::of(&model, command_pid, false).origin } else { model.start() };
    Ok(ReportTrace {
        description,
        markers,
        command_pid,
        affinity: trace.recorded_context().and_then(|c| Affinity::recorded(&c)),
        shown: ShownTrace { name, model, topology, origin },
    })
}

/// Builds the report, with a progress display.
fn build(traces: &[ReportTrace], series: Option<&RunSeries>, options: &Options) -> report::Report {
    let progress = Progress::steps(2 * traces.len() as u64 + 1, "report");
    let mut step = 0;
    let report = report::build(traces, series, options, &mut |stage| {
        step += 1;
        progress.set(step);
        progress.message(match stage {
            Stage::Analysing(n) => format!("checking {}", traces[n].shown.name),
            Stage::Tiles(n) => format!("tiles of {}", traces[n].shown.name),
            Stage::Comparing => "comparing".to_string(),
        });
    });
    drop(progress);
    report
}

/// Writes the file and says so.
pub fn write(output: &Path, report: &report::Report, options: &Options) -> Result<()> {
    std::fs::write(output, &report.html).with_context(|| format!("cannot write {}", output.display()))?;
    let levels: Vec<String> = report
        .coverage
        .iter()
        .map(|c| format!("{} levels ({} ns columns at most)", c.top - c.finest + 1, 1u64 << c.finest))
        .collect();
    let levels = if levels.is_empty() { String::new() } else { format!("; {}", levels.join(", ")) };
    eprintln!("schedlens: wrote {} ({} bytes{levels})", output.display(), report.html.len());
    if report.html.len() > options.size_budget {
        eprintln!(
            "schedlens: warning: the report is larger than --size-budget {} MB: the whole trace at the coarsest level alone does not fit",
            options.size_budget as f64 / 1e6
        );
    }
    Ok(())
}

/// `dir/run.dat` → `run-report.html` in the current directory.
fn default_name(trace: &Path) -> PathBuf {
    let stem = trace.file_stem().map_or_else(|| "trace".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}-report.html"))
}
