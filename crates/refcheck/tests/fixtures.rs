//! Runs `trace-cmd report -R -t` on every fixture in testdata/traces (and its foreign/) and checks that the
//! reference parser consumes all of its output, so that decoder tests built on it compare
//! every event. Needs trace-cmd installed (the tests fail, with a message, when it is not).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use refcheck::{
    Line, RefEvent, Report, fixture, parse_report, payload_token, run_report, split_fields, switch_chain_breaks,
};

fn fixtures() -> Vec<PathBuf> {
    let files = refcheck::fixtures();
    assert!(files.len() >= 20, "expected the fixture corpus, found {} files", files.len());
    files
}

/// Recorded on the project's 2-CPU VM (not in testdata/traces/foreign or manycore).
fn is_local(path: &Path) -> bool {
    !path.parent().is_some_and(|dir| dir.ends_with("foreign") || dir.ends_with("manycore"))
}

/// The report text; panics with trace-cmd's install hint when it is missing.
fn report_text(path: &Path) -> String {
    run_report(path).unwrap_or_else(|e| panic!("{e}"))
}

fn report(path: &Path) -> (String, Report) {
    let text = report_text(path);
    let r = parse_report(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (text, r)
}

/// A loose, independent test for "this line is an event line": ` -PID [CPU] TS: NAME:` after a
/// comm column of at least 16 characters.
fn looks_like_event(line: &str) -> bool {
    let Some(open) = line.find(" [") else {
        return false;
    };
    let Some(close) = line[open..].find("] ").or_else(|| line[open..].find(']')) else {
        return false;
    };
    let cpu = &line[open + 2..open + close];
    let head = line[..open].trim_end();
    let Some((comm, pid)) = head.rsplit_once('-') else {
        return false;
    };
    let after = &line[open + close + 1..];
    let Some((ts, rest)) = after.split_once(": ") else {
        return false;
    };
    comm.len() >= 16
        && !pid.is_empty()
        && pid.bytes().all(|b| b.is_ascii_digit())
        && !cpu.is_empty()
        && cpu.bytes().all(|b| b.is_ascii_digit())
        && ts.trim().bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && rest.split_once(':').is_some_and(|(n, _)| !n.is_empty() && !n.contains(' '))
}

#[test]
fn every_line_of_every_fixture_is_consumed() {
    for path in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (text, r) = report(&path);
        let total = text.lines().count();
        let events = r.events().count();
        let lost = r.lost().count();
        assert!(events > 0, "{name}: no events");
        if is_local(&path) {
            assert_eq!(r.cpus, 2, "{name}");
            // Only markers-v7zstd.dat has multi-line payloads.
            assert_eq!(r.continuation_lines > 0, name.starts_with("markers"), "{name}");
        }
        assert_eq!(1 + events + lost + r.continuation_lines, total, "{name}: lines not accounted for");
        let looking = text.lines().filter(|l| looks_like_event(l)).count();
        assert_eq!(events, looking, "{name}: events vs lines that look like events");
        let dropped = text.lines().filter(|l| l.contains("EVENTS DROPPED]")).count();
        assert_eq!(lost, dropped, "{name}: lost-event lines");
        for e in r.events() {
            assert!(e.cpu < r.cpus, "{name}: {e:?}");
            assert!(!e.comm.is_empty() && !e.payload.is_empty(), "{name}: {e:?}");
        }
        // The merge is by time: per buffer, timestamps never go back.
        let mut last: BTreeMap<Option<&str>, u64> = BTreeMap::new();
        for e in r.events() {
            let l = last.entry(e.buffer.as_deref()).or_default();
            assert!(e.ts_ns >= *l, "{name}: time goes back at {e:?}");
            *l = e.ts_ns;
        }
    }
}

const SWITCH_FIELDS: [&str; 7] =
    ["prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"];

