//! Scheduler knobs a sweep sets, and putting them back. A knob is named as `sysctl` names
//! it (`kernel.sched_rr_timeslice_ms` → `/proc/sys/kernel/sched_rr_timeslice_ms`), as a
//! path below debugfs (`sched/base_slice_ns`, debugfs mounted for the sweep if it is not),
//! or as any file under `/proc` or `/sys`.
//!
//! Every write goes through [`KnobGuard`], the knobs' face of `restore::Guard`, which read
//! each knob's value before anything changed and writes it back at the end: explicitly on
//! the normal path, from `Drop` on errors and panics (the sweep's signal handling turns
//! Ctrl-C and SIGTERM into the normal path). Before a sweep starts, [`KnobGuard::probe`]
//! writes every value it will use and then the original, so a knob that is missing,
//! read-only, refused under kernel lockdown, or that rejects a value is a clear error
//! before the first run.

use std::io;
use std::path::{Path, PathBuf};

/// Where debugfs is mounted when it is not.
const DEBUGFS: &str = "/sys/kernel/debug";

/// Why a knob cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KnobError {
    #[error("--set {0:?}: expected KNOB=VALUE[,VALUE...] (e.g. kernel.sched_rr_timeslice_ms=1,10,100)")]
    Spec(String),
    #[error("{name}: {reason}")]
    Name { name: String, reason: String },
    #[error("{name}: {} does not exist{hint}", path.display())]
    Missing { name: String, path: PathBuf, hint: String },
    #[error("{name}: cannot read {}: {error}{}", path.display(), permission_hint(path, error))]
    Read { name: String, path: PathBuf, error: io::Error },
    #[error("{name}: the kernel refused {value:?} in {}: {error}{}", path.display(), permission_hint(path, error))]
    Write { name: String, path: PathBuf, value: String, error: io::Error },
    /// Mounting debugfs, undoing, or a value that cannot be written back.
    #[error(transparent)]
    Guard(restore::Error),
}

fn permission_hint(path: &Path, error: &io::Error) -> &'static str {
    let denied = matches!(error.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES));
    match () {
        _ if !denied => "",
        _ if unsafe { libc::geteuid() } != 0 => " (changing scheduler knobs needs root)",
        _ if path.starts_with(DEBUGFS) || restore::mount_point("debugfs").is_some_and(|d| path.starts_with(d)) => {
            " (the kernel is in lockdown, which closes debugfs even to root: see `man kernel_lockdown`)"
        }
        _ => " (the kernel does not let even root change it here)",
    }
}

/// How a knob is named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A sysctl: the file below /proc/sys.
    Sysctl(PathBuf),
    /// A path below debugfs.
    Debugfs(PathBuf),
    /// A file under /proc or /sys.
    File(PathBuf),
}

/// A knob, as the user named it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    pub name: String,
    pub place: Place,
}

impl Knob {
    /// `kernel.sched_rr_timeslice_ms`, `sched/base_slice_ns`, `/proc/...` or `/sys/...`.
    pub fn parse(name: &str) -> Result<Knob, KnobError> {
        let refuse = |reason: &str| KnobError::Name { name: name.to_string(), reason: reason.to_string() };
        let place = if name.starts_with('/') {
            let path = PathBuf::from(name);
            if path.components().any(|c| c == std::path::Component::ParentDir) {
                return Err(refuse("a knob's path may not contain `..`"));
            }
            if !(path.starts_with("/proc") || path.starts_with("/sys")) {
                return Err(refuse("only files under /proc and /sys are knobs"));
            }
            Place::File(path)
        } else if name.contains('/') {
            if name.split('/').any(|part| part.is_empty() || part == "..") {
                return Err(refuse("not a path below debugfs (e.g. sched/base_slice_ns)"));
            }
            Place::Debugfs(PathBuf::from(name))
        } else if name.contains('.') && !name.split('.').any(str::is_empty) {
            Place::Sysctl(Path::new("/proc/sys").join(name.replace('.', "/")))
        } else {
            return Err(refuse(
                "not a knob: give a sysctl name (kernel.sched_rr_timeslice_ms), a path below debugfs \
                 (sched/base_slice_ns) or a file under /proc or /sys",
            ));
        };
        Ok(Knob { name: name.to_string(), place })
    }

