//! `schedlens stats`: per command or per task, when it ran, for how long, how often it
//! was switched in, how long it waited in runqueues and how often it migrated (with a
//! topology: how often across NUMA nodes); and per
//! CPU how busy, idle or uncertain it was and how long tasks waited there.

use crate::Outcome;
use crate::common::{WindowArgs, load_model};
use analysis::states::StateTimes;
use analysis::stats::{self, CpuRow, Grouping, Row, Stats};
use analysis::{TaskFilter, Window};
use anyhow::Result;
use documents::stats::{CpuStatsRow, StatsLatency, StatsRow, ThreadStates};
use model::{Detail, Model, Nanos, TaskId};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat file.
    trace: PathBuf,
    #[command(flatten)]
    window: WindowArgs,
    /// One row per command name, per task, or per CPU.
    #[arg(long, value_enum, default_value = "command")]
    by: By,
    /// Sort rows by this column (largest first; names and numbers ascending).
    #[arg(long, value_enum, default_value = "runtime")]
    sort: SortColumn,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// The machine's topology, for each row's migrations across NUMA nodes, when the trace
    /// has none: an `lscpu -p` file, a copy of /sys/devices/system/cpu, or
    /// `sockets=N,smt=M,layout=interleaved|contiguous`.
    #[arg(long, value_name = "FILE|SPEC")]
    topology: Option<String>,
    /// Add each row's thread states: time running, runnable after a wakeup or a
    /// preemption, sleeping (S), uninterruptible (D), dead, unknown.
    #[arg(long)]
    states: bool,
    /// Add each row's wakeup latency: count, p50 and p99 (see `schedlens latency`).
    #[arg(long)]
    latency: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum By {
    Command,
    Task,
    Cpu,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum SortColumn {
    Runtime,
    Switches,
    Wait,
    MaxWait,
    Migrations,
    First,
    Last,
    Name,
    Pid,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
}

pub fn run(args: Args) -> Result<Outcome> {
    args.window.validate()?;
    let detail = if args.latency { Detail::FULL } else { Detail::STATS };
    let loaded = load_model(&args.trace, detail)?;
    let model = &loaded.model;
    let (window, origin) = args.window.resolve(model, &args.trace)?;
    let grouping = if args.by == By::Task { Grouping::Task } else { Grouping::Command };
    let topology = crate::topology::topology_of(args.topology.as_deref(), &loaded.trace, model.cpus().len())?;
    let mut stats = stats::compute_placed(model, window, &args.window.filter(), grouping, topology.as_ref());
    sort_rows(&mut stats.rows, args.sort);
    let extras = Extras::of(model, window, &args.window.filter(), args.states, args.latency);
    let mut out = std::io::stdout().lock();
    match (args.format, args.by) {
        (Format::Table, _) => print_table(&mut out, &stats, origin, args.by, &extras)?,
        (Format::Csv, By::Cpu) => print_cpu_csv(&mut out, &stats.cpus)?,
        (Format::Csv, _) => print_csv(&mut out, &stats.rows, &extras)?,
        (Format::Json, By::Cpu) => writeln!(out, "{}", serde_json::to_string_pretty(&cpus_document(&stats.cpus))?)?,
        (Format::Json, _) => writeln!(out, "{}", serde_json::to_string_pretty(&rows_document(&stats.rows, &extras))?)?,
    }
    Ok(loaded.outcome)
}

/// `--states` and `--latency`: per row (by pid and name, or by command), its thread
/// states and wakeup latency, computed over the same window and tasks.
struct Extras {
    states: Option<HashMap<(Option<i32>, String), StateTimes>>,
    latency: Option<HashMap<(Option<i32>, String), StatsLatency>>,
}

impl Extras {
    fn of(model: &Model, window: Window, filter: &TaskFilter, states: bool, latency: bool) -> Extras {
        let last_name = |task: TaskId| model.comms().name(model.tasks().get(task).last_comm()).to_string();
        let states = states.then(|| {
            let result = analysis::states::compute(model, window, filter);
            let mut map: HashMap<(Option<i32>, String), StateTimes> = HashMap::new();
            for (task, pid, times) in &result.by_task {
                map.insert((Some(pid.0), last_name(*task)), *times);
            }
            map.extend(result.by_command.into_iter().map(|(comm, times)| ((None, comm), times)));
            map
        });
        let latency = latency.then(|| {
            let result = analysis::latency::compute(
                model,
                window,
                filter,
                None,
                analysis::latency::Parts { by_task: true, by_command: true, ..analysis::latency::Parts::OVERALL },
            );
            let summary = |group: &analysis::latency::Group| StatsLatency {
                wakeups: group.wakeups.latencies.count,
                p50_ns: group.wakeups.latencies.p50_ns,
                p99_ns: group.wakeups.latencies.p99_ns,
            };
            let mut map = HashMap::new();
            for (_, pid, name, group) in &result.by_task {
                map.insert((Some(pid.0), name.clone()), summary(group));
            }
            map.extend(result.by_command.iter().map(|(comm, group)| ((None, comm.clone()), summary(group))));
            map
        });
        Extras { states, latency }
    }

    fn states(&self, row: &Row) -> Option<StateTimes> {
        let map = self.states.as_ref()?;
        Some(map.get(&(row.pid.map(|p| p.0), row.comm.clone())).copied().unwrap_or_default())
    }

    fn latency(&self, row: &Row) -> Option<StatsLatency> {
        let map = self.latency.as_ref()?;
        let none = StatsLatency { wakeups: 0, p50_ns: 0, p99_ns: 0 };
        Some(map.get(&(row.pid.map(|p| p.0), row.comm.clone())).cloned().unwrap_or(none))
    }

    /// The extra columns' headers, then a row's cells, for the table and CSV.
    fn headers(&self) -> Vec<&'static str> {
        let mut headers = Vec::new();
        if self.states.is_some() {
            headers.extend([
                "running",
                "runnable-wakeup",
                "runnable-preempted",
                "sleeping",
                "uninterruptible",
                "dead",
                "unknown",
            ]);
        }
        if self.latency.is_some() {
            headers.extend(["wakeups", "wakeup-p50", "wakeup-p99"]);
        }
        headers
    }

    fn cells(&self, row: &Row, time: impl Fn(u64) -> String) -> Vec<String> {
        let mut cells = Vec::new();
        if let Some(t) = self.states(row) {
            cells.extend(
                [
                    t.running_ns,
                    t.runnable_wakeup_ns,
                    t.runnable_preempted_ns,
                    t.sleeping_ns,
                    t.uninterruptible_ns,
                    t.dead_ns,
                    t.unknown_ns,
                ]
                .map(&time),
            );
        }
        if let Some(l) = self.latency(row) {
            cells.extend([l.wakeups.to_string(), time(l.p50_ns), time(l.p99_ns)]);
        }
        cells
    }
}

