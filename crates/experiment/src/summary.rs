//! The summary of a sweep: per setting the median running time, interquartile range,
//! minimum, maximum and spread; each setting against the first (the baseline) as the
//! difference of medians with its bootstrap 95% interval and the Mann-Whitney U p-value;
//! across all successful runs, Spearman's correlation of running time with each scheduler
//! metric, strongest first, the strongest put in a sentence; the fastest and slowest runs
//! and the command that compares them. Failed runs are listed, never counted.

use crate::profile::metric_catalog;
use crate::statistics::{self, MannWhitney, Quartiles};
use documents::runs::{BootstrapSettings, MetricCorrelation, Results, RunsSummary, SettingTimes, VersusFirst};
use std::fmt::Write as _;

/// One setting's running times.
#[derive(Clone, Debug)]
pub struct SettingSummary {
    pub label: String,
    pub times: Option<Quartiles>,
    pub failed: usize,
}

/// A setting against the baseline.
#[derive(Clone, Debug)]
pub struct Versus {
    pub setting: usize,
    /// median(setting) − median(baseline), in seconds.
    pub difference: f64,
    /// The difference over the baseline's median.
    pub relative: f64,
    pub interval: Option<(f64, f64)>,
    pub test: Option<MannWhitney>,
}

/// Running time against one metric over the successful runs.
#[derive(Clone, Debug)]
pub struct Correlation {
    /// Index into the results' metrics.
    pub metric: usize,
    pub n: usize,
    /// Spearman's rho and its p-value; `None` when there were too few runs or the metric
    /// did not vary.
    pub rho: Option<(f64, f64)>,
}

impl Correlation {
    /// Why there is no rho (when there is none).
    pub fn missing_because(&self) -> &'static str {
        if self.n < statistics::SPEARMAN_MIN_PAIRS { "too few runs (3 needed)" } else { "did not vary (or unknown)" }
    }
}

/// The statistics of a sweep's results.
#[derive(Clone, Debug)]
pub struct SweepSummary {
    pub settings: Vec<SettingSummary>,
    pub versus: Vec<Versus>,
    /// Strongest first; metrics that did not vary last.
    pub correlations: Vec<Correlation>,
    /// Indices into the runs of the fastest and slowest successful runs.
    pub fastest: Option<usize>,
    pub slowest: Option<usize>,
}

impl SweepSummary {
    pub fn of(results: &Results) -> SweepSummary {
        let settings: Vec<SettingSummary> = (0..results.settings.len())
            .map(|s| SettingSummary {
                label: results.label(s),
                times: Quartiles::of(&results.times(s)),
                failed: results.failed().filter(|r| r.setting == s).count(),
            })
            .collect();
        let baseline = results.times(0);
        let versus = (1..results.settings.len()).map(|s| versus(s, &baseline, &results.times(s))).collect();
        let ok: Vec<usize> = (0..results.runs.len()).filter(|&i| results.runs[i].ok).collect();
        let by_time = |a: &&usize, b: &&usize| results.runs[**a].wall_s.total_cmp(&results.runs[**b].wall_s);
        SweepSummary {
            settings,
            versus,
            correlations: correlations(results, &ok),
            fastest: ok.iter().min_by(by_time).copied(),
            slowest: ok.iter().max_by(by_time).copied(),
        }
    }

    /// The summary in words and tables, 80 columns or so.
    pub fn to_text(&self, results: &Results) -> String {
        let mut out = String::new();
        self.write_header(&mut out, results);
        self.write_settings(&mut out, results);
        self.write_versus(&mut out);
        self.write_correlations(&mut out, results);
        self.write_extremes(&mut out, results);
        out
    }

    fn write_header(&self, out: &mut String, results: &Results) {
        let runs = results.runs.len();
        let planned = results.settings.len() * results.repetitions;
        let _ = writeln!(out, "command: {}", results.command.join(" "));
        let _ = writeln!(
            out,
            "{runs} runs: {} setting{} x {} repetitions, interleaved, {} s sleep before each{}",
            results.settings.len(),
            if results.settings.len() == 1 { "" } else { "s" },
            results.repetitions,
            results.sleep_s,
            if results.recorded { ", each recorded" } else { "" }
        );
        if let Some(signal) = results.interrupted_by {
            let _ = writeln!(out, "stopped by signal {signal} after {runs} of {planned} runs");
        }
        for knob in &results.knobs {
            let _ = writeln!(out, "knob {} ({}): was {}, restored", knob.name, knob.path, knob.original);
        }
        for (s, setting) in results.settings.iter().enumerate() {
            for ((knob, value), shown) in results.knobs.iter().zip(&setting.values).zip(&setting.shown) {
                if let Some(shown) = shown.as_ref().filter(|shown| *shown != value) {
                    let _ = writeln!(
                        out,
                        "note: setting {} wrote {value} to {}; the kernel shows {shown}",
                        s + 1,
                        knob.name
                    );
                }
            }
        }
    }

