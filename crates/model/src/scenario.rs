//! Hand-built scheduler event streams for tests, and an ASCII drawing of the model they
//! produce, so a test can state the timeline it expects as a picture. One column is
//! `UNIT` ns. In a CPU row, a letter is the running task (the first letter of its name
//! at that time, upper case), `.` idle, `?` uncertain and blank not yet known; in its `q`
//! row, a lower-case letter is a task waiting in that CPU's runqueue (`+` for several).

use crate::tracker::{Tracker, TrackerOptions};
use crate::*;
use std::collections::HashMap;

/// Builds a stream of scheduler events by hand.
pub struct Scenario {
    tracker: Tracker<'static>,
    names: HashMap<i32, &'static str>,
}

/// `prev_state` of a preempted task.
pub const R: u16 = 0;
/// `prev_state` of a sleeping task.
pub const S: u16 = 1;

impl Scenario {
    pub fn new(cpus: u32, tasks: &[(i32, &'static str)]) -> Scenario {
        let mut names: HashMap<i32, &'static str> = tasks.iter().copied().collect();
        names.insert(0, "swapper");
        let initial_names = tasks.iter().map(|&(pid, name)| (pid, name.to_string())).collect();
        let options = TrackerOptions { initial_names, detail: Detail::FULL, ..TrackerOptions::default() };
        Scenario { tracker: Tracker::new(cpus, options), names }
    }

    fn name(&self, pid: i32) -> &'static [u8] {
        self.names.get(&pid).copied().unwrap_or("?").as_bytes()
    }

    fn feed(&mut self, time: u64, cpu: u32, running: i32, event: SchedEvent<'_>) {
        let ctx = EventContext { ts: Nanos(time), cpu: Cpu(cpu), pid: Pid(running) };
        self.tracker.event(ctx, &event, &mut |name: &[u8], comms| (!name.is_empty()).then(|| comms.intern(name)));
    }

    pub fn switch(&mut self, time: u64, cpu: u32, prev: i32, prev_state: u16, next: i32) -> &mut Self {
        let (prev_comm, next_comm) = (self.name(prev), self.name(next));
        let event = SchedEvent::Switch { prev_pid: Pid(prev), prev_comm, prev_state, next_pid: Pid(next), next_comm };
        self.feed(time, cpu, prev, event);
        self
    }

    /// `by` on `cpu` wakes `pid` (`sched_waking` then `sched_wakeup` placing it on `target`).
    pub fn wake(&mut self, time: u64, cpu: u32, by: i32, pid: i32, target: u32) -> &mut Self {
        let comm = self.name(pid);
        self.feed(time, cpu, by, SchedEvent::Waking { pid: Pid(pid), comm, target_cpu: None });
        self.feed(
            time,
            cpu,
            by,
            SchedEvent::Wakeup { pid: Pid(pid), comm, target_cpu: Some(Cpu(target)), success: None },
        );
        self
    }

    /// `by` on `cpu` wakes `pid` onto `target` with `sched_wakeup` alone (no `sched_waking`:
    /// who woke it is not recorded).
    pub fn wake_unannounced(&mut self, time: u64, cpu: u32, by: i32, pid: i32, target: u32) -> &mut Self {
        let comm = self.name(pid);
        let event = SchedEvent::Wakeup { pid: Pid(pid), comm, target_cpu: Some(Cpu(target)), success: None };
        self.feed(time, cpu, by, event);
        self
    }

    pub fn migrate(&mut self, time: u64, cpu: u32, by: i32, pid: i32, from: u32, to: u32) -> &mut Self {
        let comm = self.name(pid);
        let event = SchedEvent::MigrateTask { pid: Pid(pid), comm, orig_cpu: Cpu(from), dest_cpu: Cpu(to) };
        self.feed(time, cpu, by, event);
        self
    }

    pub fn fork(&mut self, time: u64, cpu: u32, parent: i32, child: i32) -> &mut Self {
        let (parent_comm, child_comm) = (self.name(parent), self.name(parent));
        let event = SchedEvent::Fork { parent_pid: Pid(parent), parent_comm, child_pid: Pid(child), child_comm };
        self.feed(time, cpu, parent, event);
        let comm = self.name(parent);
        self.feed(time, cpu, parent, SchedEvent::WakeupNew { pid: Pid(child), comm, target_cpu: Some(Cpu(cpu)) });
        self
    }

    pub fn exec(&mut self, time: u64, cpu: u32, pid: i32, filename: &'static str) -> &mut Self {
        self.names.insert(pid, filename.rsplit('/').next().unwrap_or(filename));
        self.feed(time, cpu, pid, SchedEvent::Exec { pid: Pid(pid), filename: filename.as_bytes() });
        self
    }

    pub fn exit(&mut self, time: u64, cpu: u32, pid: i32) -> &mut Self {
        let comm = self.name(pid);
        self.feed(time, cpu, pid, SchedEvent::Exit { pid: Pid(pid), comm });
        self
    }

    /// Any other event: it only shows who runs on `cpu`.
    pub fn other(&mut self, time: u64, cpu: u32, running: i32) -> &mut Self {
        self.feed(time, cpu, running, SchedEvent::Other);
        self
    }

    pub fn lost(&mut self, cpu: u32, count: u64) -> &mut Self {
        self.tracker.lost(Cpu(cpu), Some(count));
        self
    }

    /// The recorder's statistics say the kernel overwrote some of `cpu`'s events (call
    /// before the CPU's first event).
    pub fn overwritten(&mut self, cpu: u32) -> &mut Self {
        self.tracker.note_overwritten(Cpu(cpu));
        self
    }

    /// An event whose record lacks a field the model needs.
    pub fn unreadable(&mut self, time: u64, cpu: u32, running: i32) -> &mut Self {
        self.feed(time, cpu, running, SchedEvent::Unreadable);
        self
    }

    pub fn finish(&mut self) -> Model {
        std::mem::replace(&mut self.tracker, Tracker::new(1, TrackerOptions::default())).finish()
    }
}

/// Nanoseconds per drawing column.
pub const UNIT: u64 = 10;

/// Draws the model's CPUs and runqueues as text (see the module comment).
pub fn draw(model: &Model) -> String {
    let columns = (model.end().0 / UNIT) as usize;
    let mut out = String::new();
    for timeline in model.cpus() {
        let mut run = vec![' '; columns];
        let mut queue = vec!['.'; columns];
        for column in 0..columns {
            let t = Nanos(column as u64 * UNIT);
            let seen = timeline.first_event().is_some_and(|f| f <= t);
            if seen || timeline.uncertain().iter().any(|&(start, end)| start <= t && t < end) {
                run[column] = '?';
            }
            for s in timeline.segments().iter().filter(|s| s.start <= t && t < s.end) {
                run[column] = if s.task == TaskId::IDLE { '.' } else { first_letter(model, s.task, t, false) };
            }
            let waiting: Vec<char> = timeline
                .queue()
                .iter()
                .filter(|p| p.start <= t && t < p.end)
                .map(|p| first_letter(model, model.waits().task(p.wait.expect("a scenario model has waits")), t, true))
                .collect();
            queue[column] = match waiting.len() {
                0 => '.',
                1 => waiting[0],
                _ => '+',
            };
        }
        out.push_str(&format!("{}: {}\n", timeline.cpu().0, run.iter().collect::<String>().trim_end()));
        out.push_str(&format!("{}q {}\n", timeline.cpu().0, queue.iter().collect::<String>()));
    }
    out
}

/// The first letter of the task's name at time `t`.
fn first_letter(model: &Model, task: TaskId, t: Nanos, lower: bool) -> char {
    let c = model.comm_at(task, t).chars().next().unwrap_or('?');
    if lower { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() }
}

/// Asserts that the model draws as `expected` (indentation and trailing blanks ignored).
pub fn assert_drawing(model: &Model, expected: &str) {
    let expected: String =
        expected.lines().map(str::trim).filter(|l| !l.is_empty()).map(|l| format!("{l}\n")).collect();
    let drawn: String = draw(model).lines().map(|l| format!("{}\n", l.trim_end())).collect();
    assert_eq!(drawn, expected, "\ndrawn:\n{drawn}\nexpected:\n{expected}");
}
