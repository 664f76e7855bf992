//! Parses the text of `trace-cmd report -R -t` into events and lost-event markers.
//!
//! This is the reference side of the decoder tests, so it reads trace-cmd's text (not the
//! trace.dat bytes) and shares nothing with schedlens's decoder.
//!
//! The shape of the text (trace-cmd 3.1.6, libtraceevent 1.7):
//!
//! ```text
//! cpus=2
//!               sh-3916  [001]  5434.562190762: sched_waking:          comm=migration/1 pid=21 prio=0 target_cpu=001
//!  C1 CompilerThre-166659 [026]  5434.562190800: sched_switch:          prev_comm=...
//! CPU:0 [1204 EVENTS DROPPED]
//! CPU:1 [EVENTS DROPPED]
//! ```
//!
//! - the first line is `cpus=N`;
//! - an event line is `%16s-%-5d [%03d]` (comm, pid, cpu), the timestamp and `:`, then
//!   ` NAME: ` padded to 20 name characters, then the raw payload ` field=value ...`. With `-t`
//!   the timestamp is `secs.nanoseconds`; clocks that do not count nanoseconds (`counter`,
//!   `x86-tsc`) print a plain integer right-aligned in 12 columns, with no space after `]` when
//!   it is wider (`[001]13698395047988:`);
//! - the comm is right-aligned in 16 columns and may contain spaces, dashes and colons
//!   (`memfd:sealed-91-3001 [001]`), so the parser anchors on `-PID [CPU]`;
//! - a file with instances (`record -B NAME`) prefixes every line after the header with the
//!   buffer name right-aligned and a colon (`inst: `), or with blanks of the same width for the
//!   top buffer; lost-event lines get the prefix too (`inst: CPU:0 [EVENTS DROPPED]`);
//! - `CPU:N [K EVENTS DROPPED]` / `CPU:N [EVENTS DROPPED]` (count unknown) come right before
//!   the first event after a loss on that CPU;
//! - a payload may contain newlines (ftrace `print` buffers; trace-cmd drops one trailing
//!   newline): lines that are not event or lost lines continue the previous event.

use std::fmt;

/// One event as trace-cmd printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefEvent {
    /// Instance (`record -B`) the event comes from; `None` for the top buffer.
    pub buffer: Option<String>,
    /// The comm trace-cmd shows for the pid (from the saved cmdlines, not the event).
    pub comm: String,
    /// The event's common_pid.
    pub pid: i32,
    pub cpu: u32,
    /// Timestamp in nanoseconds; for clocks printed as plain integers (`counter`,
    /// `x86-tsc`), the raw clock value.
    pub ts_ns: u64,
    /// Event name without system (`sched_switch`).
    pub event: String,
    /// The raw payload, `name=value name=value ...` (leading blanks removed; continuation
    /// lines joined with `\n`).
    pub payload: String,
}

/// One item of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Event(RefEvent),
    /// Events were lost on `cpu` of `buffer` before the next event of that CPU; `count` is
    /// `None` when the kernel did not store how many.
    Lost {
        buffer: Option<String>,
        cpu: u32,
        count: Option<u64>,
    },
}

/// A parsed report.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// The `cpus=N` header.
    pub cpus: u32,
    /// Events and lost-event markers in output order.
    pub lines: Vec<Line>,
    /// How many text lines were joined into payloads as continuations.
    pub continuation_lines: usize,
}

impl Report {
    /// All events, in output order.
    pub fn events(&self) -> impl Iterator<Item = &RefEvent> {
        self.lines.iter().filter_map(|l| match l {
            Line::Event(e) => Some(e),
            Line::Lost { .. } => None,
        })
    }

    /// Lost-event markers as (buffer, cpu, count).
    pub fn lost(&self) -> impl Iterator<Item = (Option<&str>, u32, Option<u64>)> {
        self.lines.iter().filter_map(|l| match l {
            Line::Lost { buffer, cpu, count } => Some((buffer.as_deref(), *cpu, *count)),
            Line::Event(_) => None,
        })
    }

    /// Whether any buffer lost events.
    pub fn has_lost_events(&self) -> bool {
        self.lost().next().is_some()
    }
}

/// A line of the report that is neither header, event, lost marker nor continuation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number.
    pub line_no: usize,
    pub line: String,
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {:?}", self.line_no, self.reason, self.line)
    }
}

impl std::error::Error for ParseError {}

