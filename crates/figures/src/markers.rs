//! Trace markers on the figures (`--markers`): a thin violet line at each marker's time
//! across the plot, its text above the plot. Labels go into up to three staggered lanes,
//! left to right; a label that finds no room in any lane is left out while its line
//! stays, so dense markers never print over each other, and the figure says how many of
//! its markers carry a label. When markers fall in more than [`MAX_LINES`] pixel columns,
//! lines across the plot would hide it: they become short ticks above the plot.

use crate::axis::{TimeAxis, seconds};
use crate::style::{self, SMALL};
use analysis::Window;
use model::{Marker, Nanos};
use render::{Point, Rect, Rgba, Scene, Stroke, Text, text_width};

pub const MARKER: Rgba = Rgba::rgb(120, 50, 170);
/// Rows of labels above the plot.
const LANES: usize = 3;
const LANE_HEIGHT: f32 = SMALL + 3.0;
/// Longest label, in characters (longer texts are cut, with `...`).
const LABEL_CHARS: usize = 32;
/// Most pixel columns with a line across the plot.
pub const MAX_LINES: usize = 64;

/// Height of the ticks above the plot when markers are too dense for lines.
const TICK_HEIGHT: f32 = 6.0;

/// The height the labels (and ticks) take above the plot: none without markers in the
/// window.
pub fn band_height(markers: &[Marker], window: Window) -> f32 {
    match markers.iter().any(|m| window.contains(m.time)) {
        true => TICK_HEIGHT + 4.0 + LANES as f32 * LANE_HEIGHT,
        false => 0.0,
    }
}

/// How many markers a figure drew and labelled.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Drawn {
    pub shown: usize,
    pub labelled: usize,
    /// Too dense for lines across the plot: ticks above it instead.
    pub as_ticks: bool,
}

impl Drawn {
    /// The figure's note about its markers; `None` without any.
    pub fn note(&self) -> Option<String> {
        let what = if self.as_ticks { "violet ticks above the plot" } else { "violet lines" };
        match (self.shown, self.labelled) {
            (0, _) => None,
            (n, l) if n == l => Some(format!("{what}: {n} trace markers")),
            (n, l) => Some(format!("{what}: {n} trace markers ({l} labelled; the others had no room)")),
        }
    }
}

/// Draws the markers inside `window`: lines from the plot's top to `bottom`, labels in
/// the band above the plot (see [`band_height`]).
pub fn draw(
    scene: &mut Scene,
    plot: &Rect,
    bottom: f32,
    axis: &TimeAxis,
    origin: Nanos,
    window: Window,
    markers: &[Marker],
) -> Drawn {
    let shown: Vec<(f32, &Marker)> = markers
        .iter()
        .filter(|m| window.contains(m.time))
        .map(|m| (axis.x_of(plot, seconds(m.time, origin)).clamp(plot.x, plot.right()), m))
        .collect();
    let mut columns: Vec<i64> = shown.iter().map(|(x, _)| x.round() as i64).collect();
    columns.dedup();
    let as_ticks = columns.len() > MAX_LINES;
    let mut drawn = Drawn { shown: shown.len(), labelled: 0, as_ticks };
    let stroke = Stroke::solid(MARKER.with_alpha(200), 1.0);
    let line_top = plot.y - if as_ticks { TICK_HEIGHT } else { 0.0 };
    let line_bottom = if as_ticks { plot.y } else { bottom };
    let mut last_column = None;
    let mut lane_ends = [f32::NEG_INFINITY; LANES];
    for (x, marker) in shown {
        let column = x.round() as i64;
        if last_column != Some(column) {
            scene.push(style::line(Point::new(x, line_top), Point::new(x, line_bottom), stroke.clone()));
            last_column = Some(column);
        }
        let label = label_of(&marker.text);
        let width = text_width(&label, SMALL);
        let left = (x + 2.0).min(plot.right() - width).max(plot.x);
        let Some(lane) = lane_ends.iter().position(|&end| end <= left) else { continue };
        lane_ends[lane] = left + width + 6.0;
        let baseline = plot.y - TICK_HEIGHT - 4.0 - lane as f32 * LANE_HEIGHT;
        scene.push(style::line(Point::new(x, baseline + 2.0), Point::new(x, line_top), stroke.clone()));
        scene.push(Text::new(Point::new(left, baseline), label.as_str(), SMALL).color(MARKER));
        drawn.labelled += 1;
    }
    drawn
}

/// A marker's first line, white space runs made one space, cut to [`LABEL_CHARS`]
/// characters.
fn label_of(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= LABEL_CHARS {
        return line;
    }
    let cut: String = line.chars().take(LABEL_CHARS - 3).collect();
    format!("{}...", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::{Cpu, Pid};

    fn marker(ms: u64, text: &str) -> Marker {
        Marker { time: Nanos(ms * 1_000_000), cpu: Cpu(0), pid: Pid(1), text: text.into() }
    }

    #[test]
    fn dense_markers_are_staggered_then_thinned() {
        let window = Window { start: Nanos(0), end: Nanos(1_000_000_000) };
        let plot = Rect::new(10.0, 60.0, 400.0, 100.0);
        let axis = TimeAxis { start_s: 0.0, span_s: 1.0 };
        // Forty markers 2 ms apart: about a pixel apart, far less than a label's width.
        let markers: Vec<Marker> = (0..40).map(|i| marker(100 + 2 * i, &format!("phase {i}"))).collect();
        let mut scene = Scene::new(500.0, 300.0, Rgba::WHITE);
        let drawn = draw(&mut scene, &plot, plot.bottom(), &axis, Nanos(0), window, &markers);
        assert_eq!(drawn, Drawn { shown: 40, labelled: 3, as_ticks: false });
        assert_eq!(drawn.note().unwrap(), "violet lines: 40 trace markers (3 labelled; the others had no room)");
        // Markers far apart all get a label, in the first lane.
        let sparse = [marker(100, "start"), marker(500, "middle"), marker(900, "end"), marker(2000, "after")];
        let drawn = draw(&mut scene, &plot, plot.bottom(), &axis, Nanos(0), window, &sparse);
        assert_eq!(drawn, Drawn { shown: 3, labelled: 3, as_ticks: false });
        assert_eq!(band_height(&sparse[3..], window), 0.0);
        // In more pixel columns than MAX_LINES: ticks above the plot, said in the note.
        let many: Vec<Marker> = (0..200).map(|i| marker(5 * i, "x")).collect();
        let drawn = draw(&mut scene, &plot, plot.bottom(), &axis, Nanos(0), window, &many);
        assert!(drawn.as_ticks && drawn.shown == 200);
        assert!(drawn.note().unwrap().starts_with("violet ticks above the plot: 200 trace markers"));
    }

    #[test]
    fn labels_are_the_first_line_cut_short() {
        assert_eq!(label_of("two\nlines"), "two");
        assert_eq!(label_of("\n  padded \n"), "padded");
        let long = label_of("cpu_frequency:        state=700000 cpu_id=3 and more");
        assert_eq!(long, "cpu_frequency: state=700000 c...");
    }
}
