//! The size budget on a real fixture: a smaller budget gives fewer levels of detail and
//! a file within it; the same input gives the same bytes.

use model::{Detail, Model, Nanos};
use report::{Options, ReportTrace, build};
use std::path::Path;
use tracedat::Trace;

fn trace(name: &str) -> ReportTrace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces").join(name);
    let trace = Trace::open(&path).unwrap();
    let (model, _) = Model::build(&trace, Detail::FULL, &mut |_| {}).unwrap();
    let origin: Nanos = model.start();
    ReportTrace {
        shown: tiles::ShownTrace { name: name.to_string(), model, topology: None, origin },
        description: vec![("file".into(), name.into())],
        markers: Vec::new(),
        affinity: None,
        command_pid: None,
    }
}

fn report(budget: usize) -> report::Report {
    let options = Options { size_budget: budget, socket_order: false };
    build(&[trace("hackbench-v7zstd.dat")], None, &options, &mut |_| {})
}

#[test]
fn a_smaller_budget_keeps_fewer_levels_within_it() {
    let large = report(5_000_000);
    let small = report(300_000);
    assert!(large.html.len() <= 5_000_000);
    assert!(small.html.len() <= 300_000, "{} bytes", small.html.len());
    let (l, s) = (&large.coverage[0], &small.coverage[0]);
    assert_eq!(l.top, s.top);
    assert!(s.finest > l.finest, "small: {s:?}, large: {l:?}");
    assert!(l.top - l.finest >= 4, "a 5 MB report of a small trace zooms in far: {l:?}");
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    assert!(report(400_000).html == report(400_000).html);
}
