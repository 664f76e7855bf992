//! Scheduler pathologies found automatically (`schedlens check`): located, ranked
//! incidents with the evidence for each, where the schedgraph paper's authors zoomed in
//! by hand.
//!
//! The main incidents are *episodes* of waste: stretches of time in which tasks waited
//! behind busy CPUs while other CPUs idled, densely — found at every scale, from a burst
//! of sub-millisecond waits to seconds of a persistent failure of work conservation,
//! with no minimum wait length (see `episodes`). An episode is classed by its main cause:
//! - `kthread-preemption`: kernel threads preempted the tasks (the straggler pattern);
//! - `wakeup-placement`: wakeups put tasks on the waker's busy CPU while their previous
//!   CPU was idle (the pattern Linux commit d8fcb81f1acf fixed);
//! - `work-conservation`: any other waiting while CPUs idled.
//!
//! Tasks confined to the CPUs they waited on make waste the scheduler could not avoid:
//! an episode says "pinned" when the trace records the tasks' affinity (`schedlens
//! record` does), and "possibly pinned" from the evidence otherwise (the tasks only ran
//! there, all their life or since some moment — a thread that pins itself after
//! starting — and kept waiting there while other CPUs idled; see `placement`). Kernel
//! threads bound to one CPU (`kthreads`) waiting on it are not waste at all: counted
//! apart, never in an episode.
//!
//! `migration-cascade` reports chains of migrations where each moved task displaced the
//! task running where it arrived (`cascades`). `overload` reports stretches with more
//! runnable tasks than CPUs: context, not a bug, and not counted as lost time.
//! Episodes are ranked by lost CPU time; the findings say what share of the time a task
//! waited while a core idled (over all waits, however short) the episodes cover.
//!
//! Everything that walks time comes from one sweep (`lost`): the running/waiting counts,
//! the idle-while-waiting total and the per-CPU lost time the episodes are made of.

mod cascades;
mod cursor;
mod episodes;
pub(crate) mod kthreads;
mod lost;
pub(crate) mod placement;

use crate::window::{TaskFilter, Window};
use model::{Cpu, Model, Nanos, Pid, Topology, WakeupKind};
use std::collections::{BTreeMap, HashMap};

/// `schedlens check`'s default for [`CheckRequest::min_lost`].
pub const DEFAULT_MIN_LOST: Nanos = Nanos(250_000);
/// `schedlens check`'s default for [`CheckRequest::min_overload`].
pub const DEFAULT_MIN_OVERLOAD: Nanos = Nanos(4_000_000);

/// What the checks look for.
#[derive(Clone, Debug)]
pub struct CheckRequest<'a> {
    pub window: Window,
    pub filter: &'a TaskFilter,
    /// Episodes that lost less CPU time than this are left out.
    pub min_lost: Nanos,
    /// Overloaded stretches shorter than this are left out.
    pub min_overload: Nanos,
    /// The tasks' CPU affinity, when the trace recorded it.
    pub affinity: Option<&'a Affinity>,
}

/// The classes of incident: the names reports, JSON and `synth`'s ground truth use.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    WorkConservation,
    WakeupPlacement,
    KthreadPreemption,
    MigrationCascade,
    Overload,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::WorkConservation,
        Kind::WakeupPlacement,
        Kind::KthreadPreemption,
        Kind::MigrationCascade,
        Kind::Overload,
    ];

    /// The name in reports and JSON (and in `synth`'s ground truth).
    pub const fn name(self) -> &'static str {
        match self {
            Kind::WorkConservation => "work-conservation",
            Kind::WakeupPlacement => "wakeup-placement",
            Kind::KthreadPreemption => "kthread-preemption",
            Kind::MigrationCascade => "migration-cascade",
            Kind::Overload => "overload",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether incidents of this kind lose CPU time (episodes do; cascades and overload
    /// do not).
    pub fn loses_cpu_time(self) -> bool {
        !matches!(self, Kind::MigrationCascade | Kind::Overload)
    }
}

/// Why a task waited while a CPU idled: the parts of an episode's cause mix.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    WorkConservation,
    WakeupPlacement,
    KthreadPreemption,
    /// The task could not (or, by the evidence, possibly could not) run on the idle CPUs.
    Pinned,
}

