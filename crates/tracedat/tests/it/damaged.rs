//! The reader on damaged input: files cut at every section boundary and at many seeded
//! points, with bytes flipped at seeded offsets, with a wrong magic, version or
//! compression, unknown options and events without format. Whatever the damage, opening
//! either fails with a message naming the input, the part of the file and the byte offset,
//! or the events stream yields what is intact (for a cut file: each CPU's events up to the
//! cut) and `damage()` says what was lost; never a panic, a hang or a large allocation.

use crate::common::{Rng, Scenario, generate};
use refcheck::fixture;
use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::Duration;
use tracedat::compress::Codec;
use tracedat::{Endian, FileFormat, Item, Selection, Trace, TraceWriter};

/// How long one damaged input may take to open and read.
const CASE_TIMEOUT: Duration = Duration::from_secs(20);
/// Peak memory of this test process: damage must not make the reader allocate much.
const MAX_PEAK_RSS_KB: u64 = 1 << 20;

/// Small traces of every shape: writer output and real recordings.
fn inputs() -> Vec<(String, Vec<u8>)> {
    let scenario = Scenario::full(42, 1500);
    let mut inputs: Vec<(String, Vec<u8>)> = [
        FileFormat::v6(Endian::Little, 8, 4096),
        FileFormat::v7(Codec::None, Endian::Big, 4, 4096),
        FileFormat::v7(Codec::Zstd, Endian::Little, 8, 4096),
        FileFormat::v7(Codec::Zlib, Endian::Big, 8, 1024),
    ]
    .into_iter()
    .map(|format| (crate::common::label(&format), generate(format, &scenario).0))
    .collect();
    for name in ["hackbench-v6.dat", "instance-lost-v7zstd.dat", "hackbench-v7none.dat", "scenario-pinned-v7zstd.dat"] {
        inputs.push((name.to_string(), std::fs::read(fixture(name)).unwrap()));
    }
    inputs
}

/// Per (buffer name, CPU): the events' timestamps and payloads, in stream order.
type PerCpu = BTreeMap<(String, u32), Vec<(u64, Vec<u8>)>>;

/// What reading a (damaged) input gave.
enum Outcome {
    Refused(String),
    Read { events: PerCpu, damage: Vec<String> },
}

