//! Injected incidents, each with its ground truth:
//!
//! - `wakeup-placement`: at a barrier release one wakee is placed on the waker's CPU,
//!   busy for 5–15 ms more, while the wakee's previous CPU idles; it waits there.
//! - `work-conservation`: one wakee is queued behind another task on that task's CPU
//!   (not the waker's), busy for 5–15 ms, while its own previous CPU idles.
//! - `kthread-preemption`: a kernel thread preempts a worker shortly after a release and
//!   runs 5–15 ms, making the worker the phase's straggler.
//! - `overload`: the waker forks half as many `hog` tasks as there are CPUs, each running
//!   5–15 ms, so runnable tasks outnumber the CPUs.
//! - `migration-cascade`: shortly after a release a kernel thread preempts a worker for
//!   0.3 ms; a load balancer on another socket pulls the waiting worker over, displacing
//!   that CPU's worker, which is pulled to a third CPU, displacing another, which goes
//!   back to the first CPU: three migrations, 40 µs apart (the schedgraph paper's §3.3).
//!
//! A waiting incident spans from the wakeup (or preemption) to the task's switch-in; an
//! overload from the first hog's wakeup to the last hog's exit; a cascade from its first
//! migration to its last.

use super::{INCIDENT_NS, Run, TIMER_CASCADE, TIMER_INJECT};
use crate::machine::{Action, TaskIndex, TaskState};

/// A migration cascade under way.
pub(super) struct Cascade {
    /// The preempted worker, then each task displaced in turn.
    moved: Vec<TaskIndex>,
    /// The CPU of the preemption, then each CPU a task was pulled to.
    cpus: Vec<u32>,
    /// The first migration's time.
    start: Option<u64>,
}
use crate::truth::Injection;
use crate::{InjectionKind, SynthError};

impl Run<'_> {
    fn incident_ns(&mut self) -> u64 {
        self.rng.between(INCIDENT_NS.0, INCIDENT_NS.1)
    }

    fn record(&mut self, kind: InjectionKind, start_ns: u64, cpus: Vec<u32>, pids: Vec<i32>) -> usize {
        self.plan.done.push(Injection { kind, start_ns, end_ns: start_ns, cpus, pids, lost_cpu_ns: 0 });
        self.plan.done.len() - 1
    }

    /// Injects `kind` at a barrier release by the task on `cpu`: `first` is still to be
    /// woken, `second` has been. Returns the waker's own work.
    pub(super) fn inject(
        &mut self,
        kind: InjectionKind,
        cpu: u32,
        first: TaskIndex,
        second: TaskIndex,
        own_work: u64,
    ) -> Result<u64, SynthError> {
        let duration = self.incident_ns();
        let previous = self.machine.tasks[first].last_cpu;
        match kind {
            InjectionKind::WakeupPlacement => {
                let held_on = cpu;
                self.hold_behind(kind, first, held_on, previous)?;
                let work = self.phase_work();
                self.machine.give_work(first, work);
                Ok(duration)
            }
            InjectionKind::WorkConservation => {
                // Both stay where they are: the task in front must not be pulled away.
                let held_on = self.machine.tasks[second].last_cpu;
                self.machine.tasks[second].held = true;
                self.hold_behind(kind, first, held_on, previous)?;
                let work = self.phase_work();
                self.machine.give_work(first, work);
                self.machine.give_work(second, duration);
                Ok(own_work)
            }
            InjectionKind::KthreadPreemption => {
                let target = self.machine.place(first);
                self.machine.wake(cpu, first, target, false)?;
                let work = self.phase_work();
                self.machine.give_work(first, work);
                self.preemptions.push((first, self.injector, duration, self.machine.now + 20_000_000));
                let id = TIMER_INJECT + (self.preemptions.len() - 1) as u64;
                self.machine.at(self.machine.now + 50_000, Action::Timer { id });
                Ok(own_work)
            }
            InjectionKind::Overload => {
                let target = self.machine.place(first);
                self.machine.wake(cpu, first, target, false)?;
                let work = self.phase_work();
                self.machine.give_work(first, work);
                self.fork_hogs(cpu, duration)?;
                Ok(own_work)
            }
            InjectionKind::MigrationCascade => {
                let target = self.machine.place(first);
                self.machine.wake(cpu, first, target, false)?;
                let work = self.phase_work();
                self.machine.give_work(first, work);
                self.cascade = Some(Cascade { moved: vec![first], cpus: Vec::new(), start: None });
                self.machine.at(self.machine.now + 50_000, Action::Timer { id: TIMER_CASCADE });
                Ok(own_work)
            }
        }
    }

    /// The steps of a cascade, 40 µs apart: the preemption, then three migrations. A
    /// step whose conditions do not hold (no worker where one is needed) drops it.
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

    /// Wakes `task` onto busy `cpu`, where it stays until that CPU is free again.
    fn hold_behind(&mut self, kind: InjectionKind, task: TaskIndex, cpu: u32, previous: u32) -> Result<(), SynthError> {
        let start = self.machine.wake(self.waker_cpu(), task, cpu, false)?;
        self.machine.tasks[task].held = true;
        let index = self.record(kind, start, vec![cpu, previous], vec![self.machine.tasks[task].pid]);
        self.plan.open.push((task, index));
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
            }
            return Ok(());
        };
        let start = self.machine.preempt(cpu, kthread)?;
        self.machine.give_work(kthread, duration);
        let pids = vec![self.machine.tasks[kthread].pid, self.machine.tasks[victim].pid];
        let incident = self.record(InjectionKind::KthreadPreemption, start, vec![cpu], pids);
        self.plan.open.push((victim, incident));
        Ok(())
    }

    fn preemption_deadline(&self, index: usize) -> u64 {
        self.preemptions[index].3
    }

    fn fork_hogs(&mut self, cpu: u32, duration: u64) -> Result<(), SynthError> {
        let cpus = self.machine.cpu_count();
        let mut start = None;
        let mut pids = Vec::new();
        for i in 0..cpus / 2 + 1 {
            let hog = self.machine.add_task(self.next_pid, "barrier", 120, i % cpus);
            self.next_pid += 1;
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
        self.overload = Some((index, cpus / 2 + 1, duration));
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

    /// Ends the incidents whose waiting task has got a CPU.
    pub(super) fn close_incidents(&mut self) {
        let machine = &self.machine;
        let done = &mut self.plan.done;
        self.plan.open.retain(|&(task, index)| {
            if !matches!(machine.tasks[task].state, TaskState::Running(_)) {
                return true;
            }
            let end = machine.running_since(task);
            done[index].end_ns = end;
            done[index].lost_cpu_ns = end - done[index].start_ns;
            false
        });
    }
}