impl Cause {
    pub const ALL: [Cause; 4] =
        [Cause::WorkConservation, Cause::WakeupPlacement, Cause::KthreadPreemption, Cause::Pinned];

    pub fn name(self) -> &'static str {
        match self {
            Cause::WorkConservation => Kind::WorkConservation.name(),
            Cause::WakeupPlacement => Kind::WakeupPlacement.name(),
            Cause::KthreadPreemption => Kind::KthreadPreemption.name(),
            Cause::Pinned => "pinned",
        }
    }
}

/// Lost CPU time (ns) per cause.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CauseMix(pub [u64; 4]);

impl CauseMix {
    pub fn get(&self, cause: Cause) -> u64 {
        self.0[cause as usize]
    }

    pub fn add(&mut self, cause: Cause, ns: u64) {
        self.0[cause as usize] = self.0[cause as usize].saturating_add(ns);
    }

    pub fn total(&self) -> u64 {
        self.0.iter().fold(0, |a, &b| a.saturating_add(b))
    }
}

/// Whether an episode's waste came from tasks confined to where they waited.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pinning {
    #[default]
    No,
    /// The tasks only ever ran on the CPUs they waited on, many times, while others idled.
    Possibly,
    /// The recorded affinity kept the tasks off the idle CPUs.
    Recorded,
}

impl Pinning {
    /// The name in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Pinning::No => "no",
            Pinning::Possibly => "possibly",
            Pinning::Recorded => "pinned",
        }
    }
}

/// One task's part in an episode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskLoss {
    pub pid: Pid,
    pub comm: String,
    pub lost_ns: u64,
    /// Its waits in the episode.
    pub waits: u32,
    pub pinning: Pinning,
    /// When it became possibly pinned, when it ran elsewhere before (`None`: all its life,
    /// or by its recorded affinity, or not pinned).
    pub pinned_since: Option<Nanos>,
}

/// One wait inside an episode, as evidence (what `check` once reported on its own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    pub cause: Cause,
    pub start: Nanos,
    pub end: Nanos,
    pub cpu: Cpu,
    pub pid: Pid,
    pub lost_ns: u64,
    pub explanation: String,
}

/// One incident and its evidence.
#[derive(Clone, Debug, PartialEq)]
pub struct Incident {
    pub kind: Kind,
    pub start: Nanos,
    pub end: Nanos,
    /// Episodes: the CPUs tasks waited on, most lost first. Cascades: the CPUs in order.
    /// Overload: none.
    pub cpus: Vec<Cpu>,
    /// Episodes: the other CPUs that idled meanwhile, most idle first (at most 8).
    pub idle_cpus: Vec<Cpu>,
    /// How many CPUs idled meanwhile in all.
    pub idle_cpu_count: usize,
    /// Episodes: over the instants its tasks waited, the idle CPUs on average and at most
    /// at once, and the most CPUs they waited on at once (at one instant the idle CPUs
    /// are never those waited on).
    pub idle_cpus_on_average: f64,
    pub idle_cpus_at_once: u32,
    pub cpus_at_once: u32,
    /// The tasks involved: episodes' top tasks by lost time (then the kernel threads that
    /// preempted them), a cascade's moved tasks.
    pub pids: Vec<Pid>,
    /// Episodes: the top tasks by lost time (at most 5).
    pub tasks: Vec<TaskLoss>,
    /// CPU time lost: waiting tasks that idle CPUs could have run, integrated over time.
    pub lost_cpu_ns: u64,
    /// Episodes: the waits it is made of.
    pub waits: u32,
    pub causes: CauseMix,
    pub pinning: Pinning,
    /// Episodes: its largest single waits (at most 3).
    pub evidence: Vec<Evidence>,
    pub explanation: String,
    /// The running idle-while-waiting total at `start` and `end` (for coverage).
    pub marks: (u64, u64),
}

