//! The CPU-to-CPU migration matrix as a heat map: a row per source CPU, a column per
//! destination, each cell shaded by its count on a logarithmic scale (white for none),
//! so the few busy pairs and the socket structure stand out on hundreds of CPUs.

use crate::graph::RowSpec;
use crate::row_labels::RowLabels;
use crate::style::{self, FAINT, INK, LABEL, MARGIN, SMALL};
use analysis::check::MigrationMatrix;
use model::{Cpu, Topology};
use render::{Anchor, Point, Rect, RectBatch, Rgba, Scene, Stroke, Text, text_width};
use std::collections::BTreeMap;

/// Shades from few to many migrations.
const SHADES: [Rgba; 6] = [
    Rgba::rgb(255, 240, 200),
    Rgba::rgb(254, 210, 130),
    Rgba::rgb(250, 160, 70),
    Rgba::rgb(235, 100, 40),
    Rgba::rgb(200, 40, 30),
    Rgba::rgb(120, 10, 20),
];

/// The heat map of `matrix`, about `size` pixels square (at most: with more CPUs than
/// pixels, cells are narrower than a pixel rather than the map wider than asked); with a
/// topology, lines between NUMA nodes and the count of migrations across them.
pub fn migration_map(title: &str, matrix: &MigrationMatrix, size: f32, topology: Option<&Topology>) -> Scene {
    let n = matrix.cpus.max(1);
    let cell = if n as f32 <= size { (size / n as f32).floor() } else { size / n as f32 };
    let rows: Vec<RowSpec> =
        (0..n.min(LABELLED) as u32).map(|cpu| RowSpec { cpu: Cpu(cpu), ..RowSpec::default() }).collect();
    let labels = RowLabels::plan(&rows, cell);
    let label_width = if n <= LABELLED { labels.width() } else { text_width(&n.to_string(), SMALL) };
    let left = MARGIN + LABEL + 8.0 + label_width + 6.0;
    // Below the title: room for the column title and the column numbers' lines.
    let (font, lines) = column_labels(n, cell);
    let extra_lines = if n <= LABELLED { (lines - 1) as f32 * (font + 1.0) } else { 0.0 };
    let top = MARGIN + style::TITLE + 12.0 + LABEL + SMALL + 14.0 + extra_lines;
    let grid = Rect::new(left, top, cell * n as f32, cell * n as f32);
    let mut scene = Scene::new(grid.right() + MARGIN, grid.bottom() + MARGIN + 3.0 * (SMALL + 6.0), Rgba::WHITE);
    style::title(&mut scene, left, title);
    let most = matrix.pairs.iter().map(|&(_, _, count)| count).max().unwrap_or(0);
    let mut shades: BTreeMap<usize, Vec<Rect>> = BTreeMap::new();
    for &(from, to, count) in &matrix.pairs {
        let rect = Rect::new(grid.x + to.0 as f32 * cell, grid.y + from.0 as f32 * cell, cell, cell);
        shades.entry(shade(count, most)).or_default().push(rect);
    }
    for (level, rects) in shades {
        scene.push(RectBatch { fill: SHADES[level], rects });
    }
    scene.push(style::outline(&grid, Stroke::solid(FAINT, 1.0)));
    if let Some(topology) = topology {
        draw_node_lines(&mut scene, &grid, n, cell, topology);
    }
    if n <= LABELLED {
        labels.draw(&mut scene, &rows, grid.x - 4.0, |cpu| grid.y + cpu as f32 * cell + cell / 2.0);
        draw_column_labels(&mut scene, &grid, n, cell, (font, lines));
    } else {
        draw_labels(&mut scene, &grid, n, cell);
    }
    style::vertical_title(&mut scene, MARGIN + LABEL, grid.y, grid.bottom(), "from CPU");
    let to = Text::new(Point::new(grid.x + grid.w / 2.0, grid.y - SMALL - 10.0 - extra_lines), "to CPU", LABEL);
    scene.push(to.anchor(Anchor::Middle).color(INK));
    let mut key = vec![format!("migrations from a CPU (row) to a CPU (column); darkest: {most}; log scale")];
    if let Some((sockets, nodes)) = topology.map(|t| matrix.crossings(t)) {
        let all: u64 = matrix.pairs.iter().map(|&(_, _, count)| count).sum();
        key.push(format!("lines between NUMA nodes; {nodes} of {all} across nodes, {sockets} across sockets"));
    }
    let bottom = style::notes(&mut scene, grid.x, grid.bottom() + 4.0, &key);
    scene.height = scene.height.max(bottom + MARGIN);
    scene
}

