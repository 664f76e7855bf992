//! Episodes: the per-CPU lost pieces of the sweep grouped into stretches where waiting
//! while other CPUs idle is dense, at whatever scale it happens, then explained.
//!
//! 1. Per CPU, consecutive pieces join into clusters when the gap between them is at
//!    most twice the smaller of the two (the cluster's typical piece, or the new one),
//!    or — for a sparser pattern of similar pieces (within 30× of each other) — when
//!    the gap is at most three times the longer one's span and the joined stretch still
//!    loses a fifth of a CPU or more. Bursts, long waits and many short waits in a row
//!    become one cluster each; isolated short waits stay alone.
//! 2. Clusters that lost less than an eighth of the threshold are left out as noise; the
//!    others' lost time is shared among the waits on their CPU in proportion to their
//!    overlap with its pieces, and each wait gets a cause (kernel-thread preemption,
//!    misplaced wakeup, or work conservation); a cluster's kind is its main cause. The
//!    waits of kernel threads bound to the cluster's CPU are taken out with their share
//!    and counted apart (no placement could have run them elsewhere); a cluster is
//!    *confined* when most of what is left is tasks' that the evidence says were
//!    confined to their CPUs then (see `pinning`).
//! 3. Patterns: in time order, a cluster joins an earlier pattern of the same kind and
//!    confinement on its CPU or sharing a main task with it (one that lost a tenth of a
//!    cluster's time or more), by the same gap and density rules (a pinned group taking
//!    turns on two CPUs is one pattern).
//! 4. Patterns of the same kind and confinement overlapping for half the longer one or
//!    more join (several CPUs failing at once, the paper's Figure 6; pinned tasks on two
//!    CPUs stay apart from unpinned ones failing elsewhere meanwhile).
//! 5. Episodes are the patterns that lost at least the threshold, at a fifth of a CPU
//!    or more on average (a CPU overloaded for long while others idled only now and
//!    then — inevitable overload with brief idle moments — is not one). A pattern spread
//!    thin over many CPUs and long is diffuse waste (`diffuse`): its densest stretches,
//!    of bounded length, are the episodes instead.
//! 6. Per episode: the CPUs that idled while its tasks waited, instant by instant (on
//!    average and at most at once), each task's part and whether it was pinned
//!    (recorded affinity) or possibly pinned (evidence, since when), the cause mix with
//!    `pinned` taking precedence, the kind (its main cause, pinned waste counting as
//!    work-conservation), its largest waits as evidence, and an explanation.

mod diffuse;

use super::cursor::SegmentCursors;
use super::kthreads;
use super::lost::LostPiece;
use super::placement::{Confinement, LONG_WAIT, PINNED_CPUS, PINNED_RUNS, PINNED_WAITS, Placement};
use super::{
    BoundWait, BoundWaits, Cause, CauseMix, CheckRequest, Diffuse, Evidence, Incident, Kind, Pinning, TaskLoss, ms,
};
use model::{Cpu, Model, Nanos, Pid, TaskId, WaitCause, WaitId, WakeupId, WakeupKind};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Pieces similar in size join across gaps up to `SPARSE_GAP` times the longer one's
/// span if the joined stretch loses at least `1 / SPARSE_DENSITY` of a CPU on average;
/// episodes lose at least that.
const SPARSE_DENSITY: u64 = 5;
const SPARSE_GAP: u64 = 3;
/// ... when their typical pieces are within this factor of each other.
const SIMILAR: u64 = 30;
/// Clusters losing less than `1 / FRAGMENT` of the threshold are noise.
const FRAGMENT: u64 = 8;
/// Tasks listed per episode.
const TOP_TASKS: usize = 5;
/// Waits given as evidence per episode.
const TOP_WAITS: usize = 3;
/// Evidence for "possibly pinned" (the numbers are `placement`'s) when a task never ran
/// anywhere else: `PINNED_RUNS` runs in the trace and `PINNED_WAITS` waits in the episode,
/// all on the CPUs it waited on; and otherwise (it ran elsewhere before, or on CPUs it
/// did not wait on): from the moment it last left the CPUs it stayed on, at least this
/// many waits of `LONG_WAIT` or more while other CPUs idled, never moved off them, ...
const PINNED_LONG_WAITS: usize = 16;
/// ... with idle CPUs enough for it for this share of its waiting, in tenths: a task
/// that waits while idle CPUs are fewer than the waiting tasks (hackbench) is no sign.
const PINNED_IDLE_TENTHS: u64 = 7;

/// The episodes in the sweep's `pieces` (by CPU, then time): their clusters, with each
/// wait's share and cause, grouped into episodes; the waits of kernel threads bound to
/// the CPU they waited on are taken out of the clusters and counted apart.
pub(super) fn search(model: &Model, request: &CheckRequest<'_>, pieces: &[LostPiece], placement: &Placement) -> Found {
    let fragment = (request.min_lost.0 / FRAGMENT).max(1);
    let clusters: Vec<Cluster> = clusters(pieces).into_iter().filter(|c| c.extent.lost >= fragment).collect();
    if clusters.is_empty() {
        return Found::default();
    }
    let mut attributor = Attributor {
        model,
        request,
        pieces,
        placement,
        wakeups: WakeupsOfWaits::of(model),
        cursors: SegmentCursors::new(model),
        bound: BoundWaitsFound::default(),
    };
    let mut attributed: Vec<Attributed> =
        clusters.into_iter().map(|c| attributor.attribute(c)).filter(|a| a.cluster.extent.lost >= fragment).collect();
    // Counted once: the clusters cut from diffuse groups below meet them again.
    let bound = std::mem::take(&mut attributor.bound);
    let exposure = Exposure::of(&attributed);
    let mut confined_from = ConfinedFrom::new(placement, &exposure);
    for cluster in &mut attributed {
        cluster.confined = confined_from.mostly(cluster);
    }
    let groups = simultaneous(patterns(&attributed), request.min_lost)
        .into_iter()
        .filter(|g| g.extent.significant(request.min_lost))
        .map(|g| g.members)
        .collect::<Vec<Vec<usize>>>();
    // Diffuse groups give way to their densest stretches.
    let stretch = diffuse::stretch_ns(request.window.len());
    let mut episodes = Vec::new();
    let mut diffuse = diffuse::DiffuseFound::default();
    for group in groups {
        if !diffuse::is_diffuse(&attributed, &group, stretch) {
            episodes.push(group);
            continue;
        }
        diffuse.absorb(&attributed, &group);
        for (start, end) in diffuse::densest_stretches(&attributed, &group, pieces, stretch, request.min_lost.0) {
            let cut: Vec<Cluster> =
                group.iter().filter_map(|&i| attributed[i].cluster.within(pieces, start, end)).collect();
            let first = attributed.len();
            for cluster in cut {
                let mut cut = attributor.attribute(cluster);
                if cut.cluster.extent.lost >= fragment {
                    cut.confined = confined_from.mostly(&cut);
                    attributed.push(cut);
                }
            }
            let members: Vec<usize> = (first..attributed.len()).collect();
            let lost = members.iter().map(|&i| attributed[i].cluster.extent.lost).fold(0, u64::saturating_add);
            if lost >= request.min_lost.0 {
                episodes.push(members);
            }
        }
    }
    Found { attributed, groups: episodes, exposure, bound, diffuse }
}

