//! Tiles: the figures of one stretch of time at one resolution, as compact binary data
//! for the page. Levels are powers of two: at level `k` a column is `2^k` ns, a tile is
//! `columns` columns, and tile `n` starts `n * columns * 2^k` ns after the trace's origin,
//! so tiles of one level join without seams and a pan only asks for the tiles that come
//! into view. Each layer is computed by the same functions as `graph` and
//! `running-waiting` (crates/figures), so a column shows what the figure's column shows;
//! coarse running/waiting and runqueue layers are composed from the trace's base columns
//! (`pyramid`), which gives the same values.
//!
//! Binary layout (little endian), read by `web/js/tile-format.js`:
//!
//! ```text
//! "SLT1"  u32 columns  u32 rows  u32 layers (bit 0 timeline, 1 running/waiting,
//!                                             2 runqueue, 3 highlight, 4 states)
//! timeline:        per row: u32 n, then n × (u16 x0, u16 x1, u8 r, u8 g, u8 b, u8 0)
//! running/waiting: per column: u16 × 8 (running first, min, max, last; running +
//!                  waiting first, min, max, last), u16 share waiting while idle (/65535)
//! runqueue:        per row: columns × u8 (tasks running or waiting there, at most 255)
//! highlight:       per row: u32 n, then n × (u16 x0, u16 x1)
//! states:          columns × u8 (the followed task's state covering most of the column:
//!                  0 none, else 1 + its place in `ThreadState::ALL`, see `states`)
//! ```

use crate::lookup::Run;
use crate::pyramid::Pyramid;
use crate::states::state_columns;
use analysis::states::StateStretch;
use analysis::{TaskFilter, Window};
use figures::running_waiting::{columns as running_waiting_columns, columns_and_queue_lengths, queue_length_rows};
use figures::timeline::{self, Coloring, LevelColumns, Row, Span, TimelineRequest};
use model::{Cpu, Model, Nanos};

/// Columns a tile may have at most (the page asks for 512).
pub const MAX_COLUMNS: u32 = 4096;
/// The coarsest level: a column of 2^44 ns (about 4.9 hours).
pub const MAX_LEVEL: u32 = 44;

/// Why a tile cannot be computed: the request's fault (the server answers 400 with the
/// message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TileError {
    #[error("layers: unknown layer {0:?} (t, r, q, h, s)")]
    UnknownLayer(char),
    #[error("layers: none asked for")]
    NoLayers,
    #[error("tile level or columns out of range")]
    OutOfRange,
    #[error("the tile lies outside the trace")]
    OutsideTrace,
    #[error("the tile lies outside the clock's range")]
    OutsideClock,
    #[error("too many tiles at once")]
    TooMany,
    #[error("tile index out of range")]
    IndexOutOfRange,
}

/// Which layers a tile holds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Layers {
    pub timeline: bool,
    pub running_waiting: bool,
    pub runqueue: bool,
    pub highlight: bool,
    /// A followed task's states (its state track).
    pub states: bool,
}

impl Layers {
    /// Parses `t`, `r`, `q`, `h`, `s` letters.
    pub fn parse(text: &str) -> Result<Layers, TileError> {
        let mut layers = Layers::default();
        for letter in text.chars() {
            let slot = match letter {
                't' => &mut layers.timeline,
                'r' => &mut layers.running_waiting,
                'q' => &mut layers.runqueue,
                'h' => &mut layers.highlight,
                's' => &mut layers.states,
                _ => return Err(TileError::UnknownLayer(letter)),
            };
            *slot = true;
        }
        if layers == Layers::default() {
            return Err(TileError::NoLayers);
        }
        Ok(layers)
    }

    fn mask(&self) -> u32 {
        u32::from(self.timeline)
            | u32::from(self.running_waiting) << 1
            | u32::from(self.runqueue) << 2
            | u32::from(self.highlight) << 3
            | u32::from(self.states) << 4
    }
}

/// Where a tile lies in time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TilePlace {
    pub level: u32,
    pub index: i64,
    pub columns: u32,
}

impl TilePlace {
    /// The tile's window in trace time, given the trace's origin; refused when it lies
    /// outside `[first, last]` (the trace's events) or outside the clock's range.
    pub fn window(&self, origin: Nanos, first: Nanos, last: Nanos) -> Result<Window, TileError> {
        if self.level > MAX_LEVEL || self.columns == 0 || self.columns > MAX_COLUMNS {
            return Err(TileError::OutOfRange);
        }
        let span = i128::from(self.columns) << self.level;
        let start = i128::from(origin.0) + i128::from(self.index) * span;
        let end = start + span;
        if end <= i128::from(first.0) || start > i128::from(last.0) {
            return Err(TileError::OutsideTrace);
        }
        let clamp = |t: i128| Nanos(t.clamp(0, i128::from(u64::MAX)) as u64);
        if start < 0 || end > i128::from(u64::MAX) {
            return Err(TileError::OutsideClock);
        }
        Ok(Window::new(clamp(start), clamp(end)))
    }
}

