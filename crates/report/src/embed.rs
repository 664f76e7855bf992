//! Which tiles of the viewer's level-of-detail pyramid go into the file, within the size
//! budget. Tiles are the viewer's own (`tiles::tile`: the timeline coloured by pid, and
//! the running/waiting counts with the runqueue lengths composed from the trace's base
//! columns), at the viewer's levels and indices, so the page asks for them exactly as it
//! asks `schedlens view`. Whole levels are added from the one that shows the trace in a
//! single tile down, while they fit (a level costs about twice the one above it, so the
//! next is not computed when it cannot fit); then, with what is left, the levels the
//! page zooms to when one clicks each of `check`'s top incidents. The timeline tiles of
//! whole levels, the costly part, are computed ahead while `check` runs (`prefetch`).

use crate::bundle::{Bundle, compress};
use analysis::TaskFilter;
use figures::timeline::Coloring;
use model::{Cpu, Model, Nanos};
use std::cell::RefCell;
use std::collections::HashMap;
use tiles::pyramid::Pyramid;
use tiles::tile::{Layers, MAX_LEVEL, TilePlace, TileRequest, tile, timeline_tiles};

/// Columns of a tile (what the viewer's page asks for).
pub const TILE_COLUMNS: u32 = 512;
/// A level with more tiles than this is not embedded whole.
const MAX_TILES_PER_LEVEL: i64 = 1024;
/// Whole levels whose timeline tiles are computed together, from one placement of the
/// runs at the finest of them (more would hold more tiles in memory at once).
const LEVELS_AT_ONCE: usize = 4;
/// Incidents whose zoomed view is embedded at most.
const MAX_INCIDENTS: usize = 40;
/// The plot width (CSS px) assumed when working out the level an incident is shown at.
const ASSUMED_PLOT_PX: f64 = 1200.0;

/// What one trace's tiles cover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// The coarsest level (the whole trace in one or two tiles).
    pub top: u32,
    /// The finest level embedded for the whole trace.
    pub finest: u32,
    /// Incidents (by rank, from 1) whose zoomed view is embedded.
    pub incidents: Vec<usize>,
}

/// Timeline tiles computed ahead, by (level, index), compressed as the bundle keeps them.
pub type Timelines = RefCell<HashMap<(u32, i64), Vec<u8>>>;

/// One trace's tiles and where its times are measured from.
pub struct TileSource<'a> {
    pub trace: usize,
    pub model: &'a Model,
    pub origin: Nanos,
    /// The base of the running/waiting and runqueue tiles; `None` while the timeline
    /// tiles are computed ahead (`prefetch`).
    pub pyramid: Option<&'a Pyramid>,
    /// Timeline tiles computed ahead, taken from here instead of computed again; or,
    /// without a pyramid, where they are kept.
    pub timelines: &'a Timelines,
}

