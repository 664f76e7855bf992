//! The documents of a `schedlens runs` results directory: `results.json` (every run, read
//! back by `runs --report` and `schedlens report DIR`) and `summary.json` (the
//! statistics of the summary).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Everything a sweep measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Results {
    /// The command run, with its arguments.
    pub command: Vec<String>,
    /// Runs planned per setting.
    pub repetitions: usize,
    /// The pause before each run, in seconds.
    pub sleep_s: f64,
    /// Whether every run was recorded (and has a trace and metrics).
    pub recorded: bool,
    /// The knobs the sweep set, in the order of each setting's values.
    pub knobs: Vec<KnobRecord>,
    /// Every combination of the knobs' values, the first knob's values outermost.
    pub settings: Vec<Setting>,
    /// The scheduler metrics of each recorded run, in the order of each run's `metrics`.
    pub metrics: Vec<MetricInfo>,
    /// The runs, in the order they ran.
    pub runs: Vec<SweepRun>,
    /// The signal that stopped the sweep early, if one did.
    pub interrupted_by: Option<i32>,
}

impl Results {
    /// The label of setting `setting` (see [`Setting::label`]).
    pub fn label(&self, setting: usize) -> String {
        self.settings[setting].label(&self.knobs)
    }

    /// Successful runs' wall times of a setting, in execution order.
    pub fn times(&self, setting: usize) -> Vec<f64> {
        self.runs.iter().filter(|r| r.setting == setting && r.ok).map(|r| r.wall_s).collect()
    }

    pub fn failed(&self) -> impl Iterator<Item = &SweepRun> {
        self.runs.iter().filter(|r| !r.ok)
    }
}

/// A knob of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KnobRecord {
    /// The knob as the user named it (`kernel.sched_rr_timeslice_ms`, `sched/base_slice_ns`).
    pub name: String,
    /// The file it is.
    pub path: String,
    /// Its value before the sweep, written back after it.
    pub original: String,
}

/// One combination of knob values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Setting {
    /// One value per knob, in the knobs' order.
    pub values: Vec<String>,
    /// What the kernel showed after each write (it may round or clamp).
    pub shown: Vec<Option<String>>,
}

impl Setting {
    /// `kernel.sched_rr_timeslice_ms=10 kernel.sched_autogroup_enabled=0`, or `as found`.
    pub fn label(&self, knobs: &[KnobRecord]) -> String {
        if knobs.is_empty() {
            return "as found".to_string();
        }
        let parts: Vec<String> = knobs.iter().zip(&self.values).map(|(k, v)| format!("{}={v}", k.name)).collect();
        parts.join(" ")
    }
}

/// A metric of a run: its column name, unit, and how the summary words it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MetricInfo {
    /// The metric's name, e.g. `idle_while_waiting_s` (its column in `results.csv`).
    pub key: String,
    /// `s`, `share` or `count`.
    pub unit: String,
    /// The words after "runs were slower when", with `{}` for "more" or "less"/"fewer".
    pub phrase: String,
}

impl MetricInfo {
    /// The phrase for a direction: "more ..." or "less ..." ("fewer" for counts).
    pub fn worded(&self, more: bool) -> String {
        let word = match (more, self.unit.as_str()) {
            (true, _) => "more",
            (false, "count") => "fewer",
            (false, _) => "less",
        };
        self.phrase.replace("{}", word)
    }
}

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepRun {
    /// Order of execution, from 1.
    pub order: usize,
    /// Index into the settings.
    pub setting: usize,
    /// Repetition of its setting, from 1.
    pub repetition: usize,
    /// Running time, in seconds (see `wall_from`).
    pub wall_s: f64,
    /// The command's user CPU time, in seconds.
    pub user_s: f64,
    /// The command's system CPU time, in seconds.
    pub sys_s: f64,
    /// `exit N` or `signal N`.
    pub exit: String,
    /// Whether the command exited with status 0.
    pub ok: bool,
    /// The trace, relative to the results directory.
    pub trace: Option<String>,
    /// The command's output, relative to the results directory.
    pub log: String,
    /// Metric values in the order of the results' `metrics` (`null`: unknown).
    pub metrics: Vec<Option<f64>>,
    /// Where `wall_s` comes from: `clock` (measured around the command), `trace` (from
    /// the end of the initial sleep to the command's exit in the trace).
    pub wall_from: String,
}

/// The numbers of `summary.txt`. Failed runs are listed in the results, never counted
/// here.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct RunsSummary {
    /// Per setting, its running times.
    pub settings: Vec<SettingTimes>,
    /// Each setting after the first against the first.
    pub versus_first: Vec<VersusFirst>,
    /// Running time against each metric over all successful runs, strongest first;
    /// metrics that did not vary last.
    pub correlations: Vec<MetricCorrelation>,
    /// The strongest correlation in words ("runs were slower when ..."), when there is one.
    pub sentence: Option<String>,
    /// Metrics this schedlens gives a recorded run that the results do not hold (they
    /// were recorded by an older one): unknown, neither computed after the fact nor
    /// guessed.
    pub unknown_metrics: Vec<String>,
    /// The `order` of the fastest successful run.
    pub fastest_run: Option<usize>,
    /// The `order` of the slowest successful run.
    pub slowest_run: Option<usize>,
    /// How the intervals of `versus_first` were drawn.
    pub bootstrap: BootstrapSettings,
}

/// One setting's successful running times, in seconds (`null` without one).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SettingTimes {
    /// The setting's label (`kernel.x=1 kernel.y=0`, or `as found`).
    pub setting: String,
    /// Successful runs.
    pub n: usize,
    /// Failed runs (left out of every number here).
    pub failed: usize,
    /// The median (quantiles interpolate linearly, as numpy's default).
    pub median_s: Option<f64>,
    /// The first quartile.
    pub q1_s: Option<f64>,
    /// The third quartile.
    pub q3_s: Option<f64>,
    /// The interquartile range.
    pub iqr_s: Option<f64>,
    /// The fastest run.
    pub min_s: Option<f64>,
    /// The slowest run.
    pub max_s: Option<f64>,
    /// How much longer the slowest run took than the fastest, as a fraction of the fastest.
    pub spread: Option<f64>,
}

/// A setting against the first (the baseline).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct VersusFirst {
    /// The setting's label.
    pub setting: String,
    /// The first setting's label.
    pub baseline: String,
    /// median(setting) − median(baseline), in seconds; `null` when either has no
    /// successful run.
    pub median_difference_s: Option<f64>,
    /// The difference over the baseline's median.
    pub relative: Option<f64>,
    /// The 95% percentile-bootstrap interval of the difference, in seconds.
    pub ci95_s: Option<(f64, f64)>,
    /// The Mann-Whitney U of the baseline (scipy's `statistic`).
    pub mann_whitney_u: Option<f64>,
    /// Its two-sided p-value.
    pub p: Option<f64>,
    /// Whether the p-value is exact (else from the normal approximation).
    pub exact: Option<bool>,
}

/// Running time against one metric over the successful runs.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct MetricCorrelation {
    /// The metric's key.
    pub metric: String,
    /// Successful runs with a value for it.
    pub n: usize,
    /// Spearman's rho; `null` with fewer than 3 runs or when the metric did not vary.
    pub spearman: Option<f64>,
    /// Its two-sided p-value (Student's t with n − 2 degrees of freedom).
    pub p: Option<f64>,
}

/// The bootstrap behind every interval, fixed so the same results give the same intervals.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct BootstrapSettings {
    /// Resamples of each setting.
    pub resamples: usize,
    /// The generator's seed.
    pub seed: u64,
}
