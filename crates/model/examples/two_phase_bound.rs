//! The least work a two-phase model build (per CPU, then per task) would do, timed: the
//! measurement behind docs/performance.md's case for the sequential tracker on few cores.
//!
//! Phase 1 reads each CPU's events on its own, in no order across CPUs, as a per-CPU
//! tracker would: it decodes every event, notes every sighting of a pid (first and last
//! time, and where the name it is seen with changes: names are compared as the 16 bytes
//! the record holds, and numbered only when they change) and keeps run segments keyed by
//! pid, plus the facts a per-task pass needs (switch-out, switch-in, wakeup) as 8-byte
//! keys in per-pid lists. Phase 2 puts each task's facts in time order (a stable radix
//! sort) and checks that no task starts running while it runs elsewhere; phase 3 numbers
//! the tasks by first sighting and puts their numbers in the segments. That is all: no
//! comm histories, runqueues, anomalies, stale-queue checks or uncertain stretches, no
//! figure. A real two-phase build does all of this and more, so its time is above this
//! bound.
//!
//! `cargo run --release -p model --example two_phase_bound TRACE [THREADS]`

use model::{RadixScratch, Sched, SchedDecoder, sort_by_offset};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tracedat::{Item, Selection, Trace};

/// A fact's key: nanoseconds since the trace's first event, then the CPU, then the kind.
type Fact = u64;
const CPU_SHIFT: u32 = 2;
const TIME_SHIFT: u32 = 18;

#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    SwitchOut = 0,
    SwitchIn = 1,
    Wakeup = 2,
}

fn fact(time_ns: u64, cpu: u32, kind: Kind) -> Fact {
    time_ns << TIME_SHIFT | u64::from(cpu) << CPU_SHIFT | kind as u64
}

fn fact_cpu(fact: Fact) -> u32 {
    (fact >> CPU_SHIFT) as u32 & 0xffff
}

fn fact_kind(fact: Fact) -> Kind {
    match fact & 3 {
        0 => Kind::SwitchOut,
        1 => Kind::SwitchIn,
        _ => Kind::Wakeup,
    }
}

/// A run segment as phase 1 keeps it: start offset, pid, state bits.
type Segment = [u32; 3];

/// Where and when a pid was seen by one worker, and the name it was last seen with.
#[derive(Copy, Clone, Default)]
struct Sighting {
    first_ns: u64,
    last_ns: u64,
    name: u128,
}

/// Names numbered by one worker, in order of first use. Only name changes are numbered,
/// a few thousand on the largest trace, so a plain map does.
#[derive(Default)]
struct Names(HashMap<u128, u32>);

impl Names {
    fn number(&mut self, word: u128) -> u32 {
        let next = self.0.len() as u32 + 1;
        *self.0.entry(word).or_insert(next)
    }
}

/// One worker's output: its CPUs' segments, its facts and sightings per pid, and the
/// name changes it saw (pid, time, name).
#[derive(Default)]
struct Phase1 {
    segments: Vec<Vec<Segment>>,
    facts: Vec<Vec<Fact>>,
    sightings: Vec<Sighting>,
    renames: Vec<(u32, u64, u32)>,
    names: Names,
}

impl Phase1 {
    fn push_fact(&mut self, pid: i32, fact: Fact) {
        let Ok(pid) = usize::try_from(pid) else { return };
        if pid == 0 {
            return;
        }
        if self.facts.len() <= pid {
            self.facts.resize_with(pid + 1, Vec::new);
        }
        self.facts[pid].push(fact);
    }

    /// `pid` seen at `time`, named `name` (0: the event names no name).
    fn sight(&mut self, pid: i32, time: u64, name: u128) {
        let Ok(pid) = usize::try_from(pid) else { return };
        if self.sightings.len() <= pid {
            self.sightings.resize(pid + 1, Sighting { first_ns: u64::MAX, ..Sighting::default() });
        }
        let seen = &mut self.sightings[pid];
        seen.first_ns = seen.first_ns.min(time);
        seen.last_ns = time;
        if name != 0 && name != seen.name {
            seen.name = name;
            let number = self.names.number(name);
            self.renames.push((pid as u32, time, number));
        }
    }
}