/// Parses the whole output of `trace-cmd report -R -t`.
pub fn parse_report(text: &str) -> Result<Report, ParseError> {
    let mut report = Report::default();
    let mut lines = text.lines().enumerate();
    let err = |i: usize, line: &str, reason: &str| ParseError {
        line_no: i + 1,
        line: line.to_string(),
        reason: reason.to_string(),
    };
    match lines.next() {
        Some((i, line)) => {
            let n = line.strip_prefix("cpus=").ok_or_else(|| err(i, line, "expected `cpus=N`"))?;
            report.cpus = n.parse().map_err(|_| err(i, line, "bad cpu count"))?;
        }
        None => return Err(err(0, "", "empty report")),
    }
    for (i, line) in lines {
        if let Some(mut item) = parse_line(line) {
            inherit_buffer_after_loss(report.lines.last(), &mut item);
            report.lines.push(item);
            continue;
        }
        match report.lines.last_mut() {
            Some(Line::Event(e)) => {
                e.payload.push('\n');
                e.payload.push_str(line);
                report.continuation_lines += 1;
            }
            _ => return Err(err(i, line, "neither an event nor a lost-event line")),
        }
    }
    Ok(report)
}

/// trace-cmd prints a loss notice and the event after it as one piece of text with one
/// buffer column, so an instance's event right after its loss notice has a blank column.
fn inherit_buffer_after_loss(previous: Option<&Line>, item: &mut Line) {
    if let (Some(Line::Lost { buffer: Some(name), .. }), Line::Event(e)) = (previous, item) {
        if e.buffer.is_none() {
            e.buffer = Some(name.clone());
        }
    }
}

/// Parses one event or lost-event line; `None` for anything else (a continuation).
pub fn parse_line(line: &str) -> Option<Line> {
    parse_lost(line).or_else(|| parse_event(line).map(Line::Event))
}

/// The buffer-name column: blank (top buffer) or `NAME: ` right-aligned.
/// `Err(())` when `prefix` is not a buffer column.
fn parse_prefix(prefix: &str) -> Result<Option<String>, ()> {
    if prefix.trim().is_empty() {
        return Ok(None);
    }
    let name = prefix.trim_start().strip_suffix(": ").ok_or(())?;
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(());
    }
    Ok(Some(name.to_string()))
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `[PREFIX]CPU:N [K EVENTS DROPPED]` or `[PREFIX]CPU:N [EVENTS DROPPED]`.
fn parse_lost(line: &str) -> Option<Line> {
    let at = line.find("CPU:")?;
    let buffer = parse_prefix(&line[..at]).ok()?;
    let rest = line[at + 4..].strip_suffix("EVENTS DROPPED]")?;
    let (cpu, count) = rest.split_once(" [")?;
    if !all_digits(cpu) {
        return None;
    }
    let count = match count.strip_suffix(' ') {
        None if count.is_empty() => None,
        Some(c) if all_digits(c) => Some(c.parse().ok()?),
        _ => return None,
    };
    Some(Line::Lost { buffer, cpu: cpu.parse().ok()?, count })
}

/// Width of the comm column (`%16s`).
const COMM_WIDTH: usize = 16;

fn parse_event(line: &str) -> Option<RefEvent> {
    let b = line.as_bytes();
    // Try each `[`: the first one that completes the whole header pattern is the CPU column.
    for (open, _) in line.match_indices('[') {
        if let Some(ev) = parse_event_at(line, b, open) {
            return Some(ev);
        }
    }
    None
}

fn parse_event_at(line: &str, b: &[u8], open: usize) -> Option<RefEvent> {
    // `[CPU]`
    let close = open + 1 + b[open + 1..].iter().position(|c| !c.is_ascii_digit())?;
    if close == open + 1 || b[close] != b']' {
        return None;
    }
    let cpu: u32 = line[open + 1..close].parse().ok()?;
    // `-PID` then at least one blank before `[`.
    let mut k = open;
    while k > 0 && b[k - 1] == b' ' {
        k -= 1;
    }
    if k == open {
        return None;
    }
    let pid_end = k;
    while k > 0 && b[k - 1].is_ascii_digit() {
        k -= 1;
    }
    if k == pid_end || k == 0 || b[k - 1] != b'-' {
        return None;
    }
    let pid: i32 = line[k..pid_end].parse().ok()?;
    let head = &line[..k - 1];
    // Timestamp: the last word before the first `:` after `]` (latency columns, if any,
    // would come before it).
    let after = &line[close + 1..];
    let colon = after.find(':')?;
    let ts_ns = parse_ts(after[..colon].split_whitespace().last()?)?;
    // ` NAME: ` then padding and the payload.
    let rest = after[colon + 1..].strip_prefix(' ')?;
    let name_end = rest.find(':')?;
    let event = &rest[..name_end];
    if event.is_empty() || event.contains(char::is_whitespace) {
        return None;
    }
    let payload = rest[name_end + 1..].trim_start_matches(' ');
    // The comm column is 16 bytes wide; anything before it is the buffer column.
    if head.len() < COMM_WIDTH || !head.is_char_boundary(head.len() - COMM_WIDTH) {
        return None;
    }
    let (prefix, comm) = head.split_at(head.len() - COMM_WIDTH);
    let buffer = parse_prefix(prefix).ok()?;
    Some(RefEvent {
        buffer,
        comm: comm.trim_start().to_string(),
        pid,
        cpu,
        ts_ns,
        event: event.to_string(),
        payload: payload.to_string(),
    })
}

