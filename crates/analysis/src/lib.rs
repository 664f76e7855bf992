//! Analyses over the scheduling model: plain functions from a [`model::Model`] and a
//! window to plain data, for reports and figures to present.
//!
//! Indexes and sizes: task ids, wait and wakeup rows that the model's tables hold were
//! made by the model from rows it created first, so they index `tasks`, `waits` and
//! `wakeups` (and vectors of those lengths) in range by construction; each use says so.
//! CPU numbers are looked up with `get`, or checked (migrations name CPUs from event
//! fields: `check::MigrationMatrix` counts those beyond the model's CPUs apart). Nothing
//! is sized by a CPU number or a pid squared; times add saturating (`Nanos`).

pub mod check;
pub mod cores;
pub mod critical_path;
pub mod idle;
pub mod latency;
pub mod occupancy;
pub mod perf_sched;
pub mod records;
pub mod states;
pub mod stats;
pub mod window;

pub use window::{TaskFilter, Window, WindowError, WindowRequest};
