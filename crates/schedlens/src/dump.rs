//! `schedlens dump`: every event of a trace, as text in the style of `trace-cmd report -R`
//! or as one JSON object per line with every field's raw value.

use crate::common::{open_trace, seconds};
use crate::progress::Progress;
use crate::{Outcome, report_damage, usage};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::PathBuf;
use tracedat::{Event, Item, Lost, Nanos, Selection, Trace, Value};

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
    #[arg(long, value_name = "S", value_parser = seconds)]
    min: Option<f64>,
    /// Stop after this many seconds after the first event.
    #[arg(long, value_name = "S", value_parser = seconds)]
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
    if let (Some(min), Some(max)) = (args.min, args.max) {
        if min >= max {
            return Err(usage(format!("--min {min} is not before --max {max}")));
        }
    }
    let trace = open_trace(&args.trace)?;
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

/// Formats items into `out`.
struct Printer<'t> {
    trace: &'t Trace,
    json: bool,
    out: Vec<u8>,
    numbers: itoa::Buffer,
}

impl<'t> Printer<'t> {
    fn new(trace: &'t Trace, json: bool) -> Self {
        Printer { trace, json, out: Vec::with_capacity(1 << 17), numbers: itoa::Buffer::new() }
    }

    fn buffer_name(&self, buffer: u16) -> &'t str {
        self.trace.buffers().get(buffer as usize).map_or("", |b| b.name.as_str())
    }

    fn number(&mut self, n: impl itoa::Integer) {
        self.out.extend_from_slice(self.numbers.format(n).as_bytes());
    }

    /// `"buffer":"NAME",` for events of a named instance.
    fn json_buffer(&mut self, buffer: u16) {
        let name = self.buffer_name(buffer);
        if !name.is_empty() {
            self.out.extend_from_slice(b"\"buffer\":");
            json_string(&mut self.out, name.as_bytes());
            self.out.push(b',');
        }
    }

    fn lost(&mut self, lost: &Lost) {
        if self.json {
            self.out.push(b'{');
            self.json_buffer(lost.buffer);
            self.out.extend_from_slice(b"\"cpu\":");
            self.number(lost.cpu.0);
            self.out.extend_from_slice(b",\"lost\":");
            match lost.count {
                Some(n) => self.number(n),
                None => self.out.extend_from_slice(b"null"),
            }
            self.out.extend_from_slice(b"}\n");
            return;
        }
        let buffer = self.buffer_name(lost.buffer);
        if !buffer.is_empty() {
            let _ = write!(self.out, "{buffer}: ");
        }
        let _ = match lost.count {
            Some(n) => writeln!(self.out, "CPU:{} [{n} EVENTS DROPPED]", lost.cpu),
            None => writeln!(self.out, "CPU:{} [EVENTS DROPPED]", lost.cpu),
        };
    }

    fn event(&mut self, event: &Event<'_>) {
        if self.json {
            self.json_event(event);
        } else {
            self.text_event(event);
        }
    }

    fn json_event(&mut self, event: &Event<'_>) {
        self.out.push(b'{');
        self.json_buffer(event.buffer);
        self.out.extend_from_slice(b"\"cpu\":");
        self.number(event.cpu.0);
        self.out.extend_from_slice(b",\"ts\":");
        self.number(event.ts.0);
        self.out.extend_from_slice(b",\"event\":");
        match event.format {
            Some(format) => json_string(&mut self.out, format.name.as_bytes()),
            None => {
                self.out.extend_from_slice(b"null,\"id\":");
                self.number(event.id);
            }
        }
        self.out.extend_from_slice(b",\"pid\":");
        self.number(event.pid().0);
        self.out.extend_from_slice(b",\"fields\":{");
        for (i, (field, value)) in event.fields().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            json_string(&mut self.out, field.name.as_bytes());
            self.out.push(b':');
            self.json_value(value);
        }
        self.out.extend_from_slice(b"}}\n");
    }

    fn json_value(&mut self, value: Option<Value<'_>>) {
        match value {
            None => self.out.extend_from_slice(b"null"),
            Some(Value::Unsigned(v)) => self.number(v),
            Some(Value::Signed(v)) => self.number(v),
            Some(Value::Str(s)) => json_string(&mut self.out, s),
            Some(array @ Value::Array { .. }) => {
                self.out.push(b'[');
                for (i, element) in array.elements().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.json_value(Some(element));
                }
                self.out.push(b']');
            }
            Some(Value::Bytes(bytes)) => {
                self.out.push(b'[');
                for (i, &b) in bytes.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.number(b);
                }
                self.out.push(b']');
            }
        }
    }

    fn text_event(&mut self, event: &Event<'_>) {
        let pid = event.pid().0;
        let comm = match pid {
            0 => "<idle>",
            _ => self.trace.metadata().cmdlines.get(pid).unwrap_or("<...>"),
        };
        let buffer = self.buffer_name(event.buffer);
        if !buffer.is_empty() {
            let _ = write!(self.out, "{buffer}: ");
        }
        let name =
            if event.format.is_some() { event.name().to_string() } else { format!("[UNKNOWN TYPE {}]", event.id) };
        let _ =
            write!(self.out, "{comm:>16}-{pid:<5} [{:03}] {:>15}: {:<20}", event.cpu.0, event.ts, format!("{name}:"));
        for (field, value) in event.fields() {
            let _ = write!(self.out, " {}=", field.name);
            self.text_value(value);
        }
        self.out.push(b'\n');
    }

    fn text_value(&mut self, value: Option<Value<'_>>) {
        match value {
            Some(Value::Str(s)) => self.out.extend_from_slice(s),
            Some(Value::Unsigned(v)) => self.number(v),
            Some(Value::Signed(v)) => self.number(v),
            other => self.json_value(other),
        }
    }
}

