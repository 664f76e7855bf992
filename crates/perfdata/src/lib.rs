//! perf.data reading: the files `perf sched record` and `perf record -e 'sched:*'` write,
//! in file mode and pipe mode (`-o -`), in either byte order. This crate knows no
//! scheduling: it reads perf's framing (header, attributes, feature sections, records)
//! and hands each tracepoint sample's raw payload — one ftrace event record, decoded with
//! the formats of the file's `HEADER_TRACING_DATA` section, which is trace.dat's initial
//! block — to the stages above as `tracedat` events, through [`tracedat::EventSource`].
//!
//! ```no_run
//! use tracedat::{EventItems, EventSource, Item};
//! let perf = perfdata::PerfData::open("perf.data")?;
//! let mut events = perf.all_events();
//! while let Some(item) = events.next() {
//!     if let Item::Event(event) = item {
//!         println!("{} {} {}", event.ts, event.cpu, event.name());
//!     }
//! }
//! # Ok::<(), tracedat::Error>(())
//! ```
//!
//! The framing is written here rather than taken from `linux-perf-data` or
//! `tracepoint_perf`; docs/ARCHITECTURE.md's dependency table says why.

mod attrs;
mod damage;
mod features;
mod header;
mod perfdata;
mod pieces;
mod records;
mod store;

pub use attrs::Attr;
pub use damage::record_name;
pub use features::{CpuTopology, Features, feature_name};
pub use header::endian_of_magic;
pub use perfdata::{Counts, Loss, PerfData, TaskChange, TaskRecord};
pub use store::Events;
