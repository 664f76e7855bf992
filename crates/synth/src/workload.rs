//! The workloads the machine runs, and the incidents injected into them.
//!
//! - barrier: N worker threads on N CPUs compute, meet at a barrier, and go on (NAS UA
//!   style, the schedgraph paper's example); the last to arrive wakes the others.
//! - hackbench: groups of 20 tasks passing messages: each runs briefly, wakes a peer of
//!   its group, and sleeps half the time.
//! - mixed: the barrier plus kernel threads (kworker, ksoftirqd, kcompactd) that wake now
//!   and then and preempt whatever runs on their CPU for a few microseconds.
//!
//! Every workload starts with a shell (`sh`, pid 1000) that forks the tasks and sleeps
//! until they have exited; tasks exec their program when they first run.

use crate::machine::{Action, Machine, SLEEPING, TaskIndex, TaskState};
use crate::rng::Rng;
use crate::truth::Injection;
use crate::{InjectionKind, SynthError, Workload};

const SHELL_PID: i32 = 1000;
const FIRST_TASK_PID: i32 = 1001;
const KTHREAD_PID: i32 = 20;
/// Work of a task's first run, before it execs its program.
const STARTUP_NS: u64 = 30_000;
/// A barrier phase's work: this much, plus up to a fifth more.
const PHASE_NS: u64 = 200_000;
/// How long an injected incident lasts, at least and at most.
const INCIDENT_NS: (u64, u64) = (5_000_000, 15_000_000);

/// Timers of the workloads.
const TIMER_KTHREAD: u64 = 1 << 40;
const TIMER_INJECT: u64 = 1 << 41;
const TIMER_CASCADE: u64 = 1 << 42;

struct Plan {
    /// Injections still to place, each at its time.
    pending: Vec<(u64, InjectionKind)>,
    done: Vec<Injection>,
    /// Tasks whose switch-in ends an injected incident: (task, injection index).
    open: Vec<(TaskIndex, usize)>,
}

/// Runs a workload to its end.
pub struct Run<'f> {
    machine: Machine<'f>,
    rng: Rng,
    workload: Workload,
    end_ns: u64,
    shell: TaskIndex,
    tasks: Vec<TaskIndex>,
    started: Vec<bool>,
    arrived: Vec<TaskIndex>,
    finishing: bool,
    exited: usize,
    kthreads: Vec<TaskIndex>,
    plan: Plan,
    /// The kernel thread injected preemptions use.
    injector: TaskIndex,
    /// Hogs of an injected overload: (task, has it started).
    hogs: Vec<(TaskIndex, bool)>,
    /// Injected preemptions waiting for their timer: (victim, kernel thread, duration,
    /// give up after).
    preemptions: Vec<(TaskIndex, usize, u64, u64)>,
    next_pid: i32,
    /// The task releasing the barrier right now.
    arrived_last: Option<TaskIndex>,
    /// An overload under way: (its injection, hogs still alive, hog run time).
    overload: Option<(usize, u32, u64)>,
    cascade: Option<inject::Cascade>,
}

