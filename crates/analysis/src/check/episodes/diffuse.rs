//! Diffuse waste: a group of clusters spread thin over many CPUs and much time (the
//! waiting of an overcommitted message-passing load such as hackbench, a little on every
//! CPU all along) is no episode a user could open: "tasks waited on 64 CPUs for the whole
//! run" says nothing. It is said as such — the CPUs it lost on average over the window —
//! and its densest stretches, each at most `1 / STRETCH_PARTS` of the window long, become
//! the episodes, made of its clusters' pieces within them.

use super::{Attributed, Cluster, Extent, LostPiece};
use model::{Cpu, Nanos, TaskId};
use std::collections::HashSet;

/// A group is diffuse when it waited on at least this many CPUs...
const DIFFUSE_CPUS: usize = 4;
/// ... and lost less than `1 / THIN` of their time over its span (on average per CPU).
const THIN: u64 = 16;
/// Its stretches are at most this part of the window long...
const STRETCH_PARTS: u64 = 64;
/// ... found on bins of a quarter of that...
const BINS_PER_STRETCH: usize = 4;
/// ... and at most this many per group, each denser than the group on average.
const STRETCHES: usize = 3;

/// The longest stretch of diffuse waste told as an episode, for a window.
pub(super) fn stretch_ns(window: Nanos) -> u64 {
    (window.0 / STRETCH_PARTS).max(BINS_PER_STRETCH as u64)
}

/// Diffuse waste found so far: the groups' extent, lost time, CPUs and tasks.
#[derive(Clone, Debug, Default)]
pub(super) struct DiffuseFound {
    pub start: Option<Nanos>,
    pub end: Nanos,
    pub lost: u64,
    pub cpus: HashSet<Cpu>,
    pub tasks: HashSet<TaskId>,
}

impl DiffuseFound {
    pub(super) fn absorb(&mut self, attributed: &[Attributed], group: &[usize]) {
        for cluster in group.iter().map(|&i| &attributed[i]) {
            let extent = &cluster.cluster.extent;
            self.start = Some(self.start.map_or(extent.start, |s| s.min(extent.start)));
            self.end = self.end.max(extent.end);
            self.lost = self.lost.saturating_add(extent.lost);
            self.cpus.insert(cluster.cluster.cpu);
            self.tasks.extend(cluster.waits.iter().map(|w| w.task));
        }
    }
}

/// The extent of a group of clusters.
fn extent(attributed: &[Attributed], group: &[usize]) -> Extent {
    let clusters = || group.iter().map(|&i| &attributed[i].cluster.extent);
    Extent {
        start: clusters().map(|e| e.start).min().unwrap_or_default(),
        end: clusters().map(|e| e.end).max().unwrap_or_default(),
        lost: clusters().map(|e| e.lost).fold(0, u64::saturating_add),
        count: group.len() as u64,
    }
}

/// Whether a group is waste spread thin over many CPUs, longer than a stretch.
pub(super) fn is_diffuse(attributed: &[Attributed], group: &[usize], stretch: u64) -> bool {
    let cpus: HashSet<Cpu> = group.iter().map(|&i| attributed[i].cluster.cpu).collect();
    let extent = extent(attributed, group);
    cpus.len() >= DIFFUSE_CPUS
        && extent.span() > stretch
        && (u128::from(extent.lost) * u128::from(THIN)) < u128::from(extent.span()) * cpus.len() as u128
}

