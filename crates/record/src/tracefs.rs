//! Finding (or mounting) tracefs and reading and writing its control files, each error
//! naming the file, plus the privilege check that lets a user without root or the tracing
//! capabilities see at once what is missing.

use crate::error::RecordError;
use std::ffi::CString;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted on every current kernel.
const TRACEFS: &str = "/sys/kernel/tracing";
/// Bytes asked for per read of a control file.
const READ_CHUNK: usize = 1 << 16;
/// Capability bits (linux/capability.h).
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

/// A mounted tracefs.
#[derive(Clone, Debug)]
pub(crate) struct Tracefs {
    root: PathBuf,
}

impl Tracefs {
    /// The mounted tracefs, mounting it when it is not; the flag says whether it was
    /// mounted here (and so should be unmounted at the end).
    pub fn open() -> Result<(Tracefs, bool), RecordError> {
        if let Some(root) = mount_point("tracefs") {
            return Ok((Tracefs { root }, false));
        }
        let root = PathBuf::from(TRACEFS);
        mount("tracefs", &root).map_err(|source| RecordError::Mount { path: root.clone(), source })?;
        Ok((Tracefs { root }, true))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.root.join(file)
    }

    /// A file's text, read in large pieces: some tracefs files (`events/header_page`)
    /// end early when read a few bytes at a time, as `read_to_string` starts.
    pub fn read(&self, file: &str) -> Result<String, RecordError> {
        let path = self.path(file);
        read_whole(&path).map_err(|e| RecordError::file(path, e))
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

fn read_whole(path: &Path) -> io::Result<String> {
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

/// The clock `trace_clock` marks as current (`local [global]` → `global`).
pub(crate) fn selected_clock(trace_clock: &str) -> Option<&str> {
    let start = trace_clock.find('[')? + 1;
    Some(&trace_clock[start..start + trace_clock[start..].find(']')?])
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

/// Where a file system of this type is mounted, if anywhere.
pub fn mount_point(fstype: &str) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let (_, target, kind) = (fields.next()?, fields.next()?, fields.next()?);
        (kind == fstype).then(|| PathBuf::from(target))
    })
}

/// Mounts a pseudo file system (tracefs, debugfs) on `target`.
pub fn mount(fstype: &str, target: &Path) -> io::Result<()> {
    let source = CString::new("nodev").expect("no NUL");
    let kind = CString::new(fstype).map_err(io::Error::other)?;
    let target = CString::new(target.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: every pointer is a valid NUL-terminated string or null (no data).
    let rc = unsafe { libc::mount(source.as_ptr(), target.as_ptr(), kind.as_ptr(), 0, std::ptr::null()) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Unmounts what [`mount`] mounted (lazily, should a file still be open).
pub fn unmount(target: &Path) -> io::Result<()> {
    let target = CString::new(target.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: target is a valid NUL-terminated string.
    let rc = unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}
