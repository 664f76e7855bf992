//! Shared by the writer and damage tests: event formats as a kernel would describe them
//! (for either long size, optionally without fields newer kernels dropped), a seeded
//! generator that writes a trace with the writer and says what a reader must find in it,
//! and a parser for the reference decoder's output, `trace-cmd report -R -t`.

#![allow(dead_code)] // each test file uses its own part of this module

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tracedat::compress::Codec;
use tracedat::format::{EventFormat, parse_event_format};
use tracedat::pagebuilder::PageBuilder;
use tracedat::ringbuf::PageLayout;
use tracedat::{BufferId, CpuSink, Endian, FileFormat, Item, PayloadBuilder, TimestampMode, Trace, TraceWriter, Value};

/// splitmix64: small, seeded, the same everywhere.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Every file version and compression, both byte orders, both long sizes.
pub fn all_formats(page_size: u32) -> Vec<FileFormat> {
    let mut formats = Vec::new();
    for endian in [Endian::Little, Endian::Big] {
        for long_size in [8, 4] {
            formats.push(FileFormat::v6(endian, long_size, page_size));
            for codec in [Codec::None, Codec::Zstd, Codec::Zlib] {
                formats.push(FileFormat::v7(codec, endian, long_size, page_size));
            }
        }
    }
    formats
}

pub fn label(format: &FileFormat) -> String {
    format!("{:?} {:?} long {} page {}", format.version, format.endian, format.long_size, format.page_size)
}

pub const SWITCH_ID: u32 = 316;
pub const WAKEUP_ID: u32 = 318;
pub const EXEC_ID: u32 = 310;
pub const BLOB_ID: u32 = 900;
/// An id no format describes.
pub const UNKNOWN_ID: u16 = 999;

const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
    \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
    \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
    \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

/// sched_switch: `prev_state` is a `long`, 4 bytes on 32-bit kernels.
pub fn sched_switch(long_size: u8) -> String {
    let l = long_size as u32;
    format!(
        "name: sched_switch\nID: {SWITCH_ID}\nformat:\n{COMMON}\
         \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
         \tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
         \tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
         \tfield:long prev_state;\toffset:32;\tsize:{l};\tsigned:1;\n\
         \tfield:char next_comm[16];\toffset:{};\tsize:16;\tsigned:0;\n\
         \tfield:pid_t next_pid;\toffset:{};\tsize:4;\tsigned:1;\n\
         \tfield:int next_prio;\toffset:{};\tsize:4;\tsigned:1;\n\n\
         print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%ld ==> \
         next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, \
         REC->prev_state, REC->next_comm, REC->next_pid, REC->next_prio\n",
        32 + l,
        48 + l,
        52 + l
    )
}

/// sched_wakeup, with the `success` field of kernels before 4.15 or without it.
pub fn sched_wakeup(with_success: bool) -> String {
    let (success, target) =
        if with_success { ("\tfield:int success;\toffset:32;\tsize:4;\tsigned:1;\n", 36) } else { ("", 32) };
    format!(
        "name: sched_wakeup\nID: {WAKEUP_ID}\nformat:\n{COMMON}\
         \tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
         \tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\
         \tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n{success}\
         \tfield:int target_cpu;\toffset:{target};\tsize:4;\tsigned:1;\n\n\
         print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu\n"
    )
}

pub fn sched_process_exec() -> String {
    format!(
        "name: sched_process_exec\nID: {EXEC_ID}\nformat:\n{COMMON}\
         \tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n\
         \tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n\
         \tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n\n\
         print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, REC->old_pid\n"
    )
}

