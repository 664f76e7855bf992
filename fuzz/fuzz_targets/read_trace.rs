//! Fuzzes the trace.dat reader: any bytes are opened as a trace, every event of every
//! buffer is read, all its field values decoded, and the event printed as `trace-cmd
//! report -R` would (see `crates/trust/src/reader.rs`). Errors and reported damage are
//! fine; a panic, a hang or a huge allocation is a bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    std::hint::black_box(trust::reader::read_everything(data));
});
