//! Labels that name every CPU row of a figure by its CPU number, whatever the topology
//! and however many rows: where rows are lower than the text, the labels take turns in
//! a few columns (row 0 in the nearest, row 1 in the next, ...), so that labels in one
//! column are a text line apart and never overlap, and a reader can always find CPU 37.

use crate::graph::RowSpec;
use crate::style::{INK, SMALL};
use render::{Anchor, Point, Scene, Text, text_width};

/// The smallest label text: below this a label is not read, so more columns are used.
const SMALLEST: f32 = 7.0;
/// Space between a label column and the next, and between labels one above the other.
const GAP: f32 = 3.0;

/// How a figure's row labels are laid out.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RowLabels {
    /// Text size.
    pub font: f32,
    /// Columns the labels take turns in.
    pub columns: usize,
    /// Each column's width (the widest label).
    column_width: f32,
}

impl RowLabels {
    /// The layout for `rows` drawn `row_height` apart.
    pub fn plan(rows: &[RowSpec], row_height: f32) -> RowLabels {
        let row_height = row_height.max(0.01);
        let font = (row_height - 1.0).clamp(SMALLEST, SMALL);
        let columns = ((font + 1.0) / row_height).ceil().max(1.0) as usize;
        let column_width = rows.iter().map(|r| text_width(&r.cpu.0.to_string(), font)).fold(0.0, f32::max);
        RowLabels { font, columns: columns.min(rows.len().max(1)), column_width }
    }

    /// The width the labels take, left of `right` in [`RowLabels::draw`].
    pub fn width(&self) -> f32 {
        self.columns as f32 * (self.column_width + GAP) - GAP
    }

    /// Draws every row's CPU number, right-aligned at `right` (the nearest column), row
    /// `index` centred on `center(index)`.
    pub fn draw(&self, scene: &mut Scene, rows: &[RowSpec], right: f32, center: impl Fn(usize) -> f32) {
        for (index, row) in rows.iter().enumerate() {
            let x = right - (index % self.columns) as f32 * (self.column_width + GAP);
            let baseline = center(index) + self.font * 0.35;
            let label = Text::new(Point::new(x, baseline), row.cpu.0.to_string(), self.font);
            scene.push(label.anchor(Anchor::End).color(INK));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::Cpu;

    fn rows(count: u32) -> Vec<RowSpec> {
        (0..count).map(|cpu| RowSpec { cpu: Cpu(cpu), ..RowSpec::default() }).collect()
    }

    #[test]
    fn tall_rows_take_one_column_in_the_usual_size() {
        let labels = RowLabels::plan(&rows(8), 20.0);
        assert_eq!((labels.font, labels.columns), (SMALL, 1));
    }

    #[test]
    fn labels_one_above_the_other_in_a_column_never_overlap() {
        for (count, height) in [(64, 10.0), (64, 5.0), (256, 2.5), (1024, 0.6)] {
            let labels = RowLabels::plan(&rows(count), height);
            let spacing = labels.columns as f32 * height;
            assert!(spacing >= labels.font + 1.0, "{count} rows {height} apart: {labels:?}");
            assert!(labels.font >= SMALLEST, "{labels:?}");
        }
        assert_eq!(RowLabels::plan(&rows(64), 10.0).columns, 1);
        assert_eq!(RowLabels::plan(&rows(256), 2.5).columns, 4);
    }
}
