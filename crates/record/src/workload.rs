//! What runs while the trace records, and when the recording stops: a command (optionally
//! after `sleep S`, which `--after-sleep` later recognises) until it exits, or the whole
//! system for a duration or until interrupted. SIGINT, SIGTERM and SIGHUP are caught for
//! the whole recording so that it always ends through the restoring path; during a command
//! they are passed on to it, and the recording ends when it exits.

use crate::affinity::{AffinityWatch, every_task};
use crate::error::RecordError;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
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

enum Happening {
    Exited(io::Result<ExitStatus>),
    Signal(i32),
}

/// Catches the terminating signals from creation until drop.
pub(crate) struct Watch {
    tx: Sender<Happening>,
    rx: Receiver<Happening>,
    signals: Handle,
}

impl Watch {
    pub fn start() -> Result<Watch, RecordError> {
        let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])
            .map_err(|source| RecordError::System { context: "catching signals", source })?;
        let handle = signals.handle();
        let (tx, rx) = channel();
        let forward = tx.clone();
        std::thread::Builder::new()
            .name("record-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    if forward.send(Happening::Signal(signal)).is_err() {
                        break;
                    }
                }
            })
            .map_err(|source| RecordError::System { context: "starting the signal thread", source })?;
        Ok(Watch { tx, rx, signals: handle })
    }

    /// A signal that came in before the workload started.
    pub fn interrupted(&self) -> Option<i32> {
        self.rx.try_iter().find_map(|h| match h {
            Happening::Signal(s) => Some(s),
            Happening::Exited(_) => None,
        })
    }

    /// Runs the workload to its end; how it ended, and the CPU affinity of the tasks seen
    /// meanwhile (the command's, or every task's at the start and the end).
    pub fn run(&self, workload: &Workload) -> Result<(Ended, Vec<TaskAffinity>), RecordError> {
        match workload {
            Workload::Command { args, sleep, log } => self.run_command(spawn(args, *sleep, log.as_deref())?),
            Workload::System(limit) => {
                let mut affinity = every_task();
                let happening = match limit {
                    Some(limit) => self.rx.recv_timeout(*limit).ok(),
                    None => self.rx.recv().ok(),
                };
                let signal = match happening {
                    Some(Happening::Signal(s)) => Some(s),
                    _ => None,
                };
                affinity.extend(every_task());
                Ok((Ended { exit: None, pid: None, signal }, affinity))
            }
        }
    }

    fn run_command(&self, mut child: Child) -> Result<(Ended, Vec<TaskAffinity>), RecordError> {
        let pid = child.id() as libc::pid_t;
        let affinity = AffinityWatch::start(pid);
        let tx = self.tx.clone();
        std::thread::spawn(move || tx.send(Happening::Exited(child.wait())));
        let mut signal = None;
        loop {
            match self.rx.recv().expect("the watch holds a sender") {
                Happening::Exited(status) => {
                    let status =
                        status.map_err(|source| RecordError::System { context: "waiting for the command", source })?;
                    let ended = Ended { exit: Some(exit_of(status)), pid: Some(pid as u32), signal };
                    return Ok((ended, affinity.finish()));
                }
                Happening::Signal(s) => {
                    signal = Some(s);
                    // SAFETY: kill has no memory effects; the child is not reaped before
                    // its exit is received here, so the pid is still the child's.
                    unsafe { libc::kill(pid, s) };
                }
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.signals.close();
    }
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

fn exit_of(status: ExitStatus) -> CommandExit {
    match (status.code(), status.signal()) {
        (Some(code), _) => CommandExit::Code(code),
        (None, Some(signal)) => CommandExit::Signal(signal),
        (None, None) => CommandExit::Code(-1),
    }
}
