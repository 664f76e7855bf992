//! Workloads with dependency chains, for the critical path, and the scheduler delays
//! injected into them on the path and off it. The shell execs the workload's program
//! first (so it is the traced command, its tasks its process tree), forks the tasks and
//! sleeps until the last one exits.
//!
//! - pipeline: a token goes round the tasks in turn; each works 100–150 µs with it, wakes
//!   the next and sleeps. Only the token's holder runs: every stage is on the path.
//! - fork-join: a master works 50 µs, wakes every worker and sleeps; worker 1 works
//!   250 µs, the others 100–120 µs; the last to finish (worker 1) wakes the master.
//! - late-barrier: the barrier whose last arriver releases the others, with the releaser
//!   working twice as long as the rest: the first one late stays late, and holds everyone.
//!
//! Every 2–4 ms a running task is kept off the CPU for a while, its CPU idling (see
//! `Machine::stall`): alternately on the path (the token's holder, worker 1, the late
//! task: 50–200 µs) and, but in the pipeline, off it (another worker: 20–60 µs, less than
//! its slack, so the path does not change).
//!
//! The truth books, as the run goes, the time the path's tasks were runnable: every wait
//! on the path is on an idle CPU (there are no more tasks than CPUs, and wakeups go to a
//! free CPU), so it is the scheduler's share the critical path must find. A task's waits
//! since it last blocked are added when it is known to be on the path: a pipeline stage
//! at its end, the master at the end of its serial work, the worker that wakes the
//! master, the barrier's releaser, the last task to exit and the shell.

use super::Run;
use crate::SynthError;
use crate::machine::{SLEEPING, TaskIndex, TaskState};
use crate::truth::Delay;

/// The stall timer's id.
pub(super) const TIMER_STALL: u64 = 1 << 45;

/// A chain workload's state and truth.
#[derive(Default)]
pub(super) struct Chain {
    /// The path's time runnable so far (the truth's scheduler share).
    pub path_wait_ns: u64,
    pub delays: Vec<Delay>,
    /// Pipeline: the task holding the token; tasks given the token before they slept.
    holder: usize,
    token: Vec<bool>,
    /// Fork-join: workers done this round.
    arrived: usize,
    /// Stalls made, to alternate on and off the path.
    turns: u64,
}

/// Fork-join: the master's serial work, and the workers'.
const SERIAL_NS: u64 = 50_000;
const LONG_NS: u64 = 250_000;
/// Work of a task woken to exit.
const LAST_NS: u64 = 10_000;

impl Run<'_> {
    /// The task's waits since it last blocked (or was last found on the path) are on the
    /// path.
    pub(super) fn on_path(&mut self, task: TaskIndex) {
        self.chain.path_wait_ns += std::mem::take(&mut self.machine.tasks[task].waited_since_blocked_ns);
    }

    /// Pipeline: a stage ended (or the task's first run did).
    pub(super) fn pipeline_work_done(&mut self, index: usize, first_run: bool, cpu: u32) -> Result<(), SynthError> {
        let task = self.tasks[index];
        if self.chain.token.len() < self.tasks.len() {
            self.chain.token = vec![false; self.tasks.len()];
        }
        if first_run && index != 0 && !self.chain.token[index] {
            self.machine.stop(cpu, SLEEPING)?;
            return Ok(());
        }
        if first_run {
            let work = self.rng.between(100_000, 150_000);
            self.machine.give_work(task, work);
            return Ok(());
        }
        self.on_path(task);
        if self.machine.now >= self.end_ns {
            self.finishing = true;
        }
        let next_index = (index + 1) % self.tasks.len();
        let next = self.tasks[next_index];
        if self.finishing && self.exited + 1 == self.tasks.len() {
            return self.exit_task(cpu);
        }
        let work = if self.finishing { LAST_NS } else { self.rng.between(100_000, 150_000) };
        if self.machine.tasks[next].state == TaskState::Sleeping {
            let target = self.machine.place(next);
            self.machine.wake(cpu, next, target, false)?;
            self.machine.give_work(next, work);
        } else {
            self.chain.token[next_index] = true;
        }
        self.chain.holder = next_index;
        if self.finishing {
            return self.exit_task(cpu);
        }
        self.machine.stop(cpu, SLEEPING).map(|_| ())
    }

    /// Fork-join: the master's serial work ended, or a worker's part did.
    pub(super) fn fork_join_work_done(&mut self, index: usize, first_run: bool, cpu: u32) -> Result<(), SynthError> {
        let task = self.tasks[index];
        if first_run {
            if index == 0 {
                self.machine.give_work(task, 6 * SERIAL_NS);
                return Ok(());
            }
            self.machine.stop(cpu, SLEEPING)?;
            return Ok(());
        }
        if self.finishing {
            return self.exit_task(cpu);
        }
        if index == 0 {
            self.on_path(task);
            if self.machine.now >= self.end_ns {
                self.finishing = true;
            }
            self.chain.arrived = 0;
            for worker in 1..self.tasks.len() {
                let work = match (self.finishing, worker) {
                    (true, _) => LAST_NS,
                    (false, 1) => LONG_NS,
                    (false, _) => self.rng.between(100_000, 120_000),
                };
                let woken = self.tasks[worker];
                let target = self.machine.place(woken);
                self.machine.wake(cpu, woken, target, false)?;
                self.machine.give_work(woken, work);
            }
            if self.finishing {
                return self.exit_task(cpu);
            }
            return self.machine.stop(cpu, SLEEPING).map(|_| ());
        }
        self.chain.arrived += 1;
        if self.chain.arrived + 1 == self.tasks.len() {
            self.on_path(task);
            let master = self.tasks[0];
            let target = self.machine.place(master);
            self.machine.wake(cpu, master, target, false)?;
            self.machine.give_work(master, SERIAL_NS);
        }
        self.machine.stop(cpu, SLEEPING).map(|_| ())
    }

    /// The stall timer: keeps a running task off its CPU, on the path or off it.
    pub(super) fn stall_timer(&mut self) -> Result<(), SynthError> {
        if self.finishing {
            return Ok(());
        }
        let turn = self.chain.turns;
        let on_path = turn % 2 == 0 || self.workload == crate::WorkloadKind::Pipeline;
        let target = match self.workload {
            crate::WorkloadKind::Pipeline => Some(self.tasks[self.chain.holder]),
            crate::WorkloadKind::ForkJoin => Some(self.tasks[if on_path { 1 } else { 2 }]),
            _ if on_path => self.arrived_last,
            _ => self.tasks.iter().copied().find(|&t| Some(t) != self.arrived_last && self.is_running(t)),
        };
        let length = if on_path { self.rng.between(50_000, 200_000) } else { self.rng.between(20_000, 60_000) };
        if let Some((task, TaskState::Running(cpu))) = target.map(|t| (t, self.machine.tasks[t].state))
            && let Some(start_ns) = self.machine.stall(cpu, length)?
        {
            let pid = self.machine.tasks[task].pid;
            self.chain.delays.push(Delay { pid, start_ns, end_ns: start_ns + length, on_path });
            self.chain.turns += 1;
        }
        let next = self.machine.now + self.rng.between(2_000_000, 4_000_000);
        self.machine.at(next, crate::machine::Action::Timer { id: TIMER_STALL });
        Ok(())
    }

    fn is_running(&self, task: TaskIndex) -> bool {
        matches!(self.machine.tasks[task].state, TaskState::Running(_))
    }
}
