//! A deliberately simple per-task computation from reference events, to check schedlens's
//! scheduling model independently.
//!
//! It reads only `sched_switch` events (`prev_pid=`/`next_pid=` from the payload text) and
//! knows nothing of wakeups, migrations or task identity beyond the pid. Meant for traces
//! without lost events.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use crate::fields::payload_token;
use crate::parse::{RefEvent, Report};

/// Per-task sums.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskTotals {
    /// `sched_switch` events with `next_pid == pid`.
    pub switches: u64,
    /// Time the task was on a CPU, summed over CPUs (clock units for non-ns clocks).
    pub runtime_ns: u64,
}

/// A `sched_switch` whose `prev_pid` is not the `next_pid` of the previous `sched_switch` on
/// the same CPU: a switch is missing from the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainBreak {
    pub cpu: u32,
    pub ts_ns: u64,
    /// `next_pid` of the previous switch on this CPU.
    pub expected_prev: i32,
    pub prev_pid: i32,
}

fn switch_pids(e: &RefEvent) -> Option<(i32, i32)> {
    if e.event != "sched_switch" {
        return None;
    }
    let prev = payload_token(&e.payload, "prev_pid")?.parse().ok()?;
    let next = payload_token(&e.payload, "next_pid")?.parse().ok()?;
    Some((prev, next))
}

struct Cpu {
    /// The task shown running: by the last switch, or by the last event's pid.
    running: i32,
    /// When `running` was switched in or first seen running.
    since: u64,
    /// The last event that showed `running` on the CPU.
    last_seen: u64,
}

/// Per-pid switch-in counts and run time from the top buffer's events (events of instances
/// are ignored: they repeat the top buffer's events).
///
/// Per CPU, every event shows its pid running there. A run stretch starts when a
/// `sched_switch` switches the task in, or, without one, at the first event that shows it
/// running (the CPU's first event, or an event after the trace missed a switch). It ends at
/// a `sched_switch` that switches it out, or, when the trace missed that switch, at the
/// last event that showed it running (the time until another task shows up is credited to
/// nobody). The stretch still open at the CPU's last event ends there.
///
/// Pid 0 (the idle tasks of all CPUs) is included. Every pid named by a switch has an entry.
pub fn task_totals<'a>(events: impl IntoIterator<Item = &'a RefEvent>) -> BTreeMap<i32, TaskTotals> {
    let mut totals: BTreeMap<i32, TaskTotals> = BTreeMap::new();
    let mut cpus: BTreeMap<u32, Cpu> = BTreeMap::new();
    let mut credit = |pid: i32, from: u64, to: u64| {
        totals.entry(pid).or_default().runtime_ns += to.saturating_sub(from);
    };
    let mut switched_in = BTreeMap::<i32, u64>::new();
    for e in events {
        if e.buffer.is_some() {
            continue;
        }
        let cpu = match cpus.entry(e.cpu) {
            Entry::Vacant(v) => v.insert(Cpu { running: e.pid, since: e.ts_ns, last_seen: e.ts_ns }),
            Entry::Occupied(o) => o.into_mut(),
        };
        if e.pid != cpu.running {
            credit(cpu.running, cpu.since, cpu.last_seen);
            cpu.running = e.pid;
            cpu.since = e.ts_ns;
        }
        cpu.last_seen = e.ts_ns;
        if let Some((_, next)) = switch_pids(e) {
            credit(cpu.running, cpu.since, e.ts_ns);
            *switched_in.entry(next).or_default() += 1;
            cpu.running = next;
            cpu.since = e.ts_ns;
        }
    }
    for cpu in cpus.values() {
        credit(cpu.running, cpu.since, cpu.last_seen);
    }
    for (pid, n) in switched_in {
        totals.entry(pid).or_default().switches += n;
    }
    totals
}

/// Top-buffer `sched_switch` events whose `prev_pid` differs from the previous switch's
/// `next_pid` on the same CPU. Empty for a complete trace.
pub fn switch_chain_breaks<'a>(events: impl IntoIterator<Item = &'a RefEvent>) -> Vec<ChainBreak> {
    let mut last_next: BTreeMap<u32, i32> = BTreeMap::new();
    let mut out = Vec::new();
    for e in events {
        if e.buffer.is_some() {
            continue;
        }
        let Some((prev, next)) = switch_pids(e) else {
            continue;
        };
        if let Some(&expected_prev) = last_next.get(&e.cpu) {
            if expected_prev != prev {
                out.push(ChainBreak { cpu: e.cpu, ts_ns: e.ts_ns, expected_prev, prev_pid: prev });
            }
        }
        last_next.insert(e.cpu, next);
    }
    out
}