/// Writes `bytes` as a JSON string: valid UTF-8 passes through, control characters and
/// invalid bytes become `\u00XX` escapes (the latter read as Latin-1), so nothing is lost.
fn json_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let mut rest = bytes;
    while !rest.is_empty() {
        // Plain ASCII needs no escaping: copy such runs in one go.
        let plain = rest.iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x80).unwrap_or(rest.len());
        out.extend_from_slice(&rest[..plain]);
        rest = &rest[plain..];
        let Some(&b) = rest.first() else { break };
        if b < 0x80 {
            escape_ascii(out, b);
            rest = &rest[1..];
        } else {
            rest = copy_utf8_or_escape(out, rest);
        }
    }
    out.push(b'"');
}

fn escape_ascii(out: &mut Vec<u8>, b: u8) {
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\t' => out.extend_from_slice(b"\\t"),
        b'\r' => out.extend_from_slice(b"\\r"),
        _ => {
            let _ = write!(out, "\\u{b:04x}");
        }
    }
}

/// Copies the UTF-8 sequence at the start of `bytes`, or escapes its first byte when it is
/// not valid UTF-8; returns the rest.
fn copy_utf8_or_escape<'a>(out: &mut Vec<u8>, bytes: &'a [u8]) -> &'a [u8] {
    let len = match bytes[0] {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    };
    match bytes.get(..len).filter(|seq| len > 1 && std::str::from_utf8(seq).is_ok()) {
        Some(seq) => {
            out.extend_from_slice(seq);
            &bytes[len..]
        }
        None => {
            let _ = write!(out, "\\u{:04x}", bytes[0]);
            &bytes[1..]
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

    #[test]
    fn json_strings_escape_and_keep_invalid_bytes() {
        let mut out = Vec::new();
        json_string(&mut out, b"a\"b\\c\n\x01\xffz\xc3\xa9");
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\\"b\\\\c\\n\\u0001\\u00ffz\u{e9}\"");
    }
}