fn phase1(trace: &Trace, decoder: &SchedDecoder, buffer: &str, cpus: &[u32], start_ns: u64) -> Phase1 {
    let mut out = Phase1::default();
    for &cpu in cpus {
        let mut stream = trace.events_of(&Selection::one_cpu(buffer, cpu));
        // 12 bytes a segment, as the model keeps them (times cut to 32 bits: only the
        // cost counts here).
        let mut segments = Vec::new();
        let mut since = 0u64;
        while let Some(item) = stream.next() {
            let Item::Event(event) = item else { continue };
            let time = event.ts.0.saturating_sub(start_ns);
            out.sight(event.pid().0, time, 0);
            match decoder.decode_named(&event, &mut |name| name.word().unwrap_or(1)) {
                Sched::Switch { prev_pid, prev_comm, prev_state, next_pid, next_comm } => {
                    out.sight(prev_pid.0, time, prev_comm);
                    out.sight(next_pid.0, time, next_comm);
                    segments.push([since as u32, prev_pid.0 as u32, u32::from(prev_state)]);
                    out.push_fact(prev_pid.0, fact(time, cpu, Kind::SwitchOut));
                    out.push_fact(next_pid.0, fact(time, cpu, Kind::SwitchIn));
                    since = time;
                }
                Sched::Wakeup { pid, comm, target_cpu, .. } | Sched::WakeupNew { pid, comm, target_cpu } => {
                    out.sight(pid.0, time, comm);
                    out.push_fact(pid.0, fact(time, target_cpu.map_or(cpu, |c| c.0), Kind::Wakeup));
                }
                Sched::Waking { pid, comm, .. } | Sched::MigrateTask { pid, comm, .. } | Sched::Exit { pid, comm } => {
                    out.sight(pid.0, time, comm)
                }
                Sched::Fork { parent_pid, parent_comm, child_pid, child_comm } => {
                    out.sight(parent_pid.0, time, parent_comm);
                    out.sight(child_pid.0, time, child_comm);
                }
                Sched::Exec { pid, .. } => out.sight(pid.0, time, 0),
                _ => {}
            }
        }
        out.segments.push(segments);
    }
    out
}

/// Numbers the pids by their first sighting over all workers and puts the numbers in
/// every segment (each worker's segments on a thread of their own).
fn phase3(workers: &mut [Phase1]) -> usize {
    let pids = workers.iter().map(|w| w.sightings.len()).max().unwrap_or(0);
    let mut first: Vec<(u64, u32)> = (0..pids)
        .filter_map(|pid| {
            let at = workers.iter().filter_map(|w| w.sightings.get(pid)).map(|s| s.first_ns).min()?;
            (at != u64::MAX).then_some((at, pid as u32))
        })
        .collect();
    first.sort_unstable();
    let mut task_of = vec![0u32; pids];
    for (task, &(_, pid)) in first.iter().enumerate() {
        task_of[pid as usize] = task as u32;
    }
    std::thread::scope(|scope| {
        for worker in workers.iter_mut() {
            let task_of = &task_of;
            scope.spawn(move || {
                for segment in worker.segments.iter_mut().flatten() {
                    segment[1] = task_of.get(segment[1] as usize).copied().unwrap_or(0);
                }
            });
        }
    });
    first.len()
}