/// Episodes found: the attributed clusters, the episodes as groups of them, each task's
/// waits in them, and the bound kernel threads' waits left out.
#[derive(Default)]
pub(super) struct Found {
    attributed: Vec<Attributed>,
    groups: Vec<Vec<usize>>,
    exposure: Exposure,
    bound: BoundWaitsFound,
    diffuse: diffuse::DiffuseFound,
}

impl Found {
    /// The episodes as incidents, described with where their tasks ran.
    pub(super) fn incidents(
        &self,
        model: &Model,
        request: &CheckRequest<'_>,
        placement: &Placement,
        pieces: &[LostPiece],
    ) -> Vec<Incident> {
        let members = |group: &Vec<usize>| group.iter().map(|&i| &self.attributed[i]).collect::<Vec<_>>();
        let context = EpisodeContext { model, request, placement, exposure: &self.exposure, pieces };
        self.groups.iter().map(|group| episode(&context, &members(group))).collect()
    }

    /// The waste spread thin over many CPUs, told as such (none: `None`).
    pub(super) fn diffuse(&self, window: Nanos) -> Option<Diffuse> {
        let found = &self.diffuse;
        found.start.map(|start| Diffuse {
            start,
            end: found.end,
            lost_ns: found.lost,
            cpus: found.cpus.len(),
            tasks: found.tasks.len(),
            stretch_ns: diffuse::stretch_ns(window),
        })
    }

    /// The waits of kernel threads bound to the CPU they waited on, counted apart.
    pub(super) fn bound_waits(&self, model: &Model) -> BoundWaits {
        self.bound.described(model)
    }
}

/// Each task's waits in the clusters (start, end, lost share), in time order: how often
/// and how long it waited while other CPUs idled, whatever episode they joined.
#[derive(Default)]
struct Exposure(HashMap<TaskId, Vec<(Nanos, Nanos, u64)>>);

/// A task's waits while other CPUs idled, from some moment on.
#[derive(Copy, Clone, Debug, Default)]
struct Exposed {
    waits: usize,
    /// Those of `LONG_WAIT` or more.
    long_waits: usize,
    waited_ns: u64,
    lost_ns: u64,
}

impl Exposure {
    fn of(attributed: &[Attributed]) -> Exposure {
        let mut waits: HashMap<TaskId, Vec<(Nanos, Nanos, u64)>> = HashMap::new();
        for wait in attributed.iter().flat_map(|a| &a.waits).filter(|w| w.lost > 0) {
            waits.entry(wait.task).or_default().push((wait.start, wait.end, wait.lost));
        }
        waits.values_mut().for_each(|waits| waits.sort_unstable());
        Exposure(waits)
    }

    /// `task`'s waits that began at or after `since`.
    fn since(&self, task: TaskId, since: Nanos) -> Exposed {
        let Some(waits) = self.0.get(&task) else { return Exposed::default() };
        let waits = &waits[waits.partition_point(|w| w.0 < since)..];
        waits.iter().fold(Exposed::default(), |total, &(start, end, lost)| {
            let length = end.saturating_sub(start);
            Exposed {
                waits: total.waits + 1,
                long_waits: total.long_waits + usize::from(length >= LONG_WAIT),
                waited_ns: total.waited_ns.saturating_add(length.0),
                lost_ns: total.lost_ns.saturating_add(lost),
            }
        })
    }
}

/// When each task became confined to the few CPUs it ran on from then on, by the
/// evidence of its waits alone (whatever the episode): the earliest start of a
/// confinement to at most `PINNED_CPUS` CPUs that [`Exposed::says_pinned`]. Computed per
/// task on first use.
struct ConfinedFrom<'a> {
    placement: &'a Placement,
    exposure: &'a Exposure,
    known: HashMap<TaskId, Option<Nanos>>,
}

impl<'a> ConfinedFrom<'a> {
    fn new(placement: &'a Placement, exposure: &'a Exposure) -> Self {
        ConfinedFrom { placement, exposure, known: HashMap::new() }
    }

    /// Whether most of a cluster's lost time is confined tasks'.
    fn mostly(&mut self, cluster: &Attributed) -> bool {
        let confined: u64 =
            cluster.waits.iter().filter(|w| self.at(w.task, w.start)).map(|w| w.lost).fold(0, u64::saturating_add);
        confined.saturating_mul(2) > cluster.cluster.extent.lost
    }

    /// Whether `task` was confined by that evidence at `time`.
    fn at(&mut self, task: TaskId, time: Nanos) -> bool {
        let (placement, exposure) = (self.placement, self.exposure);
        let from = *self.known.entry(task).or_insert_with(|| {
            placement
                .confinements(task)
                .into_iter()
                .take_while(|c| c.cpus.len() <= PINNED_CPUS)
                .filter(|c| exposure.since(task, c.since).says_pinned())
                .map(|c| c.since)
                .min()
        });
        from.is_some_and(|from| time >= from)
    }
}

