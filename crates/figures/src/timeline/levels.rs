//! The timeline at several power-of-two resolutions from one placement of each run: a
//! level-of-detail pyramid (the report embeds eight or more levels of a trace) would
//! otherwise place every run once per level. Runs are placed at the finest level, as
//! the nanoseconds each color covers in each column; a column of the next level sums its
//! two halves. At a power-of-two width, and for times below 2^53 ns, every fraction of a
//! column that [`super::rows`] adds up is a multiple of 2^-level, so its floating-point
//! sums are exact and deciding from summed nanoseconds gives its columns bit for bit.

use super::{Coloring, Painter, Row, Span};
use crate::palette::Rgb;
use analysis::{TaskFilter, Window};
use model::{Cpu, Model, Nanos};

/// Columns `[first, first + count)` of `2^level` ns each, counted from an origin: column
/// `n` covers `[origin + n·2^level, origin + (n + 1)·2^level)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LevelColumns {
    pub level: u32,
    pub first: i64,
    pub count: u32,
}

/// Times from here on are not all exact as `f64`.
const EXACT_LIMIT: i128 = 1 << 53;

/// Every row's spans at each of `levels`, as [`super::rows`] gives them for a window of
/// whole columns of that level; `None` when a window reaches times from 2^53 ns on, where
/// `rows`' positions round (compute those one window at a time).
pub fn rows_at_levels(
    model: &Model,
    origin: Nanos,
    levels: &[LevelColumns],
    rows: &[Cpu],
    filter: &TaskFilter,
    coloring: &Coloring,
) -> Option<Vec<Vec<Row>>> {
    let base = Base::of(origin, levels)?;
    let mut per_row = super::per_row_on_cores(model, rows, filter, coloring, |cpu, painter| {
        row_levels(model, cpu, &base, levels, painter)
    });
    Some(
        (0..levels.len())
            .map(|level| {
                rows.iter()
                    .zip(&mut per_row)
                    .map(|(&cpu, spans)| Row { cpu, spans: std::mem::take(&mut spans[level]) })
                    .collect()
            })
            .collect(),
    )
}

/// The finest level asked for and the columns of it that cover every level's window.
struct Base {
    level: u32,
    /// Base column `first` starts at `start`.
    first: i64,
    start: u64,
    end: u64,
}

impl Base {
    fn of(origin: Nanos, levels: &[LevelColumns]) -> Option<Base> {
        let level = levels.iter().map(|l| l.level).min()?;
        if levels.iter().any(|l| l.level > 52) {
            return None;
        }
        let in_base = |l: &LevelColumns, column: i128| column << (l.level - level);
        let first = levels.iter().map(|l| in_base(l, i128::from(l.first))).min()?;
        let last = levels.iter().map(|l| in_base(l, i128::from(l.first) + i128::from(l.count))).max()?;
        let time = |column: i128| i128::from(origin.0) + (column << level);
        let (start, end) = (time(first), time(last));
        if start < 0 || end >= EXACT_LIMIT {
            return None;
        }
        Some(Base { level, first: i64::try_from(first).ok()?, start: start as u64, end: end as u64 })
    }
}

/// Time covered per color in one column: `(column, color, ns)`, sorted by column then
/// color, one entry per color and column.
type Cover = Vec<(i64, Rgb, u64)>;

/// One CPU's spans at each level.
fn row_levels(
    model: &Model,
    cpu: Cpu,
    base: &Base,
    levels: &[LevelColumns],
    painter: &mut Painter<'_>,
) -> Vec<Vec<Span>> {
    let mut cover = base_cover(model, cpu, base, painter);
    let mut order: Vec<usize> = (0..levels.len()).collect();
    order.sort_by_key(|&i| levels[i].level);
    let mut spans = vec![Vec::new(); levels.len()];
    let mut level = base.level;
    for index in order {
        while level < levels[index].level {
            cover = halve(cover);
            level += 1;
        }
        spans[index] = chosen_spans(&cover, &levels[index]);
    }
    spans
}

/// The time each color covers in each base column.
fn base_cover(model: &Model, cpu: Cpu, base: &Base, painter: &mut Painter<'_>) -> Cover {
    let mut cover: Cover = Vec::new();
    let mut column_sums = ColumnSums::default();
    let mut current: Option<i64> = None;
    let width = 1u64 << base.level;
    let window = Window::new(Nanos(base.start), Nanos(base.end));
    super::each_run(model, cpu, window, painter, |start, end, color| {
        let Some(color) = color else { return };
        let (start, end) = (start.0.max(base.start) - base.start, end.0.min(base.end).saturating_sub(base.start));
        if end <= start {
            return;
        }
        for column in start >> base.level..=(end - 1) >> base.level {
            let (from, to) = (start.max(column * width), end.min((column + 1) * width));
            let column = base.first + column as i64;
            if current != Some(column) {
                if let Some(done) = current {
                    column_sums.drain_into(done, &mut cover);
                }
                current = Some(column);
            }
            column_sums.add(color, to - from);
        }
    });
    if let Some(done) = current {
        column_sums.drain_into(done, &mut cover);
    }
    // Runs come in time order, so columns do too; should a damaged model's runs not,
    // a column's entries are summed again.
    if !cover.is_sorted_by_key(|&(column, _, _)| column) {
        cover.sort_unstable_by_key(|&(column, color, _)| (column, color));
        cover = summed(cover);
    }
    cover
}