#[test]
fn sched_switch_payloads_split_and_pid_is_prev_pid() {
    for path in fixtures() {
        let (_, r) = report(&path);
        for e in r.events().filter(|e| e.event == "sched_switch") {
            let v = split_fields(&e.payload, &SWITCH_FIELDS).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            // common_pid of sched_switch is the task switched out.
            assert_eq!(v[1], e.pid.to_string(), "{}: {e:?}", path.display());
        }
    }
}

fn by_buffer(r: &Report, buffer: Option<&str>) -> Vec<RefEvent> {
    r.events().filter(|e| e.buffer.as_deref() == buffer).cloned().collect()
}

#[test]
fn lost_event_fixtures() {
    let (_, r) = report(Path::new(&fixture("lost-events-v7zstd.dat")));
    let lost: Vec<_> = r.lost().collect();
    assert!(lost.iter().any(|l| l.2.is_some()), "{lost:?}");
    assert!(lost.iter().any(|l| l.2.is_none()), "{lost:?}");
    assert!(lost.iter().all(|l| l.0.is_none()));
    assert!(r.task_totals().is_err());
    // A lost-event line comes right before an event of its CPU.
    for w in r.lines.windows(2) {
        if let [Line::Lost { cpu, .. }, next] = w {
            assert!(matches!(next, Line::Event(e) if e.cpu == *cpu), "{w:?}");
        }
    }

    let (text, r) = report(Path::new(&fixture("instance-lost-v7zstd.dat")));
    assert!(r.lost().any(|l| l.0 == Some("inst")), "instance lost lines");
    assert!(r.lost().any(|l| l.0.is_none()), "top-buffer lost lines");
    assert!(text.lines().any(|l| l.starts_with("inst: CPU:")));
}

