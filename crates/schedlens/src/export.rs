//! `schedlens export`: a trace's events and model in the formats other tools read —
//! Perfetto (`.pftrace`), Parquet tables for DuckDB and Spark, OTF2 for Vampir (built with
//! the `otf2` feature). The writers live in the `export` crate; this is the glue.

mod dataset;
mod traces;

use crate::Outcome;
use crate::common::{Loaded, WindowArgs, load_model, open_trace};
use crate::progress::Progress;
use analysis::check::Affinity;
use anyhow::{Context, Result, bail};
use export::perfetto::{Content, PerfettoFile, PerfettoSummary};
use export::{Input, Scope};
use model::Nanos;
use std::path::{Path, PathBuf};
use tracedat::EventSource;

#[derive(clap::Args)]
pub struct Args {
    /// The traces (trace.dat, perf.data, Perfetto): files, directories (every trace file
    /// under them) or quoted glob patterns; several only with --format parquet, into one
    /// dataset.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    #[arg(long, value_enum)]
    format: Format,
    /// The output: a file for perfetto, a directory for parquet (a dataset traces are
    /// added to) and otf2.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Parquet, one trace: its partition name (`trace=NAME`); default the file name
    /// without its ending, `-` and a hash of its absolute path (see docs/export.md).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    #[command(flatten)]
    window: WindowArgs,
    /// `check` episodes that lost less CPU time than this many milliseconds are left out.
    #[arg(long, value_name = "MS", default_value_t = 0.25)]
    min_lost: f64,
    /// Perfetto: every event in full and schedlens's counter tracks, rather than compact
    /// switches and wakings where the model saw every switch and only the events Perfetto
    /// or schedlens read.
    #[arg(long)]
    all_events: bool,
    /// Perfetto: add schedlens's counter tracks (running and waiting tasks, each CPU's
    /// runqueue length) to the compact file; `--all-events` always has them.
    #[arg(long)]
    counters: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Perfetto's protobuf trace: open it in the Perfetto UI.
    Perfetto,
    /// One Parquet file per table, partitioned by trace.
    Parquet,
    /// An OTF2 archive for Vampir.
    Otf2,
}

pub fn run(args: Args) -> Result<Outcome> {
    if !(args.min_lost.is_finite() && args.min_lost >= 0.0) {
        bail!("--min-lost {} must be a number of milliseconds, 0 or more", args.min_lost);
    }
    if (args.all_events || args.counters) && args.format != Format::Perfetto {
        return Err(crate::usage(
            "--all-events and --counters shape a Perfetto file: give them with --format perfetto",
        ));
    }
    let traces = traces::expand(&args.traces)?;
    if traces.len() > 1 && args.format != Format::Parquet {
        bail!("several traces can only be exported with --format parquet (one directory, a partition each)");
    }
    if traces.len() > 1 && args.name.is_some() {
        bail!("--name names one trace; several traces are named after their files");
    }
    match args.format {
        Format::Parquet => dataset::run(&args, &traces::once_each(traces)),
        _ => export_one(&args, &traces[0]),
    }
}

fn export_one(args: &Args, path: &Path) -> Result<Outcome> {
    let context = || format!("exporting {} as {:?}", path.display(), args.format);
    // A perf.data is read whole when opened, so it is opened once, for the model.
    if args.format == Format::Perfetto
        && args.all_events
        && filters_nothing(&args.window)
        && inputs::Kind::of_file(path) == inputs::Kind::TraceDat
    {
        return perfetto_while_modelling(args, path).with_context(context);
    }
    let Loaded { trace, model, buffer, outcome } = load_model(path, model::Detail::FULL)?;
    let (window, origin) = args.window.resolve(&model, path)?;
    let scope = Scope::new(&model, window, origin, args.window.filter());
    let min_lost = Nanos((args.min_lost * 1e6) as u64);
    let affinity = trace.recorded_context().and_then(|c| Affinity::recorded(&c));
    let input =
        Input { trace: &trace, model: &model, buffer: &buffer, scope: &scope, min_lost, affinity: affinity.as_ref() };
    let bar = Progress::bytes(trace.data_size(), "exporting");
    let mut progress = |done: u64, _total: u64| bar.set(done);
    let out = &args.output;
    let message = match args.format {
        Format::Perfetto => {
            let content =
                if args.all_events { Content::AllEvents } else { Content::Compact { counters: args.counters } };
            let summary = export::perfetto::write(&input, out, content, &mut progress).with_context(context)?;
            perfetto_message(out, &summary)
        }
        Format::Parquet => unreachable!("Parquet exports go through export::dataset"),
        Format::Otf2 => write_otf2(&input, out, &mut progress).with_context(context)?,
    };
    drop(bar);
    println!("{message}");
    Ok(outcome)
}

