//! Leaving tracefs as it was found. Every control-file write goes through [`TracefsGuard`],
//! tracefs's face of `restore::Guard`: tracefs is mounted through it when it is not (and
//! unmounted at the end), each file's value is remembered before its first write, and all
//! is undone in reverse order when the recording ends, or by `Drop` on every other way out
//! (errors, panics), so a failed or interrupted recording never leaves events enabled or a
//! resized buffer. The changes are journaled (`restore::JOURNAL_DIR`): after a SIGKILL,
//! the next recording or watch puts them back first.

use crate::error::RecordError;
use crate::tracefs::{TRACEFS, Tracefs};
use std::path::Path;

/// Tracefs with the undo list of what was changed.
pub(crate) struct TracefsGuard {
    fs: Tracefs,
    guard: restore::Guard,
    /// What killed instances had left changed, put back before this one began.
    pub recovered: Vec<restore::Recovered>,
}

impl TracefsGuard {
    /// The mounted tracefs, mounting it when it is not, after putting back what an
    /// instance killed while it traced left changed (its journal); the changes from here
    /// on are journaled in turn.
    pub fn open() -> Result<TracefsGuard, RecordError> {
        let journals = Path::new(restore::JOURNAL_DIR);
        let recovered = restore::recover(journals);
        let mut guard = restore::Guard::journaled(journals);
        let root = guard.mount("tracefs", Path::new(TRACEFS))?;
        Ok(TracefsGuard { fs: Tracefs::at(root), guard, recovered })
    }

    pub fn fs(&self) -> &Tracefs {
        &self.fs
    }

    /// Writes `value` to `file`, having remembered its value when first changed.
    pub fn set(&mut self, file: &str, value: &str) -> Result<(), RecordError> {
        Ok(self.guard.set(&self.fs.path(file), value)?)
    }

    /// Sets every CPU's buffer size. When the CPUs' sizes differ (the file shows `X`),
    /// each CPU's own size is remembered instead.
    pub fn set_buffer_kb(&mut self, kb: u32, all_cpus: &[u32]) -> Result<(), RecordError> {
        let file = "buffer_size_kb";
        if !self.fs.read(file)?.trim_start().starts_with('X') {
            return self.set(file, &kb.to_string());
        }
        for cpu in all_cpus {
            self.guard.remember(&self.fs.path(&format!("per_cpu/cpu{cpu}/{file}")))?;
        }
        self.fs.write(file, &kb.to_string())
    }

    /// Writes every remembered value back (latest change first) and unmounts tracefs if
    /// it was mounted here; the first failure is returned after trying everything.
    pub fn restore(self) -> Result<(), RecordError> {
        Ok(self.guard.restore()?)
    }
}
