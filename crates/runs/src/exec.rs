//! Running the command once and measuring it.
//!
//! An untraced run is the command spawned directly (no shell), its output appended to a
//! log file, and `wait4` for its exit status and its own user and system time: the wall
//! time is from just before the spawn to the moment the kernel reports the exit, so
//! nothing of schedlens but the spawn itself is inside the measurement. A traced run is
//! `record::record`, with the user and system time of the children it reaped.
//!
//! The sweep's `restore::Interrupts` catches SIGINT, SIGTERM and SIGHUP for the whole
//! sweep, so the sweep always ends through the path that restores the knobs: the signal
//! is passed on to the running command (a second one kills it), the sweep stops after that
//! run, and the sleep between runs is cut short.

use restore::{Interrupts, PassOn};
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tracedat::CommandExit;

/// What one run measured.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Measured {
    pub wall: Duration,
    pub user: Duration,
    pub system: Duration,
    pub exit: CommandExit,
}

/// Why the command could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("cannot start {program:?}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot open the run's log {}: {source}", path.display())]
    Log {
        path: std::path::PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("waiting for the command: {0}")]
    Wait(#[source] io::Error),
}

/// Runs `args` once, untraced, its output appended to `log`.
pub fn run_untraced(args: &[String], log: &Path, interrupts: &Interrupts) -> Result<Measured, ExecError> {
    let program = args.first().cloned().unwrap_or_default();
    let open = || std::fs::OpenOptions::new().create(true).append(true).open(log);
    let logged = |source| ExecError::Log { path: log.to_path_buf(), source };
    let (out, err) = (open().map_err(logged)?, open().map_err(logged)?);
    let mut command = Command::new(&program);
    command.args(&args[1..]).stdin(Stdio::null()).stdout(out).stderr(err);
    let started = Instant::now();
    let child = command.spawn().map_err(|source| ExecError::Spawn { program: program.clone(), source })?;
    let exited = interrupts.wait_child(child, PassOn::KillOnSecond).map_err(ExecError::Wait)?;
    Ok(Measured {
        wall: exited.at.duration_since(started),
        user: exited.user,
        system: exited.system,
        exit: CommandExit::from(exited.status),
    })
}

fn duration(t: libc::timeval) -> Duration {
    Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.clamp(0, 999_999) * 1000) as u32)
}

/// User and system time of the children this process has reaped so far.
pub fn children_times() -> (Duration, Duration) {
    // SAFETY: rusage is plain data that getrusage fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return (Duration::ZERO, Duration::ZERO);
    }
    (duration(usage.ru_utime), duration(usage.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_measured_and_its_exit_kept() {
        let interrupts = Interrupts::start().unwrap();
        let log = std::env::temp_dir().join(format!("runs-exec-{}.log", std::process::id()));
        let args: Vec<String> = ["sh", "-c", "echo hello; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let measured = run_untraced(&args, &log, &interrupts).unwrap();
        assert_eq!(measured.exit, CommandExit::Code(3));
        assert!(measured.user + measured.system > Duration::ZERO, "{measured:?}");
        assert!(measured.wall >= measured.user.max(measured.system) / 2, "{measured:?}");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "hello\n");
        std::fs::remove_file(&log).unwrap();
        let missing = run_untraced(&["/nonexistent/command".to_string()], &log, &interrupts);
        assert!(matches!(missing, Err(ExecError::Spawn { .. })));
        let _ = std::fs::remove_file(&log);
        assert_eq!(interrupts.wait(Some(Duration::from_millis(1))), None);
    }
}
