//! The sorted running times of a sweep as a scene (the schedgraph paper's Figure 3, or
//! Figure 14 with several settings): `runs` writes it as files, the report as an image.

use documents::runs::Results;
use figures::sorted_times::{Series, sorted_times};
use render::Scene;

/// The sorted running times of every setting's successful runs, one series per setting.
pub fn running_times_figure(results: &Results) -> Scene {
    let series: Vec<Series> =
        (0..results.settings.len()).map(|s| Series { label: results.label(s), values: results.times(s) }).collect();
    let command = results.command.join(" ");
    let command = if command.chars().count() > 70 {
        format!("{}...", command.chars().take(67).collect::<String>())
    } else {
        command
    };
    let mut notes = Vec::new();
    if let [only] = series.as_slice() {
        notes.push(format!("{} ({} runs)", only.label, only.values.len()));
    }
    let failed = results.failed().count();
    if failed > 0 {
        notes.push(format!("{failed} failed runs left out (see summary.txt)"));
    }
    if let Some(signal) = results.interrupted_by {
        notes.push(format!("stopped early by signal {signal}"));
    }
    sorted_times(&format!("Running time of {command}"), &series, &notes, 640.0, 320.0)
}
