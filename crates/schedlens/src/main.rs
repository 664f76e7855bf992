//! The `schedlens` command line: thin glue that parses arguments, calls the library
//! crates, shows progress on a terminal and turns errors into messages and exit codes.
//!
//! Exit codes: 0 success; 1 failure (unreadable input, options this input cannot
//! satisfy, I/O error); 2 bad usage (a value that is not a number or out of range,
//! options that contradict each other: wrong whatever the input); 3 finished, but the
//! input was damaged and the result is partial (warnings say where).

mod check;
mod common;
mod compare;
mod critical_path;
mod dump;
mod export;
mod figure;
mod graph;
mod info;
mod latency;
mod perf_text;
mod progress;
mod record;
mod report;
mod running_waiting;
mod runs;
mod spill;
mod stats;
mod synth;
mod topology;
mod view;
mod watch;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// See what the Linux scheduler did to a program.
#[derive(Parser)]
#[command(
    name = "schedlens",
    version,
    about,
    max_term_width = 100,
    after_help = "Exit codes: 0 success; 1 failure (unreadable input, options this input cannot satisfy, I/O error); 2 bad usage; 3 finished, but the input was damaged and the result is partial."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a trace's events, like `trace-cmd report -R`, or as JSON lines.
    Dump(dump::Args),
    /// Describe a trace: format, clock, CPUs, events per type and CPU, losses.
    Info(info::Args),
    /// Record a scheduler trace through tracefs (as root), of a command or the whole system.
    Record(record::Args),
    /// Per command, task or CPU: run time, switches, waiting, migrations, busy and idle time.
    Stats(stats::Args),
    /// Scheduling latency: how long tasks waited for a CPU after a wakeup or a preemption,
    /// per command, task or CPU, with its causes; perf sched latency's table with --perf.
    Latency(latency::Args),
    /// The per-core timeline: which task ran on which core, when (PDF, SVG or PNG).
    Graph(graph::Args),
    /// Running versus runnable tasks against the core count; waiting while cores idle.
    RunningWaiting(running_waiting::Args),
    /// Write a synthetic trace of a machine of any size, with known ground truth.
    Synth(synth::Args),
    /// Find scheduler pathologies: waits while cores idle, misplaced wakeups, kernel-thread
    /// stragglers, overload; ranked, explained, with figures on request.
    Check(check::Args),
    /// The interactive viewer: serves the timeline, running/waiting plot, runqueues,
    /// incidents and markers of one or several traces on 127.0.0.1, zoomable to any event.
    View(view::Args),
    /// One self-contained HTML file telling the story of one or several traces: the
    /// machine, the timeline to zoom and hover, check's incidents, statistics, migrations.
    Report(report::Args),
    /// Export a trace for other tools: Perfetto (.pftrace), Parquet tables (DuckDB,
    /// Spark), OTF2 (Vampir).
    Export(export::Args),
    /// Run a command N times per setting of scheduler knobs (untraced or recorded): running
    /// times, statistics, the sorted-times figure, scheduler metrics that go with slowness.
    Runs(runs::Args),
    /// Compare two traces: timelines and running/waiting on one scale, and what differs,
    /// ranked by how much of the difference in running time it accounts for.
    Compare(compare::Args),
    /// Where the traced command's (or a task's) wall time went along its critical path:
    /// running, waiting while a core idled (the scheduler's cost), pinning, contention,
    /// blocked, unknown.
    CriticalPath(critical_path::Args),
    /// Watch the machine live (as root) for episodes of waste, keeping only those: each is
    /// written with the seconds before it as a trace.dat and told in one line.
    Watch(watch::Args),
}

/// How a command ended when it did not fail outright.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Complete,
    /// The input was damaged: what could be read was used, warnings were printed.
    Partial,
    /// Stopped by this signal, cleanly (`runs`: knobs restored, results so far written).
    Interrupted(i32),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dump(args) => dump::run(args),
        Command::Info(args) => info::run(args),
        Command::Record(args) => record::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Latency(args) => latency::run(args),
        Command::Graph(args) => graph::run(args),
        Command::RunningWaiting(args) => running_waiting::run(args),
        Command::Synth(args) => synth::run(args),
        Command::Check(args) => check::run(args),
        Command::View(args) => view::run(args),
        Command::Report(args) => report::run(args),
        Command::Export(args) => export::run(args),
        Command::Runs(args) => runs::run(args),
        Command::Compare(args) => compare::run(args),
        Command::CriticalPath(args) => critical_path::run(args),
        Command::Watch(args) => watch::run(args),
    };
    match result {
        Ok(Outcome::Complete) => ExitCode::SUCCESS,
        Ok(Outcome::Partial) => ExitCode::from(3),
        Ok(Outcome::Interrupted(signal)) => ExitCode::from((128 + signal.clamp(1, 127)) as u8),
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("schedlens: error: {}", said_once(&error));
            ExitCode::from(if error.is::<Usage>() { 2 } else { 1 })
        }
    }
}

/// A mistake in the command line itself, whatever the input (exit code 2, as for the
/// mistakes clap finds).
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A [`Usage`] error.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Usage(message.into()))
}

/// An error and its causes in one line, each said once: library errors often show their
/// cause in their own text and also return it as `source()`, so a cause whose text is
/// already there is left out.
pub fn said_once(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// `schedlens dump t.dat | head` must end quietly when `head` stops reading.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|e| e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Prints the damage a stream found, returning whether there was any.
pub fn report_damage(damage: &[tracedat::Error]) -> Outcome {
    const SHOWN: usize = 10;
    for error in damage.iter().take(SHOWN) {
        eprintln!("schedlens: warning: {error}");
    }
    if damage.len() > SHOWN {
        eprintln!("schedlens: warning: ... and {} more damaged places", damage.len() - SHOWN);
    }
    if damage.is_empty() {
        Outcome::Complete
    } else {
        eprintln!("schedlens: warning: the input is damaged; results cover what could be read");
        Outcome::Partial
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    /// Shows its cause in its text and returns it as its source, as thiserror's
    /// `#[error("...: {0}")]` with `#[from]` does.
    #[derive(Debug)]
    struct AtByte(std::io::Error);

    impl std::fmt::Display for AtByte {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "at byte 0: {}", self.0)
        }
    }

    impl std::error::Error for AtByte {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn causes_already_in_the_text_are_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let error = Err::<(), _>(AtByte(io)).context("t.dat").unwrap_err();
        assert_eq!(said_once(&error), "t.dat: at byte 0: No such file or directory");
        assert_eq!(format!("{error:#}"), "t.dat: at byte 0: No such file or directory: No such file or directory");
    }

    #[test]
    fn usage_errors_are_known_by_their_type() {
        let error = usage("--dpi 0 is out of range").context("graph");
        assert!(error.is::<Usage>());
        assert!(!anyhow::anyhow!("x").is::<Usage>());
    }
}
