//! The viewer's one adapter for trace markers: the text user space wrote to
//! `trace_marker` (ftrace `print` events), read from the trace's top buffer, one thread
//! per group of CPUs. The model does not keep them yet; when it does, this file reads
//! them from the model instead.

use model::{Cpu, Nanos};
use tracedat::{Item, Selection, Trace};

/// One marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub time: Nanos,
    pub cpu: Cpu,
    pub pid: i32,
    pub text: String,
}

/// Markers kept at most; the rest are counted.
const LIMIT: usize = 100_000;

/// Every marker of the trace's top (or first) buffer in time order (at most [`LIMIT`]),
/// and how many there were in all.
pub fn read(trace: &Trace) -> (Vec<Marker>, usize) {
    let Some(print) = trace.formats().by_name("print").filter(|f| f.field("buf").is_some()) else {
        return (Vec::new(), 0);
    };
    let Some(buffer) = trace.buffers().iter().find(|b| b.name.is_empty()).or(trace.buffers().first()) else {
        return (Vec::new(), 0);
    };
    let cpus: Vec<u32> = buffer.cpus.iter().map(|c| c.cpu).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(cpus.len()).max(1);
    let chunk = cpus.len().div_ceil(threads).max(1);
    let id = print.id;
    let mut markers: Vec<Marker> = std::thread::scope(|scope| {
        let handles: Vec<_> = cpus
            .chunks(chunk)
            .map(|part| {
                let name = buffer.name.clone();
                scope.spawn(move || {
                    let mut found = Vec::new();
                    for &cpu in part {
                        let mut stream = trace.events_of(&Selection::one_cpu(&name, cpu));
                        while let Some(item) = stream.next() {
                            if let Item::Event(event) = item
                                && event.id == id
                            {
                                found.push(marker_of(&event));
                            }
                        }
                    }
                    found
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    markers.sort_by(|a, b| (a.time, a.cpu).cmp(&(b.time, b.cpu)));
    let total = markers.len();
    markers.truncate(LIMIT);
    (markers, total)
}

/// A `print` event's text, without the one trailing newline `trace-cmd report` drops too.
fn marker_of(event: &tracedat::Event<'_>) -> Marker {
    let text = event.field("buf").and_then(|v| v.as_str().map(|s| s.into_owned())).unwrap_or_default();
    let text = text.strip_suffix('\n').map(str::to_string).unwrap_or(text);
    Marker { time: event.ts, cpu: event.cpu, pid: event.pid().0, text }
}
