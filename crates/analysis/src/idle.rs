//! Whether a core idled while a task waited: for any stretch of time and the CPUs a task
//! was allowed on, how long an allowed CPU idled (the scheduler's cost), how long only
//! CPUs outside the set idled (the cost of pinning), how long every CPU was busy
//! (contention) and how long that is unknown. The latency distributions and the critical
//! path ask it once per wait, millions of times on a big trace, so the index is built once
//! from the model by one sweep of every CPU's run segments, and answers the common
//! questions (every CPU; every CPU but the one waited on) with binary searches.
//!
//! A CPU's state is known where one of its run segments covers the time, as in
//! [`crate::occupancy`] (`Occupancy::known`): before its first event, after its last and
//! in uncertain stretches (lost events, unrecorded switches) it is unknown, and a share
//! that depends on it is counted unknown rather than guessed.

use model::{Cpu, Model, Nanos, Segments, TaskId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The CPUs a task could have run on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Allowed<'a> {
    /// Every CPU of the trace.
    Every,
    /// Every CPU but one (for instance the CPU whose runqueue the task waits on).
    EveryBut(Cpu),
    /// These CPUs; CPUs the trace does not have are left out.
    Only(&'a [Cpu]),
}

/// How a stretch of time divides, for a set of allowed CPUs. The four parts sum to the
/// stretch's length.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct IdleShares {
    /// At least one allowed CPU idled.
    pub allowed_idle_ns: u64,
    /// Every allowed CPU was known to be busy, and some CPU outside the set idled.
    pub other_idle_ns: u64,
    /// Every CPU was known to be busy.
    pub busy_ns: u64,
    /// No allowed CPU was known to idle, and some CPU that decides the rest was unknown.
    pub unknown_ns: u64,
}

impl std::ops::Add for IdleShares {
    type Output = IdleShares;

    /// The shares of two stretches together.
    fn add(self, other: IdleShares) -> IdleShares {
        IdleShares {
            allowed_idle_ns: self.allowed_idle_ns + other.allowed_idle_ns,
            other_idle_ns: self.other_idle_ns + other.other_idle_ns,
            busy_ns: self.busy_ns + other.busy_ns,
            unknown_ns: self.unknown_ns + other.unknown_ns,
        }
    }
}

impl IdleShares {
    /// The stretch's length.
    pub fn total_ns(&self) -> u64 {
        self.allowed_idle_ns + self.other_idle_ns + self.busy_ns + self.unknown_ns
    }
}

/// Disjoint stretches of time in order, with the summed lengths before each, so the time
/// they cover in any window is two binary searches away.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Stretches {
    starts: Vec<Nanos>,
    ends: Vec<Nanos>,
    /// The summed lengths of the stretches before each one.
    before_ns: Vec<u64>,
    total_ns: u64,
}

impl Stretches {
    /// Appends `[start, end)`, no earlier than the last one's end (joined to it when
    /// they touch).
    fn push(&mut self, start: Nanos, end: Nanos) {
        if end <= start {
            return;
        }
        match self.ends.last_mut() {
            Some(last) if *last == start => *last = end,
            _ => {
                self.starts.push(start);
                self.ends.push(end);
                self.before_ns.push(self.total_ns);
            }
        }
        self.total_ns += end.0 - start.0;
    }

    /// The time the stretches cover in `[start, end)`.
    fn covered_ns(&self, start: Nanos, end: Nanos) -> u64 {
        if end <= start {
            return 0;
        }
        let first = self.ends.partition_point(|&e| e <= start);
        let last = self.starts.partition_point(|&s| s < end);
        if first >= last {
            return 0;
        }
        let total_before = |index: usize| self.before_ns.get(index).copied().unwrap_or(self.total_ns);
        let whole = total_before(last) - total_before(first);
        let cut_head = start.0.saturating_sub(self.starts[first].0);
        let cut_tail = self.ends[last - 1].0.saturating_sub(end.0);
        whole - cut_head - cut_tail
    }

