//! The one signal watcher. A terminating signal must not end schedlens while it holds
//! the machine changed (knobs, tracefs) or a command running: [`Interrupts`] catches
//! SIGINT, SIGTERM and SIGHUP on a thread from its start until it is dropped, and turns
//! them into something the normal path can act on — which signal came, a flag that loops
//! poll, a wait that ends early, the signal passed on to the running child (which is then
//! reaped, so the caller ends through its restoring path) — or, while nothing needs
//! undoing ([`Interrupts::exit_at_once`]), ends the process at once.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The signals that ask schedlens to stop.
const TERMINATING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// What the running child gets when a signal comes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PassOn {
    /// Each signal, as it came.
    EverySignal,
    /// The first signal as it came; SIGKILL from the second on.
    KillOnSecond,
}

/// How a child ended, as `wait4` reports it.
#[derive(Copy, Clone, Debug)]
pub struct Exited {
    pub status: ExitStatus,
    /// When the kernel reported the exit (before the child was reaped).
    pub at: Instant,
    /// The child's own user and system time.
    pub user: Duration,
    pub system: Duration,
}

/// What the signal thread and its owner share.
struct Shared {
    state: Mutex<State>,
    woken: Condvar,
    stop: Arc<AtomicBool>,
}

#[derive(Default)]
struct State {
    /// The last signal received.
    signal: Option<i32>,
    signals: u32,
    /// The child now waited for; it is not reaped while it is here, so its pid is its own.
    child: Option<(libc::pid_t, PassOn)>,
    exit_at_once: bool,
}

/// SIGINT, SIGTERM and SIGHUP, caught from [`Interrupts::start`] until drop.
pub struct Interrupts {
    shared: Arc<Shared>,
    handle: Handle,
}

impl Interrupts {
    pub fn start() -> io::Result<Interrupts> {
        let mut signals = Signals::new(TERMINATING)?;
        let handle = signals.handle();
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            woken: Condvar::new(),
            stop: Arc::new(AtomicBool::new(false)),
        });
        let seen = Arc::clone(&shared);
        std::thread::Builder::new().name("signals".into()).spawn(move || {
            for signal in signals.forever() {
                seen.receive(signal);
            }
        })?;
        Ok(Interrupts { shared, handle })
    }

    /// The last signal that came, if one did.
    pub fn signal(&self) -> Option<i32> {
        self.shared.state().signal
    }

    /// Set when a signal comes, for loops to poll (their owner may set it too, to stop
    /// them for its own reasons).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.shared.stop)
    }

    /// Waits until a signal has come (returning it at once if one came before), or until
    /// `limit` has passed (`None`: no limit).
    pub fn wait(&self, limit: Option<Duration>) -> Option<i32> {
        let deadline = limit.and_then(|limit| Instant::now().checked_add(limit));
        let mut state = self.shared.state();
        loop {
            if state.signal.is_some() {
                return state.signal;
            }
            state = match deadline {
                None => self.shared.woken.wait(state).unwrap_or_else(|e| e.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    self.shared.woken.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0
                }
            };
        }
    }

    /// Waits for `child` to exit and reaps it, passing on the signals that come meanwhile
    /// as `pass_on` says; a signal that came before is passed on at once.
    pub fn wait_child(&self, child: Child, pass_on: PassOn) -> io::Result<Exited> {
        let pid = child.id() as libc::pid_t;
        {
            let mut state = self.shared.state();
            state.child = Some((pid, pass_on));
            if let Some(signal) = state.signal {
                kill(pid, signal);
            }
        }
        let exited = wait_without_reaping(pid);
        let at = Instant::now();
        self.shared.state().child = None;
        exited?;
        let (status, usage) = reap(pid)?;
        Ok(Exited {
            status: ExitStatus::from_raw(status),
            at,
            user: duration(usage.ru_utime),
            system: duration(usage.ru_stime),
        })
    }

    /// Until the returned value is dropped, a signal ends the process at once, with exit
    /// code 128 + its number (as a shell reports a process killed by it): for the time
    /// when nothing needs undoing and nothing polls the flag. A signal that already came
    /// ends it now.
    pub fn exit_at_once(&self) -> ExitAtOnce<'_> {
        let mut state = self.shared.state();
        if let Some(signal) = state.signal {
            exit_by(signal);
        }
        state.exit_at_once = true;
        ExitAtOnce { interrupts: self }
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        self.handle.close();
    }
}

/// While it lives, a signal ends the process at once ([`Interrupts::exit_at_once`]).
pub struct ExitAtOnce<'a> {
    interrupts: &'a Interrupts,
}

impl Drop for ExitAtOnce<'_> {
    fn drop(&mut self) {
        self.interrupts.shared.state().exit_at_once = false;
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the signal thread does with each signal.
    fn receive(&self, signal: i32) {
        let mut state = self.state();
        if state.exit_at_once {
            exit_by(signal);
        }
        state.signal = Some(signal);
        state.signals += 1;
        self.stop.store(true, Ordering::Relaxed);
        if let Some((pid, pass_on)) = state.child {
            let second = pass_on == PassOn::KillOnSecond && state.signals > 1;
            kill(pid, if second { libc::SIGKILL } else { signal });
        }
        self.woken.notify_all();
    }
}

/// A flag set each time `signal` comes (SIGUSR1: `watch` prints its summary), for a
/// loop to poll and clear; the signal no longer ends the process.
pub fn flag_on(signal: i32) -> io::Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal, Arc::clone(&flag))?;
    Ok(flag)
}

fn exit_by(signal: i32) -> ! {
    std::process::exit(128 + signal)
}

fn kill(pid: libc::pid_t, signal: i32) {
    // SAFETY: kill has no memory effects; callers pass the pid of a child registered in
    // `State::child`, which is not reaped while it is registered, so the pid is its own.
    unsafe { libc::kill(pid, signal) };
}

/// Waits until the child has exited, leaving it a zombie (its pid stays its own).
fn wait_without_reaping(pid: libc::pid_t) -> io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data that waitid fills.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
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

fn duration(t: libc::timeval) -> Duration {
    Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.clamp(0, 999_999) * 1000) as u32)
}
