//! Tasks and their names. A task is one lifetime of a pid (a reused pid starts a new
//! task); its name can change (exec, `prctl(PR_SET_NAME)`), so each task keeps a history
//! of names with the time each took effect. Names are interned: a trace has few of them.

use std::collections::HashMap;
use tracedat::{Nanos, Pid};

/// A task of one model: only the model hands them out, so every id points at a task.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(u32);

/// A name of one model's [`Comms`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommId(u32);

impl TaskId {
    /// The idle task (pid 0, `swapper/N`), shared by all CPUs.
    pub const IDLE: TaskId = TaskId(0);

    /// The task's position in [`Tasks`] (`0..tasks.len()`), for per-task arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl CommId {
    /// The name's position in [`Comms`] (`0..comms.len()`), for per-name arrays.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Interned task names.
#[derive(Clone, Debug, Default)]
pub struct Comms {
    names: Vec<String>,
    ids: HashMap<Vec<u8>, CommId>,
}

impl Comms {
    pub(crate) fn intern(&mut self, name: &[u8]) -> CommId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = CommId(self.names.len() as u32);
        self.names.push(String::from_utf8_lossy(name).into_owned());
        self.ids.insert(name.to_vec(), id);
        id
    }

    pub fn name(&self, id: CommId) -> &str {
        // Ids come from this table only.
        &self.names[id.0 as usize]
    }

    pub fn find(&self, name: &str) -> Option<CommId> {
        self.ids.get(name.as_bytes()).copied()
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (CommId, &str)> {
        self.names.iter().enumerate().map(|(i, n)| (CommId(i as u32), n.as_str()))
    }
}

/// What the trace tells about one task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub pid: Pid,
    /// Names with the time each took effect, oldest first; never empty.
    pub comms: Vec<(Nanos, CommId)>,
    /// The task that forked it, when the fork is in the trace.
    pub parent: Option<TaskId>,
    /// Created during the trace (fork or wakeup_new seen).
    pub forked: bool,
    pub first_seen: Nanos,
    /// `sched_process_exit` time.
    pub exit: Option<Nanos>,
    /// `sched_process_exec` times and file names.
    pub execs: Vec<(Nanos, String)>,
}

impl Task {
    /// The name the task had at `time`.
    pub fn comm_at(&self, time: Nanos) -> CommId {
        let index = self.comms.partition_point(|&(t, _)| t <= time);
        self.comms[index.saturating_sub(1)].1
    }

    /// The stretch of time `[from, until)` during which the task had the name it had at
    /// `time` (from the start of time for its first name, to the end for its last).
    pub fn comm_span_at(&self, time: Nanos) -> (Nanos, Nanos) {
        let index = self.comms.partition_point(|&(t, _)| t <= time).saturating_sub(1);
        let from = if index == 0 { Nanos::ZERO } else { self.comms[index].0 };
        let until = self.comms.get(index + 1).map_or(Nanos(u64::MAX), |&(t, _)| t);
        (from, until)
    }

    /// The name the task had last.
    pub fn last_comm(&self) -> CommId {
        self.comms.last().expect("a task always has a name").1
    }
}

/// Dense pid → task lookup for usual pids, a map for outlandish ones.
#[derive(Clone, Debug, Default)]
struct PidIndex {
    dense: Vec<u32>,
    sparse: HashMap<i32, u32>,
}

const DENSE_PIDS: usize = 1 << 23;
const NO_TASK: u32 = u32::MAX;

impl PidIndex {
    #[inline]
    fn get(&self, pid: Pid) -> Option<TaskId> {
        let slot = match usize::try_from(pid.0) {
            Ok(p) if p < DENSE_PIDS => self.dense.get(p).copied().unwrap_or(NO_TASK),
            _ => self.sparse.get(&pid.0).copied().unwrap_or(NO_TASK),
        };
        (slot != NO_TASK).then_some(TaskId(slot))
    }

