//! The one guard for kernel files. tracefs control files, sysctls, sysfs and debugfs
//! tunables all read back as text that is not always what must be written to restore them
//! (`local [global] counter`, `7 (expanded: 1408)`, `0*`), and all must be put back
//! however the program ends; [`Guard`] does both, for any of them, and for the pseudo file
//! systems it had to mount to reach them.

use crate::journal::Journal;
use crate::mounts;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Bytes asked for per read of a kernel file.
const READ_CHUNK: usize = 1 << 16;

/// Why a kernel file could not be read, changed or put back.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: cannot write {value:?}: {source}", path.display())]
    Write {
        path: PathBuf,
        value: String,
        #[source]
        source: io::Error,
    },
    #[error("{}: unexpected content {text:?}", path.display())]
    Content { path: PathBuf, text: String },
    #[error("{fstype} is not mounted and mounting it on {} failed: {source}", path.display())]
    Mount {
        fstype: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot unmount {}: {source}", path.display())]
    Unmount {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// One change the guard undoes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// A file about to be written, with the value that puts it back.
    File { path: PathBuf, original: String },
    /// A pseudo file system mounted here.
    Mount { path: PathBuf },
}

impl Change {
    /// The value that puts `path` back, if this change is that file's.
    fn original_of(&self, path: &Path) -> Option<&str> {
        match self {
            Change::File { path: p, original } if p == path => Some(original),
            _ => None,
        }
    }
}

/// The changes made to kernel files and mounts, undone latest first by [`Guard::restore`]
/// or, on every other way out (an error returned early, a panic), by `Drop`.
#[derive(Debug, Default)]
pub struct Guard {
    /// In the order made.
    changes: Vec<Change>,
    restored: bool,
    /// Where the changes are also kept on disk, if they are.
    journal: Option<Journal>,
}

impl Guard {
    pub fn new() -> Guard {
        Guard::default()
    }

    /// A guard that also keeps its changes in a journal in `dir` (see [`crate::recover`]),
    /// so that a later instance can undo them should this process be killed; without one
    /// when `dir` cannot be written.
    pub fn journaled(dir: &Path) -> Guard {
        Guard { changes: Vec::new(), restored: false, journal: Journal::create(dir) }
    }

    fn record(&mut self, change: Change) {
        self.changes.push(change);
        if let Some(journal) = &self.journal {
            // Best effort: a journal that cannot be written only loses the SIGKILL case.
            let _ = journal.write(&self.changes);
        }
    }

    /// Where a pseudo file system (`tracefs`, `debugfs`) is mounted; when it is nowhere, it
    /// is mounted on `target` now and unmounted when the guard restores.
    pub fn mount(&mut self, fstype: &str, target: &Path) -> Result<PathBuf, Error> {
        if let Some(root) = mounts::mount_point(fstype) {
            return Ok(root);
        }
        let failed = |source| Error::Mount { fstype: fstype.to_string(), path: target.to_path_buf(), source };
        mounts::mount(fstype, target).map_err(failed)?;
        self.record(Change::Mount { path: target.to_path_buf() });
        Ok(target.to_path_buf())
    }

    /// Reads the file's value, unless it is already remembered, so it is written back at
    /// the end; returns that value.
    pub fn remember(&mut self, path: &Path) -> Result<String, Error> {
        if let Some(original) = self.changes.iter().find_map(|change| change.original_of(path)) {
            return Ok(original.to_string());
        }
        let text = read_text(path).map_err(|source| Error::Read { path: path.to_path_buf(), source })?;
        let original = restorable_value(&text).ok_or_else(|| Error::Content { path: path.to_path_buf(), text })?;
        self.record(Change::File { path: path.to_path_buf(), original: original.clone() });
        Ok(original)
    }

    /// Writes `value` to the file, having remembered its value first.
    pub fn set(&mut self, path: &Path, value: &str) -> Result<(), Error> {
        self.remember(path)?;
        write(path, value)
    }

    /// Undoes every change, latest first (files written back, file systems unmounted);
    /// the first failure is returned after trying everything.
    pub fn restore(mut self) -> Result<(), Error> {
        self.restore_all().into_iter().next().map_or(Ok(()), Err)
    }

    fn restore_all(&mut self) -> Vec<Error> {
        self.restored = true;
        let errors = self.changes.iter().rev().filter_map(|change| undo(change).err()).collect();
        if let Some(journal) = &self.journal {
            journal.remove();
        }
        errors
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.restored {
            return;
        }
        for error in self.restore_all() {
            eprintln!("schedlens: warning: could not restore: {error}");
        }
    }
}

pub(crate) fn undo(change: &Change) -> Result<(), Error> {
    match change {
        Change::File { path, original } => write(path, original),
        Change::Mount { path } => {
            mounts::unmount(path).map_err(|source| Error::Unmount { path: path.to_path_buf(), source })
        }
    }
}

fn write(path: &Path, value: &str) -> Result<(), Error> {
    std::fs::write(path, value).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        value: value.to_string(),
        source,
    })
}