    /// The file, with debugfs at `debugfs`.
    pub fn path(&self, debugfs: &Path) -> PathBuf {
        match &self.place {
            Place::Sysctl(path) | Place::File(path) => path.clone(),
            Place::Debugfs(relative) => debugfs.join(relative),
        }
    }

    /// A hint for a knob that does not exist: the scheduler sysctls that moved to debugfs
    /// in Linux 5.13 (`sched_min_granularity_ns` became `base_slice_ns` in 6.6).
    fn missing_hint(&self) -> String {
        let Place::Sysctl(_) = self.place else { return String::new() };
        let Some(base) = self.name.strip_prefix("kernel.sched_") else { return String::new() };
        let renamed = if base == "min_granularity_ns" { "base_slice_ns" } else { base };
        format!(
            " (most CFS tunables moved from sysctl to debugfs in Linux 5.13: try --set sched/{renamed}=..., \
             if this kernel has it)"
        )
    }
}

/// One `--set`: a knob and the values to try, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnobValues {
    pub knob: Knob,
    pub values: Vec<String>,
}

impl KnobValues {
    /// `KNOB=V1,V2,...`.
    pub fn parse(spec: &str) -> Result<KnobValues, KnobError> {
        let (name, values) = spec.split_once('=').ok_or_else(|| KnobError::Spec(spec.to_string()))?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if name.trim().is_empty() || values.iter().any(String::is_empty) {
            return Err(KnobError::Spec(spec.to_string()));
        }
        Ok(KnobValues { knob: Knob::parse(name.trim())?, values })
    }
}

/// A knob held by the guard.
#[derive(Clone, Debug)]
pub struct Held {
    pub name: String,
    pub path: PathBuf,
    /// The value read before anything was written, as it is written back.
    pub original: String,
}

/// The knobs of a sweep, with their values from before it, written back when it ends.
pub struct KnobGuard {
    held: Vec<Held>,
    guard: restore::Guard,
}

impl KnobGuard {
    /// Reads every knob's value (mounting debugfs when a knob needs it and it is not).
    pub fn open(knobs: &[Knob]) -> Result<KnobGuard, KnobError> {
        let mut guard = restore::Guard::new();
        let needs_debugfs = knobs.iter().any(|k| matches!(k.place, Place::Debugfs(_)));
        let debugfs = if needs_debugfs {
            guard.mount("debugfs", Path::new(DEBUGFS)).map_err(KnobError::Guard)?
        } else {
            PathBuf::from(DEBUGFS)
        };
        let mut held = Vec::with_capacity(knobs.len());
        for knob in knobs {
            let path = knob.path(&debugfs);
            let original = guard.remember(&path).map_err(|error| match error {
                restore::Error::Read { source, .. } if source.kind() == io::ErrorKind::NotFound => {
                    KnobError::Missing { name: knob.name.clone(), hint: knob.missing_hint(), path: path.clone() }
                }
                error => in_words(&knob.name, error),
            })?;
            held.push(Held { name: knob.name.clone(), path, original });
        }
        Ok(KnobGuard { held, guard })
    }

    pub fn held(&self) -> &[Held] {
        &self.held
    }

    /// Writes each knob's values in turn, then its original value: every value the sweep
    /// will use is accepted, and the original can be written back.
    pub fn probe(&mut self, values: &[Vec<String>]) -> Result<(), KnobError> {
        for index in 0..self.held.len() {
            for value in values.get(index).into_iter().flatten() {
                self.set(index, value)?;
            }
            let original = self.held[index].original.clone();
            self.set(index, &original)?;
        }
        Ok(())
    }

