//! The CLI's integration tests, one binary (each binary links the whole workspace): a module per
//! subject, `common` and `robust` shared.

mod check;
mod common;
mod compare;
mod critical_path;
mod damaged;
mod errors;
mod export;
mod figures;
mod fleet;
mod latency;
mod perf;
mod perfetto;
mod record_e2e;
mod recorded_losses;
mod reference;
mod report;
mod robust;
mod runs;
mod synth;
mod view;
mod watch;
