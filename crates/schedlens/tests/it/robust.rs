//! Running every analysis command on a trace and judging how each run ended: exit 0, 1
//! (with an error message) or 3 (with warnings) — never a panic (exit 101), a signal or
//! a hang. A panic listed in `trust::known::KNOWN_FAILURES` is tolerated and reported.

// Each test binary uses part of these helpers.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use trust::known::Panic;

/// Longer than any command takes on the fixtures here (a few seconds at most), short
/// enough that a hang fails the test quickly.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// How one run ended.
#[derive(Debug)]
pub struct Ended {
    pub args: Vec<String>,
    pub code: Option<i32>,
    pub stderr: String,
    pub timed_out: bool,
}

/// Runs schedlens with `args` (stdout discarded), killing it after `TIMEOUT`.
pub fn run(args: &[String]) -> Ended {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start schedlens");
    let mut pipe = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait().expect("wait for schedlens") {
            break (Some(status), false);
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr = reader.join().unwrap_or_default();
    Ended { args: args.to_vec(), code: status.and_then(|s| s.code()), stderr, timed_out }
}

/// What a run tells: `Ok(None)` fine, `Ok(Some(panic))` a known failure, `Err` a problem.
pub fn judge(ended: &Ended) -> Result<Option<Panic>, String> {
    let said = |what: &str| ended.stderr.contains(what);
    let problem = |why: &str| Err(format!("schedlens {}: {why}\n{}", ended.args.join(" "), tail(&ended.stderr)));
    match ended.code {
        _ if ended.timed_out => problem(&format!("still running after {TIMEOUT:?}")),
        None => problem("killed by a signal"),
        Some(0) => Ok(None),
        Some(1) if said("schedlens: error: ") => Ok(None),
        Some(3) if said("schedlens: warning: ") => Ok(None),
        Some(1 | 3) => problem("exit code without a message saying why"),
        Some(101) => match Panic::from_stderr(&ended.stderr) {
            Some(panic) if panic.known().is_some() => Ok(Some(panic)),
            Some(panic) => problem(&format!("panic: {panic}")),
            None => problem("exit 101 without a panic message"),
        },
        Some(code) => problem(&format!("exit code {code}")),
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

/// The commands a user runs on a trace, with figures written to `out_dir`.
pub fn commands(trace: &Path, out_dir: &Path) -> Vec<Vec<String>> {
    let name = trace.file_name().unwrap().to_string_lossy().into_owned();
    let trace = trace.display().to_string();
    let output = |ending: &str| out_dir.join(format!("{name}.{ending}")).display().to_string();
    let figure = |kind: &str| output(&format!("{kind}.svg"));
    let args = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    vec![
        args(&["stats", &trace]),
        args(&["graph", &trace, "--width", "300", "-o", &figure("graph")]),
        args(&["running-waiting", &trace, "--per-cpu", "--width", "300", "-o", &figure("rw")]),
        args(&["check", &trace]),
        args(&["latency", &trace, "--by", "task"]),
        args(&["latency", &trace, "--perf"]),
        args(&["export", &trace, "--format", "perfetto", "-o", &output("pftrace")]),
        args(&["export", &trace, "--format", "parquet", "-o", &output("parquet")]),
        args(&["info", &trace]),
        args(&["dump", &trace]),
    ]
}

/// What running every command on a set of traces met.
#[derive(Debug, Default)]
pub struct Verdicts {
    pub problems: Vec<String>,
    pub known_failures: Vec<String>,
    /// Runs per exit code (`None`: signal or timeout).
    pub codes: std::collections::BTreeMap<Option<i32>, usize>,
}

/// Runs every command on every trace, two at a time (CI has two cores).
pub fn run_all(traces: &[PathBuf], out_dir: &Path) -> Verdicts {
    let runs: Vec<Vec<String>> = traces.iter().flat_map(|t| commands(t, out_dir)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Verdicts::default());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(args) = runs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    let ended = run(args);
                    let verdict = judge(&ended);
                    let mut results = results.lock().unwrap();
                    *results.codes.entry(ended.code).or_default() += 1;
                    match verdict {
                        Ok(None) => {}
                        Ok(Some(panic)) => results.known_failures.push(format!("{}: {panic}", args.join(" "))),
                        Err(problem) => results.problems.push(problem),
                    }
                }
            });
        }
    });
    results.into_inner().unwrap()
}