/// Opens and drains `bytes` on a worker thread, failing the test on a hang or panic.
fn read(name: &str, bytes: Vec<u8>) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let name = name.to_string();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(read_now(&name, bytes));
    });
    match rx.recv_timeout(CASE_TIMEOUT) {
        Ok(outcome) => {
            worker.join().unwrap();
            outcome
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("reading took over {CASE_TIMEOUT:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => std::panic::resume_unwind(worker.join().unwrap_err()),
    }
}

fn read_now(name: &str, bytes: Vec<u8>) -> Outcome {
    let trace = match Trace::from_bytes(name, bytes) {
        Ok(trace) => trace,
        Err(e) => return Outcome::Refused(e.to_string()),
    };
    let _ = (trace.cpu_count(), trace.clock(), trace.metadata().notes.len());
    let buffer_names: Vec<String> = trace.buffers().iter().map(|b| b.name.clone()).collect();
    let mut events = PerCpu::new();
    // Alternate between reading on this thread and through prefetch workers.
    let workers = (name.len() % 2 == 0).then_some(0);
    let mut stream = trace.events_of(&Selection { workers, ..Selection::all() });
    while let Some(item) = stream.next() {
        if let Item::Event(e) = item {
            for (field, value) in e.fields() {
                let _ = (&field.name, value.map(|v| (v.as_i64(), v.as_str())));
            }
            let key = (buffer_names[e.buffer as usize].clone(), e.cpu.0);
            events.entry(key).or_default().push((e.ts.0, e.data.to_vec()));
        }
    }
    let damage = stream.damage().iter().map(|e| e.to_string()).collect();
    Outcome::Read { events, damage }
}

/// A refusal names the input, a part of the file and a byte offset: inside the input,
/// or past its end where the file said a part starts and it was cut off.
fn assert_clear_error(message: &str, name: &str, len: usize) {
    let rest = message
        .strip_prefix(&format!("{name}: "))
        .unwrap_or_else(|| panic!("error does not start with the input name: {message}"));
    let (_, after) = rest.split_once(" at byte ").unwrap_or_else(|| panic!("error names no byte offset: {message}"));
    let offset: u64 = after.split(':').next().unwrap().parse().unwrap();
    assert!(offset <= len as u64 || message.contains("file ends early"), "offset beyond the input ({len}): {message}");
}

fn original(name: &str, bytes: &[u8]) -> PerCpu {
    match read(name, bytes.to_vec()) {
        Outcome::Read { events, damage } => {
            assert!(damage.is_empty(), "{name}: {damage:?}");
            events
        }
        Outcome::Refused(e) => panic!("{e}"),
    }
}

/// Where the file's parts begin and end: version 7 section headers (walked one after the
/// other, as trace-cmd does), version 6 markers, and every CPU's data.
fn boundaries(bytes: &[u8]) -> Vec<usize> {
    let trace = Trace::from_bytes("boundaries", bytes.to_vec()).unwrap();
    let meta = trace.metadata();
    let mut points = vec![0, 3, 10, 12, 13, 14, 18];
    for cpu in trace.buffers().iter().flat_map(|b| &b.cpus) {
        points.extend([cpu.offset, cpu.offset + cpu.size].map(|o| o as usize));
    }
    if meta.header.version == 7 {
        let endian = meta.header.endian;
        let mut at =
            meta.options.sections.iter().map(|s| s.1).min().unwrap_or(meta.header.first_options_offset) as usize;
        while at + 16 <= bytes.len() {
            points.push(at);
            let size = endian.u64(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
            at += 16 + size;
        }
    } else {
        for marker in [&b"header_page\0"[..], b"header_event\0", b"options  \0", b"flyrecord\0"] {
            let found = bytes.windows(marker.len()).enumerate().filter(|(_, w)| *w == marker).map(|(i, _)| i);
            points.extend(found.take(4));
        }
    }
    let mut around: Vec<usize> =
        points.into_iter().flat_map(|p| [p.saturating_sub(1), p, p + 1]).filter(|&p| p < bytes.len()).collect();
    around.sort_unstable();
    around.dedup();
    around
}

/// A cut file gives, for every CPU, a prefix of its events, and reports damage when
/// events are missing.
fn check_cut(name: &str, bytes: &[u8], whole: &PerCpu, cut: usize) {
    let label = format!("{name} cut at {cut}");
    match read(&label, bytes[..cut].to_vec()) {
        Outcome::Refused(message) => assert_clear_error(&message, &label, cut),
        Outcome::Read { events, damage } => {
            let mut complete = true;
            for (key, all) in whole {
                let got = events.get(key).map_or(&[][..], Vec::as_slice);
                assert!(all.starts_with(got), "{label}: {key:?} is not a prefix of the original");
                complete &= got.len() == all.len();
            }
            assert!(events.keys().all(|k| whole.contains_key(k)), "{label}: new CPUs");
            assert!(complete || !damage.is_empty(), "{label}: events lost silently");
            for message in &damage {
                assert!(message.starts_with(&label), "{message}");
                assert!(message.contains(" data") && message.contains(" at byte "));
            }
        }
    }
}

#[test]
fn cut_at_every_section_boundary() {
    for (name, bytes) in inputs() {
        let whole = original(&name, &bytes);
        for cut in boundaries(&bytes) {
            check_cut(&name, &bytes, &whole, cut);
        }
    }
    assert_memory_stayed_small();
}

#[test]
fn cut_at_seeded_points() {
    let mut rng = Rng(0x5eed);
    for (name, bytes) in inputs() {
        let whole = original(&name, &bytes);
        for _ in 0..150 {
            let cut = rng.below(bytes.len() as u64) as usize;
            check_cut(&name, &bytes, &whole, cut);
        }
    }
    assert_memory_stayed_small();
}

#[test]
fn flipped_bytes_at_seeded_offsets() {
    let mut rng = Rng(0xf11b);
    for (name, bytes) in inputs() {
        // Half the flips land in the metadata, where every byte matters.
        let metadata_end = Trace::from_bytes("", bytes.clone())
            .unwrap()
            .buffers()
            .iter()
            .flat_map(|b| &b.cpus)
            .map(|c| c.offset as usize)
            .min()
            .unwrap_or(bytes.len());
        for case in 0..300 {
            let mut damaged = bytes.clone();
            let limit = if case % 2 == 0 { metadata_end } else { bytes.len() };
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(limit as u64) as usize;
                damaged[at] ^= 1 + rng.below(255) as u8;
            }
            let label = format!("{name} flip {case}");
            let len = damaged.len();
            match read(&label, damaged) {
                Outcome::Refused(message) => assert_clear_error(&message, &label, len),
                Outcome::Read { damage, .. } => {
                    for message in damage {
                        assert!(message.starts_with(&label), "{message}");
                        assert!(message.contains(" at byte "), "{message}");
                    }
                }
            }
        }
    }
    assert_memory_stayed_small();
}

/// A small valid v7 file to damage by hand.
fn small_v7(codec: Codec) -> Vec<u8> {
    generate(FileFormat::v7(codec, Endian::Little, 8, 4096), &Scenario::full(1, 50)).0
}

fn refusal(name: &str, bytes: Vec<u8>) -> String {
    match read(name, bytes) {
        Outcome::Refused(message) => message,
        Outcome::Read { .. } => panic!("{name} was read"),
    }
}

#[test]
fn wrong_magic_version_and_compression_are_named() {
    let good = small_v7(Codec::Zstd);
    let mut bad = good.clone();
    bad[1] = b'X';
    assert_eq!(refusal("magic", bad), "magic: file header at byte 0: not a trace-cmd file (bad magic)");
    let mut bad = good.clone();
    bad[10] = b'8';
    assert_eq!(
        refusal("version", bad),
        "version: file header at byte 12: unsupported file version \"8\" (supported: 6 and 7)"
    );
    let at = good.windows(5).position(|w| w == b"zstd\0").unwrap();
    let mut bad = good.clone();
    bad[at..at + 4].copy_from_slice(b"lz4x");
    assert_eq!(refusal("codec", bad), format!("codec: file header at byte {at}: unknown compression \"lz4x\""));
    assert!(refusal("empty", Vec::new()).starts_with("empty: file header at byte 0"));
    let mut bad = good;
    bad[12] = 7;
    assert_eq!(refusal("endian", bad), "endian: file header at byte 13: bad endianness flag 7 (expected 0 or 1)");
}

#[test]
fn errors_name_the_file_on_disk() {
    let dir = crate::common::scratch_dir("damaged-open");
    let path = dir.join("cut.dat");
    let bytes = small_v7(Codec::None);
    std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    let message = Trace::open(&path).unwrap_err().to_string();
    assert!(message.starts_with(&format!("{}: ", path.display())) && message.contains(" at byte "), "{message}");
    let missing = dir.join("missing.dat");
    let message = Trace::open(&missing).unwrap_err().to_string();
    assert!(message.starts_with(&missing.display().to_string()), "{message}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unknown_options_are_kept_and_unknown_events_counted() {
    for format in [FileFormat::v6(Endian::Big, 4, 4096), FileFormat::v7(Codec::Zstd, Endian::Little, 8, 4096)] {
        let mut writer = TraceWriter::new(format, 1).unwrap();
        writer.add_option(999, vec![1, 2, 3]).unwrap();
        writer.add_option(0xffff, Vec::new()).unwrap();
        let mut sink = writer.cpu_sink(TraceWriter::TOP, 0).unwrap();
        sink.add_event(10, &[0x12, 0x34, 0, 0, 5, 0, 0, 0]).unwrap();
        writer.close_sink(sink).unwrap();
        let mut bytes = Vec::new();
        writer.write_to(&mut bytes).unwrap();
        let trace = Trace::from_bytes("unknown", bytes).unwrap();
        assert_eq!(trace.metadata().options.unknown, [(999, vec![1, 2, 3]), (0xffff, Vec::new())]);
        let mut events = trace.events();
        let Some(Item::Event(e)) = events.next() else { panic!("no event") };
        assert!(e.format.is_none() && e.name().is_empty() && e.fields().count() == 0);
        assert!(events.next().is_none());
        assert_eq!(events.unknown_events(), 1);
    }
}

#[test]
fn cpu_numbers_at_the_edge() {
    let bytes = small_v7(Codec::None);
    let trace = Trace::from_bytes("edge", bytes.clone()).unwrap();
    let cpu = &trace.buffers()[0].cpus[0];
    // The BUFFER option lists each CPU as {u32 cpu, u64 offset, u64 size}.
    let mut entry = cpu.offset.to_le_bytes().to_vec();
    entry.extend(cpu.size.to_le_bytes());
    let at = bytes.windows(16).position(|w| w == entry).unwrap() - 4;
    let mut patched = bytes;
    patched[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let trace = Trace::from_bytes("edge", patched).unwrap();
    assert_eq!(trace.cpu_count(), u32::MAX);
    let cpus: Vec<u32> = crate::common::read_all(&trace)
        .iter()
        .filter_map(|item| match item {
            crate::common::Expected::Event { cpu, .. } => Some(*cpu),
            _ => None,
        })
        .collect();
    assert!(cpus.contains(&u32::MAX));
}

fn assert_memory_stayed_small() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse::<u64>().ok());
    if let Some(peak) = peak {
        assert!(peak < MAX_PEAK_RSS_KB, "peak memory {peak} kB");
    }
}

/// Opening a trace steps over its kallsyms text: damage there leaves every event
/// readable and is reported when symbols are first asked for, naming the section.
#[test]
fn a_damaged_kallsyms_text_is_reported_when_symbols_are_asked_for() {
    let format = FileFormat::v7(Codec::None, Endian::Little, 8, 4096);
    let (mut bytes, expected) = generate(format, &Scenario::full(7, 300));
    let text = b"ffffffff81000000 T _stext";
    let at = bytes.windows(text.len()).position(|w| w == text).expect("an uncompressed kallsyms section");
    // The text's size, just before it: far more than the section holds.
    bytes[at - 4..at].copy_from_slice(&u32::MAX.to_le_bytes());
    let trace = Trace::from_bytes("damaged-kallsyms", bytes).expect("the trace opens");
    crate::common::assert_same_items(&crate::common::read_all(&trace), &expected, "events past a damaged kallsyms");
    let error = trace.kallsyms().expect_err("the kallsyms are unreadable").to_string();
    assert!(error.contains("damaged-kallsyms") && error.contains("kallsyms"), "{error}");
    let again = trace.kallsyms().expect_err("still unreadable").to_string();
    assert_eq!(again, error, "the same error, read once");
}