/// An event of every integer size with a payload too long for `type_len`.
pub fn blob() -> String {
    format!(
        "name: blob\nID: {BLOB_ID}\nformat:\n{COMMON}\
         \tfield:char label[8];\toffset:8;\tsize:8;\tsigned:0;\n\
         \tfield:u8 small;\toffset:16;\tsize:1;\tsigned:0;\n\
         \tfield:s16 medium;\toffset:18;\tsize:2;\tsigned:1;\n\
         \tfield:u32 count;\toffset:20;\tsize:4;\tsigned:0;\n\
         \tfield:s64 big;\toffset:24;\tsize:8;\tsigned:1;\n\
         \tfield:u64 words[12];\toffset:32;\tsize:96;\tsigned:0;\n\n\
         print fmt: \"label=%s small=%u medium=%d count=%u big=%lld\", \
         REC->label, REC->small, REC->medium, REC->count, REC->big\n"
    )
}

/// An ftrace format, for the ftrace section (no events use it).
pub fn ftrace_function(long_size: u8) -> String {
    format!(
        "name: function\nID: 1\nformat:\n{COMMON}\
         \tfield:unsigned long ip;\toffset:8;\tsize:{long_size};\tsigned:0;\n\
         \tfield:unsigned long parent_ip;\toffset:{};\tsize:{long_size};\tsigned:0;\n\n\
         print fmt: \" %ps <-- %ps\", (void *)REC->ip, (void *)REC->parent_ip\n",
        8 + long_size
    )
}

/// (system, format text) of every format the generated traces use.
pub fn format_files(long_size: u8, with_success: bool) -> Vec<(&'static str, String)> {
    vec![
        ("ftrace", ftrace_function(long_size)),
        ("sched", sched_switch(long_size)),
        ("sched", sched_wakeup(with_success)),
        ("sched", sched_process_exec()),
        ("demo", blob()),
    ]
}

/// What a reader must find, in the order a merged stream yields it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    Event { buffer: u16, cpu: u32, ts: u64, payload: Vec<u8> },
    Lost { buffer: u16, cpu: u32, count: Option<u64> },
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub seed: u64,
    pub events: usize,
    pub cpu_count: u32,
    /// Add an instance "inst" (CPUs 0 and 1, its CPU 1 written as raw pages).
    pub instance: bool,
    pub with_success: bool,
    /// Events of an id without format.
    pub unknown_events: bool,
    pub losses: bool,
    /// Nanoseconds added by an OFFSET option.
    pub offset: Option<i64>,
    /// Microseconds added by a DATE option.
    pub date_us: Option<u64>,
    /// The instance's page size when not the file's (version 7).
    pub instance_page_size: Option<u32>,
}

impl Scenario {
    pub fn full(seed: u64, events: usize) -> Scenario {
        Scenario {
            seed,
            events,
            cpu_count: 4,
            instance: true,
            with_success: true,
            unknown_events: true,
            losses: true,
            offset: None,
            date_us: None,
            instance_page_size: None,
        }
    }
}

pub const COMMS: &[&str] =
    &["hackbench", "swapper/1", "kworker/0:1H", "sh", "a name with sp", "fifteen-chars-x", "longer-than-sixteen-chars"];
pub const INSTANCE: &str = "inst";
/// The kernel's data on the top buffer's CPU 3 uses absolute timestamps; CPU 2 has none.
const ABSOLUTE_CPU: u32 = 3;
const EMPTY_CPU: u32 = 2;

/// A CPU's data: through a sink's page builder, or as raw pages built here (as a
/// recorder copying `trace_pipe_raw` would hand them over).
struct Target {
    sink: CpuSink,
    raw: Option<PageBuilder>,
    page: Vec<u8>,
}

impl Target {
    fn add(&mut self, ts: u64, payload: &[u8]) {
        let Some(builder) = &mut self.raw else {
            return self.sink.add_event(ts, payload).unwrap();
        };
        if !builder.add(ts, payload).unwrap() {
            self.flush_raw();
            let builder = self.raw.as_mut().unwrap();
            assert!(builder.add(ts, payload).unwrap());
        }
    }

    fn mark_lost(&mut self, count: Option<u64>) {
        match &mut self.raw {
            None => self.sink.mark_lost(count),
            Some(builder) => builder.mark_lost(count),
        }
    }

    fn flush_raw(&mut self) {
        let builder = self.raw.as_mut().unwrap();
        self.page.clear();
        builder.finish_into(&mut self.page);
        self.sink.add_page(&self.page).unwrap();
    }

