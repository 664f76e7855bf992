//! Where a figure's CPU topology comes from: the trace's own metadata (when schedlens
//! recorded it), else `--topology` (an `lscpu -p` file, a copy of /sys/devices/system/cpu,
//! or a `sockets=N,smt=M,layout=...` spec), else nothing — and `--socket-order` without
//! one is an error that says so.

use anyhow::{Context, Result, anyhow, bail};
use inputs::Input;
use model::Topology;
use std::path::Path;

#[derive(clap::Args, Clone, Debug, Default)]
pub struct TopologyArgs {
    /// Order rows by socket (a socket's cores adjacent) and draw socket boundaries; needs
    /// a topology: the trace's own (recorded by `schedlens record`) or --topology.
    #[arg(long)]
    pub socket_order: bool,
    /// The machine's topology when the trace has none: a file with the output of
    /// `lscpu -p=CPU,CORE,SOCKET,NODE`, a copy of /sys/devices/system/cpu, or a spec
    /// `sockets=N,smt=M,layout=interleaved|contiguous`.
    #[arg(long, value_name = "FILE|SPEC")]
    pub topology: Option<String>,
}

impl TopologyArgs {
    /// The topology to use for `trace` (with `cpu_count` CPUs), if any.
    pub fn resolve(&self, trace: &Input, cpu_count: usize, input: &Path) -> Result<Option<Topology>> {
        let topology = topology_of(self.topology.as_deref(), trace, cpu_count)?;
        if self.socket_order && topology.is_none() {
            bail!(
                "{}: --socket-order needs a topology: the trace carries none (record with `schedlens record` to \
                 keep it), so give --topology FILE (from `lscpu -p=CPU,CORE,SOCKET,NODE`) or \
                 --topology sockets=N,smt=M,layout=interleaved|contiguous",
                input.display()
            );
        }
        Ok(topology)
    }
}

/// The topology `given` on the command line, else the one the trace recorded, if any.
pub fn topology_of(given: Option<&str>, trace: &Input, cpu_count: usize) -> Result<Option<Topology>> {
    match given {
        Some(given) => parse(given, cpu_count).map(Some),
        None => Ok(trace.recorded_topology()),
    }
}

fn parse(given: &str, cpu_count: usize) -> Result<Topology> {
    let path = Path::new(given);
    if path.is_dir() {
        let topology = record::sysfs_topology(path).with_context(|| {
            format!("{given}: no CPU topology there (expected cpuN/topology/ like /sys/devices/system/cpu)")
        })?;
        return agreeing(topology, given, cpu_count);
    }
    if path.is_file() {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {given}"))?;
        let topology = Topology::from_lscpu(&text).with_context(|| format!("{given}: not the output of lscpu -p"))?;
        return agreeing(topology, given, cpu_count);
    }
    // The error quotes the description: only the option's name is added.
    Topology::from_spec(given, cpu_count as u32).map_err(|error| anyhow!("--topology: {error}"))
}

/// `topology`, if it places exactly the trace's CPUs (0 to `cpu_count` - 1): a topology
/// of another machine would label rows and count crossings wrongly.
fn agreeing(topology: Topology, given: &str, cpu_count: usize) -> Result<Topology> {
    let places = topology.places();
    let same = places.len() == cpu_count && places.iter().enumerate().all(|(i, p)| p.cpu.index() == i);
    if !same {
        bail!(
            "{given}: the topology describes {} CPUs ({}), the trace has {cpu_count}: a topology of another machine?",
            places.len(),
            model::ranges(places.iter().map(|p| p.cpu.0))
        );
    }
    Ok(topology)
}
