//! `schedlens dump`: every event of a trace, as text exactly as `trace-cmd report -R -t`
//! prints it, or as one JSON object per line with every field's raw value (and the
//! symbol names and bprint messages trace-cmd shows).

use crate::progress::Progress;
use crate::{Outcome, report_damage};
use anyhow::{Context, Result, bail};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::io::Write;
use std::path::PathBuf;
use tracedat::{Event, Item, Lost, Nanos, ReportPrinter, Selection, Trace, Value, bprint_message};

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat file.
    trace: PathBuf,
    /// One JSON object per line instead of text.
    #[arg(long)]
    json: bool,
    /// Only these CPUs (e.g. `0,2-3`).
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    cpu: Option<Vec<u32>>,
    /// Only these events, by name or `system:name` (comma-separated).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    event: Option<Vec<String>>,
    /// Skip events before this many seconds after the first event.
    #[arg(long, value_name = "S")]
    min: Option<f64>,
    /// Stop after this many seconds after the first event.
    #[arg(long, value_name = "S")]
    max: Option<f64>,
}

/// Parses `0,2-3,7` into CPU numbers.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, String> {
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
    Ok(cpus)
}

pub fn run(args: Args) -> Result<Outcome> {
    let trace = Trace::open(&args.trace)?;
    let events = match &args.event {
        Some(names) => Some(event_ids(&trace, names)?),
        None => None,
    };
    let selection = Selection { cpus: args.cpu.clone(), ..Selection::all() };
    let progress = Progress::bytes(trace.data_size(&selection), "dumping");
    let mut stdout = std::io::stdout().lock();
    let mut stream = trace.events_of(&selection);
    let mut printer = Printer::new(&trace, args.json);
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
    Ok(report_damage(stream.damage()))
}

fn time_window(first: Nanos, min: Option<f64>, max: Option<f64>) -> (Nanos, Nanos) {
    let start = min.map_or(Nanos::ZERO, |s| first + Nanos::from_secs_f64(s));
    let end = max.map_or(Nanos::MAX, |s| first + Nanos::from_secs_f64(s));
    (start, end)
}

fn event_ids(trace: &Trace, names: &[String]) -> Result<Vec<u32>> {
    names
        .iter()
        .map(|name| match trace.formats().by_name(name) {
            Some(format) => Ok(format.id),
            None => bail!("{}: no event named {name:?} in this trace", trace.input()),
        })
        .collect()
}

/// Formats items into `out`: as text by tracedat's [`ReportPrinter`] (the text of
/// `trace-cmd report -R -t`), or as JSON lines through serde_json.
struct Printer<'t> {
    trace: &'t Trace,
    json: bool,
    report: ReportPrinter<'t>,
    out: Vec<u8>,
    text: Vec<u8>,
}

impl<'t> Printer<'t> {
    fn new(trace: &'t Trace, json: bool) -> Self {
        let report = ReportPrinter::new(trace);
        let mut out = Vec::with_capacity(1 << 17);
        if !json {
            report.header(&mut out);
        }
        Printer { trace, json, report, out, text: Vec::new() }
    }

    fn buffer_name(&self, buffer: u16) -> &'t str {
        self.trace.buffers().get(buffer as usize).map_or("", |b| b.name.as_str())
    }

    fn lost(&mut self, lost: &Lost) {
        if !self.json {
            self.report.lost(&mut self.out, lost);
            return;
        }
        let line = JsonLost { buffer: self.buffer_name(lost.buffer), lost };
        self.write_json(&line);
    }

    fn event(&mut self, event: &Event<'_>) {
        if !self.json {
            self.report.event(&mut self.out, event);
            return;
        }
        let mut symbols = Vec::new();
        self.report.symbols(event, |field, name| symbols.push((field.name.as_str(), name.to_string())));
        self.text.clear();
        let text =
            bprint_message(self.trace, event, &mut self.text).then(|| String::from_utf8_lossy(&self.text).into_owned());
        let line =
            JsonEvent { buffer: self.buffer_name(event.buffer), event, symbols: &symbols, text: text.as_deref() };
        self.write_json(&line);
    }

    fn write_json(&mut self, line: &impl Serialize) {
        serde_json::to_writer(&mut self.out, line).expect("writing JSON into memory cannot fail");
        self.out.push(b'\n');
    }
}

/// A loss notice: `{"cpu":1,"lost":1204}` (`null` when the kernel did not count).
struct JsonLost<'a> {
    buffer: &'a str,
    lost: &'a Lost,
}

impl Serialize for JsonLost<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if !self.buffer.is_empty() {
            map.serialize_entry("buffer", self.buffer)?;
        }
        map.serialize_entry("cpu", &self.lost.cpu.0)?;
        map.serialize_entry("lost", &self.lost.count)?;
        map.end()
    }
}

/// One event: `{"cpu":0,"ts":NS,"event":"print","pid":7,"fields":{...}}`, plus
/// `"symbols":{"ip":"tracing_mark_write"}` for the fields trace-cmd shows as kernel
/// symbols (the field keeps its number), and `"text"` for a bprint event's message.
struct JsonEvent<'a, 'e> {
    buffer: &'a str,
    event: &'a Event<'e>,
    symbols: &'a [(&'a str, String)],
    text: Option<&'a str>,
}

impl Serialize for JsonEvent<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let event = self.event;
        let mut map = serializer.serialize_map(None)?;
        if !self.buffer.is_empty() {
            map.serialize_entry("buffer", self.buffer)?;
        }
        map.serialize_entry("cpu", &event.cpu.0)?;
        map.serialize_entry("ts", &event.ts.0)?;
        match event.format {
            Some(format) => map.serialize_entry("event", &format.name)?,
            None => {
                map.serialize_entry("event", &())?;
                map.serialize_entry("id", &event.id)?;
            }
        }
        map.serialize_entry("pid", &event.pid().0)?;
        map.serialize_entry("fields", &JsonFields(event))?;
        if !self.symbols.is_empty() {
            map.serialize_entry("symbols", &JsonSymbols(self.symbols))?;
        }
        if let Some(text) = self.text {
            map.serialize_entry("text", text)?;
        }
        map.end()
    }
}

struct JsonFields<'a, 'e>(&'a Event<'e>);

impl Serialize for JsonFields<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (field, value) in self.0.fields() {
            map.serialize_entry(&field.name, &JsonValue(value))?;
        }
        map.end()
    }
}

struct JsonSymbols<'a>(&'a [(&'a str, String)]);

impl Serialize for JsonSymbols<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (field, name) in self.0 {
            map.serialize_entry(field, name)?;
        }
        map.end()
    }
}

/// A field's raw value: numbers as numbers, text as a string (invalid UTF-8 replaced by
/// U+FFFD), arrays as arrays of numbers, `null` when the record is too short.
struct JsonValue<'a>(Option<Value<'a>>);

impl Serialize for JsonValue<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => serializer.serialize_unit(),
            Some(Value::Unsigned(v)) => serializer.serialize_u64(v),
            Some(Value::Signed(v)) => serializer.serialize_i64(v),
            Some(Value::Str(s)) => serializer.serialize_str(&String::from_utf8_lossy(s)),
            Some(array @ Value::Array { .. }) => serializer.collect_seq(array.elements().map(|e| JsonValue(Some(e)))),
            Some(Value::Bytes(bytes)) => serializer.collect_seq(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0,2-4").unwrap(), [0, 2, 3, 4]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
    }
}