/// Every CPU is labelled up to this many CPUs (cells of 2.3 pixels in a 600-pixel map).
const LABELLED: usize = 256;

/// Lines where the NUMA node changes from one CPU to the next, across and down the map.
fn draw_node_lines(scene: &mut Scene, grid: &Rect, n: usize, cell: f32, topology: &Topology) {
    let node = |cpu: usize| topology.place(Cpu(cpu as u32)).map(|p| p.node);
    let mut lines = Vec::new();
    for cpu in 1..n {
        if node(cpu) != node(cpu - 1) {
            let at = cpu as f32 * cell;
            lines.push(Rect::new(grid.x, grid.y + at - 0.5, grid.w, 1.0));
            lines.push(Rect::new(grid.x + at - 0.5, grid.y, 1.0, grid.h));
        }
    }
    scene.push(RectBatch { fill: INK, rects: lines });
}

/// The text size of the column labels and the lines they take turns in, so that
/// neighbours do not overlap.
fn column_labels(n: usize, cell: f32) -> (f32, usize) {
    let font = (cell - 1.0).clamp(7.0, SMALL);
    let widest = text_width(&n.saturating_sub(1).to_string(), font) + 2.0;
    (font, (widest / cell.max(0.01)).ceil().max(1.0) as usize)
}

/// Every column's CPU number above the map (see [`column_labels`]).
fn draw_column_labels(scene: &mut Scene, grid: &Rect, n: usize, cell: f32, (font, lines): (f32, usize)) {
    for cpu in 0..n {
        let y = grid.y - 4.0 - (cpu % lines) as f32 * (font + 1.0);
        let label = Text::new(Point::new(grid.x + cpu as f32 * cell + cell / 2.0, y), cpu.to_string(), font);
        scene.push(label.anchor(Anchor::Middle).color(INK));
    }
}

/// The shade of a count, on a log scale up to the largest.
fn shade(count: u64, most: u64) -> usize {
    let position = (count as f64).ln_1p() / (most as f64).ln_1p().max(f64::MIN_POSITIVE);
    ((position * SHADES.len() as f64).ceil() as usize).clamp(1, SHADES.len()) - 1
}

/// CPU numbers along both sides beyond [`LABELLED`] CPUs: about 32 of them.
fn draw_labels(scene: &mut Scene, grid: &Rect, n: usize, cell: f32) {
    let every = n.div_ceil(32).next_power_of_two();
    for cpu in (0..n).step_by(every) {
        let middle = cpu as f32 * cell + cell / 2.0;
        let row = Text::new(Point::new(grid.x - 4.0, grid.y + middle + SMALL * 0.35), cpu.to_string(), SMALL);
        scene.push(row.anchor(Anchor::End).color(INK));
        let column = Text::new(Point::new(grid.x + middle, grid.y - 4.0), cpu.to_string(), SMALL);
        scene.push(column.anchor(Anchor::Middle).color(INK));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_of_65536_cpus_stays_the_size_asked() {
        let matrix = MigrationMatrix { cpus: 65536, pairs: vec![(model::Cpu(0), model::Cpu(65535), 3)], outside: 0 };
        let scene = migration_map("big", &matrix, 300.0, None);
        assert!(scene.width < 500.0 && scene.height < 600.0, "{} x {}", scene.width, scene.height);
        assert!(scene.items.len() < 200, "{} items", scene.items.len());
    }

    #[test]
    fn shades_grow_with_counts_on_a_log_scale() {
        assert_eq!(shade(1, 1000), 0);
        assert_eq!(shade(1000, 1000), SHADES.len() - 1);
        assert!(shade(30, 1000) < shade(300, 1000));
    }
}
