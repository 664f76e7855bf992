//! The feature sections perf writes beside the records (after the data in file mode, as
//! `PERF_RECORD_HEADER_FEATURE` records in pipe mode): the machine and the recording as
//! `perf report --header-only` shows them. Only what describes a scheduler recording is
//! decoded; every string and list is bounds-checked against its section.

use crate::damage::{Located, Part};
use tracedat::Endian;

/// perf's name of a feature bit (`HEADER_*`).
pub fn feature_name(id: u32) -> &'static str {
    const NAMES: [&str; 32] = [
        "RESERVED",
        "TRACING_DATA",
        "BUILD_ID",
        "HOSTNAME",
        "OSRELEASE",
        "VERSION",
        "ARCH",
        "NRCPUS",
        "CPUDESC",
        "CPUID",
        "TOTAL_MEM",
        "CMDLINE",
        "EVENT_DESC",
        "CPU_TOPOLOGY",
        "NUMA_TOPOLOGY",
        "BRANCH_STACK",
        "PMU_MAPPINGS",
        "GROUP_DESC",
        "AUXTRACE",
        "STAT",
        "CACHE",
        "SAMPLE_TIME",
        "MEM_TOPOLOGY",
        "CLOCKID",
        "DIR_FORMAT",
        "BPF_PROG_INFO",
        "BPF_BTF",
        "COMPRESSED",
        "CPU_PMU_CAPS",
        "CLOCK_DATA",
        "HYBRID_TOPOLOGY",
        "PMU_CAPS",
    ];
    NAMES.get(id as usize).copied().unwrap_or("unknown")
}

pub const HOSTNAME: u32 = 3;
pub const OSRELEASE: u32 = 4;
pub const VERSION: u32 = 5;
pub const ARCH: u32 = 6;
pub const NRCPUS: u32 = 7;
pub const CPUDESC: u32 = 8;
pub const CMDLINE: u32 = 11;
pub const CPU_TOPOLOGY: u32 = 13;

/// The CPU topology perf recorded (`HEADER_CPU_TOPOLOGY`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuTopology {
    /// CPU lists of the cores of each socket (`0-1`), as perf stores them.
    pub sibling_cores: Vec<String>,
    /// CPU lists of the threads of each core.
    pub sibling_threads: Vec<String>,
    /// Per CPU: (core id, socket id), when recorded.
    pub cpus: Vec<(u32, u32)>,
}

/// What the feature sections say about the recording.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features {
    /// The feature ids present.
    pub present: Vec<u32>,
    pub hostname: Option<String>,
    pub os_release: Option<String>,
    pub perf_version: Option<String>,
    pub arch: Option<String>,
    pub cpu_description: Option<String>,
    /// CPUs the machine could have (`nr_cpus_avail`) and had online.
    pub nr_cpus: Option<(u32, u32)>,
    /// perf's own command line.
    pub cmdline: Option<Vec<String>>,
    pub topology: Option<CpuTopology>,
}

impl Features {
    /// Decodes one feature section (`at`: its file offset, for messages).
    pub fn absorb(&mut self, id: u32, data: &[u8], at: u64, endian: Endian) -> Result<(), Located> {
        self.present.push(id);
        let mut r = Section { data, pos: 0, at, endian, id };
        match id {
            HOSTNAME => self.hostname = Some(r.string()?),
            OSRELEASE => self.os_release = Some(r.string()?),
            VERSION => self.perf_version = Some(r.string()?),
            ARCH => self.arch = Some(r.string()?),
            CPUDESC => self.cpu_description = Some(r.string()?),
            NRCPUS => self.nr_cpus = Some((r.u32()?, r.u32()?)),
            CMDLINE => self.cmdline = Some(r.strings()?),
            CPU_TOPOLOGY => self.topology = Some(r.topology(self.nr_cpus.map_or(0, |(avail, _)| avail))?),
            _ => {}
        }
        Ok(())
    }
}

/// A bounds-checked reader over one feature section.
struct Section<'a> {
    data: &'a [u8],
    pos: usize,
    at: u64,
    endian: Endian,
    id: u32,
}

impl Section<'_> {
    fn fail(&self, what: &str) -> Located {
        Located::new(Part::Feature(self.id), self.at + self.pos as u64, format!("{what} runs past the section's end"))
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], Located> {
        let end = self.pos.checked_add(n).filter(|&end| end <= self.data.len()).ok_or_else(|| self.fail(what))?;
        let bytes = &self.data[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn u32(&mut self) -> Result<u32, Located> {
        let endian = self.endian;
        let bytes = self.take(4, "a number")?;
        Ok(endian.u32(bytes.try_into().expect("4 bytes")))
    }

    /// `perf_header_string`: a length (with the NUL padding) and the text.
    fn string(&mut self) -> Result<String, Located> {
        let len = self.u32()? as usize;
        let bytes = self.take(len, "a string")?;
        let text = bytes.split(|&b| b == 0).next().unwrap_or(&[]);
        Ok(String::from_utf8_lossy(text).into_owned())
    }

    /// A count and that many strings (each at least 4 bytes, so a count is never
    /// trusted beyond what the section can hold).
    fn strings(&mut self) -> Result<Vec<String>, Located> {
        let count = self.u32()? as usize;
        if count > (self.data.len() - self.pos) / 4 {
            return Err(self.fail("a list of strings"));
        }
        (0..count).map(|_| self.string()).collect()
    }

    /// The sibling lists and, for each of the `cpus` the NRCPUS section counts (perf
    /// writes it first), the core and socket ids; die lists that newer perf appends are
    /// left unread.
    fn topology(&mut self, cpus: u32) -> Result<CpuTopology, Located> {
        let sibling_cores = self.strings()?;
        let sibling_threads = self.strings()?;
        let mut ids = Vec::new();
        for _ in 0..cpus {
            if self.data.len() - self.pos < 8 {
                break;
            }
            ids.push((self.u32()?, self.u32()?));
        }
        Ok(CpuTopology { sibling_cores, sibling_threads, cpus: ids })
    }
}
