//! `schedlens synth` end to end: `trace-cmd report` decodes every synthetic event and
//! agrees with `schedlens dump --json` (versions 6 and 7, every workload, injections),
//! the truth file has its documented shape, and a 64-CPU trace renders.

use crate::common::{assert_dump_agrees_with_trace_cmd, schedlens};
use std::path::PathBuf;

fn temp(name: &str) -> String {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name).display().to_string()
}

#[test]
fn trace_cmd_agrees_with_dump_on_synthetic_traces() {
    let cases: [(&str, &[&str]); 4] = [
        ("synth-barrier-v7.dat", &["--workload", "barrier", "--cpus", "6"]),
        ("synth-hackbench-v6.dat", &["--workload", "hackbench", "--cpus", "4", "--file-version", "6"]),
        (
            "synth-mixed.dat",
            &["--workload", "mixed", "--cpus", "8", "--topology", "sockets=2,smt=2,layout=interleaved"],
        ),
        (
            "synth-injected.dat",
            &["--workload", "mixed", "--cpus", "8", "--inject", "overload", "--inject", "wakeup-placement:2"],
        ),
    ];
    for (name, args) in cases {
        let path = temp(name);
        let mut all = vec!["synth", "-o", path.as_str(), "--seconds", "0.05"];
        all.extend_from_slice(args);
        schedlens(&all);
        let events = assert_dump_agrees_with_trace_cmd(path.as_ref());
        assert!(events > 1000, "{name}: {events} events");
    }
}

#[test]
fn the_truth_file_has_its_documented_shape() {
    let (trace, truth) = (temp("synth-truth.dat"), temp("synth-truth.json"));
    let args = ["synth", "-o", &trace, "--cpus", "8", "--seconds", "0.2", "--workload", "mixed"];
    schedlens(
        &[&args[..], &["--inject", "work-conservation:2", "--inject", "kthread-preemption", "--truth", &truth]]
            .concat(),
    );
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&truth).unwrap()).unwrap();
    for key in ["seed", "cpus", "seconds", "workload", "events", "tasks", "injections"] {
        assert!(json.get(key).is_some(), "the truth lacks {key}: {json}");
    }
    let injections = json["injections"].as_array().unwrap();
    assert_eq!(injections.len(), 3);
    for injection in injections {
        for key in ["kind", "start_ns", "end_ns", "cpus", "pids", "lost_cpu_ns"] {
            assert!(injection.get(key).is_some(), "an injection lacks {key}: {injection}");
        }
    }
    let task = &json["tasks"][0];
    for key in ["pid", "comm", "runtime_ns", "switches", "wait_ns"] {
        assert!(task.get(key).is_some(), "a task lacks {key}: {task}");
    }
}

#[test]
fn bad_options_are_clear_errors() {
    let out = temp("never.dat");
    for args in [
        vec!["synth", "-o", out.as_str(), "--inject", "nonsense"],
        vec!["synth", "-o", out.as_str(), "--cpus", "0"],
        vec!["synth", "-o", out.as_str(), "--workload", "hackbench", "--inject", "overload"],
    ] {
        let result = std::process::Command::new(env!("CARGO_BIN_EXE_schedlens")).args(&args).output().unwrap();
        assert_eq!(result.status.code(), Some(2), "{args:?}: bad usage, whatever the input");
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert!(stderr.contains("error:") && !stderr.contains("panicked"), "{stderr}");
    }
}