impl Exposed {
    /// Whether it says a task the scheduler could not move: waits long and many, with
    /// idle CPUs enough for it most of the time.
    fn says_pinned(&self) -> bool {
        self.long_waits >= PINNED_LONG_WAITS
            && self.lost_ns.saturating_mul(10) >= self.waited_ns.saturating_mul(PINNED_IDLE_TENTHS)
    }
}

/// Bound kernel threads' waits as the search meets them.
#[derive(Default)]
struct BoundWaitsFound {
    /// Their waits (indices in the model's waits), each counted once.
    waits: HashSet<WaitId>,
    waited_ns: u64,
    /// The longest piece of one: (length, task, CPU, start, end).
    longest: Option<(u64, TaskId, Cpu, Nanos, Nanos)>,
}

impl BoundWaitsFound {
    fn add(&mut self, wait: WaitId, task: TaskId, cpu: Cpu, start: Nanos, end: Nanos) {
        let length = end.saturating_sub(start).0;
        self.waits.insert(wait);
        self.waited_ns = self.waited_ns.saturating_add(length);
        if self.longest.is_none_or(|(longest, ..)| length > longest) {
            self.longest = Some((length, task, cpu, start, end));
        }
    }

    fn described(&self, model: &Model) -> BoundWaits {
        let longest = self.longest.map(|(_, task, cpu, start, end)| {
            let held_by = held_most(model, cpu, start, end);
            BoundWait {
                pid: model.tasks().get(task).pid,
                comm: model.comm_at(task, start).to_string(),
                cpu,
                start,
                end,
                held_by: held_by.map(|t| (model.tasks().get(t).pid, model.comm_at(t, start).to_string())),
            }
        });
        BoundWaits { waits: self.waits.len() as u32, waited_ns: self.waited_ns, longest }
    }
}

/// The task (not idle) that ran longest on `cpu` during `[start, end)`.
fn held_most(model: &Model, cpu: Cpu, start: Nanos, end: Nanos) -> Option<TaskId> {
    let segments = model.cpus().get(cpu.index())?.segments();
    let mut held: BTreeMap<TaskId, Nanos> = BTreeMap::new();
    for segment in segments.overlapping(start, end).map(|i| segments.get(i)).filter(|s| s.task != TaskId::IDLE) {
        *held.entry(segment.task).or_default() += segment.end.min(end).saturating_sub(segment.start.max(start));
    }
    held.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|(task, _)| task)
}

/// Where and how much a set of pieces lost: the measure the joining rules use.
#[derive(Copy, Clone, Debug)]
struct Extent {
    start: Nanos,
    end: Nanos,
    lost: u64,
    /// Pieces (or clusters) it is made of.
    count: u64,
}

impl Extent {
    fn span(&self) -> u64 {
        self.end.saturating_sub(self.start).0
    }

    /// Its typical piece's lost time.
    fn typical(&self) -> u64 {
        self.lost / self.count.max(1)
    }

    /// Whether `next` (starting no earlier) continues this extent's pattern.
    fn joins(&self, next: &Extent) -> bool {
        let gap = next.start.saturating_sub(self.end).0;
        let (small, large) = (self.typical().min(next.typical()), self.typical().max(next.typical()));
        if gap <= small.saturating_mul(2) {
            return true;
        }
        let joined = self.end.max(next.end).saturating_sub(self.start).0;
        gap <= SPARSE_GAP.saturating_mul(self.span().max(next.span()))
            && large <= SIMILAR.saturating_mul(small)
            && self.lost.saturating_add(next.lost).saturating_mul(SPARSE_DENSITY) >= joined
    }

    fn absorb(&mut self, other: &Extent) {
        self.start = self.start.min(other.start);
        self.end = self.end.max(other.end);
        self.lost = self.lost.saturating_add(other.lost);
        self.count += other.count;
    }

    /// Lost at least `min_lost`, at a fifth of a CPU or more on average.
    fn significant(&self, min_lost: Nanos) -> bool {
        self.lost >= min_lost.0 && self.lost.saturating_mul(SPARSE_DENSITY) >= self.span()
    }
}

/// Pieces of one CPU joined into a dense stretch.
#[derive(Clone, Debug)]
struct Cluster {
    cpu: Cpu,
    extent: Extent,
    /// Its pieces, as a range of indices.
    first: usize,
    marks: (u64, u64),
}

impl Cluster {
    fn of(index: usize, piece: &LostPiece) -> Cluster {
        let extent = Extent { start: piece.start, end: piece.end, lost: piece.lost, count: 1 };
        Cluster { cpu: piece.cpu, extent, first: index, marks: piece.marks }
    }

    fn absorb(&mut self, piece: &LostPiece) {
        self.extent.absorb(&Cluster::of(0, piece).extent);
        self.marks.1 = self.marks.1.max(piece.marks.1);
    }

    fn pieces<'p>(&self, pieces: &'p [LostPiece]) -> &'p [LostPiece] {
        &pieces[self.first..self.first + self.extent.count as usize]
    }

    /// Where tasks waited behind its CPU while it lost time: its pieces within its extent.
    fn waiting(&self, pieces: &[LostPiece]) -> Vec<(Cpu, Nanos, Nanos)> {
        let (start, end) = (self.extent.start, self.extent.end);
        self.pieces(pieces)
            .iter()
            .map(|p| (self.cpu, p.start.max(start), p.end.min(end)))
            .filter(|w| w.1 < w.2)
            .collect()
    }

    /// The cluster with only what `waits` (its waits that stay) lost: their shares, the
    /// stretch from the first one's start to the last one's end, and the running totals
    /// of the pieces that overlap it. Its pieces stay as they were.
    fn narrowed(&self, waits: &[WaitShare], pieces: &[LostPiece]) -> Cluster {
        let lost = waits.iter().map(|w| w.lost).fold(0, u64::saturating_add);
        let start = waits.iter().map(|w| w.start).min().unwrap_or(self.extent.start);
        let end = waits.iter().map(|w| w.end).max().unwrap_or(start);
        let overlapping: Vec<&LostPiece> = pieces.iter().filter(|p| p.start <= end && start <= p.end).collect();
        let marks = match (overlapping.first(), overlapping.last()) {
            (Some(first), Some(last)) => (first.marks.0, last.marks.1),
            _ => (self.marks.0, self.marks.0),
        };
        Cluster { extent: Extent { start, end, lost, ..self.extent }, marks, ..self.clone() }
    }
}

