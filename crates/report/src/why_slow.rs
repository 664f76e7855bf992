//! The report's answer to "why was it slow?", per trace: the traced command's critical
//! path (the sentence to quote, the wall time by cause, the largest stretches of
//! scheduler cost: what `schedlens critical-path` prints) and the wakeup latency
//! (`schedlens latency`'s distributions, and the histogram `latency --figure` draws of
//! the commands it ranks first, as an SVG image). The latencies come without their causes
//! (`analysis::latency::distributions`): the causes ask every other CPU's idle state
//! during each delay, which costs minutes on a trace of hundreds of CPUs.

use crate::page::{escape, seconds, td, th};
use crate::{ReportTrace, image};
use analysis::latency::{Distribution, Distributions};
use documents::critical_path::CriticalPathReport;
use experiment::critical_path::{document, duration, parts, sentence, stretch_words};
use figures::latency_histogram::{Series, command_series, wakeup_latency_figure};
use model::{Model, Nanos};
use std::fmt::Write;
use tiles::path::Walked;

/// Stretches of scheduler cost listed per trace.
const STRETCHES: usize = 5;
/// Commands drawn in the histogram (`latency --figure`'s default).
const DRAWN_COMMANDS: usize = 6;
/// Commands listed in the latency table.
const LISTED_COMMANDS: usize = 20;

/// What one trace says about its slowness.
pub struct WhySlow {
    /// The traced command's critical path; `None` when the trace names no command.
    path: Option<CriticalPathReport>,
    /// Wakeup latency and preemption waits of every task over the whole trace.
    wakeups: Distribution,
    preemptions: Distribution,
    /// The commands' wakeup latencies, largest p99 first (the first `LISTED_COMMANDS`).
    commands: Vec<(String, Distribution)>,
    /// The histogram's series.
    series: Vec<Series>,
}

impl WhySlow {
    /// The traced command's critical path, as walked for the page (`None` when the trace
    /// names no command), and the latencies `found` over the trace, every task.
    pub fn of(model: &Model, name: &str, path: Option<&Walked>, found: Distributions) -> WhySlow {
        let path = path.map(|walked| {
            let mut document = document(model, name, &walked.target, &walked.path);
            document.top.truncate(STRETCHES);
            document
        });
        let commands = found
            .commands_by_p99()
            .into_iter()
            .take(LISTED_COMMANDS)
            .map(|(comm, wakeups)| (comm.to_string(), wakeups.clone()))
            .collect();
        WhySlow {
            path,
            series: command_series(&found, None, DRAWN_COMMANDS),
            wakeups: found.wakeups,
            preemptions: found.preemptions,
            commands,
        }
    }
}

/// The critical path section.
pub fn write_paths(out: &mut String, traces: &[ReportTrace], whys: &[&WhySlow]) {
    let _ = writeln!(
        out,
        "<section id=\"critical-path\"><h2>Critical path</h2>\n<p class=\"hint\">As <code>schedlens critical-path</code> walks it: from the traced command's end back through the wakeup graph (a wakeup's waker is where the path goes on), every nanosecond of its wall time given one cause. The scheduler's part, runnable while a core the task was allowed on idled, is an upper bound of its cost; unknown time is counted apart, never guessed.</p>"
    );
    for (trace, why) in traces.iter().zip(whys) {
        let _ = writeln!(out, "<h3>{}</h3>", escape(&trace.shown.name));
        match &why.path {
            Some(path) => write_path(out, trace, path),
            None => {
                let _ = writeln!(
                    out,
                    "<p>No command to follow: the trace names none (no recorded command pid, no exec). <code>schedlens critical-path TRACE --task PID</code> follows one task.</p>"
                );
            }
        }
    }
    out.push_str("</section>\n");
}