    fn write_settings(&self, out: &mut String, results: &Results) {
        let width = self.settings.iter().map(|s| s.label.len()).max().unwrap_or(7).max(7);
        let _ = writeln!(out, "\nrunning time (s)");
        let _ = writeln!(
            out,
            "  {:<width$} {:>3} {:>10} {:>9} {:>10} {:>10} {:>7}",
            "setting", "n", "median", "IQR", "min", "max", "spread"
        );
        for setting in &self.settings {
            match &setting.times {
                Some(t) => {
                    let _ = writeln!(
                        out,
                        "  {:<width$} {:>3} {:>10.4} {:>9.4} {:>10.4} {:>10.4} {:>6.1}%",
                        setting.label,
                        t.n,
                        t.median,
                        t.iqr(),
                        t.min,
                        t.max,
                        100.0 * t.spread()
                    );
                }
                None => {
                    let _ = writeln!(out, "  {:<width$} {:>3}   (no successful run)", setting.label, 0);
                }
            }
        }
        let failed: Vec<String> = results
            .failed()
            .map(|r| format!("run {} ({}, {}, output in {})", r.order, results.label(r.setting), r.exit, r.log))
            .collect();
        if failed.is_empty() {
            let _ = writeln!(out, "failed runs: none");
        } else {
            let _ = writeln!(out, "failed runs, left out of every figure above: {}", failed.join("; "));
        }
    }

    fn write_versus(&self, out: &mut String) {
        if self.versus.is_empty() {
            return;
        }
        let _ = writeln!(out, "\nagainst the first setting ({}):", self.settings[0].label);
        for v in &self.versus {
            let interval = v.interval.map_or_else(
                || "no interval".to_string(),
                |(low, high)| format!("95% CI [{:+.4}, {:+.4}] s", low, high),
            );
            let test = v
                .test
                .as_ref()
                .map_or_else(|| "no test".to_string(), |t| format!("Mann-Whitney U {} p = {}", t.u, p_value(t.p)));
            let _ = writeln!(
                out,
                "  {}: median {:+.4} s ({:+.1}%), {interval}, {test}",
                self.settings[v.setting].label,
                v.difference,
                100.0 * v.relative
            );
        }
        let _ = writeln!(
            out,
            "  (bootstrap: {} resamples of each setting, seed {:#x}; p-values two-sided)",
            statistics::BOOTSTRAP_RESAMPLES,
            statistics::BOOTSTRAP_SEED
        );
    }

    fn write_correlations(&self, out: &mut String, results: &Results) {
        if results.metrics.is_empty() {
            return;
        }
        let varied: Vec<&Correlation> = self.correlations.iter().filter(|c| c.rho.is_some()).collect();
        let n = self.correlations.first().map_or(0, |c| c.n);
        let _ = writeln!(out, "\nrunning time against the scheduler metrics (Spearman, {n} successful runs):");
        if let Some(sentence) = self.sentence(results) {
            let _ = writeln!(out, "  {sentence}");
        }
        for c in &varied {
            let (rho, p) = c.rho.expect("varied");
            let _ = writeln!(out, "  {:>6.2}  p = {:<8} {}", rho, p_value(p), results.metrics[c.metric].key);
        }
        let missing: Vec<&Correlation> = self.correlations.iter().filter(|c| c.rho.is_none()).collect();
        for reason in missing.iter().map(|c| c.missing_because()).collect::<std::collections::BTreeSet<_>>() {
            let keys: Vec<&str> = missing
                .iter()
                .filter(|c| c.missing_because() == reason)
                .map(|c| results.metrics[c.metric].key.as_str())
                .collect();
            let _ = writeln!(out, "  {reason}: {}", keys.join(", "));
        }
        let unknown = unknown_metrics(results);
        if !unknown.is_empty() {
            let _ = writeln!(out, "  unknown, these results predate them: {}", unknown.join(", "));
        }
        if results.settings.len() > 1 {
            let _ = writeln!(out, "  (all settings pooled: a setting's own effect counts in these)");
        }
    }

    /// "runs were slower when more CPU time was lost to idle-while-waiting: Spearman 0.91".
    pub fn sentence(&self, results: &Results) -> Option<String> {
        let strongest = self.correlations.first()?;
        let (rho, p) = strongest.rho?;
        let phrase = results.metrics[strongest.metric].worded(rho > 0.0);
        let caution = if p < 0.05 { "" } else { " (weak evidence: p >= 0.05)" };
        Some(format!("runs were slower when {phrase}: Spearman {rho:.2}, p = {}{caution}", p_value(p)))
    }