fn clusters(pieces: &[LostPiece]) -> Vec<Cluster> {
    let mut out: Vec<Cluster> = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        let extent = Extent { start: piece.start, end: piece.end, lost: piece.lost, count: 1 };
        match out.last_mut() {
            Some(cluster) if cluster.cpu == piece.cpu && cluster.extent.joins(&extent) => cluster.absorb(piece),
            _ => out.push(Cluster::of(index, piece)),
        }
    }
    out
}

/// A wait's share of a cluster.
#[derive(Clone, Debug)]
struct WaitShare {
    task: TaskId,
    cpu: Cpu,
    /// The wait, clipped to the cluster.
    start: Nanos,
    end: Nanos,
    lost: u64,
    cause: Cause,
    /// The kernel thread that preempted it, for `kthread-preemption`.
    preempter: Option<TaskId>,
    /// For `wakeup-placement`: the previous CPU, and whether it was idle.
    previous: Option<(Cpu, bool)>,
}

struct Attributed {
    cluster: Cluster,
    waits: Vec<WaitShare>,
    /// The main cause among the waits, by lost time.
    kind: Kind,
    /// Whether most of its lost time is tasks' that the evidence says were confined to
    /// their CPUs then (see [`ConfinedFrom`]): such clusters join only each other.
    confined: bool,
}

/// The runqueue pieces of `cpu` overlapping `[start, end)`, as (piece start, end, wait),
/// in start order: those begun before `start` and still under way then (found through
/// the runqueue's index of ends), then those begun in the span.
fn overlapping_pieces(model: &Model, cpu: Cpu, start: Nanos, end: Nanos) -> Vec<(Nanos, Nanos, WaitId)> {
    let Some(timeline) = model.cpus().get(cpu.index()) else { return Vec::new() };
    let queue = timeline.queue();
    let begun = queue.first_starting_at_or_after(start);
    let upto = queue.first_starting_at_or_after(end).max(begun);
    queue
        .open_at(start)
        .chain(begun..upto)
        .map(|i| queue.get(i))
        .filter(|piece| piece.end > start)
        .map(|piece| (piece.start, piece.end, piece.wait.expect("check's model has waits")))
        .collect()
}

/// What attributing a cluster's lost time to its waits needs, and where the bound
/// kernel threads' waits go.
struct Attributor<'a> {
    model: &'a Model,
    request: &'a CheckRequest<'a>,
    pieces: &'a [LostPiece],
    placement: &'a Placement,
    wakeups: WakeupsOfWaits,
    cursors: SegmentCursors<'a>,
    bound: BoundWaitsFound,
}

impl Attributor<'_> {
    /// A cluster's waits with their shares of its lost time and their causes. Kernel
    /// threads bound to the cluster's CPU are taken out (their share with them, the
    /// cluster shrunk to the other waits) and counted apart.
    fn attribute(&mut self, cluster: Cluster) -> Attributed {
        let model = self.model;
        let lost_pieces = cluster.pieces(self.pieces);
        let (cluster_start, cluster_end) = (cluster.extent.start, cluster.extent.end);
        let mut waits: Vec<(WaitShare, u64)> = Vec::new();
        let mut bound: Vec<(WaitId, WaitShare, u64)> = Vec::new();
        for (start, end, wait_id) in overlapping_pieces(model, cluster.cpu, cluster_start, cluster_end) {
            let wait = model.waits().get(wait_id);
            if !self.request.filter.accepts(model, wait.task) {
                continue;
            }
            let overlap: u64 = lost_pieces
                .iter()
                .map(|p| end.min(p.end).min(cluster_end).saturating_sub(start.max(p.start).max(cluster_start)).0)
                .fold(0, u64::saturating_add);
            if overlap == 0 {
                continue;
            }
            let preempter = (wait.cause == WaitCause::Preempted && start == wait.start)
                .then(|| self.cursors.started_at(cluster.cpu, wait.start))
                .flatten()
                .filter(|&t| kthreads::is_kernel_thread(model.comm_at(t, wait.start)));
            let previous = self.wakeups.misplaced(model, &mut self.cursors, wait_id, wait.start);
            let cause = match (preempter, previous) {
                (Some(_), _) => Cause::KthreadPreemption,
                (None, Some(_)) => Cause::WakeupPlacement,
                (None, None) => Cause::WorkConservation,
            };
            let (start, end) = (start.max(cluster_start), end.min(cluster_end));
            let share =
                WaitShare { task: wait.task, cpu: cluster.cpu, start, end, lost: 0, cause, preempter, previous };
            if kthreads::bound_to(self.placement, wait.task, model.comm_at(wait.task, wait.start), cluster.cpu) {
                bound.push((wait_id, share, overlap));
            } else {
                waits.push((share, overlap));
            }
        }
        let total: u128 =
            waits.iter().map(|(_, o)| u128::from(*o)).chain(bound.iter().map(|(_, _, o)| u128::from(*o))).sum();
        let share_of = |overlap: u64| (u128::from(cluster.extent.lost) * u128::from(overlap) / total.max(1)) as u64;
        let waits: Vec<WaitShare> = waits
            .into_iter()
            .map(|(mut share, overlap)| {
                share.lost = share_of(overlap);
                share
            })
            .collect();
        for (wait_id, share, _) in &bound {
            self.bound.add(*wait_id, share.task, share.cpu, share.start, share.end);
        }
        let cluster = if bound.is_empty() { cluster } else { cluster.narrowed(&waits, lost_pieces) };
        let mut mix = CauseMix::default();
        waits.iter().for_each(|w| mix.add(w.cause, w.lost));
        Attributed { kind: main_kind(&mix), cluster, waits, confined: false }
    }
}

