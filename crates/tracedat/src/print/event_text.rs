//! Events as text, byte for byte as `trace-cmd report -R -t` (trace-cmd 3.1 with
//! libtraceevent 1.7) prints them, and the symbol names it shows.
//!
//! A line is `COMM-PID [CPU] TIME: NAME: name=value ...`. With `-R` libtraceevent prints
//! every field raw, except that a field which is itself an argument of the event's print
//! format is printed through that conversion (`target_cpu=%03d` → `target_cpu=001`,
//! `%ps` → a symbol name from the trace's kallsyms, `0x%lx` → hex with its prefix).
//! Raw means: printable char arrays as text, other arrays as `ARRAY[xx, ...]` (bytes in
//! hex; a char array that once held an unprintable byte stays an array for the rest of
//! the report, as in libtraceevent), pointers and longs in hex, other numbers in decimal.
//!
//! [`ReportPrinter`] keeps what it learns per event format; it only writes into buffers.

use crate::print::cprintf::{Spec, c_string, write_pointer};
use crate::print::printfmt::{Arg, Chunk, ChunkKind, PrintFormat, apply_cast, parse_chunks};
use crate::read::event::Event;
use crate::read::format::{EventFormat, Field};
use crate::read::trace::{Lost, Trace};
use std::io::Write;

/// Writes events and losses as `trace-cmd report -R -t` does.
pub struct ReportPrinter<'t> {
    trace: &'t Trace,
    /// Per event id (dense ids; others are found by search in `sparse`).
    plans: Vec<Option<Plan>>,
    sparse: Vec<(u32, Plan)>,
    /// Per buffer: timestamps in nanoseconds (`SECS.NANOS`) or a plain count.
    ns_time: Vec<bool>,
    /// Width of the buffer-name column (files with instances), else `None`.
    buffer_column: Option<usize>,
    /// The last line was a loss notice of this buffer and CPU: the event that follows
    /// there shares its buffer column.
    after_loss: Option<(u16, u32)>,
    scratch: Vec<u8>,
}

/// What libtraceevent knows of one event format.
struct Plan {
    print: PrintFormat,
    fields: Vec<FieldPlan>,
    /// Fields shown as symbol names (`%ps`/`%pS`/`%pf`/`%pF` of the field itself).
    symbolic: Vec<usize>,
}

struct FieldPlan {
    flags: Flags,
    /// The print-format piece the field prints through, and whether `0x` goes first.
    conversion: Option<(usize, bool)>,
}

/// libtraceevent's field flags, from the declaration.
#[derive(Copy, Clone, Debug, Default)]
struct Flags {
    array: bool,
    dynamic: bool,
    relative: bool,
    /// Cleared for good once a value is not printable.
    string: bool,
    pointer: bool,
    long: bool,
    signed: bool,
}

impl Flags {
    fn of(field: &Field) -> Flags {
        let t = field.type_name.as_str();
        let dynamic = t.starts_with("__data_loc") || t.starts_with("__rel_loc");
        let array = t.contains('[') || (dynamic && field.size == 2);
        let string =
            (array && (t.contains("char") || t.contains("u8") || t.contains("s8"))) || (dynamic && field.size == 2);
        Flags {
            array,
            dynamic,
            relative: t.starts_with("__rel_loc"),
            string,
            pointer: t.contains('*'),
            long: t.contains("long"),
            signed: field.signed,
        }
    }
}

impl Plan {
    fn new(format: &EventFormat) -> Plan {
        let names: Vec<&str> = format.fields.iter().map(|f| f.name.as_str()).collect();
        let print = if format.system == "ftrace" && format.name == "bprint" {
            // libtraceevent formats bprint events from their own printk format only.
            PrintFormat { chunks: Vec::new(), failed: true }
        } else {
            PrintFormat::parse(&format.print_fmt, format.system == "ftrace", &names)
        };
        let mut fields: Vec<FieldPlan> =
            format.fields.iter().map(|f| FieldPlan { flags: Flags::of(f), conversion: None }).collect();
        if !print.failed && !print.chunks.is_empty() {
            // The search libtraceevent makes for each field in turn: from the piece after
            // the previous match, round the format once.
            let mut start = 0;
            for (index, field) in format.fields.iter().enumerate() {
                if fields[index].flags.array || fields[index].flags.string {
                    continue;
                }
                if let Some((chunk, with_0x)) = find_conversion(&print.chunks, start, field, format) {
                    fields[index].conversion = Some((chunk, with_0x));
                    start = (chunk + 1) % print.chunks.len();
                }
            }
        }
        let symbolic = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.conversion.is_some_and(|(c, _)| is_symbol_conversion(&print.chunks[c])))
            .map(|(i, _)| i)
            .collect();
        Plan { print, fields, symbolic }
    }
}