impl<'f> Run<'f> {
    pub fn new(
        machine: Machine<'f>,
        seed: u64,
        workload: Workload,
        task_count: u32,
        duration_ns: u64,
        injections: &[(InjectionKind, u32)],
    ) -> Run<'f> {
        let start = machine.now;
        // One slot per injection, kinds taking turns, spread over the middle of the run so
        // that incidents never overlap.
        let mut kinds: Vec<InjectionKind> = Vec::new();
        let most = injections.iter().map(|&(_, count)| count).max().unwrap_or(0);
        for round in 0..most {
            kinds.extend(injections.iter().filter(|&&(_, count)| round < count).map(|&(kind, _)| kind));
        }
        let slots = kinds.len() as f64;
        let mut pending: Vec<(u64, InjectionKind)> = kinds
            .into_iter()
            .enumerate()
            .map(|(i, kind)| (start + (duration_ns as f64 * (0.1 + 0.8 * (i as f64 + 0.5) / slots)) as u64, kind))
            .collect();
        pending.sort_by_key(|&(t, k)| (std::cmp::Reverse(t), k));
        Run {
            machine,
            rng: Rng::new(seed),
            workload,
            end_ns: start + duration_ns,
            shell: 0,
            tasks: Vec::new(),
            started: Vec::new(),
            arrived: Vec::new(),
            finishing: false,
            exited: 0,
            kthreads: Vec::new(),
            plan: Plan { pending, done: Vec::new(), open: Vec::new() },
            injector: 0,
            hogs: Vec::new(),
            preemptions: Vec::new(),
            next_pid: FIRST_TASK_PID + task_count as i32,
            arrived_last: None,
            overload: None,
            cascade: None,
        }
        .with_tasks(task_count)
    }

    fn with_tasks(mut self, count: u32) -> Run<'f> {
        let cpus = self.machine.cpu_count();
        self.shell = self.machine.add_task(SHELL_PID, "sh", 120, 0);
        for i in 0..count {
            let task = self.machine.add_task(FIRST_TASK_PID + i as i32, "sh", 120, i % cpus);
            self.tasks.push(task);
            self.started.push(false);
        }
        if self.workload == Workload::Mixed {
            for cpu in 0..cpus {
                let kworker =
                    self.machine.add_task(KTHREAD_PID + 2 * cpu as i32, &format!("kworker/{cpu}:1"), 120, cpu);
                let softirq =
                    self.machine.add_task(KTHREAD_PID + 2 * cpu as i32 + 1, &format!("ksoftirqd/{cpu}"), 120, cpu);
                self.kthreads.extend([kworker, softirq]);
            }
            let kcompactd = self.machine.add_task(KTHREAD_PID + 2 * cpus as i32, "kcompactd0", 120, 0);
            self.kthreads.push(kcompactd);
        }
        self.injector = self.machine.add_task(KTHREAD_PID - 1, "kworker/u512:1", 120, 0);
        self
    }

    /// Simulates to the end; returns the machine and the injections' truth.
    pub fn run(mut self, progress: &mut dyn FnMut(u64)) -> Result<(Machine<'f>, Vec<Injection>), SynthError> {
        let start = self.machine.now;
        let mut actions = 0u64;
        self.machine.start_running(0, self.shell)?;
        for index in 0..self.tasks.len() {
            let task = self.tasks[index];
            self.machine.fork(0, task)?;
            let target = self.machine.place(task);
            self.machine.wake(0, task, target, true)?;
            self.machine.give_work(task, STARTUP_NS);
        }
        self.machine.stop(0, SLEEPING)?;
        if self.workload == Workload::Mixed {
            for cpu in 0..self.machine.cpu_count() {
                let first = self.machine.now + self.rng.between(100_000, 4_000_000);
                self.machine.at(first, Action::Timer { id: TIMER_KTHREAD + u64::from(cpu) });
            }
        }
        while let Some(action) = self.machine.next_action() {
            actions += 1;
            if actions % (1 << 16) == 0 {
                progress(self.machine.now - start);
            }
            match action {
                Action::WorkDone { task, epoch } if self.machine.is_current(task, epoch) => self.work_done(task)?,
                Action::WorkDone { .. } => {}
                Action::Dispatch { cpu } => self.machine.dispatch(cpu)?,
                Action::Timer { id } => self.timer(id)?,
            }
            self.close_incidents();
        }
        Ok((self.machine, self.plan.done))
    }

    fn cpu_of(&self, task: TaskIndex) -> u32 {
        match self.machine.tasks[task].state {
            TaskState::Running(cpu) => cpu,
            state => unreachable!("only running tasks finish work, not {state:?}"),
        }
    }

    fn work_done(&mut self, task: TaskIndex) -> Result<(), SynthError> {
        let cpu = self.cpu_of(task);
        if task == self.shell {
            self.machine.exit(cpu)?;
            return Ok(());
        }
        if self.kthreads.contains(&task) || task == self.injector {
            self.machine.stop(cpu, SLEEPING)?;
            return Ok(());
        }
        if let Some(hog) = self.hogs.iter().position(|&(t, _)| t == task) {
            return self.hog_work_done(hog, cpu);
        }
        let index = self.tasks.iter().position(|&t| t == task).expect("a workload task");
        if !self.started[index] {
            self.started[index] = true;
            let program = if self.workload == Workload::Hackbench { "/usr/bin/hackbench" } else { "/usr/bin/barrier" };
            self.machine.exec(cpu, program)?;
        }
        if self.finishing {
            return self.exit_task(cpu);
        }
        match self.workload {
            Workload::Hackbench => self.message(task, index, cpu),
            Workload::Barrier | Workload::Mixed => self.arrive(task, cpu),
        }
    }

    fn exit_task(&mut self, cpu: u32) -> Result<(), SynthError> {
        self.exited += 1;
        if self.exited == self.tasks.len() {
            self.machine.wake(cpu, self.shell, 0, false)?;
            self.machine.give_work(self.shell, 20_000);
        }
        self.machine.exit(cpu).map(|_| ())
    }

    /// Barrier: wait for the others, or release them.
    fn arrive(&mut self, task: TaskIndex, cpu: u32) -> Result<(), SynthError> {
        self.arrived.push(task);
        if self.arrived.len() < self.tasks.len() {
            self.machine.stop(cpu, SLEEPING)?;
            return Ok(());
        }
        let others: Vec<TaskIndex> = std::mem::take(&mut self.arrived).into_iter().filter(|&t| t != task).collect();
        if self.machine.now >= self.end_ns {
            self.finishing = true;
        }
        let injection = if self.finishing || others.len() < 2 { None } else { self.take_injection() };
        let chosen = injection.map(|kind| (kind, self.pick_two(&others)));
        self.arrived_last = Some(task);
        for &other in &others {
            if chosen.is_some_and(|(_, (first, _))| first == other) {
                continue;
            }
            let target = self.machine.place(other);
            self.machine.wake(cpu, other, target, false)?;
            let work = if self.finishing { 10_000 } else { self.phase_work() };
            self.machine.give_work(other, work);
        }
        let mut own_work = self.phase_work();
        if let Some((kind, (first, second))) = chosen {
            own_work = self.inject(kind, cpu, first, second, own_work)?;
        }
        if self.finishing {
            return self.exit_task(cpu);
        }
        self.machine.give_work(task, own_work);
        Ok(())
    }

    /// Two different tasks of `tasks` (which has at least two).
    fn pick_two(&mut self, tasks: &[TaskIndex]) -> (TaskIndex, TaskIndex) {
        let first = self.rng.below(tasks.len() as u64) as usize;
        let second = (first + 1 + self.rng.below(tasks.len() as u64 - 1) as usize) % tasks.len();
        (tasks[first], tasks[second])
    }

    fn phase_work(&mut self) -> u64 {
        PHASE_NS + self.rng.below(PHASE_NS / 5)
    }

    /// Hackbench: wake a sleeping peer, then sleep half the time (never the last awake).
    fn message(&mut self, task: TaskIndex, index: usize, cpu: u32) -> Result<(), SynthError> {
        let group = index / 20;
        let members: Vec<TaskIndex> = self.tasks.iter().copied().skip(group * 20).take(20).collect();
        let peer = members[self.rng.below(members.len() as u64) as usize];
        if peer != task && self.machine.tasks[peer].state == TaskState::Sleeping {
            let target = self.machine.place(peer);
            self.machine.wake(cpu, peer, target, false)?;
            let work = self.rng.between(5_000, 30_000);
            self.machine.give_work(peer, work);
        }
        if self.machine.now >= self.end_ns && !self.finishing {
            self.finishing = true;
            self.wake_all_sleepers(cpu)?;
            return self.exit_task(cpu);
        }
        let others_awake = members.iter().any(|&m| m != task && self.machine.tasks[m].state != TaskState::Sleeping);
        if others_awake && self.rng.below(2) == 0 {
            self.machine.give_work(task, self.rng.between(5_000, 30_000));
            self.machine.stop(cpu, SLEEPING)?;
        } else {
            let work = self.rng.between(5_000, 30_000);
            self.machine.give_work(task, work);
        }
        Ok(())
    }

    fn wake_all_sleepers(&mut self, cpu: u32) -> Result<(), SynthError> {
        for &task in &self.tasks.clone() {
            if self.machine.tasks[task].state == TaskState::Sleeping {
                let target = self.machine.place(task);
                self.machine.wake(cpu, task, target, false)?;
                self.machine.give_work(task, 10_000);
            }
        }
        Ok(())
    }

    /// A kernel thread's timer: it wakes on its CPU and preempts what runs there.
    fn timer(&mut self, id: u64) -> Result<(), SynthError> {
        if id >= TIMER_CASCADE {
            return self.cascade_step(id - TIMER_CASCADE);
        }
        if id >= TIMER_INJECT {
            return self.injected_preemption((id - TIMER_INJECT) as usize);
        }
        let cpu = (id - TIMER_KTHREAD) as u32;
        if self.finishing {
            return Ok(());
        }
        let kthread = self.kthreads[2 * cpu as usize + self.rng.below(2) as usize];
        if self.machine.tasks[kthread].state == TaskState::Sleeping {
            let work = self.rng.between(5_000, 50_000);
            if self.machine.current(cpu).is_some() {
                self.machine.preempt(cpu, kthread)?;
                self.machine.give_work(kthread, work);
            } else {
                self.machine.wake(cpu, kthread, cpu, false)?;
                self.machine.give_work(kthread, work);
            }
        }
        let next = self.machine.now + self.rng.between(500_000, 4_000_000);
        self.machine.at(next, Action::Timer { id });
        Ok(())
    }

    fn take_injection(&mut self) -> Option<InjectionKind> {
        match self.plan.pending.last() {
            Some(&(time, kind)) if time <= self.machine.now => {
                self.plan.pending.pop();
                Some(kind)
            }
            _ => None,
        }
    }
}

mod inject;
