//! The context a recorder stores beside the events (`schedlens record` does): the
//! machine's topology, kernel tunables, the traced command and how it ended. It lives in
//! trace.dat options with ids trace-cmd does not know (from 0x7e00), which `trace-cmd
//! report` skips, so such files stay ordinary trace.dat files. This module knows the ids
//! and the text each holds, both ways; what the text means is for its readers.
//!
//! Every option is text, NUL-terminated:
//! - [`option_id::TOPOLOGY`]: `lscpu -p` style lines (`# CPU,Core,Socket,Node,LLC`);
//! - [`option_id::TUNABLES`]: `NAME=VALUE` lines (`kernel.sched_rr_timeslice_ms=100`);
//! - [`option_id::COMMAND`]: the command's arguments, each followed by a NUL;
//! - [`option_id::EXIT`]: `exit N` or `signal N`;
//! - [`option_id::PID`]: the command's process id in decimal (the root of its process
//!   tree, which the trace's first exec need not be on a busy machine);
//! - [`option_id::AFFINITY`]: `PID CPULIST` lines (`1234 0-1,4`), the CPU affinity of
//!   tasks in the order it was seen; a later line for a pid replaces an earlier one.
//!
//! To add an option: an id in [`option_id`], a member of [`RecordedContext`], a row in
//! [`OPTIONS`].

use crate::read::trace::Trace;

/// The ids of the recorded-context options.
pub mod option_id {
    pub const TOPOLOGY: u16 = 0x7e00;
    pub const TUNABLES: u16 = 0x7e01;
    pub const COMMAND: u16 = 0x7e02;
    pub const EXIT: u16 = 0x7e03;
    pub const PID: u16 = 0x7e04;
    pub const AFFINITY: u16 = 0x7e05;
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

/// How a process this one waited for ended (a status that is neither an exit nor a
/// signal, as a stopped process's, is `exit -1`).
impl From<std::process::ExitStatus> for CommandExit {
    fn from(status: std::process::ExitStatus) -> CommandExit {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => CommandExit::Code(code),
            (None, Some(signal)) => CommandExit::Signal(signal),
            (None, None) => CommandExit::Code(-1),
        }
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

/// The recorded context, as text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordedContext {
    /// `lscpu -p` style text: `CPU,Core,Socket,Node,LLC` per line.
    pub topology: Option<String>,
    /// (name, value) of each tunable that could be read.
    pub tunables: Vec<(String, String)>,
    /// The command's arguments; `None` when the whole system was recorded.
    pub command: Option<Vec<String>>,
    pub exit: Option<CommandExit>,
    /// The command's process id.
    pub pid: Option<u32>,
    /// The CPU affinity of the recorded command's tasks (or every task's), in the order
    /// seen.
    pub affinity: Vec<TaskAffinity>,
}

/// One recorded-context option: its id, how its text is read into the context and how
/// the context is written as its text (`None`: nothing to store).
pub struct RecordedOption {
    pub id: u16,
    pub name: &'static str,
    read: fn(&mut RecordedContext, &str),
    write: fn(&RecordedContext) -> Option<Vec<u8>>,
}

/// Every option, in the order they are written.
pub const OPTIONS: &[RecordedOption] = &[
    RecordedOption {
        id: option_id::TOPOLOGY,
        name: "topology",
        read: |c, text| c.topology = Some(text.to_string()),
        write: |c| c.topology.as_ref().map(|t| nul_terminated(t)),
    },
    RecordedOption {
        id: option_id::TUNABLES,
        name: "tunables",
        read: |c, text| {
            c.tunables =
                text.lines().filter_map(|l| l.split_once('=')).map(|(n, v)| (n.to_string(), v.to_string())).collect()
        },
        write: |c| Some(nul_terminated(&c.tunables.iter().map(|(n, v)| format!("{n}={v}\n")).collect::<String>())),
    },
    RecordedOption {
        id: option_id::COMMAND,
        name: "command",
        read: |c, text| c.command = Some(text.split('\0').map(str::to_string).collect()),
        write: |c| c.command.as_ref().map(|args| args.iter().flat_map(|a| [a.as_bytes(), b"\0"].concat()).collect()),
    },
    RecordedOption {
        id: option_id::EXIT,
        name: "exit",
        read: |c, text| c.exit = CommandExit::decode(text),
        write: |c| c.exit.map(|e| nul_terminated(&e.encode())),
    },
    RecordedOption {
        id: option_id::PID,
        name: "pid",
        read: |c, text| c.pid = text.trim().parse().ok(),
        write: |c| c.pid.map(|pid| nul_terminated(&pid.to_string())),
    },
    RecordedOption {
        id: option_id::AFFINITY,
        name: "affinity",
        read: |c, text| c.affinity = affinity_from(text),
        write: |c| {
            let lines: String =
                c.affinity.iter().map(|a| format!("{} {}\n", a.pid, format_cpu_list(&a.cpus))).collect();
            (!c.affinity.is_empty()).then(|| nul_terminated(&lines))
        },
    },
];

/// The affinity option's lines (malformed lines are skipped).
fn affinity_from(text: &str) -> Vec<TaskAffinity> {
    let task = |line: &str| {
        let (pid, cpus) = line.trim().split_once(' ')?;
        Some(TaskAffinity { pid: pid.parse().ok()?, cpus: parse_cpu_list(cpus)? })
    };
    text.lines().filter_map(task).collect()
}

/// The CPUs of a list as the kernel writes them (`0-3,8,10-11`), sorted and without
/// duplicates; `None` when it is malformed.
pub fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (u32, u32) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
                if first > last {
                    return None;
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

/// A sorted list of CPUs as the kernel writes it (`0-3,8`).
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    parts.join(",")
}

fn nul_terminated(text: &str) -> Vec<u8> {
    [text.as_bytes(), b"\0"].concat()
}

impl RecordedContext {
    /// Reads the context from raw (id, data) options; `None` when none is there.
    pub fn from_options(options: &[(u16, Vec<u8>)]) -> Option<RecordedContext> {
        let mut context = RecordedContext::default();
        let mut found = false;
        for (id, data) in options {
            let Some(option) = OPTIONS.iter().find(|o| o.id == *id) else { continue };
            let text = String::from_utf8_lossy(data.strip_suffix(b"\0").unwrap_or(data));
            (option.read)(&mut context, &text);
            found = true;
        }
        found.then_some(context)
    }