fn find_conversion(chunks: &[Chunk], start: usize, field: &Field, format: &EventFormat) -> Option<(usize, bool)> {
    let mut with_0x = false;
    for step in 0..chunks.len() {
        let index = (start + step) % chunks.len();
        let chunk = &chunks[index];
        if chunk.kind == ChunkKind::Literal {
            with_0x = chunk.text.len() > 1 && chunk.text.ends_with("0x");
            continue;
        }
        match &chunk.arg {
            Some(Arg::Field { name, .. }) if find_any_field(format, name).is_some_and(|f| std::ptr::eq(f, field)) => {
                return Some((index, with_0x));
            }
            _ => with_0x = false,
        }
    }
    None
}

/// libtraceevent's field lookup for print-format arguments: common fields first.
fn find_any_field<'f>(format: &'f EventFormat, name: &str) -> Option<&'f Field> {
    format.common_fields.iter().chain(&format.fields).find(|f| f.name == name)
}

/// `%ps`, `%pS`, `%pf`, `%pF`: a kernel address shown as a symbol.
fn is_symbol_conversion(chunk: &Chunk) -> bool {
    chunk.kind == ChunkKind::Pointer && matches!(symbol_letter(&chunk.text), Some(b'f' | b'F' | b's' | b'S'))
}

fn symbol_letter(conversion: &str) -> Option<u8> {
    let at = conversion.find('p')?;
    conversion.as_bytes().get(at + 1).copied()
}