impl Incident {
    /// Lost CPU time per unit of time: how many CPUs were lost on average.
    pub fn density(&self) -> f64 {
        self.lost_cpu_ns as f64 / self.end.saturating_sub(self.start).0.max(1) as f64
    }

    /// Whether it is an episode of waste (lost time while CPUs idled).
    pub fn is_episode(&self) -> bool {
        matches!(self.kind, Kind::WorkConservation | Kind::WakeupPlacement | Kind::KthreadPreemption)
    }
}

/// The CPU affinity of tasks, as a recording captured it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Affinity {
    allowed: HashMap<Pid, Vec<Cpu>>,
}

impl Affinity {
    /// From (pid, allowed CPUs) observations in the order made: the last one of a pid
    /// counts.
    pub fn new(observations: impl IntoIterator<Item = (Pid, Vec<Cpu>)>) -> Affinity {
        Affinity { allowed: observations.into_iter().collect() }
    }

    /// The tasks' affinity as `schedlens record` stored it in the trace, if it did.
    pub fn recorded(context: &tracedat::RecordedContext) -> Option<Affinity> {
        let seen = context.affinity.iter().map(|a| (Pid(a.pid), a.cpus.iter().copied().map(Cpu).collect()));
        Some(Affinity::new(seen)).filter(|a| !a.is_empty())
    }

    /// The CPUs `pid` may run on, if recorded (sorted).
    pub fn allowed(&self, pid: Pid) -> Option<&[Cpu]> {
        self.allowed.get(&pid).map(Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.allowed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty()
    }
}

/// The checks' findings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Findings {
    /// Ranked: episodes by lost CPU time, then cascades, then overload.
    pub incidents: Vec<Incident>,
    /// Time during which some task waited while some CPU idled (all waits), where the
    /// trace shows both.
    pub idle_while_waiting: Nanos,
    /// Time during which it is unknown whether a task waited while a CPU idled (CPUs whose
    /// state is unknown: lost events, before their first event), not in `idle_while_waiting`.
    pub idle_while_waiting_unknown: Nanos,
    /// The window's length.
    pub window: Nanos,
    /// `migrations[from][to]` within the window.
    pub migrations: MigrationMatrix,
    pub wakeups: WakeupPlacements,
    /// Kernel threads bound to one CPU that waited on it while others idled: not waste.
    pub bound_waits: BoundWaits,
    /// Waste spread thin over many CPUs and much time, if any: its densest stretches are
    /// the episodes.
    pub diffuse: Option<Diffuse>,
}

/// Waste spread thin over many CPUs and much of the window (an overcommitted
/// message-passing load waiting a little everywhere all along): told as such, its
/// densest stretches listed as episodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diffuse {
    pub start: Nanos,
    pub end: Nanos,
    /// CPU time it lost in all.
    pub lost_ns: u64,
    /// The CPUs tasks waited on, and the tasks.
    pub cpus: usize,
    pub tasks: usize,
    /// The longest stretch listed as an episode.
    pub stretch_ns: u64,
}

impl Diffuse {
    /// CPUs lost on average over a window.
    pub fn cpus_lost(&self, window: Nanos) -> f64 {
        self.lost_ns as f64 / window.0.max(1) as f64
    }
}

/// The waits of kernel threads bound to one CPU (`kworker/48:1`, `migration/26`, ...) on
/// their own busy CPU while other CPUs idled: no placement could have run them
/// elsewhere, so they are not waste and are counted apart from the episodes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoundWaits {
    pub waits: u32,
    /// Their time waiting while other CPUs idled (within the stretches that lost time).
    pub waited_ns: u64,
    /// The longest such stretch of one wait.
    pub longest: Option<BoundWait>,
}

