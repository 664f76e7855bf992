//! Running the command once and measuring it, and the signals that stop a sweep.
//!
//! An untraced run is the command spawned directly (no shell), its output appended to a
//! log file, and `wait4` for its exit status and its own user and system time: the wall
//! time is from just before the spawn to the moment the kernel reports the exit, so
//! nothing of schedlens but the spawn itself is inside the measurement. A traced run is
//! `record::record`, with the user and system time of the children it reaped.
//!
//! [`Interrupts`] catches SIGINT, SIGTERM and SIGHUP for the whole sweep, so the sweep
//! always ends through the path that restores the knobs: the signal is passed on to the
//! running command (a second one kills it), the sweep stops after that run, and the
//! sleep between runs is cut short.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use tracedat::CommandExit;

/// What the signal thread and the sweep share.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    woken: Condvar,
}

#[derive(Default)]
struct State {
    /// The last signal received.
    signal: Option<i32>,
    signals: u32,
    /// The untraced command now running.
    child: Option<libc::pid_t>,
}

/// The terminating signals, caught from creation until drop.
pub struct Interrupts {
    shared: Arc<Shared>,
    handle: Handle,
}

impl Interrupts {
    pub fn start() -> io::Result<Interrupts> {
        let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
        let handle = signals.handle();
        let shared = Arc::new(Shared::default());
        let seen = Arc::clone(&shared);
        std::thread::Builder::new().name("runs-signals".into()).spawn(move || {
            for signal in signals.forever() {
                let mut state = seen.state.lock().unwrap_or_else(|e| e.into_inner());
                state.signal = Some(signal);
                state.signals += 1;
                if let Some(pid) = state.child {
                    let pass_on = if state.signals > 1 { libc::SIGKILL } else { signal };
                    // SAFETY: kill has no memory effects; the child is not reaped while
                    // it is registered here (see `run_untraced`), so the pid is its own.
                    unsafe { libc::kill(pid, pass_on) };
                }
                seen.woken.notify_all();
            }
        })?;
        Ok(Interrupts { shared, handle })
    }

    /// The signal that asked the sweep to stop, if one came.
    pub fn signal(&self) -> Option<i32> {
        self.state().signal
    }

    /// Sleeps, unless a signal comes; returns whether the whole time passed.
    pub fn sleep(&self, duration: Duration) -> bool {
        let deadline = Instant::now() + duration;
        let mut state = self.state();
        while state.signal.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            state = self.shared.woken.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        false
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers the running child; a signal that came before is passed on now.
    fn watch_child(&self, pid: libc::pid_t) {
        let mut state = self.state();
        state.child = Some(pid);
        if let Some(signal) = state.signal {
            // SAFETY: as in the signal thread.
            unsafe { libc::kill(pid, signal) };
        }
    }

    fn forget_child(&self) {
        self.state().child = None;
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        self.handle.close();
    }
}

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
    let pid = child.id() as libc::pid_t;
    interrupts.watch_child(pid);
    let exited = wait_without_reaping(pid);
    let wall = started.elapsed();
    interrupts.forget_child();
    exited.map_err(ExecError::Wait)?;
    let (status, usage) = reap(pid).map_err(ExecError::Wait)?;
    Ok(Measured { wall, user: duration(usage.ru_utime), system: duration(usage.ru_stime), exit: exit_of(status) })
}

/// Waits until the child has exited, leaving it a zombie (its pid stays its own).
fn wait_without_reaping(pid: libc::pid_t) -> io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data that waitid fills.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        match rc {
            0 => return Ok(()),
            _ => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
}

/// Reaps an exited child: its wait status and its resource use.
fn reap(pid: libc::pid_t) -> io::Result<(libc::c_int, libc::rusage)> {
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            return Ok((status, usage));
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

fn exit_of(status: libc::c_int) -> CommandExit {
    if libc::WIFEXITED(status) {
        CommandExit::Code(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        CommandExit::Signal(libc::WTERMSIG(status))
    } else {
        CommandExit::Code(-1)
    }
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
        assert!(interrupts.sleep(Duration::from_millis(1)));
    }
}