impl<'t> ReportPrinter<'t> {
    pub fn new(trace: &'t Trace) -> ReportPrinter<'t> {
        let in_ns = |clock: Option<&str>| match clock {
            // trace-cmd prints seconds for these clocks (and when it does not know the clock).
            None => true,
            Some(c) => {
                ["local", "global", "uptime", "perf", "x86-tsc-nsec", "tai"].contains(&c)
                    || c.starts_with("mono")
                    || trace.metadata().options.tsc2nsec.is_some()
            }
        };
        let buffers = trace.buffers();
        let named: Vec<&str> = buffers.iter().map(|b| b.name.as_str()).filter(|n| !n.is_empty()).collect();
        let buffer_column = (!named.is_empty()).then(|| named.iter().map(|n| n.len()).max().unwrap_or(0));
        ReportPrinter {
            trace,
            plans: Vec::new(),
            sparse: Vec::new(),
            ns_time: buffers.iter().map(|b| in_ns(b.clock.as_deref())).collect(),
            buffer_column,
            after_loss: None,
            scratch: Vec::new(),
        }
    }

    /// The first line of the report: `cpus=N`.
    pub fn header(&self, out: &mut Vec<u8>) {
        let cpus = self.trace.metadata().cpu_count.unwrap_or_else(|| self.trace.cpu_count());
        let _ = writeln!(out, "cpus={cpus}");
    }

    /// `CPU:N [K EVENTS DROPPED]` (or without a count when the kernel did not store it).
    pub fn lost(&mut self, out: &mut Vec<u8>, lost: &Lost) {
        self.buffer_prefix(out, lost.buffer);
        self.after_loss = Some((lost.buffer, lost.cpu.0));
        let _ = match lost.count {
            Some(n) => writeln!(out, "CPU:{} [{n} EVENTS DROPPED]", lost.cpu.0),
            None => writeln!(out, "CPU:{} [EVENTS DROPPED]", lost.cpu.0),
        };
    }

    /// One event line.
    pub fn event(&mut self, out: &mut Vec<u8>, event: &Event<'_>) {
        if self.after_loss.take() != Some((event.buffer, event.cpu.0)) {
            self.buffer_prefix(out, event.buffer);
        }
        let start = out.len();
        let pid = event.pid().0;
        let comm = match pid {
            0 => "<idle>",
            _ => self.trace.metadata().cmdlines.get(pid).unwrap_or("<...>"),
        };
        let _ = write!(out, "{}-{pid:<5} [{:03}]", Padded(comm, 16), event.cpu.0);
        let ts = event.ts.0;
        if self.ns_time.get(event.buffer as usize).copied().unwrap_or(true) {
            let _ = write!(out, " {:5}.{:09}:", ts / 1_000_000_000, ts % 1_000_000_000);
        } else {
            let _ = write!(out, "{ts:12}:");
        }
        let name = event.format.map_or("(NULL)", |f| f.name.as_str());
        let _ = write!(out, " {name}: {:1$}", "", 20usize.saturating_sub(name.len()));
        self.fields(out, event);
        if out.len() > start && out.last() == Some(&b'\n') {
            out.pop();
        }
        out.push(b'\n');
    }

    /// The ` name=value` list of an event, as `-R` shows it.
    pub fn fields(&mut self, out: &mut Vec<u8>, event: &Event<'_>) {
        let Some(format) = event.format else { return };
        let trace = self.trace;
        let plan = self.plan(format);
        for (index, field) in format.fields.iter().enumerate() {
            out.push(b' ');
            out.extend_from_slice(field.name.as_bytes());
            out.push(b'=');
            match plan.fields[index].conversion {
                Some((chunk, with_0x)) => {
                    if with_0x {
                        out.extend_from_slice(b"0x");
                    }
                    let chunk = &plan.print.chunks[chunk];
                    write_chunk(out, trace, chunk, &Values::Record(event));
                }
                None => write_raw(out, event, field, &mut plan.fields[index].flags),
            }
        }
    }

    /// The fields trace-cmd shows as symbol names, with the name it shows
    /// (`name` for `%ps`/`%pf`, `name+0xOFF` for `%pS`/`%pF`), when the address resolves.
    pub fn symbols<'e>(&mut self, event: &Event<'e>, mut each: impl FnMut(&'e Field, &str)) {
        let Some(format) = event.format else { return };
        let trace = self.trace;
        let mut scratch = std::mem::take(&mut self.scratch);
        let plan = self.plan(format);
        for &index in &plan.symbolic {
            let Some((chunk, _)) = plan.fields[index].conversion else { continue };
            let chunk = &plan.print.chunks[chunk];
            let value = Values::Record(event).number(chunk.arg.as_ref());
            scratch.clear();
            if write_symbol(&mut scratch, trace, value, symbol_letter(&chunk.text)) {
                each(&format.fields[index], &String::from_utf8_lossy(&scratch));
            }
        }
        self.scratch = scratch;
    }

    fn plan(&mut self, format: &EventFormat) -> &mut Plan {
        let id = format.id;
        if id < 1 << 16 {
            let slot = id as usize;
            if self.plans.len() <= slot {
                self.plans.resize_with(slot + 1, || None);
            }
            return self.plans[slot].get_or_insert_with(|| Plan::new(format));
        }
        let at = match self.sparse.iter().position(|(i, _)| *i == id) {
            Some(at) => at,
            None => {
                self.sparse.push((id, Plan::new(format)));
                self.sparse.len() - 1
            }
        };
        &mut self.sparse[at].1
    }

    fn buffer_prefix(&self, out: &mut Vec<u8>, buffer: u16) {
        let Some(width) = self.buffer_column else { return };
        let name = self.trace.buffers().get(buffer as usize).map_or("", |b| b.name.as_str());
        let _ = match name {
            "" => write!(out, "{:width$}  ", ""),
            _ => write!(out, "{}: ", Padded(name, width)),
        };
    }
}

/// `%Ns`: right-aligned to N bytes (not characters), never cut.
struct Padded<'a>(&'a str, usize);

impl std::fmt::Display for Padded<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for _ in self.0.len()..self.1 {
            f.write_str(" ")?;
        }
        f.write_str(self.0)
    }
}

/// Where a conversion's arguments take their values: a record's fields, or the values
/// unpacked from a `bprint` buffer (numbers and text).
pub(crate) enum Values<'a, 'e> {
    Record(&'a Event<'e>),
    Unpacked(&'a Event<'e>),
}

impl<'e> Values<'_, 'e> {
    fn event(&self) -> &Event<'e> {
        match self {
            Values::Record(e) | Values::Unpacked(e) => e,
        }
    }

    /// libtraceevent's numeric value of an argument (0 for what it cannot evaluate).
    fn number(&self, arg: Option<&Arg>) -> u64 {
        match arg {
            Some(Arg::Field { name, casts }) => {
                let event = self.event();
                let Some(field) = event.format.and_then(|f| find_any_field(f, name)) else { return 0 };
                let start = field.offset as usize;
                let value = event
                    .data
                    .get(start..start + field.size as usize)
                    .and_then(|bytes| read_number(event, bytes))
                    .unwrap_or(0);
                casts.iter().rev().fold(value, |v, cast| apply_cast(v, cast))
            }
            Some(Arg::Atom(atom)) => parse_c_number(atom),
            _ => 0,
        }
    }
}