    fn close(mut self, writer: &mut TraceWriter) {
        if self.raw.as_ref().is_some_and(|b| !b.is_empty()) {
            self.flush_raw();
        }
        writer.close_sink(self.sink).unwrap();
    }
}

/// Writes a generated trace; returns its bytes and what a reader must find.
pub fn generate(format: FileFormat, scenario: &Scenario) -> (Vec<u8>, Vec<Expected>) {
    let long = format.long_size;
    let mut writer = TraceWriter::new(format, scenario.cpu_count).unwrap();
    let files = format_files(long, scenario.with_success);
    for (system, text) in &files {
        writer.add_event_format(system, text);
    }
    writer.set_kallsyms("ffffffff81000000 T _stext\nffffffff81000100 t do_thing [mod]\n");
    writer.set_printk_formats("0xffffffff82000000 : \"hello %d\\n\"\n");
    writer.set_uname("Linux synth 6.1.0 x86_64");
    writer.set_recorder_version("tracedat-tests");
    writer.set_trace_clock_file("[local] global counter uptime perf mono\n");
    for cpu in 0..scenario.cpu_count {
        writer.add_cpustat(&format!("CPU: {cpu}\nentries: 0\n"));
    }
    writer.add_option(0x7e57, b"schedlens context".to_vec()).unwrap();
    if let Some(offset) = scenario.offset {
        writer.add_offset(&offset.to_string());
    }
    if let Some(us) = scenario.date_us {
        writer.set_date(&format!("{us:#x}"));
    }
    for (pid, comm) in COMMS.iter().enumerate() {
        writer.add_cmdline(100 + pid as i32, comm);
    }
    let parsed: Vec<EventFormat> =
        files.iter().map(|(system, text)| parse_event_format(system, text, long).unwrap()).collect();
    let by_id = |id: u32| parsed.iter().find(|f| f.id == id).unwrap();

    let mut targets: BTreeMap<(u16, u32), Target> = BTreeMap::new();
    let top_cpus: Vec<u32> = (0..scenario.cpu_count).filter(|&c| c != EMPTY_CPU).collect();
    for cpu in 0..scenario.cpu_count {
        let mut sink = writer.cpu_sink(TraceWriter::TOP, cpu).unwrap();
        if cpu == ABSOLUTE_CPU {
            sink.set_timestamp_mode(TimestampMode::Absolute);
        }
        let target = Target { sink, raw: None, page: Vec::new() };
        targets.insert((0, cpu), target);
    }
    if scenario.instance {
        let page_size = scenario.instance_page_size.unwrap_or(format.page_size);
        let inst: BufferId = writer.add_instance(INSTANCE, "mono", page_size).unwrap();
        for cpu in [0, 1] {
            let raw = (cpu == 1).then(|| {
                let layout = PageLayout::standard(format.endian, long as usize);
                PageBuilder::new(layout, page_size).unwrap()
            });
            let target = Target { sink: writer.cpu_sink(inst, cpu).unwrap(), raw, page: Vec::new() };
            targets.insert((1, cpu), target);
        }
    }

    let mut rng = Rng(scenario.seed);
    let mut ts: u64 = 5_000_000_000_123;
    let mut expected = Vec::new();
    let offset = scenario.offset.unwrap_or(0).wrapping_add(scenario.date_us.unwrap_or(0) as i64 * 1000);
    for index in 0..scenario.events {
        ts += 1 + rng.below(5000);
        if rng.below(200) == 0 {
            ts += (1 << 27) + rng.below(1 << 30);
        }
        if index == scenario.events / 2 {
            ts += 1 << 40;
        }
        let buffer = if scenario.instance && rng.below(5) == 0 { 1 } else { 0 };
        let cpu = if buffer == 1 { rng.below(2) as u32 } else { *rng.pick(&top_cpus) };
        let target = targets.get_mut(&(buffer, cpu)).unwrap();
        let lost = scenario.losses && rng.below(150) == 0;
        if lost {
            let count = (rng.below(2) == 0).then(|| 1 + rng.below(10_000));
            target.mark_lost(count);
            expected.push(Expected::Lost { buffer, cpu, count });
        }
        // trace-cmd (3.1.6 and later) stops reading the whole file at a loss followed by
        // an event without format, so that pair is left out.
        let unknown = scenario.unknown_events && !lost;
        let payload = random_payload(&mut rng, &by_id, unknown, scenario.with_success, format.endian);
        target.add(ts, &payload);
        expected.push(Expected::Event { buffer, cpu, ts: ts.wrapping_add(offset as u64), payload });
    }
    for (_, target) in targets {
        target.close(&mut writer);
    }
    let mut bytes = Vec::new();
    writer.write_to(&mut bytes).unwrap();
    (bytes, expected)
}

