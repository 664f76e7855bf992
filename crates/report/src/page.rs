//! The HTML file: the viewer's page (its markup, style sheet and ES modules, taken from
//! `tiles::assets` as they are) and the report's own module and style, all inline; the
//! plain-HTML sections (the trace and the machine, incidents, statistics, migrations,
//! comparisons); and the data bundle as base64.
//!
//! The modules are kept as separate ES modules: each becomes a `data:` URL named in an
//! import map, their `./x.js` imports renamed to the map's names (`sl/x.js`), since a
//! page opened from `file://` can load neither files beside it nor inline modules by
//! name. A content security policy forbids every request but those data URLs, so
//! nothing leaves the page.

use crate::bundle::Bundle;
use crate::series::{self, RunSeries};
use crate::why_slow::{self, WhySlow};
use crate::{Analysis, Options, ReportTrace};
use analysis::check::Kind;
use base64::Engine;
use experiment::compare::{Comparison, MeasureUnit, compare};
use experiment::profile::Profile;
use model::Nanos;
use std::fmt::Write;
use tiles::assets;

/// The report's own modules (crates/report/web/js), after the viewer's (crates/tiles/web,
/// listed in `tiles::assets`).
const REPORT_MODULES: &[(&str, &str)] = &[
    ("embedded-source.js", include_str!("../web/js/embedded-source.js")),
    ("report.js", include_str!("../web/js/report.js")),
];
const REPORT_CSS: &str = include_str!("../web/report.css");

/// Incidents listed in the page's text at most (the side panel lists more).
const LISTED_INCIDENTS: usize = 30;
/// Command rows of the statistics table at most.
const COMMAND_ROWS: usize = 300;
/// Rows of a comparison table.
const COMPARISON_ROWS: usize = 40;

/// The file around the data bundle.
pub struct Shell {
    head: String,
    tail: String,
}

impl Shell {
    pub fn new(
        traces: &[ReportTrace],
        series: Option<&RunSeries>,
        analyses: &[Analysis],
        comparisons: &[Named],
        options: &Options,
    ) -> Shell {
        let mut names: Vec<&str> = series.map(|s| s.dir.as_str()).into_iter().collect();
        names.extend(traces.iter().map(|t| t.shown.name.as_str()));
        let mut head = String::with_capacity(256 * 1024);
        head.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        head.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        head.push_str(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' data:; style-src 'unsafe-inline'; img-src data:\">\n",
        );
        let _ = writeln!(head, "<title>schedlens report · {}</title>", escape(&names.join(", ")));
        let _ = writeln!(head, "<style>\n{}\n{REPORT_CSS}</style>", assets::style().text());
        let _ = writeln!(head, "<script type=\"importmap\">{}</script>", import_map());
        head.push_str("</head>\n<body>\n<div id=\"report\">\n");
        write_header(&mut head, &names, series.is_some(), traces.len());
        if let Some(series) = series {
            series::write_section(&mut head, series);
        }
        if !traces.is_empty() {
            write_descriptions(&mut head, traces);
            write_timeline(&mut head);
            write_incidents(&mut head, traces, analyses);
            let whys: Vec<&WhySlow> = analyses.iter().map(|a| &a.why_slow).collect();
            why_slow::write_paths(&mut head, traces, &whys);
            why_slow::write_latencies(&mut head, traces, &whys);
            write_statistics(&mut head, traces, analyses);
            write_migrations(&mut head, traces, analyses);
            write_comparisons(&mut head, comparisons);
        }
        let traces: Vec<&str> = traces.iter().map(|t| t.shown.name.as_str()).collect();
        let view = if traces.is_empty() {
            String::new()
        } else {
            format!(
                " For every event, open the trace itself: <code>schedlens view {}</code>.",
                escape(&traces.join(" "))
            )
        };
        let _ = writeln!(
            head,
            "<footer class=\"report-foot\">Made by schedlens {}{}.{view}</footer>\n</div>",
            env!("CARGO_PKG_VERSION"),
            if options.socket_order { " (rows in socket order)" } else { "" },
        );
        head.push_str("<script type=\"application/octet-stream\" id=\"report-data\"");
        let tail = "</script>\n<script type=\"module\">import { start } from 'sl/report.js';\nstart();</script>\n</body>\n</html>\n".to_string();
        Shell { head, tail }
    }

    /// Bytes the file takes besides the bundle (and its few bytes of offsets).
    pub fn fixed_size(&self) -> usize {
        self.head.len() + self.tail.len() + 32
    }

