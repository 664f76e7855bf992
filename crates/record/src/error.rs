//! Why a recording failed, in words that name the tracefs (or sysfs, procfs) file involved,
//! so a user can see what the kernel refused.

use std::io;
use std::path::PathBuf;

/// Why a recording could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error(
        "recording needs root, or the capability CAP_SYS_ADMIN or CAP_PERFMON (this process has {have}); \
         run schedlens record with sudo"
    )]
    Privileges { have: String },
    #[error("{}: {source}{}", path.display(), permission_hint(source))]
    File {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Mounting tracefs.
    #[error(transparent)]
    Mount(restore::Error),
    #[error("{}: unexpected content {text:?}", path.display())]
    Content { path: PathBuf, text: String },
    #[error("no event matches {0:?} (see available_events in tracefs)")]
    UnknownEvent(String),
    #[error("bad CPU list {0:?} (expected e.g. 0,2-3)")]
    CpuList(String),
    #[error("none of the CPUs asked for is online")]
    NoCpus,
    #[error("cannot start {program:?}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("interrupted by signal {0} before the recording started")]
    Interrupted(i32),
    #[error("{context}: {source}")]
    System {
        context: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("writing the trace: {0}")]
    Write(#[from] tracedat::WriteError),
    #[error("the reader of CPU {0} panicked")]
    ReaderPanicked(u32),
}

impl RecordError {
    pub(crate) fn file(path: impl Into<PathBuf>, source: io::Error) -> RecordError {
        RecordError::File { path: path.into(), source }
    }
}

/// A guarded change of a kernel file or mount, in the recorder's words.
impl From<restore::Error> for RecordError {
    fn from(error: restore::Error) -> RecordError {
        match error {
            restore::Error::Read { path, source }
            | restore::Error::Write { path, source, .. }
            | restore::Error::Unmount { path, source } => RecordError::File { path, source },
            restore::Error::Content { path, text } => RecordError::Content { path, text },
            error @ restore::Error::Mount { .. } => RecordError::Mount(error),
        }
    }
}

fn permission_hint(error: &io::Error) -> &'static str {
    match error.kind() {
        io::ErrorKind::PermissionDenied => " (recording needs root, or CAP_SYS_ADMIN or CAP_PERFMON)",
        _ => "",
    }
}
