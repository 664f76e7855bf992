//! `schedlens dump`: every event of a trace, as text exactly as `trace-cmd report -R -t`
//! prints it, or as one JSON object per line with every field's raw value (and the
//! symbol names and bprint messages trace-cmd shows). A perf.data's events are printed
//! in `perf script`'s layout with raw field values (`perf_text`), or as the same JSON.

use crate::common::{open_trace, seconds};
use crate::progress::Progress;
use crate::{Outcome, report_damage, usage};
use anyhow::{Context, Result, bail};
use inputs::Input;
use perfdata::PerfData;
use std::io::Write;
use std::path::PathBuf;
use tracedat::format::EventFormat;
use tracedat::{
    Event, EventItems, EventSource, Item, Lost, Nanos, ReportPrinter, Selection, Trace, Value, bprint_message,
};

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat or perf.data file.
    trace: PathBuf,
    /// One JSON object per line instead of text.
    #[arg(long)]
    json: bool,
    /// Only these CPUs (e.g. `0,2-3`).
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    cpu: Option<CpuList>,
    /// Only these events, by name or `system:name` (comma-separated).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    event: Option<Vec<String>>,
    /// Skip events before this many seconds after the first event.
    #[arg(long, value_name = "S", value_parser = seconds)]
    min: Option<f64>,
    /// Stop after this many seconds after the first event.
    #[arg(long, value_name = "S", value_parser = seconds)]
    max: Option<f64>,
}

/// CPU numbers given as `0,2-3,7`. One value for clap (a bare `Vec` would be taken for
/// a list of values and make clap panic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<u32>);

/// Parses `0,2-3,7` into CPU numbers.
pub fn parse_cpu_list(text: &str) -> Result<CpuList, String> {
    let mut cpus = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let bad = || format!("bad CPU list item {part:?} (expected N or N-M)");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                if a > b || b - a > 1 << 16 {
                    return Err(bad());
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().map_err(|_| bad())?),
        }
    }
    Ok(CpuList(cpus))
}

pub fn run(args: Args) -> Result<Outcome> {
    if let (Some(min), Some(max)) = (args.min, args.max) {
        if min >= max {
            return Err(usage(format!("--min {min} is not before --max {max}")));
        }
    }
    match open_trace(&args.trace)? {
        Input::TraceDat(trace) => dump_trace_dat(&args, &trace),
        Input::PerfData(perf) => dump_perf_data(&args, &perf),
        Input::Perfetto(trace) => dump_perfetto(&args, &trace),
    }
}

fn dump_trace_dat(args: &Args, trace: &Trace) -> Result<Outcome> {
    let events = match &args.event {
        Some(names) => Some(event_ids(trace, names)?),
        None => None,
    };
    let selection = Selection { cpus: args.cpu.clone().map(|list| list.0), ..Selection::all() };
    let progress = Progress::bytes(trace.data_size(&selection), "dumping");
    let mut stdout = std::io::stdout().lock();
    let mut stream = trace.events_of(&selection);
    let mut printer = Printer::new(trace, args.json);
    let mut window: Option<(Nanos, Nanos)> = None;
    let mut count = 0u64;
    loop {
        count += 1;
        if count % (1 << 16) == 0 {
            progress.set(stream.bytes_done());
        }
        let Some(item) = stream.next() else { break };
        match item {
            Item::Lost(lost) => printer.lost(&lost),
            Item::Event(event) => {
                let (start, end) = *window.get_or_insert_with(|| time_window(event.ts, args.min, args.max));
                if event.ts < start {
                    continue;
                }
                if event.ts > end {
                    break;
                }
                if events.as_ref().is_some_and(|ids| !ids.contains(&event.id)) {
                    continue;
                }
                printer.event(&event);
            }
        }
        if printer.out.len() >= 1 << 16 {
            stdout.write_all(&printer.out).context("writing the dump")?;
            printer.out.clear();
        }
    }
    stdout.write_all(&printer.out).and_then(|()| stdout.flush()).context("writing the dump")?;
    drop(progress);
    if stream.unknown_events() > 0 {
        eprintln!(
            "schedlens: warning: {} events have no format in the file and were printed undecoded",
            stream.unknown_events()
        );
    }
    if let Err(error) = trace.kallsyms() {
        eprintln!("schedlens: warning: {error}; kernel addresses were printed as numbers");
    }
    Ok(report_damage(stream.damage()))
}