/// A bound kernel thread's wait, and who held its CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundWait {
    pub pid: Pid,
    pub comm: String,
    pub cpu: Cpu,
    pub start: Nanos,
    pub end: Nanos,
    /// The task that ran longest on the CPU meanwhile.
    pub held_by: Option<(Pid, String)>,
}

/// Migration counts from CPU to CPU, kept as the pairs that occurred: a machine has few
/// busy pairs, and a damaged trace can claim 65536 CPUs, whose square would not fit in
/// memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MigrationMatrix {
    /// The matrix is this many CPUs square: the model's CPUs.
    pub cpus: usize,
    /// `(from, to, count)` of each pair with migrations, in `(from, to)` order.
    pub pairs: Vec<(Cpu, Cpu, u64)>,
    /// Migrations that name a CPU beyond `cpus` (damaged CPU fields), not in the pairs.
    pub outside: u64,
}

impl MigrationMatrix {
    pub fn total(&self) -> u64 {
        self.pairs.iter().map(|&(_, _, n)| n).fold(0, u64::saturating_add)
    }

    /// The count from `from` to `to`.
    pub fn get(&self, from: Cpu, to: Cpu) -> u64 {
        self.pairs.binary_search_by_key(&(from, to), |&(f, t, _)| (f, t)).map_or(0, |i| self.pairs[i].2)
    }

    /// Rows `[from][to]` for every CPU, when there are at most `max_cpus`.
    pub fn dense(&self, max_cpus: usize) -> Option<Vec<Vec<u64>>> {
        if self.cpus > max_cpus {
            return None;
        }
        let mut rows = vec![vec![0; self.cpus]; self.cpus];
        for &(from, to, n) in &self.pairs {
            // In range: pairs only hold CPUs below `cpus` (see `migration_matrix`).
            rows[from.index()][to.index()] = n;
        }
        Some(rows)
    }

    /// Migrations between sockets and between NUMA nodes of `topology` (pairs with a CPU
    /// the topology does not place are not counted).
    pub fn crossings(&self, topology: &Topology) -> (u64, u64) {
        let mut counts = (0u64, 0u64);
        for &(from, to, n) in &self.pairs {
            let (Some(a), Some(b)) = (topology.place(from), topology.place(to)) else {
                continue;
            };
            counts.0 = counts.0.saturating_add(if a.socket != b.socket { n } else { 0 });
            counts.1 = counts.1.saturating_add(if a.node != b.node { n } else { 0 });
        }
        counts
    }
}

/// Where wakeups (not of new tasks) in the window put their task.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WakeupPlacements {
    pub total: u64,
    /// Back onto the CPU it last ran on.
    pub previous_cpu: u64,
    /// Onto the waker's CPU (another than its previous one).
    pub waker_cpu: u64,
    /// Of those, while its previous CPU was idle.
    pub waker_cpu_previous_idle: u64,
    /// Onto any other CPU.
    pub elsewhere: u64,
    /// Moved away from its idle previous CPU, then waited 100 µs or more to run.
    pub waited_previous_idle: u64,
}

impl WakeupPlacements {
    fn plus(self, other: &WakeupPlacements) -> WakeupPlacements {
        WakeupPlacements {
            total: self.total + other.total,
            previous_cpu: self.previous_cpu + other.previous_cpu,
            waker_cpu: self.waker_cpu + other.waker_cpu,
            waker_cpu_previous_idle: self.waker_cpu_previous_idle + other.waker_cpu_previous_idle,
            elsewhere: self.elsewhere + other.elsewhere,
            waited_previous_idle: self.waited_previous_idle + other.waited_previous_idle,
        }
    }
}

impl Findings {
    pub fn count(&self, kind: Kind) -> usize {
        self.incidents.iter().filter(|i| i.kind == kind).count()
    }

    pub fn episodes(&self) -> impl Iterator<Item = &Incident> {
        self.incidents.iter().filter(|i| i.is_episode())
    }

