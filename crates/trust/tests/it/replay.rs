//! Every committed input of the model fuzzer — the seeds from real traces, the corpus
//! entries that reached new coverage, the reproducers of failures it found — runs through
//! the whole pipeline as a plain test, so CI checks them even where the fuzzer cannot
//! run. A panic fails the test unless it is a known failure; a listed reproducer that no
//! longer fails says its entry can go. The reader fuzzer's seeds and regressions are read
//! here too, as its target reads them.

use std::path::{Path, PathBuf};
use trust::known::{KNOWN_FAILURES, catch};
use trust::{Outcome, Script, run_script};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut inputs = Vec::new();
    for dir in ["fuzz/seeds/sched_model", "fuzz/regressions/sched_model"] {
        for entry in std::fs::read_dir(repository().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
            inputs.push((name, std::fs::read(&path).unwrap()));
        }
    }
    inputs.sort();
    inputs
}

#[test]
fn every_committed_input_runs_through_the_pipeline() {
    let mut failures = Vec::new();
    let mut analysed = 0;
    let inputs = inputs();
    for (name, bytes) in &inputs {
        let script = Script::from_bytes(bytes);
        let listed = KNOWN_FAILURES.iter().find(|k| k.reproducers.contains(&name.as_str()));
        match (catch(|| run_script(&script)), listed) {
            (Ok(outcome), None) => analysed += usize::from(matches!(outcome, Outcome::Analysed(_))),
            (Ok(_), Some(known)) => failures.push(format!(
                "{name} no longer fails as known failure {:?} says: remove it from KNOWN_FAILURES \
                 (crates/trust/src/known.rs) and keep the input as a regression test",
                known.name
            )),
            (Err(panic), _) if panic.known().is_some() => {
                eprintln!("{name}: known failure {:?}: {panic}", panic.known().map(|k| k.name).unwrap_or_default());
            }
            (Err(panic), _) => failures.push(format!("{name}: {panic}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(analysed * 2 >= inputs.len(), "only {analysed} of {} inputs got through to the analyses", inputs.len());
}

#[test]
fn known_failures_have_reproducers_and_diagnoses() {
    for known in KNOWN_FAILURES {
        assert!(!known.reproducers.is_empty() && !known.diagnosis.is_empty(), "{known:?}");
        for path in known.reproducers {
            assert!(repository().join(path).is_file(), "{}: reproducer {path} is missing", known.name);
        }
    }
}

/// The reader fuzzer's committed inputs: its seeds, and the inputs it once stopped on.
#[test]
fn every_committed_reader_input_reads_to_the_end() {
    let mut read = 0;
    for dir in ["fuzz/seeds/read_trace", "fuzz/regressions/read_trace"] {
        for entry in std::fs::read_dir(repository().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            match catch(|| trust::reader::read_everything(&bytes)) {
                Ok(outcome) => read += usize::from(outcome.is_some()),
                Err(panic) => panic!("{}: {panic}", path.display()),
            }
        }
    }
    assert!(read >= 20, "only {read} inputs were readable traces");
}

/// The perf.data fuzzer's committed inputs (its seeds: see
/// testdata/programs/perf-fuzz-seeds.py).
#[test]
fn every_committed_perf_reader_input_reads_to_the_end() {
    let mut read = 0;
    for entry in std::fs::read_dir(repository().join("fuzz/seeds/read_perf")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        match catch(|| trust::reader::read_perf_everything(&bytes)) {
            Ok(Some((events, damage))) => {
                assert_eq!((events, damage), (40, 0), "{}", path.display());
                read += 1;
            }
            Ok(None) => panic!("{}: not readable", path.display()),
            Err(panic) => panic!("{}: {panic}", path.display()),
        }
    }
    assert_eq!(read, 2, "the pipe-mode and file-mode seeds");
}

/// The Perfetto fuzzer's committed input (testdata/programs/perfetto-fuzz-seeds.py,
/// written with Perfetto's own protobuf classes): every event it holds is read, none is
/// damage.
#[test]
fn every_committed_perfetto_reader_input_reads_to_the_end() {
    let mut read = 0;
    for entry in std::fs::read_dir(repository().join("fuzz/seeds/read_perfetto")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        match catch(|| trust::reader::read_perfetto_everything(&bytes)) {
            Ok(Some((events, damage))) => {
                assert_eq!((events, damage), (20, 0), "{}", path.display());
                read += 1;
            }
            Ok(None) => panic!("{}: not readable", path.display()),
            Err(panic) => panic!("{}: {panic}", path.display()),
        }
    }
    assert_eq!(read, 1, "the seed");
}
