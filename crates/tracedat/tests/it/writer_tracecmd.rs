//! The reference decoder agrees with the reader on written files: `trace-cmd report -R -t`
//! shows the same events (buffer, CPU, time, pid, name, every field's value), the same
//! losses and the same events without format, in the same order. Run for every file
//! version, byte order and long size trace-cmd can read; compressions the installed
//! trace-cmd lacks (`trace-cmd list -c`; Debian's 3.1.6 has no zlib) are reported and
//! skipped. Every file carries an option id trace-cmd does not know (0x7e57), which it
//! skips without a word.

use crate::common::{
    INSTANCE, RefLine, Scenario, all_formats, generate, label, parse_report, run_report, scratch_dir, split_payload,
    trace_cmd_codecs, value_matches,
};
use std::path::Path;
use tracedat::compress::Codec;
use tracedat::{Endian, FileVersion, Item, Trace};

#[test]
fn trace_cmd_agrees_with_the_reader_on_written_files() {
    let codecs = trace_cmd_codecs();
    let dir = scratch_dir("writer-tracecmd");
    let mut checked = Vec::new();
    for (index, format) in all_formats(4096).into_iter().enumerate() {
        let what = label(&format);
        if let FileVersion::V7 { compression } = format.version {
            if compression != Codec::None && !codecs.iter().any(|c| c == compression.name()) {
                eprintln!("skipped (trace-cmd lacks {}): {what}", compression.name());
                continue;
            }
        }
        // 32-bit kernels also stand in for those whose sched_wakeup lost `success`.
        let v7 = format.version != FileVersion::V6;
        let scenario = Scenario {
            with_success: format.long_size == 8,
            offset: (index % 3 == 0).then_some(-1_000_000),
            date_us: (index % 3 == 1).then_some(0x1234),
            instance_page_size: (v7 && index % 2 == 1).then_some(8192),
            ..Scenario::full(100 + index as u64, 3000)
        };
        let (bytes, _) = generate(format, &scenario);
        let path = dir.join(format!("trace-{index}.dat"));
        std::fs::write(&path, bytes).unwrap();
        compare_with_trace_cmd(&path, &what);
        checked.push((format.endian, format.long_size));
    }
    assert!(checked.contains(&(Endian::Little, 8)) && checked.len() >= 8, "too few files checked: {checked:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

fn compare_with_trace_cmd(path: &Path, what: &str) {
    let (text, stderr, ok) = run_report(path);
    assert!(ok, "{what}: trace-cmd failed: {stderr}");
    let reference = parse_report(&text, &[INSTANCE]);
    let trace = Trace::open(path).unwrap();
    let names: Vec<Option<String>> =
        trace.buffers().iter().map(|b| (!b.name.is_empty()).then(|| b.name.clone())).collect();
    let mut events = trace.events();
    let mut index = 0;
    let (mut event_count, mut lost_count) = (0, 0);
    while let Some(item) = events.next() {
        let theirs = reference.get(index).unwrap_or_else(|| panic!("{what}: trace-cmd ends after {index} lines"));
        let context = format!("{what}: line {index}: {theirs:?}");
        match (item, theirs) {
            (Item::Lost(lost), RefLine::Lost { buffer, cpu, count }) => {
                assert_eq!(&names[lost.buffer as usize], buffer, "{context}");
                assert_eq!((lost.cpu.0, lost.count), (*cpu, *count), "{context}");
                lost_count += 1;
            }
            (Item::Event(e), RefLine::Unknown { buffer }) => {
                assert!(e.format.is_none(), "{context}");
                assert_eq!(&names[e.buffer as usize], buffer, "{context}");
            }
            (Item::Event(e), RefLine::Event { buffer, pid, cpu, ts, name, payload }) => {
                assert_eq!(&names[e.buffer as usize], buffer, "{context}");
                assert_eq!((e.cpu.0, e.ts.0, e.pid().0, e.name()), (*cpu, *ts, *pid, name.as_str()), "{context}");
                let fields: Vec<_> = e.fields().collect();
                let field_names: Vec<&str> = fields.iter().map(|(f, _)| f.name.as_str()).collect();
                let values =
                    split_payload(payload, &field_names).unwrap_or_else(|| panic!("{context}: fields {field_names:?}"));
                for ((field, ours), theirs) in fields.into_iter().zip(values) {
                    assert!(
                        value_matches(ours, theirs, field.size),
                        "{context}: field {} is {ours:?} here",
                        field.name
                    );
                }
                event_count += 1;
            }
            (ours, _) => panic!("{context}: the reader has {ours:?}"),
        }
        index += 1;
    }
    assert_eq!(index, reference.len(), "{what}: trace-cmd shows more lines");
    assert!(event_count > 2000 && lost_count > 5, "{what}: {event_count} {lost_count}");
}
