//! What differs between two traces of the same workload (the schedgraph paper's fastest
//! and slowest runs, or before and after a change), measure by measure: per command its
//! run time, waiting in runqueues, migrations and switches, and its wakeup latency's p50
//! and p99; per CPU its busy and idle time; idle-while-waiting; per kind of incident its
//! lost time and count; migrations across sockets and nodes; and the traced command's
//! critical path, cause by cause. Time measures come first, ranked by the size of their
//! difference, each with its share of the difference in running time (how much of it
//! that measure could account for: the critical path's parts sum to the running time, so
//! theirs sum to all of it); latency percentiles follow, ranked by relative shift (a
//! distribution's shift is no part of the running time), then counts, ranked by relative
//! change.

use crate::critical_path::{breakdown_document, parts, scheduler_share, sentence};
use crate::profile::Profile;
use documents::compare::{ComparedMeasure, ComparedPath, ComparedTrace, TraceComparison};
use documents::critical_path::PathBreakdown;
use std::collections::BTreeSet;
use std::fmt::Write as _;

pub use documents::compare::MeasureUnit;

/// One measure in both traces.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub what: String,
    pub unit: MeasureUnit,
    pub a: f64,
    pub b: f64,
}

impl Difference {
    pub fn delta(&self) -> f64 {
        self.b - self.a
    }

    fn relative(&self) -> f64 {
        self.delta().abs() / self.a.abs().max(self.b.abs()).max(f64::MIN_POSITIVE)
    }
}

/// Two traces side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Running time of A and of B, in seconds.
    pub running_a: f64,
    pub running_b: f64,
    /// Time measures (largest difference first), then latencies and counts (largest
    /// relative change first).
    pub rows: Vec<Difference>,
    /// The traced command's critical path in A and in B (`None`: the trace names no command).
    pub paths: [Option<PathBreakdown>; 2],
}

impl Comparison {
    pub fn difference(&self) -> f64 {
        self.running_b - self.running_a
    }

    /// A time measure's difference over the difference in running time.
    pub fn share(&self, row: &Difference) -> Option<f64> {
        self.share_of(row.delta()).filter(|_| row.unit == MeasureUnit::Seconds)
    }

    /// The table, `top` rows of each kind, with the traces named `a` and `b`.
    pub fn to_text(&self, a: &str, b: &str, top: usize) -> String {
        let mut out = String::new();
        let percent = 100.0 * self.difference() / self.running_a.max(f64::MIN_POSITIVE);
        let _ = writeln!(out, "A: {a}: running time {:.6} s", self.running_a);
        let _ =
            writeln!(out, "B: {b}: running time {:.6} s ({:+.6} s, {percent:+.1}%)", self.running_b, self.difference());
        let width = self.rows.iter().map(|r| r.what.len()).max().unwrap_or(10).clamp(10, 40);
        self.write_paths(&mut out);
        let of_unit = |unit| -> Vec<&Difference> { self.rows.iter().filter(|r| r.unit == unit).collect() };
        let (times, latencies, counts) =
            (of_unit(MeasureUnit::Seconds), of_unit(MeasureUnit::Latency), of_unit(MeasureUnit::Count));
        let _ = writeln!(out, "\nwhat differs in time, largest first (share: of the running-time difference)");
        let _ = writeln!(out, "  {:<width$} {:>12} {:>12} {:>12} {:>8}", "measure (s)", "A", "B", "B-A", "share");
        for row in times.iter().take(top) {
            let share = self.share(row).map_or_else(String::new, |s| format!("{:.0}%", 100.0 * s));
            let _ = writeln!(
                out,
                "  {:<width$} {:>12.6} {:>12.6} {:>+12.6} {share:>8}",
                row.what,
                row.a,
                row.b,
                row.delta()
            );
        }
        let _ = writeln!(out, "\nwhat differs in wakeup latency per command, largest relative shift first");
        if latencies.is_empty() {
            let _ = writeln!(out, "  none: no command woken in both traces has another p50 or p99");
        } else {
            let _ =
                writeln!(out, "  {:<width$} {:>12} {:>12} {:>12} {:>8}", "percentile (s)", "A", "B", "B-A", "change");
        }
        for row in latencies.iter().take(top) {
            let _ = writeln!(
                out,
                "  {:<width$} {:>12.6} {:>12.6} {:>+12.6} {:>8}",
                row.what,
                row.a,
                row.b,
                row.delta(),
                change(row)
            );
        }
        let _ = writeln!(out, "\nwhat differs in counts, largest relative change first");
        let _ = writeln!(out, "  {:<width$} {:>12} {:>12} {:>12} {:>8}", "measure", "A", "B", "B-A", "change");
        for row in counts.iter().take(top) {
            let _ = writeln!(
                out,
                "  {:<width$} {:>12} {:>12} {:>+12} {:>8}",
                row.what,
                row.a,
                row.b,
                row.delta(),
                change(row)
            );
        }
        let hidden = [times, latencies, counts].iter().map(|rows| rows.len().saturating_sub(top)).sum::<usize>();
        if hidden > 0 {
            let _ = writeln!(out, "  ... and {hidden} more rows (--top N, or --format json for all)");
        }
        out
    }

