//! `check` on models whose CPU numbers come from damaged fields: every count stays in
//! range and nothing is sized by a CPU number.

use analysis::check::{CheckRequest, check};
use analysis::{TaskFilter, WindowRequest};
use model::scenario::*;
use model::{Cpu, Nanos};

#[test]
fn a_migration_to_cpu_60000_does_not_make_a_60001_square_matrix() {
    // Two real CPUs; a damaged sched_migrate_task names CPU 60000 as the destination,
    // another names CPU 70000 as the origin.
    let model = Scenario::new(2, &[(1, "alpha"), (2, "beta")])
        .switch(0, 0, 9, S, 1)
        .switch(0, 1, 9, S, 0)
        .wake(10, 0, 1, 2, 0)
        .migrate(20, 0, 1, 2, 0, 1)
        .migrate(30, 0, 1, 2, 1, 60_000)
        .migrate(40, 0, 1, 2, 70_000, 1)
        .other(50, 0, 1)
        .other(50, 1, 0)
        .finish();
    let (window, _) = WindowRequest::default().resolve(&model).unwrap();
    let filter = TaskFilter::default();
    let request = CheckRequest { window, filter: &filter, min_lost: Nanos(0), min_overload: Nanos(0), affinity: None };
    let findings = check(&model, &request);
    let matrix = &findings.migrations;
    assert_eq!(matrix.cpus, model.cpus().len());
    assert!(matrix.get(Cpu(0), Cpu(1)) >= 1);
    assert!(matrix.pairs.len() <= 3, "{:?}", matrix.pairs);
    assert_eq!(matrix.total() + matrix.outside, model.migrations().len() as u64);
    assert_eq!(matrix.dense(1024).is_some(), model.cpus().len() <= 1024);
}
