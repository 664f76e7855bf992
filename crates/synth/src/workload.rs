//! The workloads the machine runs, and the incidents injected into them.
//!
//! - barrier: N worker threads on N CPUs compute, meet at a barrier, and go on (NAS UA
//!   style, the schedgraph paper's example); the last to arrive wakes the others.
//! - hackbench: groups of 20 tasks passing messages: each runs briefly, wakes a peer of
//!   its group, and sleeps half the time.
//! - mixed: the barrier plus kernel threads (kworker, ksoftirqd, kcompactd) that wake now
//!   and then and preempt whatever runs on their CPU for a few microseconds; above the
//!   clean difficulty they wake more often, and pairs of daemons wake each other
//!   synchronously (the wakee waits a few microseconds behind its waker while other
//!   CPUs may idle): background noise, not incidents.
//!
//! Injections come one at a time, in turns of their kinds, from a tenth of the run on;
//! each waits until the previous one's start plus three times its length and 2 ms, so
//! incidents never overlap and episodes of different injections stay apart.
//!
//! - pipeline, fork-join, late-barrier: dependency chains with scheduler delays injected
//!   on the critical path and off it (see the `chains` module).
//!
//! Every workload starts with a shell (`sh`, pid 1000) that forks the tasks and sleeps
//! until they have exited; tasks exec their program when they first run (in the chain
//! workloads the shell execs the program first).

use crate::machine::{Action, Machine, SLEEPING, TaskIndex, TaskState};
use crate::rng::Rng;
use crate::truth::{Injection, Noise, PathTruth};
use crate::{Difficulty, InjectionKind, SynthError, WorkloadKind};
use chains::{Chain, TIMER_STALL};

const SHELL_PID: i32 = 1000;
const FIRST_TASK_PID: i32 = 1001;
const KTHREAD_PID: i32 = 20;
/// Daemon pairs: server and client pids from here.
const DAEMON_PID: i32 = 900;
const DAEMON_PAIRS_MAX: u32 = 32;
/// Work of a task's first run, before it execs its program.
const STARTUP_NS: u64 = 30_000;
/// A barrier phase's work: this much, plus up to a fifth more.
const PHASE_NS: u64 = 200_000;
/// Timers of the workloads.
const TIMER_KTHREAD: u64 = 1 << 40;
const TIMER_INJECT: u64 = 1 << 41;
const TIMER_CASCADE: u64 = 1 << 42;
const TIMER_RELEASE: u64 = 1 << 43;
const TIMER_DAEMON: u64 = 1 << 44;

/// The injections to make and those made.
pub(crate) struct Plan {
    /// Injections still to make, the next last.
    pending: Vec<InjectionKind>,
    /// When the next one may come (set when the run starts).
    next_at: u64,
    difficulty: Difficulty,
    done: Vec<Injection>,
    /// Tasks whose switch-in ends their part of an injected incident: (task, injection
    /// index, when it began waiting).
    open: Vec<(TaskIndex, usize, u64)>,
}

impl Plan {
    /// `injections` in turns of their kinds over a run of `duration_ns`.
    pub fn new(injections: &[(InjectionKind, u32)], difficulty: Difficulty, duration_ns: u64) -> Plan {
        let mut kinds: Vec<InjectionKind> = Vec::new();
        let most = injections.iter().map(|&(_, count)| count).max().unwrap_or(0);
        for round in 0..most {
            kinds.extend(injections.iter().filter(|&&(_, count)| round < count).map(|&(kind, _)| kind));
        }
        kinds.reverse();
        Plan { pending: kinds, next_at: duration_ns / 10, difficulty, done: Vec::new(), open: Vec::new() }
    }
}

/// A pair of daemons: the client wakes the server onto its own CPU, then sleeps.
struct DaemonPair {
    client: TaskIndex,
    server: TaskIndex,
    /// The client is in its second piece of work (the server is woken).
    woke_server: bool,
}

/// Runs a workload to its end.
pub struct Run<'f> {
    machine: Machine<'f>,
    rng: Rng,
    workload: WorkloadKind,
    end_ns: u64,
    shell: TaskIndex,
    tasks: Vec<TaskIndex>,
    started: Vec<bool>,
    arrived: Vec<TaskIndex>,
    finishing: bool,
    exited: usize,
    kthreads: Vec<TaskIndex>,
    plan: Plan,
    noise: Noise,
    pairs: Vec<DaemonPair>,
    /// The traced command's tasks: the shell, the workload, hogs, pinned groups.
    command: Vec<TaskIndex>,
    /// Held tasks to release when their timer fires.
    releases: Vec<Vec<TaskIndex>>,
    groups: Vec<inject::PinnedGroup>,
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
    chain: Chain,
}

