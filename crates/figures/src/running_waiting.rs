//! The running/waiting plot of the schedgraph paper as data at the output's resolution:
//! per pixel column, the first, lowest, highest and last number of running tasks and of
//! running plus waiting tasks (so a spike shorter than a column still shows), and how
//! much of the column had a task waiting while a CPU idled. Zoomed in far enough, each
//! column holds one value and the lines are the exact step functions.

use crate::pixel::{ColumnScale, ceil_index, floor_index, to_f64};
use analysis::occupancy::{
    CpuSweepVisitor, Cuts, IdleWhileWaiting, IdleWhileWaitingSum, Occupancy, cpu_queue_length, sweep_cpus_in_parts,
    sweep_in_parts,
};
use analysis::{TaskFilter, Window};
use model::{Cpu, Model, Nanos};

/// The values a count took within one column.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Extent {
    pub first: u32,
    pub min: u32,
    pub max: u32,
    pub last: u32,
}

impl Extent {
    fn start(value: u32) -> Extent {
        Extent { first: value, min: value, max: value, last: value }
    }

    /// Extends the extent with a later one.
    pub fn then(&mut self, later: Extent) {
        self.min = self.min.min(later.min);
        self.max = self.max.max(later.max);
        self.last = later.last;
    }
}

/// One pixel column of the plot.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Column {
    pub running: Extent,
    /// Running plus waiting.
    pub total: Extent,
    /// Share of the column during which a task waited while a CPU idled.
    pub waiting_while_idle: f64,
    /// Share of the column during which that is unknown (see
    /// [`Occupancy::waiting_while_idle_unknown`]).
    pub unknown: f64,
}

impl Column {
    /// Extends the column with what a later stretch of time put in it.
    pub fn then(&mut self, later: Column) {
        self.running.then(later.running);
        self.total.then(later.total);
        self.waiting_while_idle += later.waiting_while_idle;
        self.unknown += later.unknown;
    }
}

/// Maps stretches of time onto pixel columns.
struct ColumnMap {
    start: Nanos,
    scale: ColumnScale,
    count: usize,
    /// `log2` of the column width when that is a whole power of two of ns and the window
    /// is shorter than 2^53 ns (where the positions as `f64` are exact): the indices then
    /// come from shifts, with the same result.
    shift: Option<u32>,
}

impl ColumnMap {
    fn new(window: Window, columns: u32) -> ColumnMap {
        let count = columns.max(1) as usize;
        let len = window.len().0;
        let width = len / count as u64;
        let exact = len < 1 << 53 && width.is_power_of_two() && width * count as u64 == len;
        ColumnMap {
            start: window.start,
            scale: ColumnScale::new(len.max(1) as f64 / count as f64),
            count,
            shift: exact.then(|| width.trailing_zeros()),
        }
    }

    /// The columns `[start, end)` touches; always below `count`, whatever the times
    /// (clamped), so callers index with them.
    #[inline]
    fn indices(&self, start: Nanos, end: Nanos) -> std::ops::RangeInclusive<usize> {
        let (from, to) = self.offsets(start, end);
        self.range(from, to, || self.positions(from, to))
    }

