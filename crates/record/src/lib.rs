//! Recording scheduler traces straight from tracefs, without trace-cmd, into trace.dat files
//! that `trace-cmd report` reads like its own, with the context of the recording
//! (topology, scheduler tunables, command, exit status, the tasks' CPU affinity) in
//! tracedat's recorded-context
//! options (`tracedat::recorded`), which readers get from `Trace::recorded_context`.
//!
//! [`record`] touches only event-tracing files (event `enable` files, `buffer_size_kb`,
//! `tracing_on`, `trace_clock` when asked, `per_cpu/cpuN/trace_pipe_raw`), so it works
//! where the function tracer's controls refuse writes, and restores them on every way out.

mod affinity;
mod error;
mod events;
mod live;
mod machine;
mod output;
mod reader;
mod session;
mod state;
mod tracefs;
mod workload;

pub use affinity::every_task as every_task_affinity;
pub use error::RecordError;
pub use events::EventName;
pub use live::{Delivery, Live, LiveOptions, LiveSetup};
pub use machine::topology_from as sysfs_topology;
pub use reader::Losses;
pub use session::{DEFAULT_BUFFER_KB, RecordOptions, Recording, cpu_time, record};
pub use tracefs::check_privileges;
pub use workload::{Ended, Workload};