    /// The idle-while-waiting time within the spans of the first `count` episodes.
    pub fn covered(&self, count: usize) -> Nanos {
        // The running total only grows with time, so spans that overlap in time overlap
        // in it too, and the union's share is the union of the totals' ranges.
        let mut ranges: Vec<(u64, u64)> = self.episodes().take(count).map(|i| i.marks).collect();
        ranges.sort_unstable();
        let mut total = 0;
        let mut current: Option<(u64, u64)> = None;
        for (from, to) in ranges {
            current = match current {
                Some((a, b)) if from <= b => Some((a, b.max(to))),
                Some((a, b)) => {
                    total += b - a;
                    Some((from, to))
                }
                None => Some((from, to)),
            };
        }
        Nanos(total + current.map_or(0, |(a, b)| b - a))
    }
}

/// Runs every check.
pub fn check(model: &Model, request: &CheckRequest<'_>) -> Findings {
    std::thread::scope(|scope| {
        // What does not need the sweep runs on threads beside it: the sweep's last part
        // and the episodes' search each keep one core busy, and the others would idle.
        // The search needs where each task ran (for kernel threads bound to a CPU).
        let placement = scope.spawn(|| placement::Placement::of(model));
        let aside = scope.spawn(|| {
            let placements = wakeup_placements(model, request);
            (cascades::cascades(model, request), migration_matrix(model, request.window), placements)
        });
        let swept = lost::sweep(model, request.window, request.filter);
        let placement = placement.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let found = episodes::search(model, request, &swept.pieces, &placement);
        let (cascades, migrations, wakeups) = aside.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let mut incidents = found.incidents(model, request, &placement, &swept.pieces);
        incidents.sort_by(|a, b| b.lost_cpu_ns.cmp(&a.lost_cpu_ns).then(a.start.cmp(&b.start)));
        incidents.extend(cascades);
        incidents.extend(overloads(model, request, &swept.bins));
        Findings {
            incidents,
            idle_while_waiting: swept.idle_while_waiting.total,
            idle_while_waiting_unknown: swept.idle_while_waiting.unknown,
            window: request.window.len(),
            migrations,
            wakeups,
            bound_waits: found.bound_waits(model),
            diffuse: found.diffuse(request.window.len()),
        }
    })
}

fn wakeup_placements(model: &Model, request: &CheckRequest<'_>) -> WakeupPlacements {
    // Chunks of the wakeups (in time order) counted over the cores, each with its own
    // cursors; the sums do not depend on the cut.
    const CHUNKS: usize = 8;
    let count = model.wakeups().len();
    let chunk = |i: usize| count * i / CHUNKS..count * (i + 1) / CHUNKS;
    let parts = crate::cores::on_cores(CHUNKS, || (), |(), i| count_placements(model, request, chunk(i)));
    parts.into_iter().fold(WakeupPlacements::default(), |total, part| total.plus(&part))
}

fn count_placements(model: &Model, request: &CheckRequest<'_>, range: std::ops::Range<usize>) -> WakeupPlacements {
    let mut counts = WakeupPlacements::default();
    let mut cursors = cursor::SegmentCursors::new(model);
    let (wakeups, waits) = (model.wakeups(), model.waits());
    for wakeup in wakeups.iter_range(range) {
        let wait = wakeup.wait.map(|w| waits.get(w));
        let Some(time) = wakeup.waking.or(wait.map(|w| w.start)) else { continue };
        if wakeup.kind != WakeupKind::Wakeup
            || !request.window.contains(time)
            || !request.filter.accepts(model, wakeup.wakee)
        {
            continue;
        }
        counts.total += 1;
        let previous_idle = wakeup.prev_cpu.is_some_and(|prev| cursors.idle_at(prev, time) == Some(true));
        match wakeup.prev_cpu {
            Some(prev) if prev == wakeup.target_cpu => counts.previous_cpu += 1,
            _ if wakeup.waker_cpu == Some(wakeup.target_cpu) => {
                counts.waker_cpu += 1;
                counts.waker_cpu_previous_idle += u64::from(previous_idle);
            }
            _ => counts.elsewhere += 1,
        }
        // The wakee ran 100 us or more after its wakeup began (as `Model::wakeup_latency`).
        let ran = wait.filter(|w| w.end_kind == model::WaitEnd::Ran).map(|w| w.end);
        let waited = ran.is_some_and(|ran| ran.saturating_sub(time) >= Nanos(100_000));
        let moved = wakeup.prev_cpu.is_some_and(|prev| prev != wakeup.target_cpu);
        counts.waited_previous_idle += u64::from(waited && moved && previous_idle);
    }
    counts
}

