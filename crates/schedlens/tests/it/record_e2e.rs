//! `schedlens record` end to end, as root on a machine with tracefs: recordings of
//! hackbench (file versions 7 and 6) read the same in `trace-cmd report -R -t` and in
//! `schedlens dump --json`, event for event, and carry their context; tracefs is left as it
//! was after a failing command and after SIGTERM to the recorder. Where recording is not
//! possible (not root, no tracefs, no hackbench) each test says so on stderr and passes.

use crate::common::{TRACEFS_LOCK, schedlens};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TRACEFS: &str = "/sys/kernel/tracing";
/// The control files a recording changes, compared before and after.
const STATE_FILES: &[&str] = &["tracing_on", "buffer_size_kb", "trace_clock", "set_event"];

/// Why recording cannot be tested here, if it cannot.
fn cannot_record(needs_hackbench: bool) -> Option<String> {
    let uid = String::from_utf8(Command::new("id").arg("-u").output().ok()?.stdout).ok()?;
    if uid.trim() != "0" {
        return Some("recording needs root".into());
    }
    if !Path::new(TRACEFS).is_dir() {
        return Some(format!("{TRACEFS} does not exist (kernel without tracefs)"));
    }
    let hackbench = Command::new("hackbench").arg("--help").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if needs_hackbench && hackbench.is_err() {
        return Some("hackbench is not installed (apt-get install rt-tests)".into());
    }
    None
}

fn skip_unless_recording_works(test: &str, needs_hackbench: bool) -> bool {
    match cannot_record(needs_hackbench) {
        Some(why) => {
            // Straight to stderr: the test harness captures eprintln! of passing tests.
            let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
            false
        }
        None => true,
    }
}

fn temp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// The text of the control files a recording touches.
fn tracefs_state() -> Vec<(String, String)> {
    STATE_FILES
        .iter()
        .map(|f| (f.to_string(), std::fs::read_to_string(Path::new(TRACEFS).join(f)).unwrap_or_default()))
        .collect()
}

fn record(output: &Path, extra: &[&str], command: &[&str]) -> String {
    let output = output.display().to_string();
    let args: Vec<&str> =
        ["record", "-o", output.as_str()].iter().chain(extra).chain(&["--"]).chain(command).copied().collect();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens")).args(&args).output().expect("run schedlens");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "schedlens {args:?} failed: {stderr}");
    stderr
}

#[test]
fn recordings_agree_with_trace_cmd_on_every_event() {
    if !skip_unless_recording_works("recordings_agree_with_trace_cmd_on_every_event", true) {
        return;
    }
    let _tracefs = TRACEFS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // A 64 KiB buffer loses events: their notices must agree too.
    let recordings: [(&str, &[&str]); 3] = [
        ("hackbench-v7.dat", &["--sleep", "0.1"]),
        ("hackbench-v6.dat", &["--file-version", "6"]),
        ("hackbench-small-buffer.dat", &["--buffer-kb", "64"]),
    ];
    for (name, extra) in recordings {
        let path = temp(name);
        let report = record(&path, extra, &["hackbench", "-g", "2", "-l", "100"]);
        assert!(report.contains("recorder CPU time"), "{report}");
        if !extra.contains(&"64") {
            assert!(report.contains("lost events: none"), "{report}");
        }
        let events = crate::common::assert_dump_agrees_with_trace_cmd(&path);
        assert!(events > 1000, "{name}: only {events} events");
        let info = schedlens(&["info", &path.display().to_string()]);
        for expected in
            ["recorded by:  schedlens", "command:      hackbench -g 2 -l 100 (exit status 0, pid ", "topology:"]
        {
            assert!(info.contains(expected), "{name}: info lacks {expected:?}:\n{info}");
        }
    }
    // The recording renders, in socket order from its own topology, with no --topology.
    let recording = temp("hackbench-v7.dat").display().to_string();
    let figure = temp("hackbench-v7.png").display().to_string();
    schedlens(&["graph", &recording, "--after-sleep", "--socket-order", "-o", &figure]);
    let png = std::fs::read(&figure).expect("graph wrote the figure");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 1000, "a PNG image");
}

#[test]
fn tracefs_is_restored_after_a_failing_command_and_after_sigterm() {
    if !skip_unless_recording_works("tracefs_is_restored_after_a_failing_command_and_after_sigterm", false) {
        return;
    }
    let _tracefs = TRACEFS_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let before = tracefs_state();

    let failing = temp("false.dat");
    let report = record(&failing, &["--buffer-kb", "256"], &["false"]);
    assert!(report.contains("the command ended with exit status 1"), "{report}");
    assert_eq!(tracefs_state(), before, "after a failing command");
    assert!(schedlens(&["info", &failing.display().to_string()]).contains("command:      false (exit status 1, pid "));

    let terminated = temp("sigterm.dat");
    let recorder = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["record", "--clock", "global", "--buffer-kb", "512", "-o"])
        .arg(&terminated)
        .args(["--", "sleep", "30"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the recorder");
    wait_until_recording(&before);
    Command::new("kill").args(["-TERM", &recorder.id().to_string()]).status().expect("kill");
    let started = Instant::now();
    let out = recorder.wait_with_output().expect("recorder ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(started.elapsed() < Duration::from_secs(10), "the recorder took {:?} to stop", started.elapsed());
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("stopped early by signal 15"), "{stderr}");
    assert_eq!(tracefs_state(), before, "after SIGTERM");
    let info = schedlens(&["info", &terminated.display().to_string()]);
    assert!(info.contains("command:      sleep 30 (killed by signal 15, pid "), "{info}");
    assert!(info.contains("clock:        global"), "{info}");
}

/// Waits until the recorder has changed tracefs (and so started recording).
fn wait_until_recording(before: &[(String, String)]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while tracefs_state() == before {
        assert!(Instant::now() < deadline, "the recorder did not start recording");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let it get past setup and start the command.
    std::thread::sleep(Duration::from_millis(300));
}
