//! Leaving tracefs as it was found. Every control-file write goes through [`TracefsGuard`],
//! which first remembers the file's value; the values are written back in reverse order
//! when the recording ends, and by `Drop` on every other way out (errors, panics), so a
//! failed or interrupted recording never leaves events enabled or a resized buffer.

use crate::error::RecordError;
use crate::tracefs::{Tracefs, selected_clock, unmount};

/// Tracefs with the undo list of what was changed.
pub(crate) struct TracefsGuard {
    fs: Tracefs,
    /// tracefs was mounted by this recording: unmount it at the end.
    mounted: bool,
    /// (file, value to write back), in the order first changed.
    saved: Vec<(String, String)>,
    restored: bool,
}

impl TracefsGuard {
    pub fn new(fs: Tracefs, mounted: bool) -> TracefsGuard {
        TracefsGuard { fs, mounted, saved: Vec::new(), restored: false }
    }

    pub fn fs(&self) -> &Tracefs {
        &self.fs
    }

    /// Writes `value` to `file`, having remembered its value when first changed.
    pub fn set(&mut self, file: &str, value: &str) -> Result<(), RecordError> {
        self.remember(file)?;
        self.fs.write(file, value)
    }

    /// Sets every CPU's buffer size. When the CPUs' sizes differ (the file shows `X`),
    /// each CPU's own size is remembered instead.
    pub fn set_buffer_kb(&mut self, kb: u32, all_cpus: &[u32]) -> Result<(), RecordError> {
        let file = "buffer_size_kb";
        if !self.fs.read(file)?.trim_start().starts_with('X') {
            return self.set(file, &kb.to_string());
        }
        for cpu in all_cpus {
            self.remember(&format!("per_cpu/cpu{cpu}/{file}"))?;
        }
        self.fs.write(file, &kb.to_string())
    }

    fn remember(&mut self, file: &str) -> Result<(), RecordError> {
        if self.saved.iter().any(|(f, _)| f == file) {
            return Ok(());
        }
        let text = self.fs.read(file)?;
        let value =
            restorable_value(file, &text).ok_or_else(|| RecordError::Content { path: self.fs.path(file), text })?;
        self.saved.push((file.to_string(), value));
        Ok(())
    }

    /// Writes every remembered value back (latest change first) and unmounts tracefs if
    /// it was mounted here; the first failure is returned after trying everything.
    pub fn restore(mut self) -> Result<(), RecordError> {
        self.restore_all().into_iter().next().map_or(Ok(()), Err)
    }

    fn restore_all(&mut self) -> Vec<RecordError> {
        self.restored = true;
        let mut errors: Vec<RecordError> =
            self.saved.iter().rev().filter_map(|(file, value)| self.fs.write(file, value).err()).collect();
        if self.mounted {
            let root = self.fs.root().to_path_buf();
            errors.extend(unmount(&root).err().map(|source| RecordError::file(root, source)));
        }
        errors
    }
}

impl Drop for TracefsGuard {
    fn drop(&mut self) {
        if self.restored {
            return;
        }
        for error in self.restore_all() {
            eprintln!("schedlens: warning: could not restore tracefs: {error}");
        }
    }
}

/// The value to write back for a file's current text: the selected clock of
/// `trace_clock` (`[local] global` → `local`), the size a not yet expanded buffer will have
/// (`7 (expanded: 1408)` → `1408`), else the first word (`0*` of a soft-disabled event
/// → `0`).
fn restorable_value(file: &str, text: &str) -> Option<String> {
    if file == "trace_clock" {
        return selected_clock(text).map(str::to_string);
    }
    if let Some(rest) = text.split_once("(expanded: ").map(|(_, r)| r) {
        return rest.split(')').next().map(str::to_string);
    }
    let word = text.split_whitespace().next()?.trim_end_matches('*');
    (!word.is_empty()).then(|| word.to_string())
}

#[cfg(test)]
mod tests {
    use super::restorable_value;

    #[test]
    fn values_written_back_are_the_ones_the_kernel_accepts() {
        assert_eq!(restorable_value("trace_clock", "local [global] counter\n").as_deref(), Some("global"));
        assert_eq!(restorable_value("buffer_size_kb", "7 (expanded: 1408)\n").as_deref(), Some("1408"));
        assert_eq!(restorable_value("buffer_size_kb", "20001\n").as_deref(), Some("20001"));
        assert_eq!(restorable_value("events/sched/sched_switch/enable", "0*\n").as_deref(), Some("0"));
        assert_eq!(restorable_value("tracing_on", "1\n").as_deref(), Some("1"));
        assert_eq!(restorable_value("tracing_on", "\n"), None);
        assert_eq!(restorable_value("trace_clock", "local global\n"), None);
    }
}
