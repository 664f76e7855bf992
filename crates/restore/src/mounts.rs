//! Finding, mounting and unmounting the pseudo file systems (tracefs, debugfs) through
//! which kernel files are reached; only the [`Guard`](crate::Guard) mounts, so that what
//! it mounted is unmounted again.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

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
pub(crate) fn mount(fstype: &str, target: &Path) -> io::Result<()> {
    let source = CString::new("nodev").expect("no NUL");
    let kind = CString::new(fstype).map_err(io::Error::other)?;
    let target = CString::new(target.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: every pointer is a valid NUL-terminated string or null (no data).
    let rc = unsafe { libc::mount(source.as_ptr(), target.as_ptr(), kind.as_ptr(), 0, std::ptr::null()) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Unmounts what [`mount`] mounted (lazily, should a file still be open).
pub(crate) fn unmount(target: &Path) -> io::Result<()> {
    let target = CString::new(target.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: target is a valid NUL-terminated string.
    let rc = unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}
