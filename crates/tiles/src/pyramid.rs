//! The running/waiting counts and runqueue lengths of the whole trace at one fine base
//! resolution, computed once (one sweep, by the figures crate's own functions), from
//! which every coarser tile is composed without touching the model again. Composition is
//! exact: a column's first, lowest, highest and last counts, its share of time waiting
//! while a core idled, and a runqueue's longest length over two halves give those of the
//! whole — so a zoomed-out view of a 40M-event trace costs a few thousand merges, not a
//! sweep of every event.

use analysis::{TaskFilter, Window};
use figures::running_waiting::{Column, columns_and_queue_lengths};
use model::{Cpu, Model, Nanos};

/// Base columns at most: 64K columns of running/waiting (40 bytes each) and of one byte
/// per CPU (16 MB for 256 CPUs).
const MAX_BASE_COLUMNS: i64 = 1 << 16;

/// One trace's base columns for one task filter.
pub struct Pyramid {
    /// Base columns are `2^base_level` ns.
    pub base_level: u32,
    /// The first base column's index from the origin (in base columns).
    first: i64,
    columns: Vec<Column>,
    /// Per CPU, per base column: the longest runqueue (at most 255).
    queues: Vec<Vec<u8>>,
}

impl Pyramid {
    /// Sweeps the whole trace at the finest level that keeps the base within bounds.
    pub fn build(model: &Model, origin: Nanos, filter: &TaskFilter) -> Pyramid {
        let from = model.start().0 as i128 - origin.0 as i128;
        let to = model.end().0 as i128 + 1 - origin.0 as i128;
        let mut base_level = 0u32;
        while (to - from) >> base_level > i128::from(MAX_BASE_COLUMNS) {
            base_level += 1;
        }
        let first = (from >> base_level) as i64;
        let last = ((to - 1) >> base_level) as i64 + 1;
        let count = (last - first) as u32;
        let start = (i128::from(origin.0) + (i128::from(first) << base_level)).max(0) as u64;
        let window = Window::new(Nanos(start), Nanos(start + (u64::from(count) << base_level)));
        // One sweep that follows each CPU gives both.
        let cpus: Vec<Cpu> = (0..model.cpus().len() as u32).map(Cpu).collect();
        let (running_waiting, queues) = columns_and_queue_lengths(model, window, count, filter, &cpus);
        let queues =
            queues.into_iter().map(|row| row.into_iter().map(|length| length.min(255) as u8).collect()).collect();
        let columns = running_waiting.columns;
        Pyramid { base_level, first, columns, queues }
    }

    /// Whether tiles of `level` can be composed from the base.
    pub fn covers(&self, level: u32) -> bool {
        level >= self.base_level
    }

    /// Base columns `[a, b)` of tile column `column` of tile `index` at `level`.
    fn base_range(&self, level: u32, index: i64, columns: u32, column: u32) -> (i64, i64) {
        let shift = level - self.base_level;
        let a = ((i128::from(index) * i128::from(columns) + i128::from(column)) << shift) - i128::from(self.first);
        let clamp = |v: i128| v.clamp(0, self.columns.len() as i128) as i64;
        (clamp(a), clamp(a + (1i128 << shift)))
    }

    /// The running/waiting columns of a tile.
    pub fn running_waiting(&self, level: u32, index: i64, columns: u32) -> Vec<Column> {
        let width = f64::from(1u32 << (level - self.base_level).min(31));
        (0..columns)
            .map(|c| {
                let (a, b) = self.base_range(level, index, columns, c);
                let mut parts = self.columns[a as usize..b as usize].iter().copied();
                let Some(mut column) = parts.next() else { return Column::default() };
                parts.for_each(|later| column.then(later));
                column.waiting_while_idle /= width;
                column.unknown /= width;
                column
            })
            .collect()
    }

    /// The runqueue lengths of a tile's CPUs.
    pub fn queue_lengths(&self, cpus: &[Cpu], level: u32, index: i64, columns: u32) -> Vec<Vec<u32>> {
        let ranges: Vec<(i64, i64)> = (0..columns).map(|c| self.base_range(level, index, columns, c)).collect();
        cpus.iter()
            .map(|cpu| {
                let Some(row) = self.queues.get(cpu.index()) else { return vec![0; columns as usize] };
                ranges
                    .iter()
                    .map(|&(a, b)| row[a as usize..b as usize].iter().copied().max().map_or(0, u32::from))
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use figures::running_waiting::{columns, queue_length_rows};
    use model::scenario::*;

    /// 0: AAAAABBBBBAAAAA.....    B waits behind A, then A behind B, while CPU 1 idles.
    /// 1: ..........CCC.......
    fn model() -> Model {
        Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "gamma")])
            .other(0, 0, 1)
            .switch(0, 1, 7, S, 0)
            .wake(20, 0, 1, 2, 0)
            .switch(50, 0, 1, R, 2)
            .switch(100, 0, 2, S, 1)
            .wake(100, 1, 0, 3, 1)
            .switch(100, 1, 0, R, 3)
            .switch(130, 1, 3, S, 0)
            .switch(150, 0, 1, S, 0)
            .other(200, 0, 0)
            .other(200, 1, 0)
            .finish()
    }

    #[test]
    fn composed_tiles_equal_tiles_computed_directly() {
        let model = model();
        let filter = TaskFilter::default();
        let pyramid = Pyramid::build(&model, Nanos(0), &filter);
        assert_eq!(pyramid.base_level, 0, "a short trace is kept at 1 ns per column");
        for (level, index, count) in [(0u32, 0i64, 201u32), (2, 0, 64), (3, 1, 8), (4, 0, 4), (5, 1, 4), (7, 0, 2)] {
            let start = index as u64 * (u64::from(count) << level);
            let window = Window::new(Nanos(start), Nanos(start + (u64::from(count) << level)));
            let direct = columns(&model, window, count, &filter).columns;
            let composed = pyramid.running_waiting(level, index, count);
            for (c, (d, p)) in direct.iter().zip(&composed).enumerate() {
                assert_eq!((d.running, d.total), (p.running, p.total), "level {level} index {index} column {c}");
                assert!((d.waiting_while_idle - p.waiting_while_idle).abs() < 1e-9, "level {level} column {c}");
            }
            let cpus = [Cpu(0), Cpu(1)];
            let direct_queues = queue_length_rows(&model, &cpus, window, count, &filter);
            assert_eq!(direct_queues, pyramid.queue_lengths(&cpus, level, index, count), "level {level}");
        }
    }
}
