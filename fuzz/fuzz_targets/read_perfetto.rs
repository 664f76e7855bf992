//! Fuzzes the Perfetto reader: any bytes are opened as a Perfetto trace, every event of
//! every CPU is read and its field values decoded, and the model is built from them (see
//! `crates/trust/src/reader.rs`). Errors and reported damage are fine; a panic, a hang or
//! a huge allocation is a bug.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    std::hint::black_box(trust::reader::read_perfetto_everything(data));
});