    fn set(&mut self, pid: Pid, task: TaskId) {
        match usize::try_from(pid.0) {
            Ok(p) if p < DENSE_PIDS => {
                if self.dense.len() <= p {
                    self.dense.resize((p + 1).next_power_of_two().min(DENSE_PIDS), NO_TASK);
                }
                self.dense[p] = task.0;
            }
            _ => {
                self.sparse.insert(pid.0, task.0);
            }
        }
    }
}

/// All tasks of a trace; task 0 is the idle task.
#[derive(Clone, Debug)]
pub struct Tasks {
    list: Vec<Task>,
    by_pid: PidIndex,
    /// Each task's current name, for a quick "same name?" test on every event.
    current_comm: Vec<CommId>,
    /// When each task was last named by an event (kept apart: it changes on every event).
    last_seen: Vec<Nanos>,
}

impl Tasks {
    pub(crate) fn new(comms: &mut Comms) -> Tasks {
        let mut tasks =
            Tasks { list: Vec::new(), by_pid: PidIndex::default(), current_comm: Vec::new(), last_seen: Vec::new() };
        tasks.create(Pid::IDLE, comms.intern(b"<idle>"), Nanos::ZERO);
        tasks
    }

    /// The current task of `pid`.
    #[inline]
    pub fn by_pid(&self, pid: Pid) -> Option<TaskId> {
        self.by_pid.get(pid)
    }

    pub(crate) fn create(&mut self, pid: Pid, comm: CommId, time: Nanos) -> TaskId {
        let id = TaskId(self.list.len() as u32);
        self.list.push(Task {
            pid,
            comms: vec![(time, comm)],
            parent: None,
            forked: false,
            first_seen: time,
            exit: None,
            execs: Vec::new(),
        });
        self.by_pid.set(pid, id);
        self.current_comm.push(comm);
        self.last_seen.push(time);
        id
    }

    /// When the task was last named by an event.
    pub fn last_seen(&self, id: TaskId) -> Nanos {
        self.last_seen[id.index()]
    }

    pub fn get(&self, id: TaskId) -> &Task {
        // Ids come from this table only.
        &self.list[id.index()]
    }

    pub(crate) fn get_mut(&mut self, id: TaskId) -> &mut Task {
        &mut self.list[id.index()]
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (TaskId, &Task)> {
        self.list.iter().enumerate().map(|(i, t)| (TaskId(i as u32), t))
    }

    /// Every task's id, in order.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = TaskId> + use<> {
        (0..self.list.len() as u32).map(TaskId)
    }

    /// Records that the task was seen at `time` named `comm` (when the event names it).
    #[inline]
    pub(crate) fn seen(&mut self, id: TaskId, time: Nanos, comm: Option<CommId>) {
        let last_seen = &mut self.last_seen[id.index()];
        *last_seen = (*last_seen).max(time);
        match comm {
            Some(comm) if comm != self.current_comm[id.index()] => self.rename(id, time, comm),
            _ => {}
        }
    }

    #[cold]
    fn rename(&mut self, id: TaskId, time: Nanos, comm: CommId) {
        self.list[id.index()].comms.push((time, comm));
        self.current_comm[id.index()] = comm;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_history_answers_by_time() {
        let mut comms = Comms::default();
        let mut tasks = Tasks::new(&mut comms);
        let sh = comms.intern(b"sh");
        let sleep = comms.intern(b"sleep");
        let t = tasks.create(Pid(42), sh, Nanos(100));
        tasks.seen(t, Nanos(200), Some(sleep));
        tasks.seen(t, Nanos(300), Some(sleep));
        let task = tasks.get(t);
        assert_eq!(task.comms.len(), 2);
        assert_eq!(comms.name(task.comm_at(Nanos(150))), "sh");
        assert_eq!(comms.name(task.comm_at(Nanos(200))), "sleep");
        assert_eq!(comms.name(task.comm_at(Nanos(50))), "sh", "before the first sighting: the first name");
        assert_eq!(tasks.last_seen(t), Nanos(300));
        assert_eq!(tasks.by_pid(Pid(42)), Some(t));
        assert_eq!(tasks.by_pid(Pid(0)), Some(TaskId::IDLE));
        assert_eq!(tasks.by_pid(Pid(1 << 30)), None);
    }
}
