//! What a recording is and what recorded it, as (label, text) lines: the file, its
//! format and sizes, the recorder, and what `schedlens record` kept (the command and how
//! it ended, the topology, the tasks' affinity, the tunables) or perf.data's feature
//! sections. `info` prints them as its header; `report` starts each trace's description
//! with them.

use crate::Input;
use model::{CpuPlace, Topology};
use perfdata::PerfData;
use pftrace::PerfettoTrace;
use std::collections::{BTreeMap, BTreeSet};
use tracedat::{EventSource, RecordedContext, Trace};

impl Input {
    /// What the file is and what recorded it, whichever format.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        match self {
            Input::TraceDat(trace) => describe_trace_dat(trace),
            Input::PerfData(perf) => describe_perf_data(perf),
            Input::Perfetto(trace) => describe_perfetto(trace),
        }
    }
}

/// What a trace.dat is and what recorded it: (label, text) lines of `info`'s header, also
/// the start of `report`'s description of a trace.
pub fn describe_trace_dat(trace: &Trace) -> Vec<(&'static str, String)> {
    let meta = trace.metadata();
    let header = &meta.header;
    let size = std::fs::metadata(trace.input()).map(|m| m.len()).unwrap_or(0);
    let mut lines = vec![("file", format!("{} ({size} bytes)", trace.input()))];
    let compression = match header.version {
        6 => "uncompressed".to_string(),
        _ => format!("compression {} {}", header.compression.name(), header.compression_version).trim_end().to_string(),
    };
    lines.push((
        "format",
        format!("trace-cmd file version {}, {:?} endian, {compression}", header.version, header.endian),
    ));
    lines.push((
        "sizes",
        format!(
            "kernel long {} bytes, user long {} bytes, page {} bytes",
            meta.kernel_long_size, header.user_long_size, header.page_size
        ),
    ));
    let options = &meta.options;
    if let Some(uname) = &options.uname {
        lines.push(("uname", uname.clone()));
    }
    if let Some(version) = options.recorder_version.as_deref().and_then(|v| v.lines().next()) {
        let recorder = if version.starts_with("schedlens") { "" } else { "trace-cmd " };
        lines.push(("recorded by", format!("{recorder}{version}")));
    }
    lines.extend(trace.recorded_context().map(|c| describe_recorded(&c)).unwrap_or_default());
    lines
}

/// What `info` shows of a recorded context: (label, text) lines for the command and how
/// it ended, the topology and each tunable.
fn describe_recorded(context: &RecordedContext) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    if let Some(command) = context.command_line() {
        let ended = context.exit.map_or_else(|| "end not recorded".to_string(), |e| e.to_string());
        let pid = context.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
        lines.push(("command", format!("{command} ({ended}{pid})")));
    }
    if let Some(text) = &context.topology {
        let summary = Topology::from_lscpu(text).map_or_else(|e| format!("unreadable ({e})"), |t| topology_summary(&t));
        lines.push(("topology", summary));
    }
    if !context.affinity.is_empty() {
        lines.push(("affinity", affinity_summary(&context.affinity)));
    }
    lines.extend(collapse_per_cpu(&context.tunables).into_iter().map(|(n, v)| ("tunable", format!("{n} = {v}"))));
    lines
}

/// How many tasks' affinity was recorded, by their latest CPU list (the four commonest).
fn affinity_summary(seen: &[tracedat::TaskAffinity]) -> String {
    let mut latest: BTreeMap<i32, &[u32]> = BTreeMap::new();
    seen.iter().for_each(|a| _ = latest.insert(a.pid, &a.cpus));
    let mut lists: Vec<(usize, String)> = Vec::new();
    for cpus in latest.values() {
        let list = tracedat::recorded::format_cpu_list(cpus);
        match lists.iter_mut().find(|(_, l)| *l == list) {
            Some((count, _)) => *count += 1,
            None => lists.push((1, list)),
        }
    }
    lists.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let groups: Vec<String> = lists.iter().take(4).map(|(n, list)| format!("{n} on CPUs {list}")).collect();
    let more = if lists.len() > 4 { ", ..." } else { "" };
    format!("{} tasks: {}{more}", latest.len(), groups.join(", "))
}