/// `SECS.FRACTION` (fraction of up to 9 digits) to nanoseconds, or a plain integer as is.
fn parse_ts(s: &str) -> Option<u64> {
    match s.split_once('.') {
        None if all_digits(s) => s.parse().ok(),
        None => None,
        Some((secs, frac)) => {
            if !all_digits(secs) || !all_digits(frac) || frac.len() > 9 {
                return None;
            }
            let scale = 10u64.pow(9 - frac.len() as u32);
            let secs: u64 = secs.parse().ok()?;
            let frac: u64 = frac.parse().ok()?;
            secs.checked_mul(1_000_000_000)?.checked_add(frac * scale)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(line: &str) -> RefEvent {
        match parse_line(line) {
            Some(Line::Event(e)) => e,
            other => panic!("not an event: {other:?} for {line:?}"),
        }
    }

    #[test]
    fn plain_event_line() {
        let e = ev("              sh-3916  [001]  5434.562190762: sched_waking:          \
             comm=migration/1 pid=21 prio=0 target_cpu=001");
        assert_eq!(e.buffer, None);
        assert_eq!(e.comm, "sh");
        assert_eq!(e.pid, 3916);
        assert_eq!(e.cpu, 1);
        assert_eq!(e.ts_ns, 5_434_562_190_762);
        assert_eq!(e.event, "sched_waking");
        assert_eq!(e.payload, "comm=migration/1 pid=21 prio=0 target_cpu=001");
    }

    #[test]
    fn comm_with_spaces_dashes_colons_and_long_pid() {
        let e = ev(" C1 CompilerThre-166659 [026]  5434.000000001: sched_switch:          \
             prev_comm=C1 CompilerThre prev_pid=166659");
        assert_eq!((e.comm.as_str(), e.pid, e.cpu), ("C1 CompilerThre", 166659, 26));
        assert_eq!(e.ts_ns, 5_434_000_000_001);
        let e = ev(" memfd:sealed-91-3001  [001]  5802.781508184: sched_switch:          \
             prev_comm=memfd:sealed-91 prev_pid=3001");
        assert_eq!((e.comm.as_str(), e.pid), ("memfd:sealed-91", 3001));
        let e = ev("          <idle>-0     [001]  5700.718055517: sched_wakeup:          \
             comm=barrier pid=9301 prio=120 target_cpu=001");
        assert_eq!((e.comm.as_str(), e.pid), ("<idle>", 0));
        let e = ev(" kworker/u8:2-ev-77    [000]  1.000000000: sched_waking:          x=1");
        assert_eq!((e.comm.as_str(), e.pid), ("kworker/u8:2-ev", 77));
    }

    #[test]
    fn integer_timestamps() {
        // x86-tsc: wider than 12 columns, no blank after `]`.
        let e = ev("              sh-7014  [001]13698395047988: sched_prepare_exec:    \
             interp=/usr/bin/sh filename=/usr/bin/sh pid=7014 comm=trace-cmd");
        assert_eq!(e.ts_ns, 13_698_395_047_988);
        assert_eq!(e.event, "sched_prepare_exec");
        // counter
        let e = ev("              sh-7108  [001]           2: sched_process_exec:    \
             filename=/usr/bin/sh pid=7108 old_pid=7108");
        assert_eq!(e.ts_ns, 2);
    }

    #[test]
    fn short_fraction_is_scaled() {
        assert_eq!(parse_ts("1.5"), Some(1_500_000_000));
        assert_eq!(parse_ts("12.000001"), Some(12_000_001_000));
        assert_eq!(parse_ts("1.0000000001"), None);
        assert_eq!(parse_ts("x"), None);
    }

    #[test]
    fn long_event_name_has_no_padding() {
        let e = ev("          <idle>-0     [000]   246.6: sched_wake_idle_without_ipi: cpu=1");
        assert_eq!(e.event, "sched_wake_idle_without_ipi");
        assert_eq!(e.payload, "cpu=1");
    }

    #[test]
    fn instance_lines() {
        let e = ev("inst:        trace-cmd-6661  [000]  5553.271889053: sched_switch:          \
             prev_comm=trace-cmd prev_pid=6661");
        assert_eq!(e.buffer.as_deref(), Some("inst"));
        assert_eq!((e.comm.as_str(), e.pid), ("trace-cmd", 6661));
        // Top buffer lines of a file with instances are indented by the column's width.
        let e = ev("                    sh-6663  [001]  5553.271689969: sched_prepare_exec:    \
             interp=/usr/bin/sh");
        assert_eq!(e.buffer, None);
        assert_eq!(e.comm, "sh");
        // Names are right-aligned when instances' names differ in length.
        let e = ev("  a:               sh-1     [000]  1.000000000: sched_switch:          x=1");
        assert_eq!(e.buffer.as_deref(), Some("a"));
    }

    #[test]
    fn lost_lines() {
        assert_eq!(
            parse_line("CPU:1 [1227 EVENTS DROPPED]"),
            Some(Line::Lost { buffer: None, cpu: 1, count: Some(1227) })
        );
        assert_eq!(parse_line("CPU:0 [EVENTS DROPPED]"), Some(Line::Lost { buffer: None, cpu: 0, count: None }));
        assert_eq!(parse_line("      CPU:0 [EVENTS DROPPED]"), Some(Line::Lost { buffer: None, cpu: 0, count: None }));
        assert_eq!(
            parse_line("inst: CPU:0 [2634 EVENTS DROPPED]"),
            Some(Line::Lost { buffer: Some("inst".into()), cpu: 0, count: Some(2634) })
        );
        assert_eq!(parse_line("CPU:0 [x EVENTS DROPPED]"), None);
        assert_eq!(parse_line("CPU:0 [1 EVENTS DROPPED] and more"), None);
    }

    #[test]
    fn not_event_lines() {
        for l in [
            "",
            "lines",
            "x-1 [000] 1.5: fake: y", // comm column too narrow: a payload continuation
            "              sh-3916  [001]  5434.5x: sched_waking: a=1",
            "              sh-3916  [001]  5434.5 sched_waking: a=1",
            "              sh-3916[001]  5434.5: sched_waking: a=1",
            "              sh-3916  [001]  5434.5: sched waking: a=1",
            "abc             sh-3916  [001]  5434.5: sched_waking: a=1", // not a buffer column
        ] {
            assert_eq!(parse_line(l), None, "{l:?}");
        }
    }

    #[test]
    fn report_with_continuations_and_lost() {
        let text = [
            "cpus=2",
            "CPU:1 [EVENTS DROPPED]",
            "              sh-11028 [001]  5802.643735361: print:                 ip=0xffffffff814aa001 buf=two",
            "lines",
            "              sh-11028 [001]  5802.643761691: print:                 ip=0xffffffff814aa001 buf=a",
            "",
            "b",
            "",
            "              sh-11028 [001]  5802.643779333: print:                 ip=0xffffffff814aa001 buf=z",
            "x-1 [000] 1.5: fake: y",
            "              sh-11028 [001]  5802.643788230: sched_process_exit:    comm=sh pid=11028 prio=120 group_dead=1",
            "",
        ]
        .join("\n");
        let r = parse_report(&text).unwrap();
        assert_eq!(r.cpus, 2);
        assert_eq!(r.continuation_lines, 5);
        let ev: Vec<_> = r.events().collect();
        assert_eq!(ev.len(), 4);
        assert_eq!(ev[0].payload, "ip=0xffffffff814aa001 buf=two\nlines");
        assert_eq!(ev[1].payload, "ip=0xffffffff814aa001 buf=a\n\nb\n");
        assert_eq!(ev[2].payload, "ip=0xffffffff814aa001 buf=z\nx-1 [000] 1.5: fake: y");
        assert_eq!(ev[3].event, "sched_process_exit");
        assert_eq!(r.lost().collect::<Vec<_>>(), vec![(None, 1, None)]);
        assert!(r.has_lost_events());
    }

    #[test]
    fn report_errors() {
        assert!(parse_report("").is_err());
        assert!(parse_report("hello\n").is_err());
        let e = parse_report("cpus=2\nstray text\n").unwrap_err();
        assert_eq!(e.line_no, 2);
        let r = parse_report("cpus=4\n").unwrap();
        assert_eq!((r.cpus, r.lines.len()), (4, 0));
    }
}
