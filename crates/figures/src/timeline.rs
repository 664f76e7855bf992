//! The per-core timeline of the schedgraph paper as data at the output's resolution: per
//! CPU row, colored spans of pixel columns. Runs narrower than a column are never drawn
//! one by one; each column shows the task that covered most of it (or nothing, when
//! idle or untracked time covered more), so a 256-core, 50M-event trace becomes at most
//! one mark per row per column, and zooming in brings back every run.

use crate::palette::{Rgb, color_of, color_of_name};
use crate::pixel::{ColumnScale, ceil_index, floor_index, to_f64};
use analysis::{TaskFilter, Window};
use model::{Cpu, Model, Nanos, Segment, TaskId};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

mod levels;
pub use levels::{LevelColumns, rows_at_levels};

/// How running tasks are colored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Coloring {
    /// Each pid its own (stable) color.
    ByPid,
    /// Tasks whose command starts with the prefix by pid, all others black.
    Target(String),
    /// Each command name its own color.
    ByCommand,
}

/// A run of pixel columns `[x0, x1)` of one color.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub x0: u32,
    pub x1: u32,
    pub color: Rgb,
}

/// One CPU's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub cpu: Cpu,
    pub spans: Vec<Span>,
}

/// What to draw.
#[derive(Clone, Debug)]
pub struct TimelineRequest<'a> {
    pub window: Window,
    /// Pixel columns across the window.
    pub columns: u32,
    /// CPUs from the first row to the last.
    pub rows: &'a [Cpu],
    pub filter: &'a TaskFilter,
    pub coloring: &'a Coloring,
}

/// Computes every row's spans, rows spread over the machine's cores.
pub fn rows(model: &Model, request: &TimelineRequest<'_>) -> Vec<Row> {
    let spans = per_row_on_cores(model, request.rows, request.filter, request.coloring, |cpu, painter| {
        let mut columns = Columns::new(request.window, request.columns);
        each_run(model, cpu, request.window, painter, |start, end, color| columns.add(start.0, end.0, color));
        columns.finish()
    });
    request.rows.iter().zip(spans).map(|(&cpu, spans)| Row { cpu, spans }).collect()
}

/// Shares of the rows per core: rows are drawn a few neighbouring CPUs at a time (which
/// run the same tasks, whose colors a painter keeps), eight times as many pieces as cores.
const ROW_SHARES: usize = 8;

/// `row(cpu, painter)` for each of `cpus`, in order, spread over the machine's cores
/// (each thread with its own painter); rows do not depend on which thread drew them.
fn per_row_on_cores<T: Send>(
    model: &Model,
    cpus: &[Cpu],
    filter: &TaskFilter,
    coloring: &Coloring,
    row: impl Fn(Cpu, &mut Painter<'_>) -> T + Sync,
) -> Vec<T> {
    let rows_taken = cpus.len().div_ceil(analysis::cores::available() * ROW_SHARES).max(1);
    let pieces = analysis::cores::on_cores(
        cpus.len().div_ceil(rows_taken),
        || Painter::new(model, filter, coloring),
        |painter, piece| {
            let taken = &cpus[piece * rows_taken..((piece + 1) * rows_taken).min(cpus.len())];
            taken.iter().map(|&cpu| row(cpu, painter)).collect::<Vec<T>>()
        },
    );
    pieces.into_iter().flatten().collect()
}

/// Hands `visit` every run of `cpu` that overlaps `window`, in time order, with its
/// color (`None`: background): the segments, and in grey the stretches whose state is
/// unknown — uncertain ones and those the model has nothing for (before the CPU's first
/// event, after its last, all of a CPU without events).
fn each_run(
    model: &Model,
    cpu: Cpu,
    window: Window,
    painter: &mut Painter<'_>,
    mut visit: impl FnMut(Nanos, Nanos, Option<Rgb>),
) {
    let Some(timeline) = model.cpus().get(cpu.index()) else { return };
    let segments = &timeline.segments();
    let mut uncertain = timeline.uncertain().iter().filter(|&&(s, e)| e > window.start && s < window.end).peekable();
    // Up to where the model said something; a gap before the next run, within the
    // trace, is unknown.
    let mut covered = window.start.max(model.start());
    let trace_end = window.end.min(model.end());
    let mut visit = |start: Nanos, end: Nanos, color: Option<Rgb>| {
        if start.min(trace_end) > covered {
            visit(covered, start.min(trace_end), Some(Rgb::UNKNOWN));
        }
        visit(start, end, color);
        covered = covered.max(end);
    };
    for segment in segments.iter_range(segments.overlapping(window.start, window.end)) {
        while let Some(&&(start, end)) = uncertain.peek().filter(|(start, _)| *start <= segment.start) {
            visit(start, end, Some(Rgb::UNKNOWN));
            uncertain.next();
        }
        visit(segment.start, segment.end, painter.color(&segment));
    }
    for &(start, end) in uncertain {
        visit(start, end, Some(Rgb::UNKNOWN));
    }
    visit(trace_end, trace_end, None);
}

/// The color a segment is drawn in, or `None` for background (idle, filtered out).
pub fn segment_color(model: &Model, segment: &Segment, filter: &TaskFilter, coloring: &Coloring) -> Option<Rgb> {
    if segment.task == TaskId::IDLE || !filter.accepts(model, segment.task) {
        return None;
    }
    let pid = model.tasks().get(segment.task).pid.0 as u64;
    Some(match coloring {
        Coloring::ByPid => color_of(pid),
        Coloring::Target(prefix) if model.comm_at(segment.task, segment.start).starts_with(prefix.as_str()) => {
            color_of(pid)
        }
        Coloring::Target(_) => Rgb::BLACK,
        Coloring::ByCommand => color_of_name(model.comm_at(segment.task, segment.start)),
    })
}

/// Segment colors with a per-task cache: a task's color only changes with its name, so
/// the color of the name it had is remembered with the stretch of time it had it.
struct Painter<'a> {
    model: &'a Model,
    filter: &'a TaskFilter,
    coloring: &'a Coloring,
    /// Per task: the last color looked up (`None`: background) and the time its name held.
    cache: Vec<Option<(Nanos, Nanos, Option<Rgb>)>>,
}

