//! trace.dat reading (and writing): the file format of trace-cmd, versions 6 and 7, and
//! nothing else — this crate knows no scheduling.
//!
//! Low-level types mirror the format's own names (sections, options, header_page, event
//! formats, ring-buffer pages); [`Trace`] is the friendly API on top:
//!
//! ```no_run
//! let trace = tracedat::Trace::open("trace.dat")?;
//! let mut events = trace.events();
//! while let Some(item) = events.next() {
//!     if let tracedat::Item::Event(event) = item {
//!         println!("{} {} {}", event.ts, event.cpu, event.name());
//!     }
//! }
//! # Ok::<(), tracedat::Error>(())
//! ```
//!
//! The crate is cut as gimli-rs/object cuts its own: `read` (opening a file, its
//! metadata, the ring-buffer pages, the merged event stream), `write` (the writer, page
//! and payload builders, per-CPU sinks) and `print` (events as `trace-cmd report` text),
//! over the few things both sides need (ids, errors, byte order, codecs, the
//! recorded-context options). Everything public is re-exported here.

pub mod compress;
mod endian;
mod error;
mod ids;
mod print;
mod read;
pub mod recorded;
mod write;

pub use read::{format, options, ringbuf};
pub use write::pagebuilder;

pub use endian::Endian;
pub use error::{Error, ErrorKind, Result, Section};
pub use ids::{Cpu, Nanos, Pid};
pub use print::bprint::bprint_message;
pub use print::event_text::ReportPrinter;
pub use read::event::{Event, FieldRef, Value};
pub use read::formats::{CommonLayout, Formats, RejectedFormat};
pub use read::input::Source;
pub use read::metadata::{BufferInfo, CpuData, FileHeader, Metadata, SectionHeader, TracingData};
pub use read::source::{EventItems, EventSource};
pub use read::symbols::{Cmdlines, Kallsyms, PrintkFormats, Symbol};
pub use read::timestamps::TimeCorrection;
pub use read::trace::{EventStream, Item, Lost, Selection, Trace};
pub use recorded::{CommandExit, RecordedContext, TaskAffinity};
pub use write::pagebuilder::TimestampMode;
pub use write::payload::{PayloadBuilder, PayloadError};
pub use write::sink::CpuSink;
pub use write::writer::{BufferId, FileFormat, FileVersion, TraceWriter, WriteError};