    /// The columns `[start, end)` touches, each with the share of it covered.
    #[inline]
    fn covered(&self, start: Nanos, end: Nanos) -> impl Iterator<Item = (usize, f64)> + '_ {
        let (from, to) = self.offsets(start, end);
        let (x0, x1) = self.positions(from, to);
        self.range(from, to, || (x0, x1)).map(move |c| {
            let left = to_f64(c as u64);
            (c, x1.min(left + 1.0) - x0.max(left))
        })
    }

    /// `[start, end)` in ns from the window's start (times before it count as its start).
    #[inline]
    fn offsets(&self, start: Nanos, end: Nanos) -> (u64, u64) {
        (start.0.saturating_sub(self.start.0), end.0.saturating_sub(self.start.0))
    }

    /// Offsets in columns.
    #[inline]
    fn positions(&self, from: u64, to: u64) -> (f64, f64) {
        (self.scale.columns(to_f64(from)), self.scale.columns(to_f64(to)))
    }

    /// The columns of offsets `[from, to)`: by shifts at a power-of-two width, else from
    /// their `positions` in columns.
    #[inline]
    fn range(&self, from: u64, to: u64, positions: impl FnOnce() -> (f64, f64)) -> std::ops::RangeInclusive<usize> {
        match self.shift {
            Some(shift) => self.clamped((from >> shift) as usize, to.div_ceil(1 << shift) as usize),
            None => {
                let (x0, x1) = positions();
                self.clamped(floor_index(x0), ceil_index(x1))
            }
        }
    }

    /// Columns `[first, after)`, at least one, all below `count`.
    #[inline]
    fn clamped(&self, first: usize, after: usize) -> std::ops::RangeInclusive<usize> {
        first.min(self.count - 1)..=(after.max(1) - 1).min(self.count - 1)
    }

    /// The offsets at which stretches lie in `column` alone, as [`Self::range`] places
    /// them: its first column depends only on where a stretch starts, its last only on
    /// where it ends, and both grow with the offset, so the bounds are searched with
    /// that same arithmetic.
    fn span_of(&self, column: usize) -> ColumnSpan {
        let first = |from: u64| *self.range(from, from, || self.positions(from, from)).start();
        let last = |to: u64| *self.range(to, to, || self.positions(to, to)).end();
        ColumnSpan { column, starts: self.offsets_placing(column, first), ends: self.offsets_placing(column, last) }
    }

    /// The offsets that `place` (growing with the offset) puts in `column`.
    fn offsets_placing(&self, column: usize, place: impl Fn(u64) -> usize) -> std::ops::RangeInclusive<u64> {
        // Where a column's edge would be in exact arithmetic: the search starts there.
        let edge = |column: usize| (to_f64(column as u64) * self.scale.ns_per_column()) as u64;
        let from = if column == 0 { Some(0) } else { least_offset(|x| place(x) >= column, edge(column)) };
        let to = least_offset(|x| place(x) > column, edge(column + 1)).map_or(u64::MAX, |beyond| beyond - 1);
        // No offset reaches the column: no stretch starts at u64::MAX (it ends later).
        from.unwrap_or(u64::MAX)..=to
    }
}

/// The offsets at which stretches lie in one column alone: those they may start at and
/// those they may end at.
#[derive(Clone, Debug)]
struct ColumnSpan {
    column: usize,
    starts: std::ops::RangeInclusive<u64>,
    ends: std::ops::RangeInclusive<u64>,
}

impl ColumnSpan {
    #[inline]
    fn holds(&self, from: u64, to: u64) -> bool {
        self.starts.contains(&from) && self.ends.contains(&to)
    }
}

/// The least offset at which `holds` (false, then true as offsets grow) is true, or
/// `None`: searched outwards from `guess`, where it usually turns, then by halving.
fn least_offset(holds: impl Fn(u64) -> bool, guess: u64) -> Option<u64> {
    let mut step = 1u64;
    let mut below = guess;
    while holds(below) {
        if below == 0 {
            return Some(0);
        }
        below = below.saturating_sub(step);
        step = step.saturating_mul(2);
    }
    step = 1;
    let mut above = guess;
    while !holds(above) {
        if above == u64::MAX {
            return None;
        }
        above = above.saturating_add(step);
        step = step.saturating_mul(2);
    }
    // `holds(below)` is false and `holds(above)` true.
    while above - below > 1 {
        let middle = below + (above - below) / 2;
        if holds(middle) {
            above = middle;
        } else {
            below = middle;
        }
    }
    Some(above)
}

/// The plot's data: its columns, and the exact time a task waited while a CPU idled.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunningWaiting {
    pub columns: Vec<Column>,
    pub idle_while_waiting: IdleWhileWaiting,
}

/// The plot's columns for `window`, counting the tasks `filter` accepts, from one sweep
/// cut into parts swept on the machine's cores.
pub fn columns(model: &Model, window: Window, columns: u32, filter: &TaskFilter) -> RunningWaiting {
    let map = ColumnMap::new(window, columns);
    let parts = sweep_in_parts(
        model,
        window,
        filter,
        sweep_threads(),
        Cuts::EqualChanges,
        |_| PartColumns::new(&map),
        PartColumns::add,
    );
    PartColumns::merge(&map, parts)
}