/// A Perfetto export of every event in full: the events need no model, so they are
/// encoded while the model is built (its progress bar shows the reading), then the tracks.
fn perfetto_while_modelling(args: &Args, path: &Path) -> Result<Outcome> {
    let trace = open_trace(path)?;
    // The buffer Model::build reads (none when the file has no buffer).
    let buffer = trace.trace_dat().filter(|t| !t.buffers().is_empty()).map(|t| EventSource::buffer(t).to_string());
    let out = &args.output;
    let file = PerfettoFile::create(out, &trace)?;
    let (events, loaded) = std::thread::scope(|scope| {
        let events = buffer.as_ref().map(|buffer| {
            std::thread::Builder::new()
                .name("perfetto-events".into())
                .spawn_scoped(scope, || file.encode_events(&trace, buffer, None, None, &mut |_, _| {}))
                .expect("a thread can be started")
        });
        let loaded = load_model(path, model::Detail::FULL);
        (events.map(|events| events.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))), loaded)
    });
    let summary = loaded.and_then(|loaded| {
        anyhow::ensure!(Some(&loaded.buffer) == buffer.as_ref(), "the model read buffer {:?}", loaded.buffer);
        let events = events.expect("the model found a buffer")?;
        let (window, origin) = args.window.resolve(&loaded.model, path)?;
        let scope = Scope::new(&loaded.model, window, origin, args.window.filter());
        let affinity = loaded.trace.recorded_context().and_then(|c| Affinity::recorded(&c));
        let input = Input {
            trace: &loaded.trace,
            model: &loaded.model,
            buffer: &loaded.buffer,
            scope: &scope,
            min_lost: Nanos((args.min_lost * 1e6) as u64),
            affinity: affinity.as_ref(),
        };
        let tracks = file.encode_tracks(&input, Content::AllEvents.counters())?;
        Ok((file.finish(events, tracks)?, loaded.outcome))
    });
    let (summary, outcome) = summary.inspect_err(|_| {
        let _ = std::fs::remove_file(out);
    })?;
    println!("{}", perfetto_message(out, &summary));
    Ok(outcome)
}

/// Whether the window options leave every event in.
fn filters_nothing(window: &WindowArgs) -> bool {
    window.min.is_none() && window.max.is_none() && !window.after_sleep && !window.forked
}

fn perfetto_message(out: &Path, s: &PerfettoSummary) -> String {
    let e = &s.events;
    let compact = match e.compact_switches + e.compact_wakings + e.left_out {
        0 => String::new(),
        _ => format!(
            " ({} compact switches, {} compact wakings; {} events no reader uses left out)",
            e.compact_switches, e.compact_wakings, e.left_out
        ),
    };
    format!(
        "{}: {} events{compact}, {} as generic events, {} counter values, {} incidents, {} bytes",
        out.display(),
        e.written(),
        e.generic,
        s.tracks.counter_values,
        s.tracks.incident_slices,
        s.bytes
    )
}

#[cfg(feature = "otf2")]
fn write_otf2(input: &Input<'_>, out: &Path, progress: export::ProgressFn<'_>) -> Result<String> {
    let s = export::otf2::write(input, out, progress)?;
    Ok(format!(
        "{}: {} locations, {} regions, {} enter/leave pairs, {} migration messages, {} metric values",
        out.join("traces.otf2").display(),
        s.locations,
        s.regions,
        s.enters,
        s.messages,
        s.metric_values
    ))
}

#[cfg(not(feature = "otf2"))]
fn write_otf2(_: &Input<'_>, _: &Path, _: export::ProgressFn<'_>) -> Result<String> {
    bail!(
        "this schedlens was built without OTF2 support: build with `--features otf2` (needs Debian's libotf2-trace-dev)"
    )
}