/// `strtoull(text, NULL, 0)`.
fn parse_c_number(text: &str) -> u64 {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).unwrap_or(0)
    } else if digits.len() > 1 && digits.starts_with('0') {
        u64::from_str_radix(&digits[1..], 8).unwrap_or(0)
    } else {
        digits.parse().unwrap_or(0)
    };
    if negative { value.wrapping_neg() } else { value }
}

/// A field's bytes as an unsigned number (libtraceevent reads 1, 2, 4 or 8 bytes; other
/// sizes read as 0).
fn read_number(event: &Event<'_>, bytes: &[u8]) -> Option<u64> {
    match bytes.len() {
        1 | 2 | 4 | 8 => event.endian.read_uint(bytes, bytes.len()),
        _ => Some(0),
    }
}

/// Writes one conversion of a print format.
pub(crate) fn write_chunk(out: &mut Vec<u8>, trace: &Trace, chunk: &Chunk, values: &Values<'_, '_>) {
    let star = chunk.len_arg.as_ref().map(|arg| values.number(Some(arg)) as i32);
    let spec = || Spec::parse(&chunk.text).map(|s| star.map_or(s.clone(), |n| s.with_star(n)));
    match chunk.kind {
        ChunkKind::Literal => out.extend_from_slice(chunk.text.as_bytes()),
        ChunkKind::Number { ls } => {
            let value = values.number(chunk.arg.as_ref());
            if let Some(spec) = spec() {
                let signed = matches!(spec.conversion, b'd' | b'i');
                spec.write_int(out, c_typed(value, ls, signed));
            }
        }
        ChunkKind::Pointer => match &chunk.arg {
            Some(Arg::Text(text)) => out.extend_from_slice(text),
            arg => {
                let value = values.number(arg.as_ref());
                match symbol_letter(&chunk.text) {
                    letter @ Some(b'f' | b'F' | b's' | b'S') => {
                        if !write_symbol(out, trace, value, letter) {
                            let _ = write!(out, "0x{value:x}");
                        }
                    }
                    _ => write_pointer(out, value),
                }
            }
        },
        ChunkKind::Str => {
            let Some(spec) = spec() else { return };
            match &chunk.arg {
                Some(Arg::Text(text)) => spec.write_str(out, c_string(text)),
                Some(Arg::Atom(atom)) => spec.write_str(out, atom.as_bytes()),
                Some(Arg::Field { name, .. }) => {
                    if let Values::Record(event) = values {
                        write_string_field(out, trace, event, name, &spec);
                    }
                }
                _ => {}
            }
        }
    }
}

/// A number converted to the C type printf receives: `ls` -2 char, -1 short, 0 int,
/// 1 long, 2 long long (64-bit host), signed or not as the conversion reads it.
fn c_typed(value: u64, ls: i8, signed: bool) -> i128 {
    match (ls, signed) {
        (-2, true) => i128::from(value as i8),
        (-2, false) => i128::from(value as u8),
        (-1, true) => i128::from(value as i16),
        (-1, false) => i128::from(value as u16),
        (0, true) => i128::from(value as i32),
        (0, false) => i128::from(value as u32),
        (_, true) => i128::from(value as i64),
        (_, false) => i128::from(value),
    }
}

/// `%s` of a field: a long-sized non-array field is a pointer to a string the kernel
/// keeps (shown from the trace's printk formats, or its address in hex); any other field
/// is text (a zero-size field runs to the end of the record).
fn write_string_field(out: &mut Vec<u8>, trace: &Trace, event: &Event<'_>, name: &str, spec: &Spec) {
    let Some(field) = event.format.and_then(|f| find_any_field(f, name)) else { return };
    let start = field.offset as usize;
    let long_size = u32::from(trace.metadata().header.user_long_size);
    if !field.type_name.contains('[') && field.size == long_size {
        let address = event.data.get(start..start + field.size as usize).and_then(|b| read_number(event, b));
        let address = address.unwrap_or(0);
        match trace.metadata().printk.get(address) {
            Some(text) => out.extend_from_slice(text.as_bytes()),
            None => {
                let _ = write!(out, "{address:x}");
            }
        }
        return;
    }
    let end = if field.size == 0 { event.data.len() } else { start + field.size as usize };
    let bytes = event.data.get(start..end.min(event.data.len())).unwrap_or(&[]);
    spec.write_str(out, c_string(bytes));
}