impl TileSource<'_> {
    /// `[start, end)` of the trace in ns from the origin.
    fn bounds(&self) -> (i64, i64) {
        let rel = |t: Nanos| (i128::from(t.0) - i128::from(self.origin.0)) as i64;
        (rel(self.model.start()), rel(self.model.end()) + 1)
    }

    /// Indices of the tiles of `level` covering `[start, end)` (clipped to the trace).
    fn indices(&self, level: u32, start: i64, end: i64) -> Vec<i64> {
        let (first, last) = self.bounds();
        let span = i64::from(TILE_COLUMNS) << level;
        let (from, to) = (start.max(first).div_euclid(span), (end.min(last) - 1).div_euclid(span));
        if to - from >= MAX_TILES_PER_LEVEL {
            return (from..from + MAX_TILES_PER_LEVEL + 1).collect();
        }
        (from..=to).collect()
    }

    /// The coarsest level: every tile level above it shows the trace in one tile.
    fn top_level(&self) -> u32 {
        let (first, last) = self.bounds();
        (0..=MAX_LEVEL).find(|&level| self.indices(level, first, last).len() <= 2).unwrap_or(MAX_LEVEL)
    }

    /// Adds the tiles of `level` with these indices (those not in yet) while the bundle
    /// stays within `budget`, predicting the level's size from its first eighth added
    /// (so a level that cannot fit is given up early); whether all were added.
    fn add_within(&self, bundle: &mut Bundle, level: u32, indices: &[i64], budget: usize) -> bool {
        let (count, start) = (indices.len(), bundle.size());
        let cpus: Vec<Cpu> = (0..self.model.cpus().len() as u32).map(Cpu).collect();
        let filter = TaskFilter::default();
        for (done, &index) in indices.iter().enumerate() {
            let added = bundle.size() - start;
            if bundle.size() > budget || (done >= count.div_ceil(8) && start + added * count / done > budget) {
                return false;
            }
            let place = TilePlace { level, index, columns: TILE_COLUMNS };
            let Ok(window) = place.window(self.origin, self.model.start(), self.model.end()) else { continue };
            let mut kinds = vec![("t", Layers { timeline: true, ..Layers::default() })];
            if self.pyramid.is_some_and(|p| p.covers(level)) {
                kinds.push(("rq", Layers { running_waiting: true, runqueue: true, ..Layers::default() }));
            }
            for (name, layers) in kinds {
                let key = tile_key(self.trace, name, level, index);
                if bundle.contains(&key) {
                    continue;
                }
                let compressed = if layers.timeline {
                    self.timeline(level, &indices[done..], count.div_ceil(8), &cpus)
                } else {
                    let request = TileRequest {
                        place,
                        window,
                        columns: TILE_COLUMNS,
                        cpus: &cpus,
                        coloring: &Coloring::ByPid,
                        filter: &filter,
                        layers,
                        highlight: &[],
                        states: &[],
                        pyramid: self.pyramid,
                    };
                    compress(&tile(self.model, &request))
                };
                bundle.add_compressed(key, &compressed);
            }
        }
        bundle.size() <= budget
    }

    /// The compressed timeline tile `indices[0]` of `level`: computed ahead, or now
    /// together with the neighbours that follow it in `indices`, up to `chunk` tiles
    /// (the others kept for when they are asked for).
    fn timeline(&self, level: u32, indices: &[i64], chunk: usize, cpus: &[Cpu]) -> Vec<u8> {
        let key = (level, indices[0]);
        if !self.timelines.borrow().contains_key(&key) {
            let neighbours =
                1 + indices.windows(2).take(chunk.max(1) - 1).take_while(|pair| pair[1] == pair[0] + 1).count();
            let first = TilePlace { level, index: indices[0], columns: TILE_COLUMNS };
            // The last neighbour may lie outside the trace's clock: then the first alone.
            if self.compute_timelines(&[(first, neighbours as u32)], cpus).is_none() {
                self.compute_timelines(&[(first, 1)], cpus).expect("the first tile lies within the trace");
            }
        }
        let taken = self.timelines.borrow_mut().remove(&key);
        taken.expect("the tile was just computed")
    }

    /// Computes runs of neighbouring timeline tiles `(first, count)`, at any levels, from
    /// one placement of the runs, and keeps them compressed; their compressed sizes, or
    /// `None` when a run's last tile lies outside the trace's clock.
    fn compute_timelines(&self, runs: &[(TilePlace, u32)], cpus: &[Cpu]) -> Option<Vec<usize>> {
        let filter = TaskFilter::default();
        let tiles = timeline_tiles(self.model, self.origin, runs, cpus, &Coloring::ByPid, &filter).ok()?;
        let mut kept = self.timelines.borrow_mut();
        let mut sizes = Vec::with_capacity(runs.len());
        for (&(first, _), tiles) in runs.iter().zip(tiles) {
            let mut size = 0;
            for (n, bytes) in tiles.iter().enumerate() {
                let compressed = compress(bytes);
                size += compressed.len();
                kept.insert((first.level, first.index + n as i64), compressed);
            }
            sizes.push(size);
        }
        Some(sizes)
    }
}

