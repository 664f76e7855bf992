//! What differs between two traces of the same workload (the schedgraph paper's fastest
//! and slowest runs, or before and after a change), measure by measure: per command its
//! run time, waiting in runqueues, migrations and switches; per CPU its busy and idle
//! time; idle-while-waiting; per kind of incident its lost time and count; migrations
//! across sockets and nodes. Time measures come first, ranked by the size of their
//! difference, each with its share of the difference in running time (how much of it
//! that measure could account for); counts follow, ranked by relative change.

use crate::profile::Profile;
use documents::compare::{ComparedMeasure, ComparedTrace, TraceComparison};
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
    /// Time measures (largest difference first), then counts (largest relative change first).
    pub rows: Vec<Difference>,
}

impl Comparison {
    pub fn difference(&self) -> f64 {
        self.running_b - self.running_a
    }

    /// A time measure's difference over the difference in running time.
    pub fn share(&self, row: &Difference) -> Option<f64> {
        (row.unit == MeasureUnit::Seconds && self.difference() != 0.0).then(|| row.delta() / self.difference())
    }

    /// The table, `top` rows of each kind, with the traces named `a` and `b`.
    pub fn to_text(&self, a: &str, b: &str, top: usize) -> String {
        let mut out = String::new();
        let percent = 100.0 * self.difference() / self.running_a.max(f64::MIN_POSITIVE);
        let _ = writeln!(out, "A: {a}: running time {:.6} s", self.running_a);
        let _ =
            writeln!(out, "B: {b}: running time {:.6} s ({:+.6} s, {percent:+.1}%)", self.running_b, self.difference());
        let width = self.rows.iter().map(|r| r.what.len()).max().unwrap_or(10).clamp(10, 40);
        let times: Vec<&Difference> = self.rows.iter().filter(|r| r.unit == MeasureUnit::Seconds).collect();
        let counts: Vec<&Difference> = self.rows.iter().filter(|r| r.unit == MeasureUnit::Count).collect();
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
        let _ = writeln!(out, "\nwhat differs in counts, largest relative change first");
        let _ = writeln!(out, "  {:<width$} {:>12} {:>12} {:>12} {:>8}", "measure", "A", "B", "B-A", "change");
        for row in counts.iter().take(top) {
            let change = if row.a != 0.0 { format!("{:+.0}%", 100.0 * row.delta() / row.a) } else { "new".into() };
            let _ =
                writeln!(out, "  {:<width$} {:>12} {:>12} {:>+12} {change:>8}", row.what, row.a, row.b, row.delta());
        }
        let hidden = times.len().saturating_sub(top) + counts.len().saturating_sub(top);
        if hidden > 0 {
            let _ = writeln!(out, "  ... and {hidden} more rows (--top N, or --format json for all)");
        }
        out
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
        TraceComparison {
            a: ComparedTrace { trace: a.to_string(), running_time_s: self.running_a },
            b: ComparedTrace { trace: b.to_string(), running_time_s: self.running_b },
            running_time_difference_s: self.difference(),
            rows,
        }
    }
}

/// Compares two profiles.
pub fn compare(a: &Profile, b: &Profile) -> Comparison {
    let mut rows = Vec::new();
    command_rows(a, b, &mut rows);
    cpu_rows(a, b, &mut rows);
    finding_rows(a, b, &mut rows);
    rows.retain(|r| r.a != r.b);
    let (mut times, mut counts): (Vec<Difference>, Vec<Difference>) =
        rows.into_iter().partition(|r| r.unit == MeasureUnit::Seconds);
    times.sort_by(|x, y| y.delta().abs().total_cmp(&x.delta().abs()).then_with(|| x.what.cmp(&y.what)));
    counts.sort_by(|x, y| {
        y.relative()
            .total_cmp(&x.relative())
            .then(y.delta().abs().total_cmp(&x.delta().abs()))
            .then_with(|| x.what.cmp(&y.what))
    });
    times.extend(counts);
    let seconds = |p: &Profile| p.workload.running_time().0 as f64 / 1e9;
    Comparison { running_a: seconds(a), running_b: seconds(b), rows: times }
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
