//! A deliberately simple per-pid wakeup latency from reference events, to check
//! schedlens's `latency` independently of its model.
//!
//! A pid is running from a `sched_switch` naming it `next_pid` until one naming it
//! `prev_pid`; switched out with a runnable `prev_state` (no state bit in the low byte:
//! `R`, `R+`) it waits to run again, otherwise it sleeps. A sleeping (or not yet seen)
//! pid's first `sched_waking`, `sched_wakeup` or `sched_wakeup_new` starts a wakeup; its
//! next switch-in ends it, and the time between is its wakeup latency. Wakeups of a pid
//! that is running or already waiting are ignored (the kernel emits `sched_waking` for a
//! task that has not yet left its CPU). Meant for traces without lost events.

use std::collections::BTreeMap;

use crate::fields::payload_token;
use crate::parse::{RefEvent, Report};

/// Per-pid wakeup latencies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WakeupLatency {
    pub count: u64,
    pub total_ns: u64,
    pub max_ns: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    Sleeping,
    Woken { since: u64 },
    Running,
    Preempted,
}

fn number(e: &RefEvent, name: &str) -> Option<i64> {
    payload_token(&e.payload, name)?.parse().ok()
}

/// [`WakeupLatency`] per pid from the top buffer's events (pid 0 left out).
pub fn wakeup_latencies<'a>(events: impl IntoIterator<Item = &'a RefEvent>) -> BTreeMap<i32, WakeupLatency> {
    let mut states: BTreeMap<i32, State> = BTreeMap::new();
    let mut latencies: BTreeMap<i32, WakeupLatency> = BTreeMap::new();
    for e in events.into_iter().filter(|e| e.buffer.is_none()) {
        match e.event.as_str() {
            "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => {
                let Some(pid) = number(e, "pid").map(|p| p as i32) else { continue };
                let state = states.entry(pid).or_insert(State::Sleeping);
                if *state == State::Sleeping {
                    *state = State::Woken { since: e.ts_ns };
                }
            }
            "sched_switch" => {
                let (Some(prev), Some(prev_state), Some(next)) =
                    (number(e, "prev_pid"), number(e, "prev_state"), number(e, "next_pid"))
                else {
                    continue;
                };
                let out = if prev_state & 0xff == 0 { State::Preempted } else { State::Sleeping };
                states.insert(prev as i32, out);
                if let Some(State::Woken { since }) = states.insert(next as i32, State::Running) {
                    let latency = latencies.entry(next as i32).or_default();
                    let delay = e.ts_ns.saturating_sub(since);
                    latency.count += 1;
                    latency.total_ns += delay;
                    latency.max_ns = latency.max_ns.max(delay);
                }
            }
            _ => {}
        }
    }
    latencies.remove(&0);
    latencies
}

impl Report {
    /// [`wakeup_latencies`] of the report's events; an error if the top buffer lost events.
    pub fn wakeup_latencies(&self) -> Result<BTreeMap<i32, WakeupLatency>, String> {
        if let Some((_, cpu, _)) = self.lost().find(|(b, _, _)| b.is_none()) {
            return Err(format!("the trace lost events (CPU {cpu}): wakeup latencies would be wrong"));
        }
        Ok(wakeup_latencies(self.events()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_report;

    #[test]
    fn a_wakeup_runs_from_its_first_event_to_the_switch_in() {
        let text = "cpus=2
              sh-10    [000]     1.000000100: sched_waking:          comm=a pid=11 prio=120 target_cpu=000
              sh-10    [000]     1.000000150: sched_wakeup:          comm=a pid=11 prio=120 target_cpu=000
              sh-10    [000]     1.000000200: sched_switch:          prev_comm=sh prev_pid=10 prev_prio=120 prev_state=0 next_comm=a next_pid=11 next_prio=120
               a-11    [000]     1.000000300: sched_waking:          comm=sh pid=10 prio=120 target_cpu=000
               a-11    [000]     1.000000500: sched_switch:          prev_comm=a prev_pid=11 prev_prio=120 prev_state=1 next_comm=sh next_pid=10 next_prio=120
              sh-10    [000]     1.000000600: sched_waking:          comm=a pid=11 prio=120 target_cpu=001
          <idle>-0     [001]     1.000000900: sched_switch:          prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=0 next_comm=a next_pid=11 next_prio=120
";
        let r = parse_report(text).unwrap();
        let l = r.wakeup_latencies().unwrap();
        // a: 100..200 and 600..900; sh was preempted (its waking at 300 is ignored).
        assert_eq!(l[&11], WakeupLatency { count: 2, total_ns: 400, max_ns: 300 });
        assert!(!l.contains_key(&10));
    }
}