/// The kind a cause mix makes: its largest part, pinned waste counting as
/// work-conservation.
fn main_kind(mix: &CauseMix) -> Kind {
    let candidates = [
        (mix.get(Cause::WorkConservation).saturating_add(mix.get(Cause::Pinned)), Kind::WorkConservation),
        (mix.get(Cause::WakeupPlacement), Kind::WakeupPlacement),
        (mix.get(Cause::KthreadPreemption), Kind::KthreadPreemption),
    ];
    candidates.iter().fold(candidates[0], |best, &c| if c.0 > best.0 { c } else { best }).1
}

/// The wakeup that began each wait, by wait (one pass over the wakeups' wait column).
struct WakeupsOfWaits(Vec<Option<WakeupId>>);

impl WakeupsOfWaits {
    fn of(model: &Model) -> Self {
        let wakeups = model.wakeups();
        let mut of_wait = vec![None; model.waits().len()];
        for wakeup in wakeups.ids() {
            if let Some(wait) = wakeups.wait(wakeup) {
                of_wait[wait.index()] = Some(wakeup);
            }
        }
        WakeupsOfWaits(of_wait)
    }

    /// For a wait begun by a wakeup that moved the task from its previous CPU onto the
    /// waker's (busy) one: the previous CPU, and whether it was idle then.
    fn misplaced(
        &self,
        model: &Model,
        cursors: &mut SegmentCursors<'_>,
        wait: WaitId,
        start: Nanos,
    ) -> Option<(Cpu, bool)> {
        let wakeup = model.wakeups().get(self.0[wait.index()]?);
        let prev = wakeup.prev_cpu?;
        let onto_waker = wakeup.kind == WakeupKind::Wakeup && wakeup.waker_cpu == Some(wakeup.target_cpu);
        (onto_waker && prev != wakeup.target_cpu).then(|| (prev, cursors.idle_at(prev, start) == Some(true)))
    }
}

/// The tasks that lost a tenth or more of a cluster's time: those that link it to others
/// (a task that only waited briefly there does not).
fn main_tasks(cluster: &Attributed) -> impl Iterator<Item = TaskId> + '_ {
    let lost = cluster.cluster.extent.lost;
    cluster.waits.iter().filter(move |w| w.lost.saturating_mul(10) >= lost).map(|w| w.task)
}

/// Clusters (indices) making one pattern, and their extent.
struct Pattern {
    members: Vec<usize>,
    extent: Extent,
    kind: Kind,
    confined: bool,
    cpus: Vec<Cpu>,
    tasks: HashSet<TaskId>,
}

/// Clusters joined into patterns, in time order: a cluster joins the latest pattern of
/// its kind (and confinement) on its CPU or sharing a task with it whose extent it
/// continues.
fn patterns(clusters: &[Attributed]) -> Vec<Pattern> {
    let mut order: Vec<usize> = (0..clusters.len()).collect();
    order.sort_by_key(|&i| (clusters[i].cluster.extent.start, clusters[i].cluster.cpu));
    let longest = clusters.iter().map(|a| a.cluster.extent.span()).max().unwrap_or(0);
    let mut patterns: Vec<Pattern> = Vec::new();
    // Patterns that may still be continued, by index.
    let mut open: Vec<usize> = Vec::new();
    for i in order {
        let cluster = &clusters[i];
        let extent = cluster.cluster.extent;
        open.retain(|&p| {
            let pattern = &patterns[p].extent;
            extent.start.saturating_sub(pattern.end).0 <= SPARSE_GAP.saturating_mul(pattern.span().max(longest))
        });
        let related = |p: &Pattern| {
            p.kind == cluster.kind
                && p.confined == cluster.confined
                && (p.cpus.contains(&cluster.cluster.cpu) || main_tasks(cluster).any(|t| p.tasks.contains(&t)))
                && p.extent.joins(&extent)
        };
        match open.iter().rev().copied().find(|&p| related(&patterns[p])) {
            Some(p) => {
                let pattern = &mut patterns[p];
                pattern.members.push(i);
                pattern.extent.absorb(&extent);
                if !pattern.cpus.contains(&cluster.cluster.cpu) {
                    pattern.cpus.push(cluster.cluster.cpu);
                }
                pattern.tasks.extend(main_tasks(cluster));
            }
            None => {
                open.push(patterns.len());
                patterns.push(Pattern {
                    members: vec![i],
                    extent,
                    kind: cluster.kind,
                    confined: cluster.confined,
                    cpus: vec![cluster.cluster.cpu],
                    tasks: main_tasks(cluster).collect(),
                });
            }
        }
    }
    patterns
}

/// Significant patterns of the same kind (and confinement) that overlap for half the
/// longer one or more join: several CPUs failing at once.
fn simultaneous(patterns: Vec<Pattern>, min_lost: Nanos) -> Vec<Pattern> {
    let mut parent: Vec<usize> = (0..patterns.len()).collect();
    let significant: Vec<usize> = (0..patterns.len()).filter(|&i| patterns[i].extent.significant(min_lost)).collect();
    for (position, &i) in significant.iter().enumerate() {
        for &j in &significant[..position] {
            let (a, b) = (&patterns[i], &patterns[j]);
            let overlap = a.extent.end.min(b.extent.end).saturating_sub(a.extent.start.max(b.extent.start)).0;
            if a.kind == b.kind
                && a.confined == b.confined
                && overlap.saturating_mul(2) >= a.extent.span().max(b.extent.span())
                && overlap > 0
            {
                union(&mut parent, i, j);
            }
        }
    }
    let mut by_root: BTreeMap<usize, Pattern> = BTreeMap::new();
    for (i, pattern) in patterns.into_iter().enumerate() {
        match by_root.entry(find(&mut parent, i)) {
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(pattern);
            }
            std::collections::btree_map::Entry::Occupied(mut slot) => {
                let joined = slot.get_mut();
                joined.members.extend(pattern.members);
                joined.extent.absorb(&pattern.extent);
            }
        }
    }
    by_root.into_values().collect()
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

/// One task's part in an episode being built.
struct Part {
    task: TaskId,
    lost: u64,
    /// Of that, its waits' while it was pinned.
    pinned_lost: u64,
    waits: u32,
    first_wait: Nanos,
    pinning: Pinning,
    /// Where it ran, when it is possibly pinned by that evidence.
    confinement: Option<Confinement>,
}

