//! Leaving the machine as it was found, however schedlens ends. Recording (tracefs), knob
//! sweeps (procfs, sysfs, debugfs) and the viewer change the machine or hold it busy; this
//! crate holds their side effects of that kind, and nothing else:
//!
//! - [`Guard`]: every write to a kernel file goes through it. It remembers the file's value
//!   before the first write (the `[selected]` word of a choice list, the size an unexpanded
//!   buffer will have, ...: [`restorable_value`]) and the pseudo file systems it mounted,
//!   and undoes them, latest change first: explicitly on the normal path
//!   ([`Guard::restore`]), from `Drop` on errors and panics.
//! - [`Interrupts`]: SIGINT, SIGTERM and SIGHUP caught on a thread, so they end a command
//!   through that normal path: which signal came, a flag for loops to poll, the running
//!   child that gets the signal passed on, or (while nothing needs undoing) the process
//!   ended at once.
//!
//! Only SIGKILL or a crash skips the undoing. The guard's changes are one ordered list of
//! plain data (file and original value, or mount point), undone by replaying it backwards;
//! a journaled guard ([`Guard::journaled`]) also keeps that list on disk, so that a later
//! instance ([`recover`]: `schedlens record` and `watch` call it first) finds what a
//! killed one left changed and puts it back.

mod files;
mod journal;
mod mounts;
mod signals;

pub use files::{Error, Guard, read_text, restorable_value, selected};
pub use journal::{JOURNAL_DIR, Recovered, recover};
pub use mounts::mount_point;
pub use signals::{ExitAtOnce, Exited, Interrupts, PassOn, flag_on};

#[cfg(test)]
mod tests;
