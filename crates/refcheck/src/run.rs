//! Runs the reference decoder, `trace-cmd report -R -t`, and reports clearly when it is missing.
//!
//! Tests that compare with trace-cmd must fail loudly (not skip) when it is not installed, so
//! the error says how to install it.

use std::fmt;
use std::io;
use std::path::Path;
use std::process::{Command, ExitStatus};

use crate::parse::{ParseError, Report, parse_report};

/// Environment variable naming the trace-cmd program to run (default `trace-cmd`).
const TRACE_CMD_ENV: &str = "TRACE_CMD";

/// Why the reference output could not be had.
#[derive(Debug)]
pub enum Error {
    /// The trace-cmd program could not be found.
    TraceCmdMissing { program: String },
    /// trace-cmd ran but failed.
    TraceCmdFailed { program: String, path: String, status: ExitStatus, stderr: String },
    /// Running trace-cmd failed for another reason.
    Io { program: String, error: io::Error },
    /// trace-cmd's output could not be parsed.
    Parse { path: String, error: ParseError },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::TraceCmdMissing { program } => write!(
                f,
                "`{program}` was not found: the reference tests need trace-cmd \
                 (install it, e.g. `apt-get install trace-cmd`; CI installs it; \
                 set {TRACE_CMD_ENV} to use another binary)"
            ),
            Error::TraceCmdFailed { program, path, status, stderr } => {
                write!(f, "`{program} report -t {path}` failed ({status}): {}", stderr.trim())
            }
            Error::Io { program, error } => write!(f, "cannot run `{program}`: {error}"),
            Error::Parse { path, error } => write!(f, "{path}: {error}"),
        }
    }
}

impl std::error::Error for Error {}

/// The trace-cmd program used: `$TRACE_CMD` if set and not empty, else `trace-cmd`.
pub fn trace_cmd_program() -> String {
    match std::env::var(TRACE_CMD_ENV) {
        Ok(p) if !p.is_empty() => p,
        _ => "trace-cmd".to_string(),
    }
}

/// A command running the trace-cmd program in the C locale.
///
/// The locale is pinned because trace-cmd's output on some files depends on it: trace-cmd
/// 3.1.6 parses an empty TRACECLOCK option (written by trace-cmd 2.x) from a `malloc(0)`
/// buffer it never fills. What that buffer holds depends on what was freed before, which
/// differs with the locale's files: under `LC_ALL=en_US.UTF-8` it printed raw tick counts
/// instead of seconds for `foreign/qemu-i686-function.dat`, whose clock is `local`.
fn trace_cmd_command() -> Command {
    let mut command = Command::new(trace_cmd_program());
    command.env("LC_ALL", "C");
    command
}

