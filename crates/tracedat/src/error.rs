//! Errors that name the input, the part of the file and the byte offset, so that a user
//! handed a damaged trace knows exactly where it went wrong.

use std::fmt;

/// The part of a trace.dat file being read when something went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Section {
    FileHeader,
    HeaderPage,
    HeaderEvent,
    FtraceFormats,
    EventFormats,
    Kallsyms,
    PrintkFormats,
    Cmdlines,
    CpuCount,
    Options,
    /// A single option inside an options list, by its numeric id.
    Option(u16),
    SectionHeader,
    Strings,
    FlyrecordTable,
    TraceClock,
    /// The per-CPU ring-buffer data of one buffer ("" is the top buffer).
    CpuData {
        buffer: String,
        cpu: u32,
    },
    /// A part of another container of the same records (perf.data's headers, sections
    /// and records), named by its reader.
    Named(String),
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Section::FileHeader => f.write_str("file header"),
            Section::HeaderPage => f.write_str("header_page"),
            Section::HeaderEvent => f.write_str("header_event"),
            Section::FtraceFormats => f.write_str("ftrace event formats"),
            Section::EventFormats => f.write_str("event formats"),
            Section::Kallsyms => f.write_str("kallsyms"),
            Section::PrintkFormats => f.write_str("printk formats"),
            Section::Cmdlines => f.write_str("saved cmdlines"),
            Section::CpuCount => f.write_str("CPU count"),
            Section::Options => f.write_str("options"),
            Section::Option(id) => write!(f, "option {id} ({})", crate::read::options::option_name(*id)),
            Section::SectionHeader => f.write_str("section header"),
            Section::Strings => f.write_str("strings section"),
            Section::FlyrecordTable => f.write_str("flyrecord CPU table"),
            Section::TraceClock => f.write_str("trace clock"),
            Section::CpuData { buffer, cpu } if buffer.is_empty() => write!(f, "CPU {cpu} data"),
            Section::CpuData { buffer, cpu } => write!(f, "CPU {cpu} data of buffer \"{buffer}\""),
            Section::Named(name) => f.write_str(name),
        }
    }
}

/// What went wrong, independent of where.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("file ends early: {needed} bytes needed, {available} left")]
    Truncated { needed: u64, available: u64 },
    #[error("not a trace-cmd file (bad magic)")]
    BadMagic,
    #[error("unsupported file version {0:?} (supported: 6 and 7)")]
    UnsupportedVersion(String),
    #[error("bad endianness flag {0} (expected 0 or 1)")]
    BadEndian(u8),
    #[error("bad long size {0} (expected 4 or 8)")]
    BadLongSize(u8),
    #[error("bad page size {0}")]
    BadPageSize(u64),
    #[error("unknown compression {0:?}")]
    UnknownCompression(String),
    #[error("compression {0:?} is not built into this program")]
    CodecNotBuiltIn(String),
    #[error("decompression failed: {0}")]
    Decompress(String),
    #[error("expected {expected}, found {found:?}")]
    Unexpected { expected: &'static str, found: String },
    #[error("{0}")]
    Malformed(String),
    #[error("the kernel's pre-2.6.31 ring-buffer format is not supported")]
    OldRingBuffer,
}

/// An error while reading a trace file: which file, which part of it, at which byte offset.
#[derive(Debug, thiserror::Error)]
#[error("{input}: {section} at byte {offset}: {kind}")]
pub struct Error {
    /// The file name, or a description of an in-memory input.
    pub input: String,
    pub section: Section,
    /// Absolute offset in the file where the problem was found.
    pub offset: u64,
    #[source]
    pub kind: ErrorKind,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error not yet attached to an input name; the reader fills the name in.
#[derive(Debug)]
pub(crate) struct Located {
    pub section: Section,
    pub offset: u64,
    pub kind: ErrorKind,
}

impl Located {
    pub fn new(section: Section, offset: u64, kind: ErrorKind) -> Located {
        Located { section, offset, kind }
    }

    pub fn malformed(section: Section, offset: u64, message: impl Into<String>) -> Located {
        Located::new(section, offset, ErrorKind::Malformed(message.into()))
    }

    pub fn named(self, input: &str) -> Error {
        Error { input: input.to_string(), section: self.section, offset: self.offset, kind: self.kind }
    }
}

pub(crate) type LResult<T> = std::result::Result<T, Located>;
