//! Where each CPU sits in the machine: core, last-level cache, socket, NUMA node. Traces
//! do not say (unless schedlens recorded them), so the topology comes from `lscpu -p`
//! text (the form schedlens stores too) or from a short description such as
//! `sockets=4,smt=2,layout=interleaved`. Figures order cores by socket with it, and the
//! checks tell cross-socket moves from local ones.

use tracedat::Cpu;

/// The place of one CPU.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CpuPlace {
    pub cpu: Cpu,
    /// Physical core (hardware threads of one core share it).
    pub core: u32,
    /// Last-level cache domain.
    pub llc: u32,
    pub socket: u32,
    pub node: u32,
}

/// The machine's CPUs by place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    places: Vec<CpuPlace>,
}

/// Why a topology could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    #[error("line {line}: {message}")]
    Lscpu { line: usize, message: String },
    #[error("bad topology description {spec:?}: {message} (expected e.g. sockets=2,smt=2,layout=interleaved)")]
    Spec { spec: String, message: String },
    #[error("the topology lists no CPUs")]
    Empty,
}

/// How CPU numbers map to sockets in a described topology.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Consecutive CPUs on different sockets (Intel servers): socket = cpu mod sockets.
    Interleaved,
    /// Each socket's CPUs numbered consecutively.
    Contiguous,
}

impl Topology {
    pub fn new(mut places: Vec<CpuPlace>) -> Result<Topology, TopologyError> {
        if places.is_empty() {
            return Err(TopologyError::Empty);
        }
        places.sort_by_key(|p| p.cpu);
        places.dedup_by_key(|p| p.cpu);
        Ok(Topology { places })
    }

    /// Parses `lscpu -p` output (any of its column choices that include CPU, Core and
    /// Socket; Node and the last cache level are used when present). Without a header
    /// line the columns are taken as `CPU,Core,Socket,Node`.
    pub fn from_lscpu(text: &str) -> Result<Topology, TopologyError> {
        let mut columns = vec!["cpu".to_string(), "core".into(), "socket".into(), "node".into()];
        let mut places = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if let Some(header) = line.strip_prefix('#') {
                let names: Vec<String> = header.split(',').map(|c| c.trim().to_ascii_lowercase()).collect();
                if names.first().is_some_and(|c| c == "cpu") {
                    columns = names;
                }
                continue;
            }
            if line.is_empty() {
                continue;
            }
            places
                .push(lscpu_row(&columns, line).map_err(|message| TopologyError::Lscpu { line: index + 1, message })?);
        }
        Topology::new(places)
    }

    /// A described machine: `sockets=N` (default 1), `smt=M` threads per core (default
    /// 1), `layout=interleaved|contiguous` (default contiguous), `nodes=K` (default one
    /// per socket), for `cpu_count` CPUs. Hardware threads of a core are numbered
    /// `cpu_count / smt` apart, as Linux numbers them on x86.
    pub fn from_spec(spec: &str, cpu_count: u32) -> Result<Topology, TopologyError> {
        let err = |message: String| TopologyError::Spec { spec: spec.to_string(), message };
        let (mut sockets, mut smt, mut layout, mut nodes) = (1u32, 1u32, Layout::Contiguous, None);
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| err(format!("{part:?} is not key=value")))?;
            let number =
                || value.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| err(format!("bad number {value:?}")));
            match key {
                "sockets" => sockets = number()?,
                "smt" => smt = number()?,
                "nodes" => nodes = Some(number()?),
                "layout" => {
                    layout = match value {
                        "interleaved" => Layout::Interleaved,
                        "contiguous" => Layout::Contiguous,
                        _ => return Err(err(format!("unknown layout {value:?}"))),
                    }
                }
                _ => return Err(err(format!("unknown key {key:?}"))),
            }
        }
        let nodes = nodes.unwrap_or(sockets).min(sockets);
        // Each socket holds a whole number of cores (so 0 < sockets * smt <= cpu_count,
        // and the divisions below are by non-zero numbers), each node whole sockets.
        let divides = sockets.checked_mul(smt).is_some_and(|threads| cpu_count % threads == 0);
        if cpu_count == 0 || !divides || sockets % nodes != 0 {
            return Err(err(format!("{cpu_count} CPUs do not divide into {sockets} sockets of {smt}-thread cores")));
        }
        let cores = cpu_count / smt;
        let per_socket = cores / sockets;
        let places = (0..cpu_count)
            .map(|cpu| {
                let core = cpu % cores;
                let socket = match layout {
                    Layout::Interleaved => core % sockets,
                    Layout::Contiguous => core / per_socket,
                };
                // socket < sockets, so the quotient is below `nodes` and fits.
                let node = (u64::from(socket) * u64::from(nodes) / u64::from(sockets)) as u32;
                CpuPlace { cpu: Cpu(cpu), core, llc: socket, socket, node }
            })
            .collect();
        Topology::new(places)
    }

    pub fn places(&self) -> &[CpuPlace] {
        &self.places
    }

    pub fn place(&self, cpu: Cpu) -> Option<&CpuPlace> {
        self.places.binary_search_by_key(&cpu, |p| p.cpu).ok().map(|i| &self.places[i])
    }

    pub fn socket_count(&self) -> usize {
        let mut sockets: Vec<u32> = self.places.iter().map(|p| p.socket).collect();
        sockets.sort_unstable();
        sockets.dedup();
        sockets.len()
    }

    /// CPUs ordered so that each socket's CPUs are adjacent (socket, then core, then
    /// CPU number), as the schedgraph paper's `--socket-order` shows them.
    pub fn socket_order(&self) -> Vec<Cpu> {
        let mut places = self.places.clone();
        places.sort_by_key(|p| (p.socket, p.core, p.cpu));
        places.into_iter().map(|p| p.cpu).collect()
    }

    /// The text form schedlens stores in traces it records (`lscpu -p` style).
    pub fn to_lscpu(&self) -> String {
        let mut out = String::from("# CPU,Core,Socket,Node,LLC\n");
        for p in &self.places {
            out.push_str(&format!("{},{},{},{},{}\n", p.cpu.0, p.core, p.socket, p.node, p.llc));
        }
        out
    }
}