fn sort_rows(rows: &mut [Row], column: SortColumn) {
    let key = |r: &Row| -> (i128, String, i32) {
        let descending = |v: u64| -(v as i128);
        let n = match column {
            SortColumn::Runtime => descending(r.runtime_ns),
            SortColumn::Switches => descending(r.switches),
            SortColumn::Wait => descending(r.wait_ns),
            SortColumn::MaxWait => descending(r.max_wait_ns),
            SortColumn::Migrations => descending(r.migrations),
            SortColumn::First => r.first_run.map_or(i128::MAX, |t| t.0 as i128),
            SortColumn::Last => descending(r.last_run.map_or(0, |t| t.0)),
            SortColumn::Name | SortColumn::Pid => 0,
        };
        let pid = r.pid.map_or(0, |p| p.0);
        match column {
            SortColumn::Pid => (pid as i128, r.comm.clone(), pid),
            _ => (n, r.comm.clone(), pid),
        }
    };
    rows.sort_by_cached_key(key);
}

fn secs(t: u64) -> String {
    format!("{:.6}", t as f64 / 1e9)
}

fn relative(t: Option<Nanos>, origin: Nanos) -> String {
    t.map_or("-".into(), |t| {
        let delta = t.0 as i128 - origin.0 as i128;
        format!("{:.6}", delta as f64 / 1e9)
    })
}

