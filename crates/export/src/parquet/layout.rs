//! Where each table of a trace goes: `DIR/<table>/trace=<NAME>/part.parquet` and
//! `DIR/events/<event>/trace=<NAME>/part.parquet` (Hive-style partitions, so DuckDB and
//! Spark read the trace name as a column and one query covers every trace exported into
//! DIR), and `DIR/meta/trace=<NAME>/meta.json`; and the name a trace gets from its path
//! ([`partition_name`]), so that traces of the same file name in different folders never
//! share a partition.

use std::path::{Path, PathBuf};

/// The partition directories of one trace in an export directory.
pub struct Layout {
    root: PathBuf,
    partition: String,
}

impl Layout {
    pub fn new(root: &Path, trace_name: &str) -> Layout {
        Layout { root: root.to_path_buf(), partition: format!("trace={}", partition_value(trace_name)) }
    }

    /// The trace name as it appears in paths (and so in queries).
    pub fn trace_value(&self) -> &str {
        &self.partition["trace=".len()..]
    }

    pub fn table_file(&self, table: &str) -> PathBuf {
        self.root.join(table).join(&self.partition).join("part.parquet")
    }

    pub fn event_file(&self, event: &str) -> PathBuf {
        self.root.join("events").join(event).join(&self.partition).join("part.parquet")
    }

    pub fn meta_file(&self) -> PathBuf {
        self.root.join("meta").join(&self.partition).join("meta.json")
    }
}

/// A trace name usable as a partition value: letters, digits and `._-+` kept, anything
/// else (path separators, `=`, spaces) replaced by `_`.
pub fn partition_value(name: &str) -> String {
    let value: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-+".contains(c) { c } else { '_' }).collect();
    if value.is_empty() || value.starts_with('.') { format!("_{value}") } else { value }
}

/// File endings that name the format rather than the run, left out of partition names.
const TRACE_ENDINGS: [&str; 5] = [".dat", ".data", ".pftrace", ".perfetto-trace", ".perfetto"];
/// Hex digits of the path's hash in a partition name (48 bits).
const HASH_DIGITS: usize = 12;
/// The longest file name kept in a partition name (directory names end at 255 bytes).
const STEM_CHARS: usize = 100;

/// The partition name of the trace at `source` (an absolute path, symbolic links
/// resolved): its file name without a format ending, made a [`partition_value`] (its first
/// 100 characters), then `-` and the first 12 hex digits of the FNV-1a 64-bit hash of the
/// path's bytes. The same
/// path always gives the same name (so exporting it again replaces its partition), and two
/// paths share one only if their hashes' 48 bits agree.
pub fn partition_name(source: &Path) -> String {
    let file = source.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let stem = TRACE_ENDINGS.iter().find_map(|end| file.strip_suffix(end).filter(|s| !s.is_empty())).unwrap_or(&file);
    let hash = format!("{:016x}", fnv1a_64(source.as_os_str().as_encoded_bytes()));
    let value = partition_value(stem);
    // ASCII only: any length is a character boundary.
    format!("{}-{}", &value[..value.len().min(STEM_CHARS)], &hash[..HASH_DIGITS])
}

/// FNV-1a, 64 bits: a fixed function (std's `DefaultHasher` may change between Rust
/// releases, and partition names must not).
fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_values_are_safe() {
        assert_eq!(partition_value("run-01.dat"), "run-01.dat");
        assert_eq!(partition_value("a b/c=d"), "a_b_c_d");
        assert_eq!(partition_value(".."), "_..");
        let layout = Layout::new(Path::new("/x"), "t 1");
        assert_eq!(layout.table_file("segments"), Path::new("/x/segments/trace=t_1/part.parquet"));
        assert_eq!(layout.event_file("sched_switch"), Path::new("/x/events/sched_switch/trace=t_1/part.parquet"));
    }

    #[test]
    fn partition_names_keep_the_file_name_and_tell_folders_apart() {
        // The published test vectors of FNV-1a 64.
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
        let a = partition_name(Path::new("/runs/a/run-01.dat"));
        let b = partition_name(Path::new("/runs/b/run-01.dat"));
        assert!(a.starts_with("run-01-") && b.starts_with("run-01-") && a != b, "{a} {b}");
        assert_eq!(a.len(), "run-01-".len() + HASH_DIGITS);
        assert_eq!(a, partition_name(Path::new("/runs/a/run-01.dat")), "stable");
        assert!(partition_name(Path::new("/x/perf.data")).starts_with("perf-"));
        assert!(partition_name(Path::new("/x/t.pftrace")).starts_with("t-"));
        assert!(partition_name(Path::new("/x/a b=c.dat")).starts_with("a_b_c-"));
        assert!(partition_name(Path::new("/x/.dat")).starts_with("_.dat-"));
        let long = partition_name(&Path::new("/x").join("é".repeat(200)));
        assert_eq!(long.len(), STEM_CHARS + 1 + HASH_DIGITS);
    }
}