/// Numbers as ranges, sorted and each once: `[5, 0, 1, 2, 7, 8]` → `0-2,5,7-8`.
pub fn ranges(numbers: impl IntoIterator<Item = u32>) -> String {
    let mut sorted: Vec<u32> = numbers.into_iter().collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    for run in sorted.chunk_by(|a, b| a.checked_add(1) == Some(*b)) {
        match run {
            [one] => parts.push(one.to_string()),
            [first, .., last] => parts.push(format!("{first}-{last}")),
            [] => {}
        }
    }
    parts.join(",")
}

/// A set of CPUs as people read it: "CPU 5", "CPUs 2-3", and with a topology the NUMA
/// nodes they are on: "CPUs 2-3 (node 0)", "CPUs 0-31 (nodes 0-1)".
pub fn describe_cpus(cpus: &[Cpu], topology: Option<&Topology>) -> String {
    let list = ranges(cpus.iter().map(|c| c.0));
    let noun = if cpus.len() == 1 { "CPU" } else { "CPUs" };
    match topology.and_then(|t| t.nodes_of(cpus)) {
        Some(nodes) => format!("{noun} {list} ({nodes})"),
        None => format!("{noun} {list}"),
    }
}

impl Topology {
    /// The NUMA nodes of `cpus`: "node 0", "nodes 0-1"; `None` when the topology does not
    /// place one of them, or for no CPUs.
    pub fn nodes_of(&self, cpus: &[Cpu]) -> Option<String> {
        let nodes: Vec<u32> = cpus.iter().map(|&cpu| self.place(cpu).map(|p| p.node)).collect::<Option<_>>()?;
        if nodes.is_empty() {
            return None;
        }
        let list = ranges(nodes);
        let noun = if list.contains(['-', ',']) { "nodes" } else { "node" };
        Some(format!("{noun} {list}"))
    }

    /// The CPUs that share `cpu`'s core (its SMT siblings, `cpu` included), in order.
    pub fn siblings(&self, cpu: Cpu) -> Vec<Cpu> {
        let Some(place) = self.place(cpu) else { return vec![cpu] };
        self.places.iter().filter(|p| p.core == place.core && p.socket == place.socket).map(|p| p.cpu).collect()
    }

    pub fn node_count(&self) -> usize {
        let mut nodes: Vec<u32> = self.places.iter().map(|p| p.node).collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes.len()
    }
}

