//! One dataset written by many exports, at once and again. A trace is written into a
//! staging directory beside the tables (`DS/.staging-NAME-PID-N`, under no path a reader
//! is told to read, and hidden from Spark and pyarrow, which skip names starting with `.`),
//! then committed: each file renamed into its place (a reader sees the old file or the
//! new one, never half of one), the trace's partitions of tables the new export did not
//! write removed, and `_schedlens.json` rewritten through a renamed temporary file. Commits
//! hold an exclusive lock on the dataset directory (`flock`, released when the process
//! ends, however it ends), so exports into one dataset from several threads or processes
//! commit one after another and none loses another's manifest entry. A failed export
//! removes its staging directory and leaves the dataset as it was.

use crate::{ExportError, Result};
use documents::dataset::{Dataset, DatasetTrace};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The manifest at the dataset's root.
pub const MANIFEST: &str = "_schedlens.json";
/// What the manifest is written to before it is renamed (under the lock).
const MANIFEST_TEMPORARY: &str = "_schedlens.json.tmp";
const STAGING_PREFIX: &str = ".staging-";
/// The part of the trace's name a staging directory shows (a `--name` may be long).
const STAGING_NAME_CHARS: usize = 64;
/// The directory holding the raw-event tables, one directory per event.
const EVENTS: &str = "events";

/// Reads a dataset's manifest (empty when the dataset has none yet).
pub fn read_manifest(root: &Path) -> Result<Dataset> {
    let path = root.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Dataset::default()),
        Err(error) => return Err(ExportError::io(&path, error)),
    };
    serde_json::from_str(&text).map_err(|error| {
        ExportError::Invalid(format!(
            "{}: not a schedlens dataset manifest ({error}); move it away to start a new one",
            path.display()
        ))
    })
}

/// A trace's files on their way into a dataset; the directory is removed when dropped
/// (after a failure, or emptied by the commit).
pub(crate) struct Staging {
    root: PathBuf,
    dir: PathBuf,
    /// `trace=NAME`.
    partition: String,
}

impl Staging {
    /// A new staging directory in `root` for the trace whose partition value is `value`.
    pub fn new(root: &Path, value: &str) -> Result<Staging> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        std::fs::create_dir_all(root).map_err(|e| ExportError::io(root, e))?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        // The name's start tells whose it is; the pid and the count make it unique.
        let shown = &value[..value.len().min(STAGING_NAME_CHARS)];
        let dir = root.join(format!("{STAGING_PREFIX}{shown}-{}-{n}", std::process::id()));
        // Left by a killed process of the same id (ids are reused).
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).map_err(|e| ExportError::io(&dir, e))?;
        Ok(Staging { root: root.to_path_buf(), dir, partition: format!("trace={value}") })
    }

    /// Where the trace's tables are written, laid out as in the dataset.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Moves the staged files into the dataset, removes the trace's other partitions and
    /// lists `entry` in the manifest (replacing the trace's earlier entry).
    pub fn commit(self, entry: DatasetTrace) -> Result<()> {
        let staged = files_under(&self.dir)?;
        let _lock = DatasetLock::take(&self.root)?;
        // Read first: a manifest that cannot be read stops the commit before any file moves.
        let manifest = read_manifest(&self.root)?;
        for relative in &staged {
            let target = self.root.join(relative);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| ExportError::io(parent, e))?;
            }
            std::fs::rename(self.dir.join(relative), &target).map_err(|e| ExportError::io(&target, e))?;
        }
        let written: Vec<&Path> = staged.iter().filter_map(|file| file.parent()).collect();
        for partition in self.partitions_in_dataset()? {
            let relative = partition.strip_prefix(&self.root).expect("found under the root");
            if !written.contains(&relative) {
                std::fs::remove_dir_all(&partition).map_err(|e| ExportError::io(&partition, e))?;
                // A table no trace is left in goes too (readers would find an empty table).
                let _ = partition.parent().map(std::fs::remove_dir);
            }
        }
        write_manifest(&self.root, manifest, entry)?;
        remove_abandoned_staging(&self.root);
        Ok(())
    }

    /// This trace's partition directories in the dataset: `TABLE/trace=NAME` and
    /// `events/EVENT/trace=NAME`.
    fn partitions_in_dataset(&self) -> Result<Vec<PathBuf>> {
        let mut tables = table_dirs(&self.root)?;
        let events = self.root.join(EVENTS);
        if events.is_dir() {
            tables.extend(table_dirs(&events)?);
        }
        Ok(tables.into_iter().map(|table| table.join(&self.partition)).filter(|p| p.is_dir()).collect())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The directories of `dir` that can be tables: not hidden, not `_`-prefixed (Spark's
/// rule for metadata).
fn table_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| ExportError::io(dir, e))?;
    Ok(entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with(['.', '_']))
        .map(|entry| entry.path())
        .collect())
}

