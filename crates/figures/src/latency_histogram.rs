//! Latency distributions side by side: log2 buckets of delays (1 µs doubling) on the x
//! axis, each series' share of its delays per bucket as a bar, the series (commands, or
//! traces) next to each other in every bucket, each in its name's colour. Shares rather
//! than counts, so a series of 50 delays and one of 50,000 compare.

use crate::axis::ticks;
use crate::palette::color_of_name;
use crate::style::{self, FAINT, INK, LABEL, MARGIN, SMALL, TICK};
use render::{Anchor, Point, Rect, RectBatch, Rgba, Scene, Stroke, Text, text_width};

/// One series: its name and its count per bucket (every series has the same buckets).
pub struct Series {
    pub name: String,
    pub counts: Vec<u64>,
}

/// `latency --figure`'s figure (and the report's): the wakeup latency histograms of
/// `series` over `latency`'s buckets, at its size.
pub fn wakeup_latency_figure(title: &str, series: &[Series]) -> Scene {
    latency_histogram(title, series, &analysis::latency::bucket_edges_ns(), 900.0, 260.0)
}

/// The series of a trace's commands as `latency` ranks them (largest p99 wakeup latency
/// first), the first `top`, each named by its command after `prefix` (a trace's name,
/// when several are drawn together).
pub fn command_series(
    distributions: &analysis::latency::Distributions,
    prefix: Option<&str>,
    top: usize,
) -> Vec<Series> {
    distributions
        .commands_by_p99()
        .into_iter()
        .take(top)
        .map(|(comm, wakeups)| Series {
            name: prefix.map_or_else(|| comm.to_string(), |prefix| format!("{prefix}: {comm}")),
            counts: wakeups.histogram.to_vec(),
        })
        .collect()
}

