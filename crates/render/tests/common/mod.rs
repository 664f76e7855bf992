//! Scenes shared by the integration tests and the `bench` example: a small sample figure
//! that uses every kind of item (for golden files and for looking at), and a large
//! timeline-like scene (for size and speed).

use render::{
    Anchor, Clip, Item, Point, Polygon, Polyline, Rect, RectBatch, Rgba, Scene, Stroke, Text, font_metrics, steps,
    text_width,
};

/// A deterministic pseudo-random sequence (xorshift), so scenes are the same every run.
struct Sequence(u64);

impl Sequence {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

const COLORS: [Rgba; 3] = [Rgba::rgb(214, 39, 40), Rgba::rgb(31, 119, 180), Rgba::rgb(44, 160, 44)];

/// A miniature of the figures: a 4-core timeline in a clipped plot area with labels and
/// axis, a running/waiting strip (envelope, step line, dotted line, shaded stretch) and a
/// legend, with a character the font lacks.
pub fn sample_scene() -> Scene {
    let mut scene = Scene::new(400.0, 262.0, Rgba::WHITE);
    let plot = Rect::new(60.0, 30.0, 320.0, 120.0);
    scene.push(Text::new(Point::new(200.0, 18.0), "Sample: 4 cores, 1.2 s", 13.0).anchor(Anchor::Middle));
    scene.push(timeline(plot));
    let label = font_metrics(10.0);
    for core in 0..4 {
        let baseline = plot.y + core as f32 * 30.0 + 15.0 + label.cap_height / 2.0;
        scene.push(Text::new(Point::new(plot.x - 5.0, baseline), format!("CPU {core}"), 10.0).anchor(Anchor::End));
    }
    scene.push(Text::new(Point::new(14.0, plot.y + plot.h / 2.0), "cores", 11.0).anchor(Anchor::Middle).vertical());
    axis(&mut scene, plot);
    running_waiting(&mut scene, Rect::new(plot.x, 178.0, plot.w, 56.0));
    legend(&mut scene, 252.0);
    scene
}

fn timeline(plot: Rect) -> Clip {
    let mut clip = Clip::new(plot);
    let mut batches = COLORS.map(RectBatch::new);
    let mut sequence = Sequence(0x2545_f491_4f6c_dd1d);
    for core in 0..4 {
        // Start left of the plot, so the clip has something to cut.
        let mut x = plot.x - 20.0;
        while x < plot.right() + 20.0 {
            let width = 1.0 / 3.0 + sequence.next(40) as f32;
            let color = sequence.next(4) as usize;
            if let Some(batch) = batches.get_mut(color) {
                batch.rects.push(Rect::new(x, plot.y + core as f32 * 30.0 + 2.0, width, 26.0));
            }
            x += width;
        }
    }
    batches.into_iter().for_each(|batch| clip.push(batch));
    clip
}

fn axis(scene: &mut Scene, plot: Rect) {
    let black = Stroke::solid(Rgba::BLACK, 1.0);
    let bottom = plot.bottom() + 0.5;
    scene.push(Polyline {
        points: vec![Point::new(plot.x, bottom), Point::new(plot.right(), bottom)],
        stroke: black.clone(),
    });
    for tick in 0..5 {
        let x = plot.x + tick as f32 * plot.w / 4.0;
        let points = vec![Point::new(x, bottom), Point::new(x, bottom + 4.0)];
        scene.push(Polyline { points, stroke: black.clone() });
        let label = format!("{:.1}", tick as f32 * 0.3);
        scene.push(Text::new(Point::new(x, bottom + 14.0), label, 9.0).anchor(Anchor::Middle));
    }
}

fn running_waiting(scene: &mut Scene, area: Rect) {
    let mut clip = Clip::new(area);
    let y_of = |tasks: f32| area.bottom() - tasks * area.h / 8.0;
    clip.push(RectBatch {
        fill: Rgba::grey(128).with_alpha(60),
        rects: vec![Rect::new(area.x + 200.0, area.y, 40.0, area.h)],
    });
    let columns = (0..65u8).map(|i| area.x + f32::from(i) * area.w / 64.0);
    let level = |i: usize| 3.0 + 2.5 * ((i as f32) / 5.0).sin();
    let upper: Vec<Point> = columns.clone().enumerate().map(|(i, x)| Point::new(x, y_of(level(i) + 1.5))).collect();
    let lower = columns.clone().enumerate().rev().map(|(i, x)| Point::new(x, y_of((level(i) - 1.0).max(0.0))));
    let envelope = upper.into_iter().chain(lower).collect();
    clip.push(Polygon { points: envelope, fill: Rgba::rgb(31, 119, 180).with_alpha(90) });
    let samples: Vec<Point> = columns.enumerate().map(|(i, x)| Point::new(x, y_of(level(i).round()))).collect();
    let stroke = Stroke::solid(Rgba::rgb(20, 60, 120), 1.5);
    clip.push(Polyline { points: steps(&samples, area.right()), stroke });
    let cores = vec![Point::new(area.x, y_of(4.0)), Point::new(area.right(), y_of(4.0))];
    clip.push(Polyline { points: cores, stroke: Stroke::dashed(Rgba::grey(60), 1.0, &[1.0, 2.0]) });
    scene.push(clip);
    scene.push(Text::new(Point::new(area.x - 5.0, y_of(4.0) + 3.0), "4", 9.0).anchor(Anchor::End));
}

fn legend(scene: &mut Scene, baseline: f32) {
    let names = ["hackbench (412)", "kworker/0:1", "µs Δt ≥ 2 — 中"];
    let mut x = 20.0;
    for (color, name) in COLORS.into_iter().zip(names) {
        scene.push(RectBatch { fill: color, rects: vec![Rect::new(x, baseline - 8.0, 8.0, 8.0)] });
        scene.push(Text::new(Point::new(x + 12.0, baseline), name, 10.0).color(Rgba::grey(40)));
        x += 12.0 + text_width(name, 10.0) + 20.0;
    }
}

/// A timeline of `rows` cores by `columns` one-pixel columns, every column of every row a
/// rectangle in one of 300 colors: the most a timeline can hold at that resolution.
pub fn big_scene(columns: u32, rows: u32) -> Scene {
    const ROW: f32 = 12.0;
    let mut scene = Scene::new(columns as f32 + 80.0, rows as f32 * ROW + 60.0, Rgba::WHITE);
    let colors = (0..300u32).map(|i| Rgba::rgb((i * 37 % 256) as u8, (i * 91 % 256) as u8, (i * 53 % 256) as u8));
    let mut batches: Vec<RectBatch> = colors.map(RectBatch::new).collect();
    let mut sequence = Sequence(0x9e37_79b9_7f4a_7c15);
    let plot = Rect::new(60.0, 30.0, columns as f32, rows as f32 * ROW);
    for row in 0..rows {
        for column in 0..columns {
            let rect = Rect::new(plot.x + column as f32, plot.y + row as f32 * ROW + 1.0, 1.0, ROW - 2.0);
            batches[sequence.next(300) as usize].rects.push(rect);
        }
        let label = Point::new(plot.x - 4.0, plot.y + (row as f32 + 0.5) * ROW + 3.0);
        scene.push(Text::new(label, row.to_string(), 8.0).anchor(Anchor::End));
    }
    let mut clip = Clip::new(plot);
    batches.into_iter().for_each(|batch| clip.push(batch));
    scene.push(clip);
    scene
}

/// How many rectangles a scene has, clipped or not.
pub fn rect_count(scene: &Scene) -> usize {
    fn count(items: &[Item]) -> usize {
        let of = |item: &Item| match item {
            Item::Rects(batch) => batch.rects.len(),
            Item::Clip(clip) => count(&clip.items),
            _ => 0,
        };
        items.iter().map(of).sum()
    }
    count(&scene.items)
}
