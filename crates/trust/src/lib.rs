//! The trust harness: proof that nothing past the trace reader panics or hangs, whatever
//! the trace holds. A [`Script`] of scheduler events (any bytes are one) is written as a
//! real trace.dat by tracedat's writer and read back through the real reader, and the
//! [`pipeline`] runs the model and every analysis and figure on it. The model fuzzer
//! (`fuzz/fuzz_targets/sched_model.rs`) feeds it arbitrary bytes; the tests replay the
//! committed seeds (slices of the real fixtures, see [`seeds`]), the corpus and the
//! reproducers of every failure found. Failures fixed elsewhere are listed, with their
//! diagnosis, in [`known::KNOWN_FAILURES`]. What the reader fuzzer does with its inputs
//! is in [`reader`], so that its seeds and regressions are replayed as tests too.

pub mod known;
pub mod pipeline;
pub mod reader;
pub mod script;
pub mod seeds;
pub mod write;

pub use pipeline::{Outcome, PipelineSummary, analyse, run_script};
pub use script::Script;

/// What the fuzzer runs on each input: the script of `data` through the whole pipeline.
/// Panics that [`known::KNOWN_FAILURES`] lists are tolerated; any other panic is a crash.
pub fn fuzz_one(data: &[u8]) {
    let script = Script::from_bytes(data);
    if let Err(panic) = known::catch(|| run_script(&script)) {
        assert!(panic.known().is_some(), "{panic}");
    }
}
