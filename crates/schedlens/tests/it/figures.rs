//! The figure commands end to end on real traces: golden SVG and PNG files, byte-for-byte
//! determinism, several traces as pages, stacked or numbered files, and clear errors.
//! Golden files live in tests/golden/; rewrite them with `SCHEDLENS_BLESS=1 cargo test
//! -p schedlens --test figures` and look at them before committing.

use refcheck::fixture;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn temp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn schedlens(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlens")).args(args).output().expect("schedlens runs")
}

/// Runs a figure command writing `name` and returns the file's bytes.
fn figure(command: &str, name: &str, args: &[&str]) -> Vec<u8> {
    let out = temp(name);
    let out_arg = out.to_str().unwrap();
    let mut all = vec![command, "-o", out_arg];
    all.extend_from_slice(args);
    let result = schedlens(&all);
    assert!(result.status.success(), "{all:?}: {}", String::from_utf8_lossy(&result.stderr));
    std::fs::read(&out).unwrap()
}

fn check_golden(name: &str, actual: &[u8]) {
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    golden::check(&golden_dir, env!("CARGO_TARGET_TMPDIR").as_ref(), "schedlens", name, actual);
}

#[test]
fn graph_by_command_with_legend_svg() {
    let trace = fixture("scenario-forkexec-v7zstd.dat");
    let svg = figure("graph", "graph-forkexec.svg", &[&trace, "--color-by-command", "--width", "600"]);
    let text = String::from_utf8_lossy(&svg);
    assert!(text.contains("<svg"), "an SVG document");
    check_golden("graph-forkexec.svg", &svg);
}

#[test]
fn graph_target_after_sleep_png() {
    let trace = fixture("barrier-v7zstd.dat");
    let png = figure("graph", "graph-barrier.png", &[&trace, "--after-sleep", "--target", "barrier", "--width", "600"]);
    check_golden("graph-barrier.png", &png);
}

#[test]
fn graph_socket_order_with_a_topology_spec() {
    let trace = fixture("hackbench-v7zstd.dat");
    let args = [trace.as_str(), "--socket-order", "--topology", "sockets=2,smt=1,layout=interleaved", "--width", "600"];
    check_golden("graph-sockets.svg", &figure("graph", "graph-sockets.svg", &args));
}

#[test]
fn running_waiting_per_cpu_svg() {
    let trace = fixture("scenario-pinned-v7zstd.dat");
    let svg = figure("running-waiting", "rw-pinned.svg", &[&trace, "--per-cpu", "--width", "600"]);
    check_golden("rw-pinned.svg", &svg);
}

/// `--markers`: the five print events of markers-v7zstd.dat, zoomed in so they spread out.
#[test]
fn graph_with_markers_svg() {
    let trace = fixture("markers-v7zstd.dat");
    let args = [trace.as_str(), "--markers", "--min", "1.0016", "--max", "1.0017", "--width", "600"];
    let svg = figure("graph", "graph-markers.svg", &args);
    let text = String::from_utf8_lossy(&svg);
    for label in ["hello", "two", "no newline", "violet lines: 5 trace markers"] {
        assert!(text.contains(label), "{label:?} in the figure");
    }
    check_golden("graph-markers.svg", &svg);
}

