//! Synthetic scheduler traces with known ground truth, from a small discrete-event
//! simulation of an N-CPU machine (`machine`) running a workload (`workload`) with
//! injected pathologies, written as a real trace.dat with a current kernel's event
//! formats through tracedat's streaming writer (`output`). The same options and seed
//! give the same bytes. The truth (`truth`) is booked while simulating, with the same
//! definitions the model uses, so a model built from the file must reproduce it exactly.
//! The truth says which stretches are incidents (of `check`'s kinds, pinned or not) and
//! what background noise was added that is not one.

mod machine;
mod output;
mod rng;
mod truth;
mod workload;

pub use analysis::check::Kind;
pub use truth::{Delay, Injection, Noise, PathTruth, TaskTruth, Truth};

use model::Topology;
use std::path::Path;
use tracedat::FileFormat;

/// Why a trace could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("cannot write the trace: {0}")]
    Write(#[from] tracedat::WriteError),
    #[error("cannot build an event: {0}")]
    Payload(#[from] tracedat::PayloadError),
    #[error("bad event format: {0}")]
    Format(String),
    #[error("{0}")]
    Options(String),
}

/// What the simulated machine runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    Barrier,
    Hackbench,
    Mixed,
    Pipeline,
    ForkJoin,
    LateBarrier,
}

impl WorkloadKind {
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Barrier => "barrier",
            WorkloadKind::Hackbench => "hackbench",
            WorkloadKind::Mixed => "mixed",
            WorkloadKind::Pipeline => "pipeline",
            WorkloadKind::ForkJoin => "fork-join",
            WorkloadKind::LateBarrier => "late-barrier",
        }
    }

    /// A workload with dependency chains, whose truth records its critical path.
    pub fn is_chain(self) -> bool {
        matches!(self, WorkloadKind::Pipeline | WorkloadKind::ForkJoin | WorkloadKind::LateBarrier)
    }
}

/// What can be injected (see the `workload::inject` module): an incident of each kind
/// `check` reports, or a group of tasks pinned to fewer CPUs than it has tasks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InjectionKind {
    WorkConservation,
    WakeupPlacement,
    KthreadPreemption,
    Overload,
    MigrationCascade,
    PinnedGroup,
}

impl InjectionKind {
    pub const ALL: [InjectionKind; 6] = [
        InjectionKind::WorkConservation,
        InjectionKind::WakeupPlacement,
        InjectionKind::KthreadPreemption,
        InjectionKind::Overload,
        InjectionKind::MigrationCascade,
        InjectionKind::PinnedGroup,
    ];

    /// The kind of incident it makes (a pinned group's waste is work-conservation,
    /// marked pinned in the truth).
    pub fn kind(self) -> Kind {
        match self {
            InjectionKind::WorkConservation | InjectionKind::PinnedGroup => Kind::WorkConservation,
            InjectionKind::WakeupPlacement => Kind::WakeupPlacement,
            InjectionKind::KthreadPreemption => Kind::KthreadPreemption,
            InjectionKind::Overload => Kind::Overload,
            InjectionKind::MigrationCascade => Kind::MigrationCascade,
        }
    }

    /// The name in `--inject`: the incident kind's name, or `pinned-group`.
    pub fn name(self) -> &'static str {
        match self {
            InjectionKind::PinnedGroup => "pinned-group",
            other => other.kind().name(),
        }
    }

    pub fn from_name(name: &str) -> Option<InjectionKind> {
        InjectionKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// How hard the trace makes `check`'s job.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Difficulty {
    /// Incidents of 5–15 ms, one task each; kernel threads wake every 0.5–4 ms per CPU.
    Clean,
    /// Clean, plus background noise that is not an incident: kernel threads waking every
    /// 0.2–1.5 ms per CPU, and pairs of daemons whose synchronous wakeups make short
    /// legitimate waits behind a busy CPU while others idle.
    Noisy,
    /// Noisy, with incidents of every size: 0.1–100 ms (bursts of several tasks when
    /// short), pinned groups of 2–100 ms, overloads of 5–100 ms.
    Hard,
}

impl Difficulty {
    pub const ALL: [Difficulty; 3] = [Difficulty::Clean, Difficulty::Noisy, Difficulty::Hard];

