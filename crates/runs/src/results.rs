//! A sweep's results as plain data, and their files: `results.json` (everything, read
//! back by `runs --report`) and `results.csv` (one row per run, for spreadsheets, pandas
//! and the tests that check the statistics with scipy).
//!
//! CSV columns: `run` (order of execution, from 1), `setting` (its label), one column per
//! knob with its value, `repetition`, `wall_s`, `user_s`, `sys_s`, `exit` (`exit N` or
//! `signal N`), `ok` (1 when the command exited with status 0), `trace`, `log`, then one
//! column per metric (empty where unknown or untraced).

use crate::profile::MetricInfo;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// A knob of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnobRecord {
    pub name: String,
    pub path: String,
    /// Its value before the sweep, written back after it.
    pub original: String,
}

/// One combination of knob values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

/// One run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Order of execution, from 1.
    pub order: usize,
    /// Index into the settings.
    pub setting: usize,
    /// Repetition of its setting, from 1.
    pub repetition: usize,
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    /// `exit N` or `signal N`.
    pub exit: String,
    pub ok: bool,
    /// The trace, relative to the results directory.
    pub trace: Option<String>,
    /// The command's output, relative to the results directory.
    pub log: String,
    /// Metric values in the order of [`Results::metrics`] (`None`: unknown).
    pub metrics: Vec<Option<f64>>,
    /// Where `wall_s` comes from: `clock` (measured around the command), `trace` (from
    /// the end of the initial sleep to the command's exit in the trace).
    pub wall_from: String,
}

/// Everything a sweep measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub command: Vec<String>,
    pub repetitions: usize,
    pub sleep_s: f64,
    pub recorded: bool,
    pub knobs: Vec<KnobRecord>,
    pub settings: Vec<Setting>,
    pub metrics: Vec<MetricInfo>,
    pub runs: Vec<Run>,
    /// The signal that stopped the sweep early, if one did.
    pub interrupted_by: Option<i32>,
}

impl Results {
    pub fn label(&self, setting: usize) -> String {
        self.settings[setting].label(&self.knobs)
    }

    /// Successful runs' wall times of a setting, in execution order.
    pub fn times(&self, setting: usize) -> Vec<f64> {
        self.runs.iter().filter(|r| r.setting == setting && r.ok).map(|r| r.wall_s).collect()
    }

    pub fn failed(&self) -> impl Iterator<Item = &Run> {
        self.runs.iter().filter(|r| !r.ok)
    }

    /// The results as CSV text (see the module's documentation for the columns).
    pub fn to_csv(&self) -> String {
        let mut header: Vec<String> = vec!["run".into(), "setting".into()];
        header.extend(self.knobs.iter().map(|k| k.name.clone()));
        header.extend(["repetition", "wall_s", "user_s", "sys_s", "exit", "ok", "trace", "log"].map(String::from));
        header.extend(self.metrics.iter().map(|m| m.key.clone()));
        let mut out = String::new();
        push_row(&mut out, header);
        for run in &self.runs {
            let mut row = vec![run.order.to_string(), self.label(run.setting)];
            row.extend(self.settings[run.setting].values.iter().cloned());
            row.extend([
                run.repetition.to_string(),
                number(run.wall_s),
                number(run.user_s),
                number(run.sys_s),
                run.exit.clone(),
                u8::from(run.ok).to_string(),
                run.trace.clone().unwrap_or_default(),
                run.log.clone(),
            ]);
            row.extend(run.metrics.iter().map(|m| m.map(number).unwrap_or_default()));
            push_row(&mut out, row);
        }
        out
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("results serialize") + "\n"
    }

    pub fn from_json(text: &str) -> Result<Results, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Reads `results.json` from a results directory.
    pub fn load(dir: &Path) -> Result<Results, crate::RunsError> {
        let path = dir.join(crate::report::RESULTS_JSON);
        let text = std::fs::read_to_string(&path).map_err(|e| crate::RunsError::io(&path, e))?;
        Results::from_json(&text).map_err(|source| crate::RunsError::Results { path, source })
    }
}

/// Enough digits to round-trip, no more: `0.25`, `1.000123`.
fn number(value: f64) -> String {
    if value.is_finite() { format!("{value}") } else { String::new() }
}

fn push_row(out: &mut String, cells: Vec<String>) {
    let quoted: Vec<String> = cells.into_iter().map(|c| csv_cell(&c)).collect();
    let _ = writeln!(out, "{}", quoted.join(","));
}

fn csv_cell(cell: &str) -> String {
    if cell.contains([',', '"', '\n']) { format!("\"{}\"", cell.replace('"', "\"\"")) } else { cell.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_what_needs_it() {
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(f64::NAN), "");
    }
}
