//! Writer → reader round trips for every file version × compression × byte order × long
//! size: events of every record kind (short, long, time-extended, absolute timestamps),
//! losses with and without counts, several CPUs, CPUs without data, an instance written
//! partly from raw pages, events without format, and the metadata and options.

use crate::common::{Expected, Scenario, all_formats, assert_same_items, generate, label, read_all};
use tracedat::compress::Codec;
use tracedat::{Endian, FileFormat, FileVersion, Trace, TraceWriter, Value};

#[test]
fn every_combination_round_trips() {
    for page_size in [4096, 1024] {
        for format in all_formats(page_size) {
            let scenario = Scenario::full(7 + page_size as u64, 3000);
            let (bytes, expected) = generate(format, &scenario);
            let what = label(&format);
            let trace = Trace::from_bytes(what.clone(), bytes).unwrap();
            assert_same_items(&read_all(&trace), &expected, &what);
            check_metadata(&trace, &format, &what);
        }
    }
}

fn check_metadata(trace: &Trace, format: &FileFormat, what: &str) {
    let meta = trace.metadata();
    let header = &meta.header;
    let (version, codec) = match format.version {
        FileVersion::V6 => (6, Codec::None),
        FileVersion::V7 { compression } => (7, compression),
    };
    assert_eq!((header.version, header.endian, header.compression), (version, format.endian, codec), "{what}");
    assert_eq!(meta.kernel_long_size, format.long_size, "{what}");
    assert_eq!(trace.cpu_count(), 4, "{what}");
    assert_eq!(trace.clock(), Some("local"), "{what}");
    let buffers: Vec<_> = trace
        .buffers()
        .iter()
        .map(|b| {
            let cpus: Vec<u32> = b.cpus.iter().map(|c| c.cpu).collect();
            (b.name.as_str(), b.page_size, cpus)
        })
        .collect();
    assert_eq!(buffers, [("", format.page_size, vec![0, 1, 3]), ("inst", format.page_size, vec![0, 1])], "{what}");
    if version == 7 {
        assert_eq!(trace.buffers()[1].clock.as_deref(), Some("mono"), "{what}");
    }
    let options = &meta.options;
    assert_eq!(options.uname.as_deref(), Some("Linux synth 6.1.0 x86_64"), "{what}");
    assert_eq!(options.recorder_version.as_deref(), Some("tracedat-tests"));
    assert_eq!(options.cpustats.len(), 4, "{what}");
    assert_eq!(options.unknown, [(0x7e57, b"schedlens context".to_vec())], "{what}");
    assert_eq!(meta.formats.len(), 5, "{what}");
    assert!(meta.formats.rejected.is_empty(), "{what}");
    assert_eq!(meta.cmdlines.get(100), Some("hackbench"), "{what}");
    assert_eq!(trace.kallsyms().unwrap().symbols().len(), 2, "{what}");
    assert_eq!(meta.printk.get(0xffffffff82000000), Some("hello %d"));
}

#[test]
fn decoded_fields_are_the_ones_set() {
    let format = FileFormat::v7(Codec::Zstd, Endian::Big, 4, 4096);
    let (bytes, _) = generate(format, &Scenario::full(3, 500));
    let trace = Trace::from_bytes("fields", bytes).unwrap();
    let mut events = trace.events();
    let mut seen = [0usize; 4];
    while let Some(tracedat::Item::Event(e)) = events.next() {
        match e.name() {
            "sched_switch" => {
                seen[0] += 1;
                assert_eq!(e.field("prev_pid").and_then(|v| v.as_i64()), Some(e.pid().0 as i64));
                assert_eq!(e.format.unwrap().field("prev_state").unwrap().size, 4);
                assert!(e.field("next_comm").unwrap().as_str().unwrap().len() <= 15);
            }
            "sched_wakeup" => {
                seen[1] += 1;
                assert_eq!(e.field("success"), Some(Value::Signed(1)));
            }
            "sched_process_exec" => {
                seen[2] += 1;
                let name = e.field("filename").unwrap().as_str().unwrap().into_owned();
                assert!(name.starts_with('/'), "{name}");
            }
            "blob" => {
                seen[3] += 1;
                assert_eq!(e.field("label"), Some(Value::Str(b"blob")));
                assert_eq!(e.field("words").unwrap().elements().count(), 12);
            }
            "" => assert_eq!(e.id, crate::common::UNKNOWN_ID as u32),
            other => panic!("unexpected event {other}"),
        }
    }
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    assert!(events.unknown_events() > 0);
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    for format in [FileFormat::v6(Endian::Little, 8, 4096), FileFormat::v7(Codec::Zstd, Endian::Little, 8, 4096)] {
        let scenario = Scenario::full(11, 2000);
        assert_eq!(generate(format, &scenario).0, generate(format, &scenario).0);
    }
}

#[test]
fn a_trace_without_events_and_without_instances() {
    for format in all_formats(4096) {
        let writer = TraceWriter::new(format, 2).unwrap();
        let mut bytes = Vec::new();
        writer.write_to(&mut bytes).unwrap();
        let trace = Trace::from_bytes("empty", bytes).unwrap();
        assert_eq!(trace.cpu_count(), 2);
        assert!(read_all(&trace).is_empty());
    }
}

#[test]
fn large_traces_stream_through_many_chunks() {
    let format = FileFormat::v7(Codec::Zstd, Endian::Little, 8, 4096);
    let scenario = Scenario { instance: false, unknown_events: false, ..Scenario::full(5, 200_000) };
    let (bytes, expected) = generate(format, &scenario);
    let trace = Trace::from_bytes("large", bytes).unwrap();
    let lost = expected.iter().filter(|e| matches!(e, Expected::Lost { .. })).count();
    assert!(lost > 100, "{lost}");
    assert_same_items(&read_all(&trace), &expected, "large");
}

#[test]
fn date_and_offsets_shift_timestamps() {
    let format = FileFormat::v6(Endian::Little, 8, 4096);
    let scenario = Scenario { offset: Some(-1_000_000), date_us: Some(0x1234), ..Scenario::full(9, 300) };
    let (bytes, expected) = generate(format, &scenario);
    let trace = Trace::from_bytes("offset", bytes).unwrap();
    assert_eq!(trace.metadata().options.date.as_deref(), Some("0x1234"));
    assert_same_items(&read_all(&trace), &expected, "offset");
}

#[test]
fn instances_may_have_their_own_page_size() {
    let format = FileFormat::v7(Codec::Zlib, Endian::Big, 4, 4096);
    let scenario = Scenario { instance_page_size: Some(16384), ..Scenario::full(13, 2000) };
    let (bytes, expected) = generate(format, &scenario);
    let trace = Trace::from_bytes("pages", bytes).unwrap();
    let sizes: Vec<u32> = trace.buffers().iter().map(|b| b.page_size).collect();
    assert_eq!(sizes, [4096, 16384]);
    assert_same_items(&read_all(&trace), &expected, "pages");
}