/// `--markers=REGEX` on a trace from another machine (LISA's rt-app run on an Arm Juno):
/// its start/stop markers and the frequency changes written next to them, staggered.
#[test]
fn running_waiting_with_markers_on_a_foreign_trace_svg() {
    let trace = fixture("foreign/lisa-rtapp-juno-arm64.dat");
    let args = [trace.as_str(), "--markers=^TRACE_MARKER|cpu_frequency", "--width", "600"];
    let svg = figure("running-waiting", "rw-rtapp-markers.svg", &args);
    let text = String::from_utf8_lossy(&svg);
    assert!(text.contains("TRACE_MARKER_START") && text.contains("14 trace markers"));
    check_golden("rw-rtapp-markers.svg", &svg);
    // Without a match nothing is drawn; a bad expression is an error that says so.
    let none = figure("running-waiting", "rw-rtapp-none.svg", &[&trace, "--markers=no such marker", "--width", "600"]);
    assert!(!String::from_utf8_lossy(&none).contains("trace markers"));
    let out = schedlens(&["graph", &trace, "--markers=(", "-o", temp("bad.svg").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--markers=(: not a regular expression"));
}

#[test]
fn figures_are_deterministic_and_traces_become_pages() {
    let (a, b) = (fixture("hackbench-v6.dat"), fixture("scenario-overload-v7zstd.dat"));
    let first = figure("graph", "two-1.pdf", &[&a, &b, "--title", "two runs"]);
    let second = figure("graph", "two-2.pdf", &[&a, &b, "--title", "two runs"]);
    assert_eq!(first, second, "same input, same bytes");
    let text = String::from_utf8_lossy(&first);
    assert!(text.contains("/Count 2"), "one page per trace");
    let rw = figure("running-waiting", "rw-two.pdf", &[&a, &b]);
    assert_eq!(rw, figure("running-waiting", "rw-two-again.pdf", &[&a, &b]));
}

#[test]
fn several_traces_as_numbered_files_or_one_stacked_image() {
    let (a, b) = (fixture("hackbench-v6.dat"), fixture("hackbench-mono-v7zstd.dat"));
    let out = temp("runs.png");
    let result = schedlens(&["graph", &a, &b, "--width", "300", "-o", out.to_str().unwrap()]);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    assert!(temp("runs-1.png").exists() && temp("runs-2.png").exists(), "one file per trace");
    let stacked = figure("graph", "stacked.svg", &[&a, &b, "--width", "300", "--stack"]);
    let single = figure("graph", "single.svg", &[&a, "--width", "300"]);
    assert!(stacked.len() > single.len(), "both figures in one image");
}

#[test]
fn socket_order_without_a_topology_says_what_to_give() {
    let out = temp("never.svg");
    let result = schedlens(&["graph", &fixture("hackbench-v6.dat"), "--socket-order", "-o", out.to_str().unwrap()]);
    assert_eq!(result.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("--socket-order needs a topology") && stderr.contains("--topology"), "{stderr}");
}

#[test]
fn unknown_formats_and_bad_sizes_are_usage_errors() {
    let trace = fixture("hackbench-v6.dat");
    for args in [vec!["graph", &trace, "-o", "x.jpg"], vec!["graph", &trace, "--dpi", "0", "-o", "x.png"]] {
        let result = schedlens(&args);
        assert_eq!(result.status.code(), Some(2), "{args:?}: exit code 2 is bad usage (README, --help)");
        assert!(!String::from_utf8_lossy(&result.stderr).contains("panicked"));
    }
}

#[test]
fn running_waiting_prints_time_waiting_while_a_core_idles() {
    let out = temp("rw-summary.svg");
    let result = schedlens(&["running-waiting", &fixture("scenario-pinned-v7zstd.dat"), "-o", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(stdout.contains("a task waited while a core idled for"), "{stdout}");
    assert!(!stdout.contains("idled for 0.000000 s"), "two threads pinned to one CPU of two: {stdout}");
}

/// The headline of `running-waiting` on a trace: the known seconds and share, and the
/// unknown share when it says one.
fn idle_while_waiting_headline(trace: &str) -> (String, f64, Option<f64>) {
    let out = schedlens(&["running-waiting", trace, "-o", temp("lost.png").to_str().unwrap()]);
    assert!(out.status.success(), "{trace}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).lines().last().unwrap().to_string();
    let share = |after: &str| {
        let start = text.find(after)? + after.len();
        text[start..].split('%').next()?.parse::<f64>().ok()
    };
    let known = share(" s known (").unwrap_or_else(|| panic!("no known share: {text}"));
    let unknown = text.contains(" unknown: ").then(|| share(" s (").unwrap());
    (text, known, unknown)
}

/// Issue 31, defect 1: on real recordings whose ring buffers lost or overwrote events
/// (testdata/traces/lost-*, instance-lost-*: 2 CPUs under hackbench; manycore/
/// hackbench64-lost: 64 CPUs, CPU 58's oldest events overwritten), the headline stands
/// on known time only and says how much is unknown. On the 2-CPU recordings hackbench
/// keeps both CPUs busy: under 5% of the window is waste; on 64 CPUs hackbench's waste is
/// real (diffuse), and the unknown part is stated apart.
#[test]
fn idle_while_waiting_on_lost_event_traces_stands_on_known_time() {
    for name in ["lost-events-v7zstd.dat", "lost-schedlens-8k-v7zstd.dat", "instance-lost-v7zstd.dat"] {
        let (text, known, unknown) = idle_while_waiting_headline(&fixture(name));
        assert!(known < 5.0, "{text}");
        assert!(unknown.is_some_and(|u| u > 1.0), "{text}");
    }
    let (text, known, unknown) = idle_while_waiting_headline(&fixture("manycore/hackbench64-lost.dat"));
    assert!(text.contains("176.826303 s known (91.51% of the 193.229968 s window)"), "{text}");
    assert_eq!(unknown, Some(4.59), "{text}");
    assert!(known + unknown.unwrap() < 100.0, "{text}");
}

/// `latency --figure`: the wakeup latency histograms of the top commands side by side.
#[test]
fn latency_histogram_svg() {
    let trace = fixture("hackbench-v7zstd.dat");
    let out = temp("latency-hackbench.svg");
    let result = schedlens(&["latency", &trace, "--top", "3", "--figure", out.to_str().unwrap()]);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let svg = std::fs::read(&out).unwrap();
    assert!(String::from_utf8_lossy(&svg).contains("wakeup latency"));
    check_golden("latency-hackbench.svg", &svg);
}
