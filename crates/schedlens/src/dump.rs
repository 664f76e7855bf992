//! `schedlens dump`: every event of a trace, as text in the style of `trace-cmd report -R`
//! or as one JSON object per line with every field's raw value.

use crate::progress::Progress;
use crate::{Outcome, report_damage};
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
                let (a, b): (u32, u32) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
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
    let selection = Selection {
        cpus: args.cpu.clone(),
        ..Selection::all()
    };
    let progress = Progress::bytes(trace.data_size(&selection), "dumping");
    let stdout = std::io::stdout().lock();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout);
    let mut stream = trace.events_of(&selection);
    let mut printer = Printer {
        trace: &trace,
        json: args.json,
        line: Vec::with_capacity(512),
    };
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
                let (start, end) =
                    *window.get_or_insert_with(|| time_window(event.ts, args.min, args.max));
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
        out.write_all(&printer.line).context("writing the dump")?;
        printer.line.clear();
    }
    out.flush().context("writing the dump")?;
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

/// Formats items into `line`.
struct Printer<'t> {
    trace: &'t Trace,
    json: bool,
    line: Vec<u8>,
}

impl Printer<'_> {
    fn buffer_name(&self, buffer: u16) -> &str {
        self.trace
            .buffers()
            .get(buffer as usize)
            .map_or("", |b| b.name.as_str())
    }

    fn lost(&mut self, lost: &Lost) {
        let buffer = self.buffer_name(lost.buffer).to_string();
        let line = &mut self.line;
        if self.json {
            line.push(b'{');
            if !buffer.is_empty() {
                line.extend_from_slice(b"\"buffer\":");
                json_string(line, buffer.as_bytes());
                line.push(b',');
            }
            let count = lost.count.map_or("null".to_string(), |c| c.to_string());
            let _ = writeln!(line, "\"cpu\":{},\"lost\":{count}}}", lost.cpu);
        } else {
            if !buffer.is_empty() {
                let _ = write!(line, "{buffer}: ");
            }
            match lost.count {
                Some(n) => writeln!(line, "CPU:{} [{n} EVENTS DROPPED]", lost.cpu),
                None => writeln!(line, "CPU:{} [EVENTS DROPPED]", lost.cpu),
            }
            .expect("writing to a Vec");
        }
    }

    fn event(&mut self, event: &Event<'_>) {
        if self.json {
            self.json_event(event);
        } else {
            self.text_event(event);
        }
    }

    fn json_event(&mut self, event: &Event<'_>) {
        let buffer = self.buffer_name(event.buffer).to_string();
        let line = &mut self.line;
        line.extend_from_slice(b"{");
        if !buffer.is_empty() {
            line.extend_from_slice(b"\"buffer\":");
            json_string(line, buffer.as_bytes());
            line.push(b',');
        }
        let _ = write!(
            line,
            "\"cpu\":{},\"ts\":{},\"event\":",
            event.cpu, event.ts.0
        );
        match event.format {
            Some(format) => json_string(line, format.name.as_bytes()),
            None => {
                let _ = write!(line, "null,\"id\":{}", event.id);
            }
        }
        let _ = write!(line, ",\"pid\":{},\"fields\":{{", event.pid());
        for (i, (field, value)) in event.fields().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            json_string(line, field.name.as_bytes());
            line.push(b':');
            json_value(line, value);
        }
        line.extend_from_slice(b"}}\n");
    }

    fn text_event(&mut self, event: &Event<'_>) {
        let pid = event.pid().0;
        let comm = match pid {
            0 => "<idle>",
            _ => self.trace.metadata().cmdlines.get(pid).unwrap_or("<...>"),
        };
        let buffer = self.buffer_name(event.buffer).to_string();
        let line = &mut self.line;
        if !buffer.is_empty() {
            let _ = write!(line, "{buffer}: ");
        }
        let name = if event.format.is_some() {
            event.name().to_string()
        } else {
            format!("[UNKNOWN TYPE {}]", event.id)
        };
        let _ = write!(
            line,
            "{comm:>16}-{pid:<5} [{:03}] {:>15}: {:<20}",
            event.cpu.0,
            event.ts,
            format!("{name}:")
        );
        for (field, value) in event.fields() {
            let _ = write!(line, " {}=", field.name);
            text_value(line, value);
        }
        line.push(b'\n');
    }
}

fn json_value(out: &mut Vec<u8>, value: Option<Value<'_>>) {
    match value {
        None => out.extend_from_slice(b"null"),
        Some(Value::Unsigned(v)) => {
            let _ = write!(out, "{v}");
        }
        Some(Value::Signed(v)) => {
            let _ = write!(out, "{v}");
        }
        Some(Value::Str(s)) => json_string(out, s),
        Some(array @ Value::Array { .. }) => {
            out.push(b'[');
            for (i, element) in array.elements().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_value(out, Some(element));
            }
            out.push(b']');
        }
        Some(Value::Bytes(bytes)) => {
            out.push(b'[');
            for (i, b) in bytes.iter().enumerate() {
                let _ = write!(out, "{}{b}", if i > 0 { "," } else { "" });
            }
            out.push(b']');
        }
    }
}

fn text_value(out: &mut Vec<u8>, value: Option<Value<'_>>) {
    match value {
        Some(Value::Str(s)) => out.extend_from_slice(s),
        Some(Value::Unsigned(v)) => {
            let _ = write!(out, "{v}");
        }
        Some(Value::Signed(v)) => {
            let _ = write!(out, "{v}");
        }
        other => json_value(out, other),
    }
}

/// Writes `bytes` as a JSON string: valid UTF-8 passes through, control characters and
/// invalid bytes become `\u00XX` escapes (the latter read as Latin-1), so nothing is lost.
fn json_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let mut rest = bytes;
    while !rest.is_empty() {
        let (valid, invalid) = match std::str::from_utf8(rest) {
            Ok(s) => (s, &[][..]),
            Err(e) => {
                let (ok, bad) = rest.split_at(e.valid_up_to());
                let bad_len = e.error_len().unwrap_or(bad.len());
                (std::str::from_utf8(ok).expect("checked"), &bad[..bad_len])
            }
        };
        for c in valid.chars() {
            match c {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\t' => out.extend_from_slice(b"\\t"),
                '\r' => out.extend_from_slice(b"\\r"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        for &b in invalid {
            let _ = write!(out, "\\u{:04x}", b);
        }
        rest = &rest[valid.len() + invalid.len()..];
    }
    out.push(b'"');
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
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"b\\\\c\\n\\u0001\\u00ffz\u{e9}\""
        );
    }
}
