//! perf.data against its references: `dump` field by field against `perf script` on
//! every fixture in testdata/perf, per-task run time and switches against switch intervals
//! read from `perf script`'s text, and the same events written as trace.dat and as
//! perf.data (through tracedat's writer and the small perf.data writer below) giving the
//! same `stats`, `graph` bytes and `check` JSON.

use crate::common::{fresh_dir, schedlens, schedlens_bytes};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use tracedat::{Item, Trace};

fn perf_fixtures() -> Vec<PathBuf> {
    let files = crate::common::perf_fixtures();
    assert!(files.len() >= 4, "{files:?}");
    files
}

/// `perf script`'s text of a file, or `None` (with a message) where perf is missing.
fn perf_script(path: &Path) -> Option<String> {
    perf_script_with(path, &[])
}

fn perf_script_with(path: &Path, options: &[&str]) -> Option<String> {
    match Command::new("perf").arg("script").args(options).arg("-i").arg(path).output() {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => panic!("perf script -i {} failed: {}", path.display(), String::from_utf8_lossy(&out.stderr)),
        Err(error) => {
            eprintln!("skipped: perf is not installed ({error}); install linux-perf to compare with perf script");
            None
        }
    }
}

/// An event as both sides are compared: time in µs, CPU, event, pid and the fields' texts.
type KeyedEvent = (u64, u32, String, i64, Vec<(String, String)>);

/// One event as `perf script` prints it.
#[derive(Debug)]
struct ScriptEvent {
    tid: i64,
    cpu: u32,
    /// Microseconds, as perf prints them.
    time_us: u64,
    event: String,
    /// What follows `system:event: `.
    text: String,
}

/// Parses `  COMM  TID [CPU] SECS.USECS: SYSTEM:EVENT: FIELDS` (the comm may hold spaces).
fn parse_script_line(line: &str) -> Option<ScriptEvent> {
    let open = line.find(" [")?;
    let close = open + line[open..].find("] ")?;
    let tid = line[..open].split_whitespace().last()?.parse().ok()?;
    let cpu = line[open + 2..close].parse().ok()?;
    let rest = line[close + 2..].trim_start();
    let (time, rest) = rest.split_once(": ")?;
    let (secs, micros) = time.split_once('.')?;
    let time_us = secs.parse::<u64>().ok()? * 1_000_000 + micros.parse::<u64>().ok()?;
    let rest = rest.trim_start();
    let (event, text) = rest.split_once(": ").unwrap_or((rest.trim_end_matches(':'), ""));
    let event = event.rsplit(':').next()?.to_string();
    Some(ScriptEvent { tid, cpu, time_us, event, text: text.to_string() })
}

/// The value perf prints for `field` in `text`: from after `field=` to the next known
/// field's ` name=` (values may hold spaces), without perf's decorations (` [ns]`, ` ==>`).
fn script_value<'t>(text: &'t str, field: &str, next: Option<&str>) -> Option<&'t str> {
    let start = if text.starts_with(&format!("{field}=")) { 0 } else { text.find(&format!(" {field}="))? + 1 };
    let value = &text[start + field.len() + 1..];
    let end = next.and_then(|next| value.find(&format!(" {next}="))).unwrap_or(value.len());
    Some(value[..end].trim_end_matches(" [ns]").trim_end_matches(" ==>").trim_end())
}

/// `prev_state` as perf prints it through sched_switch's print format: the state bits
/// as letters joined by `|` (none: `R`), `+` for a preempted task (TASK_REPORT_MAX).
fn state_letters(state: i64) -> String {
    const LETTERS: [(i64, &str); 8] =
        [(0x1, "S"), (0x2, "D"), (0x4, "T"), (0x8, "t"), (0x10, "X"), (0x20, "Z"), (0x40, "P"), (0x80, "I")];
    let bits = state & 0xff;
    let mut text = match bits {
        0 => "R".to_string(),
        _ => LETTERS.iter().filter(|(bit, _)| bits & bit != 0).map(|(_, l)| *l).collect::<Vec<_>>().join("|"),
    };
    if state & 0x100 != 0 {
        text.push('+');
    }
    text
}

