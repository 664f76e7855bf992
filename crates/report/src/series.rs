//! A run series (`schedlens runs`'s results directory) in the report: the command and its
//! settings, each setting's running times and each against the first as `runs`'s summary
//! computes them (median, IQR, bootstrap interval, Mann-Whitney U), the scheduler
//! metrics that went with slower runs, the sorted running times as the figure `runs`
//! draws (an SVG image), and every run (recorded runs with their p50 and p99 wakeup
//! latency and the critical path's scheduler share, `unknown` in results made before
//! schedlens measured them). When the runs were recorded, the report's
//! traces are the fastest and the slowest run, side by side with `compare`'s table.

use crate::page::{escape, td, th};
use documents::runs::Results;
use experiment::figure::running_times_figure;
use experiment::statistics;
use experiment::summary::{SweepSummary, p_value};
use std::fmt::Write;

/// A results directory, read back.
pub struct RunSeries {
    /// The directory as the user named it (for the commands the summary suggests).
    pub dir: String,
    pub results: Results,
}

impl RunSeries {
    /// The fastest and slowest successful runs (indices into the runs), when they differ
    /// or there is only one.
    pub fn extremes(&self) -> Vec<usize> {
        let summary = SweepSummary::of(&self.results);
        let mut runs: Vec<usize> = summary.fastest.into_iter().chain(summary.slowest).collect();
        runs.dedup();
        runs
    }

    /// "fastest: run 3 (as found, 0.4123 s)".
    pub fn describe_run(&self, index: usize, role: &str) -> String {
        let run = &self.results.runs[index];
        format!("{role}: run {} ({}, {:.4} s)", run.order, self.results.label(run.setting), run.wall_s)
    }
}

/// The series' section.
pub fn write_section(out: &mut String, series: &RunSeries) {
    let results = &series.results;
    let summary = SweepSummary::of(results);
    let _ = writeln!(out, "<section id=\"runs\"><h2>Runs</h2>");
    let _ = writeln!(
        out,
        "<p class=\"hint\">The results of <code>schedlens runs</code> in <code>{}</code>, with the statistics its summary gives. Click a column's title to sort by it.</p>",
        escape(&series.dir)
    );
    let _ = writeln!(
        out,
        "<table class=\"facts\"><tr><th>command</th><td><code>{}</code></td></tr>",
        escape(&results.command.join(" "))
    );
    let _ = writeln!(
        out,
        "<tr><th>runs</th><td>{} runs: {} setting{} × {} repetitions, interleaved, {} s sleep before each{}</td></tr>",
        results.runs.len(),
        results.settings.len(),
        if results.settings.len() == 1 { "" } else { "s" },
        results.repetitions,
        results.sleep_s,
        if results.recorded { ", each recorded" } else { "" }
    );
    for knob in &results.knobs {
        let _ = writeln!(
            out,
            "<tr><th>knob</th><td>{} ({}): was {}, restored</td></tr>",
            escape(&knob.name),
            escape(&knob.path),
            escape(&knob.original)
        );
    }
    if let Some(signal) = results.interrupted_by {
        let _ = writeln!(out, "<tr><th>stopped</th><td>by signal {signal}</td></tr>");
    }
    out.push_str("</table>\n");
    write_settings(out, &summary);
    write_figure(out, results);
    write_correlations(out, results, &summary);
    write_run_list(out, results, &summary);
    let _ = writeln!(
        out,
        "<details><summary>The summary as <code>schedlens runs</code> prints it</summary><pre class=\"summary\">{}</pre></details>",
        escape(&summary.to_text(results).replace("DIR/", &format!("{}/", series.dir)))
    );
    out.push_str("</section>\n");
}