/// The time each color covers in one column, summed as runs arrive: a small open
/// addressing table keyed by the color (a column at the base level holds hundreds of
/// runs of a few dozen tasks, which sorting would order one by one).
#[derive(Default)]
struct ColumnSums {
    /// `(key, ns)`, key 0 for an empty slot; a power of two long.
    slots: Vec<(u32, u64)>,
    used: Vec<usize>,
}

impl ColumnSums {
    /// A color as a key: nonzero, and ordered as the colors are.
    fn key(color: Rgb) -> u32 {
        (u32::from(color.0) << 16 | u32::from(color.1) << 8 | u32::from(color.2)) + 1
    }

    fn color(key: u32) -> Rgb {
        let rgb = key - 1;
        Rgb((rgb >> 16) as u8, (rgb >> 8) as u8, rgb as u8)
    }

    #[inline]
    fn add(&mut self, color: Rgb, ns: u64) {
        if 2 * (self.used.len() + 1) > self.slots.len() {
            self.grow();
        }
        self.add_key(Self::key(color), ns);
    }

    /// Adds to `key`'s sum; the table has room.
    #[inline]
    fn add_key(&mut self, key: u32, ns: u64) {
        let mask = self.slots.len() - 1;
        let mut slot = (key.wrapping_mul(0x9e37_79b1) >> 16) as usize & mask;
        loop {
            let entry = &mut self.slots[slot];
            if entry.0 == key {
                entry.1 += ns;
                return;
            }
            if entry.0 == 0 {
                *entry = (key, ns);
                self.used.push(slot);
                return;
            }
            slot = (slot + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let entries: Vec<(u32, u64)> = self.used.drain(..).map(|slot| self.slots[slot]).collect();
        self.slots = vec![(0, 0); (2 * self.slots.len()).max(64)];
        for (key, ns) in entries {
            self.add_key(key, ns);
        }
    }

    /// Appends the column's sums to `cover` in color order and empties the table.
    fn drain_into(&mut self, column: i64, cover: &mut Cover) {
        let from = cover.len();
        for slot in self.used.drain(..) {
            let (key, ns) = std::mem::take(&mut self.slots[slot]);
            cover.push((column, Self::color(key), ns));
        }
        cover[from..].sort_unstable_by_key(|&(_, color, _)| color);
    }
}

/// Adds up the entries of one color in one column (the entries sorted by both).
fn summed(sorted: Cover) -> Cover {
    let mut out: Cover = Vec::with_capacity(sorted.len());
    for (column, color, ns) in sorted {
        match out.last_mut() {
            Some(last) if last.0 == column && last.1 == color => last.2 += ns,
            _ => out.push((column, color, ns)),
        }
    }
    out
}

/// The next level: each column the sum of its two halves, whose entries are each in
/// color order and are merged in one pass.
fn halve(cover: Cover) -> Cover {
    let mut parents: Cover = Vec::with_capacity(cover.len());
    for parent in cover.chunk_by(|a, b| a.0 >> 1 == b.0 >> 1) {
        let column = parent[0].0 >> 1;
        let (left, right) = parent.split_at(parent.partition_point(|e| e.0 == parent[0].0));
        let (mut i, mut j) = (0, 0);
        while i < left.len() || j < right.len() {
            // The next color of either half, from both when they share it.
            let (l, r) = (left.get(i), right.get(j));
            let from_left = l.filter(|l| r.is_none_or(|r| l.1 <= r.1));
            let from_right = r.filter(|r| l.is_none_or(|l| r.1 <= l.1));
            let color = from_left.or(from_right).expect("a half has entries left").1;
            let ns = from_left.map_or(0, |e| e.2) + from_right.map_or(0, |e| e.2);
            i += usize::from(from_left.is_some());
            j += usize::from(from_right.is_some());
            parents.push((column, color, ns));
        }
    }
    parents
}

/// A level's spans: each column shows the color that covers most of it (the lowest such
/// color on a tie), unless background covers more, as `rows` decides.
fn chosen_spans(cover: &Cover, columns: &LevelColumns) -> Vec<Span> {
    let width = 1u128 << columns.level;
    let end = columns.first + i64::from(columns.count);
    let start = cover.partition_point(|e| e.0 < columns.first);
    let mut spans: Vec<Span> = Vec::new();
    for group in cover[start..].chunk_by(|a, b| a.0 == b.0) {
        let column = group[0].0;
        if column >= end {
            break;
        }
        let colored: u128 = group.iter().map(|e| u128::from(e.2)).sum();
        let best = group.iter().fold(group[0], |best, e| if e.2 > best.2 { *e } else { best });
        if u128::from(best.2) + colored < width {
            continue;
        }
        let x = (column - columns.first) as u32;
        match spans.last_mut() {
            Some(span) if span.x1 == x && span.color == best.1 => span.x1 += 1,
            _ => spans.push(Span { x0: x, x1: x + 1, color: best.1 }),
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::scenario::*;

    #[test]
    fn windows_reaching_2_to_the_53_ns_are_left_to_rows() {
        let model = Scenario::new(1, &[(1, "alpha")]).other(0, 0, 1).other(10, 0, 1).finish();
        let filter = TaskFilter::default();
        let at = |first| [LevelColumns { level: 3, first, count: 4 }];
        let rows_from = |first| rows_at_levels(&model, Nanos(0), &at(first), &[Cpu(0)], &filter, &Coloring::ByPid);
        assert!(rows_from(0).is_some());
        assert!(rows_from(1 << 50).is_none());
    }
}
