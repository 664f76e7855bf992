//! analysis' integration tests, one binary: a module per subject.

mod check;
mod occupancy;
mod stats;