    /// Writes `value` to knob `index`; returns the value the kernel then shows (it may
    /// round or clamp).
    pub fn set(&mut self, index: usize, value: &str) -> Result<String, KnobError> {
        let held = &self.held[index];
        self.guard.set(&held.path, value).map_err(|error| in_words(&held.name, error))?;
        let shown = restore::read_text(&held.path).map_err(|error| KnobError::Read {
            name: held.name.clone(),
            path: held.path.clone(),
            error,
        })?;
        Ok(restore::restorable_value(&shown).unwrap_or_else(|| shown.trim_end_matches('\n').to_string()))
    }

    /// Writes every original value back (last knob first) and unmounts debugfs if it was
    /// mounted here; the first failure is returned after trying everything.
    pub fn restore(self) -> Result<(), KnobError> {
        let KnobGuard { held, guard } = self;
        guard.restore().map_err(|error| {
            let knob = held.iter().find(|h| matches!(&error, restore::Error::Write { path, .. } if *path == h.path));
            in_words(knob.map_or("", |h| &h.name), error)
        })
    }
}

/// A guard's error in the words of the knob it concerns.
fn in_words(name: &str, error: restore::Error) -> KnobError {
    let name = name.to_string();
    match error {
        restore::Error::Read { path, source } => KnobError::Read { name, path, error: source },
        restore::Error::Write { path, value, source } => KnobError::Write { name, path, value, error: source },
        error => KnobError::Guard(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_are_named_three_ways() {
        let sysctl = Knob::parse("kernel.sched_rr_timeslice_ms").unwrap();
        assert_eq!(sysctl.path(Path::new(DEBUGFS)), Path::new("/proc/sys/kernel/sched_rr_timeslice_ms"));
        let debugfs = Knob::parse("sched/base_slice_ns").unwrap();
        assert_eq!(debugfs.path(Path::new("/d")), Path::new("/d/sched/base_slice_ns"));
        let file = Knob::parse("/sys/kernel/mm/transparent_hugepage/enabled").unwrap();
        assert_eq!(file.place, Place::File("/sys/kernel/mm/transparent_hugepage/enabled".into()));
        for bad in ["/etc/passwd", "/proc/../etc/passwd", "sched/../x", "latency", "kernel..x"] {
            assert!(Knob::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn set_specs() {
        let spec = KnobValues::parse("kernel.sched_autogroup_enabled=0, 1").unwrap();
        assert_eq!(spec.values, ["0", "1"]);
        for bad in ["kernel.x", "kernel.x=", "kernel.x=1,,2", "=1"] {
            assert!(KnobValues::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_guard_restores_files_on_drop_and_on_restore() {
        let dir = std::env::temp_dir().join(format!("runs-knobs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("knob");
        std::fs::write(&file, "5\n").unwrap();
        // Files outside /proc and /sys are refused by name; the guard itself takes any path.
        let knob = Knob { name: "test".into(), place: Place::File(file.clone()) };
        {
            let mut guard = KnobGuard::open(std::slice::from_ref(&knob)).unwrap();
            guard.probe(&[vec!["1".into(), "2".into()]]).unwrap();
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "5");
            assert_eq!(guard.set(0, "7").unwrap(), "7");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "5", "dropped");
        let mut guard = KnobGuard::open(std::slice::from_ref(&knob)).unwrap();
        guard.set(0, "8").unwrap();
        guard.restore().unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "5", "restored");
        let panicked = std::panic::catch_unwind(|| {
            let mut guard = KnobGuard::open(std::slice::from_ref(&knob)).unwrap();
            guard.set(0, "9").unwrap();
            panic!("a bug mid-sweep");
        });
        assert!(panicked.is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "5", "restored while unwinding");
        let missing = Knob { name: "gone".into(), place: Place::File(dir.join("gone")) };
        let error = KnobGuard::open(&[missing]).err().unwrap().to_string();
        assert!(error.contains("does not exist"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