/// Per setting its running times, and against the first setting.
fn write_settings(out: &mut String, summary: &SweepSummary) {
    let _ = writeln!(out, "<h3>Running time per setting (s)</h3>");
    out.push_str("<div class=\"table-box\"><table class=\"stats sortable\" id=\"settings\"><thead><tr>");
    let mut headers = vec![
        ("setting", false),
        ("n", true),
        ("failed", true),
        ("median", true),
        ("IQR", true),
        ("min", true),
        ("max", true),
        ("spread", true),
    ];
    if !summary.versus.is_empty() {
        headers.extend([("median − first", true), ("95% CI", false), ("Mann-Whitney U", true), ("p", true)]);
    }
    for (text, numeric) in headers {
        out.push_str(&th(text, numeric));
    }
    out.push_str("</tr></thead><tbody>\n");
    for (s, setting) in summary.settings.iter().enumerate() {
        let _ = write!(out, "<tr><td>{}</td>", escape(&setting.label));
        match &setting.times {
            Some(t) => {
                let cells = [
                    td(t.n, &t.n.to_string()),
                    td(setting.failed, &setting.failed.to_string()),
                    td(t.median, &format!("{:.4}", t.median)),
                    td(t.iqr(), &format!("{:.4}", t.iqr())),
                    td(t.min, &format!("{:.4}", t.min)),
                    td(t.max, &format!("{:.4}", t.max)),
                    td(t.spread(), &format!("{:.1}%", 100.0 * t.spread())),
                ];
                out.push_str(&cells.concat());
            }
            None => {
                let _ = write!(
                    out,
                    "{}{}<td colspan=\"5\">no successful run</td>",
                    td(0, "0"),
                    td(setting.failed, &setting.failed.to_string())
                );
            }
        }
        if !summary.versus.is_empty() {
            match summary.versus.iter().find(|v| v.setting == s) {
                Some(v) => {
                    let interval =
                        v.interval.map_or_else(|| "-".to_string(), |(low, high)| format!("[{low:+.4}, {high:+.4}]"));
                    let cells = [
                        td(v.difference, &format!("{:+.4} ({:+.1}%)", v.difference, 100.0 * v.relative)),
                        format!("<td>{interval}</td>"),
                        v.test.as_ref().map_or_else(|| td(f64::NAN, "-"), |t| td(t.u, &t.u.to_string())),
                        v.test.as_ref().map_or_else(|| td(f64::NAN, "-"), |t| td(t.p, &p_value(t.p))),
                    ];
                    out.push_str(&cells.concat());
                }
                None => out.push_str("<td>baseline</td><td></td><td></td><td></td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    if !summary.versus.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"muted\">Against the first setting: the difference of medians with its bootstrap 95% interval ({} resamples of each setting, seed {:#x}) and the two-sided Mann-Whitney U test.</p>",
            statistics::BOOTSTRAP_RESAMPLES,
            statistics::BOOTSTRAP_SEED
        );
    }
}

/// The sorted running times, as `runs` draws them, as an SVG image.
fn write_figure(out: &mut String, results: &Results) {
    let _ = writeln!(
        out,
        "<h3>Running times, sorted</h3>\n<img class=\"running-times\" alt=\"the runs' running times, sorted, one series per setting\" src=\"{}\">",
        crate::image(running_times_figure(results))
    );
}

/// Running time against each scheduler metric (recorded runs only).
fn write_correlations(out: &mut String, results: &Results, summary: &SweepSummary) {
    if results.metrics.is_empty() || summary.correlations.is_empty() {
        return;
    }
    let n = summary.correlations[0].n;
    let _ = writeln!(out, "<h3>Running time against the scheduler metrics (Spearman, {n} successful runs)</h3>");
    if let Some(sentence) = summary.sentence(results) {
        let _ = writeln!(out, "<p>{}.</p>", escape(&sentence));
    }
    out.push_str("<div class=\"table-box\"><table class=\"stats sortable\"><thead><tr>");
    for (text, numeric) in [("metric", false), ("Spearman", true), ("p", true)] {
        out.push_str(&th(text, numeric));
    }
    out.push_str("</tr></thead><tbody>\n");
    for c in &summary.correlations {
        let metric = escape(&results.metrics[c.metric].key);
        match c.rho {
            Some((rho, p)) => {
                let _ =
                    writeln!(out, "<tr><td>{metric}</td>{}{}</tr>", td(rho, &format!("{rho:.2}")), td(p, &p_value(p)));
            }
            None => {
                let _ =
                    writeln!(out, "<tr><td>{metric}</td>{}<td>{}</td></tr>", td(f64::NAN, "-"), c.missing_because());
            }
        }
    }
    for key in experiment::summary::unknown_metrics(results) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td>{}<td>unknown: these results predate it</td></tr>",
            escape(&key),
            td(f64::NAN, "-")
        );
    }
    out.push_str("</tbody></table></div>\n");
}

/// The metrics the run list shows of recorded runs: key, column title, scale.
const LISTED_METRICS: [(&str, &str, f64); 3] = [
    ("wakeup_latency_p50_s", "wakeup p50 (ms)", 1e3),
    ("wakeup_latency_p99_s", "wakeup p99 (ms)", 1e3),
    ("critical_path_scheduler_share", "scheduler share of the critical path (%)", 1e2),
];

/// A listed metric's cells of a run: its value, or `unknown` where the run has none or
/// the results predate the metric.
fn metric_cells(results: &Results, run: &documents::runs::SweepRun) -> String {
    LISTED_METRICS
        .iter()
        .map(|(key, _, scale)| {
            let index = results.metrics.iter().position(|m| m.key == *key);
            match index.and_then(|i| run.metrics.get(i).copied().flatten()) {
                Some(value) => td(value, &format!("{:.3}", value * scale)),
                None => td(f64::NAN, "unknown"),
            }
        })
        .collect()
}

/// Every run, in the order they ran; recorded runs with their wakeup latency and the
/// critical path's scheduler share.
fn write_run_list(out: &mut String, results: &Results, summary: &SweepSummary) {
    let _ = writeln!(out, "<h3>Every run</h3>");
    out.push_str("<div class=\"table-box\"><table class=\"stats sortable\" id=\"run-list\"><thead><tr>");
    let mut columns = vec![
        ("run", true),
        ("setting", false),
        ("repetition", true),
        ("wall (s)", true),
        ("user (s)", true),
        ("sys (s)", true),
        ("exit", false),
        ("trace", false),
    ];
    if results.recorded {
        columns.extend(LISTED_METRICS.iter().map(|(_, title, _)| (*title, true)));
    }
    for (text, numeric) in columns {
        out.push_str(&th(text, numeric));
    }
    out.push_str("</tr></thead><tbody>\n");
    for (i, run) in results.runs.iter().enumerate() {
        let role = if Some(i) == summary.fastest {
            " (fastest)"
        } else if Some(i) == summary.slowest {
            " (slowest)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "<tr{}><td data-v=\"{}\">{}{role}</td><td>{}</td>{}{}{}{}<td>{}</td><td>{}</td>{}</tr>",
            if run.ok { "" } else { " class=\"failed\"" },
            run.order,
            run.order,
            escape(&results.label(run.setting)),
            td(run.repetition, &run.repetition.to_string()),
            td(run.wall_s, &format!("{:.4}", run.wall_s)),
            td(run.user_s, &format!("{:.4}", run.user_s)),
            td(run.sys_s, &format!("{:.4}", run.sys_s)),
            escape(&run.exit),
            escape(run.trace.as_deref().unwrap_or("")),
            if results.recorded { metric_cells(results, run) } else { String::new() },
        );
    }
    out.push_str("</tbody></table></div>\n");
}
