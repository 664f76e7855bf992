//! A sweep's results (`documents::runs::Results`) as the bytes of its files:
//! `results.json` (everything, read back by `runs --report`) and `results.csv` (one row
//! per run, for spreadsheets, pandas and the tests that check the statistics with scipy).
//!
//! CSV columns: `run` (order of execution, from 1), `setting` (its label), one column per
//! knob with its value, `repetition`, `wall_s`, `user_s`, `sys_s`, `exit` (`exit N` or
//! `signal N`), `ok` (1 when the command exited with status 0), `trace`, `log`, then one
//! column per metric (empty where unknown or untraced).

use documents::runs::Results;
use std::fmt::Write as _;

/// The results as CSV text (see the module's documentation for the columns).
pub fn to_csv(results: &Results) -> String {
    let mut header: Vec<String> = vec!["run".into(), "setting".into()];
    header.extend(results.knobs.iter().map(|k| k.name.clone()));
    header.extend(["repetition", "wall_s", "user_s", "sys_s", "exit", "ok", "trace", "log"].map(String::from));
    header.extend(results.metrics.iter().map(|m| m.key.clone()));
    let mut out = String::new();
    push_row(&mut out, header);
    for run in &results.runs {
        let mut row = vec![run.order.to_string(), results.label(run.setting)];
        row.extend(results.settings[run.setting].values.iter().cloned());
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

/// `results.json`'s text.
pub fn to_json(results: &Results) -> String {
    serde_json::to_string_pretty(results).expect("results serialize") + "\n"
}

/// Results from `results.json`'s text.
pub fn from_json(text: &str) -> Result<Results, serde_json::Error> {
    serde_json::from_str(text)
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

    /// `runs` writes its report from the numbers it computed and `report DIR` from
    /// `results.json`: they are the same bytes only if every number reads back exactly
    /// (serde_json's default float parser can be one unit in the last place off).
    #[test]
    fn results_read_back_every_number_exactly() {
        let shares = [0.24773258788616534, 0.29235880210533843, 0.1 + 0.2, 1e-300, 123456.78901234567];
        let results = Results {
            command: vec!["true".into()],
            repetitions: 1,
            sleep_s: 0.0,
            recorded: false,
            knobs: vec![],
            settings: vec![],
            metrics: vec![],
            runs: vec![],
            interrupted_by: None,
        };
        for share in shares {
            let text = to_json(&Results { sleep_s: share, ..results.clone() });
            assert_eq!(from_json(&text).unwrap().sleep_s.to_bits(), share.to_bits(), "{share:?}");
        }
    }
}
