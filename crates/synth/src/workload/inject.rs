//! Injected incidents, each with its ground truth. Sizes depend on the difficulty: 5–15 ms
//! when clean or noisy; when hard, log-uniform over 0.1–100 ms for waiting incidents
//! (short ones hold several tasks at once, so that even a 0.1 ms burst loses 0.8 ms of
//! CPU time or more), 0.8–100 ms for kernel-thread preemptions, 2–100 ms for pinned
//! groups and 5–100 ms for overloads.
//!
//! - `wakeup-placement`: at a barrier release wakees are placed on the waker's CPU, busy
//!   for the incident's length more, while their previous CPUs idle; they wait there
//!   until idle CPUs may take them.
//! - `work-conservation`: wakees are queued behind another task on that task's CPU (not
//!   the waker's), busy for the incident's length, while their own previous CPUs idle.
//! - `kthread-preemption`: a kernel thread preempts a worker shortly after a release and
//!   runs for the incident's length, making the worker the phase's straggler.
//! - `overload`: the waker forks one and a half times as many `hog` tasks as there are
//!   CPUs (two more at least), each running for the incident's length, so runnable
//!   tasks outnumber the CPUs whatever the workload does: waiting is inevitable.
//! - `migration-cascade`: shortly after a release a kernel thread preempts a worker for
//!   0.3 ms; a load balancer on another socket pulls the waiting worker over, displacing
//!   that CPU's worker, which is pulled to a third CPU, displacing another, which goes
//!   back to the first CPU: three migrations, 40 µs apart (the schedgraph paper's §3.3).
//! - `pinned-group`: the waker forks 2–4 `pinned` tasks confined to one or two CPUs (one
//!   more or two more tasks than CPUs), which meet at their own barrier every 30–150 µs
//!   of work for the incident's length: many short waits behind each other while other
//!   CPUs idle (the pinned-barrier pattern). The truth marks it pinned: work-conservation
//!   waste the scheduler could not avoid.
//!
//! A waiting incident spans from the wakeup (or preemption) to the last held task's
//! switch-in; an overload from the first hog's wakeup to the last hog's exit; a cascade
//! from its first migration to its last; a pinned group from its first fork to its last
//! exit.

use super::{Run, STARTUP_NS, TIMER_CASCADE, TIMER_INJECT, TIMER_RELEASE};
use crate::machine::{Action, SLEEPING, TaskIndex, TaskState};
use crate::truth::Injection;
use crate::{Difficulty, InjectionKind, SynthError};

/// A hard burst loses at least this much CPU time (ns), however short.
const BURST_LOST_NS: u64 = 800_000;
/// At most this many tasks are held in one burst.
const BURST_TASKS: usize = 8;

/// A migration cascade under way.
pub(super) struct Cascade {
    /// The preempted worker, then each task displaced in turn.
    moved: Vec<TaskIndex>,
    /// The CPU of the preemption, then each CPU a task was pulled to.
    cpus: Vec<u32>,
    /// The first migration's time.
    start: Option<u64>,
}

/// An injection decided at a barrier release: its kind, its length, the tasks still to be
/// woken (held ones for waiting incidents; the first of them otherwise) and one already
/// woken.
pub(super) struct Chosen {
    kind: InjectionKind,
    length: u64,
    pub held: Vec<TaskIndex>,
    second: TaskIndex,
}

/// Tasks pinned to fewer CPUs than they are, meeting at their own barrier.
pub(super) struct PinnedGroup {
    pub members: Vec<TaskIndex>,
    work: u64,
    until: u64,
    started: Vec<bool>,
    arrived: Vec<TaskIndex>,
    finishing: bool,
    exited: usize,
    injection: usize,
}

/// A log-uniform draw in `[low, high]` (ns).
fn log_uniform(run: &mut Run<'_>, low: u64, high: u64) -> u64 {
    let u = run.rng.below(1_000_000) as f64 / 1e6;
    ((low as f64).ln() + u * ((high as f64).ln() - (low as f64).ln())).exp() as u64
}

