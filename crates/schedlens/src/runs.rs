//! `schedlens runs`: the command line of the `runs` crate's sweeps — the command run N
//! times per setting of the knobs, untraced or recorded, with a progress line on a
//! terminal — and of `runs --report`, which redraws the summary and figures of a saved
//! results directory. Both also write the series' HTML report (`schedlens report DIR`).

use crate::Outcome;
use crate::figure::MarkerArgs;
use crate::progress::Progress;
use crate::report::{DEFAULT_SIZE_BUDGET_MB, SERIES_REPORT, series_report};
use crate::topology::TopologyArgs;
use anyhow::{Context, Result, bail};
use documents::runs::Results;
use render::Format;
use runs::SweepRequest;
use runs::files::{RESULTS_JSON, load_results, write_all, write_derived};
use runs::knobs::KnobValues;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    schedlens runs -n 10 -o ua-runs -- ./ua.C.x\n  \
    schedlens runs -n 10 --set kernel.sched_rr_timeslice_ms=1,10,100 -o rr -- chrt -r 1 hackbench -g 2\n  \
    schedlens runs -n 5 --record --set kernel.sched_autogroup_enabled=0,1 -o ag -- hackbench -g 4\n  \
    schedlens runs -n 5 --record --recorder perf -o ag-perf -- hackbench -g 4\n  \
    schedlens runs --report ag\n\n\
    Knobs: sysctl names (kernel.sched_rr_timeslice_ms), paths below debugfs (sched/base_slice_ns), or files\n\
    under /proc and /sys. Each is read before the first run, every value is tried once before anything runs\n\
    (so a knob the kernel refuses is an error at once), and the original is written back at the end: after\n\
    the last run, an error, Ctrl-C, SIGTERM or a panic.\n\n\
    Exit codes: 0 done; 1 failure (nothing was run, or a knob write failed); 2 bad usage;\n\
    130 / 143 / 129 stopped by SIGINT / SIGTERM / SIGHUP (knobs restored, results so far written).")]
pub struct Args {
    /// Runs per setting.
    #[arg(short = 'n', long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Seconds to sleep before each run (inside the trace with --record, where
    /// `--after-sleep` finds its end).
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    sleep: f64,
    /// Trace every run as `schedlens record` does, keep the traces, and add the scheduler
    /// metrics of `check` and `stats` to each run.
    #[arg(long)]
    record: bool,
    /// What records each run with --record: schedlens (its own recorder, trace.dat) or
    /// perf (`perf record` of the scheduler tracepoints, perf.data).
    #[arg(long, value_enum, value_name = "RECORDER", requires = "record")]
    recorder: Option<RecorderArg>,
    /// A knob and the values to try, KNOB=V1,V2,...; repeat for a grid of all combinations.
    #[arg(long = "set", value_name = "KNOB=V1,V2,...")]
    set: Vec<String>,
    /// The results directory (created when the first run starts; must not hold results).
    #[arg(short, long, value_name = "DIR", default_value = "schedlens-runs")]
    output: PathBuf,
    /// Redraw the summary, figures and report.html of the results in DIR, without running
    /// anything.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["command", "set", "record"])]
    report: Option<PathBuf>,
    /// Formats of the running-time figure, comma-separated: pdf, svg, png.
    #[arg(long, value_name = "LIST", default_value = "pdf,png", value_delimiter = ',')]
    figure_format: Vec<String>,
    /// The command to run, with its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Copy, Clone, clap::ValueEnum)]
enum RecorderArg {
    Schedlens,
    Perf,
}

pub fn run(args: Args) -> Result<Outcome> {
    let formats = formats(&args.figure_format)?;
    if let Some(dir) = &args.report {
        let results = load_results(dir)?;
        let (summary, mut written) = write_derived(dir, &results, &formats)?;
        written.extend(write_html(dir, &results));
        print_report(&summary.to_text(&results), &written)?;
        return Ok(Outcome::Complete);
    }
    if args.command.is_empty() {
        bail!("no command given: schedlens runs [OPTIONS] -- COMMAND... (or --report DIR)");
    }
    let sleep = Duration::try_from_secs_f64(args.sleep).with_context(|| format!("--sleep {}", args.sleep))?;
    let knobs = args.set.iter().map(|s| KnobValues::parse(s)).collect::<Result<Vec<_>, _>>()?;
    refuse_existing_results(&args.output)?;
    let request = SweepRequest {
        command: args.command.clone(),
        repetitions: args.runs as usize,
        sleep,
        record: args.record,
        recorder: match args.recorder {
            None | Some(RecorderArg::Schedlens) => runs::Recorder::Schedlens,
            Some(RecorderArg::Perf) => runs::Recorder::Perf,
        },
        knobs,
        dir: args.output.clone(),
    };
    let bar = Progress::steps(0, "");
    let results = runs::sweep(&request, &mut |event| show(&bar, event))?;
    drop(bar);
    let (summary, mut written) = write_all(&args.output, &results, &formats)?;
    written.extend(write_html(&args.output, &results));
    print_report(&summary.to_text(&results).replace("DIR/", &format!("{}/", args.output.display())), &written)?;
    Ok(match results.interrupted_by {
        Some(signal) => Outcome::Interrupted(signal),
        None => Outcome::Complete,
    })
}

/// The series' HTML report (`schedlens report DIR`), in DIR; a warning instead when it
/// cannot be made (a trace that cannot be read), since the results are written.
fn write_html(dir: &Path, results: &Results) -> Option<PathBuf> {
    let options = report::Options { size_budget: (DEFAULT_SIZE_BUDGET_MB * 1e6) as usize, socket_order: false };
    let markers = MarkerArgs { markers: None };
    let path = dir.join(SERIES_REPORT);
    let made =
        series_report(dir, results.clone(), &options, &TopologyArgs::default(), &markers).and_then(|(report, _)| {
            std::fs::write(&path, report.html).with_context(|| format!("cannot write {}", path.display()))
        });
    match made {
        Ok(()) => Some(path),
        Err(error) => {
            eprintln!("schedlens: warning: no {SERIES_REPORT}: {error:#}");
            None
        }
    }
}

fn formats(names: &[String]) -> Result<Vec<Format>> {
    names
        .iter()
        .map(|name| {
            Format::from_extension(name.trim())
                .with_context(|| format!("--figure-format {name:?}: expected pdf, svg or png"))
        })
        .collect()
}

fn refuse_existing_results(dir: &Path) -> Result<()> {
    if dir.join(RESULTS_JSON).exists() {
        bail!("{} already holds results: choose another -o DIR, or remove it", dir.display());
    }
    Ok(())
}

fn show(bar: &Progress, event: runs::Progress<'_>) {
    match event {
        runs::Progress::Run { index, total, setting, .. } => {
            bar.restart(total as u64, index as u64);
            bar.message(format!("run {} of {total}: {setting}", index + 1));
        }
        runs::Progress::Ran { index, .. } => bar.set(index as u64 + 1),
        runs::Progress::Analysing { index, total } => {
            bar.restart(total as u64, index as u64);
            bar.message(format!("analysing trace {} of {total}", index + 1));
        }
    }
}

fn print_report(summary: &str, written: &[PathBuf]) -> Result<()> {
    std::io::stdout().lock().write_all(summary.as_bytes())?;
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    eprintln!("schedlens: wrote {}", names.join(", "));
    Ok(())
}
