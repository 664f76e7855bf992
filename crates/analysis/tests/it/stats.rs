//! Statistics of models whose times reach the end of the clock (a damaged page can hold
//! a timestamp near `u64::MAX`): sums saturate instead of overflowing.

use analysis::stats::{Grouping, compute};
use analysis::{TaskFilter, WindowRequest};
use model::scenario::*;

#[test]
fn run_times_near_the_end_of_the_clock_add_up_without_overflow() {
    // Two tasks named alike run on two CPUs from 1 ns to nearly u64::MAX: their sum per
    // command is beyond u64.
    let end = u64::MAX - 10;
    let model = Scenario::new(2, &[(1, "same"), (2, "same")])
        .switch(1, 0, 0, S, 1)
        .switch(1, 1, 0, S, 2)
        .switch(end, 0, 1, S, 0)
        .switch(end, 1, 2, S, 0)
        .finish();
    let (window, _) = WindowRequest::default().resolve(&model).unwrap();
    let stats = compute(&model, window, &TaskFilter::default(), Grouping::Command);
    let row = stats.rows.iter().find(|r| r.comm == "same").unwrap();
    assert_eq!((row.pids, row.runtime_ns), (2, u64::MAX));
    assert!(stats.cpus.iter().all(|c| c.busy_ns + c.idle_ns + c.uncertain_ns <= window.len().0));
}
