//! Migration cascades: chains of three or more migrations in which each moved task
//! displaced the task running where it arrived (that task's run ends preempted and the
//! moved task runs next there), and the displaced task moved next, each link within a
//! millisecond — the schedgraph paper's
//! §3.3 chain, where one load-balancing decision sets off several.

use super::{CheckRequest, Incident, Kind};
use model::{MigrationId, Model, Nanos, SegmentEnd, TaskId};
use std::collections::HashMap;

/// Chains of three or more migrations in which each moved task displaced the one running
/// where it arrived, and that one moved next, within a millisecond.
pub(super) fn cascades(model: &Model, request: &CheckRequest<'_>) -> Vec<Incident> {
    const WITHIN: Nanos = Nanos(1_000_000);
    let migrations = model.migrations();
    let mut by_task: HashMap<TaskId, Vec<MigrationId>> = HashMap::new();
    for (id, migration) in migrations.ids().zip(migrations.iter()) {
        by_task.entry(migration.task).or_default().push(id);
    }
    // The migration that follows `id` in a chain, if any.
    let next = |id: MigrationId| -> Option<MigrationId> {
        let model::Migration { time, task, to, .. } = migrations.get(id);
        let segments = model.cpu(to)?.segments();
        // The task running where it arrived was switched out, preempted, for it.
        let at = segments.overlapping(time, time + Nanos(1));
        let index = at.clone().find(|&i| {
            let s = segments.get(i);
            s.task != task && s.task != TaskId::IDLE && s.end_kind == SegmentEnd::Preempted && s.end <= time + WITHIN
        })?;
        let displaced = segments.get(index);
        let successor = (index + 1 < segments.len()).then(|| segments.get(index + 1))?;
        if successor.task != task || successor.start != displaced.end {
            return None;
        }
        // The displaced task's migrations are in time order: its first from `to` in the
        // millisecond, found from the first at or after `time`.
        let moves = by_task.get(&displaced.task)?;
        let first = moves.partition_point(|&j| migrations.time(j) < time);
        moves[first..]
            .iter()
            .copied()
            .take_while(|&j| migrations.time(j) <= time + WITHIN)
            .find(|&j| migrations.get(j).from == to)
    };
    let mut in_chain = vec![false; migrations.len()];
    let mut incidents = Vec::new();
    for first in migrations.ids().filter(|&i| request.window.contains(migrations.time(i))) {
        if in_chain[first.index()] {
            continue;
        }
        let mut chain = vec![first];
        let mut members = std::collections::HashSet::from([first]);
        while let Some(following) = next(*chain.last().expect("a chain")).filter(|&j| members.insert(j)) {
            chain.push(following);
        }
        if chain.len() < 3 || !request.filter.accepts(model, migrations.get(first).task) {
            continue;
        }
        chain.iter().for_each(|&i| in_chain[i.index()] = true);
        incidents.push(cascade_incident(model, &chain));
    }
    incidents
}

fn cascade_incident(model: &Model, chain: &[MigrationId]) -> Incident {
    let migrations = model.migrations();
    let (start, end) = (migrations.time(chain[0]), migrations.time(*chain.last().expect("a chain")));
    let mut cpus = vec![migrations.get(chain[0]).from];
    cpus.extend(chain.iter().map(|&i| migrations.get(i).to));
    let name = |i: MigrationId| {
        let task = migrations.get(i).task;
        format!("{}:{}", model.comm_at(task, migrations.time(i)), model.tasks().get(task).pid)
    };
    let steps: Vec<String> = chain
        .iter()
        .map(|&i| format!("{} moved CPU {} -> {}", name(i), migrations.get(i).from.0, migrations.get(i).to.0))
        .collect();
    Incident {
        kind: Kind::MigrationCascade,
        start,
        end,
        cpus,
        pids: chain.iter().map(|&i| model.tasks().get(migrations.get(i).task).pid).collect(),
        explanation: format!(
            "{} migrations in {:.0} us, each displacing the next: {}",
            chain.len(),
            end.saturating_sub(start).0 as f64 / 1e3,
            steps.join(", ")
        ),
        ..Incident::empty()
    }
}
