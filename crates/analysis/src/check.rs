//! Scheduler pathologies found automatically (`schedlens check`): located, ranked
//! incidents with the evidence for each, where the schedgraph paper's authors zoomed in
//! by hand.
//!
//! Every wait in a runqueue longer than the threshold is examined: the time within it
//! during which some other CPU sat idle is CPU time the machine lost. Such a wait is
//! classed by its cause:
//! - `kthread-preemption`: a kernel thread preempted the task (the straggler pattern);
//! - `wakeup-placement`: the wakeup put the task on the waker's busy CPU while the task's
//!   previous CPU was idle (the pattern Linux commit d8fcb81f1acf fixed);
//! - `work-conservation`: any other wait while a CPU idled.
//!
//! `migration-cascade` reports chains of migrations where each moved task displaced the
//! task running where it arrived, which then moved on within a millisecond (the paper's
//! §3.3 chain). `overload` reports stretches with more runnable tasks than CPUs: context,
//! not a bug.
//! Affinity is not in a trace: a task that only ever ran on one CPU may have been pinned
//! there, and its incidents say so instead of blaming the scheduler. Incidents are ranked
//! by lost CPU time; the summary gives the time a task waited while a core idled, over
//! all waits however short, and the CPU-to-CPU migration counts.

use crate::occupancy::{IdleWhileWaitingSum, sweep_in_parts};
use crate::window::{TaskFilter, Window};
use model::{Cpu, Migration, Model, Nanos, Pid, SegmentEnd, TaskId, Topology, WaitCause, WaitEnd, WakeupKind};
use std::collections::{BTreeMap, HashMap, HashSet};

/// What the checks look for.
#[derive(Clone, Debug)]
pub struct CheckRequest<'a> {
    pub window: Window,
    pub filter: &'a TaskFilter,
    /// Incidents shorter than this are left out.
    pub min_duration: Nanos,
}

/// The classes of incident.
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

    /// The kind of a name given by [`Kind::name`].
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether incidents of this kind lose CPU time (waits while a core idles); the
    /// others (cascades, overload) are measured by their length.
    pub fn loses_cpu_time(self) -> bool {
        !matches!(self, Kind::MigrationCascade | Kind::Overload)
    }
}

/// One incident and its evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incident {
    pub kind: Kind,
    pub start: Nanos,
    pub end: Nanos,
    /// For waits: the CPU the task waited on, then the CPUs that idled meanwhile (most
    /// idle first, at most 8). For overload: none.
    pub cpus: Vec<Cpu>,
    /// For waits: the waiting task (after the preempting kernel thread, if any).
    pub pids: Vec<Pid>,
    /// CPU time lost: how long the task waited while another CPU idled.
    pub lost_cpu_ns: u64,
    /// The task only ever ran on one CPU: it may have been pinned there.
    pub possibly_pinned: bool,
    pub explanation: String,
}

/// The checks' findings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// Ranked: most lost CPU time first, overload last.
    pub incidents: Vec<Incident>,
    /// Time during which some task waited while some CPU idled (all waits).
    pub idle_while_waiting: Nanos,
    /// The window's length.
    pub window: Nanos,
    /// Migrations between CPUs within the window.
    pub migrations: MigrationMatrix,
    pub wakeups: WakeupPlacements,
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