/// The part name of a tile, as the page's data source looks it up.
pub fn tile_key(trace: usize, layers: &str, level: u32, index: i64) -> String {
    format!("{trace}/{layers}/{level}/{index}")
}

/// Computes ahead, into `source.timelines`, the timeline tiles of the whole levels that
/// `embed` may take within `budget` (more than it is given, as the running/waiting
/// tiles and the page's text are not counted), while other work needs no tiles. The
/// first eighth of each level, from the coarsest down, tells its size, until the levels
/// so far would not fit; the levels that fit are then computed a few at a time, each few
/// from one placement of the runs at the finest of them.
pub fn prefetch(source: &TileSource<'_>, budget: usize) {
    let (first, last) = source.bounds();
    let cpus: Vec<Cpu> = (0..source.model.cpus().len() as u32).map(Cpu).collect();
    let whole_runs: Vec<(TilePlace, u32)> = (0..=source.top_level())
        .rev()
        .map(|level| (level, source.indices(level, first, last)))
        .take_while(|(_, indices)| !indices.is_empty() && indices.len() as i64 <= MAX_TILES_PER_LEVEL)
        .map(|(level, indices)| (TilePlace { level, index: indices[0], columns: TILE_COLUMNS }, indices.len() as u32))
        .collect();
    let mut estimated = 0;
    let mut fitting = 0;
    for &(place, count) in &whole_runs {
        let eighth = count.div_ceil(8);
        let Some(sizes) = source.compute_timelines(&[(place, eighth)], &cpus) else { break };
        estimated += sizes[0] * count as usize / eighth as usize;
        if estimated > budget {
            break;
        }
        fitting += 1;
    }
    for levels in whole_runs[..fitting].chunks(LEVELS_AT_ONCE) {
        if source.compute_timelines(levels, &cpus).is_none() {
            break;
        }
    }
}

/// Adds whole levels, from the coarsest down, while they fit; the coarsest and finest
/// levels added.
fn whole_levels(source: &TileSource<'_>, bundle: &mut Bundle, budget: usize) -> (u32, u32) {
    let (first, last) = source.bounds();
    let top = source.top_level();
    let mut finest = top;
    // Sizes of the last two levels added, to predict the next one's.
    let mut sizes: Vec<usize> = Vec::new();
    for level in (0..=top).rev() {
        let indices = source.indices(level, first, last);
        let count = indices.len();
        if count as i64 > MAX_TILES_PER_LEVEL {
            break;
        }
        if let [.., before, last_size] = sizes[..] {
            let growth = (last_size as f64 / before.max(1) as f64).clamp(1.0, 4.0);
            if bundle.size() + (last_size as f64 * growth) as usize > budget {
                break;
            }
        }
        let (mark, before) = (bundle.mark(), bundle.size());
        if !source.add_within(bundle, level, &indices, budget) && level != top {
            bundle.roll_back(mark);
            break;
        }
        sizes.push(bundle.size() - before);
        finest = level;
    }
    (top, finest)
}

/// Adds a trace's tiles until the bundle reaches `budget` compressed bytes. `incidents`
/// are `[start, end)` in ns from the origin, most important first.
pub fn embed(source: &TileSource<'_>, bundle: &mut Bundle, budget: usize, incidents: &[(i64, i64)]) -> Coverage {
    let (top, finest) = whole_levels(source, bundle, budget);
    let mut zoomed = Vec::new();
    for (rank, &(start, end)) in incidents.iter().enumerate().take(MAX_INCIDENTS) {
        let length = (end - start).max(1000);
        let (from, to) = (start - length / 2, end + length / 2);
        let level = ((2 * length) as f64 / ASSUMED_PLOT_PX).log2().floor().max(0.0) as u32;
        if level >= finest {
            zoomed.push(rank + 1);
            continue;
        }
        let mark = bundle.mark();
        let fits =
            [level + 1, level].into_iter().all(|l| source.add_within(bundle, l, &source.indices(l, from, to), budget));
        if !fits {
            bundle.roll_back(mark);
            break;
        }
        zoomed.push(rank + 1);
    }
    Coverage { top, finest, incidents: zoomed }
}