impl Part {
    /// Whether its wait beginning at `start` is pinned waste.
    fn pinned_at(&self, start: Nanos) -> bool {
        match (&self.pinning, &self.confinement) {
            (Pinning::No, _) => false,
            (_, Some(confinement)) => start >= confinement.since,
            (_, None) => true,
        }
    }

    /// When it became possibly pinned, if it ran elsewhere before.
    fn pinned_since(&self) -> Option<Nanos> {
        self.confinement.as_ref().filter(|c| !c.whole_life()).map(|c| c.since)
    }
}

/// What describing an episode needs besides its clusters.
struct EpisodeContext<'a> {
    model: &'a Model,
    request: &'a CheckRequest<'a>,
    placement: &'a Placement,
    exposure: &'a Exposure,
    /// The sweep's lost pieces, which clusters index.
    pieces: &'a [LostPiece],
}

fn episode(context: &EpisodeContext<'_>, group: &[&Attributed]) -> Incident {
    let model = context.model;
    let start = group.iter().map(|a| a.cluster.extent.start).min().unwrap_or_default();
    let end = group.iter().map(|a| a.cluster.extent.end).max().unwrap_or_default();
    let marks = (
        group.iter().map(|a| a.cluster.marks.0).min().unwrap_or_default(),
        group.iter().map(|a| a.cluster.marks.1).max().unwrap_or_default(),
    );
    let mut lost_on: BTreeMap<Cpu, u64> = BTreeMap::new();
    group.iter().for_each(|a| {
        let lost = lost_on.entry(a.cluster.cpu).or_default();
        *lost = lost.saturating_add(a.cluster.extent.lost);
    });
    let mut by_cpu: Vec<(u64, Cpu)> = lost_on.into_iter().map(|(cpu, lost)| (lost, cpu)).collect();
    by_cpu.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let cpus: Vec<Cpu> = by_cpu.iter().map(|&(_, c)| c).collect();
    let waiting: Vec<(Cpu, Nanos, Nanos)> = group.iter().flat_map(|a| a.cluster.waiting(context.pieces)).collect();
    let idle = IdleCpus::while_waiting(model, &waiting, start, end);
    let waits: Vec<&WaitShare> = group.iter().flat_map(|a| &a.waits).collect();
    let mut parts = task_parts(&waits);
    for part in &mut parts {
        (part.pinning, part.confinement) = pinning(context, part, &cpus, &idle.all);
    }
    let mut causes = CauseMix::default();
    for wait in &waits {
        let part = parts.iter_mut().find(|p| p.task == wait.task).filter(|p| p.pinned_at(wait.start));
        let pinned = part.map(|p| p.pinned_lost = p.pinned_lost.saturating_add(wait.lost)).is_some();
        causes.add(if pinned { Cause::Pinned } else { wait.cause }, wait.lost);
    }
    let lost = group.iter().map(|a| a.cluster.extent.lost).fold(0, u64::saturating_add);
    let pinning = episode_pinning(&parts, lost);
    let kind = main_kind(&causes);
    let tasks: Vec<TaskLoss> = parts
        .iter()
        .take(TOP_TASKS)
        .map(|p| TaskLoss {
            pid: model.tasks().get(p.task).pid,
            comm: model.comm_at(p.task, p.first_wait).to_string(),
            lost_ns: p.lost,
            waits: p.waits,
            pinning: p.pinning,
            pinned_since: p.pinned_since(),
        })
        .collect();
    let mut pids: Vec<Pid> = tasks.iter().map(|t| t.pid).collect();
    if kind == Kind::KthreadPreemption {
        for pid in waits.iter().filter_map(|w| w.preempter).map(|t| model.tasks().get(t).pid) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
    }
    let evidence = evidence(model, &waits);
    let mut incident = Incident {
        kind,
        start,
        end,
        cpus,
        idle_cpus: idle.all.iter().take(8).copied().collect(),
        idle_cpu_count: idle.all.len(),
        idle_cpus_on_average: idle.mean,
        idle_cpus_at_once: idle.most,
        cpus_at_once: idle.waited_most,
        pids,
        tasks,
        lost_cpu_ns: lost,
        waits: waits.len() as u32,
        causes,
        pinning,
        evidence,
        explanation: String::new(),
        marks,
    };
    incident.explanation = explain(model, &incident, &parts, &idle, context.exposure);
    incident
}

/// Per task: lost time and waits, most lost first.
fn task_parts(waits: &[&WaitShare]) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    let mut index: HashMap<TaskId, usize> = HashMap::new();
    for wait in waits {
        let slot = *index.entry(wait.task).or_insert_with(|| {
            parts.push(Part {
                task: wait.task,
                lost: 0,
                pinned_lost: 0,
                waits: 0,
                first_wait: wait.start,
                pinning: Pinning::No,
                confinement: None,
            });
            parts.len() - 1
        });
        let part = &mut parts[slot];
        part.lost = part.lost.saturating_add(wait.lost);
        part.waits += 1;
        part.first_wait = part.first_wait.min(wait.start);
    }
    parts.sort_by(|a, b| b.lost.cmp(&a.lost).then(a.task.cmp(&b.task)));
    parts
}

