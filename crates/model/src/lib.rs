//! The scheduling model: tasks, CPUs, run segments, runqueues, wakeups and migrations,
//! built in one pass over a trace's scheduler events. It reads events through `tracedat`
//! and knows nothing of rendering or reports.
//!
//! Time is never invented: where the stream does not say what happened (lost events, a
//! context switch the kernel did not record), the CPU's time is marked uncertain and the
//! state picks up again at the next clear sign. Inconsistencies are counted as
//! [`Anomalies`], never fatal.

mod anomalies;
mod columns;
mod events;
pub mod kernel_formats;
mod markers;
mod model;
mod radix;
#[cfg(feature = "scenario")]
pub mod scenario;
mod staging;
mod stream;
mod table;
mod tables;
mod tasks;
mod topology;
mod tracker;

pub use anomalies::{Anomalies, Anomaly, Severity};
pub use events::{EventContext, Sched, SchedDecoder, SchedEvent};
pub use markers::{Marker, read_markers};
pub use model::{AfterSleepError, BuildReport, Detail, Lost, Model, ModelError};
pub use radix::{RadixScratch, sort_by_offset};
pub use stream::WaitSink;
pub use table::{ByRow, MigrationId, Row, RowId, Table, WaitId, WakeupId, partition_point_near};
pub use tables::{
    CpuTimeline, MAX_CPUS, Migration, MigrationReason, Migrations, QueuePiece, QueuePieces, Segment, SegmentEnd,
    SegmentIter, Segments, Wait, WaitCause, WaitEnd, Waits, Wakeup, WakeupKind, Wakeups, segment_flags,
};
pub use tasks::{CommId, Comms, Task, TaskId, Tasks};
pub use topology::{CpuPlace, Layout, Topology, TopologyError, describe_cpus, ranges};
pub use tracedat::{Cpu, Nanos, Pid};
