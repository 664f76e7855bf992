//! The fuzzer's seed corpus, `fuzz/seeds/read_trace`: one small writer output per file
//! version, compression, byte order and long size, each with an instance, losses,
//! time extends, absolute timestamps and events without format; and `foreign-*.dat`,
//! the first page of each CPU of three traces from other machines (32-bit Arm and i686,
//! old kernels, bprint and printk formats; made with testdata/programs/trim-v6-trace.py
//! --max-pages 1). The committed seeds must all read without damage;
//! `UPDATE_FUZZ_SEEDS=1 cargo test -p tracedat --test fuzz_seeds` writes the generated
//! ones anew.

use crate::common::{Scenario, all_formats, generate};
use std::path::{Path, PathBuf};
use tracedat::{Endian, FileFormat, FileVersion, Item, ReportPrinter, Selection, Trace};

const PAGE_SIZE: u32 = 256;

fn seed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/read_trace")
}

fn seed_name(format: &FileFormat) -> String {
    let version = match format.version {
        FileVersion::V6 => "v6".to_string(),
        FileVersion::V7 { compression } => format!("v7-{}", compression.name()),
    };
    let endian = match format.endian {
        Endian::Little => "le",
        Endian::Big => "be",
    };
    format!("{version}-{endian}-long{}.dat", format.long_size)
}

#[test]
fn seeds_are_small_valid_traces() {
    let dir = seed_dir();
    if std::env::var_os("UPDATE_FUZZ_SEEDS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for (index, format) in all_formats(PAGE_SIZE).into_iter().enumerate() {
            let (bytes, _) = generate(format, &Scenario::full(index as u64, 60));
            std::fs::write(dir.join(seed_name(&format)), bytes).unwrap();
        }
    }
    let mut total = 0;
    for format in all_formats(PAGE_SIZE) {
        let path = dir.join(seed_name(&format));
        let bytes =
            std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (UPDATE_FUZZ_SEEDS=1 writes it)", path.display()));
        total += bytes.len();
        let trace = Trace::from_bytes(path.display().to_string(), bytes).unwrap();
        assert_eq!(trace.metadata().header.endian, format.endian);
        let items = crate::common::read_all(&trace);
        assert!(items.len() >= 60, "{}", path.display());
    }
    assert!(total < 256 << 10, "the seeds take {total} bytes");
}

#[test]
fn foreign_seeds_read_and_print_without_damage() {
    let mut seeds: Vec<PathBuf> = std::fs::read_dir(seed_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("foreign-")))
        .collect();
    seeds.sort();
    assert_eq!(seeds.len(), 3, "{seeds:?}");
    let mut total = 0;
    for path in seeds {
        let bytes = std::fs::read(&path).unwrap();
        total += bytes.len();
        let trace = Trace::from_bytes(path.display().to_string(), bytes).unwrap();
        let mut events = trace.events_of(&Selection::all());
        let mut printer = ReportPrinter::new(&trace);
        let (mut text, mut count) = (Vec::new(), 0);
        while let Some(item) = events.next() {
            if let Item::Event(event) = item {
                printer.event(&mut text, &event);
                count += 1;
            }
        }
        assert!(events.damage().is_empty() && count >= 50, "{}: {count} events", path.display());
        assert!(!text.is_empty());
    }
    assert!(total < 128 << 10, "the foreign seeds take {total} bytes");
}
