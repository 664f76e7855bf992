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
//!    misplaced wakeup, or work conservation); a cluster's kind is its main cause.
//! 3. Patterns: in time order, a cluster joins an earlier pattern of the same kind on its
//!    CPU or sharing a main task with it (one that lost a tenth of a cluster's time or
//!    more), by the same gap and density rules (a pinned group
//!    taking turns on two CPUs is one pattern).
//! 4. Patterns of the same kind overlapping for half the longer one or more join (several
//!    CPUs failing at once, the paper's Figure 6).
//! 5. Episodes are the patterns that lost at least the threshold, at a fifth of a CPU
//!    or more on average (a CPU overloaded for long while others idled only now and
//!    then — inevitable overload with brief idle moments — is not one).
//! 6. Per episode: the CPUs that idled, each task's part and whether it was pinned
//!    (recorded affinity) or possibly pinned (evidence), the cause mix with `pinned`
//!    taking precedence, the kind (its main cause, pinned waste counting as
//!    work-conservation), its largest waits as evidence, and an explanation.

use super::cursor::SegmentCursors;
use super::lost::LostPiece;
use super::{Cause, CauseMix, CheckRequest, Evidence, Incident, Kind, Pinning, TaskLoss, ms};
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
/// Evidence for "possibly pinned": at least this many runs in the trace and waits in the
/// episode, all on the CPUs it waited on.
const PINNED_RUNS: u32 = 5;
const PINNED_WAITS: u32 = 3;

/// Names of kernel threads that preempt application tasks.
const KERNEL_THREADS: [&str; 10] =
    ["kworker", "ksoftirqd", "kcompactd", "migration", "rcu_", "kswapd", "khugepaged", "watchdog", "irq/", "kthreadd"];

/// The episodes in the sweep's `pieces` (by CPU, then time): their clusters, with each
/// wait's share and cause, grouped into episodes. Describing them ([`Found::incidents`])
/// needs where each task ran, which [`TaskRuns::of`] computes meanwhile on another thread.
pub(super) fn search(model: &Model, request: &CheckRequest<'_>, pieces: &[LostPiece]) -> Found {
    let fragment = (request.min_lost.0 / FRAGMENT).max(1);
    let clusters: Vec<Cluster> = clusters(pieces).into_iter().filter(|c| c.extent.lost >= fragment).collect();
    if clusters.is_empty() {
        return Found::default();
    }
    let wakeups = WakeupsOfWaits::of(model);
    let mut cursors = SegmentCursors::new(model);
    let attributed: Vec<Attributed> =
        clusters.into_iter().map(|c| attribute(model, request, pieces, c, &wakeups, &mut cursors)).collect();
    let groups = simultaneous(patterns(&attributed), request.min_lost)
        .into_iter()
        .filter(|g| g.extent.significant(request.min_lost))
        .map(|g| g.members)
        .collect();
    Found { attributed, groups }
}

/// Episodes found: the attributed clusters, and the episodes as groups of them.
#[derive(Default)]
pub(super) struct Found {
    attributed: Vec<Attributed>,
    groups: Vec<Vec<usize>>,
}

impl Found {
    /// The episodes as incidents, described with where their tasks ran.
    pub(super) fn incidents(&self, model: &Model, request: &CheckRequest<'_>, runs: &TaskRuns) -> Vec<Incident> {
        let members = |group: &Vec<usize>| group.iter().map(|&i| &self.attributed[i]).collect::<Vec<_>>();
        self.groups.iter().map(|group| episode(model, request, runs, &members(group))).collect()
    }
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

/// A cluster's waits with their shares of its lost time and their causes.
fn attribute(
    model: &Model,
    request: &CheckRequest<'_>,
    pieces: &[LostPiece],
    cluster: Cluster,
    wakeups: &WakeupsOfWaits,
    cursors: &mut SegmentCursors<'_>,
) -> Attributed {
    let lost_pieces = cluster.pieces(pieces);
    let (cluster_start, cluster_end) = (cluster.extent.start, cluster.extent.end);
    let mut waits: Vec<(WaitShare, u64)> = Vec::new();
    for (start, end, wait_id) in overlapping_pieces(model, cluster.cpu, cluster_start, cluster_end) {
        let wait = model.waits().get(wait_id);
        if !request.filter.accepts(model, wait.task) {
            continue;
        }
        let overlap: u64 = lost_pieces
            .iter()
            .map(|p| end.min(p.end).saturating_sub(start.max(p.start)).0)
            .fold(0, u64::saturating_add);
        if overlap == 0 {
            continue;
        }
        let preempter = (wait.cause == WaitCause::Preempted && start == wait.start)
            .then(|| cursors.started_at(cluster.cpu, wait.start))
            .flatten()
            .filter(|&t| is_kernel_thread(model.comm_at(t, wait.start)));
        let previous = wakeups.misplaced(model, cursors, wait_id, wait.start);
        let cause = match (preempter, previous) {
            (Some(_), _) => Cause::KthreadPreemption,
            (None, Some(_)) => Cause::WakeupPlacement,
            (None, None) => Cause::WorkConservation,
        };
        let (start, end) = (start.max(cluster_start), end.min(cluster_end));
        let share = WaitShare { task: wait.task, cpu: cluster.cpu, start, end, lost: 0, cause, preempter, previous };
        waits.push((share, overlap));
    }
    let total: u128 = waits.iter().map(|(_, overlap)| u128::from(*overlap)).sum();
    let waits: Vec<WaitShare> = waits
        .into_iter()
        .map(|(mut share, overlap)| {
            share.lost = (u128::from(cluster.extent.lost) * u128::from(overlap) / total.max(1)) as u64;
            share
        })
        .collect();
    let mut mix = CauseMix::default();
    waits.iter().for_each(|w| mix.add(w.cause, w.lost));
    Attributed { kind: main_kind(&mix), cluster, waits }
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

fn is_kernel_thread(comm: &str) -> bool {
    KERNEL_THREADS.iter().any(|prefix| comm.starts_with(prefix))
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
    cpus: Vec<Cpu>,
    tasks: HashSet<TaskId>,
}

/// Clusters joined into patterns, in time order: a cluster joins the latest pattern of
/// its kind on its CPU or sharing a task with it whose extent it continues.
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
                    cpus: vec![cluster.cluster.cpu],
                    tasks: main_tasks(cluster).collect(),
                });
            }
        }
    }
    patterns
}

