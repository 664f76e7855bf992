//! What the recorded machine is, read when a recording starts: CPU topology from sysfs (CPU
//! → core → last-level cache → socket → NUMA node), the scheduler's tunables
//! (`/proc/sys/kernel/sched_*` and debugfs's `sched/`), and uname. Analyses need these
//! to read a trace later on another machine; unreadable parts are left out, never fatal.

use model::{CpuPlace, Topology};
use std::collections::HashMap;
use std::ffi::CStr;
use std::path::Path;
use tracedat::Cpu;

const CPU_DIR: &str = "/sys/devices/system/cpu";
const DEBUGFS: &str = "/sys/kernel/debug";
/// Debugfs `sched/` entries that are reports, not tunables.
const NOT_TUNABLES: &[&str] = &["debug"];
/// Longer values are reports, not settings.
const MAX_VALUE: usize = 512;
/// How deep `sched/` is searched (`fair_server/cpu0/runtime`).
const MAX_DEPTH: usize = 3;

/// Numbers distinct keys 0, 1, ... in order of first appearance, as `lscpu -p` does.
#[derive(Default)]
struct Numbering(HashMap<String, u32>);

impl Numbering {
    fn id(&mut self, key: String) -> u32 {
        let next = self.0.len() as u32;
        *self.0.entry(key).or_insert(next)
    }
}

/// The topology of the online CPUs, from sysfs; `None` when sysfs does not say.
pub(crate) fn topology() -> Option<Topology> {
    topology_from(Path::new(CPU_DIR))
}

/// The topology described by a sysfs CPU directory (`/sys/devices/system/cpu` or a copy
/// of it); `None` when it does not say.
pub fn topology_from(dir: &Path) -> Option<Topology> {
    let mut cpus: Vec<u32> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    let (mut cores, mut llcs, mut sockets) = (Numbering::default(), Numbering::default(), Numbering::default());
    let places = cpus
        .into_iter()
        .filter_map(|cpu| {
            let cpu_dir = dir.join(format!("cpu{cpu}"));
            let socket = read_trimmed(&cpu_dir.join("topology/physical_package_id"))?;
            let core = read_trimmed(&cpu_dir.join("topology/core_cpus_list"))
                .or_else(|| read_trimmed(&cpu_dir.join("topology/thread_siblings_list")))?;
            let llc = last_level_cache(&cpu_dir).unwrap_or_else(|| format!("socket {socket}"));
            Some(CpuPlace {
                cpu: Cpu(cpu),
                core: cores.id(core),
                llc: llcs.id(llc),
                socket: sockets.id(socket),
                node: numa_node(&cpu_dir).unwrap_or(0),
            })
        })
        .collect();
    Topology::new(places).ok()
}

/// The CPUs sharing this CPU's highest-level cache.
fn last_level_cache(cpu_dir: &Path) -> Option<String> {
    std::fs::read_dir(cpu_dir.join("cache"))
        .ok()?
        .filter_map(|e| {
            let index = e.ok()?.path();
            let level: u32 = read_trimmed(&index.join("level"))?.parse().ok()?;
            Some((level, read_trimmed(&index.join("shared_cpu_list"))?))
        })
        .max()
        .map(|(level, cpus)| format!("L{level} {cpus}"))
}

/// The node of the CPU's `nodeN` link.
fn numa_node(cpu_dir: &Path) -> Option<u32> {
    std::fs::read_dir(cpu_dir).ok()?.find_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("node")?.parse().ok())
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The scheduler's tunables as (name, value), sorted by name: sysctl names
/// (`kernel.sched_rr_timeslice_ms`) and debugfs paths (`sched/base_slice_ns`). Debugfs is
/// mounted for the moment if it is not (and can be).
pub(crate) fn tunables() -> Vec<(String, String)> {
    let mut found = Vec::new();
    let sysctl = Path::new("/proc/sys");
    for entry in std::fs::read_dir(sysctl.join("kernel")).into_iter().flatten().filter_map(|e| e.ok()) {
        if entry.file_name().to_string_lossy().starts_with("sched_") {
            add_tunable(sysctl, &entry.path(), &mut found);
        }
    }
    with_debugfs(|debugfs| collect_tree(debugfs, &debugfs.join("sched"), MAX_DEPTH, &mut found));
    for (name, _) in &mut found {
        if let Some(sysctl_name) = name.strip_prefix("kernel/") {
            *name = format!("kernel.{sysctl_name}");
        }
    }
    found.sort();
    found
}

