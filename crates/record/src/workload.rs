//! What runs while the trace records, and when the recording stops: a command (optionally
//! after `sleep S`, which `--after-sleep` later recognises) until it exits, or the whole
//! system for a duration or until interrupted. SIGINT, SIGTERM and SIGHUP are caught for
//! the whole recording (`restore::Interrupts`, started by the session) so that it always
//! ends through the restoring path; during a command they are passed on to it, and the
//! recording ends when it exits.

use crate::affinity::{AffinityWatch, every_task};
use crate::error::RecordError;
use restore::{Interrupts, PassOn};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tracedat::{CommandExit, TaskAffinity};

/// What is recorded.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// A command and its arguments, run after `sleep` seconds when given. With `log`, its
    /// standard output and error are appended to that file and its input is empty;
    /// without, it shares this process's.
    Command { args: Vec<String>, sleep: Option<f64>, log: Option<PathBuf> },
    /// The whole system, for this long or (`None`) until a signal.
    System(Option<Duration>),
}

/// How the workload ended.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Ended {
    pub exit: Option<CommandExit>,
    /// The command's process id.
    pub pid: Option<u32>,
    /// A signal that asked the recording to stop.
    pub signal: Option<i32>,
}

/// Runs the workload to its end; how it ended, and the CPU affinity of the tasks seen
/// meanwhile (the command's, or every task's at the start and the end).
pub(crate) fn run(workload: &Workload, interrupts: &Interrupts) -> Result<(Ended, Vec<TaskAffinity>), RecordError> {
    match workload {
        Workload::Command { args, sleep, log } => run_command(spawn(args, *sleep, log.as_deref())?, interrupts),
        Workload::System(limit) => {
            let mut affinity = every_task();
            let signal = interrupts.wait(*limit);
            affinity.extend(every_task());
            Ok((Ended { exit: None, pid: None, signal }, affinity))
        }
    }
}

fn run_command(child: Child, interrupts: &Interrupts) -> Result<(Ended, Vec<TaskAffinity>), RecordError> {
    let pid = child.id();
    let affinity = AffinityWatch::start(pid as libc::pid_t);
    let exited = interrupts
        .wait_child(child, PassOn::EverySignal)
        .map_err(|source| RecordError::System { context: "waiting for the command", source })?;
    let ended = Ended { exit: Some(CommandExit::from(exited.status)), pid: Some(pid), signal: interrupts.signal() };
    Ok((ended, affinity.finish()))
}

fn spawn(args: &[String], sleep: Option<f64>, log: Option<&Path>) -> Result<Child, RecordError> {
    let Some(program) = args.first() else {
        let source = io::Error::new(io::ErrorKind::InvalidInput, "no command given");
        return Err(RecordError::Spawn { program: String::new(), source });
    };
    let mut command = match sleep {
        Some(seconds) => {
            let mut c = Command::new("sh");
            c.args(["-c", "sleep \"$0\" && exec \"$@\"", &seconds.to_string()]).args(args);
            c
        }
        None => {
            let mut c = Command::new(program);
            c.args(&args[1..]);
            c
        }
    };
    if let Some(path) = log {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path);
        let file = file.map_err(|e| RecordError::file(path, e))?;
        let error = file.try_clone().map_err(|e| RecordError::file(path, e))?;
        command.stdin(Stdio::null()).stdout(file).stderr(error);
    }
    command.spawn().map_err(|source| RecordError::Spawn { program: program.clone(), source })
}
