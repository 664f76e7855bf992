//! The CPU affinity of the tasks a recording can see, so that analyses can tell waste the
//! scheduler could not avoid (tasks pinned with `taskset` or `sched_setaffinity`) from
//! waste it caused. Read from `/proc/PID/task/TID/status` (`Cpus_allowed_list`):
//!
//! - with a command: its process tree, polled while it runs (every 20 ms, less often when
//!   a poll takes long, so the watcher stays under 2% of a CPU). New processes are found
//!   among the pids `/proc` lists that were not seen before, by their parent; each
//!   process's threads are listed and read on every poll, and a change is kept as a new
//!   observation. A process that lives shorter than a poll may be missed.
//! - for the whole system: every task, at the start and at the end of the recording.
//!
//! Unreadable entries (tasks that exited meanwhile) are skipped, never fatal.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tracedat::TaskAffinity;
use tracedat::recorded::parse_cpu_list;

/// The shortest time between polls.
const PERIOD: Duration = Duration::from_millis(20);
/// Polls are spaced at least this many times their own duration.
const SPACING: u32 = 50;

/// A thread that follows a command's tasks until [`AffinityWatch::finish`].
pub(crate) struct AffinityWatch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<TaskAffinity>>>,
}

impl AffinityWatch {
    /// Starts following the tree of process `root`.
    pub fn start(root: i32) -> AffinityWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("record-affinity".into())
            .spawn(move || {
                let mut tree = Tree::new(root);
                loop {
                    let began = Instant::now();
                    tree.poll();
                    if flag.load(Ordering::Relaxed) {
                        return tree.seen;
                    }
                    let pause = PERIOD.max(began.elapsed() * SPACING);
                    let until = Instant::now() + pause;
                    while Instant::now() < until && !flag.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(2).min(pause));
                    }
                }
            })
            .ok();
        AffinityWatch { stop, thread }
    }

    /// Stops the thread; what it saw, in order.
    pub fn finish(mut self) -> Vec<TaskAffinity> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default()
    }
}

impl Drop for AffinityWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Every task of the system now.
pub fn every_task() -> Vec<TaskAffinity> {
    let mut seen = Vec::new();
    for pid in numeric_entries(Path::new("/proc")) {
        for tid in numeric_entries(&Path::new("/proc").join(pid.to_string()).join("task")) {
            if let Some(cpus) = allowed_cpus(pid, tid) {
                seen.push(TaskAffinity { pid: tid, cpus });
            }
        }
    }
    seen
}

/// A command's process tree as the polls found it.
struct Tree {
    /// Processes seen in `/proc`: whether they belong to the tree.
    member: HashMap<i32, bool>,
    /// The last affinity seen per thread.
    last: HashMap<i32, Vec<u32>>,
    seen: Vec<TaskAffinity>,
}

impl Tree {
    fn new(root: i32) -> Tree {
        Tree { member: HashMap::from([(root, true)]), last: HashMap::new(), seen: Vec::new() }
    }

    fn poll(&mut self) {
        let mut pids = numeric_entries(Path::new("/proc"));
        pids.sort_unstable();
        for &pid in &pids {
            if !self.member.contains_key(&pid) {
                let parent = parent_of(pid);
                let belongs = parent.is_some_and(|p| self.member.get(&p) == Some(&true));
                self.member.insert(pid, belongs);
            }
        }
        let members: Vec<i32> = pids.into_iter().filter(|p| self.member.get(p) == Some(&true)).collect();
        for pid in members {
            for tid in numeric_entries(&Path::new("/proc").join(pid.to_string()).join("task")) {
                let Some(cpus) = allowed_cpus(pid, tid) else { continue };
                if self.last.get(&tid) != Some(&cpus) {
                    self.last.insert(tid, cpus.clone());
                    self.seen.push(TaskAffinity { pid: tid, cpus });
                }
            }
        }
    }
}

fn numeric_entries(dir: &Path) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()
}

/// The parent of a process, from `/proc/PID/stat` (its fourth field, after the
/// parenthesised name, which may hold spaces and parentheses).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// `Cpus_allowed_list` of a thread.
fn allowed_cpus(pid: i32, tid: i32) -> Option<Vec<u32>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    parse_cpu_list(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_and_its_children_are_seen() {
        let me = std::process::id() as i32;
        assert_eq!(parent_of(me), Some(unsafe { libc::getppid() }));
        let mut child = std::process::Command::new("sleep").arg("1").spawn().unwrap();
        let mut tree = Tree::new(me);
        tree.poll();
        let child_pid = child.id() as i32;
        child.kill().ok();
        child.wait().ok();
        assert!(tree.seen.iter().any(|a| a.pid == me && !a.cpus.is_empty()), "{:?}", tree.seen);
        assert!(tree.seen.iter().any(|a| a.pid == child_pid), "{:?}", tree.seen);
        assert!(!every_task().is_empty());
    }
}
