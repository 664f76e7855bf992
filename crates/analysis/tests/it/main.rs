//! analysis' integration tests, one binary: a module per subject.

mod check;
mod latency;
mod occupancy;
mod states;
mod stats;