/// A JSON field value as perf prints it: the raw number, except where the print format
/// shows it otherwise (`prev_state` as letters, sched_process_exit's `group_dead` as
/// `true`/`false`).
fn as_perf_prints(event: &str, field: &str, value: &Value) -> String {
    match value {
        Value::Number(n) if event == "sched_switch" && field == "prev_state" => state_letters(n.as_i64().unwrap()),
        Value::Number(n) if event == "sched_process_exit" && field == "group_dead" => {
            (n.as_i64() != Some(0)).to_string()
        }
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A number perf printed (`%03d`, `%Lu`) back as the number.
fn normalized(printed: &str, ours: &str) -> String {
    match (printed.parse::<i64>(), ours.parse::<i64>()) {
        (Ok(n), Ok(_)) => n.to_string(),
        _ => printed.to_string(),
    }
}

#[test]
fn dump_shows_every_event_with_the_field_values_perf_script_prints() {
    for path in perf_fixtures() {
        let Some(script) = perf_script(&path) else { return };
        let theirs: Vec<ScriptEvent> = script.lines().filter_map(parse_script_line).collect();
        let dump = schedlens(&["dump", "--json", path.to_str().unwrap()]);
        let ours: Vec<Value> = dump
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v.get("event").is_some())
            .collect();
        assert_eq!(ours.len(), theirs.len(), "{}: events", path.display());
        // Both in time order; perf orders events of one microsecond its own way, so each
        // side is sorted by (time in µs, CPU, event, the whole field text).
        let mut ours_keyed: Vec<KeyedEvent> = ours
            .iter()
            .map(|v| {
                let event = v["event"].as_str().unwrap().to_string();
                let fields = v["fields"].as_object().unwrap();
                let values = fields.iter().map(|(k, value)| (k.clone(), as_perf_prints(&event, k, value))).collect();
                (
                    v["ts"].as_u64().unwrap() / 1000,
                    v["cpu"].as_u64().unwrap() as u32,
                    event,
                    v["pid"].as_i64().unwrap(),
                    values,
                )
            })
            .collect();
        let names: HashMap<String, Vec<String>> =
            ours_keyed.iter().map(|(_, _, e, _, f)| (e.clone(), f.iter().map(|(k, _)| k.clone()).collect())).collect();
        let mut theirs_keyed: Vec<KeyedEvent> = theirs
            .iter()
            .map(|t| {
                let fields = &names[&t.event];
                let mut values = Vec::new();
                for (index, field) in fields.iter().enumerate() {
                    // Fields perf's print format leaves out are not compared.
                    if let Some(value) = script_value(&t.text, field, fields.get(index + 1).map(String::as_str)) {
                        values.push((field.clone(), value.to_string()));
                    }
                }
                (t.time_us, t.cpu, t.event.clone(), t.tid, values)
            })
            .collect();
        // Fields perf's print format does not show are dropped from our side too; numbers
        // perf pads (`target_cpu=001`) are compared as numbers.
        let printed: HashMap<(String, String), bool> = theirs_keyed
            .iter()
            .flat_map(|(_, _, e, _, f)| f.iter().map(move |(k, _)| ((e.clone(), k.clone()), true)))
            .collect();
        for (_, _, event, _, values) in &mut ours_keyed {
            values.retain(|(k, _)| printed.contains_key(&(event.clone(), k.clone())));
        }
        let sample: HashMap<(String, String), String> = ours_keyed
            .iter()
            .flat_map(|(_, _, e, _, f)| f.iter().map(move |(k, v)| ((e.clone(), k.clone()), v.clone())))
            .collect();
        for (_, _, event, _, values) in &mut theirs_keyed {
            for (field, value) in values.iter_mut() {
                *value = normalized(value, &sample[&(event.clone(), field.clone())]);
            }
        }
        // perf's tid column is the sample's TID field, ours the record's common_pid: the
        // same, except on samples whose TID field the kernel left -1 (perf shows `:-1`).
        let unknown_tids: std::collections::HashSet<(u64, u32, String)> =
            theirs_keyed.iter().filter(|t| t.3 == -1).map(|t| (t.0, t.1, t.2.clone())).collect();
        for ours in &mut ours_keyed {
            if unknown_tids.contains(&(ours.0, ours.1, ours.2.clone())) {
                ours.3 = -1;
            }
        }
        ours_keyed.sort();
        theirs_keyed.sort();
        let compared: usize = ours_keyed.iter().map(|(_, _, _, _, f)| f.len()).sum();
        for (index, (a, b)) in ours_keyed.iter().zip(&theirs_keyed).enumerate() {
            assert_eq!(a, b, "{}: event {index} (ours, perf script's)", path.display());
        }
        eprintln!("{}: {} events, {compared} field values equal to perf script's", path.display(), ours_keyed.len());
        assert!(compared > ours_keyed.len() * 2, "{}: too few fields compared", path.display());
    }
}

/// Per pid, from `perf script`'s sched_switch lines alone: the run time of every
/// interval from a switch to the task to the next switch on that CPU, and how many
/// switches went to it; and the pids whose intervals the trace shows whole (switched in
/// and out on the CPU, every event between them from that pid: no switch the kernel
/// failed to record).
struct SwitchIntervals {
    runtime_ns: BTreeMap<i64, u64>,
    switches: BTreeMap<i64, u64>,
    whole: BTreeMap<i64, bool>,
}

fn switch_intervals(script: &str) -> SwitchIntervals {
    let mut result = SwitchIntervals { runtime_ns: BTreeMap::new(), switches: BTreeMap::new(), whole: BTreeMap::new() };
    // Per CPU: the task switched to, when, and whether everything since was its.
    let mut running: HashMap<u32, (i64, u64, bool)> = HashMap::new();
    let mut seen_first: HashMap<u32, bool> = HashMap::new();
    for event in script.lines().filter_map(parse_script_line) {
        let first = !seen_first.insert(event.cpu, true).unwrap_or(false);
        let time_us = event.time_us;
        // A loss (`--show-lost-events`): what ran there is no longer known whole.
        if event.event.starts_with("PERF_RECORD_LOST") {
            if let Some((task, _, _)) = running.remove(&event.cpu) {
                result.whole.insert(task, false);
            }
            continue;
        }
        if let Some(state) = running.get_mut(&event.cpu) {
            state.2 &= event.tid == state.0;
        }
        if event.event != "sched_switch" {
            if first {
                result.whole.insert(event.tid, false);
            }
            continue;
        }
        let pid = |name: &str| -> i64 {
            script_value(&event.text, name, None).unwrap().split(' ').next().unwrap().parse().unwrap()
        };
        let (prev, next) = (pid("prev_pid"), pid("next_pid"));
        match running.remove(&event.cpu) {
            Some((task, since, clean)) if task == prev => {
                *result.runtime_ns.entry(task).or_default() += (time_us - since) * 1000;
                if !clean {
                    result.whole.insert(task, false);
                }
            }
            _ => {
                result.whole.insert(prev, false);
            }
        }
        *result.switches.entry(next).or_default() += 1;
        running.insert(event.cpu, (next, time_us, true));
    }
    for (task, _, _) in running.into_values() {
        result.whole.insert(task, false);
    }
    result
}

#[test]
fn run_time_and_switches_per_task_equal_perf_scripts_switch_intervals() {
    for path in perf_fixtures() {
        let Some(script) = perf_script_with(&path, &["--show-lost-events"]) else { return };
        let reference = switch_intervals(&script);
        let stats: Value =
            serde_json::from_str(&schedlens(&["stats", "--by", "task", "--format", "json", path.to_str().unwrap()]))
                .unwrap();
        let mut runtime: BTreeMap<i64, u64> = BTreeMap::new();
        let mut switches: BTreeMap<i64, u64> = BTreeMap::new();
        for row in stats.as_array().expect("rows") {
            let pid = row["pid"].as_i64().unwrap();
            *runtime.entry(pid).or_default() += row["runtime_ns"].as_u64().unwrap();
            *switches.entry(pid).or_default() += row["switches"].as_u64().unwrap();
        }
        let mut compared = 0;
        for (pid, &count) in reference.switches.iter().filter(|&(&pid, _)| pid != 0) {
            assert_eq!(switches.get(pid).copied().unwrap_or(0), count, "{}: switches to pid {pid}", path.display());
        }
        for (pid, &ns) in &reference.runtime_ns {
            if *pid == 0 || !reference.whole.get(pid).copied().unwrap_or(true) {
                continue;
            }
            // perf prints microseconds: each interval's ends are within 1 µs.
            let ours = runtime.get(pid).copied().unwrap_or(0);
            let intervals = reference.switches[pid];
            assert!(
                ours.abs_diff(ns) <= 1000 * intervals,
                "{}: pid {pid} ran {ours} ns by schedlens, {ns} ns by perf script's switches ({intervals} intervals)",
                path.display()
            );
            compared += 1;
        }
        eprintln!("{}: switches of {} pids and run time of {compared} equal", path.display(), reference.switches.len());
        assert!(compared >= 10, "{}: only {compared} tasks compared", path.display());
    }
}

/// A minimal perf.data writer for the test: one tracepoint attribute (`sample_type`
/// IDENTIFIER|TID|TIME|CPU|PERIOD|RAW, as `perf sched record` writes them), the events
/// as samples in time order, losses as PERF_RECORD_LOST with a `sample_id` trailer, and
/// the TRACING_DATA and NRCPUS features.
mod perf_writer {
    const SAMPLE_TYPE: u64 = (1 << 16) | (1 << 1) | (1 << 2) | (1 << 7) | (1 << 8) | (1 << 10);
    const SAMPLE_ID_ALL: u64 = 1 << 18;
    const ID: u64 = 42;

    pub struct Writer {
        data: Vec<u8>,
    }

    fn u16s(out: &mut Vec<u8>, v: u16) {
        out.extend(v.to_le_bytes());
    }
    fn u32s(out: &mut Vec<u8>, v: u32) {
        out.extend(v.to_le_bytes());
    }
    fn u64s(out: &mut Vec<u8>, v: u64) {
        out.extend(v.to_le_bytes());
    }

    impl Writer {
        pub fn new() -> Writer {
            Writer { data: Vec::new() }
        }

        pub fn sample(&mut self, cpu: u32, time: u64, pid: i32, raw: &[u8]) {
            let raw_size = (raw.len() + 4).next_multiple_of(8) - 4;
            let size = 8 + 8 + 8 + 8 + 8 + 8 + 4 + raw_size;
            let out = &mut self.data;
            u32s(out, 9);
            u16s(out, 0);
            u16s(out, size as u16);
            u64s(out, ID);
            u32s(out, pid as u32);
            u32s(out, pid as u32);
            u64s(out, time);
            u32s(out, cpu);
            u32s(out, 0);
            u64s(out, 1);
            u32s(out, raw_size as u32);
            out.extend(raw);
            out.resize(out.len() + raw_size - raw.len(), 0);
        }

        pub fn lost(&mut self, cpu: u32, time: u64, count: u64) {
            let out = &mut self.data;
            u32s(out, 2);
            u16s(out, 0);
            u16s(out, 8 + 16 + 32);
            u64s(out, ID);
            u64s(out, count);
            u64s(out, 0);
            u64s(out, time);
            u32s(out, cpu);
            u32s(out, 0);
            u64s(out, ID);
        }

        /// The file: header, attribute and its ids, data, feature table and features.
        pub fn finish(self, tracing_data: &[u8], cpus: u32) -> Vec<u8> {
            let attr_size = 128u64;
            let attrs_at = 104u64;
            let ids_at = attrs_at + attr_size + 16;
            let data_at = ids_at + 8;
            let data_end = data_at + self.data.len() as u64;
            let mut nrcpus = Vec::new();
            u32s(&mut nrcpus, cpus);
            u32s(&mut nrcpus, cpus);
            let features_at = data_end + 32;
            let mut out = b"PERFILE2".to_vec();
            u64s(&mut out, 104);
            u64s(&mut out, attr_size + 16);
            u64s(&mut out, attrs_at);
            u64s(&mut out, attr_size + 16);
            u64s(&mut out, data_at);
            u64s(&mut out, self.data.len() as u64);
            u64s(&mut out, 0);
            u64s(&mut out, 0);
            u64s(&mut out, (1 << 1) | (1 << 7));
            u64s(&mut out, 0);
            u64s(&mut out, 0);
            u64s(&mut out, 0);
            // The attribute: tracepoint, size 128, config 0 (the raw data's common_type
            // says the event), period 1, sample_type, read_format 0, sample_id_all.
            u32s(&mut out, 2);
            u32s(&mut out, attr_size as u32);
            u64s(&mut out, 0);
            u64s(&mut out, 1);
            u64s(&mut out, SAMPLE_TYPE);
            u64s(&mut out, 0);
            u64s(&mut out, SAMPLE_ID_ALL);
            out.resize((attrs_at + attr_size) as usize, 0);
            u64s(&mut out, ids_at);
            u64s(&mut out, 8);
            u64s(&mut out, ID);
            out.extend(&self.data);
            u64s(&mut out, features_at);
            u64s(&mut out, tracing_data.len() as u64);
            u64s(&mut out, features_at + tracing_data.len() as u64);
            u64s(&mut out, nrcpus.len() as u64);
            out.extend(tracing_data);
            out.extend(&nrcpus);
            out
        }
    }
}

/// perf's tracing data for a trace whose formats are synth's: trace.dat's initial block
/// as perf writes it (version "0.6").
fn tracing_data(trace: &Trace) -> Vec<u8> {
    let meta = trace.metadata();
    let mut out = b"\x17\x08\x44tracing0.6\0".to_vec();
    out.push(0);
    out.push(8);
    out.extend(4096u32.to_le_bytes());
    for (name, text) in [("header_page", &meta.header_page), ("header_event", &meta.header_event)] {
        out.extend(name.as_bytes());
        out.push(0);
        out.extend((text.len() as u64).to_le_bytes());
        out.extend(text.as_bytes());
    }
    out.extend(0u32.to_le_bytes());
    // The formats in the order of their file names, as a directory listing would give them.
    let mut files: Vec<(&str, &str)> = model::kernel_formats::SCHED_FORMATS.to_vec();
    files.sort();
    out.extend(1u32.to_le_bytes());
    out.extend(b"sched\0");
    out.extend((files.len() as u32).to_le_bytes());
    for (_, text) in files {
        out.extend((text.len() as u64).to_le_bytes());
        out.extend(text.as_bytes());
    }
    out.extend(0u32.to_le_bytes());
    out.extend(0u32.to_le_bytes());
    let cmdlines: String = meta.cmdlines.iter().map(|(pid, comm)| format!("{pid} {comm}\n")).collect();
    out.extend((cmdlines.len() as u64).to_le_bytes());
    out.extend(cmdlines.as_bytes());
    out
}

/// A perf.data of the same events as a trace.dat.
fn as_perf_data(trace: &Trace) -> Vec<u8> {
    let mut writer = perf_writer::Writer::new();
    let mut events = trace.events();
    let mut pending_loss: HashMap<u32, u64> = HashMap::new();
    while let Some(item) = events.next() {
        match item {
            Item::Lost(lost) => *pending_loss.entry(lost.cpu.0).or_default() += lost.count.unwrap_or(0),
            Item::Event(event) => {
                if let Some(count) = pending_loss.remove(&event.cpu.0) {
                    writer.lost(event.cpu.0, event.ts.0, count);
                }
                writer.sample(event.cpu.0, event.ts.0, event.pid().0, event.data);
            }
        }
    }
    writer.finish(&tracing_data(trace), trace.cpu_count())
}

#[test]
fn the_same_events_as_trace_dat_and_perf_data_give_the_same_stats_graph_and_check() {
    let dir = fresh_dir("perf-same-events");
    std::fs::create_dir_all(&dir).unwrap();
    let dat = dir.join("same.dat");
    let dat_text = dat.to_str().unwrap();
    schedlens(&[
        "synth",
        "-o",
        dat_text,
        "--cpus",
        "4",
        "--seconds",
        "0.3",
        "--workload",
        "mixed",
        "--difficulty",
        "hard",
        "--no-affinity",
        "--inject",
        "work-conservation:3",
        "--inject",
        "wakeup-placement:3",
    ]);
    let trace = Trace::open(&dat).unwrap();
    let perf = dir.join("same.data");
    std::fs::write(&perf, as_perf_data(&trace)).unwrap();
    let perf_text = perf.to_str().unwrap();
    assert!(schedlens(&["info", perf_text]).contains("perf.data, file mode"));
    for by in ["command", "task", "cpu"] {
        let a = schedlens(&["stats", "--by", by, "--format", "json", dat_text]);
        let b = schedlens(&["stats", "--by", by, "--format", "json", perf_text]);
        assert_eq!(a, b, "stats --by {by}");
    }
    let graph = |input: &str, out: &Path| {
        schedlens(&["graph", input, "--title", "same", "--width", "600", "-o", out.to_str().unwrap()]);
        std::fs::read(out).unwrap()
    };
    for ending in ["svg", "png"] {
        let a = graph(dat_text, &dir.join(format!("dat.{ending}")));
        let b = graph(perf_text, &dir.join(format!("perf.{ending}")));
        assert!(a == b, "graph {ending} bytes differ");
    }
    let check = |input: &str| {
        let mut json: Value = serde_json::from_slice(&schedlens_bytes(&["check", "--format", "json", input])).unwrap();
        json["trace"] = Value::Null;
        json
    };
    let (a, b) = (check(dat_text), check(perf_text));
    assert!(a["incidents"].as_array().is_some_and(|i| !i.is_empty()), "the synthetic trace has incidents");
    assert_eq!(a, b, "check JSON");
}

#[test]
fn a_recording_without_sample_cpu_is_refused_naming_the_flag_and_how_to_record() {
    let path = perf_fixtures().into_iter().find(|p| p.ends_with("sched-hackbench.data")).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    // Every attribute's sample_type without PERF_SAMPLE_CPU.
    let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    let (attrs, entry, count) = (word(&bytes, 24), word(&bytes, 16), word(&bytes, 32) / word(&bytes, 16));
    for index in 0..count {
        let at = attrs + index * entry + 24;
        let sample_type = word(&bytes, at) as u64 & !(1 << 7);
        bytes[at..at + 8].copy_from_slice(&sample_type.to_le_bytes());
    }
    let dir = fresh_dir("perf-no-cpu");
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("no-cpu.data");
    std::fs::write(&copy, bytes).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlens")).arg("stats").arg(&copy).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("without PERF_SAMPLE_CPU") && stderr.contains("perf sched record"), "{stderr}");
}