    /// The whole file; the bundle's last part is the document.
    pub fn finish(&self, bundle: &Bundle) -> Vec<u8> {
        let (_, offset, length) = bundle.parts().last().cloned().unwrap_or_default();
        let mut out = self.head.clone();
        let _ = write!(out, " data-doc=\"{offset},{length}\">");
        out.push_str(&bundle.base64());
        out.push_str(&self.tail);
        out.into_bytes()
    }
}

/// The import map naming every module `sl/NAME` as a `data:` URL.
fn import_map() -> String {
    let entries: Vec<String> = assets::modules()
        .chain(REPORT_MODULES.iter().copied())
        .map(|(name, source)| {
            let code = source.replace("from './", "from 'sl/");
            let url = format!("data:text/javascript;base64,{}", base64::engine::general_purpose::STANDARD.encode(code));
            format!("\"sl/{name}\": \"{url}\"")
        })
        .collect();
    format!("{{\"imports\": {{\n{}\n}}}}", entries.join(",\n"))
}

/// The viewer's markup (its `#app` element), as the report's `#viewer`.
fn viewer_markup() -> &'static str {
    let html = assets::page().text();
    let start = html.find("<div id=\"app\">").map_or(0, |i| i + "<div id=\"app\">".len());
    let end = html.rfind("</body>").unwrap_or(html.len());
    let inner = &html[start..end];
    // The markup ends with the closing tag of #app.
    inner.trim_end().strip_suffix("</div>").unwrap_or(inner)
}

fn write_header(out: &mut String, names: &[&str], series: bool, traces: usize) {
    let _ = writeln!(out, "<header class=\"report-head\"><h1><b>schedlens</b> report</h1>");
    let _ = writeln!(out, "<p class=\"files\">{}</p>", names.iter().map(|n| escape(n)).collect::<Vec<_>>().join(" · "));
    let mut links = Vec::new();
    if series {
        links.push(("runs", "Runs"));
    }
    if traces > 0 {
        links.extend([
            ("trace", "Trace and machine"),
            ("timeline", "Timeline"),
            ("incidents", "Incidents"),
            ("critical-path", "Critical path"),
            ("latency", "Wakeup latency"),
            ("statistics", "Statistics"),
            ("migrations", "Migrations"),
        ]);
    }
    if traces > 1 {
        links.push(("comparison", "Comparison"));
    }
    let nav: Vec<String> = links.iter().map(|(id, text)| format!("<a href=\"#{id}\">{text}</a>")).collect();
    let _ = writeln!(out, "<nav>{}</nav></header>", nav.join(""));
}

fn write_descriptions(out: &mut String, traces: &[ReportTrace]) {
    let _ = writeln!(out, "<section id=\"trace\"><h2>Trace and machine</h2>");
    for trace in traces {
        let model = &trace.shown.model;
        let _ = writeln!(out, "<h3>{}</h3>\n<table class=\"facts\">", escape(&trace.shown.name));
        let mut lines = trace.description.clone();
        let span = model.end().0.saturating_sub(model.start().0);
        lines.push(("span".into(), format!("{} s", seconds(span as i64))));
        lines.push(("tasks".into(), (model.tasks().len() - 1).to_string()));
        let lost = model.lost();
        if lost.any() {
            lines.push(("lost events".into(), format!("{lost} (the CPUs' state after a loss is uncertain)")));
        }
        for (anomaly, count, _) in model.anomalies().iter() {
            lines.push(("anomaly".into(), format!("{count} × {}", anomaly.description())));
        }
        for (label, text) in lines {
            let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", escape(&label), escape(&text));
        }
        out.push_str("</table>\n");
    }
    out.push_str("</section>\n");
}

fn write_timeline(out: &mut String) {
    let _ = writeln!(
        out,
        "<section id=\"timeline\"><h2>Timeline</h2>\n<p class=\"hint\">Each row is a CPU, coloured by the task running there; below, the number of tasks running (green) and running or waiting (red), shaded where a task waited while a core idled. Wheel to zoom, drag to pan, hover for the task and the time, click an incident to zoom to it. <span id=\"resolution\"></span></p>"
    );
    let _ = writeln!(out, "<div id=\"viewer\">{}</div>", viewer_markup());
    out.push_str("</section>\n");
}

