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

mod assemble;
mod blocks;
mod bprint;
pub mod compress;
mod cprintf;
mod cursor;
mod error;
mod event;
pub mod format;
mod formats;
mod ids;
mod input;
mod metadata;
pub mod options;
pub mod pagebuilder;
mod payload;
mod printfmt;
pub mod recorded;
mod report;
pub mod ringbuf;
mod sink;
mod source;
mod symbols;
mod timestamps;
mod trace;
mod writer;

pub use bprint::bprint_message;
pub use error::{Error, ErrorKind, Result, Section};
pub use event::{Event, FieldRef, Value};
pub use formats::{CommonLayout, Formats, RejectedFormat};
pub use ids::{Cpu, Nanos, Pid};
pub use input::{Endian, Source};
pub use metadata::{BufferInfo, CpuData, FileHeader, Metadata, SectionHeader, TracingData};
pub use pagebuilder::TimestampMode;
pub use payload::{PayloadBuilder, PayloadError};
pub use recorded::{CommandExit, RecordedContext, TaskAffinity};
pub use report::ReportPrinter;
pub use sink::CpuSink;
pub use source::{EventItems, EventSource};
pub use symbols::{Cmdlines, Kallsyms, PrintkFormats, Symbol};
pub use timestamps::TimeCorrection;
pub use trace::{EventStream, Item, Lost, Selection, Trace};
pub use writer::{BufferId, FileFormat, FileVersion, TraceWriter, WriteError};