/// A perf.data's events: the selected CPUs merged in time order.
fn dump_perf_data(args: &Args, perf: &PerfData) -> Result<Outcome> {
    let ids = match &args.event {
        Some(names) => Some(event_ids(perf, names)?),
        None => None,
    };
    let mut stream = perf.events_of(args.cpu.as_ref().map(|list| &list.0[..]));
    let printer = crate::perf_text::PerfPrinter::new(perf, args.json);
    print_merged(args, ids, &mut stream, printer)?;
    Ok(report_damage(&perf.damage_found()))
}

/// A Perfetto trace's events, in the layout of a perf.data's (the reader's own records,
/// names from the trace's process and thread descriptors).
fn dump_perfetto(args: &Args, trace: &pftrace::PerfettoTrace) -> Result<Outcome> {
    let ids = match &args.event {
        Some(names) => Some(event_ids(trace, names)?),
        None => None,
    };
    let mut stream = trace.events_of(args.cpu.as_ref().map(|list| &list.0[..]));
    let printer = crate::perf_text::PerfPrinter::with_names(trace.cmdlines(), args.json);
    print_merged(args, ids, &mut stream, printer)?;
    Ok(report_damage(trace.damage_found()))
}

/// Prints a merged stream of a container read whole at open.
fn print_merged(
    args: &Args,
    ids: Option<Vec<u32>>,
    stream: &mut impl EventItems,
    mut printer: crate::perf_text::PerfPrinter,
) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    let mut window: Option<(Nanos, Nanos)> = None;
    while let Some(item) = stream.next() {
        match item {
            Item::Lost(lost) => printer.lost(&lost),
            Item::Event(event) => {
                let (start, end) = *window.get_or_insert_with(|| time_window(event.ts, args.min, args.max));
                if event.ts < start || ids.as_ref().is_some_and(|ids| !ids.contains(&event.id)) {
                    continue;
                }
                if event.ts > end {
                    break;
                }
                printer.event(&event);
            }
        }
        if printer.out.len() >= 1 << 16 {
            stdout.write_all(&printer.out).context("writing the dump")?;
            printer.out.clear();
        }
    }
    stdout.write_all(&printer.out).and_then(|()| stdout.flush()).context("writing the dump")?;
    if stream.unknown_events() > 0 {
        eprintln!(
            "schedlens: warning: {} events have no format in the file and were printed undecoded",
            stream.unknown_events()
        );
    }
    Ok(())
}

fn time_window(first: Nanos, min: Option<f64>, max: Option<f64>) -> (Nanos, Nanos) {
    let start = min.map_or(Nanos::ZERO, |s| first + Nanos::from_secs_f64(s));
    let end = max.map_or(Nanos::MAX, |s| first + Nanos::from_secs_f64(s));
    (start, end)
}

fn event_ids<S: EventSource>(trace: &S, names: &[String]) -> Result<Vec<u32>> {
    names
        .iter()
        .map(|name| match trace.formats().by_name(name) {
            Some(format) => Ok(format.id),
            None => bail!("{}: no event named {name:?} in this trace", trace.input()),
        })
        .collect()
}