/// The number of distinct values of a CPU's place field.
fn distinct(topology: &Topology, field: impl Fn(&CpuPlace) -> u32) -> usize {
    topology.places().iter().map(field).collect::<BTreeSet<_>>().len()
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

/// What a perf.data is and what recorded it: (label, text) lines of `info`'s header and
/// `report`'s description.
pub fn describe_perf_data(perf: &PerfData) -> Vec<(&'static str, String)> {
    let features = perf.features();
    let mode = if perf.is_pipe_mode() { "pipe mode" } else { "file mode" };
    let mut lines = vec![
        ("file", format!("{} ({} bytes)", perf.input(), perf.size())),
        ("format", format!("perf.data, {mode}, {:?} endian", perf.endian())),
    ];
    if let Some(version) = &features.perf_version {
        lines.push(("recorded by", format!("perf {version}")));
    }
    if let Some(cmdline) = &features.cmdline {
        lines.push(("command", cmdline.join(" ")));
    }
    let machine = [&features.hostname, &features.os_release, &features.arch, &features.cpu_description];
    let machine: Vec<&str> = machine.iter().filter_map(|v| v.as_deref()).collect();
    if !machine.is_empty() {
        lines.push(("machine", machine.join(", ")));
    }
    if let Some((avail, online)) = features.nr_cpus {
        lines.push(("nrcpus", format!("{online} online, {avail} available")));
    }
    if let Some(topology) = &features.topology {
        lines.push((
            "topology",
            format!(
                "sockets' CPUs {}; cores' threads {}",
                topology.sibling_cores.join(" "),
                topology.sibling_threads.join(" ")
            ),
        ));
    }
    if let Some(tracing) = perf.tracing() {
        lines.push((
            "sizes",
            format!(
                "kernel long {} bytes, user long {} bytes, page {} bytes",
                tracing.kernel_long_size, tracing.user_long_size, tracing.page_size
            ),
        ));
    }
    lines
}

/// What a Perfetto trace is: (label, text) lines of `info`'s header and `report`'s
/// description.
pub fn describe_perfetto(trace: &PerfettoTrace) -> Vec<(&'static str, String)> {
    vec![
        ("file", format!("{} ({} bytes)", trace.input(), trace.size())),
        ("format", "Perfetto trace (protobuf), ftrace bundles".to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracedat::CommandExit;

    #[test]
    fn description_collapses_equal_per_cpu_tunables() {
        let tunable = |n: &str, v: &str| (n.to_string(), v.to_string());
        let context = RecordedContext {
            topology: Some(Topology::from_spec("sockets=2,smt=2", 8).unwrap().to_lscpu()),
            tunables: vec![
                tunable("sched/fair_server/cpu0/runtime", "50"),
                tunable("sched/fair_server/cpu1/runtime", "50"),
                tunable("sched/fair_server/cpu0/period", "1"),
                tunable("sched/fair_server/cpu1/period", "2"),
            ],
            command: Some(vec!["true".into()]),
            exit: Some(CommandExit::Code(0)),
            pid: Some(42),
            affinity: [(7, vec![0]), (8, vec![0, 1]), (9, vec![0]), (7, vec![1])]
                .into_iter()
                .map(|(pid, cpus)| tracedat::TaskAffinity { pid, cpus })
                .collect(),
        };
        let text: Vec<String> = describe_recorded(&context).iter().map(|(l, t)| format!("{l}: {t}")).collect();
        assert_eq!(
            text,
            [
                "command: true (exit status 0, pid 42)",
                "topology: 8 CPUs, 4 cores, 2 last-level caches, 2 sockets, 2 NUMA nodes",
                "affinity: 3 tasks: 1 on CPUs 0, 1 on CPUs 0-1, 1 on CPUs 1",
                "tunable: sched/fair_server/cpu*/runtime = 50",
                "tunable: sched/fair_server/cpu0/period = 1",
                "tunable: sched/fair_server/cpu1/period = 2",
            ]
        );
    }
}