/// Whether a task could run on the CPUs that idled: by its recorded affinity, else by
/// the evidence of where it ran. Without affinity, a task is possibly pinned when it ran
/// only on a few CPUs (`PINNED_CPUS`) while others idled: all its life on the CPUs it
/// waited on (with at least `PINNED_RUNS` runs and `PINNED_WAITS` waits in the episode),
/// or from the moment it last left them on, having waited there long and often while
/// idle CPUs were enough for it ([`Exposed::says_pinned`]) without being moved off.
fn pinning(
    context: &EpisodeContext<'_>,
    part: &Part,
    waited_on: &[Cpu],
    idle: &[Cpu],
) -> (Pinning, Option<Confinement>) {
    let pid = context.model.tasks().get(part.task).pid;
    if let Some(allowed) = context.request.affinity.and_then(|a| a.allowed(pid)) {
        let idle: Vec<Cpu> = idle.iter().copied().filter(|c| !waited_on.contains(c)).collect();
        let kept_off = !allowed.is_empty() && !idle.is_empty() && allowed.iter().all(|c| !idle.contains(c));
        return (if kept_off { Pinning::Recorded } else { Pinning::No }, None);
    }
    // Its confinements, shortest first, that began before its first wait here, leave
    // CPUs that idled outside and are few enough: the first the evidence holds for.
    let idle_outside = |c: &Confinement| idle.iter().any(|i| !c.cpus.contains(i) && !waited_on.contains(i));
    let confinement = context
        .placement
        .confinements(part.task)
        .into_iter()
        .take_while(|c| c.cpus.len() <= PINNED_CPUS)
        .filter(|c| c.since <= part.first_wait && idle_outside(c))
        .find(|c| {
            if c.whole_life() && c.cpus.iter().all(|cpu| waited_on.contains(cpu)) {
                c.runs >= PINNED_RUNS && part.waits >= PINNED_WAITS
            } else {
                context.exposure.since(part.task, c.since).says_pinned()
            }
        });
    match confinement {
        Some(confinement) => (Pinning::Possibly, Some(confinement)),
        None => (Pinning::No, None),
    }
}

/// An episode is pinned when most of its lost time is pinned waste.
fn episode_pinning(parts: &[Part], lost: u64) -> Pinning {
    let share = |at_least: Pinning| {
        parts.iter().filter(|p| p.pinning >= at_least).map(|p| p.pinned_lost).fold(0, u64::saturating_add)
    };
    if share(Pinning::Recorded).saturating_mul(2) >= lost.max(1) {
        Pinning::Recorded
    } else if share(Pinning::Possibly).saturating_mul(2) >= lost.max(1) {
        Pinning::Possibly
    } else {
        Pinning::No
    }
}

/// The episode's largest waits, explained one by one.
fn evidence(model: &Model, waits: &[&WaitShare]) -> Vec<Evidence> {
    let mut largest: Vec<&&WaitShare> = waits.iter().collect();
    largest.sort_by(|a, b| b.lost.cmp(&a.lost).then(a.start.cmp(&b.start)));
    largest
        .into_iter()
        .take(TOP_WAITS)
        .map(|wait| {
            let pid = model.tasks().get(wait.task).pid;
            let name = format!("{}:{pid}", model.comm_at(wait.task, wait.start));
            let waited = ms(wait.end.saturating_sub(wait.start).0);
            let idle = IdleCpus::during(model, wait.cpu, wait.start, wait.end).describe();
            let cpu = wait.cpu.0;
            let explanation = match (wait.cause, wait.preempter, wait.previous) {
                (Cause::KthreadPreemption, Some(kthread), _) => format!(
                    "{name} was preempted on CPU {cpu} by kernel thread {} and waited {waited} while {idle} idled",
                    model.comm_at(kthread, wait.start)
                ),
                (Cause::WakeupPlacement, _, Some((previous, true))) => format!(
                    "{name} was woken onto the waker's busy CPU {cpu} while its previous CPU {} was idle; it waited \
                     {waited}",
                    previous.0
                ),
                (Cause::WakeupPlacement, _, Some((previous, false))) => format!(
                    "{name} was moved from CPU {} onto the waker's busy CPU {cpu} at its wakeup and waited {waited} \
                     while {idle} idled",
                    previous.0
                ),
                _ => format!("{name} waited {waited} in CPU {cpu}'s runqueue while {idle} idled"),
            };
            Evidence {
                cause: wait.cause,
                start: wait.start,
                end: wait.end,
                cpu: wait.cpu,
                pid,
                lost_ns: wait.lost,
                explanation,
            }
        })
        .collect()
}

/// The CPUs that idled during a stretch while some tasks waited: always other CPUs than
/// those the tasks waited on at that instant.
struct IdleCpus {
    /// Most idle first.
    all: Vec<Cpu>,
    /// Idle CPUs on average over the instants tasks waited, and the most at once.
    mean: f64,
    most: u32,
    /// The most CPUs tasks waited on at once.
    waited_most: u32,
}

impl IdleCpus {
    /// The CPUs other than `busy` that idled during `[start, end)` (a wait's evidence:
    /// its CPU busy throughout).
    fn during(model: &Model, busy: Cpu, start: Nanos, end: Nanos) -> IdleCpus {
        let mut idle = IdleCpus::while_waiting(model, &[(busy, start, end)], start, end);
        idle.all.retain(|&c| c != busy);
        idle
    }

    /// The CPUs that idled while tasks waited on the CPUs of `waiting` (each a stretch of
    /// a CPU busy with tasks waiting behind it), instant by instant within `[start, end)`.
    fn while_waiting(model: &Model, waiting: &[(Cpu, Nanos, Nanos)], start: Nanos, end: Nanos) -> IdleCpus {
        // (time, CPU, change): an idle CPU's change is +-1 in `idle`; a waiting stretch's
        // is +-2 in `waited` (told apart by parity), ends before starts at one instant.
        let mut changes: Vec<(Nanos, i8, u32)> = Vec::new();
        for &(cpu, from, to) in waiting.iter().filter(|w| w.1 < w.2) {
            changes.extend([(from.max(start), 2, cpu.0), (to.min(end), -2, cpu.0)]);
        }
        for timeline in model.cpus() {
            let segments = timeline.segments();
            for segment in segments.overlapping(start, end).map(|i| segments.get(i)).filter(|s| s.task == TaskId::IDLE)
            {
                let (from, to) = (segment.start.max(start), segment.end.min(end));
                if from < to {
                    changes.extend([(from, 1, timeline.cpu().0), (to, -1, timeline.cpu().0)]);
                }
            }
        }
        changes.sort_unstable_by_key(|&(time, change, cpu)| (time, change, cpu));
        let cpus = model.cpus().len();
        // Time with some task waiting so far, and per CPU that much when it began idling
        // and its idle time while tasks waited.
        let (mut waited_ns, mut idle_sum, mut idle, mut waited) = (0u64, 0u128, 0u32, 0u32);
        let (mut most, mut waited_most) = (0u32, 0u32);
        let mut idle_since: Vec<Option<u64>> = vec![None; cpus];
        let mut idle_ns: Vec<u64> = vec![0; cpus];
        let mut last = start;
        for (index, &(time, change, cpu)) in changes.iter().enumerate() {
            if waited > 0 {
                let length = time.saturating_sub(last).0;
                waited_ns += length;
                idle_sum += u128::from(length) * u128::from(idle);
            }
            last = time;
            let slot = cpu as usize;
            match change {
                2 => waited += 1,
                -2 => waited = waited.saturating_sub(1),
                1 => {
                    idle += 1;
                    if let Some(since) = idle_since.get_mut(slot) {
                        *since = Some(waited_ns);
                    }
                }
                _ => {
                    idle = idle.saturating_sub(1);
                    if let (Some(since), Some(total)) = (idle_since.get_mut(slot), idle_ns.get_mut(slot)) {
                        *total += waited_ns - since.take().unwrap_or(waited_ns);
                    }
                }
            }
            // Counted once an instant's changes are all in.
            if changes.get(index + 1).is_none_or(|next| next.0 > time) && waited > 0 {
                most = most.max(idle);
                waited_most = waited_most.max(waited);
            }
        }
        let mut per_cpu: Vec<(u64, Cpu)> =
            idle_ns.iter().enumerate().filter(|&(_, &ns)| ns > 0).map(|(c, &ns)| (ns, Cpu(c as u32))).collect();
        per_cpu.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        IdleCpus {
            all: per_cpu.into_iter().map(|(_, c)| c).collect(),
            mean: (idle_sum as f64) / (waited_ns.max(1) as f64),
            most,
            waited_most,
        }
    }