/// Formats items into `out`: as text by tracedat's [`ReportPrinter`] (the text of
/// `trace-cmd report -R -t`), or as JSON lines.
///
/// JSON is written piece by piece, serde_json escaping every string (each event format's
/// keys once). Serializing whole events through serde's `Serialize` cost 27% more CPU on
/// /work/bench/hackbench-big.dat (4.93M events: 2.33 s user, against 1.84 s for the old
/// hand-written escaper and 1.89 s for this), mostly escaping the same keys again and
/// again, so this keeps the fast path.
struct Printer<'t> {
    trace: &'t Trace,
    json: bool,
    report: ReportPrinter<'t>,
    out: Vec<u8>,
    /// Per event id: `"event":"NAME"` and each field's `"NAME":`, escaped.
    keys: Vec<Option<FormatKeys>>,
    numbers: itoa::Buffer,
    text: Vec<u8>,
}

struct FormatKeys {
    id: u32,
    event: Vec<u8>,
    fields: Vec<Vec<u8>>,
}

impl FormatKeys {
    fn new(format: &EventFormat) -> FormatKeys {
        let (event, fields) = json_keys(format, b"\"event\":");
        FormatKeys { id: format.id, event, fields }
    }
}

/// A format's `"event":"name"` (after `prefix`) and its fields' `"name":` keys, escaped
/// once for every event of the format.
pub(crate) fn json_keys(format: &EventFormat, prefix: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut event = prefix.to_vec();
    json_str(&mut event, &format.name);
    let fields = format
        .fields
        .iter()
        .map(|f| {
            let mut key = Vec::new();
            json_str(&mut key, &f.name);
            key.push(b':');
            key
        })
        .collect();
    (event, fields)
}

/// The escaped keys of a format, made on first use (event ids are 16 bits; a damaged
/// file's larger ids share the last slot, remade when the format changes).
fn keys_of<'k>(keys: &'k mut Vec<Option<FormatKeys>>, format: &EventFormat) -> &'k FormatKeys {
    let slot = (format.id as usize).min(1 << 16);
    if keys.len() <= slot {
        keys.resize_with(slot + 1, || None);
    }
    let entry = &mut keys[slot];
    if entry.as_ref().is_none_or(|k| k.id != format.id) {
        *entry = Some(FormatKeys::new(format));
    }
    entry.as_ref().expect("made above")
}

/// A string as JSON, escaped by serde_json.
pub(crate) fn json_str(out: &mut Vec<u8>, text: &str) {
    serde_json::to_writer(out, text).expect("writing JSON into memory cannot fail");
}

/// Bytes as a JSON string (invalid UTF-8 replaced by U+FFFD).
fn json_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    json_str(out, &String::from_utf8_lossy(bytes));
}

impl<'t> Printer<'t> {
    fn new(trace: &'t Trace, json: bool) -> Self {
        let report = ReportPrinter::new(trace);
        let mut out = Vec::with_capacity(1 << 17);
        if !json {
            report.header(&mut out);
        }
        Printer { trace, json, report, out, keys: Vec::new(), numbers: itoa::Buffer::new(), text: Vec::new() }
    }

