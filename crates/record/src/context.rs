//! The context schedlens stores next to the events: topology, scheduler tunables, the
//! command and how it ended. It lives in trace.dat options with ids trace-cmd does not
//! know (from 0x7e00), which `trace-cmd report` skips silently, so recorded files stay
//! ordinary trace.dat files. The clock and uname go in trace-cmd's own options.
//!
//! Formats (each text NUL-terminated):
//! - [`option_id::TOPOLOGY`]: `model::Topology::to_lscpu` text (`# CPU,Core,Socket,Node,LLC`);
//! - [`option_id::TUNABLES`]: `NAME=VALUE` lines: sysctl names (`kernel.sched_rr_timeslice_ms=100`)
//!   and debugfs paths (`sched/base_slice_ns=3000000`);
//! - [`option_id::COMMAND`]: the command's arguments, each followed by a NUL;
//! - [`option_id::EXIT`]: `exit N` or `signal N`;
//! - [`option_id::AFFINITY`]: `PID CPULIST` lines (`1234 0-1,4`), the CPU affinity of
//!   tasks in the order it was seen; a later line for a pid replaces an earlier one.

use model::Topology;
use tracedat::Trace;

/// The option ids schedlens writes.
pub mod option_id {
    pub const TOPOLOGY: u16 = 0x7e00;
    pub const TUNABLES: u16 = 0x7e01;
    pub const COMMAND: u16 = 0x7e02;
    pub const EXIT: u16 = 0x7e03;
    pub const AFFINITY: u16 = 0x7e04;
}

/// The CPUs a task may run on, as seen at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskAffinity {
    pub pid: i32,
    /// Sorted.
    pub cpus: Vec<u32>,
}

/// How the recorded command ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CommandExit {
    Code(i32),
    Signal(i32),
}

impl CommandExit {
    fn encode(&self) -> String {
        match self {
            CommandExit::Code(n) => format!("exit {n}"),
            CommandExit::Signal(n) => format!("signal {n}"),
        }
    }

    fn decode(text: &str) -> Option<CommandExit> {
        let (kind, number) = text.split_once(' ')?;
        let number = number.parse().ok()?;
        match kind {
            "exit" => Some(CommandExit::Code(number)),
            "signal" => Some(CommandExit::Signal(number)),
            _ => None,
        }
    }

    pub fn success(&self) -> bool {
        *self == CommandExit::Code(0)
    }
}

impl std::fmt::Display for CommandExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommandExit::Code(n) => write!(f, "exit status {n}"),
            CommandExit::Signal(n) => write!(f, "killed by signal {n}"),
        }
    }
}

/// What schedlens recorded about the machine and the run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordedContext {
    pub topology: Option<Topology>,
    /// (name, value) of each scheduler tunable that could be read.
    pub tunables: Vec<(String, String)>,
    /// The command's arguments; `None` when the whole system was recorded.
    pub command: Option<Vec<String>>,
    pub exit: Option<CommandExit>,
    /// The CPU affinity of the recorded command's tasks, in the order seen.
    pub affinity: Vec<TaskAffinity>,
}

/// The context of a trace schedlens recorded; `None` for other traces.
pub fn recorded_context(trace: &Trace) -> Option<RecordedContext> {
    RecordedContext::from_options(&trace.metadata().options.unknown)
}

impl RecordedContext {
    /// Reads the context from raw (id, data) options; `None` when none is there.
    pub fn from_options(options: &[(u16, Vec<u8>)]) -> Option<RecordedContext> {
        let mut context = RecordedContext::default();
        let mut found = false;
        for (id, data) in options {
            let text = String::from_utf8_lossy(data.strip_suffix(b"\0").unwrap_or(data));
            match *id {
                option_id::TOPOLOGY => context.topology = Topology::from_lscpu(&text).ok(),
                option_id::TUNABLES => context.tunables = text.lines().filter_map(split_tunable).collect(),
                option_id::COMMAND => context.command = Some(text.split('\0').map(str::to_string).collect()),
                option_id::EXIT => context.exit = CommandExit::decode(&text),
                option_id::AFFINITY => context.affinity = affinity_from(&text),
                _ => continue,
            }
            found = true;
        }
        found.then_some(context)
    }

    /// The options that store this context.
    pub fn to_options(&self) -> Vec<(u16, Vec<u8>)> {
        let text = |s: String| [s.into_bytes(), vec![0]].concat();
        let mut options = Vec::new();
        if let Some(topology) = &self.topology {
            options.push((option_id::TOPOLOGY, text(topology.to_lscpu())));
        }
        if !self.tunables.is_empty() {
            let tunables: String = self.tunables.iter().map(|(name, value)| format!("{name}={value}\n")).collect();
            options.push((option_id::TUNABLES, text(tunables)));
        }
        if let Some(command) = &self.command {
            options.push((option_id::COMMAND, command.iter().flat_map(|a| [a.as_bytes(), b"\0"].concat()).collect()));
        }
        if let Some(exit) = &self.exit {
            options.push((option_id::EXIT, text(exit.encode())));
        }
        if !self.affinity.is_empty() {
            let lines: String =
                self.affinity.iter().map(|a| format!("{} {}\n", a.pid, crate::cpulist::format(&a.cpus))).collect();
            options.push((option_id::AFFINITY, text(lines)));
        }
        options
    }