/// The plot's columns and the runqueue lengths per column of the CPUs in `cpus` (as
/// [`queue_length_rows`] gives them), from one sweep that follows each CPU.
pub fn columns_and_queue_lengths(
    model: &Model,
    window: Window,
    columns: u32,
    filter: &TaskFilter,
    cpus: &[Cpu],
) -> (RunningWaiting, Vec<Vec<u32>>) {
    let map = ColumnMap::new(window, columns);
    let mut row_of = vec![None; model.cpus().len()];
    for (row, cpu) in cpus.iter().enumerate() {
        if let Some(slot) = row_of.get_mut(cpu.index()) {
            *slot = Some(row);
        }
    }
    let parts = sweep_cpus_in_parts(model, window, filter, sweep_threads(), Cuts::EqualChanges, |part| BothPart {
        columns: PartColumns::new(&map),
        glued: None,
        queues: QueuePart::new(&map, part, &row_of, cpus.len()),
    });
    let mut queues = vec![vec![0u32; map.count]; cpus.len()];
    let mut column_parts = Vec::with_capacity(parts.len());
    for part in parts {
        let (part_columns, part_queues) = part.finish();
        column_parts.push(part_columns);
        part_queues.max_into(&mut queues);
    }
    (PartColumns::merge(&map, column_parts), queues)
}

/// Parts a sweep is cut into: one per core.
fn sweep_threads() -> usize {
    analysis::cores::available()
}

/// One part of a sweep's columns and its time waiting while a core idled.
struct PartColumns<'m> {
    map: &'m ColumnMap,
    columns: Vec<Option<Column>>,
    /// The last column a stretch reached, built up here while stretches stay in it
    /// (most stretches are much shorter than a column); later stretches never reach
    /// back to earlier columns.
    open: Option<(usize, Column)>,
    /// Where stretches lie in the open column alone, found when first needed.
    open_span: Option<ColumnSpan>,
    sum: IdleWhileWaitingSum,
}

impl<'m> PartColumns<'m> {
    fn new(map: &'m ColumnMap) -> Self {
        PartColumns {
            map,
            columns: vec![None; map.count],
            open: None,
            open_span: None,
            sum: IdleWhileWaitingSum::default(),
        }
    }

    fn add(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
        self.sum.add(start, end, occupancy);
        let (running, total) = (occupancy.running, occupancy.running.saturating_add(occupancy.waiting));
        let (wasted, unknown) = (occupancy.waiting_while_idle(), occupancy.waiting_while_idle_unknown());
        let column = |share: f64| Column {
            running: Extent::start(running),
            total: Extent::start(total),
            waiting_while_idle: if wasted { share } else { 0.0 },
            unknown: if unknown { share } else { 0.0 },
        };
        if !wasted && !unknown && self.extends_open(start, end, column(0.0)) {
            return;
        }
        if wasted || unknown {
            for (index, share) in self.map.covered(start, end) {
                self.put(index, column(share));
            }
        } else {
            // Nothing to add to the shares: the columns are enough.
            for index in self.map.indices(start, end) {
                self.put(index, column(0.0));
            }
        }
    }

    /// Adds `column` to the open column if the stretch `[start, end)` lies in it alone
    /// (most stretches do): the same as [`Self::put`], without placing the stretch by
    /// division.
    #[inline]
    fn extends_open(&mut self, start: Nanos, end: Nanos, column: Column) -> bool {
        let Some((open, built)) = &mut self.open else { return false };
        let span = match &self.open_span {
            Some(span) if span.column == *open => span,
            _ => self.open_span.insert(self.map.span_of(*open)),
        };
        let (from, to) = self.map.offsets(start, end);
        let inside = span.holds(from, to);
        if inside {
            built.then(column);
        }
        inside
    }

    /// Adds a stretch's part of column `index`.
    #[inline]
    fn put(&mut self, index: usize, column: Column) {
        match &mut self.open {
            Some((open, built)) if *open == index => built.then(column),
            open => {
                if let Some((index, built)) = open.replace((index, column)) {
                    merge_into(&mut self.columns[index], built);
                }
            }
        }
    }

    /// The columns, the open one included.
    fn finished(mut self) -> (Vec<Option<Column>>, IdleWhileWaitingSum) {
        if let Some((index, built)) = self.open.take() {
            merge_into(&mut self.columns[index], built);
        }
        (self.columns, self.sum)
    }

    /// The parts of a sweep, in time order, as one.
    fn merge(map: &ColumnMap, parts: Vec<PartColumns<'_>>) -> RunningWaiting {
        let mut merged: Vec<Option<Column>> = vec![None; map.count];
        let mut idle_while_waiting = IdleWhileWaitingSum::default();
        for part in parts {
            let (columns, sum) = part.finished();
            for (into, column) in merged.iter_mut().zip(columns) {
                if let Some(column) = column {
                    merge_into(into, column);
                }
            }
            idle_while_waiting = idle_while_waiting.then(sum);
        }
        RunningWaiting {
            columns: merged.into_iter().map(Option::unwrap_or_default).collect(),
            idle_while_waiting: idle_while_waiting.finish(),
        }
    }
}

