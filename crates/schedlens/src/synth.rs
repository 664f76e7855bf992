//! `schedlens synth`: a synthetic trace of a machine of any size running a workload with
//! injected pathologies, and its ground truth.

use crate::{Outcome, usage};
use anyhow::{Context, Result};
use model::Topology;
use std::path::PathBuf;
use synth::{Difficulty, InjectionKind, SynthOptions, WorkloadKind};
use tracedat::compress::Codec;
use tracedat::{Endian, FileFormat};

/// Writes a trace.dat that `trace-cmd report` and every schedlens command read like a
/// recording, with its ground truth as JSON (`--truth`): per task run time, switches and
/// waiting time; per injected incident its kind, time span (trace timestamps, ns), CPUs,
/// pids and lost CPU time. Same options and seed, same bytes.
#[derive(clap::Args)]
pub struct Args {
    /// The trace file to write.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// CPUs of the simulated machine (1 to 4096).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=4096))]
    cpus: u32,
    /// Length of the workload in seconds.
    #[arg(long, default_value_t = 1.0, value_parser = crate::common::seconds)]
    seconds: f64,
    /// `sockets=N,smt=M,layout=interleaved|contiguous` (default: one socket).
    #[arg(long, value_name = "SPEC")]
    topology: Option<String>,
    #[arg(long, value_enum, default_value = "barrier")]
    workload: WorkloadArg,
    /// Tasks of the workload (default: one per CPU).
    #[arg(long)]
    tasks: Option<u32>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// KIND[:COUNT]: work-conservation, wakeup-placement, kthread-preemption, overload,
    /// migration-cascade, pinned-group (barrier and mixed workloads). Repeat for several
    /// kinds.
    #[arg(long, value_name = "KIND[:COUNT]")]
    inject: Vec<String>,
    /// clean: incidents of 5-15 ms; noisy: plus background noise that is not an incident
    /// (kernel threads and daemons waking often, short legitimate waits); hard: noisy,
    /// with incidents of 0.1-100 ms (mixed workload for noisy and hard).
    #[arg(long, value_enum, default_value = "clean")]
    difficulty: DifficultyArg,
    /// Leave the tasks' CPU affinity out of the trace, as trace-cmd would (by default it
    /// is stored like `schedlens record` stores it).
    #[arg(long)]
    no_affinity: bool,
    /// Write the ground truth here, as JSON.
    #[arg(long, value_name = "FILE")]
    truth: Option<PathBuf>,
    /// trace.dat version: 7 (zstd-compressed) or 6.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(6..=7))]
    file_version: u32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum DifficultyArg {
    Clean,
    Noisy,
    Hard,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum WorkloadArg {
    Barrier,
    Hackbench,
    Mixed,
    Pipeline,
    ForkJoin,
    LateBarrier,
}

pub fn run(args: Args) -> Result<Outcome> {
    // Every option is checked before anything is simulated: no input is involved, so a
    // wrong one is a usage error.
    let topology = Topology::from_spec(args.topology.as_deref().unwrap_or("sockets=1,smt=1"), args.cpus)
        .map_err(|error| usage(format!("--topology: {error}")))?;
    let format = match args.file_version {
        6 => FileFormat::v6(Endian::Little, 8, 4096),
        _ => FileFormat::v7(Codec::Zstd, Endian::Little, 8, 4096),
    };
    let workload = match args.workload {
        WorkloadArg::Barrier => WorkloadKind::Barrier,
        WorkloadArg::Hackbench => WorkloadKind::Hackbench,
        WorkloadArg::Mixed => WorkloadKind::Mixed,
        WorkloadArg::Pipeline => WorkloadKind::Pipeline,
        WorkloadArg::ForkJoin => WorkloadKind::ForkJoin,
        WorkloadArg::LateBarrier => WorkloadKind::LateBarrier,
    };
    let injections = args.inject.iter().map(|text| parse_injection(text)).collect::<Result<Vec<_>>>()?;
    let options = SynthOptions {
        cpus: args.cpus,
        seconds: args.seconds,
        topology,
        workload,
        tasks: args.tasks,
        seed: args.seed,
        injections,
        difficulty: match args.difficulty {
            DifficultyArg::Clean => Difficulty::Clean,
            DifficultyArg::Noisy => Difficulty::Noisy,
            DifficultyArg::Hard => Difficulty::Hard,
        },
        affinity: !args.no_affinity,
        format,
    };
    synth::validate(&options).map_err(|error| usage(error.to_string()))?;
    let progress = crate::progress::Progress::percent((args.seconds * 1e9) as u64, "simulating");
    let truth = synth::generate(&options, &args.output, &mut |done| progress.set(done))
        .with_context(|| args.output.display().to_string())?;
    drop(progress);
    eprintln!(
        "schedlens: wrote {} ({} events, {} bytes, {} injected incidents)",
        args.output.display(),
        truth.events,
        truth.file_bytes,
        truth.injections.len()
    );
    if let Some(path) = &args.truth {
        let text = serde_json::to_string_pretty(&truth.to_json())? + "\n";
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(Outcome::Complete)
}

fn parse_injection(text: &str) -> Result<(InjectionKind, u32)> {
    let (name, count) = text.split_once(':').unwrap_or((text, "1"));
    let Some(kind) = InjectionKind::from_name(name) else {
        let known: Vec<&str> = InjectionKind::ALL.iter().map(|k| k.name()).collect();
        return Err(usage(format!("--inject {text}: unknown kind {name:?} (known: {})", known.join(", "))));
    };
    let count: u32 = count.parse().map_err(|_| usage(format!("--inject {text}: the count is not a number")))?;
    Ok((kind, count))
}