fn write_incidents(out: &mut String, traces: &[ReportTrace], analyses: &[Analysis]) {
    let _ = writeln!(out, "<section id=\"incidents\"><h2>Incidents</h2>");
    let _ = writeln!(
        out,
        "<p class=\"hint\">What <code>schedlens check</code> finds with its defaults (episodes that lost {} ms of CPU time or more, overload of {} ms or more), ranked by the CPU time lost. Click one to see it on the timeline.</p>",
        analysis::check::DEFAULT_MIN_LOST.0 as f64 / 1e6,
        analysis::check::DEFAULT_MIN_OVERLOAD.0 as f64 / 1e6
    );
    for (n, (trace, analysis)) in traces.iter().zip(analyses).enumerate() {
        let findings = &analysis.findings;
        let _ = writeln!(out, "<h3>{}</h3>", escape(&trace.shown.name));
        let window = findings.window.0.max(1) as f64;
        let counts: Vec<String> = Kind::ALL
            .iter()
            .map(|k| (k, findings.count(*k)))
            .filter(|(_, c)| *c > 0)
            .map(|(k, c)| format!("{c} {}", k.name()))
            .collect();
        let counts = if counts.is_empty() { "none".to_string() } else { counts.join(", ") };
        let w = &findings.wakeups;
        let unknown = findings.idle_while_waiting_unknown.0;
        let _ = writeln!(
            out,
            "<p>{} incidents: {counts}. A task waited while a core idled during {} s{} ({:.1}% of the trace){}. Wakeups: {} in all, {} onto the CPU the task last ran on, {} onto the waker's CPU ({} of them while the previous CPU was idle), {} elsewhere; {} moved away from an idle CPU and then waited 100 µs or more.</p>",
            findings.incidents.len(),
            seconds(findings.idle_while_waiting.0 as i64),
            if unknown == 0 { "" } else { " known" },
            100.0 * findings.idle_while_waiting.0 as f64 / window,
            if unknown == 0 {
                String::new()
            } else {
                format!(
                    ", and {} s ({:.1}%) unknown: tasks waited where a CPU's state is unknown (events lost, before its first event or after its last)",
                    seconds(unknown as i64),
                    100.0 * unknown as f64 / window
                )
            },
            w.total,
            w.previous_cpu,
            w.waker_cpu,
            w.waker_cpu_previous_idle,
            w.elsewhere,
            w.waited_previous_idle
        );
        if findings.incidents.is_empty() {
            continue;
        }
        out.push_str("<ol class=\"report-incidents\">\n");
        for (rank, incident) in findings.incidents.iter().enumerate().take(LISTED_INCIDENTS) {
            let start = trace.shown.relative(incident.start);
            let cpus: Vec<String> = incident.cpus.iter().map(|c| c.0.to_string()).collect();
            let pids: Vec<String> = incident.pids.iter().map(|p| p.0.to_string()).collect();
            let mut facts = vec![duration(incident.end.0.saturating_sub(incident.start.0))];
            if incident.lost_cpu_ns > 0 {
                facts.push(format!("lost {}", duration(incident.lost_cpu_ns)));
            }
            if !cpus.is_empty() {
                facts.push(format!("CPU {}", cpus.join(", ")));
            }
            if !pids.is_empty() {
                facts.push(format!("pid {}", pids.join(", ")));
            }
            match incident.pinning {
                analysis::check::Pinning::No => {}
                analysis::check::Pinning::Possibly => facts.push("possibly pinned".into()),
                analysis::check::Pinning::Recorded => facts.push("pinned".into()),
            }
            let _ = writeln!(
                out,
                "<li><a href=\"#timeline\" class=\"show-incident\" data-trace=\"{n}\" data-rank=\"{}\"><span class=\"rank\">{}</span> <span class=\"kind kind-{}\">{}</span> at {} s</a> <span class=\"muted\">{}</span><p>{}</p></li>",
                rank + 1,
                rank + 1,
                incident.kind.name(),
                incident.kind.name(),
                seconds(start),
                escape(&facts.join(" · ")),
                escape(&incident.explanation)
            );
        }
        out.push_str("</ol>\n");
        if findings.incidents.len() > LISTED_INCIDENTS {
            let _ = writeln!(
                out,
                "<p class=\"muted\">…and {} more, in the timeline's side panel.</p>",
                findings.incidents.len() - LISTED_INCIDENTS
            );
        }
    }
    out.push_str("</section>\n");
}