/// One part of a sweep's runqueue lengths, per row (a CPU asked for) over the columns
/// the part touches. Cells are kept column by column: the sweep's changes come in time
/// order from every CPU, so neighbouring changes land in one column's cells.
struct QueuePart<'m> {
    map: &'m ColumnMap,
    part: Window,
    /// Per model CPU, its row, if asked for.
    row_of: &'m [Option<usize>],
    /// The first column the part touches.
    first: usize,
    /// `cells[column * rows + row]`, columns from `first`.
    cells: Vec<u32>,
    /// Per row, since when its length has been what it is.
    since: Vec<(Nanos, u32)>,
}

impl<'m> QueuePart<'m> {
    fn new(map: &'m ColumnMap, part: Window, row_of: &'m [Option<usize>], rows: usize) -> Self {
        let touched: Vec<usize> = map.indices(part.start, part.end).collect();
        let first = touched.first().copied().unwrap_or(0);
        let width = touched.last().map_or(0, |last| last + 1 - first);
        QueuePart { map, part, row_of, first, cells: vec![0; width * rows], since: vec![(part.start, 0); rows] }
    }

    /// `cpu`'s length is `length` from `time` on (often what it was: a CPU that takes
    /// a task from its queue keeps its length).
    fn change(&mut self, time: Nanos, cpu: Cpu, length: u32) {
        if let Some(&Some(row)) = self.row_of.get(cpu.index())
            && self.since[row].1 != length
        {
            self.row_change(time, row, length);
        }
    }

    fn row_change(&mut self, time: Nanos, row: usize, length: u32) {
        let (since, before) = self.since[row];
        if time > since {
            let rows = self.since.len();
            for index in self.map.indices(since, time) {
                let cell = &mut self.cells[(index - self.first) * rows + row];
                *cell = (*cell).max(before);
            }
        }
        self.since[row] = (time, length);
    }

    fn finish(mut self) -> Self {
        for row in 0..self.since.len() {
            self.row_change(self.part.end, row, 0);
        }
        self
    }

    fn max_into(self, rows: &mut [Vec<u32>]) {
        let count = rows.len().max(1);
        for (column, cells) in self.cells.chunks(count).enumerate() {
            for (row, &length) in rows.iter_mut().zip(cells) {
                let cell = &mut row[self.first + column];
                *cell = (*cell).max(length);
            }
        }
    }
}

/// One part of the sweep of [`columns_and_queue_lengths`]. The sweep splits stretches
/// wherever a CPU changes; neighbours with the same counts are glued back before they
/// reach the columns, so the columns are exactly those of [`columns`].
struct BothPart<'m> {
    columns: PartColumns<'m>,
    glued: Option<(Nanos, Nanos, Occupancy)>,
    queues: QueuePart<'m>,
}

impl<'m> BothPart<'m> {
    fn finish(mut self) -> (PartColumns<'m>, QueuePart<'m>) {
        if let Some((start, end, occupancy)) = self.glued.take() {
            self.columns.add(start, end, occupancy);
        }
        (self.columns, self.queues.finish())
    }
}

impl CpuSweepVisitor for BothPart<'_> {
    fn stretch(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
        match &mut self.glued {
            Some((_, until, counts)) if *until == start && *counts == occupancy => *until = end,
            glued => {
                if let Some((start, end, occupancy)) = glued.replace((start, end, occupancy)) {
                    self.columns.add(start, end, occupancy);
                }
            }
        }
    }

    fn cpu(&mut self, time: Nanos, cpu: Cpu, counts: Occupancy) {
        self.queues.change(time, cpu, counts.running.saturating_add(counts.waiting));
    }
}

/// Adds what a later stretch of time put in a column.
fn merge_into(column: &mut Option<Column>, later: Column) {
    match column {
        None => *column = Some(later),
        Some(column) => column.then(later),
    }
}

/// A CPU's runqueue length (running plus waiting there) per column: the highest value.
pub fn queue_length_columns(model: &Model, cpu: Cpu, window: Window, columns: u32, filter: &TaskFilter) -> Vec<u32> {
    let map = ColumnMap::new(window, columns);
    let mut out = vec![0u32; map.count];
    cpu_queue_length(model, cpu, window, filter, |start, end, length| {
        for index in map.indices(start, end) {
            out[index] = out[index].max(length);
        }
    });
    out
}

