//! A traced run recorded by perf instead of schedlens's recorder (`runs --record
//! --recorder perf`), so a user can compare with the tool they already use: `perf record`
//! system-wide of the scheduler tracepoints the model reads (those of `perf sched
//! record`, which lacks exec and exit, without its `sched_stat_runtime`, plus
//! sched_wakeup, sched_process_exec and sched_process_exit, so the trace shows where the
//! command starts and ends) with perf sched record's buffer and sampling options, of the
//! command after the sleep, which runs inside the recording as with schedlens's recorder
//! (`sh -c 'sleep S && exec CMD'`). perf's file is read back through `inputs` like any
//! recording.
//!
//! perf is the process this one waits for, so a run's wall, user and system time include
//! perf's own (its start, draining the buffers, writing the file); the running time comes
//! from the trace instead whenever the trace shows the command's start and exit, as it
//! does for schedlens's recorder. Signals reach perf through the sweep's
//! `restore::Interrupts` (perf passes them on to the command and writes its file).

use crate::RunsError;
use crate::exec::Measured;
use restore::{Interrupts, PassOn};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tracedat::CommandExit;

const PERF: &str = "perf";

/// `perf record`'s options before `-o FILE -- COMMAND`.
const RECORD: &[&str] = &[
    "record",
    "-q",
    "-a",
    "-R",
    "-m",
    "1024",
    "-c",
    "1",
    "-e",
    "sched:sched_switch",
    "-e",
    "sched:sched_waking",
    "-e",
    "sched:sched_wakeup",
    "-e",
    "sched:sched_wakeup_new",
    "-e",
    "sched:sched_migrate_task",
    "-e",
    "sched:sched_process_fork",
    "-e",
    "sched:sched_process_exec",
    "-e",
    "sched:sched_process_exit",
];

/// Whether perf is installed and may record here: a recording of `true` (into the
/// temporary directory, then removed), so that a sweep that cannot record fails before
/// its first run, with perf's own words.
pub fn check_recorder() -> Result<(), RunsError> {
    if !crate::sweep::is_runnable(PERF) {
        return Err(RunsError::Usage(
            "--recorder perf: perf is not installed (not found in PATH; Debian: apt-get install linux-perf)".into(),
        ));
    }
    let probe = std::env::temp_dir().join(format!("schedlens-perf-probe-{}.data", std::process::id()));
    let output = Command::new(PERF)
        .args(RECORD)
        .arg("-o")
        .arg(&probe)
        .args(["--", "true"])
        .stdin(Stdio::null())
        .output()
        .map_err(|source| RunsError::System { context: "starting perf", source })?;
    let _ = std::fs::remove_file(&probe);
    let _ = std::fs::remove_file(probe.with_extension("data.old"));
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        let said = said.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message");
        return Err(RunsError::Usage(format!("--recorder perf: `perf record` cannot record here: {said}")));
    }
    Ok(())
}

/// Records one run with `perf record ... -o TRACE`; `None` when a signal ended it.
pub fn record_run(
    args: &[String],
    sleep: Duration,
    trace: &Path,
    log: &Path,
    interrupts: &Interrupts,
) -> Result<Option<Measured>, RunsError> {
    let open = || std::fs::OpenOptions::new().create(true).append(true).open(log);
    let (out, err) = (open().map_err(|e| RunsError::io(log, e))?, open().map_err(|e| RunsError::io(log, e))?);
    let mut command = Command::new(PERF);
    command.args(RECORD).arg("-o").arg(trace).arg("--");
    if !sleep.is_zero() {
        command.args(["sh", "-c", "sleep \"$0\" && exec \"$@\"", &sleep.as_secs_f64().to_string()]);
    }
    command.args(args).stdin(Stdio::null()).stdout(out).stderr(err);
    let started = Instant::now();
    let child = command.spawn().map_err(|source| RunsError::System { context: "starting perf", source })?;
    let exited = interrupts.wait_child(child, PassOn::KillOnSecond).map_err(crate::exec::ExecError::Wait)?;
    if interrupts.signal().is_some() {
        return Ok(None);
    }
    Ok(Some(Measured {
        // Replaced by the trace's own measure when the trace shows the sleep's end.
        wall: exited.at.duration_since(started).saturating_sub(sleep),
        user: exited.user,
        system: exited.system,
        // perf exits as its command did.
        exit: CommandExit::from(exited.status),
    }))
}
