//! The level-of-detail engine behind the viewer's page, with no sockets, threads or files
//! of its own: tiles (the per-core timeline, the running/waiting counts and the runqueue
//! lengths of one stretch of time at one resolution, computed by the figures crate
//! exactly as `graph` computes them, and a followed task's thread states, `tile`), the
//! base they are composed from (`pyramid`), a bounded cache for them (`cache`), the
//! page's documents (defined in crates/documents: the traces' layout, a run, a task, its
//! state and who held the CPU it waited for, a runqueue's waits, the critical path, a
//! range's statistics, `check`'s incidents, trace markers) filled from the model and the
//! analyses, the view exported through the renderer `graph` uses, and the page's files
//! themselves (`assets`, `web/`).
//!
//! `schedlens view` (crates/view) serves these over HTTP; `schedlens report`
//! (crates/report) embeds a pyramid of the same tiles and the same documents in one
//! file for the same page.

pub mod assets;
pub mod cache;
pub mod detail;
pub mod export;
pub mod incidents;
pub mod lookup;
pub mod markers;
pub mod path;
pub mod pyramid;
pub mod range_stats;
pub mod recent;
pub mod shown;
pub mod states;
pub mod tile;

pub use shown::{Initial, Shown, ShownTrace, meta};
