//! `schedlens watch` live, as root on a machine with tracefs (each test says on stderr why
//! it is skipped elsewhere): two spinners pinned to CPU 0 make an incident file soon
//! after they end, which `check` and `trace-cmd report` read; unpinned spinners make
//! none (or, on a busy machine, only real ones that lose under 1% of their time); a watcher killed with SIGKILL leaves a journal the next one resets.
//!
//! The machine may be busy (the CI runner, other builds): when CPU 1 never idled while
//! the pinned spinners waited, there was no waste to find. The watcher's ring at exit
//! (`--ring-at-exit`) says which: `check` on it must find the episode for the test to
//! expect an incident, and the test says so when it does not.

use crate::common::{TRACEFS_LOCK, fresh_dir, is_root, schedlens};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TRACEFS: &str = "/sys/kernel/tracing";

fn skip_unless_tracing_works(test: &str) -> bool {
    let why = if !is_root() {
        "watching needs root"
    } else if !Path::new(TRACEFS).is_dir() {
        "no tracefs"
    } else {
        return true;
    };
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
    false
}

/// A watcher whose standard output lines are collected with the instant each arrived.
struct Watching {
    child: Child,
    lines: mpsc::Receiver<(Instant, String)>,
}

fn watch(args: &[&str]) -> Watching {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .arg("watch")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start schedlens watch");
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send((Instant::now(), line));
        }
    });
    Watching { child, lines }
}

impl Watching {
    /// Waits for the end; the lines with their arrival, and standard error.
    fn finish(mut self) -> (Vec<(Instant, Value)>, String) {
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(status.success(), "watch failed: {stderr}");
        let lines = self.lines.iter().map(|(at, line)| (at, serde_json::from_str(&line).unwrap())).collect();
        (lines, stderr)
    }
}

/// Two shells spinning, pinned to CPU 0 or not, ended after `seconds`; their pids and
/// the instant they ended.
fn spin(pinned: bool, seconds: f64) -> (Vec<u32>, Instant) {
    let spinner = || {
        let mut command = if pinned { Command::new("taskset") } else { Command::new("sh") };
        if pinned {
            command.args(["-c", "0", "sh"]);
        }
        command.args(["-c", "while :; do :; done"]).spawn().expect("start a spinner")
    };
    let mut spinners = [spinner(), spinner()];
    std::thread::sleep(Duration::from_secs_f64(seconds));
    for s in &mut spinners {
        s.kill().unwrap();
    }
    let ended = Instant::now();
    for s in &mut spinners {
        s.wait().unwrap();
    }
    (spinners.iter().map(Child::id).collect(), ended)
}

fn incidents(lines: &[(Instant, Value)]) -> Vec<&(Instant, Value)> {
    lines.iter().filter(|(_, v)| v["type"] == "incident").collect()
}

#[test]
fn pinned_spinners_make_an_incident_file_soon_after_they_end() {
    if !skip_unless_tracing_works("pinned_spinners_make_an_incident_file_soon_after_they_end") {
        return;
    }
    let _tracefs = TRACEFS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = fresh_dir("watch-pinned");
    let ring = dir.join("ring.dat");
    let watcher = watch(&[
        "-o",
        dir.to_str().unwrap(),
        "--duration",
        "8",
        "--format",
        "json",
        "--ring-at-exit",
        ring.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_secs(2));
    let (pids, ended) = spin(true, 3.0);
    let (lines, stderr) = watcher.finish();
    let summary = &lines.last().expect("a summary").1;
    assert_eq!(summary["type"], "summary", "{stderr}");
    // Was there waste to find? The spinners' episode, as check sees the whole ring.
    let checked: Value =
        serde_json::from_str(&schedlens(&["check", ring.to_str().unwrap(), "--format", "json", "--min-lost", "10"]))
            .unwrap();
    let spinner_pid = |t: &Value| pids.iter().any(|p| t["pid"] == *p);
    let waste = checked["incidents"].as_array().unwrap().iter().any(|i| {
        i["kind"] == "work-conservation" && i["tasks"].as_array().is_some_and(|ts| ts.iter().any(spinner_pid))
    });
    if !waste {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: pinned spinners: CPU 1 never idled while they waited (the machine is busy), so there was no \
             waste to find; check on the ring found: {}",
            checked["summary"]
        );
        return;
    }
    let found = incidents(&lines);
    let (at, incident) = found
        .iter()
        .find(|(_, i)| i["kind"] == "work-conservation" && i["cpus"].as_array().unwrap().contains(&Value::from(0)))
        .unwrap_or_else(|| panic!("no work-conservation incident on CPU 0: {lines:?} {stderr}"));
    let after_end = at.saturating_duration_since(ended);
    let _ = writeln!(
        std::io::stderr(),
        "watch: incident {} s after the spinners ended (lag in trace time {} ms)",
        after_end.as_secs_f64(),
        incident["lag_ns"].as_u64().unwrap() / 1_000_000
    );
    assert!(after_end < Duration::from_secs(2), "reported {after_end:?} after the spinners' end");
    let file = incident["file"].as_str().expect("the incident file was written");
    let on_file: Value =
        serde_json::from_str(&schedlens(&["check", file, "--format", "json", "--min-lost", "10"])).unwrap();
    // The live detector saw the episode in the ring's recent part, check sees the whole
    // file (the seconds before it too): the same episode, its ends may differ a little.
    let span = |i: &Value| (i["start_ns"].as_u64().unwrap(), i["end_ns"].as_u64().unwrap());
    let (live_start, live_end) = span(incident);
    assert!(
        on_file["incidents"].as_array().unwrap().iter().any(|i| {
            let (start, end) = span(i);
            let overlap = end.min(live_end).saturating_sub(start.max(live_start));
            i["kind"] == "work-conservation" && overlap * 2 >= live_end - live_start
        }),
        "check on {file}: {on_file}\nlive incident: {incident}"
    );
    match Command::new("trace-cmd").args(["report", "-i", file]).stdout(Stdio::null()).stderr(Stdio::piped()).output() {
        Ok(report) => {
            assert!(report.status.success(), "trace-cmd report {file}: {}", String::from_utf8_lossy(&report.stderr))
        }
        Err(_) => {
            let _ = writeln!(std::io::stderr(), "trace-cmd is not installed: its reading of {file} is not checked");
        }
    }
}