fn print_table(out: &mut impl Write, stats: &Stats, origin: Nanos, by: By, extras: &Extras) -> Result<()> {
    let window = stats.window;
    writeln!(
        out,
        "window: {} .. {} s ({} s)",
        relative(Some(window.start), origin),
        relative(Some(window.end), origin),
        secs(window.len().0)
    )?;
    if by != By::Cpu {
        let name = if by == By::Task { format!("{:<7} {:<16}", "pid", "comm") } else { format!("{:<24}", "command") };
        // With a topology, the migrations across NUMA nodes.
        let placed = stats.rows.first().is_some_and(|r| r.cross_node_migrations.is_some());
        let cross = |value: String| if placed { format!(" {value:>6}") } else { String::new() };
        writeln!(
            out,
            "{name} {:>5} {:>11} {:>11} {:>12} {:>9} {:>12} {:>11} {:>6}{}{}",
            "pids",
            "first (s)",
            "last (s)",
            "run (s)",
            "switches",
            "wait (s)",
            "max wait",
            "migr",
            cross("x-node".into()),
            extras.headers().iter().map(|h| format!(" {h:>16}")).collect::<String>()
        )?;
        for r in &stats.rows {
            let name = match r.pid {
                Some(pid) => format!("{:<7} {:<16}", pid.0, r.comm),
                None => format!("{:<24}", r.comm),
            };
            writeln!(
                out,
                "{name} {:>5} {:>11} {:>11} {:>12} {:>9} {:>12} {:>11} {:>6}{}{}",
                r.pids,
                relative(r.first_run, origin),
                relative(r.last_run, origin),
                secs(r.runtime_ns),
                r.switches,
                secs(r.wait_ns),
                secs(r.max_wait_ns),
                r.migrations,
                cross(r.cross_node_migrations.unwrap_or(0).to_string()),
                extras.cells(r, secs).iter().map(|c| format!(" {c:>16}")).collect::<String>()
            )?;
        }
        writeln!(out)?;
    }
    writeln!(out, "{:>4} {:>8} {:>8} {:>11} {:>14}", "CPU", "busy %", "idle %", "uncertain %", "tasks waiting %")?;
    let pct = |v: u64| {
        if window.len().0 == 0 { 0.0 } else { 100.0 * v as f64 / window.len().0 as f64 }
    };
    for c in &stats.cpus {
        writeln!(
            out,
            "{:>4} {:>8.2} {:>8.2} {:>11.2} {:>14.2}",
            c.cpu.0,
            pct(c.busy_ns),
            pct(c.idle_ns),
            pct(c.uncertain_ns),
            pct(c.waiting_ns)
        )?;
    }
    Ok(())
}

fn print_csv(out: &mut impl Write, rows: &[Row], extras: &Extras) -> Result<()> {
    // With a topology, the migrations across NUMA nodes in a last column.
    let placed = rows.first().is_some_and(|r| r.cross_node_migrations.is_some());
    let cross = if placed { ",cross_node_migrations" } else { "" };
    let more: String = extras
        .headers()
        .iter()
        .map(|h| if *h == "wakeups" { ",wakeups".to_string() } else { format!(",{}_ns", h.replace('-', "_")) })
        .collect();
    writeln!(out, "comm,pid,pids,first_ns,last_ns,runtime_ns,switches,wait_ns,max_wait_ns,migrations{cross}{more}")?;
    for r in rows {
        let opt = |t: Option<Nanos>| t.map_or(String::new(), |t| t.0.to_string());
        let cross = r.cross_node_migrations.map_or(String::new(), |n| format!(",{n}"));
        let more: String = extras.cells(r, |ns| ns.to_string()).iter().map(|c| format!(",{c}")).collect();
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}{cross}{more}",
            csv_field(&r.comm),
            r.pid.map_or(String::new(), |p| p.0.to_string()),
            r.pids,
            opt(r.first_run),
            opt(r.last_run),
            r.runtime_ns,
            r.switches,
            r.wait_ns,
            r.max_wait_ns,
            r.migrations
        )?;
    }
    Ok(())
}

fn print_cpu_csv(out: &mut impl Write, cpus: &[CpuRow]) -> Result<()> {
    writeln!(out, "cpu,busy_ns,idle_ns,uncertain_ns,waiting_ns")?;
    for c in cpus {
        writeln!(out, "{},{},{},{},{}", c.cpu.0, c.busy_ns, c.idle_ns, c.uncertain_ns, c.waiting_ns)?;
    }
    Ok(())
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.to_string() }
}

fn rows_document(rows: &[Row], extras: &Extras) -> Vec<StatsRow> {
    rows.iter()
        .map(|r| StatsRow {
            comm: r.comm.clone(),
            pids: r.pids,
            first_ns: r.first_run.map(|t| t.0),
            last_ns: r.last_run.map(|t| t.0),
            switches: r.switches,
            runtime_ns: r.runtime_ns,
            wait_ns: r.wait_ns,
            max_wait_ns: r.max_wait_ns,
            migrations: r.migrations,
            pid: r.pid.map(|p| p.0),
            cross_node_migrations: r.cross_node_migrations,
            states: extras.states(r).map(|t| ThreadStates {
                running_ns: t.running_ns,
                runnable_wakeup_ns: t.runnable_wakeup_ns,
                runnable_preempted_ns: t.runnable_preempted_ns,
                sleeping_ns: t.sleeping_ns,
                uninterruptible_ns: t.uninterruptible_ns,
                dead_ns: t.dead_ns,
                unknown_ns: t.unknown_ns,
            }),
            latency: extras.latency(r),
        })
        .collect()
}

fn cpus_document(cpus: &[CpuRow]) -> Vec<CpuStatsRow> {
    cpus.iter()
        .map(|c| CpuStatsRow {
            cpu: c.cpu.0,
            busy_ns: c.busy_ns,
            idle_ns: c.idle_ns,
            uncertain_ns: c.uncertain_ns,
            waiting_ns: c.waiting_ns,
        })
        .collect()
}
