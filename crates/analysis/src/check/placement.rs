//! Where each task ran, as much as pinning and per-CPU kernel threads need to be told
//! from the trace: per task, the CPUs it ran on last (with the end of its last run on
//! each), so "the CPUs it never left since some moment" can be asked for any set of
//! CPUs — a thread that pins itself after running elsewhere is confined from then on,
//! not for its whole life.
//!
//! The last run's end on a CPU is a maximum, so the segments can be read CPU by CPU in
//! any order. Only the `RECENT` CPUs with the latest last runs are kept per task; the
//! others' latest end is kept as one time, which can only make a confinement start later
//! (never claim one that did not hold).

use model::{Cpu, Model, Nanos, TaskId};

/// CPUs kept per task: confinements to more CPUs than this are not told.
const RECENT: usize = 8;

/// Inferred pinning (`check`'s "possibly pinned", the critical path's pinning) is told
/// for tasks confined to at most this many CPUs ...
pub(crate) const PINNED_CPUS: usize = 4;
/// ... that ran at least this many times there ...
pub(crate) const PINNED_RUNS: u32 = 5;
/// ... and waited at least this many times while only CPUs outside idled.
pub(crate) const PINNED_WAITS: u32 = 3;
/// A long wait: a scheduler tick at 250 Hz, time enough for an idle CPU's balancing to
/// pull the task.
pub(crate) const LONG_WAIT: Nanos = Nanos(4_000_000);

/// Where each task ran in the whole trace.
pub(crate) struct Placement(Vec<Places>);

/// One task's runs: how many, when, and its last run on each of the CPUs it ran on last.
#[derive(Clone, Debug, Default)]
struct Places {
    runs: u32,
    first: Nanos,
    last: Nanos,
    /// In no order.
    recent: Vec<Place>,
    /// The latest end of a run on a CPU no longer in `recent`.
    older: Option<Nanos>,
}

#[derive(Copy, Clone, Debug)]
struct Place {
    cpu: Cpu,
    last_end: Nanos,
}

/// A task that ran only on some CPUs from some moment on, to the end of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Confinement {
    /// From when: the end of its last run elsewhere, or the start of time when it never
    /// ran elsewhere (a new task waits before its first run).
    pub since: Nanos,
    /// The CPU it ran on last before, if it ran elsewhere at all.
    pub before: Option<Cpu>,
    /// The CPUs it ran on since (sorted).
    pub cpus: Vec<Cpu>,
    /// Its runs in the whole trace, and the first one's start and the last one's end.
    pub runs: u32,
    pub first: Nanos,
    pub last: Nanos,
}

impl Confinement {
    /// Whether it never ran anywhere else.
    pub fn whole_life(&self) -> bool {
        self.before.is_none()
    }
}

impl Places {
    fn add(&mut self, cpu: Cpu, start: Nanos, end: Nanos) {
        if self.runs == 0 {
            self.first = start;
        }
        self.runs = self.runs.saturating_add(1);
        self.first = self.first.min(start);
        self.last = self.last.max(end);
        // Unsorted (sorted when asked): a run is one short scan of at most RECENT + 1.
        match self.recent.iter_mut().find(|p| p.cpu == cpu) {
            Some(place) => place.last_end = place.last_end.max(end),
            None => self.recent.push(Place { cpu, last_end: end }),
        }
        if self.recent.len() > RECENT {
            let oldest = (0..self.recent.len()).min_by_key(|&i| (self.recent[i].last_end, self.recent[i].cpu));
            if let Some(evicted) = oldest.map(|i| self.recent.swap_remove(i)) {
                self.older = Some(self.older.map_or(evicted.last_end, |t| t.max(evicted.last_end)));
            }
        }
    }

    /// The kept CPUs, latest last run first.
    fn latest_first(&self) -> Vec<Place> {
        let mut recent = self.recent.clone();
        recent.sort_by(|a, b| b.last_end.cmp(&a.last_end).then(a.cpu.cmp(&b.cpu)));
        recent
    }
}

impl Placement {
    pub(crate) fn of(model: &Model) -> Placement {
        let mut places = vec![Places::default(); model.tasks().len()];
        for timeline in model.cpus() {
            for segment in timeline.segments().iter().filter(|s| s.task != TaskId::IDLE) {
                if let Some(task) = places.get_mut(segment.task.index()) {
                    task.add(timeline.cpu(), segment.start, segment.end);
                }
            }
        }
        Placement(places)
    }

    /// Where `task` ran from the end of its last run outside `within` to the end of the
    /// trace, if it ran at all since (and only on CPUs kept per task).
    pub(crate) fn confined(&self, task: TaskId, within: &[Cpu]) -> Option<Confinement> {
        let places = self.0.get(task.index()).filter(|p| p.runs > 0)?;
        let recent = places.latest_first();
        let outside = recent.iter().find(|p| !within.contains(&p.cpu));
        let since = match (outside.map(|p| p.last_end), places.older) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let mut cpus: Vec<Cpu> = recent
            .iter()
            .filter(|p| within.contains(&p.cpu) && since.is_none_or(|t| p.last_end > t))
            .map(|p| p.cpu)
            .collect();
        if cpus.is_empty() {
            return None;
        }
        cpus.sort_unstable();
        Some(Confinement {
            since: since.unwrap_or(Nanos::ZERO),
            before: since.and(outside.map(|p| p.cpu)),
            cpus,
            runs: places.runs,
            first: places.first,
            last: places.last,
        })
    }