    /// Both critical paths side by side, cause by cause, with their sentences to quote.
    fn write_paths(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\nthe traced command's critical path, side by side (its parts sum to each running time, their shares to 100%)"
        );
        let [Some(a), Some(b)] = &self.paths else {
            for (name, path) in ["A", "B"].iter().zip(&self.paths) {
                match path {
                    Some(path) => {
                        let _ = writeln!(out, "  {name}: {}", sentence(path));
                    }
                    None => {
                        let _ = writeln!(out, "  {name}: none (the trace names no command: no recorded pid, no exec)");
                    }
                }
            }
            return;
        };
        let _ = writeln!(out, "  {:<48} {:>12} {:>12} {:>12} {:>8}", "cause (s)", "A", "B", "B-A", "share");
        for ((_, words, ns_a), (_, _, ns_b)) in parts(a).into_iter().zip(parts(b)) {
            let (x, y) = (ns_a as f64 / 1e9, ns_b as f64 / 1e9);
            let share =
                self.share_of(y - x).filter(|_| x != y).map_or_else(String::new, |s| format!("{:.0}%", 100.0 * s));
            let _ = writeln!(out, "  {words:<48} {x:>12.6} {y:>12.6} {:>+12.6} {share:>8}", y - x);
        }
        let _ = writeln!(out, "  A: {}", sentence(a));
        let _ = writeln!(out, "  B: {}", sentence(b));
    }

    /// A difference in seconds over the difference in running time.
    fn share_of(&self, delta: f64) -> Option<f64> {
        (self.difference() != 0.0).then(|| delta / self.difference())
    }

    /// `compare --format json`'s document, every row, with the traces named `a` and `b`.
    pub fn to_document(&self, a: &str, b: &str) -> TraceComparison {
        let rows = self
            .rows
            .iter()
            .map(|r| ComparedMeasure {
                what: r.what.clone(),
                unit: r.unit,
                a: r.a,
                b: r.b,
                difference: r.delta(),
                share_of_running_time_difference: self.share(r),
            })
            .collect();
        let path = |path: &Option<PathBreakdown>| {
            path.as_ref().map(|p| ComparedPath {
                sentence: sentence(p),
                breakdown: p.clone(),
                scheduler_share: scheduler_share(p),
            })
        };
        TraceComparison {
            a: ComparedTrace {
                trace: a.to_string(),
                running_time_s: self.running_a,
                critical_path: path(&self.paths[0]),
            },
            b: ComparedTrace {
                trace: b.to_string(),
                running_time_s: self.running_b,
                critical_path: path(&self.paths[1]),
            },
            running_time_difference_s: self.difference(),
            rows,
        }
    }
}

/// Compares two profiles.
pub fn compare(a: &Profile, b: &Profile) -> Comparison {
    let mut rows = Vec::new();
    let paths = [a, b].map(|p| p.path.as_ref().map(|path| breakdown_document(&path.breakdown)));
    command_rows(a, b, &mut rows);
    latency_rows(a, b, &mut rows);
    cpu_rows(a, b, &mut rows);
    finding_rows(a, b, &mut rows);
    path_rows(&paths, &mut rows);
    rows.retain(|r| r.a != r.b);
    let by_relative_change = |x: &Difference, y: &Difference| {
        y.relative()
            .total_cmp(&x.relative())
            .then(y.delta().abs().total_cmp(&x.delta().abs()))
            .then_with(|| x.what.cmp(&y.what))
    };
    let of_unit =
        |rows: &[Difference], unit| -> Vec<Difference> { rows.iter().filter(|r| r.unit == unit).cloned().collect() };
    let mut times = of_unit(&rows, MeasureUnit::Seconds);
    times.sort_by(|x, y| y.delta().abs().total_cmp(&x.delta().abs()).then_with(|| x.what.cmp(&y.what)));
    for unit in [MeasureUnit::Latency, MeasureUnit::Count] {
        let mut others = of_unit(&rows, unit);
        others.sort_by(by_relative_change);
        times.extend(others);
    }
    let seconds = |p: &Profile| p.workload.running_time().0 as f64 / 1e9;
    Comparison { running_a: seconds(a), running_b: seconds(b), rows: times, paths }
}

/// `+12%`, or `new` from zero.
fn change(row: &Difference) -> String {
    if row.a != 0.0 { format!("{:+.0}%", 100.0 * row.delta() / row.a) } else { "new".into() }
}

fn row(what: String, unit: MeasureUnit, a: f64, b: f64) -> Difference {
    Difference { what, unit, a, b }
}