impl<'f> Run<'f> {
    pub fn new(
        machine: Machine<'f>,
        seed: u64,
        workload: WorkloadKind,
        task_count: u32,
        duration_ns: u64,
        mut plan: Plan,
    ) -> Run<'f> {
        let start = machine.now;
        plan.next_at += start;
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
            plan,
            noise: Noise::default(),
            pairs: Vec::new(),
            command: Vec::new(),
            releases: Vec::new(),
            groups: Vec::new(),
            injector: 0,
            hogs: Vec::new(),
            preemptions: Vec::new(),
            next_pid: FIRST_TASK_PID + task_count as i32,
            arrived_last: None,
            overload: None,
            cascade: None,
            chain: Chain::default(),
        }
        .with_tasks(task_count)
    }

    fn with_tasks(mut self, count: u32) -> Run<'f> {
        let cpus = self.machine.cpu_count();
        self.shell = self.machine.add_task(SHELL_PID, "sh", 120, 0);
        self.command.push(self.shell);
        for i in 0..count {
            let task = self.machine.add_task(FIRST_TASK_PID + i as i32, "sh", 120, i % cpus);
            self.tasks.push(task);
            self.command.push(task);
            self.started.push(false);
        }
        if self.workload == WorkloadKind::Mixed {
            for cpu in 0..cpus {
                let kworker =
                    self.machine.add_task(KTHREAD_PID + 2 * cpu as i32, &format!("kworker/{cpu}:1"), 120, cpu);
                let softirq =
                    self.machine.add_task(KTHREAD_PID + 2 * cpu as i32 + 1, &format!("ksoftirqd/{cpu}"), 120, cpu);
                // Per-CPU kernel threads are bound to their CPU.
                for kthread in [kworker, softirq] {
                    self.machine.tasks[kthread].allowed = Some(vec![cpu]);
                }
                self.kthreads.extend([kworker, softirq]);
            }
            let kcompactd = self.machine.add_task(KTHREAD_PID + 2 * cpus as i32, "kcompactd0", 120, 0);
            self.kthreads.push(kcompactd);
        }
        self.injector = self.machine.add_task(KTHREAD_PID - 1, "kworker/u512:1", 120, 0);
        if self.plan.difficulty != Difficulty::Clean {
            for i in 0..(cpus / 8).clamp(1, DAEMON_PAIRS_MAX) {
                let pid = DAEMON_PID + 2 * i as i32;
                let server = self.machine.add_task(pid, "syncd", 120, (2 * i) % cpus);
                let client = self.machine.add_task(pid + 1, "syncd-client", 120, (2 * i + 1) % cpus);
                self.pairs.push(DaemonPair { client, server, woke_server: false });
            }
        }
        self
    }

    /// Simulates to the end; returns the machine, the injections' truth, the noise made,
    /// the traced command's tasks and the chain workloads' critical path.
    #[allow(clippy::type_complexity)]
    pub fn run(
        mut self,
        progress: &mut dyn FnMut(u64),
    ) -> Result<(Machine<'f>, Vec<Injection>, Noise, Vec<TaskIndex>, Option<PathTruth>), SynthError> {
        let start = self.machine.now;
        let mut actions = 0u64;
        self.machine.start_running(0, self.shell)?;
        if self.workload.is_chain() {
            self.machine.exec(0, &self.program())?;
            let first = self.machine.now + self.rng.between(2_000_000, 4_000_000);
            self.machine.at(first, Action::Timer { id: TIMER_STALL });
        }
        for index in 0..self.tasks.len() {
            let task = self.tasks[index];
            self.machine.fork(0, task)?;
            let target = self.machine.place(task);
            self.machine.wake(0, task, target, true)?;
            self.machine.give_work(task, STARTUP_NS);
        }
        self.machine.stop(0, SLEEPING)?;
        if self.workload == WorkloadKind::Mixed {
            for cpu in 0..self.machine.cpu_count() {
                let first = self.machine.now + self.rng.between(100_000, 4_000_000);
                self.machine.at(first, Action::Timer { id: TIMER_KTHREAD + u64::from(cpu) });
            }
        }
        for pair in 0..self.pairs.len() {
            let first = self.machine.now + self.rng.between(100_000, 1_000_000);
            self.machine.at(first, Action::Timer { id: TIMER_DAEMON + pair as u64 });
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
        let path = self.workload.is_chain().then(|| PathTruth {
            scheduler_ns: self.chain.path_wait_ns,
            delays: std::mem::take(&mut self.chain.delays),
        });
        Ok((self.machine, self.plan.done, self.noise, self.command, path))
    }

    /// The file the workload's tasks exec.
    fn program(&self) -> String {
        match self.workload {
            WorkloadKind::Hackbench => "/usr/bin/hackbench".into(),
            WorkloadKind::Barrier | WorkloadKind::Mixed => "/usr/bin/barrier".into(),
            chain => format!("/usr/bin/{}", chain.name()),
        }
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
            self.on_path(task);
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
        if let Some(pair) = self.pairs.iter().position(|p| p.client == task || p.server == task) {
            return self.daemon_work_done(pair, task, cpu);
        }
        if let Some(group) = self.groups.iter().position(|g| g.members.contains(&task)) {
            return self.group_work_done(group, task, cpu);
        }
        let index = self.tasks.iter().position(|&t| t == task).expect("a workload task");
        let first_run = !self.started[index];
        if first_run {
            self.started[index] = true;
            self.machine.exec(cpu, &self.program())?;
        }
        match self.workload {
            WorkloadKind::Pipeline => return self.pipeline_work_done(index, first_run, cpu),
            WorkloadKind::ForkJoin => return self.fork_join_work_done(index, first_run, cpu),
            _ => {}
        }
        if self.finishing {
            return self.exit_task(cpu);
        }
        match self.workload {
            WorkloadKind::Hackbench => self.message(task, index, cpu),
            _ => self.arrive(task, cpu),
        }
    }

    fn exit_task(&mut self, cpu: u32) -> Result<(), SynthError> {
        self.exited += 1;
        if self.exited == self.tasks.len() {
            if let Some(task) = self.machine.current(cpu) {
                self.on_path(task);
            }
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
        let chosen = injection.map(|kind| self.choose(kind, &others));
        self.arrived_last = Some(task);
        self.on_path(task);
        for &other in &others {
            if chosen.as_ref().is_some_and(|c| c.held.contains(&other)) {
                continue;
            }
            let target = self.machine.place(other);
            self.machine.wake(cpu, other, target, false)?;
            let work = if self.finishing { 10_000 } else { self.phase_work() };
            self.machine.give_work(other, work);
        }
        let mut own_work = self.phase_work();
        if self.workload == WorkloadKind::LateBarrier {
            own_work *= 2;
        }
        if let Some(chosen) = chosen {
            own_work = self.inject(chosen, cpu, own_work)?;
        }
        if self.finishing {
            return self.exit_task(cpu);
        }
        self.machine.give_work(task, own_work);
        Ok(())
    }

    /// `count` different tasks of `tasks` (which has at least that many), in random order.
    fn pick(&mut self, tasks: &[TaskIndex], count: usize) -> Vec<TaskIndex> {
        let mut pool = tasks.to_vec();
        (0..count.min(pool.len())).map(|_| pool.swap_remove(self.rng.below(pool.len() as u64) as usize)).collect()
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
        if id == TIMER_STALL {
            return self.stall_timer();
        }
        if id >= TIMER_DAEMON {
            return self.daemon_timer((id - TIMER_DAEMON) as usize);
        }
        if id >= TIMER_RELEASE {
            let tasks = std::mem::take(&mut self.releases[(id - TIMER_RELEASE) as usize]);
            self.machine.release(&tasks);
            return Ok(());
        }
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
        let clean = self.plan.difficulty == Difficulty::Clean;
        // A CPU about to run a queued task is skipped: a kernel thread would not wait there.
        let running_or_free = self.machine.current(cpu).is_some() || self.machine.is_free(cpu);
        if self.machine.tasks[kthread].state == TaskState::Sleeping && running_or_free {
            self.noise.kthread_wakeups += 1;
            let work = if clean { self.rng.between(5_000, 50_000) } else { self.rng.between(2_000, 30_000) };
            if self.machine.current(cpu).is_some() {
                self.machine.preempt(cpu, kthread)?;
                self.machine.give_work(kthread, work);
            } else {
                self.machine.wake(cpu, kthread, cpu, false)?;
                self.machine.give_work(kthread, work);
            }
        }
        let interval = if clean { self.rng.between(500_000, 4_000_000) } else { self.rng.between(200_000, 1_500_000) };
        self.machine.at(self.machine.now + interval, Action::Timer { id });
        Ok(())
    }

    /// A daemon pair's timer: the client wakes (if asleep) to call the server.
    fn daemon_timer(&mut self, pair: usize) -> Result<(), SynthError> {
        if self.finishing {
            return Ok(());
        }
        let client = self.pairs[pair].client;
        if self.machine.tasks[client].state == TaskState::Sleeping {
            let target = self.machine.place(client);
            self.machine.wake(target, client, target, false)?;
            let work = self.rng.between(5_000, 20_000);
            self.machine.give_work(client, work);
            self.pairs[pair].woke_server = false;
        }
        let next = self.machine.now + self.rng.between(300_000, 1_000_000);
        self.machine.at(next, Action::Timer { id: TIMER_DAEMON + pair as u64 });
        Ok(())
    }

    /// The client wakes the server onto its own CPU and goes on briefly, then sleeps; the
    /// server answers and sleeps.
    fn daemon_work_done(&mut self, pair: usize, task: TaskIndex, cpu: u32) -> Result<(), SynthError> {
        let DaemonPair { client, server, woke_server } = self.pairs[pair];
        if task == client && !woke_server && self.machine.tasks[server].state == TaskState::Sleeping {
            self.machine.wake(cpu, server, cpu, false)?;
            self.noise.daemon_wakeups += 1;
            let answer = self.rng.between(5_000, 20_000);
            self.machine.give_work(server, answer);
            self.pairs[pair].woke_server = true;
            let rest = self.rng.between(3_000, 15_000);
            self.machine.give_work(client, rest);
            return Ok(());
        }
        self.machine.stop(cpu, SLEEPING).map(|_| ())
    }

    fn take_injection(&mut self) -> Option<InjectionKind> {
        if self.machine.now < self.plan.next_at {
            return None;
        }
        self.plan.pending.pop()
    }
}

mod chains;
mod inject;
