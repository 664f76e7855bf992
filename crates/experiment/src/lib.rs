//! What an experiment's traces and runs say, with no side effects: the pure half of
//! `schedlens runs` and `schedlens compare` (the schedgraph paper's experiment: run a
//! benchmark ten times, sort the running times, compare the fastest run with the
//! slowest, and after a change compare before with after), kept apart from running
//! commands and setting knobs (the `runs` crate) so the HTML report and other readers
//! depend on analyses only.
//!
//! - [`profile`]: what a trace says about the scheduler during the workload (the one
//!   adapter that reads `check`'s findings), as named metrics;
//! - [`compare`]: the differences between two traces, ranked by how much of the
//!   difference in running time they account for;
//! - [`critical_path`]: the critical path as users read it (its document, the sentence to
//!   quote, its parts' names), for `critical-path`, `compare` and the report;
//! - [`statistics`]: quantiles, bootstrap, Mann-Whitney U, Spearman;
//! - [`summary`]: a sweep's statistics, as text and as `summary.json`;
//! - [`results`]: `results.json` and `results.csv` from and to bytes (the documents
//!   themselves are `documents::runs`);
//! - [`figure`]: the sorted running times as a scene.

pub mod compare;
pub mod critical_path;
pub mod figure;
pub mod profile;
pub mod results;
pub mod statistics;
pub mod summary;
