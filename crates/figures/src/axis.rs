//! Axes shared by the figures: "nice" tick steps (1, 2 or 5 × 10^k), labels with just
//! the decimals that tell neighbouring ticks apart, and the drawing of a time axis below
//! a plot. Times on axes are seconds from the figure's origin (the trace start, or the
//! end of the initial sleep).

use crate::style;
use render::{Anchor, Point, Rect, Scene, Stroke, Text};

/// Seconds from `origin` to `time` (negative before it): what every time axis shows.
pub fn seconds(time: model::Nanos, origin: model::Nanos) -> f64 {
    (time.0 as f64 - origin.0 as f64) / 1e9
}

/// A tick: its value and its label.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub label: String,
}

/// The largest step of 1, 2 or 5 × 10^k that puts at most `max_ticks` ticks on `span`.
pub fn nice_step(span: f64, max_ticks: usize) -> f64 {
    let rough = span.abs().max(f64::MIN_POSITIVE) / max_ticks.max(1) as f64;
    let magnitude = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * magnitude).find(|&step| step >= rough).unwrap_or(10.0 * magnitude)
}

/// Ticks at multiples of a nice step within `[start, end]`, at most about `max_ticks`.
pub fn ticks(start: f64, end: f64, max_ticks: usize) -> Vec<Tick> {
    if !start.is_finite() || !end.is_finite() || end <= start {
        return Vec::new();
    }
    let step = nice_step(end - start, max_ticks);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let first = (start / step - 1e-9).ceil() as i64;
    let last = (end / step + 1e-9).floor() as i64;
    (first..=last)
        .map(|k| {
            let value = k as f64 * step;
            // `+ 0.0` turns -0.0 into 0.0, so no tick reads "-0".
            Tick { value, label: format!("{:.*}", decimals, value + 0.0) }
        })
        .collect()
}

/// A horizontal time axis: which seconds the plot's left and right edges stand for.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TimeAxis {
    pub start_s: f64,
    pub span_s: f64,
}

impl TimeAxis {
    /// The x coordinate of a time in seconds.
    pub fn x_of(&self, plot: &Rect, seconds: f64) -> f32 {
        plot.x + ((seconds - self.start_s) / self.span_s.max(f64::MIN_POSITIVE)) as f32 * plot.w
    }

    /// Ticks, their labels and the axis title below `plot`; returns the y below them.
    pub fn draw(&self, plot: &Rect, scene: &mut Scene) -> f32 {
        let max_ticks = (plot.w / 90.0).max(2.0) as usize;
        let tick_top = plot.bottom();
        let label_y = tick_top + style::TICK + style::SMALL + 2.0;
        for tick in ticks(self.start_s, self.start_s + self.span_s, max_ticks) {
            let x = self.x_of(plot, tick.value);
            let (top, bottom) = (Point::new(x, tick_top), Point::new(x, tick_top + style::TICK));
            scene.push(style::line(top, bottom, Stroke::solid(style::INK, 1.0)));
            scene.push(Text::new(Point::new(x, label_y), tick.label, style::SMALL).anchor(Anchor::Middle));
        }
        let title_y = label_y + style::LABEL + 6.0;
        scene.push(
            Text::new(Point::new(plot.x + plot.w / 2.0, title_y), "time (s)", style::LABEL).anchor(Anchor::Middle),
        );
        title_y + 6.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(start: f64, end: f64, max: usize) -> Vec<String> {
        ticks(start, end, max).into_iter().map(|t| t.label).collect()
    }

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_step(10.0, 10), 1.0);
        assert_eq!(nice_step(10.0, 4), 5.0);
        assert_eq!(nice_step(0.003, 5), 0.001);
        assert_eq!(nice_step(37.0, 8), 5.0);
    }

    #[test]
    fn labels_have_the_decimals_the_step_needs() {
        assert_eq!(labels(0.0, 10.0, 5), ["0", "2", "4", "6", "8", "10"]);
        assert_eq!(labels(2.0, 2.001, 5), ["2.0000", "2.0002", "2.0004", "2.0006", "2.0008", "2.0010"]);
        assert_eq!(labels(-0.15, 0.15, 3), ["-0.1", "0.0", "0.1"]);
    }

    #[test]
    fn empty_or_inverted_ranges_have_no_ticks() {
        assert!(ticks(1.0, 1.0, 5).is_empty());
        assert!(ticks(2.0, 1.0, 5).is_empty());
        assert!(ticks(0.0, f64::NAN, 5).is_empty());
    }
}
