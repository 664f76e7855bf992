//! What several commands share: the window and task-filter arguments, checked values
//! of options, opening a trace with a clear message, and loading a trace's model with a
//! progress bar and the warnings users need to see.

use crate::progress::Progress;
use crate::{Outcome, report_damage, usage};
use analysis::{TaskFilter, Window, WindowError, WindowRequest};
use anyhow::{Context, Result, bail};
use inputs::Input;
use model::{Anomaly, Detail, Model, Nanos};
use std::path::Path;

/// Parses a number of seconds: finite, 0 or more (for `value_parser`).
pub fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!("{text:?} is not a number of seconds (0 or more)")),
    }
}

/// Opens a trace (trace.dat or perf.data, by its magic bytes); a file that cannot be
/// opened gets one sentence naming it.
pub fn open_trace(path: &Path) -> Result<Input> {
    match std::fs::metadata(path) {
        Err(error) => bail!("cannot open {}: {error}", path.display()),
        Ok(metadata) if metadata.is_dir() => bail!("{} is a directory, not a trace file", path.display()),
        Ok(_) => Ok(Input::open(path)?),
    }
}

/// `--min`, `--max`, `--after-sleep`, `--forked`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct WindowArgs {
    /// Start of the window, in seconds from the trace start (or from the end of the
    /// initial sleep with --after-sleep).
    #[arg(long, value_name = "S", value_parser = seconds)]
    pub min: Option<f64>,
    /// End of the window, in seconds (same origin as --min).
    #[arg(long, value_name = "S", value_parser = seconds)]
    pub max: Option<f64>,
    /// Measure from the end of the recording's initial `sleep`: the first task named
    /// `sleep` to exit in the traced command's process tree (the command is the task of
    /// the trace's first exec).
    #[arg(long)]
    pub after_sleep: bool,
    /// Only tasks created during the trace (the workload, not the system's daemons).
    #[arg(long)]
    pub forked: bool,
}

impl WindowArgs {
    pub fn filter(&self) -> TaskFilter {
        TaskFilter { forked_only: self.forked, ..TaskFilter::default() }
    }

    fn request(&self) -> WindowRequest {
        WindowRequest { min_s: self.min, max_s: self.max, after_sleep: self.after_sleep }
    }

    /// Checks the options before any trace is read (`--min` before `--max`).
    pub fn validate(&self) -> Result<()> {
        self.request().validate().map_err(|error| usage(error.to_string()))
    }

    /// The window and the origin times are shown relative to.
    pub fn resolve(&self, model: &Model, input: &Path) -> Result<(Window, Nanos)> {
        match self.request().resolve(model) {
            Ok(resolved) => Ok(resolved),
            Err(error @ (WindowError::Empty { .. } | WindowError::NotSeconds(_))) => Err(usage(error.to_string())),
            Err(error) => Err(error).with_context(|| input.display().to_string()),
        }
    }
}

/// Anomalies no kernel produces on its own: records a damaged file holds (CPU numbers
/// beyond the machine, fields that cannot be read, a clock that steps back on one CPU).
/// Like damaged pages, they make a result partial (exit 3); the others (switches the
/// kernel did not record, pid reuse, ...) happen in good traces and are only shown.
const DAMAGE: [Anomaly; 3] = [Anomaly::CpuOutOfRange, Anomaly::MissingField, Anomaly::TimeWentBackwards];

/// A trace's model, with what building it met.
pub struct Loaded {
    pub trace: Input,
    pub model: Model,
    /// The buffer the model was built from ("" is the top buffer).
    pub buffer: String,
    pub outcome: Outcome,
}

/// Opens a trace and builds its model with the tables `detail` asks for, showing
/// progress and printing warnings.
pub fn load_model(path: &Path, detail: Detail) -> Result<Loaded> {
    load_model_showing(path, detail, true)
}

/// [`load_model`], with its progress bar only if `show_progress` (traces loaded side by
/// side share one bar of their own).
pub fn load_model_showing(path: &Path, detail: Detail, show_progress: bool) -> Result<Loaded> {
    load(path, Build::Tables(detail), show_progress)
}

/// [`load_model`] for a pass that looks at each wait once: the model keeps segments and
/// tasks, and hands its waits and migrations to `sink` as it builds (`Model::build_streaming`).
pub fn load_model_streaming(path: &Path, sink: &mut dyn model::WaitSink) -> Result<Loaded> {
    load(path, Build::Streaming(sink), true)
}

/// How a model is built: with the tables a detail asks for, or streaming its waits.
enum Build<'s> {
    Tables(Detail),
    Streaming(&'s mut dyn model::WaitSink),
}

impl Build<'_> {
    fn model<S: tracedat::EventSource>(
        &mut self,
        source: &S,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(Model, model::BuildReport), model::ModelError> {
        match self {
            Build::Tables(detail) => Model::build(source, *detail, progress),
            Build::Streaming(sink) => Model::build_streaming(source, progress, *sink),
        }
    }
}

fn load(path: &Path, mut build: Build<'_>, show_progress: bool) -> Result<Loaded> {
    let trace = open_trace(path)?;
    let progress = if show_progress { Progress::bytes(trace.data_size(), "reading") } else { Progress::hidden() };
    // Each container's own stream, so the model's hot loop is built for it.
    let built = match &trace {
        Input::TraceDat(source) => build.model(source, &mut |done| progress.set(done)),
        Input::PerfData(source) => build.model(source, &mut |done| progress.set(done)),
        Input::Perfetto(source) => build.model(source, &mut |done| progress.set(done)),
    };
    let (model, report) = match built {
        Ok(built) => built,
        Err(error) => {
            // A perf.data's damage was found when it was read: say where before why.
            report_damage(&tracedat::EventSource::damage(&trace));
            return Err(error.into());
        }
    };
    drop(progress);
    let name = path.display();
    if report.unknown_events > 0 {
        eprintln!("schedlens: warning: {name}: {} events have no format and were skipped", report.unknown_events);
    }
    for event in &report.unusable_events {
        eprintln!("schedlens: warning: {name}: {event} lacks fields the model needs; its events were skipped");
    }
    let lost = model.lost();
    if lost.any() {
        eprintln!(
            "schedlens: warning: {name}: the kernel lost {} events{}; the CPUs' state after each loss is uncertain until their next sched_switch",
            lost.events,
            match lost.unknown_losses {
                0 => String::new(),
                unknown => format!(" (plus {unknown} losses of unknown size)"),
            }
        );
    }
    let mut damaged_events = false;
    for (anomaly, count, first) in model.anomalies().iter() {
        if anomaly.severity() == model::Severity::Warning {
            eprintln!("schedlens: warning: {name}: {count} x {} (first at {first})", anomaly.description());
        }
        damaged_events |= DAMAGE.contains(&anomaly);
    }
    let mut outcome = crate::report_damage(&report.damage);
    if damaged_events && outcome == Outcome::Complete {
        eprintln!("schedlens: warning: {name}: some events are damaged; results leave them out");
        outcome = Outcome::Partial;
    }
    Ok(Loaded { trace, model, buffer: report.buffer, outcome })
}