/// Runs `trace-cmd report -R -t PATH` and returns its standard output.
///
/// Invalid UTF-8 (possible in comms) is replaced with U+FFFD.
pub fn run_report(path: impl AsRef<Path>) -> Result<String, Error> {
    let bytes = report_bytes(path, &["-R"])?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The exact bytes `trace-cmd report -t OPTIONS PATH` prints: with `-R` raw fields,
/// without it each event as its print format shows it (`--cpu N`: that CPU's only).
///
/// trace-cmd 3.1.6 reads an empty TRACECLOCK option past the end of the buffer it
/// allocated for it (see `trace_cmd_command`; valgrind: "Invalid read of size 1" in
/// `strtok_r` from `tracecmd_parse_trace_clock` on `qemu-i686-function.dat`). What it
/// finds there varies from run to run: now and then it takes such a file's clock in
/// seconds for raw ticks (once in a full test run on `lisa-rtapp-juno-arm64.dat`, never
/// in 540 runs of that file alone), or it dies with SIGSEGV (once in a full test run on
/// `qemu-i686-function.dat`, never in 200 runs alone). A report in raw ticks is asked for
/// again, and so is one that crashed, each up to `ATTEMPTS` times in all; a trace whose
/// clock really counts ticks (`x86-tsc`) gives raw ticks every time, and a real failure
/// fails every time.
pub fn report_bytes(path: impl AsRef<Path>, options: &[&str]) -> Result<Vec<u8>, Error> {
    let surviving_crashes =
        || asked_again(|| report_once(path.as_ref(), options), |report| report.as_ref().is_err_and(killed_by_signal));
    asked_again(surviving_crashes, |report| report.as_ref().is_ok_and(|bytes| shows_raw_ticks(bytes)))
}

/// How many times a report is asked for while trace-cmd's flaw may have spoilt it (see
/// [`report_bytes`]).
const ATTEMPTS: usize = 3;

/// `ask()`, asked again while `spoilt` says its answer is, up to [`ATTEMPTS`] times in all.
fn asked_again<T>(mut ask: impl FnMut() -> T, spoilt: impl Fn(&T) -> bool) -> T {
    let mut answer = ask();
    for _ in 1..ATTEMPTS {
        if !spoilt(&answer) {
            break;
        }
        answer = ask();
    }
    answer
}

/// Whether a report's first event line shows its time as raw ticks (`[002]259445106948920:`)
/// rather than seconds (`[002] 259445.106948920:`).
fn shows_raw_ticks(report: &[u8]) -> bool {
    let first_event = report.split(|&b| b == b'\n').skip(1).find(|line| line.contains(&b'['));
    first_event
        .and_then(|line| line.iter().position(|&b| b == b']').and_then(|at| line.get(at + 1)))
        .is_some_and(u8::is_ascii_digit)
}

/// Whether trace-cmd was killed by a signal (a crash), rather than exiting with an error.
fn killed_by_signal(error: &Error) -> bool {
    use std::os::unix::process::ExitStatusExt;
    matches!(error, Error::TraceCmdFailed { status, .. } if status.signal().is_some())
}

fn report_once(path: &Path, options: &[&str]) -> Result<Vec<u8>, Error> {
    let program = trace_cmd_program();
    let mut command = trace_cmd_command();
    let output = command.args(["report", "-t"]).args(options).arg(path).output();
    let output = match output {
        Ok(o) => o,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Error::TraceCmdMissing { program });
        }
        Err(error) => return Err(Error::Io { program, error }),
    };
    if !output.status.success() {
        return Err(Error::TraceCmdFailed {
            program,
            path: path.display().to_string(),
            status: output.status,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(output.stdout)
}

/// [`run_report`] followed by [`parse_report`].
pub fn report(path: impl AsRef<Path>) -> Result<Report, Error> {
    let path = path.as_ref();
    let text = run_report(path)?;
    parse_report(&text).map_err(|error| Error::Parse { path: path.display().to_string(), error })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_ticks_are_told_from_seconds() {
        let seconds = b"cpus=6\n       trace-cmd-6973  [002] 259445.106948920: bprint: ip=0x0\n";
        let ticks = b"cpus=6\n       trace-cmd-6973  [002]259445106948920: bprint: ip=0x0\n";
        assert!(!shows_raw_ticks(seconds));
        assert!(shows_raw_ticks(ticks));
        assert!(!shows_raw_ticks(b"cpus=2\n"));
    }

    #[test]
    fn a_crash_is_told_from_an_error_exit() {
        use std::os::unix::process::ExitStatusExt;
        let failed = |raw_status| Error::TraceCmdFailed {
            program: "trace-cmd".into(),
            path: "x.dat".into(),
            status: ExitStatus::from_raw(raw_status),
            stderr: String::new(),
        };
        assert!(killed_by_signal(&failed(11)), "SIGSEGV");
        assert!(!killed_by_signal(&failed(1 << 8)), "exit code 1");
        assert!(!killed_by_signal(&Error::TraceCmdMissing { program: "trace-cmd".into() }));
    }

    #[test]
    fn missing_program_message_says_how_to_install() {
        let e = Error::TraceCmdMissing { program: "trace-cmd".into() };
        let text = e.to_string();
        assert!(text.contains("apt-get install trace-cmd"), "{text}");
    }
}