/// A kernel file's text, read in large pieces: some tracefs files (`events/header_page`)
/// end early when read a few bytes at a time, as `read_to_string` starts.
pub fn read_text(path: &Path) -> io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut chunk = vec![0; READ_CHUNK];
    let mut bytes = Vec::new();
    loop {
        match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// The value that writes a file back as it shows now: the selected word of a choice list
/// (`local [global] counter` → `global`, `always [madvise] never` → `madvise`), the size
/// a not yet expanded buffer will have (`7 (expanded: 1408)` → `1408`), a single word
/// without the mark of a soft-disabled event (`0*` → `0`), else the text without its line
/// end (`4\t4\t1\t7`). `None` for an empty file, or a choice list without one selection.
pub fn restorable_value(text: &str) -> Option<String> {
    if let Some(rest) = text.split_once("(expanded: ").map(|(_, r)| r) {
        return rest.split(')').next().map(str::to_string);
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.iter().any(|w| w.starts_with('[')) {
        return selected(text).map(str::to_string);
    }
    match words.as_slice() {
        [] => None,
        [word] => Some(word.trim_end_matches('*').to_string()).filter(|w| !w.is_empty()),
        _ => Some(text.trim_end_matches('\n').to_string()),
    }
}

/// The one word of a choice list in brackets (`local [global] counter` → `global`).
pub fn selected(text: &str) -> Option<&str> {
    let mut chosen = text.split_whitespace().filter_map(|w| w.strip_prefix('[')?.strip_suffix(']'));
    let one = chosen.next()?;
    chosen.next().is_none().then_some(one)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_written_back_are_the_ones_the_kernel_accepts() {
        let value = |text: &str| restorable_value(text);
        assert_eq!(value("local [global] counter\n").as_deref(), Some("global"));
        assert_eq!(value("always [madvise] never\n").as_deref(), Some("madvise"));
        assert_eq!(value("7 (expanded: 1408)\n").as_deref(), Some("1408"));
        assert_eq!(value("20001\n").as_deref(), Some("20001"));
        assert_eq!(value("0*\n").as_deref(), Some("0"));
        assert_eq!(value("1\n").as_deref(), Some("1"));
        assert_eq!(value("4\t4\t1\t7\n").as_deref(), Some("4\t4\t1\t7"));
        assert_eq!(value("\n"), None);
        assert_eq!(value("[local] [global]\n"), None);
        assert_eq!(selected("[local] global x86-tsc\n"), Some("local"));
        assert_eq!(selected("local global\n"), None);
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("restore-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn the_first_value_comes_back_on_restore_on_drop_and_while_unwinding() {
        let dir = temp_dir("files");
        let (a, b) = (dir.join("a"), dir.join("b"));
        let reset = || {
            std::fs::write(&a, "5\n").unwrap();
            std::fs::write(&b, "x [y] z\n").unwrap();
        };
        reset();
        let mut guard = Guard::new();
        guard.set(&a, "6").unwrap();
        guard.set(&a, "7").unwrap();
        guard.set(&b, "z").unwrap();
        assert_eq!(guard.remember(&a).unwrap(), "5", "remembered before the first write");
        assert_eq!((read(&a), read(&b)), ("7".into(), "z".into()));
        guard.restore().unwrap();
        assert_eq!((read(&a), read(&b)), ("5".into(), "y".into()), "restored");

        reset();
        {
            let mut guard = Guard::new();
            guard.set(&b, "x").unwrap();
        }
        assert_eq!(read(&b), "y", "dropped");

        reset();
        let panicked = std::panic::catch_unwind(|| {
            let mut guard = Guard::new();
            guard.set(&a, "9").unwrap();
            panic!("a bug while the file is changed");
        });
        assert!(panicked.is_err());
        assert_eq!(read(&a), "5", "restored while unwinding");

        let missing = Guard::new().set(&dir.join("gone"), "1").unwrap_err();
        assert!(matches!(&missing, Error::Read { source, .. } if source.kind() == io::ErrorKind::NotFound));
        std::fs::write(&a, "").unwrap();
        assert!(matches!(Guard::new().set(&a, "1"), Err(Error::Content { .. })));
        assert_eq!(read(&a), "", "not written when it could not be remembered");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