    fn describe(&self) -> String {
        match self.all.as_slice() {
            [] => "no other CPU".into(),
            [one] => format!("CPU {}", one.0),
            [one, two] => format!("CPUs {} and {}", one.0, two.0),
            more => format!("{} other CPUs", more.len()),
        }
    }
}

/// One paragraph: who waited where while which CPUs idled, how much was lost, the causes,
/// and what pinning says.
fn explain(model: &Model, incident: &Incident, parts: &[Part], idle: &IdleCpus, exposure: &Exposure) -> String {
    let names: Vec<String> = incident.tasks.iter().map(|t| format!("{}:{}", t.comm, t.pid)).collect();
    let who = match (names.as_slice(), parts.len()) {
        ([], _) => "tasks".to_string(),
        ([one], 1) => one.clone(),
        ([one, two], 2) => format!("{one} and {two}"),
        (shown, all) => {
            format!("{} and {} other tasks", shown[..shown.len().min(2)].join(", "), all - shown.len().min(2))
        }
    };
    // Per instant, the idle CPUs are never those tasks waited on then.
    let (cpus, idled) = match incident.cpus.as_slice() {
        [one] => (format!("CPU {}", one.0), idle.describe()),
        many => (
            format!("{} CPUs (up to {} at once)", many.len(), idle.waited_most),
            format!("{:.1} other CPUs on average (up to {} at once)", idle.mean, idle.most),
        ),
    };
    let span = incident.end.saturating_sub(incident.start).0;
    // Parts that round to 0% are left out.
    let causes: Vec<String> = Cause::ALL
        .iter()
        .filter(|&&c| incident.causes.get(c).saturating_mul(200) >= incident.causes.total().max(1))
        .map(|&c| {
            format!(
                "{} {:.0}%",
                c.name(),
                100.0 * incident.causes.get(c) as f64 / incident.causes.total().max(1) as f64
            )
        })
        .collect();
    let mut text = format!(
        "{who} waited on {cpus} while {idled} idled: {} of CPU time lost in {} ({:.2} CPUs on average, {} waits); causes: {}.",
        ms(incident.lost_cpu_ns),
        ms(span),
        incident.density(),
        incident.waits,
        causes.join(", ")
    );
    if let Some(part) = parts.iter().find(|p| p.pinning == incident.pinning && p.pinning != Pinning::No) {
        let name = format!("{}:{}", model.comm_at(part.task, part.first_wait), model.tasks().get(part.task).pid);
        let idle_text = idle.describe();
        text.push(' ');
        text.push_str(&match incident.pinning {
            Pinning::Recorded => {
                format!("Pinned: the recorded affinity kept {name} off {idle_text}; the scheduler could not use them.")
            }
            _ => match &part.confinement {
                Some(confinement) if !confinement.whole_life() => {
                    possibly_pinned_since(incident, confinement, exposure.since(part.task, confinement.since), &name)
                }
                Some(confinement) => format!(
                    "{name} only ever ran on CPU {} ({} runs over {:.2} s) while {idle_text} idled: possibly pinned \
                     (the trace has no affinity).",
                    cpu_list(&confinement.cpus),
                    confinement.runs,
                    confinement.last.saturating_sub(confinement.first).as_secs_f64()
                ),
                None => String::new(),
            },
        });
    }
    text
}

/// How a task that pinned itself (or was pinned) after running elsewhere is told: where
/// it ran since, when that began, and how often it waited there while others idled.
fn possibly_pinned_since(incident: &Incident, confinement: &Confinement, exposed: Exposed, name: &str) -> String {
    let when = if confinement.since <= incident.start {
        format!("{:.2} s before this episode", incident.start.saturating_sub(confinement.since).as_secs_f64())
    } else {
        format!("{:.2} s into it", confinement.since.saturating_sub(incident.start).as_secs_f64())
    };
    let before = confinement.before.map_or_else(String::new, |cpu| format!(" (it ran on CPU {} before)", cpu.0));
    format!(
        "{name} ran only on CPU {} from {when} on{before} and waited there {} times while other CPUs idled ({} \
         of {} ms or more), never moved elsewhere: possibly pinned since then (the trace has no affinity).",
        cpu_list(&confinement.cpus),
        exposed.waits,
        exposed.long_waits,
        LONG_WAIT.0 / 1_000_000
    )
}

/// CPU numbers joined by commas.
fn cpu_list(cpus: &[Cpu]) -> String {
    cpus.iter().map(|c| c.0.to_string()).collect::<Vec<_>>().join(",")
}
