//! Analyses over the scheduling model: plain functions from a [`model::Model`] and a
//! window to plain data, for reports and figures to present.

pub mod check;
pub mod occupancy;
pub mod stats;
pub mod window;

pub use window::{TaskFilter, Window, WindowError, WindowRequest};