    /// Appends stretches that begin no earlier than the last one's end.
    fn append(&mut self, later: &Stretches) {
        for (&start, &end) in later.starts.iter().zip(&later.ends) {
            self.push(start, end);
        }
    }

    fn heap_bytes(&self) -> usize {
        (self.starts.capacity() + self.ends.capacity() + self.before_ns.capacity()) * 8
    }
}

/// A CPU's state from some time on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum CpuState {
    Idle,
    Busy,
    Unknown,
}

/// The index: built once per model (see the module comment).
pub struct IdleIndex<'m> {
    model: &'m Model,
    /// Where at least one CPU idled.
    any_idle: Stretches,
    /// Where no CPU idled and every CPU was known.
    all_busy: Stretches,
    /// Per CPU: where it was the only CPU idling.
    sole_idle: Vec<Stretches>,
    /// Per CPU: where it was the only CPU idling and every CPU was known.
    sole_idle_all_known: Vec<Stretches>,
}

impl<'m> IdleIndex<'m> {
    /// Sweeps every CPU's segments once, in time order: in slices of time on every core
    /// (each from every CPU's state at the slice's start), the slices' stretches then put
    /// end to end, joined where they touch. That is the index one sweep would make.
    pub fn new(model: &'m Model) -> IdleIndex<'m> {
        Self::in_slices(model, crate::cores::available())
    }

    /// The index, swept in `slices` slices of time of about equal length.
    fn in_slices(model: &'m Model, slices: usize) -> IdleIndex<'m> {
        let (start, span) = (model.start().0, model.end().0.saturating_sub(model.start().0));
        let slices = slices.clamp(1, span.max(1) as usize);
        // Where each slice begins (the first: before everything).
        let starts: Vec<Option<Nanos>> = (0..slices)
            .map(|k| (k > 0).then(|| Nanos(start + (u128::from(span) * k as u128 / slices as u128) as u64)))
            .collect();
        let parts = crate::cores::on_cores(
            slices,
            || (),
            |_, k| Self::sweep(model, starts[k], starts.get(k + 1).copied().flatten()),
        );
        let mut parts = parts.into_iter();
        let mut index = parts.next().unwrap_or_else(|| Self::sweep(model, None, None));
        for part in parts {
            index.append(part);
        }
        index
    }

    /// The index of `[from, until)` (`None`: from before the first event, until after the
    /// last): the machine's state at `from` is every change up to it, then each change
    /// before `until` is swept in time order.
    fn sweep(model: &'m Model, from: Option<Nanos>, until: Option<Nanos>) -> IdleIndex<'m> {
        let cpus = model.cpus().len();
        let mut index = IdleIndex {
            model,
            any_idle: Stretches::default(),
            all_busy: Stretches::default(),
            sole_idle: vec![Stretches::default(); cpus],
            sole_idle_all_known: vec![Stretches::default(); cpus],
        };
        let mut machine = Machine { states: vec![CpuState::Unknown; cpus], idle: 0, unknown: cpus, idle_xor: 0 };
        let mut changes: Vec<StateChanges<'m>> =
            model.cpus().iter().map(|timeline| StateChanges::from(timeline.segments(), from)).collect();
        let mut next: BinaryHeap<Reverse<(Nanos, usize)>> = BinaryHeap::with_capacity(cpus);
        let mut pending: Vec<Option<CpuState>> = vec![None; cpus];
        for (cpu, cpu_changes) in changes.iter_mut().enumerate() {
            let (state, later) = cpu_changes.in_force_at(from);
            machine.set(cpu, state);
            if let Some((time, state)) = later {
                pending[cpu] = Some(state);
                next.push(Reverse((time, cpu)));
            }
        }
        let until = until.unwrap_or(Nanos(u64::MAX));
        if let (Some(from), Some(&Reverse((first, _)))) = (from, next.peek()) {
            index.record(&machine, from, first.min(until));
        }
        while let Some(&Reverse((time, _))) = next.peek() {
            if time >= until {
                break;
            }
            while let Some(&Reverse((at, cpu))) = next.peek() {
                if at != time {
                    break;
                }
                next.pop();
                if let Some(state) = pending[cpu].take() {
                    machine.set(cpu, state);
                }
                if let Some((later, state)) = changes[cpu].next() {
                    pending[cpu] = Some(state);
                    next.push(Reverse((later, cpu)));
                }
            }
            if let Some(&Reverse((later, _))) = next.peek() {
                index.record(&machine, time, later.min(until));
            }
        }
        index
    }

    /// Puts the stretches of the index of the next slice of time after this one's.
    fn append(&mut self, next: IdleIndex<'m>) {
        self.any_idle.append(&next.any_idle);
        self.all_busy.append(&next.all_busy);
        for (ours, theirs) in self.sole_idle.iter_mut().zip(&next.sole_idle) {
            ours.append(theirs);
        }
        for (ours, theirs) in self.sole_idle_all_known.iter_mut().zip(&next.sole_idle_all_known) {
            ours.append(theirs);
        }
    }

    /// Files the machine's state during `[start, end)`.
    fn record(&mut self, machine: &Machine, start: Nanos, end: Nanos) {
        if machine.idle > 0 {
            self.any_idle.push(start, end);
        } else if machine.unknown == 0 {
            self.all_busy.push(start, end);
        }
        if machine.idle == 1 {
            // In range: the only idle CPU is one of the machine's.
            let cpu = machine.idle_xor;
            self.sole_idle[cpu].push(start, end);
            if machine.unknown == 0 {
                self.sole_idle_all_known[cpu].push(start, end);
            }
        }
    }

    /// How `[start, end)` divides for a task allowed on `allowed`.
    pub fn shares(&self, start: Nanos, end: Nanos, allowed: Allowed<'_>) -> IdleShares {
        if end <= start {
            return IdleShares::default();
        }
        let length = end.0 - start.0;
        let busy_ns = self.all_busy.covered_ns(start, end);
        let mut shares = match allowed {
            Allowed::Every => {
                IdleShares { allowed_idle_ns: self.any_idle.covered_ns(start, end), busy_ns, ..Default::default() }
            }
            Allowed::EveryBut(cpu) => match self.sole_idle.get(cpu.index()) {
                Some(sole) => IdleShares {
                    allowed_idle_ns: self.any_idle.covered_ns(start, end) - sole.covered_ns(start, end),
                    other_idle_ns: self.sole_idle_all_known[cpu.index()].covered_ns(start, end),
                    busy_ns,
                    ..Default::default()
                },
                None => return self.shares(start, end, Allowed::Every),
            },
            Allowed::Only(cpus) => self.shares_of_set(start, end, cpus),
        };
        shares.unknown_ns = length - shares.allowed_idle_ns - shares.other_idle_ns - shares.busy_ns;
        shares
    }

    /// How long some CPU of `allowed` idled in `[start, end)`: the `allowed_idle_ns` of
    /// [`IdleIndex::shares`] alone, which for every CPU (or all but one) is half of its
    /// searches.
    pub fn allowed_idle_ns(&self, start: Nanos, end: Nanos, allowed: Allowed<'_>) -> u64 {
        if end <= start {
            return 0;
        }
        match allowed {
            Allowed::Every => self.any_idle.covered_ns(start, end),
            Allowed::EveryBut(cpu) => match self.sole_idle.get(cpu.index()) {
                Some(sole) => self.any_idle.covered_ns(start, end) - sole.covered_ns(start, end),
                None => self.any_idle.covered_ns(start, end),
            },
            Allowed::Only(cpus) => self.shares_of_set(start, end, cpus).allowed_idle_ns,
        }
    }

    /// [`IdleIndex::shares`] for a set of CPUs (`unknown_ns` left for the caller): the
    /// stretches where an allowed CPU idled or was unknown come from their segments; in
    /// the rest every allowed CPU was busy, so the machine's state there is the others'.
    fn shares_of_set(&self, start: Nanos, end: Nanos, cpus: &[Cpu]) -> IdleShares {
        let mut idle = Vec::new();
        let mut not_busy = Vec::new();
        let mut seen = vec![false; self.model.cpus().len()];
        for &cpu in cpus {
            let Some(timeline) = self.model.cpu(cpu) else { continue };
            if std::mem::replace(&mut seen[cpu.index()], true) {
                continue;
            }
            let mut known_until = start;
            let segments = timeline.segments();
            for segment in segments.iter_range(segments.overlapping(start, end)) {
                let (from, to) = (segment.start.max(start), segment.end.min(end));
                if from > known_until {
                    not_busy.push((known_until, from));
                }
                if segment.task == TaskId::IDLE {
                    idle.push((from, to));
                    not_busy.push((from, to));
                }
                known_until = known_until.max(to);
            }
            if known_until < end {
                not_busy.push((known_until, end));
            }
        }
        let idle = union(idle);
        let not_busy = union(not_busy);
        let allowed_idle_ns = idle.iter().map(|&(from, to)| to.0 - from.0).sum();
        let (mut other_idle_ns, mut busy_ns) = (0, 0);
        let mut gap_start = start;
        for &(from, to) in not_busy.iter().chain(std::iter::once(&(end, end))) {
            other_idle_ns += self.any_idle.covered_ns(gap_start, from);
            busy_ns += self.all_busy.covered_ns(gap_start, from);
            gap_start = to;
        }
        IdleShares { allowed_idle_ns, other_idle_ns, busy_ns, unknown_ns: 0 }
    }

    /// Of `allowed`, the CPU that idled longest in `[start, end)` and for how long (the
    /// lowest-numbered of equals), if any idled. A pass over each allowed CPU's segments
    /// in the stretch: for reporting a few stretches, not for every wait.
    pub fn longest_idle(&self, start: Nanos, end: Nanos, allowed: Allowed<'_>) -> Option<(Cpu, Nanos)> {
        let idle_of = |cpu: Cpu| -> Option<(Cpu, Nanos)> {
            let segments = self.model.cpu(cpu)?.segments();
            let idle_ns: u64 = segments
                .iter_range(segments.overlapping(start, end))
                .filter(|segment| segment.task == TaskId::IDLE)
                .map(|segment| segment.end.min(end).0.saturating_sub(segment.start.max(start).0))
                .sum();
            (idle_ns > 0).then_some((cpu, Nanos(idle_ns)))
        };
        let every = || self.model.cpus().iter().map(|timeline| timeline.cpu());
        let candidates: Vec<Cpu> = match allowed {
            Allowed::Every => every().collect(),
            Allowed::EveryBut(but) => every().filter(|&cpu| cpu != but).collect(),
            Allowed::Only(cpus) => cpus.to_vec(),
        };
        candidates.into_iter().filter_map(idle_of).fold(None, |best: Option<(Cpu, Nanos)>, (cpu, idle)| match best {
            Some((best_cpu, best_idle)) if best_idle > idle || (best_idle == idle && best_cpu < cpu) => best,
            _ => Some((cpu, idle)),
        })
    }

    /// Bytes the index holds.
    pub fn heap_bytes(&self) -> usize {
        let per_cpu: usize = self.sole_idle.iter().chain(&self.sole_idle_all_known).map(Stretches::heap_bytes).sum();
        self.any_idle.heap_bytes() + self.all_busy.heap_bytes() + per_cpu
    }
}

/// Merges stretches into disjoint ones in time order.
fn union(mut stretches: Vec<(Nanos, Nanos)>) -> Vec<(Nanos, Nanos)> {
    stretches.retain(|&(from, to)| from < to);
    stretches.sort_unstable();
    let mut merged: Vec<(Nanos, Nanos)> = Vec::with_capacity(stretches.len());
    for (from, to) in stretches {
        match merged.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => merged.push((from, to)),
        }
    }
    merged
}

/// Every CPU's state during the sweep, and the counts the index files.
struct Machine {
    states: Vec<CpuState>,
    idle: usize,
    unknown: usize,
    /// The idle CPUs' numbers xor-ed together: the idle CPU itself when only one idles.
    idle_xor: usize,
}

impl Machine {
    fn set(&mut self, cpu: usize, state: CpuState) {
        let old = std::mem::replace(&mut self.states[cpu], state);
        self.count(cpu, old, false);
        self.count(cpu, state, true);
    }

    fn count(&mut self, cpu: usize, state: CpuState, add: bool) {
        let step = |count: &mut usize| if add { *count += 1 } else { *count -= 1 };
        match state {
            CpuState::Idle => {
                step(&mut self.idle);
                self.idle_xor ^= cpu;
            }
            CpuState::Unknown => step(&mut self.unknown),
            CpuState::Busy => {}
        }
    }
}

/// One CPU's changes of state in time order, from its segments: idle or busy within a
/// segment, unknown in the gaps between them and after the last; consecutive equal
/// states are one.
struct StateChanges<'m> {
    segments: model::SegmentIter<'m>,
    /// A change found but not handed out yet.
    queued: Option<(Nanos, CpuState)>,
    /// The state last handed out, and where the last segment ended.
    current: CpuState,
    last_end: Option<Nanos>,
}

impl<'m> StateChanges<'m> {
    /// The changes from the segment under way at `from` on (`None`: from the first).
    fn from(segments: &'m Segments, from: Option<Nanos>) -> StateChanges<'m> {
        let first = from.map_or(0, |from| segments.first_starting_after(from).saturating_sub(1));
        // As if the segments before `first` had been handed out: the last one's state in
        // force until its end.
        let (current, last_end) = match first.checked_sub(1) {
            Some(before) => (state_of(segments.task(before)), Some(segments.end(before))),
            None => (CpuState::Unknown, None),
        };
        StateChanges { segments: segments.iter_range(first..segments.len()), queued: None, current, last_end }
    }

    /// The state in force at `from` (every change up to it; before the first, unknown),
    /// and the first change after it.
    fn in_force_at(&mut self, from: Option<Nanos>) -> (CpuState, Option<(Nanos, CpuState)>) {
        let Some(from) = from else { return (CpuState::Unknown, self.next()) };
        let mut state = self.current;
        loop {
            match self.next() {
                Some((time, changed)) if time <= from => state = changed,
                later => return (state, later),
            }
        }
    }

    /// The next change, skipping changes to the state already in force.
    fn next(&mut self) -> Option<(Nanos, CpuState)> {
        loop {
            let (time, state) = self.next_raw()?;
            if state != self.current {
                self.current = state;
                return Some((time, state));
            }
        }
    }

    fn next_raw(&mut self) -> Option<(Nanos, CpuState)> {
        if let Some(queued) = self.queued.take() {
            return Some(queued);
        }
        let Some(segment) = self.segments.next() else {
            let end = self.last_end.take()?;
            return Some((end, CpuState::Unknown));
        };
        let state = state_of(segment.task);
        let gap = self.last_end.filter(|&end| end < segment.start);
        self.last_end = Some(segment.end);
        match gap {
            Some(gap_start) => {
                self.queued = Some((segment.start, state));
                Some((gap_start, CpuState::Unknown))
            }
            None => Some((segment.start, state)),
        }
    }
}

/// A CPU's state while `task` runs on it.
fn state_of(task: TaskId) -> CpuState {
    if task == TaskId::IDLE { CpuState::Idle } else { CpuState::Busy }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::scenario::{R, S, Scenario, assert_drawing};

    fn shares(allowed_idle_ns: u64, other_idle_ns: u64, busy_ns: u64, unknown_ns: u64) -> IdleShares {
        IdleShares { allowed_idle_ns, other_idle_ns, busy_ns, unknown_ns }
    }

    /// Three CPUs: CPU 0 busy throughout, CPU 1 idle from 30 to 60, CPU 2 idle from 50
    /// to 80 and unknown before 20.
    fn three_cpus() -> Model {
        let model = Scenario::new(3, &[(1, "alpha"), (2, "beta"), (3, "gamma")])
            .other(0, 0, 1)
            .other(0, 1, 2)
            .other(20, 2, 3)
            .switch(30, 1, 2, S, 0)
            .switch(50, 2, 3, S, 0)
            .switch(60, 1, 0, R, 2)
            .switch(80, 2, 0, R, 3)
            .other(100, 0, 1)
            .other(100, 1, 2)
            .other(100, 2, 3)
            .finish();
        assert_drawing(
            &model,
            "0: AAAAAAAAAA
             0q ..........
             1: BBB...BBBB
             1q ..........
             2:   GGG...GG
             2q ..........",
        );
        model
    }

    /// Four CPUs with gaps, zero-length runs, lost events and changes at one instant on
    /// several CPUs.
    fn four_cpus() -> Model {
        let mut scenario = Scenario::new(4, &[(1, "a"), (2, "b"), (3, "c"), (4, "d")]);
        for cpu in 0..4u32 {
            scenario.other(cpu as u64 * 3, cpu, cpu as i32 + 1);
        }
        for step in 1..60u64 {
            let (time, cpu) = (step * 10, (step % 4) as u32);
            let task = cpu as i32 + 1;
            match step % 3 {
                0 => scenario.switch(time, cpu, task, S, 0),
                1 => scenario.switch(time, cpu, 0, R, task),
                _ => scenario.switch(time, cpu, task, R, task),
            };
            if step % 7 == 0 {
                scenario.switch(time, (cpu + 1) % 4, 0, R, 0);
            }
            if step == 30 {
                scenario.lost(2, 5);
            }
        }
        scenario.finish()
    }

    #[test]
    fn the_index_swept_in_slices_is_the_index_swept_at_once() {
        for model in [three_cpus(), four_cpus()] {
            let whole = IdleIndex::in_slices(&model, 1);
            for slices in [2, 3, 7, 50, 1000] {
                let sliced = IdleIndex::in_slices(&model, slices);
                assert_eq!(sliced.any_idle, whole.any_idle, "{slices} slices");
                assert_eq!(sliced.all_busy, whole.all_busy, "{slices} slices");
                assert_eq!(sliced.sole_idle, whole.sole_idle, "{slices} slices");
                assert_eq!(sliced.sole_idle_all_known, whole.sole_idle_all_known, "{slices} slices");
            }
        }
    }

    #[test]
    fn every_cpu_splits_idle_busy_and_unknown() {
        let model = three_cpus();
        let index = IdleIndex::new(&model);
        // 0..20: CPU 2 unknown, none idle; 20..30 all busy; 30..80 someone idles; 80..100 busy.
        assert_eq!(index.shares(Nanos(0), Nanos(100), Allowed::Every), shares(50, 0, 30, 20));
        assert_eq!(index.shares(Nanos(25), Nanos(35), Allowed::Every), shares(5, 0, 5, 0));
        // Past the trace's end every CPU is unknown.
        assert_eq!(index.shares(Nanos(90), Nanos(130), Allowed::Every), shares(0, 0, 10, 30));
        assert_eq!(index.shares(Nanos(40), Nanos(40), Allowed::Every), IdleShares::default());
    }

    #[test]
    fn leaving_out_one_cpu_moves_its_lone_idling_outside() {
        let model = three_cpus();
        let index = IdleIndex::new(&model);
        // Without CPU 1: 30..50 only CPU 1 idles (outside), 50..80 CPU 2 idles.
        assert_eq!(index.shares(Nanos(0), Nanos(100), Allowed::EveryBut(Cpu(1))), shares(30, 20, 30, 20));
        // Without CPU 2: 30..60 CPU 1 idles, 60..80 only CPU 2 (outside).
        assert_eq!(index.shares(Nanos(0), Nanos(100), Allowed::EveryBut(Cpu(2))), shares(30, 20, 30, 20));
        // A CPU the trace does not have leaves every CPU allowed.
        assert_eq!(index.shares(Nanos(0), Nanos(100), Allowed::EveryBut(Cpu(9))), shares(50, 0, 30, 20));
    }

    #[test]
    fn a_set_of_cpus_counts_only_its_own_idling() {
        let model = three_cpus();
        let index = IdleIndex::new(&model);
        // Only CPU 0 (always busy): others idle 30..80, all busy 20..30 and 80..100,
        // 0..20 CPU 2 unknown.
        assert_eq!(index.shares(Nanos(0), Nanos(100), Allowed::Only(&[Cpu(0)])), shares(0, 50, 30, 20));
        // Only CPU 2: it idles 50..80, is unknown 0..20; CPU 1 idles alone 30..50.
        assert_eq!(index.shares(Nanos(0), Nanos(100), Allowed::Only(&[Cpu(2)])), shares(30, 20, 30, 20));
        // The set of every CPU agrees with `Every`, and with `EveryBut` a CPU outside.
        let every = [Cpu(0), Cpu(1), Cpu(2), Cpu(7)];
        for (from, to) in [(0, 100), (25, 55), (45, 130)] {
            let (from, to) = (Nanos(from), Nanos(to));
            assert_eq!(index.shares(from, to, Allowed::Only(&every)), index.shares(from, to, Allowed::Every));
            assert_eq!(
                index.shares(from, to, Allowed::Only(&[Cpu(0), Cpu(2)])),
                index.shares(from, to, Allowed::EveryBut(Cpu(1)))
            );
        }
    }

    #[test]
    fn the_allowed_idle_time_alone_is_that_of_the_shares() {
        let model = three_cpus();
        let index = IdleIndex::new(&model);
        let sets: [&[Cpu]; 3] = [&[Cpu(0)], &[Cpu(2)], &[Cpu(0), Cpu(2)]];
        let mut allowed = vec![Allowed::Every, Allowed::EveryBut(Cpu(1)), Allowed::EveryBut(Cpu(9))];
        allowed.extend(sets.iter().map(|&cpus| Allowed::Only(cpus)));
        for (from, to) in [(0, 100), (25, 55), (45, 130), (40, 40)] {
            let (from, to) = (Nanos(from), Nanos(to));
            for &cpus in &allowed {
                assert_eq!(index.allowed_idle_ns(from, to, cpus), index.shares(from, to, cpus).allowed_idle_ns);
            }
        }
    }

    #[test]
    fn lost_events_make_a_cpu_unknown() {
        // CPU 1 loses events after 30 and is seen again idle at 70: 30..70 unknown.
        let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
            .other(0, 0, 1)
            .other(0, 1, 2)
            .other(30, 1, 2)
            .lost(1, 5)
            .switch(70, 1, 0, R, 0)
            .other(100, 0, 1)
            .other(100, 1, 0)
            .finish();
        let index = IdleIndex::new(&model);
        let every = index.shares(Nanos(0), Nanos(100), Allowed::Every);
        assert_eq!(every.total_ns(), 100);
        assert!(every.unknown_ns >= 30, "{every:?}");
        assert_eq!(index.shares(Nanos(0), Nanos(100), Allowed::Only(&[Cpu(0)])).unknown_ns, every.unknown_ns);
    }

    #[test]
    fn the_longest_idle_allowed_cpu_is_named() {
        let model = three_cpus();
        let index = IdleIndex::new(&model);
        assert_eq!(index.longest_idle(Nanos(0), Nanos(100), Allowed::Every), Some((Cpu(1), Nanos(30))));
        assert_eq!(index.longest_idle(Nanos(55), Nanos(100), Allowed::Every), Some((Cpu(2), Nanos(25))));
        assert_eq!(index.longest_idle(Nanos(0), Nanos(100), Allowed::EveryBut(Cpu(1))), Some((Cpu(2), Nanos(30))));
        assert_eq!(index.longest_idle(Nanos(0), Nanos(100), Allowed::Only(&[Cpu(0)])), None);
    }

    /// The class of instant `t` for `allowed`, from the segments alone.
    fn brute_class(model: &Model, t: Nanos, allowed: &[bool]) -> usize {
        let state = |cpu: usize| {
            let segments = model.cpus()[cpu].segments();
            segments.iter().find(|s| s.start <= t && t < s.end).map(|s| s.task == TaskId::IDLE)
        };
        let states: Vec<Option<bool>> = (0..model.cpus().len()).map(state).collect();
        let inside = |cpu: &usize| allowed[*cpu];
        if (0..states.len()).filter(inside).any(|cpu| states[cpu] == Some(true)) {
            0
        } else if (0..states.len()).filter(inside).any(|cpu| states[cpu].is_none()) {
            3
        } else if states.contains(&Some(true)) {
            1
        } else if states.iter().all(|&s| s == Some(false)) {
            2
        } else {
            3
        }
    }

    #[test]
    fn shares_agree_with_an_instant_by_instant_count() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        let cpus = 4u32;
        let names = [(10, "a"), (11, "b"), (12, "c"), (13, "d")];
        let mut scenario = Scenario::new(cpus, &names);
        let mut running = [0i32; 4];
        for step in 0..60u64 {
            let time = step * 7 + random(7);
            let cpu = random(u64::from(cpus)) as u32;
            let task = 10 + cpu as i32;
            let i = cpu as usize;
            // Busy more often than idle, so that every CPU is sometimes busy at once.
            match (random(8), running[i]) {
                (0, _) => {
                    scenario.lost(cpu, 1);
                }
                (1, current) if current != 0 => {
                    scenario.switch(time, cpu, current, S, 0);
                    running[i] = 0;
                }
                (2..=6, 0) => {
                    scenario.switch(time, cpu, 0, R, task);
                    running[i] = task;
                }
                (_, current) => {
                    scenario.other(time, cpu, current);
                }
            }
        }
        let model = scenario.finish();
        let index = IdleIndex::new(&model);
        let sets: Vec<Vec<Cpu>> = vec![vec![Cpu(0)], vec![Cpu(1), Cpu(3)], vec![Cpu(0), Cpu(1), Cpu(2)]];
        let mut seen = [0u64; 4];
        for (from, to) in [(0u64, 450u64), (13, 200), (150, 151), (300, 480)] {
            let mut cases: Vec<(Allowed<'_>, Vec<bool>)> = vec![(Allowed::Every, vec![true; 4])];
            for but in 0..4 {
                cases.push((Allowed::EveryBut(Cpu(but)), (0..4).map(|c| c != but).collect()));
            }
            for set in &sets {
                cases.push((Allowed::Only(set), (0..4).map(|c| set.contains(&Cpu(c))).collect()));
            }
            for (allowed, mask) in cases {
                let mut expected = [0u64; 4];
                (from..to).for_each(|t| expected[brute_class(&model, Nanos(t), &mask)] += 1);
                (0..4).for_each(|class| seen[class] += expected[class]);
                let got = index.shares(Nanos(from), Nanos(to), allowed);
                assert_eq!(
                    [got.allowed_idle_ns, got.other_idle_ns, got.busy_ns, got.unknown_ns],
                    expected,
                    "{allowed:?} over {from}..{to}"
                );
            }
        }
        assert!(seen.iter().all(|&ns| ns > 0), "every class occurs: {seen:?}");
    }
}