/// A table header cell: `numeric` columns sort largest first.
pub(crate) fn th(text: &str, numeric: bool) -> String {
    format!("<th data-sort=\"{}\">{text}</th>", if numeric { "num" } else { "text" })
}

/// A numeric cell sorted by `value`.
pub(crate) fn td(value: impl std::fmt::Display, text: &str) -> String {
    format!("<td data-v=\"{value}\">{text}</td>")
}

fn write_statistics(out: &mut String, traces: &[ReportTrace], analyses: &[Analysis]) {
    let _ = writeln!(
        out,
        "<section id=\"statistics\"><h2>Statistics</h2>\n<p class=\"hint\">As <code>schedlens stats</code> counts them over the whole trace. Click a column's title to sort by it.</p>"
    );
    for (trace, analysis) in traces.iter().zip(analyses) {
        let stats = &analysis.stats;
        let _ = writeln!(out, "<h3>{}: per command</h3>", escape(&trace.shown.name));
        out.push_str("<div class=\"table-box\"><table class=\"stats sortable\"><thead><tr>");
        for (text, numeric) in [
            ("command", false),
            ("tasks", true),
            ("run time (s)", true),
            ("switches", true),
            ("waited (s)", true),
            ("longest wait (ms)", true),
            ("migrations", true),
            ("first run (s)", true),
            ("last run (s)", true),
        ] {
            out.push_str(&th(text, numeric));
        }
        out.push_str("</tr></thead><tbody>\n");
        for row in stats.rows.iter().take(COMMAND_ROWS) {
            let time = |t: Option<Nanos>| {
                t.map_or((i64::MIN, "-".to_string()), |t| (trace.shown.relative(t), seconds(trace.shown.relative(t))))
            };
            let (first, first_text) = time(row.first_run);
            let (last, last_text) = time(row.last_run);
            let _ = writeln!(
                out,
                "<tr><td>{}</td>{}{}{}{}{}{}{}{}</tr>",
                escape(&row.comm),
                td(row.pids, &row.pids.to_string()),
                td(row.runtime_ns, &seconds(row.runtime_ns as i64)),
                td(row.switches, &row.switches.to_string()),
                td(row.wait_ns, &seconds(row.wait_ns as i64)),
                td(row.max_wait_ns, &format!("{:.3}", row.max_wait_ns as f64 / 1e6)),
                td(row.migrations, &row.migrations.to_string()),
                td(first, &first_text),
                td(last, &last_text),
            );
        }
        out.push_str("</tbody></table></div>\n");
        if stats.rows.len() > COMMAND_ROWS {
            let _ =
                writeln!(out, "<p class=\"muted\">{} commands ran longest of {}.</p>", COMMAND_ROWS, stats.rows.len());
        }
        let _ = writeln!(out, "<h3>{}: per CPU</h3>", escape(&trace.shown.name));
        out.push_str("<div class=\"table-box\"><table class=\"stats sortable\"><thead><tr>");
        for (text, numeric) in [
            ("CPU", true),
            ("busy", true),
            ("idle", true),
            ("unknown", true),
            ("tasks waiting", true),
            ("busy (s)", true),
        ] {
            out.push_str(&th(text, numeric));
        }
        out.push_str("</tr></thead><tbody>\n");
        let window = stats.window.len().0.max(1) as f64;
        let share = |ns: u64| (ns, format!("{:.1}%", 100.0 * ns as f64 / window));
        for cpu in &stats.cpus {
            let cells: Vec<String> = [cpu.busy_ns, cpu.idle_ns, cpu.uncertain_ns, cpu.waiting_ns]
                .into_iter()
                .map(|ns| {
                    let (value, text) = share(ns);
                    td(value, &text)
                })
                .collect();
            let _ = writeln!(
                out,
                "<tr>{}{}{}</tr>",
                td(cpu.cpu.0, &cpu.cpu.0.to_string()),
                cells.join(""),
                td(cpu.busy_ns, &seconds(cpu.busy_ns as i64))
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    out.push_str("</section>\n");
}

fn write_migrations(out: &mut String, traces: &[ReportTrace], analyses: &[Analysis]) {
    let _ = writeln!(
        out,
        "<section id=\"migrations\"><h2>Migrations</h2>\n<p class=\"hint\">How often a task left one CPU (row) for another (column); darker is more. Hover for the count.</p>"
    );
    for (n, (trace, analysis)) in traces.iter().zip(analyses).enumerate() {
        let matrix = &analysis.findings.migrations;
        let total = matrix.total();
        let _ = writeln!(out, "<h3>{}</h3>\n<p>{total} migrations.</p>", escape(&trace.shown.name));
        let _ =
            writeln!(out, "<div class=\"heat-box\"><canvas class=\"migration-map\" data-trace=\"{n}\"></canvas></div>");
    }
    out.push_str("</section>\n");
}

/// Two traces' comparison and their names.
pub struct Named {
    a: String,
    b: String,
    comparison: Comparison,
}

/// The first trace compared with each other one, as `schedlens compare` compares them.
pub fn comparisons(traces: &[ReportTrace]) -> Vec<Named> {
    let profile = |t: &ReportTrace| {
        Profile::of(&t.shown.model, t.shown.topology.as_ref(), t.affinity.as_ref(), t.command_pid, false)
    };
    let first = profile(&traces[0]);
    traces[1..]
        .iter()
        .map(|other| Named {
            a: traces[0].shown.name.clone(),
            b: other.shown.name.clone(),
            comparison: compare(&first, &profile(other)),
        })
        .collect()
}

fn write_comparisons(out: &mut String, comparisons: &[Named]) {
    if comparisons.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section id=\"comparison\"><h2>Comparison</h2>\n<p class=\"hint\">As <code>schedlens compare</code> compares the traced command's workload: what differs, the time measures first (share: of the difference in running time).</p>"
    );
    for named in comparisons {
        let c = &named.comparison;
        let percent = 100.0 * c.difference() / c.running_a.max(f64::MIN_POSITIVE);
        let _ = writeln!(
            out,
            "<h3>A: {} · B: {}</h3>\n<p>Running time: A {:.6} s, B {:.6} s ({:+.6} s, {percent:+.1}%).</p>",
            escape(&named.a),
            escape(&named.b),
            c.running_a,
            c.running_b,
            c.difference()
        );
        out.push_str("<div class=\"table-box\"><table class=\"stats sortable\"><thead><tr>");
        for (text, numeric) in [("measure", false), ("A", true), ("B", true), ("B − A", true), ("share", true)] {
            out.push_str(&th(text, numeric));
        }
        out.push_str("</tr></thead><tbody>\n");
        for row in c.rows.iter().take(COMPARISON_ROWS) {
            let digits = if row.unit == MeasureUnit::Count { 0 } else { 6 };
            let share = c.share(row);
            let _ = writeln!(
                out,
                "<tr><td>{}</td>{}{}{}{}</tr>",
                escape(&row.what),
                td(row.a, &format!("{:.digits$}", row.a)),
                td(row.b, &format!("{:.digits$}", row.b)),
                td(row.delta(), &format!("{:+.digits$}", row.delta())),
                td(share.unwrap_or(f64::NAN), &share.map_or(String::new(), |s| format!("{:.0}%", 100.0 * s))),
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    out.push_str("</section>\n");
}

/// Seconds with six decimals (`-` sign kept).
pub(crate) fn seconds(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let ns = ns.unsigned_abs();
    format!("{sign}{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

/// A duration in the unit that suits it.
fn duration(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} ms", ns as f64 / 1e6),
        _ => format!("{:.3} s", ns as f64 / 1e9),
    }
}

/// Text as HTML.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_module_of_the_report_is_embedded() {
        let mut on_disk: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("web/js"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut names: Vec<String> = REPORT_MODULES.iter().map(|(n, _)| n.to_string()).collect();
        names.sort();
        assert_eq!(names, on_disk);
    }

    #[test]
    fn the_viewer_markup_is_its_app_element() {
        let markup = viewer_markup();
        assert!(markup.contains("id=\"panels\"") && markup.contains("id=\"tooltip\""));
        assert!(!markup.contains("<body") && !markup.contains("id=\"app\""));
    }

    #[test]
    fn module_imports_point_into_the_import_map() {
        let map = import_map();
        assert!(map.contains("\"sl/main.js\": \"data:text/javascript;base64,"));
        assert!(!map.contains("from './"));
    }

    #[test]
    fn text_formats() {
        assert_eq!(seconds(1_234_567_890), "1.234567");
        assert_eq!(seconds(-5_000), "-0.000005");
        assert_eq!(duration(4_200_000), "4.2 ms");
        assert_eq!(escape("<a href='x'>&"), "&lt;a href=&#39;x&#39;&gt;&amp;");
    }
}
