//! An independent reference for schedlens's tests.
//!
//! schedlens decodes trace.dat files and models the scheduler itself; tests need something
//! that does not share that code to compare against. This crate provides it:
//!
//! - [`run_report`] runs `trace-cmd report -R -t FILE` (trace-cmd with libtraceevent is the
//!   reference decoder) and [`parse_report`] turns its text into [`Line`]s;
//! - [`match_fields`] checks decoded field values against a raw (`-R`) payload;
//! - [`task_totals`] is a deliberately small per-task computation (switch-in counts and run
//!   time) from the reference events, to check the scheduling model independently;
//!   [`wakeup_latencies`] likewise per-pid wakeup latency, to check `latency`.
//!
//! It uses only std and is meant to be a dev-dependency.

mod fields;
mod fixtures;
mod latency;
mod parse;
mod run;
mod totals;

pub use fields::{FieldValue, match_fields, match_value, payload_token, split_fields};
pub use fixtures::{fixture, fixtures, foreign_fixtures, local_fixtures, lscpu_of, manycore_fixtures};
pub use latency::{WakeupLatency, wakeup_latencies};
pub use parse::{Line, ParseError, RefEvent, Report, parse_line, parse_report};
pub use run::{Error, report, report_bytes, run_report, trace_cmd_program};
pub use totals::{ChainBreak, TaskTotals, switch_chain_breaks, task_totals};