fn random_payload<'f>(
    rng: &mut Rng,
    by_id: &impl Fn(u32) -> &'f EventFormat,
    unknown: bool,
    with_success: bool,
    endian: Endian,
) -> Vec<u8> {
    let pid = |rng: &mut Rng| 100 + rng.below(COMMS.len() as u64) as i32;
    let comm = |pid: i32| COMMS[(pid - 100) as usize];
    let kind = rng.below(20);
    if unknown && kind == 0 {
        let mut payload: Vec<u8> = (0..24).map(|_| rng.next() as u8).collect();
        payload[..2].copy_from_slice(&match endian {
            Endian::Little => UNKNOWN_ID.to_le_bytes(),
            Endian::Big => UNKNOWN_ID.to_be_bytes(),
        });
        return payload;
    }
    let (id, common_pid) = match kind {
        0..=8 => (SWITCH_ID, pid(rng)),
        9..=14 => (WAKEUP_ID, pid(rng)),
        15..=17 => (EXEC_ID, pid(rng)),
        _ => (BLOB_ID, pid(rng)),
    };
    let format = by_id(id);
    let mut b = PayloadBuilder::new(format, endian);
    b.set_int("common_pid", common_pid).unwrap();
    b.set_int("common_flags", rng.below(256) as i64).unwrap();
    match id {
        SWITCH_ID => {
            let next = pid(rng);
            let state = *rng.pick(&[0i64, 1, 2, 0x100, 0x402]);
            b.set_str("prev_comm", comm(common_pid)).unwrap();
            b.set_int("prev_pid", common_pid).unwrap();
            b.set_int("prev_prio", 120).unwrap();
            b.set_int("prev_state", state).unwrap();
            b.set_str("next_comm", comm(next)).unwrap();
            b.set_int("next_pid", next).unwrap();
            b.set_int("next_prio", rng.below(140) as i64).unwrap();
        }
        WAKEUP_ID => {
            let woken = pid(rng);
            b.set_str("comm", comm(woken)).unwrap();
            b.set_int("pid", woken).unwrap();
            b.set_int("prio", 120).unwrap();
            if with_success {
                b.set_int("success", 1).unwrap();
            }
            b.set_int("target_cpu", rng.below(4) as i64).unwrap();
        }
        EXEC_ID => {
            let len = 1 + rng.below(60) as usize;
            let name: String =
                (0..len).map(|_| *rng.pick(b"abcdefghijklmnopqrstuvwxyz/._-0123456789") as char).collect();
            b.set_str("filename", format!("/{name}")).unwrap();
            b.set_int("pid", common_pid).unwrap();
            b.set_int("old_pid", common_pid).unwrap();
        }
        _ => {
            b.set_str("label", "blob").unwrap();
            b.set_int("small", rng.below(256) as i64).unwrap();
            b.set_int("medium", rng.below(65536) as i64 - 32768).unwrap();
            b.set_int("count", rng.next() as u32).unwrap();
            b.set_int("big", rng.next() as i64).unwrap();
            let words: Vec<u8> = (0..96).map(|_| rng.next() as u8).collect();
            b.set_bytes("words", &words).unwrap();
        }
    }
    b.bytes().to_vec()
}

