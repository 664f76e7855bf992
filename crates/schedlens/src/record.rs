//! `schedlens record`: the command line of the `record` crate's recorder, and its report
//! (events, CPUs, size, how the command ended, lost events, the recorder's CPU time).

use crate::{Outcome, usage};
use ::record::{RecordOptions, Recording, Workload};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Duration;
use tracedat::FileVersion;
use tracedat::compress::Codec;

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  schedlens record -o hb.dat --sleep 1 -- hackbench -g 4 -l 1000\n  \
                        schedlens record --duration 5 -e sched -e irq")]
pub struct Args {
    /// The trace.dat file to write.
    #[arg(short, long, default_value = "trace.dat")]
    output: PathBuf,
    /// Run `sleep S` before the command (`--after-sleep` later starts analyses after it).
    #[arg(long, value_name = "S", value_parser = seconds)]
    sleep: Option<f64>,
    /// An event to record: SYSTEM:EVENT, SYSTEM or EVENT; repeatable [default: every sched
    /// event but sched_stat_runtime].
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    events: Vec<String>,
    /// Ring-buffer size per CPU, in KiB (raise it when events are lost).
    #[arg(long, value_name = "N", default_value_t = ::record::DEFAULT_BUFFER_KB)]
    buffer_kb: u32,
    /// CPUs to record, e.g. 0,2-3 [default: every online CPU].
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// Without a command, record the whole system for S seconds (without either, until Ctrl-C).
    #[arg(long, value_name = "S", conflicts_with_all = ["command", "sleep"], value_parser = seconds)]
    duration: Option<f64>,
    /// Trace clock to record with (see trace_clock in tracefs) [default: the current one].
    #[arg(long, value_name = "NAME")]
    clock: Option<String>,
    /// trace.dat version: 7 (compressed sections) or 6 (read by older trace-cmd).
    #[arg(long, value_name = "N", default_value_t = 7, value_parser = clap::value_parser!(u32).range(6..=7))]
    file_version: u32,
    /// Compression of version 7 files [default: zstd].
    #[arg(long, value_name = "CODEC", value_parser = ["zstd", "zlib", "none"])]
    compression: Option<String>,
    /// The command to record, with its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(args: Args) -> Result<Outcome> {
    let options = options(&args)?;
    let recording = ::record::record(&options).with_context(|| format!("recording {}", args.output.display()))?;
    report(&args, &recording);
    Ok(Outcome::Complete)
}

fn options(args: &Args) -> Result<RecordOptions> {
    let version = match args.file_version {
        6 if args.compression.is_some() => return Err(usage("--compression applies to version 7 files only")),
        6 => FileVersion::V6,
        _ => FileVersion::V7 { compression: codec(args.compression.as_deref()) },
    };
    let workload = if args.command.is_empty() {
        Workload::System(args.duration.map(Duration::from_secs_f64))
    } else {
        Workload::Command { args: args.command.clone(), sleep: args.sleep, log: None }
    };
    Ok(RecordOptions {
        output: args.output.clone(),
        version,
        events: args.events.clone(),
        buffer_kb: args.buffer_kb,
        cpus: args.cpus.clone(),
        clock: args.clock.clone(),
        workload,
    })
}

fn codec(name: Option<&str>) -> Codec {
    match name {
        Some("zlib") => Codec::Zlib,
        Some("none") => Codec::None,
        _ => Codec::Zstd,
    }
}

/// Seconds that make a `Duration` (for `value_parser`).
fn seconds(text: &str) -> Result<f64, String> {
    let value = crate::common::seconds(text)?;
    Duration::try_from_secs_f64(value).map(|_| value).map_err(|_| format!("{text:?} seconds is too long"))
}

/// Says what killed instances had left changed in tracefs and was put back.
pub fn tell_recovered(recovered: &[restore::Recovered]) {
    for r in recovered {
        eprintln!(
            "schedlens: note: schedlens pid {} was killed while tracing; its {} tracefs changes were reset{}",
            r.pid,
            r.changes,
            match r.errors.first() {
                None => String::new(),
                Some(error) => format!(" except {} ({error})", r.errors.len()),
            }
        );
    }
}

fn report(args: &Args, r: &Recording) {
    tell_recovered(&r.recovered);
    let wall = r.elapsed.as_secs_f64();
    eprintln!(
        "schedlens: recorded {} event types on {} CPUs for {wall:.3} s: {} pages, {} ({} bytes)",
        r.events.len(),
        r.cpus.len(),
        r.pages,
        args.output.display(),
        r.file_size
    );
    if let Some(exit) = r.ended.exit {
        let verb = if exit.success() { "note" } else { "warning" };
        eprintln!("schedlens: {verb}: the command ended with {exit}");
    }
    if let Some(signal) = r.ended.signal {
        eprintln!("schedlens: note: stopped early by signal {signal}");
    }
    let cpu = r.cpu_time.as_secs_f64();
    eprintln!("schedlens: recorder CPU time {cpu:.3} s ({:.1}% of one CPU)", 100.0 * cpu / wall.max(1e-9));
    if r.losses.is_none() {
        eprintln!("schedlens: lost events: none");
        return;
    }
    let unknown = match r.losses.unknown {
        0 => String::new(),
        n => format!(" and {n} losses of unknown size"),
    };
    eprintln!(
        "schedlens: warning: the kernel lost {} events{unknown}: raise --buffer-kb (now {} KiB per CPU)",
        r.losses.events, args.buffer_kb
    );
}
