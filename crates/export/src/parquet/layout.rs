//! Where each table of a trace goes: `DIR/<table>/trace=<NAME>/part.parquet` and
//! `DIR/events/<event>/trace=<NAME>/part.parquet` (Hive-style partitions, so DuckDB and
//! Spark read the trace name as a column and one query covers every trace exported into
//! DIR), and `DIR/meta/trace=<NAME>/meta.json`.

use crate::{ExportError, Result};
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

    /// Removes what an earlier export of this trace left (tables it may not write again),
    /// touching nothing but this trace's partition directories.
    pub fn clear(&self) -> Result<()> {
        let entries = |dir: &Path| -> Vec<PathBuf> {
            std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default()
        };
        let mut tables = entries(&self.root);
        tables.extend(entries(&self.root.join("events")));
        for table in tables {
            let partition = table.join(&self.partition);
            if partition.is_dir() {
                std::fs::remove_dir_all(&partition).map_err(|e| ExportError::io(&partition, e))?;
            }
        }
        Ok(())
    }
}

/// A trace name usable as a partition value: letters, digits and `._-+` kept, anything
/// else (path separators, `=`, spaces) replaced by `_`.
pub fn partition_value(name: &str) -> String {
    let value: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-+".contains(c) { c } else { '_' }).collect();
    if value.is_empty() || value.starts_with('.') { format!("_{value}") } else { value }
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
}