    fn buffer_name(&self, buffer: u16) -> &'t str {
        self.trace.buffers().get(buffer as usize).map_or("", |b| b.name.as_str())
    }

    fn number(&mut self, n: impl itoa::Integer) {
        self.out.extend_from_slice(self.numbers.format(n).as_bytes());
    }

    /// `{` and, for events of a named instance, `"buffer":"NAME",`.
    fn open(&mut self, buffer: u16) {
        self.out.push(b'{');
        let name = self.buffer_name(buffer);
        if !name.is_empty() {
            self.out.extend_from_slice(b"\"buffer\":");
            json_str(&mut self.out, name);
            self.out.push(b',');
        }
    }

    /// A loss notice: `{"cpu":1,"lost":1204}` (`null` when the kernel did not count).
    fn lost(&mut self, lost: &Lost) {
        if !self.json {
            self.report.lost(&mut self.out, lost);
            return;
        }
        self.open(lost.buffer);
        self.out.extend_from_slice(b"\"cpu\":");
        self.number(lost.cpu.0);
        self.out.extend_from_slice(b",\"lost\":");
        match lost.count {
            Some(n) => self.number(n),
            None => self.out.extend_from_slice(b"null"),
        }
        self.out.extend_from_slice(b"}\n");
    }

    /// One event: `{"cpu":0,"ts":NS,"event":"print","pid":7,"fields":{...}}`, plus
    /// `"symbols":{"ip":"tracing_mark_write"}` for the fields trace-cmd shows as kernel
    /// symbols (the field keeps its number), and `"text"` for a bprint event's message.
    fn event(&mut self, event: &Event<'_>) {
        if !self.json {
            self.report.event(&mut self.out, event);
            return;
        }
        self.open(event.buffer);
        self.out.extend_from_slice(b"\"cpu\":");
        self.number(event.cpu.0);
        self.out.extend_from_slice(b",\"ts\":");
        self.number(event.ts.0);
        self.out.push(b',');
        let Some(format) = event.format else {
            self.out.extend_from_slice(b"\"event\":null,\"id\":");
            self.number(event.id);
            self.out.extend_from_slice(b",\"pid\":");
            self.number(event.pid().0);
            self.out.extend_from_slice(b",\"fields\":{}}\n");
            return;
        };
        let keys = keys_of(&mut self.keys, format);
        self.out.extend_from_slice(&keys.event);
        self.out.extend_from_slice(b",\"pid\":");
        self.number(event.pid().0);
        self.out.extend_from_slice(b",\"fields\":{");
        for (index, (_, value)) in event.fields().enumerate() {
            if index > 0 {
                self.out.push(b',');
            }
            let keys = keys_of(&mut self.keys, format);
            self.out.extend_from_slice(&keys.fields[index]);
            self.value(value);
        }
        self.out.push(b'}');
        self.symbols(event);
        self.text.clear();
        if bprint_message(self.trace, event, &mut self.text) {
            self.out.extend_from_slice(b",\"text\":");
            json_bytes(&mut self.out, &self.text);
        }
        self.out.extend_from_slice(b"}\n");
    }

    fn symbols(&mut self, event: &Event<'_>) {
        let out = &mut self.out;
        let mut first = true;
        self.report.symbols(event, |field, name| {
            out.extend_from_slice(if first { b",\"symbols\":{" } else { b"," });
            first = false;
            json_str(out, &field.name);
            out.push(b':');
            json_str(out, name);
        });
        if !first {
            self.out.push(b'}');
        }
    }

    fn value(&mut self, value: Option<Value<'_>>) {
        json_value(&mut self.out, &mut self.numbers, value);
    }
}

/// A field's raw value as JSON: numbers as numbers, text as a string, arrays as arrays of
/// numbers, `null` when the record is too short.
pub(crate) fn json_value(out: &mut Vec<u8>, numbers: &mut itoa::Buffer, value: Option<Value<'_>>) {
    match value {
        None => out.extend_from_slice(b"null"),
        Some(Value::Unsigned(v)) => out.extend_from_slice(numbers.format(v).as_bytes()),
        Some(Value::Signed(v)) => out.extend_from_slice(numbers.format(v).as_bytes()),
        Some(Value::Str(s)) => json_bytes(out, s),
        Some(array @ Value::Array { .. }) => {
            out.push(b'[');
            for (i, element) in array.elements().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_value(out, numbers, Some(element));
            }
            out.push(b']');
        }
        Some(Value::Bytes(bytes)) => {
            out.push(b'[');
            for (i, &b) in bytes.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(numbers.format(b).as_bytes());
            }
            out.push(b']');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped_by_serde_json() {
        let mut out = Vec::new();
        json_bytes(&mut out, b"a\"b\\c\n\x01\xffz\xc3\xa9");
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\\"b\\\\c\\n\\u0001\u{fffd}z\u{e9}\"");
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0,2-4").unwrap(), CpuList(vec![0, 2, 3, 4]));
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
    }
}
