//! The model fuzzer's seeds from real traces, `fuzz/seeds/sched_model/fixture-*`: the
//! start of every fixture's scheduler events (and, where events were lost, the stretch
//! around the first loss) as scripts, each with other file layouts and analysis options.
//! `SCHEDLENS_BLESS=1 cargo test -p trust --test seeds` writes them anew.

use std::path::{Path, PathBuf};
use tracedat::{Item, Trace};
use trust::script::{Layout, View};
use trust::seeds::{Slice, script_of};

/// Events and losses per seed: enough for every kind of event, small enough to fuzz fast.
const TAKE: usize = 250;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The index of the first lost-events notice of a trace's top buffer, if any.
fn first_loss(trace: &Trace) -> Option<usize> {
    let mut events = trace.events();
    let mut index = 0;
    while let Some(item) = events.next() {
        index += 1;
        if matches!(item, Item::Lost(_)) {
            return Some(index);
        }
    }
    None
}

/// The `.dat` files of `dir`, sorted, named with `prefix`.
fn dat_files(dir: &Path, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".dat"))
        .map(|n| format!("{prefix}{n}"))
        .collect();
    names.sort();
    names
}

#[test]
fn seeds_are_slices_of_every_fixture() {
    let fixtures = repository().join("testdata/traces");
    // The fixtures recorded here, then those from other machines (`foreign/`): new
    // fixtures sort after the old ones, so the old seeds keep their layouts and options.
    let mut names = dat_files(&fixtures, "");
    names.extend(dat_files(&fixtures.join("foreign"), "foreign/"));
    assert!(names.len() >= 20, "{names:?}");
    let seeds = repository().join("fuzz/seeds/sched_model");
    let mut total = 0;
    for (index, name) in names.iter().enumerate() {
        let trace = Trace::open(fixtures.join(name)).unwrap();
        let mut slices = vec![("start", Slice { skip: 0, take: TAKE })];
        if let Some(loss) = first_loss(&trace) {
            slices.push(("loss", Slice { skip: loss.saturating_sub(TAKE / 4), take: TAKE }));
        }
        for (part, slice) in slices {
            // Layouts and options vary from seed to seed; the first seeds keep the defaults.
            let salt = (index * 2 + usize::from(part == "loss")) as u8;
            let layout = Layout(salt.wrapping_mul(0x29) & 0x7c);
            let view = View { flags: salt.wrapping_mul(0x35) & !0xc0, min: 0, max: 0 };
            let script = script_of(&trace, slice, layout, view);
            assert!(script.ops.len() >= TAKE.min(50), "{name}: {} operations", script.ops.len());
            let bytes = script.to_bytes();
            total += bytes.len();
            let stem = name.trim_end_matches(".dat").replace('/', "-");
            golden::check(
                &seeds,
                Path::new(env!("CARGO_TARGET_TMPDIR")),
                "trust",
                &format!("fixture-{stem}-{part}"),
                &bytes,
            );
        }
    }
    assert!(total < 128 << 10, "the seeds take {total} bytes");
}
