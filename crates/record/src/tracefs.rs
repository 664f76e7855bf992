//! Reading and writing tracefs's control files, each error naming the file, plus the
//! privilege check that lets a user without root or the tracing capabilities see at once
//! what is missing.

use crate::error::RecordError;
use std::path::PathBuf;

/// Where tracefs is mounted on every current kernel.
pub(crate) const TRACEFS: &str = "/sys/kernel/tracing";
/// Capability bits (linux/capability.h).
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

/// A mounted tracefs.
#[derive(Clone, Debug)]
pub(crate) struct Tracefs {
    root: PathBuf,
}

impl Tracefs {
    pub fn at(root: PathBuf) -> Tracefs {
        Tracefs { root }
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.root.join(file)
    }

    /// A file's text, read in large pieces (`restore::read_text`).
    pub fn read(&self, file: &str) -> Result<String, RecordError> {
        let path = self.path(file);
        restore::read_text(&path).map_err(|e| RecordError::file(path, e))
    }

    pub fn write(&self, file: &str, value: &str) -> Result<(), RecordError> {
        let path = self.path(file);
        std::fs::write(&path, value).map_err(|e| RecordError::file(path, e))
    }

    /// Empties every CPU's ring buffer (truncating `trace`).
    pub fn clear_buffers(&self) -> Result<(), RecordError> {
        let path = self.path("trace");
        std::fs::OpenOptions::new().write(true).truncate(true).open(&path).map_err(|e| RecordError::file(path, e))?;
        Ok(())
    }
}

/// Refuses early, with the reason, when this process may not trace.
pub fn check_privileges() -> Result<(), RecordError> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let caps = effective_capabilities();
    let capable = caps.is_some_and(|c| c & (1 << CAP_SYS_ADMIN | 1 << CAP_PERFMON) != 0);
    if euid == 0 || capable {
        return Ok(());
    }
    Err(RecordError::Privileges { have: format!("uid {euid} and neither capability") })
}

/// The CapEff mask of this process.
fn effective_capabilities() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim();
    u64::from_str_radix(hex, 16).ok()
}
