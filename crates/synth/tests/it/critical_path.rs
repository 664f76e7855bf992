//! The critical path against the chain workloads' ground truth: its scheduler share
//! equals the truth within 1% of the wall time, the delays injected on the path are on
//! it and those injected off it are not.

use analysis::check::Affinity;
use analysis::critical_path::{CriticalPath, Followed, Target, critical_path};
use analysis::idle::IdleIndex;
use analysis::{TaskFilter, Window};
use model::{Model, Pid, Topology};
use std::path::PathBuf;
use synth::{Difficulty, SynthOptions, Truth, WorkloadKind};
use tracedat::compress::Codec;
use tracedat::{Endian, FileFormat, Trace};

fn generate(workload: WorkloadKind) -> (Truth, Model, Option<Affinity>) {
    let options = SynthOptions {
        cpus: 8,
        seconds: 0.1,
        topology: Topology::from_spec("sockets=2,smt=1,layout=contiguous", 8).unwrap(),
        workload,
        tasks: None,
        seed: 11,
        injections: Vec::new(),
        difficulty: Difficulty::Clean,
        affinity: true,
        format: FileFormat::v7(Codec::Zstd, Endian::Little, 8, 4096),
    };
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("path-{}.dat", workload.name()));
    let truth = synth::generate(&options, &path, &mut |_| {}).unwrap();
    let trace = Trace::open(&path).unwrap();
    let (model, _) = Model::build(&trace, model::Detail::FULL, &mut |_| {}).unwrap();
    assert!(model.anomalies().is_empty(), "{:?}", model.anomalies().iter().collect::<Vec<_>>());
    let affinity = trace.recorded_context().and_then(|c| Affinity::recorded(&c));
    (truth, model, affinity)
}

/// The shell's critical path: from the trace's start to the shell's exit, its process tree.
fn shell_path(model: &Model, affinity: Option<&Affinity>) -> CriticalPath {
    let shell = model.tasks().by_pid(Pid(1000)).unwrap();
    assert_eq!(model.first_exec(), Some(shell), "the shell execs the workload first");
    let exit = model.tasks().get(shell).exit.unwrap();
    let followed = Followed::Tasks(TaskFilter { descendants_of: Some(shell), ..TaskFilter::default() });
    let target = Target { end_task: shell, window: Window::new(model.start(), exit), followed };
    let index = IdleIndex::new(model);
    critical_path(model, &index, &target, affinity, 5)
}

#[test]
fn the_scheduler_share_on_the_path_is_the_truth() {
    for workload in [WorkloadKind::Pipeline, WorkloadKind::ForkJoin, WorkloadKind::LateBarrier] {
        let name = workload.name();
        let (truth, model, affinity) = generate(workload);
        let path = shell_path(&model, affinity.as_ref());
        assert!(path.recorded_affinity, "{name}");
        // Inferred pinning finds none either.
        assert_eq!(shell_path(&model, None).breakdown, path.breakdown, "{name}");
        let wall = path.window.len().0;
        let truth_path = truth.critical_path.as_ref().unwrap();
        let b = path.breakdown;
        eprintln!(
            "{name}: wall {wall} ns, scheduler {} ns (truth {} ns), running {} ns, other {b:?}, {} hops, {} delays",
            b.scheduler_ns,
            truth_path.scheduler_ns,
            b.running_ns,
            path.hops.len(),
            truth_path.delays.len()
        );
        let difference = b.scheduler_ns.abs_diff(truth_path.scheduler_ns);
        assert!(
            difference * 100 <= wall,
            "{name}: scheduler {} ns, truth {} ns",
            b.scheduler_ns,
            truth_path.scheduler_ns
        );
        assert_eq!(b.unknown_ns + b.other_task_ns + b.pinning_ns, 0, "{name}: {b:?}");
        let on_path = |pid: i32, start: u64, end: u64| {
            path.hops.iter().any(|h| model.tasks().get(h.task).pid.0 == pid && h.start.0 < end && start < h.end.0)
        };
        let (on, off): (Vec<_>, Vec<_>) = truth_path.delays.iter().partition(|d| d.on_path);
        assert!(on.len() >= 5, "{name}: {} delays on the path", on.len());
        for delay in &on {
            assert!(on_path(delay.pid, delay.start_ns, delay.end_ns), "{name}: {delay:?} is on the path");
        }
        if workload != WorkloadKind::Pipeline {
            assert!(off.len() >= 5, "{name}: {} delays off the path", off.len());
        }
        for delay in &off {
            assert!(!on_path(delay.pid, delay.start_ns, delay.end_ns), "{name}: {delay:?} is off the path");
        }
    }
}