impl<'a> Painter<'a> {
    fn new(model: &'a Model, filter: &'a TaskFilter, coloring: &'a Coloring) -> Painter<'a> {
        Painter { model, filter, coloring, cache: vec![None; model.tasks().len()] }
    }

    fn color(&mut self, segment: &Segment) -> Option<Rgb> {
        let index = segment.task.index();
        if let Some(Some((from, until, color))) = self.cache.get(index) {
            if (*from..*until).contains(&segment.start) {
                return *color;
            }
        }
        let color = segment_color(self.model, segment, self.filter, self.coloring);
        let (from, until) = self.model.tasks().get(segment.task).comm_span_at(segment.start);
        if let Some(slot) = self.cache.get_mut(index) {
            *slot = Some((from, until, color));
        }
        color
    }
}

/// Accumulates colored time per pixel column, in time order.
struct Columns {
    start: f64,
    scale: ColumnScale,
    count: usize,
    /// The winning color of each finished column.
    chosen: Vec<Option<Rgb>>,
    /// The column being accumulated and its colored coverage (fractions of a column).
    current: usize,
    /// How much of the current column each color covers, and where each color is in it
    /// (a column can hold hundreds of tasks' runs).
    parts: Vec<(Rgb, f64)>,
    part_of: HashMap<Rgb, usize, BuildHasherDefault<ColorHasher>>,
}

impl Columns {
    fn new(window: Window, columns: u32) -> Columns {
        let count = columns.max(1) as usize;
        Columns {
            start: window.start.0 as f64,
            scale: ColumnScale::new(window.len().0.max(1) as f64 / count as f64),
            count,
            chosen: vec![None; count],
            current: 0,
            parts: Vec::new(),
            part_of: HashMap::default(),
        }
    }

    /// Adds `[start, end)` in `color` (`None`: background, which only takes up room).
    fn add(&mut self, start: u64, end: u64, color: Option<Rgb>) {
        let max = to_f64(self.count as u64);
        let x0 = self.scale.columns(to_f64(start) - self.start).clamp(0.0, max);
        let x1 = self.scale.columns(to_f64(end) - self.start).clamp(0.0, max);
        if x1 <= x0 {
            return;
        }
        let (first, last) = (floor_index(x0), ceil_index(x1).saturating_sub(1));
        self.move_to(first);
        let Some(color) = color else { return };
        if first == last {
            self.cover(color, x1 - x0);
            return;
        }
        self.cover(color, to_f64(first as u64 + 1) - x0);
        // In range: x1 is clamped to `count`, so `last` < `count`.
        for column in first + 1..last {
            self.chosen[column] = Some(color);
        }
        self.move_to(last);
        self.cover(color, x1 - to_f64(last as u64));
    }

