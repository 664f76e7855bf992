//! What every command says when it cannot do its job: one line naming the file, each
//! cause said once, and the exit code of README's table (1: this input or this file
//! cannot be used; 2: the command line is wrong whatever the input).

use refcheck::fixture;
use std::path::PathBuf;
use std::process::Command;
use trust::script::{At, Common, Op, Script, Task};

const COMMANDS: [&str; 6] = ["stats", "graph", "running-waiting", "check", "info", "dump"];

fn temp(name: &str) -> String {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name).display().to_string()
}

/// Runs schedlens; returns the exit code and the error line.
fn fails(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    let errors: Vec<&str> =
        stderr.lines().filter(|l| l.starts_with("schedlens: error: ") || l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{args:?}: one error line expected:\n{stderr}");
    let line = errors[0].to_string();
    assert_said_once(&line);
    (out.status.code().expect("an exit code"), line)
}

/// No part of the message (between ": ") comes twice.
fn assert_said_once(line: &str) {
    let parts: Vec<&str> = line.split(": ").map(str::trim).filter(|p| p.len() >= 6).collect();
    for (i, part) in parts.iter().enumerate() {
        assert!(!parts[i + 1..].contains(part), "{part:?} is said twice in: {line}");
    }
}

/// A real trace.dat with switches only: no sched_process_exec, no sleep.
fn trace_without_exec() -> String {
    let at = |cpu, dt| At { cpu, dt, common: Common::CURRENT };
    let script = Script {
        cpus: 1,
        ops: vec![
            Op::SetTime(1_000_000_000),
            Op::Switch { at: at(0, 0), prev: Task(0), state: 0, next: Task(5) },
            Op::Switch { at: at(1, 10), prev: Task(0), state: 0, next: Task(6) },
            Op::Switch { at: at(0, 1000), prev: Task(5), state: 1, next: Task(0) },
        ],
        ..Script::default()
    };
    let path = temp("no-exec.dat");
    std::fs::write(&path, trust::write::write_trace(&script).unwrap()).unwrap();
    path
}

#[test]
fn a_misspelt_file_name_is_one_sentence_naming_it() {
    for command in COMMANDS {
        let (code, line) = fails(
            &[command, "no-such-trace.dat", "-o", &temp("never.svg")]
                [..if command == "graph" || command == "running-waiting" { 4 } else { 2 }],
        );
        assert_eq!(code, 1, "{command}");
        assert_eq!(line, "schedlens: error: cannot open no-such-trace.dat: No such file or directory (os error 2)");
    }
    let (code, line) = fails(&["stats", env!("CARGO_TARGET_TMPDIR")]);
    assert_eq!((code, line.ends_with("is a directory, not a trace file")), (1, true), "{line}");
}

#[test]
fn a_file_that_is_not_a_trace_says_so_once() {
    let path = temp("not-a-trace.dat");
    std::fs::write(&path, b"hello, this is not a trace at all").unwrap();
    for command in COMMANDS {
        let (code, line) = fails(&[command, &path]);
        assert_eq!(code, 1, "{command}");
        assert!(line.contains("not-a-trace.dat: file header at byte 0") && line.contains("bad magic"), "{line}");
    }
}

#[test]
fn after_sleep_without_exec_events_says_why_once() {
    let trace = trace_without_exec();
    for command in ["stats", "check"] {
        let (code, line) = fails(&[command, &trace, "--after-sleep"]);
        assert_eq!(code, 1, "{command}");
        assert!(line.contains("--after-sleep: "), "{line}");
        assert_eq!(line.matches("sched_process_exec").count(), 1, "{line}");
    }
}

#[test]
fn times_that_are_not_seconds_are_usage_errors() {
    let trace = fixture("hackbench-v6.dat");
    for (option, value) in [("--min", "nan"), ("--max", "inf"), ("--min", "-1"), ("--max", "1e400")] {
        for command in ["stats", "check", "dump"] {
            let (code, line) = fails(&[command, &trace, &format!("{option}={value}")]);
            assert_eq!(code, 2, "{command} {option} {value}: {line}");
            assert!(line.contains("not a number of seconds"), "{line}");
        }
    }
    let (code, line) = fails(&["stats", &trace, "--min", "2", "--max", "1"]);
    assert_eq!((code, line.as_str()), (2, "schedlens: error: --min 2 is not before --max 1"));
    for option in ["--min-lost=nan", "--min-overload=-1"] {
        let (code, line) = fails(&["check", &trace, option]);
        assert_eq!(code, 2, "{line}");
        assert!(line.contains("not a number of milliseconds"), "{option}: {line}");
    }
}

#[test]
fn a_window_past_the_end_of_the_trace_is_an_error_not_an_empty_result() {
    let (code, line) = fails(&["stats", &fixture("hackbench-v6.dat"), "--min", "100"]);
    assert_eq!(code, 1);
    assert!(line.contains("--min 100 is past the end of the trace, 1.069165 s after"), "{line}");
    // A huge but finite --max is the whole trace.
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["stats", &fixture("hackbench-v6.dat"), "--max", "1e300", "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("hackbench"));
}

#[test]
fn huge_topologies_are_errors_said_once() {
    let trace = fixture("hackbench-v6.dat");
    let (code, line) = fails(&["graph", &trace, "--topology", "sockets=65536,smt=65536", "-o", &temp("t.svg")]);
    assert_eq!(code, 1, "{line}");
    assert!(line.contains("2 CPUs do not divide into 65536 sockets"), "{line}");
    let (code, line) = fails(&["synth", "-o", &temp("s.dat"), "--cpus", "4", "--topology", "sockets=65536,smt=65536"]);
    assert_eq!(code, 2, "{line}");
}

#[test]
fn bad_option_values_are_usage_errors_in_every_command() {
    let trace = fixture("hackbench-v6.dat");
    let out = temp("x.svg");
    for args in [
        vec!["graph", &trace, "--width", "0", "-o", &out],
        vec!["graph", &trace, "--height", "nan", "-o", &out],
        vec!["running-waiting", &trace, "--dpi", "1e9", "-o", &out],
        vec!["running-waiting", &trace, "--target", "", "-o", &out],
        vec!["graph", &trace, "-o", "figure.gif"],
        vec!["record", "--sleep", "nan", "--", "true"],
        vec!["record", "--file-version", "6", "--compression", "zstd", "--", "true"],
        vec!["synth", "-o", &out, "--seconds", "-1"],
        vec!["synth", "-o", &out, "--file-version", "8"],
        vec!["synth", "-o", &out, "--cpus", "2", "--inject", "overload"],
        vec!["dump", &trace, "--min", "3", "--max", "1"],
    ] {
        let (code, line) = fails(&args);
        assert_eq!(code, 2, "{args:?}: {line}");
    }
}

#[test]
fn a_topology_of_another_machine_is_an_error_naming_both_cpu_counts() {
    let lscpu64 = fixture("manycore/barrier64.dat.lscpu");
    let (code, line) = fails(&["graph", &fixture("hackbench-v6.dat"), "--topology", &lscpu64, "-o", &temp("t.svg")]);
    assert_eq!(code, 1, "{line}");
    assert!(line.contains("describes 64 CPUs (0-63), the trace has 2"), "{line}");
    let lscpu32 = fixture("manycore/barrier32-2socket.dat.lscpu");
    let (code, line) = fails(&["stats", &fixture("manycore/barrier64.dat"), "--topology", &lscpu32]);
    assert_eq!(code, 1, "{line}");
    assert!(line.contains("describes 32 CPUs (0-31), the trace has 64"), "{line}");
    let (code, line) = fails(&["check", &fixture("manycore/barrier64.dat"), "--topology", "sockets=3,smt=2"]);
    assert_eq!(code, 1, "{line}");
    assert!(line.contains("64 CPUs do not divide into 3 sockets"), "{line}");
}
