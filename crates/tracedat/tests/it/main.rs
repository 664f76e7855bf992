//! tracedat's integration tests, one binary: a module per subject, `common` shared.

mod common;
mod damaged;
mod fuzz_seeds;
mod writer_roundtrip;
mod writer_tracecmd;
