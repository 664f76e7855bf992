//! The simulated machine: CPUs that each run one task and keep a FIFO runqueue, tasks,
//! and a queue of future actions. Every scheduling step emits the events a kernel would
//! (`sched_waking`/`sched_wakeup`, `sched_migrate_task`, `sched_switch`, ...) with the
//! running task as `common_pid`, and books the ground truth the way the model measures
//! it: run time from switch-in to switch-out, a switch per switch-in, waiting from the
//! wakeup (or the preemption) to the switch-in.
//!
//! The scheduler is work-conserving by construction: a wakeup goes to the task's previous
//! CPU when it is free, else to a free CPU of the same socket, else to any free CPU, and
//! only queues when none is free; a CPU about to idle pulls a waiting task from the
//! longest queue. Incidents therefore appear only where a workload injects them (a task
//! `held` where it was placed).

use crate::SynthError;
use crate::output::{TraceOut, Who};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

pub type TaskIndex = usize;

/// `prev_state` values of `sched_switch`.
pub const RUNNABLE: i64 = 0;
pub const SLEEPING: i64 = 1;
pub const DEAD: i64 = 0x10;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TaskState {
    Sleeping,
    Queued(u32),
    Running(u32),
    Dead,
}

/// What the ground truth says of a task.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskTruth {
    pub runtime_ns: u64,
    pub switches: u64,
    pub wait_ns: u64,
}

#[derive(Clone, Debug)]
pub struct Task {
    pub pid: i32,
    pub comm: String,
    pub prio: i32,
    pub state: TaskState,
    pub last_cpu: u32,
    runnable_since: u64,
    running_since: u64,
    /// When the current piece of work ends, while running.
    done_at: u64,
    /// Work left for the next run.
    work_left: u64,
    /// Bumped whenever the task stops running, so a stale `WorkDone` is ignored.
    epoch: u64,
    /// Kept in its runqueue: idle CPUs do not pull it (an injected incident).
    pub held: bool,
    /// The CPUs it may run on (`None`: all), sorted.
    pub allowed: Option<Vec<u32>>,
    /// Its time runnable since it last blocked (the chain workloads' truth).
    pub waited_since_blocked_ns: u64,
    pub truth: TaskTruth,
}

/// A future step of the simulation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// A running task finished its piece of work.
    WorkDone { task: TaskIndex, epoch: u64 },
    /// An idle CPU picks up the task woken onto it.
    Dispatch { cpu: u32 },
    /// A workload's own timer.
    Timer { id: u64 },
}

struct CpuState {
    current: Option<TaskIndex>,
    queue: VecDeque<TaskIndex>,
    dispatch_pending: bool,
    socket: u32,
}

pub struct Machine<'f> {
    pub tasks: Vec<Task>,
    cpus: Vec<CpuState>,
    /// CPUs with nothing running, queued or about to run.
    free: BTreeSet<u32>,
    actions: BinaryHeap<Reverse<(u64, u64, Action)>>,
    sequence: u64,
    /// The time of the action being handled.
    pub now: u64,
    /// The last timestamp written: events get strictly increasing timestamps.
    last_ts: u64,
    out: TraceOut<'f>,
    /// Tasks waiting in all runqueues (none: no CPU needs to look for work to pull).
    queued: usize,
}