    /// The task's confinements, shortest first: the CPU it ran on last since it last ran
    /// elsewhere, then the last two since it last ran on a third, and so on, to its whole
    /// life (when it ran on no more CPUs than are kept).
    pub(crate) fn confinements(&self, task: TaskId) -> Vec<Confinement> {
        let Some(places) = self.0.get(task.index()).filter(|p| p.runs > 0) else { return Vec::new() };
        let recent = places.latest_first();
        (1..=recent.len())
            .filter_map(|count| {
                let cpus: Vec<Cpu> = recent[..count].iter().map(|p| p.cpu).collect();
                self.confined(task, &cpus)
            })
            .collect()
    }

    /// Whether the trace never shows `task` running on a CPU other than `cpu`.
    pub(super) fn ran_only_on(&self, task: TaskId, cpu: Cpu) -> bool {
        self.0
            .get(task.index())
            .is_none_or(|places| places.older.is_none() && places.recent.iter().all(|p| p.cpu == cpu))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(runs: &[(u32, u64, u64)]) -> Placement {
        let mut task = Places::default();
        for &(cpu, start, end) in runs {
            task.add(Cpu(cpu), Nanos(start), Nanos(end));
        }
        Placement(vec![task])
    }

    /// The one task of [`places`]'s placement (the first slot).
    fn task() -> TaskId {
        TaskId::IDLE
    }

    /// ```text
    /// CPU 34 |AA..........|
    /// CPU 2  |...A..A..A..|   the thread pins itself to CPUs 2 and 3 at 20
    /// CPU 3  |.....A..A...|
    /// ```
    #[test]
    fn a_thread_that_pins_itself_is_confined_since_it_left_its_first_cpu() {
        let placement = places(&[(34, 0, 20), (2, 30, 40), (3, 50, 60), (2, 60, 70), (3, 80, 90), (2, 90, 100)]);
        let confined = placement.confined(task(), &[Cpu(2), Cpu(3)]).unwrap();
        assert_eq!(confined.since, Nanos(20));
        assert_eq!(confined.before, Some(Cpu(34)));
        assert_eq!(confined.cpus, [Cpu(2), Cpu(3)]);
        assert!(!confined.whole_life());
        let on_two = placement.confined(task(), &[Cpu(2)]).unwrap();
        assert_eq!((on_two.since, on_two.before, on_two.cpus), (Nanos(90), Some(Cpu(3)), vec![Cpu(2)]));
        assert!(!placement.ran_only_on(task(), Cpu(2)));
        assert!(placement.confined(task(), &[Cpu(34)]).is_none(), "it left CPU 34 for good");
        let confinements = placement.confinements(task());
        let sets: Vec<(Vec<Cpu>, Nanos)> = confinements.iter().map(|c| (c.cpus.clone(), c.since)).collect();
        assert_eq!(
            sets,
            [(vec![Cpu(2)], Nanos(90)), (vec![Cpu(2), Cpu(3)], Nanos(20)), (vec![Cpu(2), Cpu(3), Cpu(34)], Nanos(0))],
            "shortest first, to its whole life"
        );
        assert!(confinements[2].whole_life());
    }

    #[test]
    fn a_task_on_one_cpu_all_its_life_is_confined_from_the_start_of_time() {
        let placement = places(&[(5, 10, 20), (5, 30, 40)]);
        let confined = placement.confined(task(), &[Cpu(5), Cpu(6)]).unwrap();
        assert!(confined.whole_life());
        assert_eq!((confined.since, confined.runs, confined.cpus), (Nanos::ZERO, 2, vec![Cpu(5)]));
        assert_eq!((confined.first, confined.last), (Nanos(10), Nanos(40)));
        assert!(placement.ran_only_on(task(), Cpu(5)) && !placement.ran_only_on(task(), Cpu(6)));
    }

    #[test]
    fn cpus_beyond_the_recent_ones_only_make_a_confinement_start_later() {
        // Ran on CPUs 0..=9 in turn, then on CPU 0 again.
        let mut runs: Vec<(u32, u64, u64)> = (0..10).map(|c| (c, u64::from(c) * 10, u64::from(c) * 10 + 5)).collect();
        runs.push((0, 200, 210));
        let placement = places(&runs);
        let confined = placement.confined(task(), &[Cpu(0)]).unwrap();
        assert_eq!((confined.since, confined.before), (Nanos(95), Some(Cpu(9))));
        assert!(!placement.ran_only_on(task(), Cpu(0)));
    }
}
