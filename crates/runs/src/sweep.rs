//! The run loop: every setting of the knobs (the grid of all `--set` values) run N times,
//! settings interleaved — repetition r runs the settings in order, rotated by r, so no
//! setting always follows the same one or always comes first — each run after the sleep,
//! untraced or recorded. Knobs are probed before the first run and restored when the loop
//! ends however it ends; traces are analysed only after the knobs are back, so no
//! analysis runs between measurements.

use crate::RunsError;
use crate::exec::{Measured, children_times, run_untraced};
use crate::knobs::{KnobGuard, KnobValues};
use documents::runs::{KnobRecord, Results, Setting, SweepRun};
use experiment::profile::{Profile, metric_catalog};
use record::{RecordOptions, Workload};
use restore::Interrupts;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tracedat::CommandExit;

/// What to run.
#[derive(Clone, Debug)]
pub struct SweepRequest {
    pub command: Vec<String>,
    /// Runs per setting.
    pub repetitions: usize,
    /// Pause before each run (inside the recording with `record`).
    pub sleep: Duration,
    /// Trace every run (as `schedlens record` does, or perf: `recorder`).
    pub record: bool,
    pub recorder: Recorder,
    pub knobs: Vec<KnobValues>,
    /// Where results, traces and logs go.
    pub dir: PathBuf,
}

/// What records a traced run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Recorder {
    /// schedlens's own recorder (`record`), into a trace.dat.
    #[default]
    Schedlens,
    /// `perf record` of the scheduler tracepoints, into a perf.data ([`crate::perf`]).
    Perf,
}

/// What the loop tells its caller as it goes.
#[derive(Clone, Debug)]
pub enum Progress<'a> {
    /// Run `index` (from 0) of `total` is about to start.
    Run { index: usize, total: usize, setting: &'a str, elapsed: Duration },
    /// A run ended.
    Ran { index: usize, total: usize, run: &'a SweepRun },
    /// Trace `index` of `total` is being analysed.
    Analysing { index: usize, total: usize },
}

/// The grid of settings: every combination of the knobs' values, the first knob's
/// values outermost.
pub fn grid(knobs: &[KnobValues]) -> Vec<Vec<String>> {
    knobs.iter().fold(vec![Vec::new()], |settings, knob| {
        settings
            .iter()
            .flat_map(|prefix| knob.values.iter().map(move |v| [prefix.clone(), vec![v.clone()]].concat()))
            .collect()
    })
}

/// The order of the runs, as (setting, repetition from 0): repetition r runs every
/// setting, starting with setting r mod count.
pub fn schedule(settings: usize, repetitions: usize) -> Vec<(usize, usize)> {
    (0..repetitions).flat_map(|r| (0..settings).map(move |i| ((i + r) % settings, r))).collect()
}

/// Runs the sweep. Interrupted by a signal, it stops after the current run and returns
/// what it has, with `interrupted_by` set.
pub fn sweep(request: &SweepRequest, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Results, RunsError> {
    check_request(request)?;
    let interrupts = Interrupts::start().map_err(|e| RunsError::System { context: "catching signals", source: e })?;
    let knobs: Vec<_> = request.knobs.iter().map(|k| k.knob.clone()).collect();
    let mut guard = KnobGuard::open(&knobs)?;
    guard.probe(&request.knobs.iter().map(|k| k.values.clone()).collect::<Vec<_>>())?;
    for sub in ["logs", "traces"].iter().filter(|&&s| s == "logs" || request.record) {
        let path = request.dir.join(sub);
        std::fs::create_dir_all(&path).map_err(|e| RunsError::io(&path, e))?;
    }
    let mut results = Results {
        command: request.command.clone(),
        repetitions: request.repetitions,
        sleep_s: request.sleep.as_secs_f64(),
        recorded: request.record,
        knobs: guard
            .held()
            .iter()
            .map(|h| KnobRecord {
                name: h.name.clone(),
                path: h.path.display().to_string(),
                original: h.original.clone(),
            })
            .collect(),
        settings: grid(&request.knobs)
            .into_iter()
            .map(|values| Setting { shown: vec![None; values.len()], values })
            .collect(),
        metrics: if request.record { metric_catalog() } else { Vec::new() },
        runs: Vec::new(),
        interrupted_by: None,
    };
    let plan = schedule(results.settings.len(), request.repetitions);
    let started = Instant::now();
    let mut current: Vec<Option<String>> = vec![None; knobs.len()];
    for (index, &(setting, repetition)) in plan.iter().enumerate() {
        if interrupts.signal().is_some() {
            break;
        }
        let label = results.label(setting);
        progress(Progress::Run { index, total: plan.len(), setting: &label, elapsed: started.elapsed() });
        for (knob, value) in results.settings[setting].values.clone().iter().enumerate() {
            if current[knob].as_ref() != Some(value) {
                results.settings[setting].shown[knob] = Some(guard.set(knob, value)?);
                current[knob] = Some(value.clone());
            }
        }
        let names = RunFiles::new(&request.dir, index + 1, setting, repetition + 1, request.recorder);
        let Some(measured) = run_once(request, &names, &interrupts)? else { break };
        let run = SweepRun {
            order: index + 1,
            setting,
            repetition: repetition + 1,
            wall_s: measured.wall.as_secs_f64(),
            user_s: measured.user.as_secs_f64(),
            sys_s: measured.system.as_secs_f64(),
            exit: exit_text(measured.exit),
            ok: measured.exit.success(),
            trace: request.record.then(|| names.trace.clone()),
            log: names.log.clone(),
            metrics: Vec::new(),
            wall_from: "clock".into(),
        };
        progress(Progress::Ran { index, total: plan.len(), run: &run });
        results.runs.push(run);
    }
    guard.restore()?;
    results.interrupted_by = interrupts.signal();
    drop(interrupts);
    if request.record {
        analyse_traces(&request.dir, &mut results, progress)?;
    }
    Ok(results)
}

fn check_request(request: &SweepRequest) -> Result<(), RunsError> {
    if request.command.is_empty() {
        return Err(RunsError::Usage("no command given: schedlens runs [OPTIONS] -- COMMAND...".into()));
    }
    if request.repetitions == 0 {
        return Err(RunsError::Usage("-n must be at least 1".into()));
    }
    match (request.record, request.recorder) {
        (false, _) => {}
        (true, Recorder::Schedlens) => record::check_privileges()?,
        (true, Recorder::Perf) => crate::perf::check_recorder()?,
    }
    if !is_runnable(&request.command[0]) {
        return Err(RunsError::Usage(format!("{:?}: no such command (not found in PATH)", request.command[0])));
    }
    Ok(())
}

/// Whether `program` names an executable file, itself or in PATH.
pub(crate) fn is_runnable(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &Path| path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        return executable(Path::new(program));
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| executable(&dir.join(program))))
}

