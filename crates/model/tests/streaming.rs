//! A model built streaming (`Model::build_streaming`) hands its sink exactly the waits,
//! wakeups and migrations a model built whole keeps in its tables, and has the same
//! segments and tasks: on every bundled trace.

use model::*;

#[derive(Default)]
struct Collect {
    waits: Vec<(Wait, Option<Wakeup>)>,
    migrations: Vec<Migration>,
}

impl WaitSink for Collect {
    fn wait(&mut self, wait: &Wait, wakeup: Option<&Wakeup>) {
        self.waits.push((*wait, wakeup.copied()));
    }

    fn migration(&mut self, migration: &Migration) {
        self.migrations.push(*migration);
    }
}

/// Waits in one order, whatever order they came in (a task waits once at a time).
fn sorted(mut waits: Vec<(Wait, Option<Wakeup>)>) -> Vec<(Wait, Option<Wakeup>)> {
    waits.sort_by_key(|(wait, _)| (wait.start, wait.task, wait.end));
    waits
}

#[test]
fn the_streamed_waits_are_the_tables_waits_on_every_fixture() {
    let mut compared = 0;
    for path in refcheck::fixtures() {
        let trace = tracedat::Trace::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Ok((whole, _)) = Model::build(&trace, Detail::WAKEUPS, &mut |_| {}) else { continue };
        let mut sink = Collect::default();
        let (streamed, _) = Model::build_streaming(&trace, &mut |_| {}, &mut sink).expect("built once already");
        let wakeup_of = whole.wakeups_by_wait();
        let kept: Vec<(Wait, Option<Wakeup>)> = whole
            .waits()
            .ids()
            .map(|id| {
                let wakeup = wakeup_of[id.index()].map(|w| Wakeup { wait: None, ..whole.wakeups().get(w) });
                (whole.waits().get(id), wakeup)
            })
            .collect();
        let name = path.display();
        assert_eq!(sink.waits.len(), kept.len(), "{name}: waits");
        assert!(sorted(sink.waits) == sorted(kept), "{name}: the waits or their wakeups differ");
        assert_eq!(sink.migrations, whole.migrations().iter().collect::<Vec<_>>(), "{name}: migrations");
        assert_eq!(streamed.tasks().len(), whole.tasks().len(), "{name}: tasks");
        for (ours, theirs) in streamed.cpus().iter().zip(whole.cpus()) {
            let segments = |timeline: &CpuTimeline| timeline.segments().iter().collect::<Vec<_>>();
            assert!(segments(ours) == segments(theirs), "{name}: CPU {}'s segments", ours.cpu().0);
        }
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} fixtures compared");
}