#[test]
fn unpinned_spinners_make_no_incident() {
    if !skip_unless_tracing_works("unpinned_spinners_make_no_incident") {
        return;
    }
    let _tracefs = TRACEFS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = fresh_dir("watch-unpinned");
    let ring = dir.join("ring.dat");
    let watcher = watch(&[
        "-o",
        dir.to_str().unwrap(),
        "--duration",
        "7",
        "--format",
        "json",
        "--ring-at-exit",
        ring.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_secs(2));
    // 4 s, not the 60 s: CI time. The scheduler balances two spinners on two CPUs
    // within milliseconds; what 60 s would add is more chances of noise.
    let seconds = 4.0;
    let (pids, _) = spin(false, seconds);
    let (lines, stderr) = watcher.finish();
    let of_spinners = |incident: &Value| {
        let tasks = incident["tasks"].as_array().unwrap();
        tasks.iter().any(|t| pids.iter().any(|p| t.as_str().unwrap().ends_with(&format!(":{p}"))))
    };
    let found: Vec<&Value> = incidents(&lines).into_iter().map(|(_, i)| i).filter(|i| of_spinners(i)).collect();
    if found.is_empty() {
        return;
    }
    // A busy machine (the CI runner runs other tests beside this one) can leave CPU 1 idle
    // for a few milliseconds while both spinners wait on CPU 0, and then the watcher is
    // right to say so. What must not happen: an incident the whole ring does not show, or
    // balanced spinners reported as losing a share of their time.
    let checked: Value =
        serde_json::from_str(&schedlens(&["check", ring.to_str().unwrap(), "--format", "json", "--min-lost", "10"]))
            .unwrap();
    let span = |i: &Value| (i["start_ns"].as_u64().unwrap(), i["end_ns"].as_u64().unwrap());
    for incident in &found {
        let (start, end) = span(incident);
        let on_ring = checked["incidents"].as_array().unwrap().iter().any(|i| {
            let (s, e) = span(i);
            e.min(end) > s.max(start)
        });
        assert!(on_ring, "an incident of the unpinned spinners check does not find on the ring: {incident} {stderr}");
    }
    let lost_ns: u64 = found.iter().map(|i| i["lost_cpu_ns"].as_u64().unwrap()).sum();
    let spun_ns = (2.0 * seconds * 1e9) as u64;
    let _ = writeln!(
        std::io::stderr(),
        "watch: the unpinned spinners lost {:.1} ms of {} s in {} real incident(s) (a busy machine)",
        lost_ns as f64 / 1e6,
        spun_ns / 1_000_000_000,
        found.len()
    );
    assert!(lost_ns * 100 < spun_ns, "the unpinned spinners lost {lost_ns} ns of {spun_ns}: {found:?} {stderr}");
}

#[test]
fn a_watcher_killed_with_sigkill_is_cleaned_up_by_the_next() {
    if !skip_unless_tracing_works("a_watcher_killed_with_sigkill_is_cleaned_up_by_the_next") {
        return;
    }
    let _tracefs = TRACEFS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let state = || {
        ["tracing_on", "buffer_size_kb", "set_event"]
            .map(|f| std::fs::read_to_string(Path::new(TRACEFS).join(f)).unwrap_or_default())
    };
    let before = state();
    let dir = fresh_dir("watch-killed");
    let mut watcher = watch(&["-o", dir.to_str().unwrap(), "--duration", "30"]).child;
    let journal = Path::new("/run/schedlens").join(format!("{}.journal", watcher.id()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(journal.exists() && state()[2].contains("sched_switch")) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(journal.exists(), "no journal {}", journal.display());
    watcher.kill().unwrap();
    watcher.wait().unwrap();
    assert_ne!(state(), before, "a killed watcher leaves tracefs changed");
    let next = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["watch", "-o", dir.to_str().unwrap(), "--duration", "0.5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("schedlens pid {} was killed while tracing", watcher.id())), "{stderr}");
    assert_eq!(state(), before, "reset by the next watcher");
    assert!(!journal.exists());
}
