//! Where in a perf.data file something went wrong: the part (header, attributes, a
//! feature section, a record by its number and type), the byte offset, and what. Errors
//! and warnings leave this crate as `tracedat::Error`s (section [`tracedat::Section::Named`]),
//! so every stage above reports damage of both containers the same way.

use std::fmt;
use tracedat::{Error, ErrorKind, Section};

/// A part of a perf.data file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    FileHeader,
    Attributes,
    FeatureTable,
    Feature(u32),
    /// The record with this number (from 0, in file order) and type.
    Record {
        number: u64,
        kind: u32,
    },
    /// The data section as a whole (its bounds).
    Data,
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Part::FileHeader => f.write_str("perf.data header"),
            Part::Attributes => f.write_str("event attributes"),
            Part::FeatureTable => f.write_str("feature section table"),
            Part::Feature(id) => write!(f, "feature section {} ({id})", crate::features::feature_name(*id)),
            Part::Record { number, kind } => write!(f, "record {number} ({})", record_name(*kind)),
            Part::Data => f.write_str("data section"),
        }
    }
}

/// perf's name of a record type.
pub fn record_name(kind: u32) -> &'static str {
    const KERNEL: [&str; 22] = [
        "PERF_RECORD_0",
        "PERF_RECORD_MMAP",
        "PERF_RECORD_LOST",
        "PERF_RECORD_COMM",
        "PERF_RECORD_EXIT",
        "PERF_RECORD_THROTTLE",
        "PERF_RECORD_UNTHROTTLE",
        "PERF_RECORD_FORK",
        "PERF_RECORD_READ",
        "PERF_RECORD_SAMPLE",
        "PERF_RECORD_MMAP2",
        "PERF_RECORD_AUX",
        "PERF_RECORD_ITRACE_START",
        "PERF_RECORD_LOST_SAMPLES",
        "PERF_RECORD_SWITCH",
        "PERF_RECORD_SWITCH_CPU_WIDE",
        "PERF_RECORD_NAMESPACES",
        "PERF_RECORD_KSYMBOL",
        "PERF_RECORD_BPF_EVENT",
        "PERF_RECORD_CGROUP",
        "PERF_RECORD_TEXT_POKE",
        "PERF_RECORD_AUX_OUTPUT_HW_ID",
    ];
    const USER: [&str; 20] = [
        "PERF_RECORD_HEADER_ATTR",
        "PERF_RECORD_HEADER_EVENT_TYPE",
        "PERF_RECORD_HEADER_TRACING_DATA",
        "PERF_RECORD_HEADER_BUILD_ID",
        "PERF_RECORD_FINISHED_ROUND",
        "PERF_RECORD_ID_INDEX",
        "PERF_RECORD_AUXTRACE_INFO",
        "PERF_RECORD_AUXTRACE",
        "PERF_RECORD_AUXTRACE_ERROR",
        "PERF_RECORD_THREAD_MAP",
        "PERF_RECORD_CPU_MAP",
        "PERF_RECORD_STAT_CONFIG",
        "PERF_RECORD_STAT",
        "PERF_RECORD_STAT_ROUND",
        "PERF_RECORD_EVENT_UPDATE",
        "PERF_RECORD_TIME_CONV",
        "PERF_RECORD_HEADER_FEATURE",
        "PERF_RECORD_COMPRESSED",
        "PERF_RECORD_FINISHED_INIT",
        "PERF_RECORD_COMPRESSED2",
    ];
    match kind {
        k if (k as usize) < KERNEL.len() => KERNEL[k as usize],
        k if (64..64 + USER.len() as u32).contains(&k) => USER[k as usize - 64],
        _ => "unknown record type",
    }
}

/// A problem at a place in the file, not yet named after the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub part: Part,
    pub offset: u64,
    pub message: String,
}

impl Located {
    pub fn new(part: Part, offset: u64, message: impl Into<String>) -> Located {
        Located { part, offset, message: message.into() }
    }

    /// The error as the other stages report it.
    pub fn named(&self, input: &str) -> Error {
        Error {
            input: input.to_string(),
            section: Section::Named(self.part.to_string()),
            offset: self.offset,
            kind: ErrorKind::Malformed(self.message.clone()),
        }
    }
}

/// An I/O error while reading a part.
pub fn io_error(input: &str, part: Part, offset: u64, error: std::io::Error) -> Error {
    Error { input: input.to_string(), section: Section::Named(part.to_string()), offset, kind: ErrorKind::Io(error) }
}

/// Damage found while reading the records, kept up to [`Damage::KEPT`] places (a damaged
/// file can have millions of bad samples; their count is kept, not each message).
#[derive(Clone, Debug, Default)]
pub struct Damage {
    pub kept: Vec<Located>,
    pub total: u64,
}

impl Damage {
    pub const KEPT: usize = 64;

    pub fn add(&mut self, located: Located) {
        self.total += 1;
        if self.kept.len() < Self::KEPT {
            self.kept.push(located);
        }
    }

    /// Every kept place as an error, and one more that counts those not kept.
    pub fn errors(&self, input: &str) -> Vec<Error> {
        let mut errors: Vec<Error> = self.kept.iter().map(|d| d.named(input)).collect();
        let more = self.total - self.kept.len() as u64;
        if more > 0 {
            let last = self.kept.last().map_or(0, |d| d.offset);
            let summary = Located::new(Part::Data, last, format!("{more} more damaged records after this one"));
            errors.push(summary.named(input));
        }
        errors
    }
}
