//! The critical path on the page: `analysis::critical_path`'s walk for the traced command
//! or a followed task (computed once per target and kept), and the page's document of it —
//! the breakdown with its sentence to quote, and within the range shown the hops (each
//! with the CPU its waker woke it from and where it then ran, to draw as an arrow) and the
//! stretches of scheduler cost to highlight. The viewer asks per range; the report embeds
//! the whole trace's.

use crate::detail::head;
use crate::recent::Recent;
use crate::shown::ShownTrace;
use analysis::check::Affinity;
use analysis::critical_path::{CostStretch, CriticalPath, Followed, Target, critical_path};
use analysis::idle::IdleIndex;
use documents::page::{PageCost, PageHop, PagePath, Ran};
use model::{Nanos, TaskId};
use std::sync::Arc;

/// Hops and stretches of scheduler cost the page gets at most.
const PATH_LIMIT: usize = 2000;
/// The largest stretches of scheduler cost listed in the side panel.
const TOP: usize = 10;

/// Whose critical path.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathOf {
    /// The traced command's process tree (`critical-path` without `--task`).
    Command,
    /// One task (`critical-path --task`).
    Task(TaskId),
}

/// A walked path and what was followed.
#[derive(Debug)]
pub struct Walked {
    pub target: Target,
    pub path: CriticalPath,
}

/// The paths asked for most recently.
#[derive(Debug)]
pub struct PathCache(Recent<PathOf, Option<Walked>>);

impl Default for PathCache {
    fn default() -> PathCache {
        PathCache(Recent::new(4))
    }
}

impl PathCache {
    /// The path of `of` (walked once; requests for it meanwhile wait for that walk):
    /// `target` says what to follow, `None` when there is nothing (a trace that names no
    /// command).
    pub fn path(
        &self,
        trace: &ShownTrace,
        of: PathOf,
        target: impl FnOnce() -> Option<Target>,
        affinity: Option<&Affinity>,
    ) -> Arc<Option<Walked>> {
        self.0.get_or_compute(of, || target().map(|target| walk(trace, target, affinity)))
    }
}

/// Walks `target`'s critical path, keeping the [`PATH_LIMIT`] largest stretches of
/// scheduler cost.
pub fn walk(trace: &ShownTrace, target: Target, affinity: Option<&Affinity>) -> Walked {
    let index = IdleIndex::new(&trace.model);
    let path = critical_path(&trace.model, &index, &target, affinity, PATH_LIMIT);
    Walked { target, path }
}

/// The page's document of a walked path, its hops and stretches within `[start, end)`.
pub fn page_path(trace: &ShownTrace, walked: &Walked, start: Nanos, end: Nanos) -> PagePath {
    let (model, path) = (&trace.model, &walked.path);
    let b = path.breakdown;
    let inside: Vec<_> = path.hops.iter().filter(|h| h.end > start && h.start < end).collect();
    let step = inside.len().div_ceil(PATH_LIMIT).max(1);
    let hops = inside.iter().step_by(step).map(|hop| {
        let comm = model.comm_at(hop.task, hop.start).to_string();
        PageHop {
            task: documents::page::TaskHead { comm, ..head(trace, hop.task) },
            start: trace.relative(hop.start),
            end: trace.relative(hop.end),
            woken_by: hop.woken_by.map(TaskId::index),
            from_cpu: hop.waker_cpu.map(|c| c.0),
            ran: hop.ran.map(|(t, cpu)| Ran { t: trace.relative(t), cpu: cpu.0 }),
        }
    });
    let mut costs: Vec<&CostStretch> = path.top.iter().filter(|s| s.end > start && s.start < end).collect();
    costs.sort_by_key(|s| (s.start, s.task));
    PagePath {
        target: match walked.target.followed {
            Followed::Tasks(_) => "command".into(),
            Followed::Task(_) => "task".into(),
        },
        task: head(trace, walked.target.end_task),
        start: trace.relative(path.window.start),
        end: trace.relative(path.window.end),
        sentence: b.sentence(),
        breakdown: experiment::critical_path::breakdown_document(&b),
        scheduler_share: b.scheduler_share(),
        affinity: if path.recorded_affinity { "recorded".into() } else { "inferred".into() },
        hop_count: path.hops.len(),
        hops_in_range: inside.len(),
        hops: hops.collect(),
        costs: costs.into_iter().map(|s| cost(trace, s)).collect(),
        top: path.top.iter().take(TOP).map(|s| cost(trace, s)).collect(),
    }
}

fn cost(trace: &ShownTrace, stretch: &CostStretch) -> PageCost {
    let model = &trace.model;
    PageCost {
        task: stretch.task.index(),
        pid: model.tasks().get(stretch.task).pid.0,
        comm: model.comm_at(stretch.task, stretch.start).to_string(),
        start: trace.relative(stretch.start),
        end: trace.relative(stretch.end),
        scheduler: stretch.scheduler_ns,
        waited_on: stretch.waited_on.map(|c| c.0),
        idle_cpu: stretch.idle_cpu.map(|(c, _)| c.0),
    }
}
