//! The guard and the watcher in real processes: signals passed on to a child (a second
//! one killing it where asked), the flag, a signal ending the process at once; and, as
//! root, a real scheduler knob put back after a panic and after each terminating signal.
//! A test that sends a signal runs this test binary again as the process that gets it
//! ([`ROLE`] names the part it plays there), so no signal reaches the test harness.

use crate::{Guard, Interrupts, PassOn};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Set in a process started by a test: the part it plays.
const ROLE: &str = "RESTORE_TEST_ROLE";
/// A scheduler knob every current kernel has and root may write.
const KNOB: &str = "/proc/sys/kernel/sched_rr_timeslice_ms";

/// Tests that change the knob take turns.
static KNOB_LOCK: Mutex<()> = Mutex::new(());

/// Not a test of its own: the process a signal test starts plays its part here.
#[test]
fn as_a_started_process() {
    let Ok(role) = std::env::var(ROLE) else { return };
    let interrupts = Interrupts::start().unwrap();
    match role.as_str() {
        "hold-knob" => {
            let mut guard = Guard::new();
            guard.set(Path::new(KNOB), &other_value(&read_knob())).unwrap();
            say("ready");
            // Not forever, should the test that started it be gone.
            let signal = interrupts.wait(Some(Duration::from_secs(30)));
            guard.restore().unwrap();
            say(&format!("restored after signal {signal:?}"));
        }
        "pass-on" | "kill-on-second" => {
            let pass_on = if role == "pass-on" { PassOn::EverySignal } else { PassOn::KillOnSecond };
            // A command that ignores SIGTERM, and says when it does.
            let mut child = Command::new("sh")
                .args(["-c", "trap '' TERM; echo trapped; exec sleep 30"])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            assert_eq!(next_line(&mut BufReader::new(child.stdout.take().unwrap())).as_deref(), Some("trapped"));
            say("ready");
            let exited = interrupts.wait_child(child, pass_on).unwrap();
            let flag = interrupts.stop_flag().load(Ordering::Relaxed);
            say(&format!("child killed by {:?}, flag {flag}", exited.status.signal()));
        }
        "exit-at-once" => {
            let _at_once = interrupts.exit_at_once();
            say("ready");
            std::thread::sleep(Duration::from_secs(30));
            say("not ended");
        }
        _ => panic!("no such role {role}"),
    }
}

fn say(line: &str) {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "role: {line}").and_then(|()| stdout.flush()).unwrap();
}

/// A process started by a test; one the test did not see to its end gets SIGTERM (the
/// knob's holder then puts it back) and is waited for.
struct Started {
    child: Child,
    lines: BufReader<ChildStdout>,
    ended: bool,
}

impl Started {
    /// This test binary as a process playing `role`, once it is ready.
    fn new(role: &str) -> Started {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "tests::as_a_started_process", "--nocapture", "--test-threads=1"])
            .env(ROLE, role)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap());
        let mut started = Started { child, lines, ended: false };
        assert_eq!(started.said(), "ready", "{role}");
        started
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill has no memory effects; the child is not reaped before `wait`.
        assert_eq!(unsafe { libc::kill(self.child.id() as libc::pid_t, signal) }, 0);
    }

    /// The next line the role says.
    fn said(&mut self) -> String {
        loop {
            let line = next_line(&mut self.lines).expect("the process ended without saying more");
            // On the harness's line `test NAME ... `, with `--nocapture`.
            if let Some((_, said)) = line.split_once("role: ") {
                return said.to_string();
            }
        }
    }

    fn wait(&mut self) -> ExitStatus {
        self.ended = true;
        self.child.wait().unwrap()
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if !self.ended {
            self.signal(libc::SIGTERM);
            let _ = self.child.wait();
        }
    }
}

/// The next line without its end; `None` at the end of the output.
fn next_line(lines: &mut impl BufRead) -> Option<String> {
    let mut line = String::new();
    (lines.read_line(&mut line).unwrap() > 0).then(|| line.trim_end().to_string())
}

#[test]
fn a_signal_is_passed_on_to_the_child_and_sets_the_flag() {
    let mut started = Started::new("pass-on");
    started.signal(libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(200));
    started.signal(libc::SIGINT);
    assert_eq!(started.said(), "child killed by Some(2), flag true", "SIGTERM ignored, SIGINT passed on");
    assert!(started.wait().success());
}

#[test]
fn a_second_signal_kills_the_child_when_asked() {
    let mut started = Started::new("kill-on-second");
    started.signal(libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(200));
    started.signal(libc::SIGTERM);
    assert_eq!(started.said(), "child killed by Some(9), flag true");
    assert!(started.wait().success());
}

#[test]
fn a_signal_ends_the_process_at_once_while_asked() {
    let mut started = Started::new("exit-at-once");
    let signalled = Instant::now();
    started.signal(libc::SIGHUP);
    assert_eq!(started.wait().code(), Some(128 + libc::SIGHUP));
    assert!(signalled.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_wait_without_a_signal_ends_at_its_limit() {
    let interrupts = Interrupts::start().unwrap();
    assert_eq!(interrupts.wait(Some(Duration::from_millis(20))), None);
    assert_eq!(interrupts.signal(), None);
    assert!(!interrupts.stop_flag().load(Ordering::Relaxed));
}

/// Why the knob tests cannot run here, if they cannot.
fn knob_unwritable() -> Option<&'static str> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("changing a scheduler knob needs root");
    }
    if !Path::new(KNOB).exists() {
        return Some("the kernel has no sched_rr_timeslice_ms");
    }
    None
}

fn skipped(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
}

fn read_knob() -> String {
    std::fs::read_to_string(KNOB).unwrap()
}

/// A value to set that differs from `current`.
fn other_value(current: &str) -> String {
    if current.trim() == "10" { "20" } else { "10" }.to_string()
}

#[test]
fn a_panic_puts_a_knob_back() {
    if let Some(why) = knob_unwritable() {
        return skipped("a_panic_puts_a_knob_back", why);
    }
    let _knob = KNOB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let before = read_knob();
    let panicked = std::panic::catch_unwind(|| {
        let mut guard = Guard::new();
        guard.set(Path::new(KNOB), &other_value(&before)).unwrap();
        assert_ne!(read_knob(), before);
        panic!("a bug while the knob is changed");
    });
    assert!(panicked.is_err());
    assert_eq!(read_knob(), before);
}

#[test]
fn each_terminating_signal_puts_a_knob_back() {
    if let Some(why) = knob_unwritable() {
        return skipped("each_terminating_signal_puts_a_knob_back", why);
    }
    let _knob = KNOB_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let before = read_knob();
    for signal_number in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let mut started = Started::new("hold-knob");
        assert_ne!(read_knob(), before, "the knob was changed");
        started.signal(signal_number);
        assert_eq!(started.said(), format!("restored after signal Some({signal_number})"));
        assert!(started.wait().success());
        assert_eq!(read_knob(), before, "after signal {signal_number}");
    }
}
