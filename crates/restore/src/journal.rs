//! The guard's changes on disk, for the one way out that skips the undoing: SIGKILL (or
//! a crash). A journaled [`Guard`](crate::Guard) rewrites `DIR/PID.journal` after each
//! change (the same ordered list of files with their original values and mounts it undoes
//! itself) and removes it once everything is put back. A later instance calls
//! [`recover`] before it changes anything: every journal whose process is gone (its pid
//! dead, or now another process's, told by the start time) is undone latest change first
//! and removed, and the caller says what was reset.

use crate::files::{Change, undo};
use std::io;
use std::path::{Path, PathBuf};

/// Where schedlens keeps its journals (a tmpfs: gone after a reboot, as the changes are).
pub const JOURNAL_DIR: &str = "/run/schedlens";

/// A journal file of a running guard.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    header: String,
}

impl Journal {
    /// The journal of this process in `dir` (created if missing); `None` when it cannot
    /// be written there (the guard then works without one).
    pub fn create(dir: &Path) -> Option<Journal> {
        std::fs::create_dir_all(dir).ok()?;
        let pid = std::process::id();
        let header = format!("pid\t{pid}\t{}\n", start_time(pid)?);
        let journal = Journal { path: dir.join(format!("{pid}.journal")), header };
        journal.write(&[]).ok()?;
        Some(journal)
    }

    /// Rewrites the journal with `changes` (in the order made), through a temporary file
    /// renamed over it, so a kill never leaves half a journal.
    pub fn write(&self, changes: &[Change]) -> io::Result<()> {
        let mut text = self.header.clone();
        for change in changes {
            match change {
                Change::File { path, original } => {
                    text.push_str(&format!("file\t{}\t{}\n", escape(&path.to_string_lossy()), escape(original)))
                }
                Change::Mount { path } => text.push_str(&format!("mount\t{}\n", escape(&path.to_string_lossy()))),
            }
        }
        let temporary = self.path.with_extension("journal.new");
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, &self.path)
    }

    /// Everything was put back: the journal goes.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What [`recover`] put back for a process that was killed while it held changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    pub pid: u32,
    /// Files written back and file systems unmounted.
    pub changes: usize,
    /// Why changes could not be undone (the journal is removed all the same).
    pub errors: Vec<String>,
}

/// Undoes the journals in `dir` left by processes that are gone; what each had changed.
pub fn recover(dir: &Path) -> Vec<Recovered> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "journal"))
        .collect();
    paths.sort();
    paths.into_iter().filter_map(|path| recover_one(&path)).collect()
}

fn recover_one(path: &Path) -> Option<Recovered> {
    let text = std::fs::read_to_string(path).ok()?;
    let (pid, started, changes) = parse(&text)?;
    if start_time(pid).is_some_and(|now| now == started) {
        return None; // Its process still runs.
    }
    let errors: Vec<String> = changes.iter().rev().filter_map(|c| Some(undo(c).err()?.to_string())).collect();
    let _ = std::fs::remove_file(path);
    Some(Recovered { pid, changes: changes.len(), errors })
}

fn parse(text: &str) -> Option<(u32, u64, Vec<Change>)> {
    let mut lines = text.lines();
    let mut header = lines.next()?.split('\t');
    let (_, pid, started) = (header.next().filter(|w| *w == "pid")?, header.next()?, header.next()?);
    let changes = lines
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["file", path, original] => {
                    Some(Change::File { path: PathBuf::from(unescape(path)), original: unescape(original) })
                }
                ["mount", path] => Some(Change::Mount { path: PathBuf::from(unescape(path)) }),
                _ => None,
            }
        })
        .collect();
    Some((pid.parse().ok()?, started.parse().ok()?, changes))
}

/// When the process started, in clock ticks after boot (`/proc/PID/stat`'s 22nd field):
/// with the pid, it names one process even after pids are reused.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Fields after the name start at the 3rd (state); the 22nd is the 20th of these.
    after_name.split_whitespace().nth(19)?.parse().ok()
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\t', "\\t").replace('\n', "\\n")
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Guard;

    #[test]
    fn a_killed_guards_journal_is_undone_and_a_living_ones_is_not() {
        let dir = std::env::temp_dir().join(format!("restore-journal-{}", std::process::id()));
        let file = dir.join("knob");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&file, "4\t4\t1\t7\n").unwrap();
        let mut guard = Guard::journaled(&dir);
        guard.set(&file, "9").unwrap();
        assert!(recover(&dir).is_empty(), "this process still runs");
        // As a killed process leaves it: its journal, the file changed.
        let journal = dir.join(format!("{}.journal", std::process::id()));
        let text = std::fs::read_to_string(&journal).unwrap();
        std::mem::forget(guard);
        let dead = "pid\t999999999\t1\n".to_string() + text.split_once('\n').unwrap().1;
        std::fs::remove_file(&journal).unwrap();
        std::fs::write(dir.join("999999999.journal"), dead).unwrap();
        let recovered = recover(&dir);
        assert_eq!(recovered.len(), 1);
        assert_eq!((recovered[0].pid, recovered[0].changes, recovered[0].errors.len()), (999_999_999, 1, 0));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "4\t4\t1\t7");
        assert!(!dir.join("999999999.journal").exists());
        let mut guard = Guard::journaled(&dir);
        guard.set(&file, "5").unwrap();
        guard.restore().unwrap();
        assert!(!journal.exists(), "removed once restored");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn escaped_values_come_back() {
        for text in ["a\tb\\c\nd", "", "\\t"] {
            assert_eq!(unescape(&escape(text)), text);
        }
    }
}
