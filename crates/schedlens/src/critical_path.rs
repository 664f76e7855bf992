//! `schedlens critical-path`: where the traced command's (or a task's) wall time went
//! along its critical path, and how much of it the scheduler cost at most; thin glue over
//! `analysis::critical_path` and `experiment::critical_path` (its document and words).

use crate::Outcome;
use crate::common::load_model_streaming;
use crate::progress::Progress;
use crate::spill::{Spill, scratch_context};
use analysis::check::Affinity;
use analysis::critical_path::{self, Target};
use analysis::idle::IdleIndex;
use analysis::records::Collector;
use anyhow::{Context, Result, bail};
use experiment::profile::WorkloadWindow;
use model::{Model, Pid, TaskId};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The trace file.
    trace: PathBuf,
    /// Follow this task (a pid, or a name: the first task ever so named) instead of the
    /// traced command (the recorded command, else the task of the trace's first exec, with
    /// its process tree, from the end of its initial sleep to its exit).
    #[arg(long, value_name = "PID|NAME")]
    task: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// How many of the largest stretches of scheduler cost to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

/// The model keeps segments and tasks while the waits pass, as records, through a
/// [`Spill`]: the walk reads them once in order (when pinning is inferred) and then back
/// from the end, so a big trace costs no memory for the waits' tables.
pub fn run(args: Args) -> Result<Outcome> {
    let mut collector = Collector::new(Spill::new());
    let loaded = load_model_streaming(&args.trace, &mut collector)?;
    let model = &loaded.model;
    let target = match &args.task {
        Some(task) => Target::task(model, find_task(model, task)?),
        None => command_target(model, loaded.trace.command_pid())?,
    };
    let affinity = loaded.trace.recorded_context().and_then(|c| Affinity::recorded(&c));
    // After the model's bar: seconds on a trace of tens of millions of events.
    let status = Progress::status("walking the critical path");
    let index = IdleIndex::new(model);
    let (mut waits, _) = collector.finish(model);
    let path = critical_path::critical_path_of_waits(model, &index, &mut waits, &target, affinity.as_ref(), args.top);
    drop(status);
    if let Some(error) = waits.error() {
        return Err(error).with_context(|| scratch_context(&args.trace));
    }
    let document = experiment::critical_path::document(model, &args.trace.display().to_string(), &target, &path);
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Text => out.write_all(experiment::critical_path::to_text(&document, model.start()).as_bytes())?,
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&document)?)?,
    }
    Ok(loaded.outcome)
}

/// A task by pid, else by name (the first so named).
fn find_task(model: &Model, wanted: &str) -> Result<TaskId> {
    let found = match wanted.parse::<i32>() {
        Ok(pid) => model.tasks().by_pid(Pid(pid)),
        Err(_) => model.comms().find(wanted).and_then(|comm| {
            model.tasks().iter().find(|(_, task)| task.comms.iter().any(|&(_, c)| c == comm)).map(|(id, _)| id)
        }),
    };
    match found {
        Some(task) if task != TaskId::IDLE => Ok(task),
        _ => bail!("--task {wanted}: no such task in the trace"),
    }
}

/// The traced command, as `compare` takes it: its process tree from the end of its
/// initial sleep to its exit.
fn command_target(model: &Model, pid: Option<Pid>) -> Result<Target> {
    match WorkloadWindow::of(model, pid, false).critical_path_target() {
        Some(target) => Ok(target),
        None => {
            bail!("the trace names no command (no recorded command pid, no exec): follow a task with --task PID|NAME")
        }
    }
}