/// Reads the whole merged stream with the reader, in the shape of [`Expected`].
pub fn read_all(trace: &Trace) -> Vec<Expected> {
    let mut out = Vec::new();
    let mut events = trace.events();
    while let Some(item) = events.next() {
        out.push(match item {
            Item::Event(e) => Expected::Event { buffer: e.buffer, cpu: e.cpu.0, ts: e.ts.0, payload: e.data.to_vec() },
            Item::Lost(l) => Expected::Lost { buffer: l.buffer, cpu: l.cpu.0, count: l.count },
        });
    }
    assert!(events.damage().is_empty(), "{:?}", events.damage());
    out
}

/// Compares with records padded to 4 bytes, as the ring buffer stores them.
pub fn assert_same_items(got: &[Expected], expected: &[Expected], what: &str) {
    for (index, (g, e)) in got.iter().zip(expected).enumerate() {
        let same = match (g, e) {
            (
                Expected::Event { buffer, cpu, ts, payload },
                Expected::Event { buffer: b2, cpu: c2, ts: t2, payload: p2 },
            ) => {
                (buffer, cpu, ts) == (b2, c2, t2)
                    && payload.len() == p2.len().max(1).next_multiple_of(4)
                    && payload.starts_with(p2)
                    && payload[p2.len()..].iter().all(|&b| b == 0)
            }
            _ => g == e,
        };
        assert!(same, "{what}: item {index} differs:\n got {g:?}\nwant {e:?}");
    }
    assert_eq!(got.len(), expected.len(), "{what}: item counts differ");
}

// ---------------------------------------------------------------------------------------
// The reference decoder

/// One line of `trace-cmd report -R -t`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefLine {
    Event {
        buffer: Option<String>,
        pid: i32,
        cpu: u32,
        ts: u64,
        name: String,
        payload: String,
    },
    Lost {
        buffer: Option<String>,
        cpu: u32,
        count: Option<u64>,
    },
    /// An event whose id has no format: trace-cmd prints neither CPU nor time.
    Unknown {
        buffer: Option<String>,
    },
}

/// trace-cmd (`$TRACE_CMD` if set) in the C locale: trace-cmd 3.1.6 reads an empty
/// TRACECLOCK option from an unfilled `malloc(0)` buffer, so on such files its timestamps
/// change with the heap the locale leaves behind (see `refcheck::trace_cmd_command`).
pub fn trace_cmd() -> Command {
    let program = std::env::var("TRACE_CMD").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "trace-cmd".into());
    let mut command = Command::new(program);
    command.env("LC_ALL", "C");
    command
}

/// The compressions `trace-cmd list -c` names.
pub fn trace_cmd_codecs() -> Vec<String> {
    let output = trace_cmd().args(["list", "-c"]).output().expect("trace-cmd runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.trim().split(',').next())
        .filter(|name| !name.is_empty() && !name.contains(' '))
        .map(str::to_string)
        .collect()
}

/// Runs `trace-cmd report -R -t` on `path`: (stdout, stderr, success). Fails the test
/// when trace-cmd is missing, saying how to get it.
pub fn run_report(path: &Path) -> (String, String, bool) {
    let output = trace_cmd().args(["report", "-R", "-t"]).arg(path).output().unwrap_or_else(|e| {
        panic!("cannot run trace-cmd ({e}): install it (apt-get install trace-cmd) or set TRACE_CMD")
    });
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.success(),
    )
}

/// Parses the report; `instances` are the instance names whose lines carry a prefix.
pub fn parse_report(text: &str, instances: &[&str]) -> Vec<RefLine> {
    let mut lines = Vec::new();
    // The event after a loss notice is printed without its buffer prefix.
    let mut carried: Option<Option<String>> = None;
    for line in text.lines().skip_while(|l| !l.starts_with("cpus=")).skip(1) {
        let (buffer, rest) = strip_buffer(line, instances);
        if let Some(lost) = parse_lost(rest.trim_start(), buffer.clone()) {
            carried = Some(buffer);
            lines.push(lost);
            continue;
        }
        let buffer = carried.take().unwrap_or(buffer);
        if rest.trim_start().starts_with("[UNKNOWN EVENT]") {
            lines.push(RefLine::Unknown { buffer });
            continue;
        }
        let event = parse_event(rest, buffer).unwrap_or_else(|| panic!("unexpected trace-cmd line: {line:?}"));
        lines.push(event);
    }
    lines
}