/// [`queue_length_columns`] for several CPUs, spread over the machine's cores.
pub fn queue_length_rows(
    model: &Model,
    cpus: &[Cpu],
    window: Window,
    columns: u32,
    filter: &TaskFilter,
) -> Vec<Vec<u32>> {
    analysis::cores::on_cores(
        cpus.len(),
        || (),
        |(), row| queue_length_columns(model, cpus[row], window, columns, filter),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::scenario::*;

    /// 0: AAAAABBBBBAAAAA   B waits behind A from 20 to 50, then A behind B until 100,
    /// 0q ..bbbaaaaa.....   while CPU 1 idles.
    /// 1: ...............
    fn model() -> Model {
        Scenario::new(2, &[(1, "alpha"), (2, "beta")])
            .other(0, 0, 1)
            .switch(0, 1, 7, S, 0)
            .wake(20, 0, 1, 2, 0)
            .switch(50, 0, 1, R, 2)
            .switch(100, 0, 2, S, 1)
            .other(150, 0, 1)
            .other(150, 1, 0)
            .finish()
    }

    fn e(first: u32, min: u32, max: u32, last: u32) -> Extent {
        Extent { first, min, max, last }
    }

    #[test]
    fn columns_keep_extremes_and_shade_waiting_while_idle() {
        let model = model();
        let window = Window::new(Nanos(0), Nanos(150));
        let cols = columns(&model, window, 3, &TaskFilter::default()).columns;
        assert_eq!(cols.iter().map(|c| c.total).collect::<Vec<_>>(), [e(1, 1, 2, 2), e(2, 2, 2, 2), e(1, 1, 1, 1)]);
        assert!(cols.iter().all(|c| c.running == e(1, 1, 1, 1)));
        let shaded: Vec<f64> = cols.iter().map(|c| (c.waiting_while_idle * 100.0).round() / 100.0).collect();
        assert_eq!(shaded, [0.6, 1.0, 0.0]);
    }

    #[test]
    fn a_stretch_is_in_a_columns_span_exactly_when_it_lies_in_that_column_alone() {
        let windows = [(0, 150), (1000, 1 << 20), (5, 106_707_176_123), (3, 7), (9, 1_000_000_000_000_003)];
        for (start, len) in windows {
            let window = Window::new(Nanos(start), Nanos(start + len));
            for count in [1, 3, 7, 1024, 1600] {
                let map = ColumnMap::new(window, count);
                let alone = |from: u64, to: u64, column: usize| {
                    map.indices(Nanos(start + from), Nanos(start + to)) == (column..=column)
                };
                for column in (0..map.count).step_by((map.count / 40).max(1)).chain([map.count - 1]) {
                    let span = map.span_of(column);
                    let edges = [*span.starts.start(), *span.starts.end(), *span.ends.start(), *span.ends.end()];
                    let near: Vec<u64> =
                        edges.iter().flat_map(|&e| [e.saturating_sub(1), e, e.saturating_add(1)]).collect();
                    for &from in &near {
                        for &to in near.iter().filter(|&&to| to > from && to <= len) {
                            let said = span.holds(from, to);
                            assert_eq!(said, alone(from, to, column), "[{from}, {to}) in {column} of {count}, {len}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn per_cpu_queue_lengths() {
        let model = model();
        let window = Window::new(Nanos(0), Nanos(150));
        assert_eq!(queue_length_columns(&model, Cpu(0), window, 3, &TaskFilter::default()), [2, 2, 1]);
        assert_eq!(queue_length_columns(&model, Cpu(1), window, 3, &TaskFilter::default()), [0, 0, 0]);
    }

    #[test]
    fn one_sweep_gives_the_columns_and_the_queue_lengths_of_the_separate_ones() {
        let model = model();
        let filter = TaskFilter::default();
        for (start, end) in [(0, 150), (7, 143), (20, 100), (49, 51)] {
            let window = Window::new(Nanos(start), Nanos(end));
            for count in [1, 2, 3, 7, 64, 300] {
                let (both, queues) = columns_and_queue_lengths(&model, window, count, &filter, &[Cpu(1), Cpu(0)]);
                assert_eq!(both, columns(&model, window, count, &filter), "{window:?} in {count}");
                for (row, cpu) in [Cpu(1), Cpu(0)].into_iter().enumerate() {
                    let alone = queue_length_columns(&model, cpu, window, count, &filter);
                    assert_eq!(queues[row], alone, "{cpu:?}, {window:?} in {count}");
                }
            }
        }
    }
}