    fn cover(&mut self, color: Rgb, amount: f64) {
        // Runs of one task often follow each other in a column: its part is the last.
        if let Some(last) = self.parts.last_mut().filter(|last| last.0 == color) {
            last.1 += amount;
            return;
        }
        let parts = &mut self.parts;
        let index = *self.part_of.entry(color).or_insert_with(|| {
            parts.push((color, 0.0));
            parts.len() - 1
        });
        parts[index].1 += amount;
    }

    /// Finishes the current column when `column` is a later one.
    fn move_to(&mut self, column: usize) {
        if column == self.current {
            return;
        }
        self.settle();
        self.current = column.min(self.count - 1);
    }

    /// The current column shows its most-covering color, unless background covers more.
    fn settle(&mut self) {
        let colored: f64 = self.parts.iter().map(|p| p.1).sum();
        let best = self.parts.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
        if let Some((color, amount)) = best {
            if amount >= 1.0 - colored {
                self.chosen[self.current] = Some(color);
            }
        }
        self.parts.clear();
        self.part_of.clear();
    }

    fn finish(mut self) -> Vec<Span> {
        self.settle();
        let mut spans: Vec<Span> = Vec::new();
        for (x, color) in self.chosen.iter().enumerate() {
            let Some(color) = *color else { continue };
            match spans.last_mut() {
                Some(span) if span.x1 == x as u32 && span.color == color => span.x1 += 1,
                _ => spans.push(Span { x0: x as u32, x1: x as u32 + 1, color }),
            }
        }
        spans
    }
}

/// A quick hash for colors (three bytes): a multiply, instead of the default SipHash
/// that would dominate a column's bookkeeping.
#[derive(Default)]
struct ColorHasher(u64);

impl Hasher for ColorHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 << 8 | u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::Nanos;
    use model::scenario::*;

    fn spans(model: &Model, window: (u64, u64), columns: u32, coloring: &Coloring) -> Vec<(u32, u32, Rgb)> {
        let rows_of = [Cpu(0)];
        let request = TimelineRequest {
            window: Window::new(Nanos(window.0), Nanos(window.1)),
            columns,
            rows: &rows_of,
            filter: &TaskFilter::default(),
            coloring,
        };
        rows(model, &request)[0].spans.iter().map(|s| (s.x0, s.x1, s.color)).collect()
    }

    /// 0: AAAABBBBBB....AB   (10 ns per column of the drawing)
    fn alternating() -> Model {
        Scenario::new(1, &[(1, "alpha"), (2, "beta")])
            .other(0, 0, 1)
            .switch(40, 0, 1, S, 2)
            .switch(100, 0, 2, S, 0)
            .wake(140, 0, 0, 1, 0)
            .switch(140, 0, 0, R, 1)
            .switch(150, 0, 1, S, 2)
            .other(160, 0, 2)
            .finish()
    }

    #[test]
    fn one_column_per_nanosecond_bucket_shows_every_run() {
        let model = alternating();
        let (a, b) = (color_of(1), color_of(2));
        assert_eq!(spans(&model, (0, 160), 16, &Coloring::ByPid), [(0, 4, a), (4, 10, b), (14, 15, a), (15, 16, b)]);
    }

    #[test]
    fn wide_columns_keep_the_dominant_task_and_idle_wins_when_it_covers_more() {
        let model = alternating();
        let (a, b) = (color_of(1), color_of(2));
        // 4 columns of 40 ns: A (40), B (40), B 20 + idle 20, idle 20 + A 10 + B 10.
        assert_eq!(spans(&model, (0, 160), 4, &Coloring::ByPid), [(0, 1, a), (1, 3, b)]);
        // Target colors alpha by pid and everything else black.
        assert_eq!(spans(&model, (0, 160), 4, &Coloring::Target("al".into())), [(0, 1, a), (1, 3, Rgb::BLACK)]);
    }

    #[test]
    fn uncertain_time_is_grey() {
        let model = Scenario::new(1, &[(1, "alpha")])
            .other(0, 0, 1)
            .other(30, 0, 1)
            .lost(0, 5)
            .switch(60, 0, 1, S, 0)
            .other(100, 0, 0)
            .finish();
        assert_eq!(spans(&model, (0, 100), 10, &Coloring::ByPid), [(0, 3, color_of(1)), (3, 6, Rgb::UNKNOWN)]);
    }
}