fn lscpu_row(columns: &[String], line: &str) -> Result<CpuPlace, String> {
    let values: Vec<&str> = line.split(',').map(str::trim).collect();
    let get = |name: &str| -> Result<Option<u32>, String> {
        let Some(index) = columns.iter().position(|c| c == name) else { return Ok(None) };
        match values.get(index).copied().unwrap_or("") {
            "" => Ok(None),
            v => v.parse().map(Some).map_err(|_| format!("bad {name} value {v:?}")),
        }
    };
    let cpu = get("cpu")?.ok_or("no CPU number")?;
    let core = get("core")?.ok_or("no Core column")?;
    let socket = get("socket")?.ok_or("no Socket column")?;
    let node = get("node")?.unwrap_or(socket);
    let llc = ["llc", "l3", "l2"].iter().find_map(|c| get(c).ok().flatten()).unwrap_or(socket);
    Ok(CpuPlace { cpu: Cpu(cpu), core, llc, socket, node })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lscpu_with_caches() {
        let text = "# The following is the parsable format\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n\
                    0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n2,2,1,1,,2,2,2,1\n";
        let t = Topology::from_lscpu(text).unwrap();
        assert_eq!(t.places().len(), 3);
        assert_eq!(*t.place(Cpu(2)).unwrap(), CpuPlace { cpu: Cpu(2), core: 2, llc: 1, socket: 1, node: 1 });
        assert_eq!(t.socket_count(), 2);
        assert_eq!(Topology::from_lscpu(&t.to_lscpu()).unwrap(), t);
    }

    #[test]
    fn plain_lines_without_header() {
        let t = Topology::from_lscpu("0,0,0,0\n1,0,0,0\n").unwrap();
        assert_eq!(t.place(Cpu(1)).unwrap().core, 0);
        assert!(Topology::from_lscpu("x,1\n").is_err());
        assert_eq!(Topology::from_lscpu("# nothing\n"), Err(TopologyError::Empty));
    }

    #[test]
    fn interleaved_sockets_are_reordered_adjacent() {
        // 8 CPUs, 2 sockets, 2 threads per core, Intel numbering: cores 0-3, threads +4.
        let t = Topology::from_spec("sockets=2,smt=2,layout=interleaved", 8).unwrap();
        let sockets: Vec<u32> = (0..8).map(|c| t.place(Cpu(c)).unwrap().socket).collect();
        assert_eq!(sockets, [0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(t.socket_order(), [0, 4, 2, 6, 1, 5, 3, 7].map(Cpu));
        let c = Topology::from_spec("sockets=2", 4).unwrap();
        assert_eq!(c.socket_order(), [0, 1, 2, 3].map(Cpu));
        assert!(Topology::from_spec("sockets=3", 4).is_err());
        assert!(Topology::from_spec("layout=odd", 4).is_err());
    }

    #[test]
    fn cpu_sets_read_as_ranges_with_their_nodes() {
        assert_eq!(ranges([5, 0, 1, 2, 7, 8, 2]), "0-2,5,7-8");
        assert_eq!(ranges([u32::MAX, u32::MAX - 1, 3]), format!("3,{}-{}", u32::MAX - 1, u32::MAX));
        assert_eq!(ranges([]), "");
        let t = Topology::from_spec("sockets=4,nodes=4", 64).unwrap();
        assert_eq!(describe_cpus(&[Cpu(3), Cpu(2)], Some(&t)), "CPUs 2-3 (node 0)");
        assert_eq!(describe_cpus(&[Cpu(17)], Some(&t)), "CPU 17 (node 1)");
        assert_eq!(describe_cpus(&(0..32).map(Cpu).collect::<Vec<_>>(), Some(&t)), "CPUs 0-31 (nodes 0-1)");
        assert_eq!(describe_cpus(&[Cpu(2), Cpu(70)], Some(&t)), "CPUs 2,70");
        assert_eq!(describe_cpus(&[Cpu(2), Cpu(3)], None), "CPUs 2-3");
    }

    #[test]
    fn smt_siblings_share_a_core() {
        let lscpu = Topology::from_lscpu("0,0,0,0\n1,0,0,0\n2,1,0,0\n3,1,0,0\n").unwrap();
        assert_eq!(lscpu.siblings(Cpu(3)), [Cpu(2), Cpu(3)]);
        let spec = Topology::from_spec("sockets=2,smt=2", 8).unwrap();
        assert_eq!(spec.siblings(Cpu(1)), [Cpu(1), Cpu(5)]);
        assert_eq!(spec.siblings(Cpu(9)), [Cpu(9)]);
    }

    #[test]
    fn huge_descriptions_are_errors_not_overflows() {
        let error = Topology::from_spec("sockets=65536,smt=65536", 2).unwrap_err();
        assert!(error.to_string().contains("2 CPUs do not divide into 65536 sockets"), "{error}");
        assert!(Topology::from_spec("sockets=4294967295,smt=2", 4).is_err());
        // As many sockets and nodes as CPUs: one CPU each, numbered without overflow.
        let t = Topology::from_spec("sockets=65536,nodes=65536", 65536).unwrap();
        assert_eq!(
            *t.place(Cpu(65535)).unwrap(),
            CpuPlace { cpu: Cpu(65535), core: 65535, llc: 65535, socket: 65535, node: 65535 }
        );
    }
}
