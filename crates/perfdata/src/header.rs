//! The fixed start of a perf.data file (`struct perf_file_header` of
//! tools/perf/util/header.h): its magic, which also gives the byte order, and where the
//! attributes, the records and the feature sections are; or, in pipe mode, the 16-byte
//! header after which everything comes as records.

use crate::damage::{Located, Part};
use tracedat::Endian;

/// "PERFILE2" as a little-endian file starts.
pub const MAGIC_LITTLE: [u8; 8] = *b"PERFILE2";
/// "PERFILE2" as a big-endian file starts (the number's bytes reversed).
pub const MAGIC_BIG: [u8; 8] = *b"2ELIFREP";
/// The size of the file-mode header.
pub const FILE_HEADER_SIZE: u64 = 104;
/// The size of the pipe-mode header.
pub const PIPE_HEADER_SIZE: u64 = 16;
/// `HEADER_TRACING_DATA`: the feature bit, and the pipe-mode record type carrying it.
pub const FEATURE_TRACING_DATA: u32 = 1;

/// A section of the file: where it starts and how long it is.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FileSection {
    pub offset: u64,
    pub size: u64,
}

impl FileSection {
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.size)
    }
}

/// The header of a file-mode perf.data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    pub endian: Endian,
    /// The size of one `perf_event_attr` entry in the attribute section (without its ids).
    pub attr_size: u64,
    pub attrs: FileSection,
    pub data: FileSection,
    /// Feature bits (`HEADER_*`), 256 of them.
    pub features: [u64; 4],
}

impl FileHeader {
    /// The features present, in the order their section table lists them.
    pub fn feature_ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..256u32).filter(|&bit| self.features[bit as usize / 64] & (1 << (bit % 64)) != 0)
    }
}

/// How the file starts: a file-mode header, or pipe mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    File(FileHeader),
    Pipe { endian: Endian },
}

/// The byte order a perf.data magic says, or `None` when `bytes` do not start with one.
pub fn endian_of_magic(bytes: &[u8]) -> Option<Endian> {
    match bytes.get(..8)? {
        m if m == MAGIC_LITTLE => Some(Endian::Little),
        m if m == MAGIC_BIG => Some(Endian::Big),
        _ => None,
    }
}

/// Reads the header from the file's first bytes (at least 16; 104 in file mode).
pub fn read_start(bytes: &[u8]) -> Result<Start, Located> {
    let truncated = |needed: u64| {
        Located::new(Part::FileHeader, 0, format!("the file is {} bytes, its header needs {needed}", bytes.len()))
    };
    if bytes.len() < PIPE_HEADER_SIZE as usize {
        return Err(truncated(PIPE_HEADER_SIZE));
    }
    let Some(endian) = endian_of_magic(bytes) else {
        return Err(Located::new(Part::FileHeader, 0, "not a perf.data file (no PERFILE2 magic)"));
    };
    let word = |at: usize| bytes.get(at..at + 8).map(|b| endian.u64(b.try_into().expect("8 bytes")));
    let size = word(8).expect("16 bytes checked");
    if size == PIPE_HEADER_SIZE {
        return Ok(Start::Pipe { endian });
    }
    if size != FILE_HEADER_SIZE {
        return Err(Located::new(
            Part::FileHeader,
            8,
            format!(
                "header size {size} (perf writes {FILE_HEADER_SIZE} in file mode, {PIPE_HEADER_SIZE} in pipe mode)"
            ),
        ));
    }
    if bytes.len() < FILE_HEADER_SIZE as usize {
        return Err(truncated(FILE_HEADER_SIZE));
    }
    let section =
        |at: usize| FileSection { offset: word(at).expect("in header"), size: word(at + 8).expect("in header") };
    let features = [0, 1, 2, 3].map(|i| word(72 + 8 * i).expect("in header"));
    Ok(Start::File(FileHeader {
        endian,
        attr_size: word(16).expect("in header"),
        attrs: section(24),
        data: section(40),
        features,
    }))
}