/// Stretches in which runnable tasks clearly outnumber the CPUs — by two, or a quarter of
/// the CPUs if more — and no CPU idles, on a grid of 1 ms bins: a bin is overloaded when
/// it is so three quarters of the time or more; runs of such bins (across single bins that are not) are kept when they last
/// `min_overload`. The moments after a barrier's release, or a kernel thread's brief
/// preemption, do not make an overload.
fn overloads(model: &Model, request: &CheckRequest<'_>, bins: &[lost::Bin]) -> Vec<Incident> {
    let cpus = model.cpu_count();
    let bin_ns = lost::bin_ns(request.window);
    let hot = |i: usize| bins.get(i).is_some_and(|b| b.overloaded.saturating_mul(4) >= 3 * bin_ns);
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for i in (0..bins.len()).filter(|&i| hot(i)) {
        match runs.last_mut() {
            Some(run) if i <= run.1 + 1 => run.1 = i + 1,
            _ => runs.push((i, i + 1)),
        }
    }
    let at = |i: usize| (request.window.start + Nanos((i as u64).saturating_mul(bin_ns))).min(request.window.end);
    runs.into_iter()
        .filter_map(|(first, last)| {
            let (start, end) = (at(first), at(last));
            let span = end.saturating_sub(start).0;
            let most = bins[first..last].iter().map(|b| b.most).max().unwrap_or(0);
            (span >= request.min_overload.0).then(|| Incident {
                kind: Kind::Overload,
                start,
                end,
                explanation: format!(
                    "up to {most} runnable tasks for {cpus} CPUs during {}, the CPUs all busy: waiting is inevitable \
                     here",
                    ms(span)
                ),
                ..Incident::empty()
            })
        })
        .collect()
}

impl Incident {
    /// An incident with no evidence yet.
    fn empty() -> Incident {
        Incident {
            kind: Kind::Overload,
            start: Nanos(0),
            end: Nanos(0),
            cpus: Vec::new(),
            idle_cpus: Vec::new(),
            idle_cpu_count: 0,
            idle_cpus_on_average: 0.0,
            idle_cpus_at_once: 0,
            cpus_at_once: 0,
            pids: Vec::new(),
            tasks: Vec::new(),
            lost_cpu_ns: 0,
            waits: 0,
            causes: CauseMix::default(),
            pinning: Pinning::No,
            evidence: Vec::new(),
            explanation: String::new(),
            marks: (0, 0),
        }
    }
}

fn migration_matrix(model: &Model, window: Window) -> MigrationMatrix {
    let cpus = model.cpus().len();
    let mut counts: BTreeMap<(Cpu, Cpu), u64> = BTreeMap::new();
    let mut outside = 0;
    for migration in model.migrations().iter().filter(|m| window.contains(m.time)) {
        // CPU numbers come from event fields: checked, not trusted.
        if migration.from.index() < cpus && migration.to.index() < cpus {
            *counts.entry((migration.from, migration.to)).or_default() += 1;
        } else {
            outside += 1;
        }
    }
    MigrationMatrix { cpus, pairs: counts.into_iter().map(|((from, to), n)| (from, to, n)).collect(), outside }
}

/// A duration in milliseconds, for explanations.
fn ms(ns: u64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}