impl Findings {
    pub fn count(&self, kind: Kind) -> usize {
        self.incidents.iter().filter(|i| i.kind == kind).count()
    }
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

/// Names of kernel threads that preempt application tasks.
const KERNEL_THREADS: [&str; 10] =
    ["kworker", "ksoftirqd", "kcompactd", "migration", "rcu_", "kswapd", "khugepaged", "watchdog", "irq/", "kthreadd"];

/// Runs every check.
pub fn check(model: &Model, request: &CheckRequest<'_>) -> Findings {
    let pinned = single_cpu_tasks(model);
    let wakeup_of_wait = wakeups_by_wait(model);
    let waits =
        (0..model.waits().len()).filter_map(|index| examine_wait(model, request, index, &wakeup_of_wait, &pinned));
    let mut incidents = merge_neighbours(waits.collect());
    incidents.sort_by(|a, b| b.lost_cpu_ns.cmp(&a.lost_cpu_ns).then(a.start.cmp(&b.start)));
    incidents.extend(cascades(model, request));
    let (overloaded, idle_while_waiting) = sweep_for_overload(model, request);
    incidents.extend(overloads(model, request, overloaded));
    Findings {
        incidents,
        idle_while_waiting,
        window: request.window.len(),
        migrations: migration_matrix(model, request.window),
        wakeups: wakeup_placements(model, request),
    }
}

fn wakeup_placements(model: &Model, request: &CheckRequest<'_>) -> WakeupPlacements {
    let mut counts = WakeupPlacements::default();
    for wakeup in model.wakeups().iter() {
        let Some(time) = wakeup.waking.or_else(|| model.wakeup_enqueued(&wakeup)) else { continue };
        if wakeup.kind != WakeupKind::Wakeup
            || !request.window.contains(time)
            || !request.filter.accepts(model, wakeup.wakee)
        {
            continue;
        }
        counts.total += 1;
        let previous_idle = wakeup.prev_cpu.is_some_and(|prev| model.cpu_idle_at(prev, time) == Some(true));
        match wakeup.prev_cpu {
            Some(prev) if prev == wakeup.target_cpu => counts.previous_cpu += 1,
            _ if wakeup.waker_cpu == Some(wakeup.target_cpu) => {
                counts.waker_cpu += 1;
                counts.waker_cpu_previous_idle += u64::from(previous_idle);
            }
            _ => counts.elsewhere += 1,
        }
        let waited = model.wakeup_latency(&wakeup).is_some_and(|latency| latency >= Nanos(100_000));
        let moved = wakeup.prev_cpu.is_some_and(|prev| prev != wakeup.target_cpu);
        counts.waited_previous_idle += u64::from(waited && moved && previous_idle);
    }
    counts
}

/// Joins incidents of one kind on the same CPU that follow each other within a
/// millisecond (tasks taking turns waiting behind each other), or overlap.
fn merge_neighbours(mut incidents: Vec<Incident>) -> Vec<Incident> {
    const GAP: Nanos = Nanos(1_000_000);
    incidents.sort_by(|a, b| (a.kind, a.cpus.first(), a.start).cmp(&(b.kind, b.cpus.first(), b.start)));
    let mut merged: Vec<(Incident, usize)> = Vec::new();
    for incident in incidents {
        match merged.last_mut() {
            Some((last, count))
                if last.kind == incident.kind
                    && last.cpus.first() == incident.cpus.first()
                    && incident.start <= last.end + GAP =>
            {
                last.end = last.end.max(incident.end);
                last.lost_cpu_ns = last.lost_cpu_ns.saturating_add(incident.lost_cpu_ns);
                last.possibly_pinned &= incident.possibly_pinned;
                for pid in incident.pids {
                    if !last.pids.contains(&pid) {
                        last.pids.push(pid);
                    }
                }
                *count += 1;
            }
            _ => merged.push((incident, 1)),
        }
    }
    merged
        .into_iter()
        .map(|(mut incident, count)| {
            if count > 1 {
                incident.explanation.push_str(&format!(
                    "; then {} more waits in a row on that CPU ({} tasks), {} lost in all",
                    count - 1,
                    incident.pids.len(),
                    ms(incident.lost_cpu_ns)
                ));
            }
            incident
        })
        .collect()
}

/// Per task, whether all its runs were on one CPU.
fn single_cpu_tasks(model: &Model) -> Vec<bool> {
    let mut only: Vec<Option<Option<Cpu>>> = vec![None; model.tasks().len()];
    for timeline in model.cpus() {
        for task in timeline.segments().tasks() {
            // In range: the model creates a task before any table refers to it.
            let slot = &mut only[task.index()];
            *slot = match *slot {
                None => Some(Some(timeline.cpu())),
                Some(Some(cpu)) if cpu == timeline.cpu() => Some(Some(cpu)),
                _ => Some(None),
            };
        }
    }
    only.into_iter().map(|o| matches!(o, Some(Some(_)))).collect()
}

/// For each wait, the wakeup that began it.
fn wakeups_by_wait(model: &Model) -> Vec<Option<usize>> {
    let mut by_wait = vec![None; model.waits().len()];
    let wakeups = model.wakeups();
    for index in 0..wakeups.len() {
        if let Some(wait) = wakeups.wait(index) {
            // In range: a wakeup's wait is a row the model pushed to `waits` before.
            by_wait[wait as usize] = Some(index);
        }
    }
    by_wait
}

fn examine_wait(
    model: &Model,
    request: &CheckRequest<'_>,
    index: usize,
    wakeup_of_wait: &[Option<usize>],
    pinned: &[bool],
) -> Option<Incident> {
    let wait = model.waits().get(index);
    let (start, end) = request.window.clip(wait.start, wait.end);
    // Shorter waits count where several in a row make one incident (see merge_neighbours).
    let floor = Nanos(request.min_duration.0 / 4);
    if end.saturating_sub(start) < floor || wait.end_kind != WaitEnd::Ran || !request.filter.accepts(model, wait.task) {
        return None;
    }
    let idle = IdleOthers::during(model, wait.ran_on, start, end);
    if idle.lost < floor || idle.lost == Nanos(0) {
        return None;
    }
    let pid = model.tasks().get(wait.task).pid;
    let comm = model.comm_at(wait.task, start);
    let preempter = (wait.cause == WaitCause::Preempted).then(|| preempting_task(model, wait.ran_on, wait.start));
    let kernel_preempter = preempter.flatten().filter(|&t| is_kernel_thread(model.comm_at(t, wait.start)));
    let wakeup = wakeup_of_wait[index].map(|w| model.wakeups().get(w));
    let misplaced = wakeup.filter(|w| {
        w.kind == WakeupKind::Wakeup
            && w.waker_cpu == Some(w.target_cpu)
            && w.prev_cpu.is_some_and(|prev| prev != w.target_cpu && model.cpu_idle_at(prev, wait.start) == Some(true))
    });
    let possibly_pinned = pinned.get(wait.task.index()).copied().unwrap_or(false);
    let lost = idle.lost.0;
    let waited = ms(end.saturating_sub(start).0);
    let mut cpus = vec![wait.ran_on];
    cpus.extend(&idle.cpus);
    let (kind, mut pids, mut explanation) = if let Some(kthread) = kernel_preempter {
        let name = model.comm_at(kthread, wait.start);
        let text = format!(
            "{comm}:{pid} was preempted on CPU {} by kernel thread {name} and waited {waited} while {} idled",
            wait.ran_on.0,
            idle.describe()
        );
        (Kind::KthreadPreemption, vec![model.tasks().get(kthread).pid, pid], text)
    } else if let Some(wakeup) = misplaced {
        let prev = wakeup.prev_cpu.map_or(0, |c| c.0);
        let text = format!(
            "{comm}:{pid} was woken onto the waker's busy CPU {} while its previous CPU {prev} was idle; it waited {waited}",
            wakeup.target_cpu.0
        );
        (Kind::WakeupPlacement, vec![pid], text)
    } else {
        let text =
            format!("{comm}:{pid} waited {waited} in CPU {}'s runqueue while {} idled", wait.ran_on.0, idle.describe());
        (Kind::WorkConservation, vec![pid], text)
    };
    if possibly_pinned {
        explanation.push_str(&format!(" (it only ever ran on CPU {}: possibly pinned there)", wait.ran_on.0));
    }
    pids.dedup();
    Some(Incident { kind, start, end, cpus, pids, lost_cpu_ns: lost, possibly_pinned, explanation })
}

/// The task that a switch at `time` on `cpu` started.
fn preempting_task(model: &Model, cpu: Cpu, time: Nanos) -> Option<TaskId> {
    let segments = model.cpu(cpu)?.segments();
    let range = segments.overlapping(time, time + Nanos(1));
    segments.iter_range(range).find(|s| s.start == time && s.task != TaskId::IDLE).map(|s| s.task)
}

fn is_kernel_thread(comm: &str) -> bool {
    KERNEL_THREADS.iter().any(|prefix| comm.starts_with(prefix))
}

/// Other CPUs' idle time during a wait.
struct IdleOthers {
    /// Time during which at least one other CPU was idle.
    lost: Nanos,
    /// The CPUs that idled, most idle first (at most 8).
    cpus: Vec<Cpu>,
    count: usize,
}

impl IdleOthers {
    fn during(model: &Model, busy: Cpu, start: Nanos, end: Nanos) -> IdleOthers {
        let mut intervals: Vec<(Nanos, Nanos)> = Vec::new();
        let mut per_cpu: Vec<(Nanos, Cpu)> = Vec::new();
        for timeline in model.cpus().iter().filter(|t| t.cpu() != busy) {
            let segments = &timeline.segments();
            let mut idle = Nanos(0);
            for segment in segments.iter_range(segments.overlapping(start, end)) {
                if segment.task == TaskId::IDLE {
                    let (s, e) = (segment.start.max(start), segment.end.min(end));
                    idle += e.saturating_sub(s);
                    intervals.push((s, e));
                }
            }
            if idle > Nanos(0) {
                per_cpu.push((idle, timeline.cpu()));
            }
        }
        per_cpu.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let count = per_cpu.len();
        IdleOthers { lost: union_length(intervals), cpus: per_cpu.into_iter().take(8).map(|(_, c)| c).collect(), count }
    }

