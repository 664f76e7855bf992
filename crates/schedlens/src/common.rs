//! What several commands share: the window and task-filter arguments, and loading a
//! trace's model with a progress bar and the warnings users need to see.

use crate::Outcome;
use crate::progress::Progress;
use analysis::{TaskFilter, Window, WindowRequest};
use anyhow::{Context, Result};
use model::{Detail, Model, Nanos};
use std::path::Path;
use tracedat::{Selection, Trace};

/// `--min`, `--max`, `--after-sleep`, `--forked`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct WindowArgs {
    /// Start of the window, in seconds from the trace start (or from the end of the
    /// initial sleep with --after-sleep).
    #[arg(long, value_name = "S")]
    pub min: Option<f64>,
    /// End of the window, in seconds (same origin as --min).
    #[arg(long, value_name = "S")]
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

    /// The window and the origin times are shown relative to.
    pub fn resolve(&self, model: &Model, input: &Path) -> Result<(Window, Nanos)> {
        let request = WindowRequest { min_s: self.min, max_s: self.max, after_sleep: self.after_sleep };
        request.resolve(model).with_context(|| input.display().to_string())
    }
}

/// A trace's model, with what building it met.
pub struct Loaded {
    pub trace: Trace,
    pub model: Model,
    /// The buffer the model was built from ("" is the top buffer).
    pub buffer: String,
    pub outcome: Outcome,
}

/// Opens a trace and builds its model with the tables `detail` asks for, showing
/// progress and printing warnings.
pub fn load_model(path: &Path, detail: Detail) -> Result<Loaded> {
    let trace = Trace::open(path)?;
    let progress = Progress::bytes(trace.data_size(&Selection::all()), "reading");
    let (model, report) = Model::build(&trace, detail, &mut |done| progress.set(done))?;
    drop(progress);
    let name = path.display();
    if report.unknown_events > 0 {
        eprintln!("schedlens: warning: {name}: {} events have no format and were skipped", report.unknown_events);
    }
    for event in &report.unusable_events {
        eprintln!("schedlens: warning: {name}: {event} lacks fields the model needs; its events were skipped");
    }
    let lost: u64 = model.cpus().iter().map(|c| c.lost_events()).sum();
    let lost_unknown: u64 = model.cpus().iter().map(|c| c.lost_unknown()).sum();
    if lost > 0 || lost_unknown > 0 {
        eprintln!(
            "schedlens: warning: {name}: the kernel lost {lost} events{}; the CPUs' state after each loss is uncertain until their next sched_switch",
            if lost_unknown > 0 { format!(" (plus {lost_unknown} losses of unknown size)") } else { String::new() }
        );
    }
    for (anomaly, count, first) in model.anomalies().iter() {
        if anomaly.severity() == model::Severity::Warning {
            eprintln!("schedlens: warning: {name}: {count} x {} (first at {first})", anomaly.description());
        }
    }
    let outcome = crate::report_damage(&report.damage);
    Ok(Loaded { trace, model, buffer: report.buffer, outcome })
}