impl Run<'_> {
    /// How long an injection of `kind` lasts.
    fn length(&mut self, kind: InjectionKind) -> u64 {
        if self.plan.difficulty != Difficulty::Hard {
            return self.rng.between(5_000_000, 15_000_000);
        }
        match kind {
            InjectionKind::WorkConservation | InjectionKind::WakeupPlacement => log_uniform(self, 100_000, 100_000_000),
            InjectionKind::KthreadPreemption => log_uniform(self, 800_000, 100_000_000),
            InjectionKind::PinnedGroup => log_uniform(self, 2_000_000, 100_000_000),
            InjectionKind::Overload => log_uniform(self, 5_000_000, 100_000_000),
            InjectionKind::MigrationCascade => 300_000,
        }
    }

    /// Decides an injection of `kind` at a release whose wakees are `others`.
    pub(super) fn choose(&mut self, kind: InjectionKind, others: &[TaskIndex]) -> Chosen {
        let mut length = self.length(kind);
        let holds = matches!(kind, InjectionKind::WorkConservation | InjectionKind::WakeupPlacement);
        let held = if holds {
            // Work conservation needs one more task to wait behind.
            let most = (others.len() - usize::from(kind == InjectionKind::WorkConservation)).clamp(1, BURST_TASKS);
            let count = (BURST_LOST_NS.div_ceil(length) as usize).clamp(1, most);
            length = length.max(BURST_LOST_NS / count as u64);
            count
        } else {
            1
        };
        let mut picked = self.pick(others, held + 1);
        let second = picked.pop().expect("at least two wakees");
        self.plan.next_at = self.machine.now + 3 * length + 2_000_000;
        Chosen { kind, length, held: picked, second }
    }

    fn record(&mut self, kind: InjectionKind, start_ns: u64, cpus: Vec<u32>, pids: Vec<i32>) -> usize {
        let pinned = kind == InjectionKind::PinnedGroup;
        self.plan.done.push(Injection {
            kind: kind.kind(),
            pinned,
            start_ns,
            end_ns: start_ns,
            cpus,
            pids,
            lost_cpu_ns: 0,
        });
        self.plan.done.len() - 1
    }

    /// Injects `chosen` at a barrier release by the task on `cpu`: its held tasks are
    /// still to be woken, `second` has been. Returns the waker's own work.
    pub(super) fn inject(&mut self, chosen: Chosen, cpu: u32, own_work: u64) -> Result<u64, SynthError> {
        let Chosen { kind, length, held, second } = chosen;
        let first = held[0];
        match kind {
            InjectionKind::WakeupPlacement => {
                self.hold_behind(kind, &held, cpu, length)?;
                Ok(length)
            }
            InjectionKind::WorkConservation => {
                // The task in front stays where it is: it must not be pulled away.
                let held_on = self.machine.tasks[second].last_cpu;
                self.machine.tasks[second].held = true;
                self.machine.give_work(second, length);
                self.hold_behind(kind, &held, held_on, length)?;
                Ok(own_work)
            }
            InjectionKind::KthreadPreemption => {
                self.wake_normally(cpu, first)?;
                self.preemptions.push((first, self.injector, length, self.machine.now + 20_000_000));
                let id = TIMER_INJECT + (self.preemptions.len() - 1) as u64;
                self.machine.at(self.machine.now + 50_000, Action::Timer { id });
                Ok(own_work)
            }
            InjectionKind::Overload => {
                self.wake_normally(cpu, first)?;
                self.fork_hogs(cpu, length)?;
                Ok(own_work)
            }
            InjectionKind::MigrationCascade => {
                self.wake_normally(cpu, first)?;
                self.cascade = Some(Cascade { moved: vec![first], cpus: Vec::new(), start: None });
                self.machine.at(self.machine.now + 50_000, Action::Timer { id: TIMER_CASCADE });
                Ok(own_work)
            }
            InjectionKind::PinnedGroup => {
                self.wake_normally(cpu, first)?;
                self.fork_group(cpu, length)?;
                Ok(own_work)
            }
        }
    }

    fn wake_normally(&mut self, cpu: u32, task: TaskIndex) -> Result<(), SynthError> {
        let target = self.machine.place(task);
        self.machine.wake(cpu, task, target, false)?;
        let work = self.phase_work();
        self.machine.give_work(task, work);
        Ok(())
    }

    /// The steps of a cascade, 40 µs apart: the preemption, then three migrations. A
    /// step whose conditions do not hold (no worker where one is needed) drops it, to be
    /// tried again at a later release.
    pub(super) fn cascade_step(&mut self, step: u64) -> Result<(), SynthError> {
        let Some(mut cascade) = self.cascade.take() else { return Ok(()) };
        let done = match step {
            0 => self.cascade_begins(&mut cascade)?,
            1 | 2 => self.cascade_moves(&mut cascade)?,
            _ => return self.cascade_ends(cascade),
        };
        if done {
            self.machine.at(self.machine.now + 40_000, Action::Timer { id: TIMER_CASCADE + step + 1 });
            self.cascade = Some(cascade);
        } else {
            self.retry(InjectionKind::MigrationCascade);
        }
        Ok(())
    }

    /// A kernel thread preempts the victim for 0.3 ms.
    fn cascade_begins(&mut self, cascade: &mut Cascade) -> Result<bool, SynthError> {
        let victim = cascade.moved[0];
        let TaskState::Running(cpu) = self.machine.tasks[victim].state else { return Ok(false) };
        if self.machine.tasks[self.injector].state != TaskState::Sleeping {
            return Ok(false);
        }
        self.machine.preempt(cpu, self.injector)?;
        self.machine.give_work(self.injector, 300_000);
        cascade.cpus.push(cpu);
        Ok(true)
    }

    /// The last moved task is pulled to a CPU running a worker (on another socket for the
    /// first move), which it displaces.
    fn cascade_moves(&mut self, cascade: &mut Cascade) -> Result<bool, SynthError> {
        let first_socket = self.machine.socket(cascade.cpus[0]);
        let cross_socket = cascade.cpus.len() == 1;
        let Some(target) = self.worker_cpu(|cpu, machine| {
            !cascade.cpus.contains(&cpu) && (machine.socket(cpu) != first_socket || !cross_socket)
        }) else {
            return Ok(false);
        };
        let displaced = self.machine.current(target).expect("a worker runs there");
        let moved = *cascade.moved.last().expect("the cascade has a task");
        let ts = self.machine.pull_and_preempt(target, moved)?;
        cascade.start.get_or_insert(ts);
        cascade.cpus.push(target);
        cascade.moved.push(displaced);
        Ok(true)
    }

    /// The last displaced task is pulled to the first CPU; the cascade is recorded.
    fn cascade_ends(&mut self, cascade: Cascade) -> Result<(), SynthError> {
        let moved = *cascade.moved.last().expect("the cascade has a task");
        let end = self.machine.pull(cascade.cpus[0], moved)?;
        let pids = cascade.moved.iter().map(|&t| self.machine.tasks[t].pid).collect();
        let start = cascade.start.expect("the cascade moved tasks");
        let index = self.record(InjectionKind::MigrationCascade, start, cascade.cpus, pids);
        self.plan.done[index].end_ns = end;
        Ok(())
    }

    /// A CPU running a workload task that `accept`s, searched from a random CPU on.
    fn worker_cpu(&mut self, accept: impl Fn(u32, &crate::machine::Machine<'_>) -> bool) -> Option<u32> {
        let cpus = self.machine.cpu_count();
        let first = self.rng.below(u64::from(cpus)) as u32;
        (0..cpus).map(|i| (first + i) % cpus).find(|&cpu| {
            self.machine.current(cpu).is_some_and(|t| self.tasks.contains(&t)) && accept(cpu, &self.machine)
        })
    }

    /// Wakes `tasks` onto busy `cpu`, where they stay until it is free again or, after
    /// `length`, idle CPUs may take them.
    fn hold_behind(
        &mut self,
        kind: InjectionKind,
        tasks: &[TaskIndex],
        cpu: u32,
        length: u64,
    ) -> Result<(), SynthError> {
        let waker = self.waker_cpu();
        let mut cpus = vec![cpu];
        let mut pids = Vec::new();
        let mut woken = Vec::new();
        for &task in tasks {
            cpus.push(self.machine.tasks[task].last_cpu);
            pids.push(self.machine.tasks[task].pid);
            let at = self.machine.wake(waker, task, cpu, false)?;
            self.machine.tasks[task].held = true;
            let work = self.phase_work();
            self.machine.give_work(task, work);
            woken.push((task, at));
        }
        cpus.dedup();
        let index = self.record(kind, woken[0].1, cpus, pids);
        self.plan.open.extend(woken.iter().map(|&(task, at)| (task, index, at)));
        self.releases.push(tasks.to_vec());
        let id = TIMER_RELEASE + (self.releases.len() - 1) as u64;
        self.machine.at(self.machine.now + length, Action::Timer { id });
        Ok(())
    }

    /// The CPU of the task releasing the barrier (the one running the injection).
    fn waker_cpu(&self) -> u32 {
        let waker = self.arrived_last.expect("injections happen at a barrier release");
        self.machine.tasks[waker].last_cpu
    }

    pub(super) fn injected_preemption(&mut self, index: usize) -> Result<(), SynthError> {
        let (victim, kthread, duration, _) = self.preemptions[index];
        let running = match self.machine.tasks[victim].state {
            TaskState::Running(cpu) if self.machine.tasks[kthread].state == TaskState::Sleeping => Some(cpu),
            _ => None,
        };
        let Some(cpu) = running else {
            // The victim is not running (still queued, or at the barrier) or the kernel
            // thread is busy: try again a little later, for up to 20 ms.
            if self.machine.now < self.preemption_deadline(index) {
                let id = TIMER_INJECT + index as u64;
                self.machine.at(self.machine.now + 50_000, Action::Timer { id });
            } else {
                self.retry(InjectionKind::KthreadPreemption);
            }
            return Ok(());
        };
        let start = self.machine.preempt(cpu, kthread)?;
        self.machine.give_work(kthread, duration);
        let pids = vec![self.machine.tasks[kthread].pid, self.machine.tasks[victim].pid];
        let incident = self.record(InjectionKind::KthreadPreemption, start, vec![cpu], pids);
        self.plan.open.push((victim, incident, start));
        Ok(())
    }

    /// An injection that could not happen is made at the next release instead.
    fn retry(&mut self, kind: InjectionKind) {
        self.plan.pending.push(kind);
        self.plan.next_at = self.machine.now;
    }

    fn preemption_deadline(&self, index: usize) -> u64 {
        self.preemptions[index].3
    }

    fn fork_hogs(&mut self, cpu: u32, duration: u64) -> Result<(), SynthError> {
        let cpus = self.machine.cpu_count();
        let hogs = cpus + (cpus / 2).max(2);
        let mut start = None;
        let mut pids = Vec::new();
        for i in 0..hogs {
            let hog = self.machine.add_task(self.next_pid, "barrier", 120, i % cpus);
            self.next_pid += 1;
            self.command.push(hog);
            self.machine.fork(cpu, hog)?;
            let target = self.machine.place(hog);
            let woken = self.machine.wake(cpu, hog, target, true)?;
            start.get_or_insert(woken);
            self.machine.give_work(hog, 20_000);
            self.hogs.push((hog, false));
            pids.push(self.machine.tasks[hog].pid);
        }
        let start = start.expect("at least one hog");
        let index = self.record(InjectionKind::Overload, start, (0..cpus).collect(), pids);
        self.overload = Some((index, hogs, duration));
        Ok(())
    }

    /// A hog's first run execs `hog` and sets it spinning; its second ends it.
    pub(super) fn hog_work_done(&mut self, hog: usize, cpu: u32) -> Result<(), SynthError> {
        if !self.hogs[hog].1 {
            self.hogs[hog].1 = true;
            self.machine.exec(cpu, "/usr/bin/hog")?;
            let duration = self.overload.map_or(1, |(_, _, duration)| duration);
            self.machine.give_work(self.hogs[hog].0, duration);
            return Ok(());
        }
        let end = self.machine.exit(cpu)?;
        if let Some((index, left, _)) = self.overload.as_mut() {
            *left -= 1;
            if *left == 0 {
                self.plan.done[*index].end_ns = end;
                self.overload = None;
            }
        }
        Ok(())
    }

    /// Forks a pinned group: one or two CPUs, one or two more tasks than CPUs.
    fn fork_group(&mut self, cpu: u32, length: u64) -> Result<(), SynthError> {
        let cpus = self.machine.cpu_count();
        let width = if cpus >= 4 { 1 + self.rng.below(2) as u32 } else { 1 };
        let first_cpu = self.rng.below(u64::from(cpus)) as u32;
        let mut allowed: Vec<u32> = (0..width).map(|i| (first_cpu + i) % cpus).collect();
        allowed.sort_unstable();
        let count = width as usize + 1 + self.rng.below(2) as usize;
        let mut members = Vec::new();
        let mut start = None;
        for i in 0..count {
            let task = self.machine.add_task(self.next_pid, "sh", 120, allowed[i % allowed.len()]);
            self.next_pid += 1;
            self.machine.tasks[task].allowed = Some(allowed.clone());
            self.command.push(task);
            self.machine.fork(cpu, task)?;
            let target = self.machine.place(task);
            let woken = self.machine.wake(cpu, task, target, true)?;
            start.get_or_insert(woken);
            self.machine.give_work(task, STARTUP_NS);
            members.push(task);
        }
        let pids = members.iter().map(|&t| self.machine.tasks[t].pid).collect();
        let injection = self.record(InjectionKind::PinnedGroup, start.expect("a member"), allowed, pids);
        let work = self.rng.between(30_000, 150_000);
        let until = self.machine.now + length;
        let started = vec![false; count];
        self.groups.push(PinnedGroup {
            members,
            work,
            until,
            started,
            arrived: Vec::new(),
            finishing: false,
            exited: 0,
            injection,
        });
        Ok(())
    }

    /// A pinned group's member finished a piece of work: its first execs `pinned`; then
    /// it meets the others at the group's barrier until the group's time is up.
    pub(super) fn group_work_done(&mut self, group: usize, task: TaskIndex, cpu: u32) -> Result<(), SynthError> {
        let member = self.groups[group].members.iter().position(|&t| t == task).expect("a member");
        if !self.groups[group].started[member] {
            self.groups[group].started[member] = true;
            self.machine.exec(cpu, "/usr/bin/pinned")?;
        }
        if self.groups[group].finishing {
            let end = self.machine.exit(cpu)?;
            let g = &mut self.groups[group];
            g.exited += 1;
            if g.exited == g.members.len() {
                self.plan.done[g.injection].end_ns = end;
            }
            return Ok(());
        }
        self.groups[group].arrived.push(task);
        if self.groups[group].arrived.len() < self.groups[group].members.len() {
            self.machine.stop(cpu, SLEEPING)?;
            return Ok(());
        }
        let others: Vec<TaskIndex> =
            std::mem::take(&mut self.groups[group].arrived).into_iter().filter(|&t| t != task).collect();
        let finishing = self.machine.now >= self.groups[group].until;
        self.groups[group].finishing = finishing;
        let work = if finishing { 10_000 } else { self.groups[group].work };
        for other in others {
            let target = self.machine.place(other);
            self.machine.wake(cpu, other, target, false)?;
            self.machine.give_work(other, work);
        }
        if finishing {
            let end = self.machine.exit(cpu)?;
            let g = &mut self.groups[group];
            g.exited += 1;
            if g.exited == g.members.len() {
                self.plan.done[g.injection].end_ns = end;
            }
            return Ok(());
        }
        self.machine.give_work(task, work);
        Ok(())
    }

    /// Ends the incidents whose waiting tasks have all got a CPU.
    pub(super) fn close_incidents(&mut self) {
        let machine = &self.machine;
        let done = &mut self.plan.done;
        self.plan.open.retain(|&(task, index, since)| {
            if !matches!(machine.tasks[task].state, TaskState::Running(_)) {
                return true;
            }
            let ran = machine.running_since(task);
            done[index].end_ns = done[index].end_ns.max(ran);
            done[index].lost_cpu_ns += ran.saturating_sub(since);
            false
        });
    }
}