/// The symbol for `%ps`-like conversions: `name`, plus `+0xOFF` for `S`/`F`. `false`
/// when the address does not resolve (or the kallsyms are unreadable: callers that
/// print a report say so once, from [`Trace::kallsyms`]).
fn write_symbol(out: &mut Vec<u8>, trace: &Trace, address: u64, letter: Option<u8>) -> bool {
    let Some((symbol, offset)) = trace.kallsyms().ok().and_then(|k| k.lookup(address)) else { return false };
    out.extend_from_slice(symbol.name.as_bytes());
    if matches!(letter, Some(b'F' | b'S')) {
        let _ = write!(out, "+0x{offset:x}");
    }
    true
}

/// A field printed raw (not through its print format).
fn write_raw(out: &mut Vec<u8>, event: &Event<'_>, field: &Field, flags: &mut Flags) {
    let data = event.data;
    if flags.array {
        let (offset, len) = if flags.dynamic {
            dynamic_extent(event, field, flags)
        } else {
            (field.offset as usize, field.size as usize)
        };
        let bytes = bytes_from(event, offset, len);
        if flags.string && is_printable(&bytes[..len.min(bytes.len())]) {
            out.extend_from_slice(c_string(&bytes));
            return;
        }
        out.extend_from_slice(b"ARRAY[");
        for (i, b) in bytes.iter().take(len).enumerate() {
            let _ = write!(out, "{}{b:02x}", if i > 0 { ", " } else { "" });
        }
        out.push(b']');
        flags.string = false;
        return;
    }
    let start = field.offset as usize;
    let value = data.get(start..start + field.size as usize).and_then(|b| read_number(event, b)).unwrap_or(0);
    let _ = if flags.pointer {
        write!(out, "0x{value:x}")
    } else if flags.signed {
        match field.size {
            4 if flags.long => write!(out, "0x{:x}", value as u32),
            4 => write!(out, "{}", value as i32),
            2 => write!(out, "{:2}", value as i16),
            1 => write!(out, "{}", value as i8),
            _ => write!(out, "{}", value as i64),
        }
    } else if flags.long {
        write!(out, "0x{value:x}")
    } else {
        write!(out, "{value}")
    };
}

/// The record's bytes from `offset` on, at least `len` of them where the page has them:
/// libtraceevent reads an array's declared length even past the end of the record.
fn bytes_from<'a>(event: &Event<'a>, offset: usize, len: usize) -> std::borrow::Cow<'a, [u8]> {
    let data = event.data;
    let rest = data.get(offset.min(data.len())..).unwrap_or(&[]);
    if rest.len() >= len || event.following.is_empty() {
        return rest.into();
    }
    let skip = offset.saturating_sub(data.len());
    let more = event.following.get(skip.min(event.following.len())..).unwrap_or(&[]);
    let needed = len - rest.len();
    [rest, &more[..needed.min(more.len())]].concat().into()
}

/// Offset and length of a dynamic array's data, with libtraceevent's bounds checks.
fn dynamic_extent(event: &Event<'_>, field: &Field, flags: &Flags) -> (usize, usize) {
    let size = event.data.len() as u64;
    let (start, width) = (field.offset as u64, field.size as u64);
    if start + width > size {
        return (0, 0);
    }
    let bytes = &event.data[start as usize..(start + width) as usize];
    let word = read_number(event, bytes).unwrap_or(0);
    let offset = word & 0xffff;
    let len = if width == 2 { size.wrapping_sub(offset) } else { (word >> 16) & 0xffff };
    let mut at = if offset > size { 0 } else { offset };
    let len = if offset.wrapping_add(len) > size { 0 } else { len };
    if flags.relative {
        at += start + width;
    }
    (at as usize, len as usize)
}

/// Every byte up to the first NUL is printable or white space (C locale).
fn is_printable(bytes: &[u8]) -> bool {
    bytes.iter().take_while(|&&b| b != 0).all(|&b| (0x20..0x7f).contains(&b) || matches!(b, b'\t'..=b'\r'))
}

/// Lets the bprint formatter print its pieces.
pub(crate) fn write_chunks(out: &mut Vec<u8>, trace: &Trace, chunks: &[Chunk], values: &Values<'_, '_>) {
    for chunk in chunks {
        write_chunk(out, trace, chunk, values);
    }
}

/// Re-exported for the bprint formatter.
pub(crate) fn chunks_of(format: &str, args: Vec<Arg>) -> (Vec<Chunk>, bool) {
    parse_chunks(format, args)
}