fn with_debugfs(read: impl FnOnce(&Path)) {
    let mut guard = restore::Guard::new();
    if let Ok(root) = guard.mount("debugfs", Path::new(DEBUGFS)) {
        read(&root);
    }
    // Best effort: a failure leaves debugfs mounted, which harms nothing.
    let _ = guard.restore();
}

fn collect_tree(root: &Path, dir: &Path, depth: usize, found: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().filter_map(|e| e.ok()) {
        let path = entry.path();
        if NOT_TUNABLES.iter().any(|n| entry.file_name() == *n) {
            continue;
        }
        match entry.file_type() {
            Ok(t) if t.is_dir() && depth > 1 => collect_tree(root, &path, depth - 1, found),
            Ok(t) if t.is_file() => add_tunable(root, &path, found),
            _ => {}
        }
    }
}

/// Adds a readable file of at most [`MAX_VALUE`] bytes, named by its path below `root`,
/// its lines joined by spaces.
fn add_tunable(root: &Path, path: &Path, found: &mut Vec<(String, String)>) {
    let Ok(text) = std::fs::read_to_string(path) else { return };
    if text.len() <= MAX_VALUE {
        let name = path.strip_prefix(root).unwrap_or(path).display().to_string();
        found.push((name, text.split_whitespace().collect::<Vec<_>>().join(" ")));
    }
}

/// `sysname nodename release machine`, as trace-cmd writes its UNAME option.
pub(crate) fn uname() -> Option<String> {
    // SAFETY: utsname is plain data; uname fills it with NUL-terminated strings.
    let mut name: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut name) } != 0 {
        return None;
    }
    let field = |f: &[libc::c_char]| {
        // SAFETY: the kernel NUL-terminates every field within its array.
        unsafe { CStr::from_ptr(f.as_ptr()) }.to_string_lossy().into_owned()
    };
    Some(format!(
        "{} {} {} {}",
        field(&name.sysname),
        field(&name.nodename),
        field(&name.release),
        field(&name.machine)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn sysfs_topology_numbers_cores_caches_and_sockets() {
        let root = std::env::temp_dir().join(format!("record-sysfs-{}", std::process::id()));
        // Two sockets of one two-thread core each; CPUs 0 and 2 are one core's threads.
        for (cpu, package, siblings, llc) in [(0, 1, "0,2", "0,2"), (1, 0, "1,3", "1,3"), (2, 1, "0,2", "0,2")] {
            let dir = format!("cpu{cpu}");
            write(&root, &format!("{dir}/topology/physical_package_id"), &format!("{package}\n"));
            write(&root, &format!("{dir}/topology/core_cpus_list"), siblings);
            write(&root, &format!("{dir}/cache/index0/level"), "1");
            write(&root, &format!("{dir}/cache/index0/shared_cpu_list"), &cpu.to_string());
            write(&root, &format!("{dir}/cache/index3/level"), "3");
            write(&root, &format!("{dir}/cache/index3/shared_cpu_list"), llc);
            std::fs::create_dir_all(root.join(format!("{dir}/node{package}"))).unwrap();
        }
        std::fs::create_dir_all(root.join("cpufreq")).unwrap();
        let topology = topology_from(&root).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        let place = |cpu| *topology.place(Cpu(cpu)).unwrap();
        assert_eq!(place(0), CpuPlace { cpu: Cpu(0), core: 0, llc: 0, socket: 0, node: 1 });
        assert_eq!(place(1), CpuPlace { cpu: Cpu(1), core: 1, llc: 1, socket: 1, node: 0 });
        assert_eq!(place(2), CpuPlace { cpu: Cpu(2), core: 0, llc: 0, socket: 0, node: 1 });
    }

    #[test]
    fn this_machine_has_a_topology_and_a_uname() {
        let topology = topology().expect("sysfs topology");
        assert!(!topology.places().is_empty());
        assert!(uname().unwrap().starts_with("Linux "));
        let tunables = tunables();
        assert!(tunables.iter().any(|(name, _)| name == "kernel.sched_rr_timeslice_ms"), "{tunables:?}");
    }
}
