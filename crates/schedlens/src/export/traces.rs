//! The traces `export` is given: files, directories (every trace file under them) and
//! glob patterns the shell did not expand (quoted, or too many files for one command
//! line), in the order given.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// Endings of Perfetto traces: a Perfetto file has no magic bytes, so a directory's file
/// is taken as one only by its name and its first bytes together.
const PERFETTO_ENDINGS: [&str; 3] = ["pftrace", "perfetto-trace", "perfetto"];

/// The trace files `arguments` name. A directory gives its trace files (by their first
/// bytes), in its tree's sorted order, hidden entries left out; an argument that is not a
/// file but holds `*`, `?` or `[` is a glob pattern; anything else is kept for its reader
/// to say what is wrong with it.
pub fn expand(arguments: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut traces = Vec::new();
    for argument in arguments {
        if argument.is_dir() {
            let found = traces_under(argument)?;
            if found.is_empty() {
                bail!("{} holds no trace file (trace.dat, perf.data or Perfetto)", argument.display());
            }
            traces.extend(found);
        } else if !argument.exists() && is_pattern(argument) {
            traces.extend(matches(argument)?);
        } else {
            traces.push(argument.clone());
        }
    }
    Ok(traces)
}

/// `traces` with each file kept once, where first named (a directory and a pattern may
/// both name it).
pub fn once_each(mut traces: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    traces.retain(|trace| seen.insert(std::fs::canonicalize(trace).unwrap_or_else(|_| trace.clone())));
    traces
}

fn is_pattern(path: &Path) -> bool {
    path.to_string_lossy().contains(['*', '?', '['])
}

/// The files a glob pattern matches (directories among them give their traces).
fn matches(pattern: &Path) -> Result<Vec<PathBuf>> {
    let text = pattern.to_string_lossy();
    // As a shell does: `*` does not match a name's leading dot.
    let options = glob::MatchOptions { require_literal_leading_dot: true, ..glob::MatchOptions::new() };
    let paths = glob::glob_with(&text, options).with_context(|| format!("{text}: not a glob pattern"))?;
    let mut found = Vec::new();
    for path in paths {
        let path = path.with_context(|| format!("{text}: cannot read a directory"))?;
        if path.is_dir() {
            found.extend(traces_under(&path)?);
        } else {
            found.push(path);
        }
    }
    if found.is_empty() {
        bail!("{text} matches no file");
    }
    Ok(found)
}

/// The trace files in the tree under `dir`, sorted by path; hidden files and
/// directories (a dataset's staging directories) are skipped, symbolic links to files
/// followed but not those to directories.
fn traces_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot read the directory {}", dir.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot read the directory {}", dir.display()))?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path);
            } else if path.is_file() && is_trace(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn is_trace(path: &Path) -> bool {
    match inputs::Kind::named_by_file(path) {
        Some(inputs::Kind::TraceDat | inputs::Kind::PerfData) => true,
        Some(inputs::Kind::Perfetto) => {
            path.extension().is_some_and(|ending| PERFETTO_ENDINGS.iter().any(|e| ending == *e))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_patterns_give_their_traces_once() {
        let dir = std::env::temp_dir().join(format!("schedlens-traces-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["a", "b", ".staging-x"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
            std::fs::write(dir.join(sub).join("run.dat"), b"\x17\x08\x44tracing6").unwrap();
        }
        std::fs::write(dir.join("a/notes.txt"), b"\nnot a trace").unwrap();
        std::fs::write(dir.join("a/t.pftrace"), b"\x0a\x00").unwrap();
        let got = expand(std::slice::from_ref(&dir)).unwrap();
        let expected: Vec<PathBuf> = ["a/run.dat", "a/t.pftrace", "b/run.dat"].iter().map(|p| dir.join(p)).collect();
        assert_eq!(got, expected);
        let pattern = dir.join("*/run.dat");
        let named = expand(&[pattern, dir.join("a/run.dat")]).unwrap();
        assert_eq!(once_each(named), [dir.join("a/run.dat"), dir.join("b/run.dat")]);
        assert!(expand(&[dir.join("*.nothing")]).unwrap_err().to_string().contains("matches no file"));
        std::fs::create_dir_all(dir.join("empty")).unwrap();
        assert!(expand(&[dir.join("empty")]).unwrap_err().to_string().contains("holds no trace file"));
        let missing = dir.join("missing.dat");
        assert_eq!(expand(std::slice::from_ref(&missing)).unwrap(), [missing]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