#[test]
fn instance_fixture() {
    let (text, r) = report(Path::new(&fixture("instance-v7zstd.dat")));
    let top = by_buffer(&r, None);
    let inst = by_buffer(&r, Some("inst"));
    assert!(!top.is_empty() && !inst.is_empty());
    assert_eq!(top.len() + inst.len(), r.events().count(), "only two buffers");
    // The instance was recorded with sched_switch and sched_wakeup only.
    assert!(inst.iter().all(|e| e.event == "sched_switch" || e.event == "sched_wakeup"));
    assert!(top.iter().any(|e| e.event == "sched_stat_runtime"));
    assert!(text.lines().skip(1).all(|l| l.starts_with("inst: ") || l.starts_with("      ")));
    // Both buffers saw the same switches: the instance's switches are a subset of the top
    // buffer's. (Compared by cpu and pids: the two probes read prev_state separately, and an
    // exiting task can change between them, e.g. 32 in the top buffer, 16 in the instance.)
    let key = |e: &RefEvent| {
        (
            e.cpu,
            payload_token(&e.payload, "prev_pid").map(str::to_owned),
            payload_token(&e.payload, "next_pid").map(str::to_owned),
        )
    };
    let top_switches: std::collections::BTreeSet<_> =
        top.iter().filter(|e| e.event == "sched_switch").map(key).collect();
    let missing: Vec<_> =
        inst.iter().filter(|e| e.event == "sched_switch" && !top_switches.contains(&key(e))).collect();
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn clock_fixtures() {
    // ns clocks print seconds.nanoseconds; counter and x86-tsc print integers.
    let (text, r) = report(Path::new(&fixture("hackbench-counter-v7zstd.dat")));
    assert!(!text.lines().nth(1).unwrap().contains(". "));
    let first = r.events().next().unwrap().ts_ns;
    let last = r.events().last().unwrap().ts_ns;
    assert!(last - first < 10 * r.events().count() as u64, "counter ticks per event");
    let (text, r) = report(Path::new(&fixture("hackbench-x86tsc-v7zstd.dat")));
    assert!(text.lines().nth(1).unwrap().contains("]1"), "no blank before a wide timestamp");
    assert!(r.events().count() > 100);
    let (_, r) = report(Path::new(&fixture("hackbench-mono-v7zstd.dat")));
    let e = r.events().next().unwrap();
    assert!(e.ts_ns > 1_000_000_000, "{e:?}");
}

#[test]
fn marker_payloads() {
    let (_, r) = report(Path::new(&fixture("markers-v7zstd.dat")));
    let bufs: Vec<&str> =
        r.events().filter(|e| e.event == "print").map(|e| e.payload.split_once(" buf=").unwrap().1).collect();
    assert_eq!(bufs, vec!["hello", "two\nlines", "no newline", "a\n\nb\n", "z\nx-1 [000] 1.5: fake: y"]);
}

#[test]
fn task_totals_cover_each_cpu_span() {
    for path in fixtures() {
        let (_, r) = report(&path);
        if r.has_lost_events() {
            continue;
        }
        let totals = r.task_totals().unwrap();
        let top = by_buffer(&r, None);
        if !top.iter().any(|e| e.event == "sched_switch") {
            continue; // thermal, function and print-only traces: nothing ran, as far as they say
        }
        // Each CPU's time from its first to its last event is credited at most once, and
        // exactly once when no switch is missing.
        let mut span: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        for e in &top {
            let s = span.entry(e.cpu).or_insert((e.ts_ns, e.ts_ns));
            s.1 = e.ts_ns;
        }
        let want: u64 = span.values().map(|s| s.1 - s.0).sum();
        let got: u64 = totals.values().map(|t| t.runtime_ns).sum();
        assert!(got <= want, "{}", path.display());
        if switch_chain_breaks(r.events()).is_empty() {
            assert_eq!(got, want, "{}", path.display());
        }
        let switches = top.iter().filter(|e| e.event == "sched_switch").count() as u64;
        assert_eq!(totals.values().map(|t| t.switches).sum::<u64>(), switches);
    }
}

#[test]
fn pinned_scenario_totals() {
    // Two threads spin for 300 ms of wall time on CPU 0 (taskset -c 0), so each runs about
    // half of it; they preempt each other (prev_state=0).
    let (_, r) = report(Path::new(&fixture("scenario-pinned-v7zstd.dat")));
    let totals = r.task_totals().unwrap();
    let spinners: Vec<i32> = r
        .events()
        .filter(|e| e.event == "sched_switch" && e.cpu == 0)
        .filter(|e| {
            e.payload.starts_with("prev_comm=pinned-spin ")
                && e.payload.contains(" prev_state=0 next_comm=pinned-spin ")
        })
        .map(|e| e.pid)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(spinners.len(), 2, "{spinners:?}");
    for pid in spinners {
        let t = totals[&pid];
        assert!(t.switches > 10, "{pid}: {t:?}");
        assert!((100_000_000..250_000_000).contains(&t.runtime_ns), "{pid}: {t:?}");
    }
}

/// The recording machine (a Linux 6.18 VM) never traces a switch out of idle on CPU 1, nor
/// switches out of some threads of its pid 1 (`tokio-rt-worker` pid 70): the fixtures' per-CPU
/// switch chains have gaps (see testdata/traces/README.md). Keep that visible.
#[test]
fn recorded_fixtures_have_switch_chain_gaps() {
    for name in ["scenario-barrier-v7zstd.dat", "hackbench-v7zstd.dat"] {
        let (_, r) = report(Path::new(&fixture(name)));
        let from_idle_on_cpu1 = r
            .events()
            .filter(|e| e.buffer.is_none() && e.event == "sched_switch" && e.cpu == 1)
            .filter(|e| payload_token(&e.payload, "prev_pid") == Some("0"))
            .count();
        assert_eq!(from_idle_on_cpu1, 0, "{name}");
        let breaks = switch_chain_breaks(r.events());
        assert!(breaks.iter().any(|b| b.cpu == 1 && b.expected_prev == 0), "{name}");
    }
}