/// The files under `dir`, as paths relative to it, in a fixed order.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let here = dir.join(&relative);
        let entries = std::fs::read_dir(&here).map_err(|e| ExportError::io(&here, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| ExportError::io(&here, e))?;
            let path = relative.join(entry.file_name());
            if entry.file_type().map_err(|e| ExportError::io(&entry.path(), e))?.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Writes `dataset` with `entry` replacing the trace's entry (the caller holds the lock).
fn write_manifest(root: &Path, mut dataset: Dataset, entry: DatasetTrace) -> Result<()> {
    dataset.schedlens_version = env!("CARGO_PKG_VERSION").to_string();
    dataset.traces.retain(|trace| trace.trace != entry.trace);
    let at = dataset.traces.partition_point(|trace| trace.trace < entry.trace);
    dataset.traces.insert(at, entry);
    let text = serde_json::to_string_pretty(&dataset).expect("the manifest serializes") + "\n";
    let temporary = root.join(MANIFEST_TEMPORARY);
    std::fs::write(&temporary, text).map_err(|e| ExportError::io(&temporary, e))?;
    let path = root.join(MANIFEST);
    std::fs::rename(&temporary, &path).map_err(|e| ExportError::io(&path, e))
}

/// Removes staging directories of processes that are gone (killed while exporting); the
/// caller holds the lock. Best effort: a directory that cannot be removed stays.
fn remove_abandoned_staging(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(STAGING_PREFIX) else { continue };
        // `NAME-PID-N`: the pid is the second field from the end.
        let pid = rest.rsplit('-').nth(1).and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| !Path::new("/proc").join(pid.to_string()).exists()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// An exclusive `flock` on the dataset directory, released when the directory is closed
/// (when dropped, or when the process ends).
struct DatasetLock {
    _dir: File,
}

impl DatasetLock {
    fn take(root: &Path) -> Result<DatasetLock> {
        let dir = File::open(root).map_err(|e| ExportError::io(root, e))?;
        loop {
            // SAFETY: flock on a descriptor this function owns; no memory is passed.
            if unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(DatasetLock { _dir: dir });
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(ExportError::io(root, error));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(trace: &str) -> DatasetTrace {
        DatasetTrace {
            trace: trace.into(),
            source: format!("/runs/{trace}.dat"),
            format: "trace.dat".into(),
            cpus: 2,
            events: 10,
            start_ns: 1,
            end_ns: 2,
            window_start_ns: 1,
            window_end_ns: 2,
            lost_events: 0,
            partial: false,
            schedlens_version: "0".into(),
        }
    }

    fn stage(root: &Path, value: &str, files: &[&str]) -> Staging {
        let staging = Staging::new(root, value).unwrap();
        for file in files {
            let path = staging.dir().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, value).unwrap();
        }
        staging
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("schedlens-dataset-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_commit_replaces_the_partition_and_keeps_the_others() {
        let root = temp("replace");
        let files = ["segments/trace=a/part.parquet", "events/sched_foo/trace=a/part.parquet"];
        stage(&root, "a", &files).commit(entry("a")).unwrap();
        stage(&root, "b", &["segments/trace=b/part.parquet"]).commit(entry("b")).unwrap();
        // Again, without sched_foo: its partition of a goes, and its table with it.
        stage(&root, "a", &["segments/trace=a/part.parquet"]).commit(entry("a")).unwrap();
        assert!(root.join("segments/trace=a/part.parquet").is_file());
        assert!(root.join("segments/trace=b/part.parquet").is_file());
        assert!(!root.join("events/sched_foo").exists());
        let manifest = read_manifest(&root).unwrap();
        let names: Vec<&str> = manifest.traces.iter().map(|t| t.trace.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let left: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left.len(), 3, "segments, events and the manifest only: {left:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_dropped_staging_leaves_the_dataset_as_it_was() {
        let root = temp("failed");
        stage(&root, "a", &["segments/trace=a/part.parquet"]).commit(entry("a")).unwrap();
        drop(stage(&root, "a", &["segments/trace=a/part.parquet", "waits/trace=a/part.parquet"]));
        assert_eq!(std::fs::read_to_string(root.join("segments/trace=a/part.parquet")).unwrap(), "a");
        assert!(!root.join("waits").exists());
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 2, "segments and the manifest");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn concurrent_commits_keep_every_entry() {
        let root = temp("concurrent");
        std::thread::scope(|scope| {
            for thread in 0..8 {
                let root = &root;
                scope.spawn(move || {
                    for n in 0..10 {
                        let value = format!("t{thread}-{n}");
                        let file = format!("segments/trace={value}/part.parquet");
                        stage(root, &value, &[&file]).commit(entry(&value)).unwrap();
                    }
                });
            }
        });
        assert_eq!(read_manifest(&root).unwrap().traces.len(), 80);
        assert_eq!(std::fs::read_dir(root.join("segments")).unwrap().count(), 80);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_damaged_manifest_is_an_error_that_names_it() {
        let root = temp("damaged");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join(MANIFEST), "{").unwrap();
        let error = stage(&root, "a", &["segments/trace=a/part.parquet"]).commit(entry("a")).unwrap_err();
        assert!(error.to_string().contains("_schedlens.json: not a schedlens dataset manifest"), "{error}");
        assert!(!root.join("segments").exists(), "nothing moved");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