    fn write_extremes(&self, out: &mut String, results: &Results) {
        let (Some(fast), Some(slow)) = (self.fastest, self.slowest) else { return };
        let describe = |i: usize| {
            let run = &results.runs[i];
            format!("run {} ({}, {:.4} s)", run.order, results.label(run.setting), run.wall_s)
        };
        let _ = writeln!(out, "\nfastest: {}; slowest: {}", describe(fast), describe(slow));
        if let (Some(a), Some(b)) = (&results.runs[fast].trace, &results.runs[slow].trace) {
            let _ = writeln!(out, "compare them: schedlens compare DIR/{a} DIR/{b}");
        }
    }

    /// The same numbers as `summary.json`'s document.
    pub fn to_document(&self, results: &Results) -> RunsSummary {
        let finite = |x: f64| Some(x).filter(|x| x.is_finite());
        let settings = self
            .settings
            .iter()
            .map(|s| {
                let t = s.times.as_ref();
                SettingTimes {
                    setting: s.label.clone(),
                    n: t.map_or(0, |t| t.n),
                    failed: s.failed,
                    median_s: t.map(|t| t.median),
                    q1_s: t.map(|t| t.q1),
                    q3_s: t.map(|t| t.q3),
                    iqr_s: t.map(|t| t.iqr()),
                    min_s: t.map(|t| t.min),
                    max_s: t.map(|t| t.max),
                    spread: t.map(|t| t.spread()).and_then(finite),
                }
            })
            .collect();
        let versus_first = self
            .versus
            .iter()
            .map(|v| VersusFirst {
                setting: self.settings[v.setting].label.clone(),
                baseline: self.settings[0].label.clone(),
                median_difference_s: finite(v.difference),
                relative: finite(v.relative),
                ci95_s: v.interval,
                mann_whitney_u: v.test.as_ref().map(|t| t.u),
                p: v.test.as_ref().map(|t| t.p),
                exact: v.test.as_ref().map(|t| t.exact),
            })
            .collect();
        let correlations = self
            .correlations
            .iter()
            .map(|c| MetricCorrelation {
                metric: results.metrics[c.metric].key.clone(),
                n: c.n,
                spearman: c.rho.map(|r| r.0),
                p: c.rho.map(|r| r.1),
            })
            .collect();
        let run = |i: Option<usize>| i.map(|i| results.runs[i].order);
        RunsSummary {
            settings,
            versus_first,
            correlations,
            sentence: self.sentence(results),
            unknown_metrics: unknown_metrics(results),
            fastest_run: run(self.fastest),
            slowest_run: run(self.slowest),
            bootstrap: BootstrapSettings {
                resamples: statistics::BOOTSTRAP_RESAMPLES,
                seed: statistics::BOOTSTRAP_SEED,
            },
        }
    }
}

fn versus(setting: usize, baseline: &[f64], times: &[f64]) -> Versus {
    let (base, this) = (statistics::median(baseline), statistics::median(times));
    let difference = match (base, this) {
        (Some(b), Some(t)) => t - b,
        _ => f64::NAN,
    };
    Versus {
        setting,
        difference,
        relative: base.map_or(f64::NAN, |b| difference / b),
        interval: statistics::bootstrap_median_difference(baseline, times),
        test: statistics::mann_whitney(baseline, times),
    }
}

fn correlations(results: &Results, ok: &[usize]) -> Vec<Correlation> {
    let mut correlations: Vec<Correlation> = (0..results.metrics.len())
        .map(|metric| {
            let pairs: Vec<(f64, f64)> = ok
                .iter()
                .filter_map(|&i| {
                    let run = &results.runs[i];
                    Some((run.wall_s, (*run.metrics.get(metric)?)?))
                })
                .collect();
            let (x, y): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
            Correlation { metric, n: pairs.len(), rho: statistics::spearman(&x, &y) }
        })
        .collect();
    let strength = |c: &Correlation| c.rho.map_or(-1.0, |r| r.0.abs());
    correlations.sort_by(|a, b| strength(b).total_cmp(&strength(a)).then(a.metric.cmp(&b.metric)));
    correlations
}

/// The metrics this schedlens gives a recorded run that recorded `results` do not hold
/// (made by an older one): unknown, never computed after the fact nor guessed.
pub fn unknown_metrics(results: &Results) -> Vec<String> {
    if !results.recorded {
        return Vec::new();
    }
    let held = |key: &str| results.metrics.iter().any(|m| m.key == key);
    metric_catalog().into_iter().map(|m| m.key).filter(|key| !held(key)).collect()
}

/// `0.0031`, `< 0.0001`.
pub fn p_value(p: f64) -> String {
    if p < 1e-4 { "< 0.0001".to_string() } else { format!("{p:.4}") }
}
