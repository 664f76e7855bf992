//! `export --format parquet`: one trace or many into one dataset. Many traces are exported
//! side by side, one per core, through `analysis::cores` (each thread takes the next trace
//! not yet taken; results come back in the traces' order): the work is a list of large
//! independent pieces, which that helper already spreads, so rayon's work stealing would
//! add a dependency and nothing else. A trace that fails is reported and the others are
//! exported (exit 3); the export crate commits each trace into the dataset atomically.

use super::Args;
use crate::Outcome;
use crate::common::{Loaded, load_model_showing};
use crate::progress::Progress;
use analysis::check::Affinity;
use anyhow::{Context, Result, anyhow, bail};
use export::{Input, Scope};
use model::Nanos;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One trace exported.
struct Exported {
    message: String,
    outcome: Outcome,
}

pub fn run(args: &Args, traces: &[PathBuf]) -> Result<Outcome> {
    if let [trace] = traces {
        let exported = export_trace(args, trace, true)?;
        println!("{}", exported.message);
        return Ok(exported.outcome);
    }
    let done = AtomicUsize::new(0);
    let bar = Progress::steps(traces.len() as u64, "exporting traces");
    let results = analysis::cores::on_cores_ticking(
        traces.len(),
        || (),
        |_, piece| {
            let result = export_trace(args, &traces[piece], false);
            done.fetch_add(1, Ordering::Relaxed);
            result
        },
        || bar.set(done.load(Ordering::Relaxed) as u64),
    );
    drop(bar);
    let mut outcome = Outcome::Complete;
    let mut failed = 0;
    for result in &results {
        match result {
            Ok(exported) => {
                println!("{}", exported.message);
                if exported.outcome != Outcome::Complete {
                    outcome = Outcome::Partial;
                }
            }
            Err(error) => {
                eprintln!("schedlens: error: {}", crate::said_once(error));
                failed += 1;
            }
        }
    }
    let listed = export::parquet::read_manifest(&args.output)?.traces.len();
    let summary = format!(
        "{}: {} of {} traces exported; {} lists {listed} traces",
        args.output.display(),
        traces.len() - failed,
        traces.len(),
        export::parquet::MANIFEST
    );
    if failed == traces.len() {
        bail!("none of the {} traces could be exported", traces.len());
    }
    println!("{summary}");
    if failed > 0 {
        eprintln!("schedlens: warning: {failed} of {} traces could not be exported (said above)", traces.len());
        outcome = Outcome::Partial;
    }
    Ok(outcome)
}

/// Exports one trace into the dataset, with progress bars if `show_progress`.
fn export_trace(args: &Args, path: &Path, show_progress: bool) -> Result<Exported> {
    let source = std::fs::canonicalize(path).map_err(|error| anyhow!("cannot open {}: {error}", path.display()))?;
    let name = args.name.clone().unwrap_or_else(|| export::parquet::partition_name(&source));
    let Loaded { trace, model, buffer, outcome } = load_model_showing(path, model::Detail::FULL, show_progress)?;
    let (window, origin) = args.window.resolve(&model, path)?;
    let scope = Scope::new(&model, window, origin, args.window.filter());
    let affinity = trace.recorded_context().and_then(|c| Affinity::recorded(&c));
    let input = Input {
        trace: &trace,
        model: &model,
        buffer: &buffer,
        scope: &scope,
        min_lost: Nanos((args.min_lost * 1e6) as u64),
        affinity: affinity.as_ref(),
    };
    let bar = if show_progress { Progress::bytes(trace.data_size(), "exporting") } else { Progress::hidden() };
    let mut progress = |done: u64, _total: u64| bar.set(done);
    let source = export::parquet::Source { path: &source, damaged: outcome != Outcome::Complete };
    let summary = export::parquet::write(&input, &args.output, &name, &source, &mut progress)
        .with_context(|| format!("exporting {} as Parquet", path.display()))?;
    let rows: u64 = summary.tables.iter().map(|(_, n)| n).sum();
    let message =
        format!("{}: trace={}: {} tables, {rows} rows", args.output.display(), summary.trace, summary.tables.len());
    Ok(Exported { message, outcome })
}
