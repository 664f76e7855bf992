//! What the reader fuzzer does with each input, here so that the tests can replay its
//! seeds and the inputs it once stopped on: any bytes opened as a trace, every event of
//! every buffer read, all its field values decoded, and the event printed as
//! `trace-cmd report -R` would (print formats, symbols, bprint messages: text from the
//! file). Errors and reported damage are fine; a panic, a hang or a huge allocation is a
//! bug. [`read_perf_everything`] does the same for the perf.data reader, and
//! [`read_perfetto_everything`] for the Perfetto reader; both build the model from what
//! they read.

use std::hint::black_box;
use tracedat::{Item, ReportPrinter, Selection, Trace};

/// How far one input got: `None` when the reader refused the file, else the events read
/// and the damaged places reported.
pub fn read_everything(data: &[u8]) -> Option<(u64, usize)> {
    let trace = Trace::from_bytes("fuzz", data.to_vec()).ok()?;
    black_box((trace.cpu_count(), trace.clock(), trace.kallsyms().map_or(0, |k| k.symbols().len())));
    // Read on this thread: prefetch workers would only make runs slower and less repeatable.
    let mut events = trace.events_of(&Selection { workers: Some(0), ..Selection::all() });
    let mut printer = ReportPrinter::new(&trace);
    let mut text = Vec::new();
    let mut count = 0;
    while let Some(item) = events.next() {
        text.clear();
        let event = match item {
            Item::Event(event) => event,
            Item::Lost(lost) => {
                printer.lost(&mut text, &lost);
                continue;
            }
        };
        count += 1;
        black_box((event.name(), event.pid()));
        printer.event(&mut text, &event);
        printer.symbols(&event, |field, name| {
            black_box((&field.name, name));
        });
        black_box(tracedat::bprint_message(&trace, &event, &mut text));
        for (field, value) in event.fields() {
            let decoded = value.map(|v| (v.as_i64(), v.as_str(), v.elements().count()));
            black_box((&field.name, decoded));
        }
    }
    Some((count, events.damage().len()))
}

/// What the perf.data fuzzer does with each input: any bytes opened as a perf.data, every
/// event of every CPU read and its field values decoded, the comm/fork/exit records and
/// losses looked at, and the model built from the events. `None` when the reader refused
/// the file, else the events read and the damaged places reported.
pub fn read_perf_everything(data: &[u8]) -> Option<(u64, usize)> {
    use tracedat::EventSource;
    let perf = perfdata::PerfData::from_bytes("fuzz", data.to_vec()).ok()?;
    black_box((perf.cpu_count(), perf.features(), perf.tasks().len(), perf.losses().len(), perf.counts()));
    let count = read_source_everything(&perf);
    Some((count, perf.damage_found().len()))
}

/// What the Perfetto fuzzer does with each input: any bytes opened as a Perfetto trace,
/// every event of every CPU read and its field values decoded, and the model built from
/// the events. `None` when the reader refused the file, else the events read and the
/// damaged places reported.
pub fn read_perfetto_everything(data: &[u8]) -> Option<(u64, usize)> {
    use tracedat::EventSource;
    let trace = pftrace::PerfettoTrace::from_bytes("fuzz", data.to_vec()).ok()?;
    black_box((trace.cpu_count(), trace.summary(), trace.cmdlines().len()));
    let count = read_source_everything(&trace);
    Some((count, trace.damage_found().len()))
}

/// Every event of a container read in time order with its field values decoded, then the
/// model built from it: the events read.
fn read_source_everything<S: tracedat::EventSource>(source: &S) -> u64 {
    use tracedat::EventItems;
    let mut events = source.all_events();
    let mut count = 0;
    while let Some(item) = events.next() {
        let Item::Event(event) = item else { continue };
        count += 1;
        black_box((event.name(), event.pid()));
        for (field, value) in event.fields() {
            let decoded = value.map(|v| (v.as_i64(), v.as_str(), v.elements().count()));
            black_box((&field.name, decoded));
        }
    }
    black_box(model::Model::build(source, model::Detail::FULL, &mut |_| {}).map(|(model, _)| model.end()).ok());
    count
}