/// Puts each of `lists` (one task's facts from every worker) in time order and counts
/// the switch-ins of a task already running elsewhere.
fn phase2(tasks: &[Vec<&Vec<Fact>>]) -> u64 {
    let mut merged: Vec<Fact> = Vec::new();
    let mut scratch = RadixScratch::default();
    let mut overlaps = 0;
    for lists in tasks {
        merged.clear();
        lists.iter().for_each(|list| merged.extend_from_slice(list));
        // Stable least-significant-digit order: the low 32 bits, then the high ones.
        sort_by_offset(&mut merged, &mut scratch, u32::MAX, |&f| f as u32);
        let latest = merged.iter().map(|&f| (f >> 32) as u32).max().unwrap_or(0);
        sort_by_offset(&mut merged, &mut scratch, latest, |&f| (f >> 32) as u32);
        let mut running_on = None;
        for &f in &merged {
            match fact_kind(f) {
                Kind::SwitchIn => {
                    overlaps += u64::from(running_on.is_some());
                    running_on = Some(fact_cpu(f));
                }
                Kind::SwitchOut => running_on = None,
                Kind::Wakeup => {}
            }
        }
    }
    overlaps
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: two_phase_bound TRACE [THREADS]");
        std::process::exit(2);
    };
    let threads: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(2).max(1);
    let begin = Instant::now();
    let trace = Trace::open(&path).unwrap_or_else(|error| {
        eprintln!("two_phase_bound: {error}");
        std::process::exit(1);
    });
    let decoder = SchedDecoder::new(trace.formats());
    // The buffer the model reads: the top one, or the first.
    let Some(buffer) = trace.buffers().iter().find(|b| b.name.is_empty()).or(trace.buffers().first()) else {
        eprintln!("two_phase_bound: {path}: no event buffers");
        std::process::exit(1);
    };
    let cpus: Vec<u32> = buffer.cpus.iter().map(|c| c.cpu).collect();
    let start_ns = first_time(&trace, &buffer.name, &cpus);
    let mut workers: Vec<Phase1> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|w| {
                let mine: Vec<u32> = cpus.iter().copied().skip(w).step_by(threads).collect();
                let (trace, decoder, buffer) = (&trace, &decoder, buffer.name.as_str());
                scope.spawn(move || phase1(trace, decoder, buffer, &mine, start_ns))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("phase 1")).collect()
    });
    let phase1_done = begin.elapsed();
    let pids = workers.iter().map(|w| w.facts.len()).max().unwrap_or(0);
    let tasks: Vec<Vec<&Vec<Fact>>> =
        (0..pids).map(|pid| workers.iter().filter_map(|w| w.facts.get(pid)).collect()).collect();
    let overlaps: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = parts(&tasks, threads).map(|part| scope.spawn(move || phase2(part))).collect();
        handles.into_iter().map(|h| h.join().expect("phase 2")).sum()
    });
    let phase2_done = begin.elapsed();
    drop(tasks);
    let task_count = phase3(&mut workers);
    let total = begin.elapsed();
    let segments: usize = workers.iter().flat_map(|w| &w.segments).map(Vec::len).sum();
    let facts: usize = workers.iter().flat_map(|w| &w.facts).map(Vec::len).sum();
    let renames: usize = workers.iter().map(|w| w.renames.len()).sum();
    println!(
        "{threads} threads: phase 1 {:.3} s, phase 2 {:.3} s, phase 3 {:.3} s, total {:.3} s; {segments} segments, {facts} facts, {task_count} tasks, {renames} name changes, {overlaps} overlapping runs",
        secs(phase1_done),
        secs(phase2_done - phase1_done),
        secs(total - phase2_done),
        secs(total)
    );
}

/// `tasks` cut into `count` runs of about as many facts each.
fn parts<'a>(tasks: &'a [Vec<&Vec<Fact>>], count: usize) -> impl Iterator<Item = &'a [Vec<&'a Vec<Fact>>]> {
    let facts = |task: &Vec<&Vec<Fact>>| task.iter().map(|list| list.len()).sum::<usize>();
    let share = tasks.iter().map(facts).sum::<usize>().div_ceil(count).max(1);
    let mut rest = tasks;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut taken = 0;
        let end = rest.iter().position(|task| {
            taken += facts(task);
            taken >= share
        });
        let (part, after) = rest.split_at(end.map_or(rest.len(), |e| e + 1));
        rest = after;
        Some(part)
    })
}

/// The earliest first-event time of any CPU.
fn first_time(trace: &Trace, buffer: &str, cpus: &[u32]) -> u64 {
    let first = |cpu: u32| {
        let mut stream = trace.events_of(&Selection::one_cpu(buffer, cpu));
        while let Some(item) = stream.next() {
            if let Item::Event(event) = item {
                return Some(event.ts.0);
            }
        }
        None
    };
    cpus.iter().filter_map(|&cpu| first(cpu)).min().unwrap_or(0)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