fn strip_buffer<'l>(line: &'l str, instances: &[&str]) -> (Option<String>, &'l str) {
    let trimmed = line.trim_start();
    for name in instances {
        if let Some(rest) = trimmed.strip_prefix(name).and_then(|r| r.strip_prefix(": ")) {
            return (Some(name.to_string()), rest);
        }
    }
    (None, line)
}

fn parse_lost(text: &str, buffer: Option<String>) -> Option<RefLine> {
    let rest = text.strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let inner = rest.strip_prefix('[')?.strip_suffix("EVENTS DROPPED]")?;
    Some(RefLine::Lost { buffer, cpu: cpu.parse().ok()?, count: inner.trim().parse().ok() })
}

fn parse_event(text: &str, buffer: Option<String>) -> Option<RefLine> {
    // `COMM-PID [CPU] SECS.NANOS: NAME: PAYLOAD`; comms may hold spaces and dashes.
    let open = text.match_indices(" [").map(|(i, _)| i + 1).find(|&i| {
        let after = &text[i + 1..];
        after.find(']').is_some_and(|end| end > 0 && after[..end].bytes().all(|b| b.is_ascii_digit()))
    })?;
    let close = open + text[open..].find(']')?;
    let cpu = text[open + 1..close].parse().ok()?;
    let before = text[..open].trim_end();
    let pid = before[before.rfind('-')? + 1..].parse().ok()?;
    let (stamp, rest) = text[close + 1..].trim_start().split_once(": ")?;
    let (secs, nanos) = stamp.split_once('.')?;
    let ts = secs.parse::<u64>().ok()? * 1_000_000_000 + nanos.parse::<u64>().ok()?;
    let (name, payload) = rest.split_once(':')?;
    Some(RefLine::Event {
        buffer,
        pid,
        cpu,
        ts,
        name: name.trim().to_string(),
        payload: payload.trim_start().to_string(),
    })
}

/// Splits `name=value name=value ...` by the field names the format lists, in order.
pub fn split_payload<'p>(payload: &'p str, names: &[&str]) -> Option<Vec<&'p str>> {
    let (first, others) = names.split_first()?;
    let mut rest = payload.strip_prefix(first)?.strip_prefix('=')?;
    let mut values = Vec::new();
    for name in others {
        let pattern = format!(" {name}=");
        let at = rest.find(&pattern)?;
        values.push(&rest[..at]);
        rest = &rest[at + pattern.len()..];
    }
    values.push(rest);
    Some(values)
}

/// Whether trace-cmd's text for a field shows the value the reader decoded: numbers in
/// decimal or hex (compared at the field's size), text as is, arrays as `ARRAY[..]`.
pub fn value_matches(ours: Option<Value<'_>>, theirs: &str, size: u32) -> bool {
    let theirs = theirs.trim();
    let mask = if size >= 8 { u64::MAX } else { (1u64 << (8 * size)) - 1 };
    let number = |v: u64| {
        let parsed = match theirs.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => theirs.parse::<i128>().ok().map(|n| n as u64),
        };
        parsed.is_some_and(|p| p & mask == v & mask)
    };
    match ours {
        Some(Value::Signed(v)) => number(v as u64),
        Some(Value::Unsigned(v)) => number(v),
        Some(Value::Str(s)) => String::from_utf8_lossy(s) == theirs,
        Some(Value::Array { bytes, .. }) | Some(Value::Bytes(bytes)) => {
            let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
            theirs == format!("ARRAY[{}]", hex.join(", "))
        }
        None => false,
    }
}

/// A scratch directory for one test, emptied first.
pub fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tracedat-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