fn command_rows(a: &Profile, b: &Profile, rows: &mut Vec<Difference>) {
    let names: BTreeSet<&str> = a.stats.rows.iter().chain(&b.stats.rows).map(|r| r.comm.as_str()).collect();
    let find = |p: &Profile, name: &str| p.stats.rows.iter().find(|r| r.comm == name).cloned();
    for name in names {
        let (ra, rb) = (find(a, name), find(b, name));
        let get =
            |r: &Option<analysis::stats::Row>, f: fn(&analysis::stats::Row) -> u64| r.as_ref().map_or(0, f) as f64;
        rows.push(row(
            format!("{name}: run time"),
            MeasureUnit::Seconds,
            get(&ra, |r| r.runtime_ns) / 1e9,
            get(&rb, |r| r.runtime_ns) / 1e9,
        ));
        rows.push(row(
            format!("{name}: waiting"),
            MeasureUnit::Seconds,
            get(&ra, |r| r.wait_ns) / 1e9,
            get(&rb, |r| r.wait_ns) / 1e9,
        ));
        rows.push(row(
            format!("{name}: migrations"),
            MeasureUnit::Count,
            get(&ra, |r| r.migrations),
            get(&rb, |r| r.migrations),
        ));
        rows.push(row(
            format!("{name}: switches"),
            MeasureUnit::Count,
            get(&ra, |r| r.switches),
            get(&rb, |r| r.switches),
        ));
    }
}

/// Each command's wakeup latency p50 and p99, for the commands woken in both traces (a
/// percentile of no delays is unknown, not zero).
fn latency_rows(a: &Profile, b: &Profile, rows: &mut Vec<Difference>) {
    let woken = |p: &Profile, name: &str| {
        let found = p.latency.by_command.iter().find(|(comm, _)| comm == name);
        found.map(|(_, distribution)| distribution.clone()).filter(|d| d.count > 0)
    };
    let names: BTreeSet<&str> = a.latency.by_command.iter().map(|(comm, _)| comm.as_str()).collect();
    for name in names {
        let (Some(x), Some(y)) = (woken(a, name), woken(b, name)) else { continue };
        let seconds = |ns: u64| ns as f64 / 1e9;
        rows.push(row(format!("{name}: wakeup p50"), MeasureUnit::Latency, seconds(x.p50_ns), seconds(y.p50_ns)));
        rows.push(row(format!("{name}: wakeup p99"), MeasureUnit::Latency, seconds(x.p99_ns), seconds(y.p99_ns)));
    }
}

/// The critical path's parts, when both traces have one.
fn path_rows(paths: &[Option<PathBreakdown>; 2], rows: &mut Vec<Difference>) {
    let [Some(a), Some(b)] = paths else { return };
    for ((name, _, x), (_, _, y)) in parts(a).into_iter().zip(parts(b)) {
        rows.push(row(format!("critical path: {name}"), MeasureUnit::Seconds, x as f64 / 1e9, y as f64 / 1e9));
    }
}

fn cpu_rows(a: &Profile, b: &Profile, rows: &mut Vec<Difference>) {
    let cpus = a.stats.cpus.len().max(b.stats.cpus.len());
    for cpu in 0..cpus {
        let (ca, cb) = (a.stats.cpus.get(cpu), b.stats.cpus.get(cpu));
        let busy = |c: Option<&analysis::stats::CpuRow>| c.map_or(0.0, |c| c.busy_ns as f64 / 1e9);
        let idle = |c: Option<&analysis::stats::CpuRow>| c.map_or(0.0, |c| c.idle_ns as f64 / 1e9);
        rows.push(row(format!("CPU {cpu}: busy"), MeasureUnit::Seconds, busy(ca), busy(cb)));
        rows.push(row(format!("CPU {cpu}: idle"), MeasureUnit::Seconds, idle(ca), idle(cb)));
    }
}

fn finding_rows(a: &Profile, b: &Profile, rows: &mut Vec<Difference>) {
    let (fa, fb) = (&a.check, &b.check);
    let seconds = |n: model::Nanos| n.0 as f64 / 1e9;
    rows.push(row(
        "idle-while-waiting".into(),
        MeasureUnit::Seconds,
        seconds(fa.idle_while_waiting),
        seconds(fb.idle_while_waiting),
    ));
    for (ka, kb) in fa.kinds.iter().zip(&fb.kinds) {
        rows.push(row(format!("{}: lost CPU time", ka.name), MeasureUnit::Seconds, seconds(ka.lost), seconds(kb.lost)));
        rows.push(row(format!("{}: length", ka.name), MeasureUnit::Seconds, seconds(ka.length), seconds(kb.length)));
        rows.push(row(format!("{}: incidents", ka.name), MeasureUnit::Count, ka.count as f64, kb.count as f64));
    }
    rows.push(row("migrations".into(), MeasureUnit::Count, fa.migrations as f64, fb.migrations as f64));
    if let (Some(x), Some(y)) = (fa.cross_socket, fb.cross_socket) {
        rows.push(row("cross-socket migrations".into(), MeasureUnit::Count, x as f64, y as f64));
    }
    if let (Some(x), Some(y)) = (fa.cross_node, fb.cross_node) {
        rows.push(row("cross-node migrations".into(), MeasureUnit::Count, x as f64, y as f64));
    }
}