    /// The options that store this context.
    pub fn to_options(&self) -> Vec<(u16, Vec<u8>)> {
        OPTIONS.iter().filter_map(|o| Some((o.id, (o.write)(self)?))).collect()
    }

    /// The command as one line a shell would read back.
    pub fn command_line(&self) -> Option<String> {
        Some(self.command.as_ref()?.iter().map(|a| shell_word(a)).collect::<Vec<_>>().join(" "))
    }
}

/// An argument quoted for a POSIX shell when it needs to be.
fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain { arg.to_string() } else { format!("'{}'", arg.replace('\'', r"'\''")) }
}

impl Trace {
    /// The context the recorder stored in the file; `None` for traces without one (all
    /// of trace-cmd's).
    pub fn recorded_context(&self) -> Option<RecordedContext> {
        RecordedContext::from_options(&self.metadata().options.unknown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_survives_its_options() {
        let context = RecordedContext {
            topology: Some("# CPU,Core,Socket,Node,LLC\n0,0,0,0,0\n1,0,0,0,0\n".into()),
            tunables: vec![("kernel.sched_rr_timeslice_ms".into(), "100".into())],
            command: Some(vec!["sh".into(), "-c".into(), "echo 'a b'".into()]),
            exit: Some(CommandExit::Signal(15)),
            pid: Some(4242),
            affinity: vec![TaskAffinity { pid: 7, cpus: vec![0, 1, 3] }, TaskAffinity { pid: 8, cpus: vec![2] }],
        };
        let options = context.to_options();
        assert_eq!(
            options.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
            [0x7e00, 0x7e01, 0x7e02, 0x7e03, 0x7e04, 0x7e05]
        );
        assert_eq!(options[5].1, b"7 0-1,3\n8 2\n\0");
        assert_eq!(RecordedContext::from_options(&options), Some(context.clone()));
        assert_eq!(context.command_line().unwrap(), r"sh -c 'echo '\''a b'\'''");
        let unrelated = vec![(0x7e57, b"x".to_vec())];
        assert_eq!(RecordedContext::from_options(&unrelated), None);
        let system_wide = RecordedContext::default();
        assert_eq!(system_wide.to_options(), [(0x7e01, b"\0".to_vec())], "tunables are always stored");
    }

    #[test]
    fn affinity_lines_and_cpu_lists() {
        let parsed = affinity_from("12 0-1\n13 3,5-6\nbad line\n14\n");
        assert_eq!(parsed, [TaskAffinity { pid: 12, cpus: vec![0, 1] }, TaskAffinity { pid: 13, cpus: vec![3, 5, 6] }]);
        assert_eq!(format_cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(parse_cpu_list("0-2,5,1\n"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list("3-1"), None);
    }

    #[test]
    fn exit_text() {
        assert_eq!(CommandExit::decode("exit 1"), Some(CommandExit::Code(1)));
        assert_eq!(CommandExit::decode("signal 9"), Some(CommandExit::Signal(9)));
        assert_eq!(CommandExit::decode("gone"), None);
        assert_eq!(CommandExit::Code(2).to_string(), "exit status 2");
    }
}