/// Everything a tile depends on.
pub struct TileRequest<'a> {
    pub place: TilePlace,
    pub window: Window,
    pub columns: u32,
    pub cpus: &'a [Cpu],
    pub coloring: &'a Coloring,
    pub filter: &'a TaskFilter,
    pub layers: Layers,
    /// Runs of the highlighted tasks (for the highlight layer).
    pub highlight: &'a [&'a [Run]],
    /// The followed task's states in time order (for the states layer).
    pub states: &'a [StateStretch],
    /// The trace's running/waiting and runqueue base columns for this filter, to compose
    /// coarse tiles from (when ready).
    pub pyramid: Option<&'a Pyramid>,
}

/// Computes and encodes a tile.
pub fn tile(model: &Model, request: &TileRequest<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024);
    put_header(&mut out, request.columns, request.cpus.len(), request.layers);
    if request.layers.timeline {
        let timeline = TimelineRequest {
            window: request.window,
            columns: request.columns,
            rows: request.cpus,
            filter: request.filter,
            coloring: request.coloring,
        };
        for row in timeline::rows(model, &timeline) {
            put_spans(&mut out, row.spans.into_iter(), 0);
        }
    }
    let place = request.place;
    let pyramid = request.pyramid.filter(|p| p.covers(place.level));
    let (running_waiting, runqueue) = (request.layers.running_waiting, request.layers.runqueue);
    let (columns, rows) = match pyramid {
        Some(pyramid) => (
            running_waiting.then(|| pyramid.running_waiting(place.level, place.index, place.columns)),
            runqueue.then(|| pyramid.queue_lengths(request.cpus, place.level, place.index, place.columns)),
        ),
        // Both from one sweep.
        None if running_waiting && runqueue => {
            let (both, rows) =
                columns_and_queue_lengths(model, request.window, request.columns, request.filter, request.cpus);
            (Some(both.columns), Some(rows))
        }
        None => (
            running_waiting
                .then(|| running_waiting_columns(model, request.window, request.columns, request.filter).columns),
            runqueue.then(|| queue_length_rows(model, request.cpus, request.window, request.columns, request.filter)),
        ),
    };
    for column in columns.into_iter().flatten() {
        let (r, t) = (column.running, column.total);
        for value in [r.first, r.min, r.max, r.last, t.first, t.min, t.max, t.last] {
            put_u16(&mut out, value.min(u32::from(u16::MAX)) as u16);
        }
        put_u16(&mut out, (column.waiting_while_idle.clamp(0.0, 1.0) * 65535.0).round() as u16);
    }
    for row in rows.into_iter().flatten() {
        out.extend(row.iter().map(|&length| length.min(255) as u8));
    }
    if request.layers.highlight {
        for &cpu in request.cpus {
            let spans = highlight_spans(request.highlight, cpu, request.window, request.columns);
            put_u32(&mut out, spans.len() as u32);
            for (x0, x1) in spans {
                put_u16(&mut out, x0);
                put_u16(&mut out, x1);
            }
        }
    }
    if request.layers.states {
        out.extend(state_columns(request.states, request.window, request.columns));
    }
    out
}

/// The timeline tiles (no other layer) of runs of neighbouring tiles, each run
/// `(first, count)` at its own level: per run, the tiles from `first` on, each with the
/// bytes [`tile`] gives it. Every CPU's runs are placed once for all of them
/// (`timeline::rows_at_levels`); where that cannot be exact (times from 2^53 ns on), each
/// tile is computed on its own.
pub fn timeline_tiles(
    model: &Model,
    origin: Nanos,
    runs: &[(TilePlace, u32)],
    cpus: &[Cpu],
    coloring: &Coloring,
    filter: &TaskFilter,
) -> Result<Vec<Vec<Vec<u8>>>, TileError> {
    let (start, end) = (model.start(), model.end());
    let mut levels = Vec::with_capacity(runs.len());
    for &(first, count) in runs {
        let last = TilePlace { index: first.index + i64::from(count.max(1)) - 1, ..first };
        first.window(origin, start, end)?;
        last.window(origin, start, end)?;
        let wide = first.columns.checked_mul(count).ok_or(TileError::TooMany)?;
        let first_column = first.index.checked_mul(i64::from(first.columns));
        let first_column = first_column.ok_or(TileError::IndexOutOfRange)?;
        levels.push(LevelColumns { level: first.level, first: first_column, count: wide });
    }
    let layers = Layers { timeline: true, ..Layers::default() };
    let Some(rows) = timeline::rows_at_levels(model, origin, &levels, cpus, filter, coloring) else {
        return runs
            .iter()
            .map(|&(first, count)| tiles_one_by_one(model, origin, first, count, cpus, coloring, filter))
            .collect();
    };
    Ok(runs
        .iter()
        .zip(&rows)
        .map(|(&(first, count), rows)| (0..count).map(|n| cut_tile(rows, first.columns, n, layers)).collect())
        .collect())
}

