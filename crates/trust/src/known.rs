//! Panics the harness has found and that are to be fixed elsewhere (in a crate another
//! stream of work owns): [`KNOWN_FAILURES`] is the one list of them. While a failure is
//! listed, the fuzzer and the tests tolerate panics that match it, so CI stays green and
//! everything else stays checked; each listed reproducer must still fail, so an entry
//! that has been fixed is noticed and removed. The goal is an empty list.
//!
//! A panic is matched by where it happened (the end of the file path in its location)
//! and a part of its message.

use std::panic::{PanicHookInfo, UnwindSafe};
use std::sync::{Mutex, Once};

/// A failure that is known, diagnosed and left to be fixed where it happens.
#[derive(Debug)]
pub struct KnownFailure {
    /// A short name for reports.
    pub name: &'static str,
    /// The end of the panic location's file path.
    pub file: &'static str,
    /// A part of the panic message.
    pub message: &'static str,
    /// Inputs that reproduce it, from the repository root: script inputs under `fuzz/`
    /// (run through the pipeline) or trace files under `testdata/` (run through the CLI).
    pub reproducers: &'static [&'static str],
    /// What goes wrong and where it should be fixed.
    pub diagnosis: &'static str,
}

/// Known failures, to be emptied as they are fixed. Empty: the last one (lost-event counts
/// that overflowed in the tracker) was fixed by the model's rewrite; its reproducer stays
/// in `fuzz/regressions/sched_model/` as a regression input.
pub const KNOWN_FAILURES: &[KnownFailure] = &[];

/// A panic: where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Panic {
    /// `file:line:column`.
    pub location: String,
    pub message: String,
}

impl Panic {
    /// The known failure this panic is, if any.
    pub fn known(&self) -> Option<&'static KnownFailure> {
        let file = self.location.split(':').next().unwrap_or("");
        KNOWN_FAILURES.iter().find(|k| file.ends_with(k.file) && self.message.contains(k.message))
    }

    /// Reads a panic from a process's stderr (`thread '..' panicked at FILE:L:C:` and the
    /// message on the next line).
    pub fn from_stderr(stderr: &str) -> Option<Panic> {
        let mut lines = stderr.lines();
        let line = lines.find(|l| l.contains(" panicked at "))?;
        let location = line.split(" panicked at ").nth(1)?.trim_end_matches(':').to_string();
        Some(Panic { location, message: lines.next().unwrap_or("").to_string() })
    }
}

impl std::fmt::Display for Panic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "panicked at {}: {}", self.location, self.message)
    }
}

/// Panics seen since the last [`catch`] began (any thread).
static SEEN: Mutex<Vec<Panic>> = Mutex::new(Vec::new());
static HOOK: Once = Once::new();

/// Installs, once per process, a panic hook that records each panic and passes unknown
/// ones on to the hook in place before (libFuzzer's aborts: that is how it sees a crash).
/// Known ones, and the "a scoped thread panicked" that follows one in a thread scope, are
/// only recorded.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            let panic = Panic {
                location: info
                    .location()
                    .map_or_else(String::new, |l| format!("{}:{}:{}", l.file(), l.line(), l.column())),
                message: payload_text(info.payload()),
            };
            let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
            let follows_known = panic.message.contains("a scoped thread panicked")
                && seen.first().is_some_and(|first| first.known().is_some());
            let tolerated = panic.known().is_some() || follows_known;
            seen.push(panic);
            drop(seen);
            if !tolerated {
                previous(info);
            }
        }));
    });
}

fn payload_text(payload: &dyn std::any::Any) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(text), _) => text.to_string(),
        (_, Some(text)) => text.clone(),
        _ => "(no message)".into(),
    }
}

/// Runs `f`; a panic comes back as `Err` with the first panic it caused (where it
/// started, not where a thread scope passed it on). Calls take turns: the panics of all
/// threads go to one place.
pub fn catch<T>(f: impl FnOnce() -> T + UnwindSafe) -> Result<T, Panic> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    install_hook();
    SEEN.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let result = std::panic::catch_unwind(f);
    let first = SEEN.lock().unwrap_or_else(|e| e.into_inner()).first().cloned();
    result
        .map_err(|payload| first.unwrap_or_else(|| Panic { location: String::new(), message: payload_text(&*payload) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_are_read_from_stderr() {
        let stderr = "schedlens: warning: x\n\nthread 'main' (24380) panicked at crates/model/src/tracker.rs:275:31:\n\
                      index out of bounds: the len is 3 but the index is 9\nstack backtrace:\n";
        let panic = Panic::from_stderr(stderr).unwrap();
        assert_eq!(panic.location, "crates/model/src/tracker.rs:275:31");
        assert_eq!(panic.message, "index out of bounds: the len is 3 but the index is 9");
        assert_eq!(Panic::from_stderr("schedlens: error: no"), None);
    }

    #[test]
    fn caught_panics_say_where_they_started() {
        let error = catch(|| {
            std::thread::scope(|scope| {
                scope.spawn(|| panic!("deep down"));
            })
        })
        .unwrap_err();
        assert_eq!(error.message, "deep down");
        assert!(error.location.contains("known.rs"), "{error}");
        assert_eq!(catch(|| 7), Ok(7));
    }
}
