//! Many traces into one Parquet dataset: directories and glob patterns of traces of every
//! format, a trace that fails among good ones (exit 3), partition names of runs with the
//! same file name, re-exports, exports into one dataset at once, `_schedlens.json`; and
//! every query of docs/export.md answered over 200 runs by DuckDB and by Spark, the same
//! (`scripts/fleet-demo.sh`, skipped with its reason where pyspark or Java is missing).

use crate::common::{fresh_dir, schedlens};
use refcheck::fixture;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn export(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlens")).arg("export").args(args).output().expect("run schedlens")
}

fn manifest(dataset: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dataset.join("_schedlens.json")).unwrap()).unwrap()
}

/// Partition name by source path.
fn names(dataset: &Path) -> Vec<(String, String)> {
    let manifest = manifest(dataset);
    let traces = manifest["traces"].as_array().unwrap();
    traces
        .iter()
        .map(|t| (t["source"].as_str().unwrap().to_string(), t["trace"].as_str().unwrap().to_string()))
        .collect()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn copy(from: &str, to: &Path) -> PathBuf {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
    to.canonicalize().unwrap()
}

#[test]
fn a_directory_of_traces_exports_into_one_dataset_and_a_bad_one_is_reported() {
    let dir = fresh_dir("fleet/inputs");
    let runs = dir.join("runs");
    // Two runs of one name in two folders, a perf.data, a Perfetto file, a broken trace
    // and a file that is no trace.
    let a = copy(&fixture("hackbench-v6.dat"), &runs.join("a/run.dat"));
    let b = copy(&fixture("scenario-pinned-v7zstd.dat"), &runs.join("b/run.dat"));
    let perf =
        copy(&format!("{}/../../testdata/perf/sched-pipe.data", env!("CARGO_MANIFEST_DIR")), &runs.join("perf.data"));
    let pftrace = runs.join("c/pinned.pftrace");
    std::fs::create_dir_all(pftrace.parent().unwrap()).unwrap();
    schedlens(&[
        "export",
        &fixture("scenario-pinned-v7zstd.dat"),
        "--format",
        "perfetto",
        "-o",
        pftrace.to_str().unwrap(),
    ]);
    let pftrace = pftrace.canonicalize().unwrap();
    let mut broken = std::fs::read(fixture("hackbench-v6.dat")).unwrap();
    broken.truncate(600);
    std::fs::write(runs.join("b/broken.dat"), broken).unwrap();
    std::fs::write(runs.join("notes.txt"), "not a trace\n").unwrap();

    let dataset = dir.join("dataset");
    let out = export(&[runs.to_str().unwrap(), "--format", "parquet", "-o", dataset.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "one trace failed, the others were exported:\n{stderr}");
    assert!(stderr.contains("broken.dat") && !stderr.contains("notes.txt"), "{stderr}");
    assert!(stdout.contains("4 of 5 traces exported; _schedlens.json lists 4 traces"), "{stdout}");

    let named = names(&dataset);
    let sources: Vec<&str> = named.iter().map(|(source, _)| source.as_str()).collect();
    for path in [&a, &b, &perf, &pftrace] {
        assert!(sources.contains(&path.to_str().unwrap()), "{} listed in {sources:?}", path.display());
    }
    let name_of = |path: &Path| named.iter().find(|(s, _)| s == path.to_str().unwrap()).unwrap().1.clone();
    let (name_a, name_b) = (name_of(&a), name_of(&b));
    assert!(name_a.starts_with("run-") && name_b.starts_with("run-") && name_a != name_b, "{name_a} {name_b}");
    assert!(name_of(&perf).starts_with("perf-") && name_of(&pftrace).starts_with("pinned-"));
    let partitions: Vec<String> = named.iter().map(|(_, name)| format!("trace={name}")).collect();
    let mut sorted = partitions.clone();
    sorted.sort();
    assert_eq!(entries(&dataset.join("segments")), sorted);
    assert!(entries(&dataset).iter().all(|e| !e.starts_with(".staging")), "no staging left: {:?}", entries(&dataset));
    let listed = manifest(&dataset);
    let perf_entry = listed["traces"].as_array().unwrap().iter().find(|t| t["trace"] == name_of(&perf)).unwrap();
    assert_eq!(perf_entry["format"], "perf.data");
    assert!(
        perf_entry["events"].as_u64().unwrap() > 0 && perf_entry["end_ns"].as_u64() > perf_entry["start_ns"].as_u64()
    );

    // Again, one of them by a glob pattern: the same partition is replaced, nothing added.
    let before = std::fs::read(dataset.join(format!("segments/trace={name_a}/part.parquet"))).unwrap();
    let pattern = runs.join("a/*.dat");
    let out = export(&[pattern.to_str().unwrap(), "--format", "parquet", "-o", dataset.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(names(&dataset), named, "the same traces, under the same names");
    assert_eq!(std::fs::read(dataset.join(format!("segments/trace={name_a}/part.parquet"))).unwrap(), before);
    assert_eq!(entries(&dataset.join("segments")), sorted);

    // Every trace failing is a failure.
    let out =
        export(&[runs.join("b/broken.dat").to_str().unwrap(), "--format", "parquet", "-o", dataset.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(names(&dataset), named, "a failed export leaves the dataset as it was");
    let pattern = runs.join("*.nothing");
    let out = export(&[pattern.to_str().unwrap(), "--format", "parquet", "-o", dataset.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("matches no file"));
}

#[test]
fn exports_into_one_dataset_at_once_keep_every_trace() {
    let dir = fresh_dir("fleet/concurrent");
    let dataset = dir.join("dataset");
    let processes = 4;
    let traces_each = 3;
    for p in 0..processes {
        for t in 0..traces_each {
            copy(&fixture("scenario-pinned-v7zstd.dat"), &dir.join(format!("host-{p}/run-{t}.dat")));
        }
    }
    // Started together, waited for together.
    let children: Vec<_> = (0..processes)
        .map(|p| {
            let traces: Vec<String> =
                (0..traces_each).map(|t| dir.join(format!("host-{p}/run-{t}.dat")).display().to_string()).collect();
            Command::new(env!("CARGO_BIN_EXE_schedlens"))
                .arg("export")
                .args(&traces)
                .args(["--format", "parquet", "-o", dataset.to_str().unwrap()])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let named = names(&dataset);
    assert_eq!(named.len(), processes * traces_each, "{named:?}");
    assert_eq!(entries(&dataset.join("segments")).len(), processes * traces_each);
    assert_eq!(entries(&dataset.join("events/sched_switch")).len(), processes * traces_each);
    assert!(entries(&dataset).iter().all(|e| !e.starts_with(".staging")), "{:?}", entries(&dataset));
}

#[test]
fn a_reader_never_sees_half_a_partition_while_it_is_exported_again() {
    let dir = fresh_dir("fleet/atomic");
    let trace = copy(&fixture("hackbench-v6.dat"), &dir.join("run.dat"));
    let dataset = dir.join("dataset");
    let args = [trace.to_str().unwrap(), "--format", "parquet", "-o", dataset.to_str().unwrap()];
    assert!(export(&args).status.success());
    let name = &names(&dataset)[0].1;
    let file = dataset.join(format!("segments/trace={name}/part.parquet"));
    let whole = std::fs::read(&file).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    let reads = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut reads = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                // Opened by path each time, as a query engine does.
                let bytes = std::fs::read(&file).expect("the partition's file is always there");
                assert!(bytes == whole, "a read of {} bytes is not the whole file", bytes.len());
                reads += 1;
            }
            reads
        });
        for _ in 0..3 {
            assert!(export(&args).status.success());
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        reader.join().unwrap()
    });
    assert!(reads > 0);
}

/// Whether `python3` can import `module`.
fn python_has(module: &str) -> bool {
    Command::new("python3").args(["-c", &format!("import {module}")]).output().is_ok_and(|o| o.status.success())
}

/// The number of queries docs/export.md gives for both engines.
fn documented_queries() -> usize {
    let docs = std::fs::read_to_string(format!("{}/../../docs/export.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let block = docs.split("<!-- fleet: queries -->").nth(1).expect("the queries' marker").split("```").nth(1).unwrap();
    block.split(';').filter(|statement| statement.lines().any(|l| !l.trim().is_empty() && !l.starts_with("--"))).count()
}

#[test]
fn every_documented_query_gives_the_same_answers_in_duckdb_and_spark_over_200_runs() {
    if !python_has("duckdb") {
        println!("SKIPPED every_documented_query_...: python3 cannot import duckdb (pip install duckdb)");
        return;
    }
    let spark_missing = if !python_has("pyspark") {
        Some("python3 cannot import pyspark (pip install pyspark)")
    } else if Command::new("java").arg("-version").output().is_err() {
        Some("no java on PATH (Spark needs Java 17 or later)")
    } else {
        None
    };
    if let Some(why) = spark_missing {
        println!("SKIPPED the Spark half of every_documented_query_...: {why}; DuckDB alone answers");
    }
    let dir = fresh_dir("fleet/demo");
    let script = format!("{}/../../scripts/fleet-demo.sh", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(script)
        .arg("200")
        .env("SCHEDLENS", env!("CARGO_BIN_EXE_schedlens"))
        .env("FLEET_DIR", &dir)
        // Small runs: the test is about the answers, docs/performance.md about the sizes.
        .env("FLEET_SECONDS", "0.05")
        .env("FLEET_CPUS", "4")
        .env("FLEET_ENGINES", if spark_missing.is_some() { "duckdb" } else { "duckdb,spark" })
        // The quick JIT only: half Spark's time on small data.
        .env("SPARK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stderr}");
    assert!(out.status.success(), "fleet-demo.sh failed:\n{stdout}\n{stderr}");
    assert_eq!(manifest(&dir.join("dataset"))["traces"].as_array().unwrap().len(), 200);
    let queries = documented_queries();
    let engines = if spark_missing.is_some() { 1 } else { 2 };
    let answered: Vec<&str> = stdout.lines().filter(|l| l.starts_with("-- ")).collect();
    assert_eq!(answered.len(), queries * engines, "{stdout}");
    assert!(answered.iter().all(|l| !l.ends_with("(0 rows)")), "every query has an answer:\n{stdout}");
    if spark_missing.is_none() {
        let agreed = format!("== DuckDB and Spark give the same answers to all {queries} queries");
        assert!(stdout.contains(&agreed), "{stdout}");
    }
}
