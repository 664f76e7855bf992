//! Fuzzes everything past the reader: any bytes are a script of scheduler events (switches,
//! wakeups, migrations, forks, execs, exits, lost events, clock jumps; see
//! `crates/trust/src/script.rs`), written as a real trace.dat, read back, and run through
//! the model, `stats`, the running/waiting sweep, `graph`'s timeline and figure and
//! `check`. A panic or a hang is a bug, except the known failures listed in
//! `crates/trust/src/known.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| trust::fuzz_one(data));