fn write_path(out: &mut String, trace: &ReportTrace, d: &CriticalPathReport) {
    let at = |ns: u64| seconds(trace.shown.relative(Nanos(ns)));
    let _ = writeln!(out, "<p class=\"quote\">{}</p>", escape(&sentence(&d.breakdown)));
    let mut facts = format!(
        "The command {} ({}), {} s to {} s: {} hops; allowed cores {}",
        d.pid,
        escape(&d.comm),
        at(d.start_ns),
        at(d.end_ns),
        d.hops.len(),
        if d.affinity == "recorded" { "recorded" } else { "inferred from where tasks ran" }
    );
    if !d.possibly_pinned.is_empty() {
        let pinned: Vec<String> = d
            .possibly_pinned
            .iter()
            .map(|p| format!("{} ({}) on CPU {}", p.pid, escape(&p.comm), model::ranges(p.cpus.iter().copied())))
            .collect();
        let _ = write!(facts, "; possibly pinned: {}", pinned.join(", "));
    }
    let _ = writeln!(out, "<p class=\"muted\">{facts}.</p>");
    out.push_str("<div class=\"table-box\"><table class=\"stats path-parts\"><thead><tr>");
    for text in ["cause", "time", "of the wall time"] {
        let _ = write!(out, "<th>{text}</th>");
    }
    out.push_str("</tr></thead><tbody>\n");
    for (name, words, ns) in parts(&d.breakdown) {
        let share = if d.wall_ns == 0 { 0.0 } else { 100.0 * ns as f64 / d.wall_ns as f64 };
        let _ = writeln!(
            out,
            "<tr data-part=\"{name}\"><td>{}</td><td>{}</td><td>{share:.1}%</td></tr>",
            escape(words),
            duration(ns)
        );
    }
    out.push_str("</tbody></table></div>\n");
    let unknown: Vec<String> = d
        .unknown
        .iter()
        .filter(|p| p.ns > 0)
        .map(|p| format!("{}: {} in {} stretches", p.reason, duration(p.ns), p.stretches))
        .collect();
    if !unknown.is_empty() {
        let _ = writeln!(out, "<p class=\"muted\">Unknown, by reason: {}.</p>", escape(&unknown.join("; ")));
    }
    if !d.top.is_empty() {
        out.push_str("<p>The largest stretches of scheduler cost:</p>\n<ol class=\"path-stretches\">\n");
        for s in &d.top {
            let _ = writeln!(
                out,
                "<li>{} at {} s: {}</li>",
                duration(s.scheduler_ns),
                at(s.start_ns),
                escape(&stretch_words(s))
            );
        }
        out.push_str("</ol>\n");
    }
}

/// The wakeup latency section.
pub fn write_latencies(out: &mut String, traces: &[ReportTrace], whys: &[&WhySlow]) {
    let _ = writeln!(
        out,
        "<section id=\"latency\"><h2>Wakeup latency</h2>\n<p class=\"hint\">As <code>schedlens latency</code> measures it over the whole trace, every task: from <code>sched_waking</code> (else the enqueue) to running; preemption waits from a switch-out while runnable to running again. The histogram is <code>latency --figure</code>'s: the {DRAWN_COMMANDS} commands with the largest p99, each bar a command's share of its delays. Click a column's title to sort by it.</p>"
    );
    for (trace, why) in traces.iter().zip(whys) {
        let name = &trace.shown.name;
        let _ = writeln!(out, "<h3>{}</h3>", escape(name));
        let _ = writeln!(
            out,
            "<p>Wakeup latency: {}. Preemption waits: {}.</p>",
            summary_words(&why.wakeups),
            summary_words(&why.preemptions)
        );
        if why.series.iter().any(|s| s.counts.iter().any(|&c| c > 0)) {
            let scene = wakeup_latency_figure(&format!("{name}: wakeup latency"), &why.series);
            let _ = writeln!(
                out,
                "<img class=\"latency-histogram\" alt=\"wakeup latency histograms of the commands with the largest p99\" src=\"{}\">",
                image(scene)
            );
        }
        write_command_table(out, why);
    }
    out.push_str("</section>\n");
}

/// "1234 delays, p50 11.4 µs, p90 9.90 ms, p99 18.99 ms, max 31.65 ms".
fn summary_words(d: &Distribution) -> String {
    if d.count == 0 {
        return "none measured".into();
    }
    format!(
        "{} delays, p50 {}, p90 {}, p99 {}, max {}",
        d.count,
        duration(d.p50_ns),
        duration(d.p90_ns),
        duration(d.p99_ns),
        duration(d.max_ns)
    )
}

fn write_command_table(out: &mut String, why: &WhySlow) {
    if why.commands.is_empty() {
        return;
    }
    out.push_str("<div class=\"table-box\"><table class=\"stats sortable latency-commands\"><thead><tr>");
    for (text, numeric) in [
        ("command", false),
        ("wakeups", true),
        ("p50 (ms)", true),
        ("p90 (ms)", true),
        ("p99 (ms)", true),
        ("max (ms)", true),
    ] {
        out.push_str(&th(text, numeric));
    }
    out.push_str("</tr></thead><tbody>\n");
    let ms = |ns: u64| td(ns, &format!("{:.3}", ns as f64 / 1e6));
    for (comm, d) in &why.commands {
        let _ = writeln!(
            out,
            "<tr><td>{}</td>{}{}{}{}{}</tr>",
            escape(comm),
            td(d.count, &d.count.to_string()),
            ms(d.p50_ns),
            ms(d.p90_ns),
            ms(d.p99_ns),
            ms(d.max_ns),
        );
    }
    out.push_str("</tbody></table></div>\n");
}