    /// What `schedlens info` shows: (label, text) lines for the command and how it ended,
    /// the topology and each tunable.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        let mut lines = Vec::new();
        if let Some(command) = self.command_line() {
            let ended = self.exit.map_or_else(|| "end not recorded".to_string(), |e| e.to_string());
            lines.push(("command", format!("{command} ({ended})")));
        }
        if let Some(topology) = &self.topology {
            lines.push(("topology", topology_summary(topology)));
        }
        lines.extend(collapse_per_cpu(&self.tunables).into_iter().map(|(n, v)| ("tunable", format!("{n} = {v}"))));
        lines
    }

    /// The command as one line a shell would read back.
    pub fn command_line(&self) -> Option<String> {
        Some(self.command.as_ref()?.iter().map(|a| shell_word(a)).collect::<Vec<_>>().join(" "))
    }
}

/// The number of distinct values of a CPU's place field.
fn distinct(topology: &Topology, field: impl Fn(&model::CpuPlace) -> u32) -> usize {
    topology.places().iter().map(field).collect::<std::collections::BTreeSet<_>>().len()
}

fn topology_summary(t: &Topology) -> String {
    format!(
        "{} CPUs, {} cores, {} last-level caches, {} sockets, {} NUMA nodes",
        t.places().len(),
        distinct(t, |p| p.core),
        distinct(t, |p| p.llc),
        distinct(t, |p| p.socket),
        distinct(t, |p| p.node)
    )
}

/// Per-CPU tunables (`sched/fair_server/cpu3/runtime`) with one value on every CPU shown
/// once (`sched/fair_server/cpu*/runtime`); the others as they are.
fn collapse_per_cpu(tunables: &[(String, String)]) -> Vec<(String, String)> {
    let pattern = |name: &str| {
        let parts: Vec<&str> = name
            .split('/')
            .map(|part| match part.strip_prefix("cpu") {
                Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => "cpu*",
                _ => part,
            })
            .collect();
        parts.join("/")
    };
    let mut groups: Vec<(String, Vec<&(String, String)>)> = Vec::new();
    for tunable in tunables {
        let key = pattern(&tunable.0);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(tunable),
            None => groups.push((key, vec![tunable])),
        }
    }
    groups
        .into_iter()
        .flat_map(|(key, members)| match members.iter().all(|m| m.1 == members[0].1) {
            true => vec![(key, members[0].1.clone())],
            false => members.into_iter().cloned().collect(),
        })
        .collect()
}

/// The affinity option's lines (malformed lines are skipped).
fn affinity_from(text: &str) -> Vec<TaskAffinity> {
    let task = |line: &str| {
        let (pid, cpus) = line.trim().split_once(' ')?;
        Some(TaskAffinity { pid: pid.parse().ok()?, cpus: crate::cpulist::parse(cpus)? })
    };
    text.lines().filter_map(task).collect()
}

fn split_tunable(line: &str) -> Option<(String, String)> {
    let (name, value) = line.split_once('=')?;
    Some((name.to_string(), value.to_string()))
}

/// An argument quoted for a POSIX shell when it needs to be.
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain { arg.to_string() } else { format!("'{}'", arg.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_survives_its_options() {
        let context = RecordedContext {
            topology: Some(Topology::from_spec("sockets=2,smt=2", 8).unwrap()),
            tunables: vec![("kernel.sched_rr_timeslice_ms".into(), "100".into())],
            command: Some(vec!["sh".into(), "-c".into(), "echo 'a b'".into()]),
            exit: Some(CommandExit::Signal(15)),
            affinity: vec![TaskAffinity { pid: 7, cpus: vec![0, 1, 3] }, TaskAffinity { pid: 8, cpus: vec![2] }],
        };
        assert_eq!(RecordedContext::from_options(&context.to_options()), Some(context.clone()));
        assert_eq!(context.command_line().unwrap(), r"sh -c 'echo '\''a b'\'''");
        let unrelated = vec![(0x7e57, b"x".to_vec())];
        assert_eq!(RecordedContext::from_options(&unrelated), None);
    }

    #[test]
    fn description_collapses_equal_per_cpu_tunables() {
        let tunable = |n: &str, v: &str| (n.to_string(), v.to_string());
        let context = RecordedContext {
            topology: Some(Topology::from_spec("sockets=2,smt=2", 8).unwrap()),
            tunables: vec![
                tunable("sched/fair_server/cpu0/runtime", "50"),
                tunable("sched/fair_server/cpu1/runtime", "50"),
                tunable("sched/fair_server/cpu0/period", "1"),
                tunable("sched/fair_server/cpu1/period", "2"),
            ],
            command: Some(vec!["true".into()]),
            exit: Some(CommandExit::Code(0)),
            affinity: Vec::new(),
        };
        let text: Vec<String> = context.describe().iter().map(|(l, t)| format!("{l}: {t}")).collect();
        assert_eq!(
            text,
            [
                "command: true (exit status 0)",
                "topology: 8 CPUs, 4 cores, 2 last-level caches, 2 sockets, 2 NUMA nodes",
                "tunable: sched/fair_server/cpu*/runtime = 50",
                "tunable: sched/fair_server/cpu0/period = 1",
                "tunable: sched/fair_server/cpu1/period = 2",
            ]
        );
    }

    #[test]
    fn affinity_lines() {
        let parsed = affinity_from("12 0-1\n13 3,5-6\nbad line\n14\n");
        assert_eq!(parsed, [TaskAffinity { pid: 12, cpus: vec![0, 1] }, TaskAffinity { pid: 13, cpus: vec![3, 5, 6] }]);
    }

    #[test]
    fn exit_text() {
        assert_eq!(CommandExit::decode("exit 1"), Some(CommandExit::Code(1)));
        assert_eq!(CommandExit::decode("signal 9"), Some(CommandExit::Signal(9)));
        assert_eq!(CommandExit::decode("gone"), None);
        assert_eq!(CommandExit::Code(2).to_string(), "exit status 2");
    }
}