impl<'f> Machine<'f> {
    pub fn new(sockets: Vec<u32>, start_ns: u64, out: TraceOut<'f>) -> Machine<'f> {
        let free = (0..sockets.len() as u32).collect();
        let cpus = sockets
            .into_iter()
            .map(|socket| CpuState { current: None, queue: VecDeque::new(), dispatch_pending: false, socket })
            .collect();
        Machine {
            tasks: Vec::new(),
            cpus,
            free,
            actions: BinaryHeap::new(),
            sequence: 0,
            now: start_ns,
            last_ts: start_ns,
            out,
            queued: 0,
        }
    }

    pub fn cpu_count(&self) -> u32 {
        self.cpus.len() as u32
    }

    pub fn add_task(&mut self, pid: i32, comm: &str, prio: i32, cpu: u32) -> TaskIndex {
        self.tasks.push(Task {
            pid,
            comm: comm.to_string(),
            prio,
            state: TaskState::Sleeping,
            last_cpu: cpu,
            runnable_since: 0,
            running_since: 0,
            done_at: 0,
            work_left: 0,
            epoch: 0,
            held: false,
            allowed: None,
            waited_since_blocked_ns: 0,
            truth: TaskTruth::default(),
        });
        self.tasks.len() - 1
    }

    pub fn at(&mut self, time: u64, action: Action) {
        self.sequence += 1;
        self.actions.push(Reverse((time, self.sequence, action)));
    }

    /// The next action, with `now` moved to its time.
    pub fn next_action(&mut self) -> Option<Action> {
        let Reverse((time, _, action)) = self.actions.pop()?;
        self.now = self.now.max(time);
        Some(action)
    }

    fn tick(&mut self) -> u64 {
        self.last_ts = self.now.max(self.last_ts + 1);
        self.last_ts
    }

    fn who(&self, task: Option<TaskIndex>, cpu: u32) -> (i32, String, i32) {
        match task {
            Some(t) => (self.tasks[t].pid, self.tasks[t].comm.clone(), self.tasks[t].prio),
            None => (0, format!("swapper/{cpu}"), 120),
        }
    }

    /// When a running task last got its CPU.
    pub fn running_since(&self, task: TaskIndex) -> u64 {
        self.tasks[task].running_since
    }

    /// The pid running on `cpu` (0 when idle).
    pub fn running_pid(&self, cpu: u32) -> i32 {
        self.cpus[cpu as usize].current.map_or(0, |t| self.tasks[t].pid)
    }

    /// Nothing runs, waits or is about to run on `cpu`.
    pub fn is_free(&self, cpu: u32) -> bool {
        self.free.contains(&cpu)
    }

    pub fn current(&self, cpu: u32) -> Option<TaskIndex> {
        self.cpus[cpu as usize].current
    }

    fn refresh_free(&mut self, cpu: u32) {
        let state = &self.cpus[cpu as usize];
        if state.current.is_none() && state.queue.is_empty() && !state.dispatch_pending {
            self.free.insert(cpu);
        } else {
            self.free.remove(&cpu);
        }
    }

    /// Whether `task` may run on `cpu`.
    pub fn allows(&self, task: TaskIndex, cpu: u32) -> bool {
        self.tasks[task].allowed.as_ref().is_none_or(|allowed| allowed.contains(&cpu))
    }

    /// Where a waking task goes: its previous CPU if free, else a free CPU of its socket,
    /// else any free CPU, else its previous CPU's queue — among the CPUs it may run on.
    pub fn place(&self, task: TaskIndex) -> u32 {
        let previous = self.tasks[task].last_cpu;
        let allowed = |c: u32| self.allows(task, c);
        if self.free.contains(&previous) && allowed(previous) {
            return previous;
        }
        let socket = self.cpus[previous as usize].socket;
        let mut free = self.free.iter().copied().filter(|&c| allowed(c));
        let same_socket = free.clone().find(|&c| self.cpus[c as usize].socket == socket);
        let fallback = match &self.tasks[task].allowed {
            Some(cpus) if !cpus.contains(&previous) => cpus[0],
            _ => previous,
        };
        same_socket.or_else(|| free.next()).unwrap_or(fallback)
    }

    /// Lets idle CPUs pull the `held` tasks again (those still queued), at once.
    pub fn release(&mut self, tasks: &[TaskIndex]) {
        let mut queued = 0;
        for &task in tasks {
            if let TaskState::Queued(_) = self.tasks[task].state {
                self.tasks[task].held = false;
                queued += 1;
            }
        }
        let idle: Vec<u32> = self.free.iter().copied().take(queued).collect();
        for cpu in idle {
            self.cpus[cpu as usize].dispatch_pending = true;
            self.at(self.now + 2_000, Action::Dispatch { cpu });
            self.refresh_free(cpu);
        }
    }

    /// The affinity of `tasks` (all CPUs unless pinned), for the trace's affinity option.
    pub fn affinity(&self, tasks: &[TaskIndex]) -> Vec<tracedat::TaskAffinity> {
        let all: Vec<u32> = (0..self.cpu_count()).collect();
        tasks
            .iter()
            .map(|&t| tracedat::TaskAffinity {
                pid: self.tasks[t].pid,
                cpus: self.tasks[t].allowed.clone().unwrap_or_else(|| all.clone()),
            })
            .collect()
    }

    /// Sets the work a task does when it next runs (or, if running, from now on).
    pub fn give_work(&mut self, task: TaskIndex, ns: u64) {
        let ns = ns.max(1);
        if let TaskState::Running(_) = self.tasks[task].state {
            let t = &mut self.tasks[task];
            t.done_at = self.now + ns;
            t.epoch += 1;
            let epoch = t.epoch;
            self.at(self.now + ns, Action::WorkDone { task, epoch });
        } else {
            self.tasks[task].work_left = ns;
        }
    }

    /// Whether a `WorkDone` is still current.
    pub fn is_current(&self, task: TaskIndex, epoch: u64) -> bool {
        self.tasks[task].epoch == epoch && matches!(self.tasks[task].state, TaskState::Running(_))
    }

    /// Switches `cpu` from its current task (leaving with `prev_state`) to `next`.
    fn switch(&mut self, cpu: u32, next: Option<TaskIndex>, prev_state: i64) -> Result<u64, SynthError> {
        let prev = self.cpus[cpu as usize].current;
        let ts = self.tick();
        let (pp, pc, pr) = self.who(prev, cpu);
        let (np, nc, nr) = self.who(next, cpu);
        let prev_who = Who { pid: pp, comm: &pc, prio: pr };
        self.out.switch(cpu, ts, prev_who, prev_state, Who { pid: np, comm: &nc, prio: nr })?;
        if let Some(p) = prev {
            let task = &mut self.tasks[p];
            task.truth.runtime_ns += ts - task.running_since;
            task.epoch += 1;
            task.work_left = task.done_at.saturating_sub(ts);
            task.state = match prev_state {
                RUNNABLE => TaskState::Queued(cpu),
                DEAD => TaskState::Dead,
                _ => TaskState::Sleeping,
            };
            if prev_state != RUNNABLE {
                task.waited_since_blocked_ns = 0;
            }
            task.runnable_since = ts;
        }
        self.cpus[cpu as usize].current = next;
        if let Some(n) = next {
            let task = &mut self.tasks[n];
            task.truth.switches += 1;
            task.truth.wait_ns += ts.saturating_sub(task.runnable_since);
            task.waited_since_blocked_ns += ts.saturating_sub(task.runnable_since);
            task.running_since = ts;
            task.state = TaskState::Running(cpu);
            task.last_cpu = cpu;
            task.held = false;
            task.done_at = ts + task.work_left.max(1);
            let (epoch, done_at) = (task.epoch, task.done_at);
            self.at(done_at, Action::WorkDone { task: n, epoch });
        }
        self.refresh_free(cpu);
        Ok(ts)
    }

    /// `task` wakes up (woken from `waker_cpu`) onto `target`; returns the wakeup's time.
    pub fn wake(&mut self, waker_cpu: u32, task: TaskIndex, target: u32, new: bool) -> Result<u64, SynthError> {
        let running = self.running_pid(waker_cpu);
        let (pid, comm, prio) = self.who(Some(task), target);
        let who = Who { pid, comm: &comm, prio };
        let previous = self.tasks[task].last_cpu;
        if !new {
            let ts = self.tick();
            self.out.wake("sched_waking", waker_cpu, ts, running, who, target)?;
            if previous != target {
                let ts = self.tick();
                self.out.migrate(waker_cpu, ts, running, who, previous, target)?;
            }
        }
        let ts = self.tick();
        let event = if new { "sched_wakeup_new" } else { "sched_wakeup" };
        self.out.wake(event, waker_cpu, ts, running, who, target)?;
        let t = &mut self.tasks[task];
        t.runnable_since = ts;
        t.state = TaskState::Queued(target);
        t.last_cpu = target;
        self.cpus[target as usize].queue.push_back(task);
        self.queued += 1;
        self.kick(target);
        Ok(ts)
    }

    /// An idle CPU with a queued task picks it up a few microseconds later.
    fn kick(&mut self, cpu: u32) {
        let state = &mut self.cpus[cpu as usize];
        if state.current.is_none() && !state.dispatch_pending && !state.queue.is_empty() {
            state.dispatch_pending = true;
            let latency = 2_000 + (self.sequence % 5) * 1_000;
            self.at(self.now + latency, Action::Dispatch { cpu });
        }
        self.refresh_free(cpu);
    }

    pub fn dispatch(&mut self, cpu: u32) -> Result<(), SynthError> {
        self.cpus[cpu as usize].dispatch_pending = false;
        if self.cpus[cpu as usize].current.is_none() {
            let next = self.next_for(cpu)?;
            if next.is_some() {
                self.switch(cpu, next, RUNNABLE)?;
            }
        }
        self.refresh_free(cpu);
        Ok(())
    }

    /// The next task for `cpu`: its queue's first, else one pulled from the longest queue.
    fn next_for(&mut self, cpu: u32) -> Result<Option<TaskIndex>, SynthError> {
        if let Some(task) = self.cpus[cpu as usize].queue.pop_front() {
            self.queued -= 1;
            return Ok(Some(task));
        }
        if self.queued == 0 {
            return Ok(None);
        }
        let movable = |t: TaskIndex| !self.tasks[t].held && self.allows(t, cpu);
        let busiest = (0..self.cpu_count())
            .filter(|&c| c != cpu && self.cpus[c as usize].queue.iter().any(|&t| movable(t)))
            .max_by_key(|&c| (self.cpus[c as usize].queue.len(), Reverse(c)));
        let Some(from) = busiest else { return Ok(None) };
        let queue = &self.cpus[from as usize].queue;
        let task = *queue.iter().find(|&&t| movable(t)).expect("a movable task");
        self.take_from_queue(task)?;
        self.arrive(cpu, task, from)?;
        Ok(Some(task))
    }

    /// Takes a queued task out of its runqueue; returns the CPU it was queued on.
    fn take_from_queue(&mut self, task: TaskIndex) -> Result<u32, SynthError> {
        let TaskState::Queued(from) = self.tasks[task].state else {
            return Err(SynthError::Options(format!("task {} is not queued", self.tasks[task].pid)));
        };
        self.cpus[from as usize].queue.retain(|&t| t != task);
        self.queued -= 1;
        self.refresh_free(from);
        Ok(from)
    }

    /// A task taken from `from`'s queue migrates to `cpu` (the event is emitted there);
    /// returns the migration's time. The caller queues or runs it.
    fn arrive(&mut self, cpu: u32, task: TaskIndex, from: u32) -> Result<u64, SynthError> {
        let ts = self.tick();
        let running = self.running_pid(cpu);
        let (pid, comm, prio) = self.who(Some(task), cpu);
        self.out.migrate(cpu, ts, running, Who { pid, comm: &comm, prio }, from, cpu)?;
        self.tasks[task].state = TaskState::Queued(cpu);
        self.tasks[task].last_cpu = cpu;
        Ok(ts)
    }

    /// `task` (out of every queue) runs on `cpu` at once; the task it displaces waits at
    /// the head of the queue, held there. Returns the switch's time.
    fn run_now(&mut self, cpu: u32, task: TaskIndex) -> Result<u64, SynthError> {
        let displaced = self.cpus[cpu as usize].current;
        let ts = self.switch(cpu, Some(task), RUNNABLE)?;
        if let Some(displaced) = displaced {
            self.cpus[cpu as usize].queue.push_front(displaced);
            self.queued += 1;
            self.tasks[displaced].held = true;
        }
        self.refresh_free(cpu);
        Ok(ts)
    }

    /// The task running on `cpu` stops (`prev_state` SLEEPING or DEAD); the CPU takes the
    /// next task or idles.
    pub fn stop(&mut self, cpu: u32, prev_state: i64) -> Result<u64, SynthError> {
        let next = self.next_for(cpu)?;
        self.switch(cpu, next, prev_state)
    }

    /// The task running on `cpu` exits.
    pub fn exit(&mut self, cpu: u32) -> Result<u64, SynthError> {
        let task = self.cpus[cpu as usize].current.expect("a running task exits");
        let (pid, comm, prio) = self.who(Some(task), cpu);
        let ts = self.tick();
        self.out.exit(cpu, ts, Who { pid, comm: &comm, prio })?;
        self.stop(cpu, DEAD)
    }

    /// `task` (woken on `cpu`) runs there at once; the task it displaces goes back to the
    /// head of the queue. Returns the preemption's time.
    pub fn preempt(&mut self, cpu: u32, task: TaskIndex) -> Result<u64, SynthError> {
        self.wake(cpu, task, cpu, false)?;
        self.take_from_queue(task)?;
        self.run_now(cpu, task)
    }

    /// A load balancer on `cpu` pulls the queued `task` over and runs it at once; the
    /// task it displaces waits at the head of `cpu`'s queue. Returns the migration's time.
    pub fn pull_and_preempt(&mut self, cpu: u32, task: TaskIndex) -> Result<u64, SynthError> {
        let from = self.take_from_queue(task)?;
        let ts = self.arrive(cpu, task, from)?;
        self.run_now(cpu, task)?;
        Ok(ts)
    }

    /// A load balancer on `cpu` pulls the queued `task` to the back of `cpu`'s queue.
    pub fn pull(&mut self, cpu: u32, task: TaskIndex) -> Result<u64, SynthError> {
        let from = self.take_from_queue(task)?;
        let ts = self.arrive(cpu, task, from)?;
        self.cpus[cpu as usize].queue.push_back(task);
        self.queued += 1;
        self.kick(cpu);
        Ok(ts)
    }

    /// An injected scheduler delay: the task running on `cpu` is switched out runnable and
    /// kept in the runqueue of its CPU, which idles for `ns` before running it again (no
    /// other CPU may take it meanwhile). Returns the switch's time, or `None` when the CPU
    /// runs nothing or is about to run a queued task.
    pub fn stall(&mut self, cpu: u32, ns: u64) -> Result<Option<u64>, SynthError> {
        let state = &self.cpus[cpu as usize];
        let Some(task) = state.current.filter(|_| !state.dispatch_pending && state.queue.is_empty()) else {
            return Ok(None);
        };
        let ts = self.switch(cpu, None, RUNNABLE)?;
        self.cpus[cpu as usize].queue.push_front(task);
        self.queued += 1;
        self.tasks[task].held = true;
        self.cpus[cpu as usize].dispatch_pending = true;
        self.at(ts + ns, Action::Dispatch { cpu });
        self.refresh_free(cpu);
        Ok(Some(ts))
    }

    /// The socket of a CPU.
    pub fn socket(&self, cpu: u32) -> u32 {
        self.cpus[cpu as usize].socket
    }

    /// Forks `child` from the task running on `cpu`.
    pub fn fork(&mut self, cpu: u32, child: TaskIndex) -> Result<(), SynthError> {
        let parent = self.cpus[cpu as usize].current.expect("a running parent");
        let (pid, comm, prio) = self.who(Some(parent), cpu);
        let ts = self.tick();
        self.out.fork(cpu, ts, Who { pid, comm: &comm, prio }, self.tasks[child].pid)?;
        self.tasks[child].comm = comm;
        Ok(())
    }

    /// The task running on `cpu` execs `path`; its name becomes the file's name.
    pub fn exec(&mut self, cpu: u32, path: &str) -> Result<(), SynthError> {
        let task = self.cpus[cpu as usize].current.expect("a running task execs");
        let ts = self.tick();
        self.out.exec(cpu, ts, self.tasks[task].pid, path)?;
        let name = path.rsplit('/').next().unwrap_or(path);
        self.tasks[task].comm = name.chars().take(15).collect();
        Ok(())
    }

    /// Starts the trace: `task` is running on `cpu` (it did not wait: the trace shows it
    /// first as it is switched in).
    pub fn start_running(&mut self, cpu: u32, task: TaskIndex) -> Result<(), SynthError> {
        self.tasks[task].runnable_since = u64::MAX;
        self.switch(cpu, Some(task), RUNNABLE).map(|_| ())
    }

    /// Writes the file, with the tasks' affinity when given; returns the events written
    /// and the file's size.
    pub fn finish(
        self,
        path: &std::path::Path,
        affinity: &[tracedat::TaskAffinity],
    ) -> Result<(Vec<Task>, u64, u64), SynthError> {
        let events = self.out.events();
        let cmdlines: Vec<(i32, String)> = self.tasks.iter().map(|t| (t.pid, t.comm.clone())).collect();
        let context = tracedat::RecordedContext { affinity: affinity.to_vec(), ..Default::default() };
        let size = self.out.finish(&cmdlines, &context.to_options(), path)?;
        Ok((self.tasks, events, size))
    }
}