/// The files of one run, relative to the results directory.
struct RunFiles {
    dir: PathBuf,
    trace: String,
    log: String,
}

impl RunFiles {
    fn new(dir: &Path, order: usize, setting: usize, repetition: usize, recorder: Recorder) -> RunFiles {
        let stem = format!("run-{order:03}-s{}-r{repetition}", setting + 1);
        let extension = match recorder {
            Recorder::Schedlens => "dat",
            Recorder::Perf => "data",
        };
        RunFiles {
            dir: dir.to_path_buf(),
            trace: format!("traces/{stem}.{extension}"),
            log: format!("logs/{stem}.log"),
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }
}

/// One run after the sleep; `None` when a signal cut the sleep short.
fn run_once(request: &SweepRequest, files: &RunFiles, interrupts: &Interrupts) -> Result<Option<Measured>, RunsError> {
    if !request.record {
        if interrupts.wait(Some(request.sleep)).is_some() {
            return Ok(None);
        }
        return Ok(Some(run_untraced(&request.command, &files.path(&files.log), interrupts)?));
    }
    if request.recorder == Recorder::Perf {
        let (trace, log) = (files.path(&files.trace), files.path(&files.log));
        return crate::perf::record_run(&request.command, request.sleep, &trace, &log, interrupts);
    }
    let options = RecordOptions {
        output: files.path(&files.trace),
        version: tracedat::FileVersion::V7 { compression: tracedat::compress::Codec::Zstd },
        events: Vec::new(),
        buffer_kb: record::DEFAULT_BUFFER_KB,
        cpus: None,
        clock: None,
        workload: Workload::Command {
            args: request.command.clone(),
            sleep: (!request.sleep.is_zero()).then_some(request.sleep.as_secs_f64()),
            log: Some(files.path(&files.log)),
        },
    };
    let before = children_times();
    let recording = match record::record(&options) {
        Err(record::RecordError::Interrupted(_)) => return Ok(None),
        other => other?,
    };
    let after = children_times();
    let Some(exit) = recording.ended.exit else { return Ok(None) };
    Ok(Some(Measured {
        // Replaced by the trace's own measure when the trace shows the sleep's end.
        wall: recording.elapsed.saturating_sub(request.sleep),
        user: after.0.saturating_sub(before.0),
        system: after.1.saturating_sub(before.1),
        exit,
    }))
}

fn exit_text(exit: CommandExit) -> String {
    match exit {
        CommandExit::Code(n) => format!("exit {n}"),
        CommandExit::Signal(n) => format!("signal {n}"),
    }
}

/// Each trace's metrics, and its running time from the trace when the trace shows both
/// ends (the sleep's end and the command's exit).
fn analyse_traces(dir: &Path, results: &mut Results, progress: &mut dyn FnMut(Progress<'_>)) -> Result<(), RunsError> {
    let total = results.runs.len();
    for (index, run) in results.runs.iter_mut().enumerate() {
        progress(Progress::Analysing { index, total });
        let Some(trace) = &run.trace else { continue };
        let path = dir.join(trace);
        let profile = match profile_of(&path) {
            Ok(profile) => profile,
            Err(error) => {
                eprintln!("schedlens: warning: {error}; run {} has no metrics", run.order);
                run.metrics = vec![None; results.metrics.len()];
                continue;
            }
        };
        run.metrics = profile.metrics();
        let workload = &profile.workload;
        if workload.to_exit && (workload.after_sleep || results.sleep_s == 0.0) {
            run.wall_s = workload.running_time().0 as f64 / 1e9;
            run.wall_from = "trace".into();
        }
    }
    Ok(())
}

/// The profile of a recorded trace (either recorder's), with the topology it carries.
pub fn profile_of(path: &Path) -> Result<Profile, RunsError> {
    let trace = inputs::Input::open(path)?;
    let (model, _) = model::Model::build(&trace, model::Detail::FULL, &mut |_| {})?;
    let context = trace.recorded_context().unwrap_or_default();
    let affinity = analysis::check::Affinity::recorded(&context);
    let topology = context.topology.and_then(|text| model::Topology::from_lscpu(&text).ok());
    let pid = context.pid.map(|p| model::Pid(p as i32)).or_else(|| perf_command(&model));
    Ok(Profile::of(&model, topology.as_ref(), affinity.as_ref(), pid, false))
}

/// The command `perf record` ran (perf.data stores no pid): perf's child is named
/// `perf-exec` until it executes the command (seen when sched_process_exec is recorded).
fn perf_command(model: &model::Model) -> Option<model::Pid> {
    let name = model.comms().find("perf-exec")?;
    let mut tasks = model.tasks().iter();
    let named = |task: &model::Task| task.comms.iter().any(|&(_, comm)| comm == name);
    tasks.find(|(_, task)| named(task) && !task.execs.is_empty()).map(|(_, task)| task.pid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knobs::Knob;

    #[test]
    fn the_grid_has_every_combination_first_knob_outermost() {
        let knob = |name: &str, values: &[&str]| KnobValues {
            knob: Knob::parse(name).unwrap(),
            values: values.iter().map(|v| v.to_string()).collect(),
        };
        let grid = grid(&[knob("kernel.a", &["1", "2"]), knob("kernel.b", &["x", "y", "z"])]);
        let labels: Vec<String> = grid.iter().map(|v| v.join("")).collect();
        assert_eq!(labels, ["1x", "1y", "1z", "2x", "2y", "2z"]);
        assert_eq!(super::grid(&[]), vec![Vec::<String>::new()]);
    }

    #[test]
    fn repetitions_rotate_the_settings() {
        assert_eq!(schedule(3, 3), [(0, 0), (1, 0), (2, 0), (1, 1), (2, 1), (0, 1), (2, 2), (0, 2), (1, 2)]);
        assert_eq!(schedule(1, 2), [(0, 0), (0, 1)]);
    }
}