impl Report {
    /// [`task_totals`] of the report's events; an error if the top buffer lost events.
    pub fn task_totals(&self) -> Result<BTreeMap<i32, TaskTotals>, String> {
        if let Some((_, cpu, _)) = self.lost().find(|(b, _, _)| b.is_none()) {
            return Err(format!("the trace lost events (CPU {cpu}): task totals would be wrong"));
        }
        Ok(task_totals(self.events()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_report;

    const TEXT: &str = "cpus=2
              sh-10    [000]     1.000000100: sched_waking:          comm=a pid=11 prio=120 target_cpu=000
              sh-10    [000]     1.000000200: sched_switch:          prev_comm=sh prev_pid=10 prev_prio=120 prev_state=1 next_comm=a next_pid=11 next_prio=120
          <idle>-0     [001]     1.000000250: sched_switch:          prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=0 next_comm=b next_pid=12 next_prio=120
               a-11    [000]     1.000000500: sched_switch:          prev_comm=a prev_pid=11 prev_prio=120 prev_state=0 next_comm=sh next_pid=10 next_prio=120
               b-12    [001]     1.000000600: sched_waking:          comm=x pid=13 prio=120 target_cpu=000
              sh-10    [000]     1.000000900: sched_switch:          prev_comm=sh prev_pid=10 prev_prio=120 prev_state=1 next_comm=a next_pid=11 next_prio=120
inst:               sh-10    [000]     1.000000900: sched_switch:          prev_comm=sh prev_pid=10 prev_prio=120 prev_state=1 next_comm=a next_pid=11 next_prio=120
               a-11    [000]     1.000001000: sched_waking:          comm=x pid=13 prio=120 target_cpu=000
";

    #[test]
    fn stretches() {
        let r = parse_report(TEXT).unwrap();
        assert_eq!((r.events().count(), r.continuation_lines), (8, 0));
        assert_eq!(r.events().filter(|e| e.buffer.as_deref() == Some("inst")).count(), 1);
        let t = r.task_totals().unwrap();
        // CPU 0: sh from the first event (100) to 200 and 500..900; a 200..500 and 900..1000.
        assert_eq!(t[&10], TaskTotals { switches: 1, runtime_ns: 100 + 400 });
        assert_eq!(t[&11], TaskTotals { switches: 2, runtime_ns: 300 + 100 });
        // CPU 1: idle from its first event (the switch itself), b 250..600.
        assert_eq!(t[&0], TaskTotals { switches: 0, runtime_ns: 0 });
        assert_eq!(t[&12], TaskTotals { switches: 1, runtime_ns: 350 });
        assert!(!t.contains_key(&13));
        assert!(switch_chain_breaks(r.events()).is_empty());
    }

    #[test]
    fn missing_switch_credits_only_what_events_show() {
        // idle from 0 to its last sign at 200; the gap 200..300 is nobody's; a 300..500.
        let text = "cpus=1
              sh-10    [000]     1.000000000: sched_switch:          prev_comm=sh prev_pid=10 prev_prio=120 prev_state=1 next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0     [000]     1.000000200: sched_waking:          comm=a pid=11 prio=120 target_cpu=000
               a-11    [000]     1.000000300: sched_waking:          comm=b pid=12 prio=120 target_cpu=000
               a-11    [000]     1.000000500: sched_switch:          prev_comm=a prev_pid=11 prev_prio=120 prev_state=1 next_comm=swapper/0 next_pid=0 next_prio=120
";
        let r = parse_report(text).unwrap();
        let t = task_totals(r.events());
        assert_eq!(t[&11].runtime_ns, 200);
        assert_eq!(t[&0].runtime_ns, 200);
        assert_eq!(t[&0].switches, 2);
        assert_eq!(
            switch_chain_breaks(r.events()),
            vec![ChainBreak { cpu: 0, ts_ns: 1_000_000_500, expected_prev: 0, prev_pid: 11 }]
        );
    }

    #[test]
    fn lost_events_are_refused() {
        let text = "cpus=1\nCPU:0 [EVENTS DROPPED]\n";
        assert!(parse_report(text).unwrap().task_totals().is_err());
    }
}