/// The group's densest stretches of at most `stretch` ns (up to `STRETCHES`, not
/// overlapping), each losing `min_lost` or more and denser than the group on average.
pub(super) fn densest_stretches(
    attributed: &[Attributed],
    group: &[usize],
    pieces: &[LostPiece],
    stretch: u64,
    min_lost: u64,
) -> Vec<(Nanos, Nanos)> {
    let extent = extent(attributed, group);
    let bin = (stretch / BINS_PER_STRETCH as u64).max(1);
    let count = extent.span().div_ceil(bin).max(1) as usize;
    let at = |i: usize| extent.start + Nanos(bin.saturating_mul(i as u64));
    let mut bins = vec![0u64; count];
    for cluster in group.iter().map(|&i| &attributed[i].cluster) {
        for (start, end, lost) in cluster.lost_within(pieces, cluster.extent.start, cluster.extent.end) {
            spread(&mut bins, extent.start, bin, start, end, lost);
        }
    }
    let mut taken = vec![false; count];
    let mut found = Vec::new();
    let width = BINS_PER_STRETCH.min(count);
    while found.len() < STRETCHES {
        let best = (0..=count - width)
            .filter(|&i| !taken[i..i + width].iter().any(|&t| t))
            .map(|i| (bins[i..i + width].iter().fold(0u64, |a, &b| a.saturating_add(b)), i))
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let Some((lost, first)) = best else { break };
        let (start, end) = (at(first), at(first + width).min(extent.end));
        let denser = u128::from(lost) * u128::from(extent.span())
            >= u128::from(extent.lost) * u128::from(end.saturating_sub(start).0);
        if lost < min_lost || !denser {
            break;
        }
        taken[first..first + width].iter_mut().for_each(|t| *t = true);
        found.push((start, end));
    }
    found
}

/// Adds `lost` over `[start, end)` to the bins it overlaps, in proportion.
fn spread(bins: &mut [u64], origin: Nanos, bin: u64, start: Nanos, end: Nanos, lost: u64) {
    let (from, to) = (start.saturating_sub(origin).0, end.saturating_sub(origin).0);
    if to <= from {
        if let Some(slot) = bins.get_mut((from / bin) as usize) {
            *slot = slot.saturating_add(lost);
        }
        return;
    }
    let mut at = from;
    while at < to {
        let next = to.min((at - at % bin).saturating_add(bin));
        let part = (u128::from(lost) * u128::from(next - at) / u128::from(to - from)) as u64;
        if let Some(slot) = bins.get_mut((at / bin) as usize) {
            *slot = slot.saturating_add(part);
        }
        at = next;
    }
}

impl Cluster {
    /// Its pieces within `[start, end)`, each clipped, with its lost time in proportion.
    pub(super) fn lost_within(&self, pieces: &[LostPiece], start: Nanos, end: Nanos) -> Vec<(Nanos, Nanos, u64)> {
        self.pieces(pieces)
            .iter()
            .filter(|p| p.start < end && start <= p.end)
            .map(|p| {
                let (from, to) = (p.start.max(start), p.end.min(end));
                let span = p.end.saturating_sub(p.start).0;
                let lost = if span == 0 {
                    p.lost
                } else {
                    (u128::from(p.lost) * u128::from(to.saturating_sub(from).0) / u128::from(span)) as u64
                };
                (from, to, lost)
            })
            .collect()
    }

    /// The cluster cut to `[start, end)`: its pieces there, their lost time in
    /// proportion (none: nothing).
    pub(super) fn within(&self, pieces: &[LostPiece], start: Nanos, end: Nanos) -> Option<Cluster> {
        let start = start.max(self.extent.start);
        let end = end.min(self.extent.end);
        let all = self.pieces(pieces);
        let first = all.iter().position(|p| p.start < end && start <= p.end)?;
        let count = all[first..].iter().take_while(|p| p.start < end).count();
        let inside = &all[first..first + count];
        let lost = self.lost_within(pieces, start, end).iter().map(|p| p.2).fold(0, u64::saturating_add);
        let (Some(head), Some(tail)) = (inside.first(), inside.last()) else { return None };
        Some(Cluster {
            cpu: self.cpu,
            extent: Extent { start: head.start.max(start), end: tail.end.min(end), lost, count: count as u64 },
            first: self.first + first,
            marks: (head.marks.0, tail.marks.1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_time_spreads_over_bins_in_proportion() {
        let mut bins = vec![0; 4];
        spread(&mut bins, Nanos(100), 10, Nanos(105), Nanos(125), 200);
        assert_eq!(bins, [50, 100, 50, 0]);
        spread(&mut bins, Nanos(100), 10, Nanos(139), Nanos(139), 7);
        assert_eq!(bins, [50, 100, 50, 7], "an instant lands in its bin");
    }
}