    fn describe(&self) -> String {
        match self.cpus.as_slice() {
            [] => "no other CPU".into(),
            [one] => format!("CPU {}", one.0),
            _ => format!("{} other CPUs", self.count),
        }
    }
}

fn union_length(mut intervals: Vec<(Nanos, Nanos)>) -> Nanos {
    intervals.sort_unstable();
    let mut total = Nanos(0);
    let mut current: Option<(Nanos, Nanos)> = None;
    for (s, e) in intervals {
        current = match current {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce.saturating_sub(cs);
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = current {
        total += ce.saturating_sub(cs);
    }
    total
}

/// Chains of three or more migrations in which each moved task displaced the one running
/// where it arrived, and that one moved next, within a millisecond.
fn cascades(model: &Model, request: &CheckRequest<'_>) -> Vec<Incident> {
    const WITHIN: Nanos = Nanos(1_000_000);
    let migrations = model.migrations();
    let mut by_task: HashMap<TaskId, Vec<usize>> = HashMap::new();
    for index in 0..migrations.len() {
        by_task.entry(migrations.get(index).task).or_default().push(index);
    }
    // The migration that follows `index` in a chain, if any.
    let next = |index: usize| -> Option<usize> {
        let Migration { time, task, to, .. } = migrations.get(index);
        let segments = model.cpu(to)?.segments();
        let displaced = segments.iter_range(segments.overlapping(time, time + Nanos(1))).find(|s| {
            s.task != task && s.task != TaskId::IDLE && s.end_kind == SegmentEnd::Preempted && s.end <= time + WITHIN
        })?;
        by_task.get(&displaced.task)?.iter().copied().find(|&j| {
            migrations.get(j).from == to && migrations.time(j) >= time && migrations.time(j) <= time + WITHIN
        })
    };
    let mut in_chain = vec![false; migrations.len()];
    let mut incidents = Vec::new();
    for first in (0..migrations.len()).filter(|&i| request.window.contains(migrations.time(i))) {
        if in_chain[first] {
            continue;
        }
        let mut chain = vec![first];
        // A set beside the chain: a long chain must not cost its length squared.
        let mut members = HashSet::from([first]);
        while let Some(following) = next(*chain.last().expect("a chain")).filter(|&j| members.insert(j)) {
            chain.push(following);
        }
        if chain.len() < 3 || !request.filter.accepts(model, migrations.get(first).task) {
            continue;
        }
        chain.iter().for_each(|&i| in_chain[i] = true);
        incidents.push(cascade_incident(model, &chain));
    }
    incidents
}

fn cascade_incident(model: &Model, chain: &[usize]) -> Incident {
    let migrations = model.migrations();
    let (start, end) = (migrations.time(chain[0]), migrations.time(*chain.last().expect("a chain")));
    let mut cpus = vec![migrations.get(chain[0]).from];
    cpus.extend(chain.iter().map(|&i| migrations.get(i).to));
    let name = |i: usize| {
        let task = migrations.get(i).task;
        format!("{}:{}", model.comm_at(task, migrations.time(i)), model.tasks().get(task).pid)
    };
    let steps: Vec<String> = chain
        .iter()
        .map(|&i| format!("{} moved CPU {} -> {}", name(i), migrations.get(i).from.0, migrations.get(i).to.0))
        .collect();
    Incident {
        kind: Kind::MigrationCascade,
        start,
        end,
        cpus,
        pids: chain.iter().map(|&i| model.tasks().get(migrations.get(i).task).pid).collect(),
        lost_cpu_ns: 0,
        possibly_pinned: false,
        explanation: format!(
            "{} migrations in {:.0} us, each displacing the next: {}",
            chain.len(),
            end.saturating_sub(start).0 as f64 / 1e3,
            steps.join(", ")
        ),
    }
}

/// Stretches in which runnable tasks clearly outnumber the CPUs — by two, or an eighth
/// of the CPUs if more — joined across dips under a millisecond (a barrier's tasks come
/// and go), kept when it lasts the threshold and at least a quarter of it is overloaded: brief
/// kernel-thread preemptions alone do not make an overload.
/// A stretch of overload: start, end, most runnable tasks, time actually overloaded.
type Overloaded = (Nanos, Nanos, u32, Nanos);

/// Dips shorter than this do not end an overload.
const DIP: Nanos = Nanos(1_000_000);

/// One sweep, cut into parts on the machine's cores, for the overloaded stretches and the
/// time a task waited while a CPU idled.
fn sweep_for_overload(model: &Model, request: &CheckRequest<'_>) -> (Vec<Overloaded>, Nanos) {
    let threshold = model.cpu_count().saturating_add((model.cpu_count() / 8).max(2));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let start = |_| (Vec::<Overloaded>::new(), IdleWhileWaitingSum::default());
    let parts = sweep_in_parts(model, request.window, request.filter, threads, start, |(stretches, sum), s, e, o| {
        sum.add(s, e, o);
        let runnable = o.running.saturating_add(o.waiting);
        if runnable >= threshold {
            extend_overload(stretches, (s, e, runnable, e.saturating_sub(s)));
        }
    });
    let mut stretches = Vec::new();
    let mut sum = IdleWhileWaitingSum::default();
    for (part, part_sum) in parts {
        part.into_iter().for_each(|stretch| extend_overload(&mut stretches, stretch));
        sum = sum.then(part_sum);
    }
    (stretches, sum.finish().total)
}

/// Adds a stretch, joining it to the last one across a short dip.
fn extend_overload(stretches: &mut Vec<Overloaded>, (start, end, most, overloaded): Overloaded) {
    match stretches.last_mut() {
        Some(last) if start.saturating_sub(last.1) < DIP => {
            last.1 = end;
            last.2 = last.2.max(most);
            last.3 += overloaded;
        }
        _ => stretches.push((start, end, most, overloaded)),
    }
}

fn overloads(model: &Model, request: &CheckRequest<'_>, stretches: Vec<Overloaded>) -> Vec<Incident> {
    let cpus = model.cpu_count();
    let kept = |&(start, end, _, overloaded): &(Nanos, Nanos, u32, Nanos)| {
        end.saturating_sub(start) >= request.min_duration
            && overloaded.0.saturating_mul(4) >= end.saturating_sub(start).0
    };
    stretches
        .into_iter()
        .filter(kept)
        .map(|(start, end, most, _)| Incident {
            kind: Kind::Overload,
            start,
            end,
            cpus: Vec::new(),
            pids: Vec::new(),
            lost_cpu_ns: 0,
            possibly_pinned: false,
            explanation: format!(
                "up to {most} runnable tasks for {cpus} CPUs during {}: waiting is inevitable here",
                ms(end.saturating_sub(start).0)
            ),
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_of_overlapping_intervals() {
        let n = |a, b| (Nanos(a), Nanos(b));
        assert_eq!(union_length(vec![n(0, 10), n(5, 20), n(30, 40)]), Nanos(30));
        assert_eq!(union_length(Vec::new()), Nanos(0));
    }
}