/// Significant patterns of the same kind that overlap for half the longer one or more
/// join: several CPUs failing at once.
fn simultaneous(patterns: Vec<Pattern>, min_lost: Nanos) -> Vec<Pattern> {
    let mut parent: Vec<usize> = (0..patterns.len()).collect();
    let significant: Vec<usize> = (0..patterns.len()).filter(|&i| patterns[i].extent.significant(min_lost)).collect();
    for (position, &i) in significant.iter().enumerate() {
        for &j in &significant[..position] {
            let (a, b) = (&patterns[i], &patterns[j]);
            let overlap = a.extent.end.min(b.extent.end).saturating_sub(a.extent.start.max(b.extent.start)).0;
            if a.kind == b.kind && overlap.saturating_mul(2) >= a.extent.span().max(b.extent.span()) && overlap > 0 {
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

/// Where and how often each task ran in the whole trace.
pub(super) struct TaskRuns(Vec<Runs>);

#[derive(Copy, Clone, Debug, Default)]
struct Runs {
    count: u32,
    first: Nanos,
    last: Nanos,
    /// The CPUs it ran on, up to four; `None` once it ran on more.
    cpus: Option<[Option<Cpu>; 4]>,
}

impl TaskRuns {
    pub(super) fn of(model: &Model) -> TaskRuns {
        let mut runs = vec![Runs { cpus: Some([None; 4]), first: Nanos::MAX, ..Runs::default() }; model.tasks().len()];
        for timeline in model.cpus() {
            for segment in timeline.segments().iter().filter(|s| s.task != TaskId::IDLE) {
                let entry = &mut runs[segment.task.index()];
                entry.count += 1;
                entry.first = entry.first.min(segment.start);
                entry.last = entry.last.max(segment.end);
                entry.cpus = entry.cpus.and_then(|mut cpus| {
                    if cpus.contains(&Some(timeline.cpu())) {
                        return Some(cpus);
                    }
                    let free = cpus.iter_mut().find(|c| c.is_none())?;
                    *free = Some(timeline.cpu());
                    Some(cpus)
                });
            }
        }
        TaskRuns(runs)
    }

    fn get(&self, task: TaskId) -> Runs {
        self.0.get(task.index()).copied().unwrap_or_default()
    }
}

/// One task's part in an episode being built.
struct Part {
    task: TaskId,
    lost: u64,
    waits: u32,
    first_wait: Nanos,
    pinning: Pinning,
}

fn episode(model: &Model, request: &CheckRequest<'_>, runs: &TaskRuns, group: &[&Attributed]) -> Incident {
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
    // One waiting CPU is busy throughout; several may take turns idling.
    let busy = if cpus.len() == 1 { cpus.as_slice() } else { &[] };
    let idle = IdleCpus::during(model, busy, start, end);
    let waits: Vec<&WaitShare> = group.iter().flat_map(|a| &a.waits).collect();
    let mut parts = task_parts(&waits);
    for part in &mut parts {
        part.pinning = pinning(model, request, runs, part, &cpus, &idle.all);
    }
    let pinned_task = |task: TaskId| parts.iter().find(|p| p.task == task).map_or(Pinning::No, |p| p.pinning);
    let mut causes = CauseMix::default();
    for wait in &waits {
        let cause = if pinned_task(wait.task) == Pinning::No { wait.cause } else { Cause::Pinned };
        causes.add(cause, wait.lost);
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
    incident.explanation = explain(model, &incident, &parts, runs, &idle);
    incident
}

/// Per task: lost time and waits, most lost first.
fn task_parts(waits: &[&WaitShare]) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    let mut index: HashMap<TaskId, usize> = HashMap::new();
    for wait in waits {
        let slot = *index.entry(wait.task).or_insert_with(|| {
            parts.push(Part { task: wait.task, lost: 0, waits: 0, first_wait: wait.start, pinning: Pinning::No });
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
/// the evidence of where it ran.
fn pinning(
    model: &Model,
    request: &CheckRequest<'_>,
    runs: &TaskRuns,
    part: &Part,
    waited_on: &[Cpu],
    idle: &[Cpu],
) -> Pinning {
    // The CPUs it could have run on instead: those that idled, other than where it waited.
    let idle: Vec<Cpu> = idle.iter().copied().filter(|c| !waited_on.contains(c)).collect();
    let idle = idle.as_slice();
    let pid = model.tasks().get(part.task).pid;
    if let Some(allowed) = request.affinity.and_then(|a| a.allowed(pid)) {
        let kept_off = !allowed.is_empty() && !idle.is_empty() && allowed.iter().all(|c| !idle.contains(c));
        return if kept_off { Pinning::Recorded } else { Pinning::No };
    }
    let task = runs.get(part.task);
    let ran_where_it_waited = task.cpus.is_some_and(|cpus| cpus.iter().flatten().all(|c| waited_on.contains(c)));
    let possibly = ran_where_it_waited && task.count >= PINNED_RUNS && part.waits >= PINNED_WAITS && !idle.is_empty();
    if possibly { Pinning::Possibly } else { Pinning::No }
}

/// An episode is pinned when most of its lost time is pinned tasks'.
fn episode_pinning(parts: &[Part], lost: u64) -> Pinning {
    let share =
        |at_least: Pinning| parts.iter().filter(|p| p.pinning >= at_least).map(|p| p.lost).fold(0, u64::saturating_add);
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
            let idle = IdleCpus::during(model, &[wait.cpu], wait.start, wait.end).describe();
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

/// The CPUs (other than some) that idled during a stretch.
struct IdleCpus {
    /// Most idle first.
    all: Vec<Cpu>,
}

impl IdleCpus {
    fn during(model: &Model, busy: &[Cpu], start: Nanos, end: Nanos) -> IdleCpus {
        let mut per_cpu: Vec<(Nanos, Cpu)> = Vec::new();
        for timeline in model.cpus().iter().filter(|t| !busy.contains(&t.cpu())) {
            let segments = timeline.segments();
            let idle = segments
                .overlapping(start, end)
                .map(|i| segments.get(i))
                .filter(|s| s.task == TaskId::IDLE)
                .map(|s| s.end.min(end).saturating_sub(s.start.max(start)))
                .fold(Nanos(0), |a, b| a + b);
            if idle > Nanos(0) {
                per_cpu.push((idle, timeline.cpu()));
            }
        }
        per_cpu.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        IdleCpus { all: per_cpu.into_iter().map(|(_, c)| c).collect() }
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
fn explain(model: &Model, incident: &Incident, parts: &[Part], runs: &TaskRuns, idle: &IdleCpus) -> String {
    let names: Vec<String> = incident.tasks.iter().map(|t| format!("{}:{}", t.comm, t.pid)).collect();
    let who = match (names.as_slice(), parts.len()) {
        ([], _) => "tasks".to_string(),
        ([one], 1) => one.clone(),
        ([one, two], 2) => format!("{one} and {two}"),
        (shown, all) => {
            format!("{} and {} other tasks", shown[..shown.len().min(2)].join(", "), all - shown.len().min(2))
        }
    };
    let cpus = match incident.cpus.as_slice() {
        [one] => format!("CPU {}", one.0),
        many => format!("{} CPUs", many.len()),
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
        "{who} waited on {cpus} while {} idled: {} of CPU time lost in {} ({:.2} CPUs on average, {} waits); causes: {}.",
        idle.describe(),
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
            _ => {
                let task = runs.get(part.task);
                let on: Vec<String> = task.cpus.unwrap_or_default().iter().flatten().map(|c| c.0.to_string()).collect();
                let seconds = task.last.saturating_sub(task.first).as_secs_f64();
                format!(
                    "{name} only ever ran on CPU {} ({} runs over {seconds:.2} s) while {idle_text} idled: possibly \
                     pinned (the trace has no affinity).",
                    on.join(","),
                    task.count
                )
            }
        });
    }
    text
}
