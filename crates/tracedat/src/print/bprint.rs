//! The text of `bprint` events (`trace_printk()` with arguments). The kernel stores the
//! address of the format string (found in the trace's printk formats) and the arguments
//! packed by its `vbin_printf`: numbers in 4-byte aligned slots of 4 bytes (`int`), the
//! long size (`l`, `z`, `p`) or 8 bytes (`ll`), strings inline up to their NUL. This
//! unpacks them as libtraceevent 1.7 does and prints the format with them, so the text is
//! the one `trace-cmd report` shows after `ip: `.

use crate::print::event_text::{Values, chunks_of, write_chunks};
use crate::print::printfmt::{Arg, ChunkKind};
use crate::read::event::Event;
use crate::read::trace::Trace;

/// Writes the formatted message of a `bprint` event (without the `function: ` that
/// trace-cmd puts in front). `false` if the event is not a bprint event, or if
/// libtraceevent could not format it either (it then prints the raw fields instead).
pub fn bprint_message(trace: &Trace, event: &Event<'_>, out: &mut Vec<u8>) -> bool {
    let Some(format) = event.format.filter(|f| f.system == "ftrace" && f.name == "bprint") else { return false };
    let field = |name: &str| format.fields.iter().find(|f| f.name == name);
    let (Some(fmt_field), Some(ip_field), Some(buf_field)) = (field("fmt"), field("ip"), field("buf")) else {
        return false;
    };
    let read = |f: &crate::read::format::Field| {
        let start = f.offset as usize;
        event.data.get(start..start + f.size as usize).and_then(|b| number(event, b)).unwrap_or(0)
    };
    let address = read(fmt_field);
    let full = match trace.metadata().printk.get(address) {
        Some(text) => format!("%ps: {text}"),
        None => format!("%ps: (NO FORMAT FOUND at {address:x})\n"),
    };
    let long_size = trace.metadata().header.user_long_size as usize;
    let mut args = vec![Arg::Atom((read(ip_field) as i64).to_string())];
    unpack(full.as_bytes().get(5..).unwrap_or(&[]), event, buf_field.offset as usize, long_size, &mut args);
    let (chunks, failed) = chunks_of(&full, args);
    if failed {
        return false;
    }
    // The first piece is the `%ps` of the ip, the second starts with `: `.
    let message_start = chunks.iter().position(|c| c.kind == ChunkKind::Pointer).map_or(0, |i| i + 1);
    let start = out.len();
    write_chunks(out, trace, &chunks[message_start..], &Values::Unpacked(event));
    if out[start..].starts_with(b": ") {
        out.drain(start..start + 2);
    }
    true
}

fn number(event: &Event<'_>, bytes: &[u8]) -> Option<u64> {
    match bytes.len() {
        1 | 2 | 4 | 8 => event.endian.read_uint(bytes, bytes.len()),
        _ => Some(0),
    }
}

/// libtraceevent's reading of the packed arguments (`make_bprint_args`): for each
/// conversion of `format` an argument from the record bytes at `at`. Its gaps are kept:
/// `h` length modifiers and `%c` take no argument.
fn unpack(format: &[u8], event: &Event<'_>, mut at: usize, long_size: usize, args: &mut Vec<Arg>) {
    let data = event.data;
    let mut i = 0;
    while at < data.len() && i < format.len() {
        if format[i] == b'%' {
            let mut ls = 0usize;
            loop {
                i += 1;
                let Some(&c) = format.get(i) else { break };
                let size = match c {
                    b'l' => {
                        ls += 1;
                        continue;
                    }
                    b'L' => {
                        ls = 2;
                        continue;
                    }
                    b'0'..=b'9' | b'.' | b'#' => continue,
                    b'z' | b'Z' => {
                        ls = 1;
                        continue;
                    }
                    b'p' => {
                        ls = 1;
                        if format.get(i + 1).is_some_and(u8::is_ascii_alphanumeric) {
                            i += 1;
                            let plain = match format[i] {
                                b's' | b'S' | b'x' => true,
                                b'f' | b'F' => format.get(i + 1) != Some(&b'w'),
                                _ => false,
                            };
                            if !plain && data.get(at).is_some_and(|&b| (0x20..0x7f).contains(&b)) {
                                at = push_string(data, at, args);
                                break;
                            }
                        }
                        slot_size(ls, long_size)
                    }
                    b'd' | b'u' | b'i' | b'x' | b'X' | b'o' => slot_size(ls, long_size),
                    b'*' => 4,
                    b's' => {
                        at = push_string(data, at, args);
                        break;
                    }
                    _ => break,
                };
                at = (at + 3) & !3;
                let value = data.get(at..at + size).and_then(|b| number(event, b)).unwrap_or(0);
                at += size;
                args.push(Arg::Atom((value as i64).to_string()));
                if c != b'*' {
                    break;
                }
            }
        }
        i += 1;
    }
}

fn slot_size(ls: usize, long_size: usize) -> usize {
    match ls {
        0 => 4,
        1 => long_size,
        2 => 8,
        other => other,
    }
}

/// A string argument: the bytes up to the NUL; returns the position after it.
fn push_string(data: &[u8], at: usize, args: &mut Vec<Arg>) -> usize {
    let rest = &data[at.min(data.len())..];
    let len = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    args.push(Arg::Text(rest[..len].to_vec()));
    at + len + 1
}