/// The figure: `series` over buckets whose lower edges are `edges_ns`, bars across a plot
/// `width` pixels wide and `height` high. Only buckets some series has delays in (and
/// those between them) are drawn.
pub fn latency_histogram(title: &str, series: &[Series], edges_ns: &[u64], width: f32, height: f32) -> Scene {
    let used = |k: usize| series.iter().any(|s| s.counts.get(k).is_some_and(|&c| c > 0));
    let first = (0..edges_ns.len()).find(|&k| used(k)).unwrap_or(0);
    let last = (0..edges_ns.len()).rev().find(|&k| used(k)).unwrap_or(0).max(first);
    let buckets = last - first + 1;
    let shares: Vec<Vec<f64>> = series
        .iter()
        .map(|s| {
            let total = s.counts.iter().sum::<u64>().max(1) as f64;
            (first..=last).map(|k| s.counts.get(k).copied().unwrap_or(0) as f64 / total).collect()
        })
        .collect();
    let top = shares.iter().flatten().copied().fold(0.0, f64::max).max(0.01) * 1.05;
    let plot = Rect::new(MARGIN + 50.0, MARGIN + style::TITLE + 12.0, width, height);
    let y_of = |share: f64| plot.bottom() - (share / top) as f32 * plot.h;
    let slot = plot.w / buckets as f32;
    let bar = (slot * 0.8 / series.len().max(1) as f32).max(1.0);

    let mut scene = Scene::new(0.0, 0.0, Rgba::WHITE);
    style::title(&mut scene, MARGIN, title);
    for tick in ticks(0.0, top * 100.0, (plot.h / 40.0).max(2.0) as usize) {
        let y = y_of(tick.value / 100.0);
        scene.push(style::line(
            Point::new(plot.x, y),
            Point::new(plot.right(), y),
            Stroke::solid(Rgba::grey(232), 1.0),
        ));
        let label = Text::new(Point::new(plot.x - TICK - 2.0, y + SMALL * 0.35), format!("{}%", tick.label), SMALL);
        scene.push(label.anchor(Anchor::End));
    }
    for (index, (s, shares)) in series.iter().zip(&shares).enumerate() {
        let mut bars = RectBatch::new(style::rgba(color_of_name(&s.name)));
        for (k, &share) in shares.iter().enumerate() {
            if share > 0.0 {
                let x = plot.x + k as f32 * slot + slot * 0.1 + index as f32 * bar;
                bars.rects.push(Rect::from_edges(x, y_of(share), x + bar, plot.bottom()));
            }
        }
        scene.push(bars);
    }
    for k in 0..=buckets {
        let x = plot.x + k as f32 * slot;
        scene.push(style::line(
            Point::new(x, plot.bottom()),
            Point::new(x, plot.bottom() + TICK),
            Stroke::solid(INK, 1.0),
        ));
        if let Some(&edge) = edges_ns.get(first + k).filter(|_| k % label_every(slot) == 0) {
            let label = Text::new(Point::new(x, plot.bottom() + TICK + SMALL + 2.0), edge_label(edge), SMALL);
            scene.push(label.anchor(Anchor::Middle));
        }
    }
    scene.push(style::outline(&plot, Stroke::solid(FAINT, 1.0)));
    let axis_y = plot.bottom() + TICK + SMALL + LABEL + 8.0;
    let axis = Text::new(Point::new(plot.x + plot.w / 2.0, axis_y), "delay (log2 buckets)", LABEL);
    scene.push(axis.anchor(Anchor::Middle));
    style::vertical_title(&mut scene, MARGIN + LABEL, plot.y, plot.bottom(), "share of delays");
    let mut y = axis_y + LABEL + 6.0;
    let mut x = plot.x;
    for s in series {
        let mut swatch = RectBatch::new(style::rgba(color_of_name(&s.name)));
        swatch.rects.push(Rect::new(x, y - SMALL * 0.8, SMALL, SMALL * 0.8));
        scene.push(swatch);
        let total: u64 = s.counts.iter().sum();
        let text = format!("{} ({total})", s.name);
        scene.push(Text::new(Point::new(x + SMALL + 4.0, y), text.as_str(), SMALL).color(INK));
        x += SMALL + 16.0 + text_width(&text, SMALL);
        if x > plot.right() - 100.0 {
            (x, y) = (plot.x, y + SMALL + 6.0);
        }
    }
    scene.width = (plot.right() + MARGIN).ceil();
    scene.height = (y + MARGIN).ceil();
    scene
}

/// Every how many bucket edges a label fits.
fn label_every(slot: f32) -> usize {
    ((44.0 / slot).ceil() as usize).max(1)
}

/// `0`, `1us`, `512us`, `1ms`, `4s`.
fn edge_label(ns: u64) -> String {
    match ns {
        0 => "0".into(),
        ns if ns < 1_000_000 => format!("{}us", ns / 1000),
        ns if ns < 1_000_000_000 => format!("{}ms", ns / 1_000_000),
        ns => format!("{}s", ns / 1_000_000_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bar_per_series_and_bucket_with_delays() {
        let edges: Vec<u64> = (0..25).map(|k| if k == 0 { 0 } else { 1000u64 << (k - 1) }).collect();
        let mut a = vec![0; 25];
        (a[3], a[5]) = (2, 6);
        let mut b = vec![0; 25];
        b[4] = 1;
        let series = [Series { name: "a".into(), counts: a }, Series { name: "b".into(), counts: b }];
        let scene = latency_histogram("t", &series, &edges, 300.0, 120.0);
        let bars: usize = scene
            .items
            .iter()
            .filter_map(|i| match i {
                render::Item::Rects(b) => Some(b.rects.len()),
                _ => None,
            })
            .sum();
        assert_eq!(bars, 3 + 2, "three bars and two legend swatches");
        assert_eq!(
            [edge_label(0), edge_label(4000), edge_label(2_048_000), edge_label(4_096_000_000)],
            ["0", "4us", "2ms", "4s"]
        );
    }
}
