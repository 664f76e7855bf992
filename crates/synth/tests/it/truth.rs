//! The model built from a synthetic trace reproduces the simulator's ground truth
//! exactly — per task run time, switches and waiting time — for every workload and
//! every injected kind: an end-to-end check of the writer, the reader, the model and the
//! simulator. Also: same seed, same bytes.

use analysis::stats::{self, Grouping};
use analysis::{TaskFilter, WindowRequest};
use model::{Model, Topology};
use std::path::PathBuf;
use synth::{Difficulty, InjectionKind, SynthOptions, Truth, WorkloadKind};
use tracedat::compress::Codec;
use tracedat::{Endian, FileFormat, Trace};

fn options(workload: WorkloadKind, cpus: u32, injections: Vec<(InjectionKind, u32)>) -> SynthOptions {
    with_difficulty(workload, cpus, injections, Difficulty::Clean)
}

fn with_difficulty(
    workload: WorkloadKind,
    cpus: u32,
    injections: Vec<(InjectionKind, u32)>,
    difficulty: Difficulty,
) -> SynthOptions {
    SynthOptions {
        cpus,
        seconds: 0.2,
        topology: Topology::from_spec("sockets=2,smt=1,layout=contiguous", cpus).unwrap(),
        workload,
        tasks: None,
        seed: 7,
        injections,
        difficulty,
        affinity: true,
        format: FileFormat::v7(Codec::Zstd, Endian::Little, 8, 4096),
    }
}

fn temp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// Generates the trace, builds its model, and compares every task with the truth.
fn check(name: &str, options: &SynthOptions) -> (Truth, Model) {
    let path = temp(name);
    let truth = synth::generate(options, &path, &mut |_| {}).unwrap();
    let trace = Trace::open(&path).unwrap();
    let (model, report) = Model::build(&trace, model::Detail::FULL, &mut |_| {}).unwrap();
    assert!(report.damage.is_empty() && report.unknown_events == 0, "{name}: {report:?}");
    let anomalies: Vec<_> = model.anomalies().iter().collect();
    assert!(anomalies.is_empty(), "{name}: the model met anomalies: {anomalies:?}");
    let (window, _) = WindowRequest::default().resolve(&model).unwrap();
    let rows = stats::compute(&model, window, &TaskFilter::default(), Grouping::Task).rows;
    for task in &truth.tasks {
        let row = rows.iter().find(|r| r.pid.map(|p| p.0) == Some(task.pid));
        let row = row.unwrap_or_else(|| panic!("{name}: pid {} is not in the model", task.pid));
        let ours = (row.runtime_ns, row.switches, row.wait_ns);
        assert_eq!(ours, (task.runtime_ns, task.switches, task.wait_ns), "{name}: pid {} ({})", task.pid, task.comm);
    }
    assert_eq!(rows.iter().filter(|r| r.switches > 0).count(), truth.tasks.len(), "{name}: tasks that ran");
    (truth, model)
}

#[test]
fn every_workload_reproduces_its_truth() {
    for workload in [WorkloadKind::Barrier, WorkloadKind::Hackbench, WorkloadKind::Mixed] {
        let (truth, _) = check(&format!("{}.dat", workload.name()), &options(workload, 8, Vec::new()));
        assert!(truth.events > 10_000, "{}: {} events", workload.name(), truth.events);
    }
}

#[test]
fn every_injected_kind_reproduces_its_truth_and_is_recorded() {
    for kind in InjectionKind::ALL {
        let (truth, _) =
            check(&format!("inject-{}.dat", kind.name()), &options(WorkloadKind::Mixed, 8, vec![(kind, 3)]));
        assert_eq!(truth.injections.len(), 3, "{}: {:?}", kind.name(), truth.injections);
        for injection in &truth.injections {
            assert_eq!((injection.kind, injection.pinned), (kind.kind(), kind == InjectionKind::PinnedGroup));
            let shortest = if kind == InjectionKind::MigrationCascade { 50_000 } else { 1_000_000 };
            assert!(injection.end_ns > injection.start_ns + shortest, "{}: {injection:?}", kind.name());
        }
    }
}

#[test]
fn noise_and_every_size_of_incident_reproduce_their_truth() {
    let all: Vec<(InjectionKind, u32)> = InjectionKind::ALL.iter().map(|&k| (k, 1)).collect();
    let mut options = with_difficulty(WorkloadKind::Mixed, 8, all, Difficulty::Hard);
    options.seconds = 0.6;
    let (truth, _) = check("hard.dat", &options);
    assert!(truth.noise.kthread_wakeups > 1000 && truth.noise.daemon_wakeups > 100, "{:?}", truth.noise);
    assert_eq!(truth.injections.len(), InjectionKind::ALL.len(), "{:?}", truth.injections);
    let trace = Trace::open(temp("hard.dat")).unwrap();
    let affinity = trace.recorded_context().map(|c| c.affinity).unwrap_or_default();
    let pinned = truth.injections.iter().find(|i| i.pinned).expect("a pinned group");
    for pid in &pinned.pids {
        let recorded = affinity.iter().find(|a| a.pid == *pid).expect("the pinned task's affinity is stored");
        assert_eq!(recorded.cpus, pinned.cpus, "pid {pid}");
    }
    assert!(affinity.iter().any(|a| a.cpus == (0..8).collect::<Vec<u32>>()), "others may run anywhere");
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let options =
        options(WorkloadKind::Mixed, 6, vec![(InjectionKind::Overload, 1), (InjectionKind::WakeupPlacement, 2)]);
    synth::generate(&options, &temp("same-1.dat"), &mut |_| {}).unwrap();
    synth::generate(&options, &temp("same-2.dat"), &mut |_| {}).unwrap();
    assert_eq!(std::fs::read(temp("same-1.dat")).unwrap(), std::fs::read(temp("same-2.dat")).unwrap());
}