/// Tile `n` of a run whose rows span all its tiles' columns.
fn cut_tile(rows: &[Row], columns: u32, n: u32, layers: Layers) -> Vec<u8> {
    let (from, to) = (n * columns, (n + 1) * columns);
    let mut out = Vec::with_capacity(1024);
    put_header(&mut out, columns, rows.len(), layers);
    for row in rows {
        // Spans are in column order: the tile's ends by binary search, not a scan.
        let inside = &row.spans[row.spans.partition_point(|span| span.x1 <= from)..];
        let inside = &inside[..inside.partition_point(|span| span.x0 < to)];
        let clipped = inside.iter().map(|span| Span { x0: span.x0.max(from), x1: span.x1.min(to), color: span.color });
        put_spans(&mut out, clipped, from);
    }
    out
}

/// Each tile of a run computed on its own.
fn tiles_one_by_one(
    model: &Model,
    origin: Nanos,
    first: TilePlace,
    count: u32,
    cpus: &[Cpu],
    coloring: &Coloring,
    filter: &TaskFilter,
) -> Result<Vec<Vec<u8>>, TileError> {
    (0..count)
        .map(|n| {
            let place = TilePlace { index: first.index + i64::from(n), ..first };
            let request = TileRequest {
                place,
                window: place.window(origin, model.start(), model.end())?,
                columns: first.columns,
                cpus,
                coloring,
                filter,
                layers: Layers { timeline: true, ..Layers::default() },
                highlight: &[],
                states: &[],
                pyramid: None,
            };
            Ok(tile(model, &request))
        })
        .collect()
}

fn put_header(out: &mut Vec<u8>, columns: u32, rows: usize, layers: Layers) {
    out.extend_from_slice(b"SLT1");
    put_u32(out, columns);
    put_u32(out, rows as u32);
    put_u32(out, layers.mask());
}

/// One timeline row, its columns counted from `from`.
fn put_spans(out: &mut Vec<u8>, spans: impl ExactSizeIterator<Item = Span>, from: u32) {
    put_u32(out, spans.len() as u32);
    for span in spans {
        put_u16(out, (span.x0 - from) as u16);
        put_u16(out, (span.x1 - from) as u16);
        out.extend_from_slice(&[span.color.0, span.color.1, span.color.2, 0]);
    }
}

/// The columns in which any of the runs on `cpu` ran at all (however briefly), merged.
fn highlight_spans(tasks: &[&[Run]], cpu: Cpu, window: Window, columns: u32) -> Vec<(u16, u16)> {
    let ns_per_column = window.len().0.max(1) as f64 / f64::from(columns.max(1));
    let mut spans: Vec<(u16, u16)> = Vec::new();
    for runs in tasks {
        let first = runs.partition_point(|r| r.end <= window.start);
        for run in runs[first..].iter().take_while(|r| r.start < window.end).filter(|r| r.cpu == cpu) {
            let (start, end) = window.clip(run.start, run.end);
            let x0 = ((start.0 - window.start.0) as f64 / ns_per_column).floor() as u32;
            let x1 = (((end.0 - window.start.0) as f64 / ns_per_column).ceil() as u32).max(x0 + 1).min(columns);
            spans.push((x0 as u16, x1 as u16));
        }
    }
    spans.sort_unstable();
    let mut merged: Vec<(u16, u16)> = Vec::with_capacity(spans.len());
    for (x0, x1) in spans {
        match merged.last_mut() {
            Some(last) if x0 <= last.1 => last.1 = last.1.max(x1),
            _ => merged.push((x0, x1)),
        }
    }
    merged
}

fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_u16(out: &mut Vec<u8>, value: u16) {
    out.extend_from_slice(&value.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::SegmentEnd;

    #[test]
    fn tiles_of_a_level_join_without_seams() {
        let place = |index| TilePlace { level: 3, index, columns: 4 };
        let origin = Nanos(1000);
        let a = place(0).window(origin, Nanos(900), Nanos(5000)).unwrap();
        let b = place(1).window(origin, Nanos(900), Nanos(5000)).unwrap();
        assert_eq!((a.start, a.end, b.start, b.end), (Nanos(1000), Nanos(1032), Nanos(1032), Nanos(1064)));
        assert_eq!(place(-3).window(origin, Nanos(900), Nanos(5000)).unwrap().start, Nanos(904));
    }

    #[test]
    fn tiles_outside_the_trace_or_the_clock_are_refused() {
        let origin = Nanos(1000);
        let outside = TilePlace { level: 3, index: 200, columns: 4 };
        assert!(outside.window(origin, Nanos(900), Nanos(5000)).is_err());
        let before_zero = TilePlace { level: 10, index: -2, columns: 4 };
        assert!(before_zero.window(origin, Nanos(0), Nanos(5000)).is_err());
        let huge = TilePlace { level: MAX_LEVEL, index: i64::MAX, columns: MAX_COLUMNS };
        assert!(huge.window(origin, Nanos(0), Nanos(u64::MAX)).is_err());
        let wide = TilePlace { level: 0, index: 0, columns: MAX_COLUMNS + 1 };
        assert!(wide.window(origin, Nanos(0), Nanos(5000)).is_err());
    }

    #[test]
    fn highlight_marks_every_column_a_run_touches() {
        let run = |cpu, start, end| Run {
            cpu: Cpu(cpu),
            start: Nanos(start),
            end: Nanos(end),
            end_kind: SegmentEnd::Blocked,
        };
        let runs = [run(0, 5, 12), run(0, 13, 14), run(1, 20, 34), run(0, 35, 90)];
        let window = Window::new(Nanos(0), Nanos(40));
        assert_eq!(highlight_spans(&[&runs], Cpu(0), window, 4), [(0, 2), (3, 4)]);
        assert_eq!(highlight_spans(&[&runs], Cpu(1), window, 4), [(2, 4)]);
    }

    /// Runs of every length, cut by the tiles' edges at each level below (1 ns a column),
    /// and uncertain time after lost events on CPU 1:
    /// 0: AAAAAAABBBBBBBBBBBBAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABBBBBBBBBBBBBBAAAAAAAA
    /// 1: ......CCCCCCCCCC........................CCCCCCCCCCCC????CCCCCC........CCC
    #[test]
    fn tiles_of_several_levels_from_one_placement_equal_tiles_computed_one_by_one() {
        use model::scenario::*;
        let model = Scenario::new(2, &[(1, "alpha"), (2, "beta"), (3, "gamma")])
            .other(0, 0, 1)
            .other(0, 1, 0)
            .switch(6, 1, 0, R, 3)
            .switch(7, 0, 1, R, 2)
            .switch(16, 1, 3, S, 0)
            .switch(19, 0, 2, R, 1)
            .wake(40, 1, 0, 3, 1)
            .switch(40, 1, 0, R, 3)
            .switch(50, 0, 1, R, 2)
            .lost(1, 3)
            .other(53, 1, 3)
            .switch(58, 1, 3, S, 0)
            .wake(59, 1, 0, 3, 1)
            .switch(59, 1, 0, R, 3)
            .switch(64, 0, 2, R, 1)
            .switch(65, 1, 3, S, 0)
            .wake(69, 1, 0, 3, 1)
            .switch(69, 1, 0, R, 3)
            .other(72, 0, 1)
            .other(72, 1, 3)
            .finish();
        assert!(!model.cpus()[1].uncertain().is_empty(), "the scenario has uncertain time");
        let (cpus, filter) = ([Cpu(0), Cpu(1)], TaskFilter::default());
        let origin = Nanos(0);
        let place = |level, columns, index| TilePlace { level, index, columns };
        let runs =
            [(place(0, 8, 0), 9), (place(1, 4, 1), 8), (place(2, 3, 0), 6), (place(3, 2, 2), 3), (place(5, 2, 0), 2)];
        let tiles = timeline_tiles(&model, origin, &runs, &cpus, &Coloring::ByPid, &filter).unwrap();
        for (&(first, count), cut) in runs.iter().zip(&tiles) {
            let one_by_one = tiles_one_by_one(&model, origin, first, count, &cpus, &Coloring::ByPid, &filter).unwrap();
            assert_eq!(cut.len(), count as usize);
            for (n, (cut, alone)) in cut.iter().zip(&one_by_one).enumerate() {
                assert_eq!(cut, alone, "level {}, tile {}", first.level, first.index + n as i64);
            }
        }
    }

    #[test]
    fn layers_are_letters() {
        assert_eq!(Layers::parse("tq").unwrap().mask(), 0b101);
        assert_eq!(Layers::parse("s").unwrap().mask(), 0b10000);
        assert!(Layers::parse("").is_err());
        assert!(Layers::parse("tx").is_err());
    }
}
