//! The OTF2 archive read back by `otf2-print` (Debian's otf2-tools): per location (CPU)
//! as many enters and leaves as the model has run segments of tasks there, one message
//! pair per migration, and the counters. Needs the `otf2` feature (and skips with a
//! printed reason when `otf2-print` is missing).

#![cfg(feature = "otf2")]

use export::{Input, Scope};
use model::{Model, TaskId};
use refcheck::fixture;
use std::collections::HashMap;
use std::process::Command;
use tracedat::Trace;

/// Per location, how many events of each kind `otf2-print` shows.
fn printed_counts(archive: &str) -> Option<HashMap<(String, u64), u64>> {
    let out = match Command::new("otf2-print").arg(archive).output() {
        Ok(out) => out,
        Err(_) => {
            println!("SKIPPED: otf2-print is not installed (apt-get install otf2-tools)");
            return None;
        }
    };
    assert!(out.status.success(), "otf2-print failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut counts = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut words = line.split_whitespace();
        let (Some(kind), Some(location)) = (words.next(), words.next()) else { continue };
        if let Ok(location) = location.parse::<u64>() {
            *counts.entry((kind.to_string(), location)).or_default() += 1;
        }
    }
    Some(counts)
}

#[test]
fn otf2_print_reads_back_the_model() {
    for name in ["hackbench-v7zstd.dat", "scenario-pinned-v7zstd.dat", "lost-events-v7zstd.dat"] {
        let trace = inputs::Input::TraceDat(Trace::open(fixture(name)).unwrap());
        let (model, report) = Model::build(&trace, model::Detail::FULL, &mut |_| {}).unwrap();
        let scope = Scope::everything(&model);
        let (min_lost, affinity) = (analysis::check::DEFAULT_MIN_LOST, None);
        let input = Input { trace: &trace, model: &model, buffer: &report.buffer, scope: &scope, min_lost, affinity };
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("otf2-{name}"));
        let summary = export::otf2::write(&input, &dir, &mut |_, _| {}).unwrap();
        let Some(counts) = printed_counts(&dir.join("traces.otf2").display().to_string()) else { return };
        let count = |kind: &str, cpu: usize| counts.get(&(kind.to_string(), cpu as u64)).copied().unwrap_or(0);
        let mut total_segments = 0;
        for timeline in model.cpus() {
            let cpu = timeline.cpu().index();
            let segments = timeline.segments().iter().filter(|s| s.task != TaskId::IDLE).count() as u64;
            total_segments += segments;
            assert_eq!(count("ENTER", cpu), segments, "{name}: enters on CPU {cpu}");
            assert_eq!(count("LEAVE", cpu), segments, "{name}: leaves on CPU {cpu}");
            assert!(count("METRIC", cpu) > 0, "{name}: counters on CPU {cpu}");
        }
        let sends: u64 = (0..model.cpus().len()).map(|cpu| count("MPI_SEND", cpu)).sum();
        let receives: u64 = (0..model.cpus().len()).map(|cpu| count("MPI_RECV", cpu)).sum();
        assert_eq!(sends, model.migrations().len() as u64, "{name}: one message per migration");
        assert_eq!(receives, sends);
        assert_eq!(summary.enters, total_segments);
        println!(
            "{name}: otf2-print shows {total_segments} enter/leave pairs, {sends} migration messages on {} CPUs",
            model.cpus().len()
        );
    }
}