    pub fn name(self) -> &'static str {
        match self {
            Difficulty::Clean => "clean",
            Difficulty::Noisy => "noisy",
            Difficulty::Hard => "hard",
        }
    }

    pub fn from_name(name: &str) -> Option<Difficulty> {
        Difficulty::ALL.into_iter().find(|d| d.name() == name)
    }
}

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SynthOptions {
    pub cpus: u32,
    pub seconds: f64,
    pub topology: Topology,
    pub workload: WorkloadKind,
    /// Tasks of the workload (default: one per CPU; hackbench: 20 per group).
    pub tasks: Option<u32>,
    pub seed: u64,
    pub injections: Vec<(InjectionKind, u32)>,
    pub difficulty: Difficulty,
    /// Store the CPU affinity of the workload's tasks in the trace, as `schedlens record`
    /// does (trace-cmd does not).
    pub affinity: bool,
    pub format: FileFormat,
}

/// The trace's first timestamp (1000 s of uptime).
const START_NS: u64 = 1_000_000_000_000;

/// Simulates and writes the trace to `path`; returns its ground truth. `progress` is
/// called now and then with the nanoseconds of the workload simulated so far.
pub fn generate(options: &SynthOptions, path: &Path, progress: &mut dyn FnMut(u64)) -> Result<Truth, SynthError> {
    validate(options)?;
    let sockets: Vec<u32> =
        (0..options.cpus).map(|cpu| options.topology.place(model::Cpu(cpu)).map_or(0, |place| place.socket)).collect();
    let spill_dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let formats = output::formats(options.format.long_size)?;
    let out = output::TraceOut::new(options.format, &formats, options.cpus, spill_dir)?;
    let machine = machine::Machine::new(sockets, START_NS, out);
    let tasks = options.tasks.unwrap_or(options.cpus);
    let duration_ns = (options.seconds * 1e9) as u64;
    let plan = workload::Plan::new(&options.injections, options.difficulty, duration_ns);
    let run = workload::Run::new(machine, options.seed, options.workload, tasks, duration_ns, plan);
    let (machine, injections, noise, command, critical_path) = run.run(progress)?;
    let affinity = if options.affinity { machine.affinity(&command) } else { Vec::new() };
    let (tasks, events, file_bytes) = machine.finish(path, &affinity)?;
    Ok(Truth {
        seed: options.seed,
        cpus: options.cpus,
        seconds: options.seconds,
        workload: options.workload.name(),
        difficulty: options.difficulty.name(),
        events,
        file_bytes,
        tasks: tasks.iter().filter(|t| t.truth.switches > 0).map(TaskTruth::of).collect(),
        injections,
        noise,
        critical_path,
    })
}

/// Checks the options ([`generate`] does it first too): sizes in range, injections the
/// workload and machine can hold.
pub fn validate(options: &SynthOptions) -> Result<(), SynthError> {
    let fail = |message: String| Err(SynthError::Options(message));
    if !(1..=4096).contains(&options.cpus) {
        return fail(format!("--cpus {} is out of range (1 to 4096)", options.cpus));
    }
    if !(options.seconds > 0.0 && options.seconds <= 3600.0) {
        return fail(format!("--seconds {} is out of range (above 0, at most 3600)", options.seconds));
    }
    let tasks = options.tasks.unwrap_or(options.cpus);
    if !(1..=100_000).contains(&tasks) {
        return fail(format!("--tasks {tasks} is out of range (1 to 100000)"));
    }
    if !options.injections.is_empty() && !matches!(options.workload, WorkloadKind::Barrier | WorkloadKind::Mixed) {
        return fail("injections need the barrier or mixed workload".into());
    }
    if options.workload.is_chain() && !(3..=options.cpus).contains(&tasks) {
        return fail(format!(
            "the {} workload needs 3 tasks or more, and no more tasks than CPUs",
            options.workload.name()
        ));
    }
    if !options.injections.is_empty() && (tasks < 3 || options.cpus < 2) {
        return fail("injections need at least 3 tasks and 2 CPUs".into());
    }
    let noisy = options.difficulty != Difficulty::Clean;
    if noisy && options.workload != WorkloadKind::Mixed {
        return fail(format!("--difficulty {} needs the mixed workload", options.difficulty.name()));
    }
    let cascades = options.injections.iter().any(|&(kind, _)| kind == InjectionKind::MigrationCascade);
    if cascades && (tasks < options.cpus || options.cpus < 4 || options.topology.socket_count() < 2) {
        return fail("migration-cascade needs 4 or more CPUs on 2 or more sockets, and a task per CPU".into());
    }
    Ok(())
}
