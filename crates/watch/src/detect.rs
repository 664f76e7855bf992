//! Detection on what has arrived: every tick (about twice a second), the ring's recent
//! part up to the watermark becomes a trace (`snapshot::in_memory`), its model is built
//! and `check`'s episode search runs on it, exactly as `schedlens check` would on that
//! file. An episode is reported once it has ended `settle` before the watermark (so a
//! continuing episode is reported once, at its end, and later events cannot extend it),
//! and never again: a later tick that finds it again (overlapping in time on a shared
//! CPU) knows it. An episode that touches a stretch where the kernel lost events is
//! never reported: what happened there is unknown.
//!
//! The analysed part starts `lookback` before the watermark, or earlier: at the start of
//! an episode still open (it must be seen whole), or, when a tick comes late, `2 settle`
//! before the previous watermark; never before the ring's start.

use crate::WatchError;
use crate::ring::Ring;
use crate::snapshot::{Setup, in_memory};
use analysis::check::{Affinity, CheckRequest, Incident, Kind, check};
use analysis::{TaskFilter, Window};
use model::{Cpu, Detail, Model, Nanos};
use std::path::PathBuf;

/// How detection runs.
#[derive(Clone, Debug)]
pub struct DetectOptions {
    /// Episodes losing less CPU time are not incidents.
    pub min_lost: Nanos,
    /// An episode is final once it ended this long before the watermark.
    pub settle_ns: u64,
    /// How far back each tick looks at least (longer than `settle` plus a tick).
    pub lookback_ns: u64,
    /// Where the snapshots' spill files go.
    pub spill_dir: PathBuf,
}

/// What was found so far, for the summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Time analysed to its end (up to the last watermark), from the first one.
    pub watched_ns: u64,
    /// Within it, time during which a task waited while a CPU idled.
    pub idle_while_waiting_ns: u64,
    /// Episodes left out because events were lost around them.
    pub suppressed_by_losses: u64,
    /// Incidents by kind, in `Kind::ALL` order.
    pub incidents: [u64; 5],
    pub ticks: u64,
}

/// The streaming detector.
#[derive(Debug)]
pub struct Detector {
    options: DetectOptions,
    /// Reported episodes: their span and CPUs.
    reported: Vec<(u64, u64, Vec<Cpu>)>,
    /// The start of the earliest episode seen but not yet final.
    open_since: Option<u64>,
    /// The watermark of the previous tick.
    analysed_until: Option<u64>,
    pub totals: Totals,
}

impl Detector {
    pub fn new(options: DetectOptions) -> Detector {
        Detector { options, reported: Vec::new(), open_since: None, analysed_until: None, totals: Totals::default() }
    }

    /// Where the ring may forget up to, for incidents to have `keep_ns` before them: the
    /// watermark (or the start of an open episode) less `keep_ns`.
    pub fn keep_from(&self, watermark: u64, keep_ns: u64) -> u64 {
        self.open_since.unwrap_or(watermark).min(watermark).saturating_sub(keep_ns)
    }

    /// Whether an episode is still open (seen, not yet final).
    pub fn open_since(&self) -> Option<u64> {
        self.open_since
    }

    /// One tick: the new incidents final at `watermark`, oldest first. With `at_end`,
    /// the recording is over and every episode up to the watermark is final.
    pub fn tick(
        &mut self,
        setup: &Setup,
        ring: &Ring,
        watermark: u64,
        at_end: bool,
    ) -> Result<Vec<Incident>, WatchError> {
        let Some(ring_start) = ring.start_ns() else { return Ok(Vec::new()) };
        if self.analysed_until.is_some_and(|until| watermark <= until) && !at_end {
            return Ok(Vec::new());
        }
        let back = watermark.saturating_sub(self.options.lookback_ns).min(self.resume_from());
        let from = self.open_since.map_or(back, |open| open.min(back)).max(ring_start);
        let trace = in_memory(setup, ring, (from, watermark), &self.options.spill_dir)?;
        let model = match Model::build(&trace, Detail::FULL, &mut |_| {}) {
            Ok((model, _)) => model,
            // No sched_switch yet in the stretch: nothing to find.
            Err(_) => return Ok(Vec::new()),
        };
        let window = Window::new(Nanos(from.max(model.start().0)), Nanos(watermark + u64::from(at_end)));
        let affinity = Affinity::recorded(&setup.context);
        let filter = TaskFilter::default();
        let request = CheckRequest {
            window,
            filter: &filter,
            min_lost: self.options.min_lost,
            min_overload: Nanos(u64::MAX),
            affinity: affinity.as_ref(),
        };
        let findings = check(&model, &request);
        self.count_new_stretch(&model, &request, watermark, &findings);
        let mut found: Vec<Incident> = Vec::new();
        self.open_since = None;
        let mut episodes: Vec<&Incident> = findings.episodes().collect();
        episodes.sort_by_key(|e| (e.start, e.end));
        for episode in episodes {
            let (start, end) = (episode.start.0, episode.end.0);
            if !at_end && end.saturating_add(self.options.settle_ns) > watermark {
                self.open_since = Some(self.open_since.map_or(start, |s| s.min(start)));
                continue;
            }
            if self.reported.iter().any(|(s, e, cpus)| start <= *e && *s <= end && shares_cpu(cpus, &episode.cpus)) {
                continue;
            }
            self.reported.push((start, end, episode.cpus.clone()));
            if ring.losses().iter().any(|l| l.after_ns <= end && start <= l.before_ns) {
                self.totals.suppressed_by_losses += 1;
                continue;
            }
            self.totals.incidents[kind_index(episode.kind)] += 1;
            found.push(episode.clone());
        }
        // Reported episodes the ring no longer shows cannot be met again.
        self.reported.retain(|(_, end, _)| *end >= from);
        self.totals.ticks += 1;
        Ok(found)
    }

    /// Where a tick must start at the latest: the first at the ring's start; a later one
    /// before what the previous tick could not call final (it ended less than `settle`
    /// before that watermark), with as much again before it for the start of an episode
    /// that was not one yet. A tick is late when the machine is loaded, and a stretch no
    /// tick analyses would hide its episodes.
    fn resume_from(&self) -> u64 {
        self.analysed_until.map_or(0, |until| until.saturating_sub(2 * self.options.settle_ns))
    }

    /// Adds the stretch since the previous tick to the time watched and its
    /// idle-while-waiting time (the sweep `check` makes, over that stretch alone).
    fn count_new_stretch(
        &mut self,
        model: &Model,
        request: &CheckRequest<'_>,
        watermark: u64,
        findings: &analysis::check::Findings,
    ) {
        let since = self.analysed_until.unwrap_or(request.window.start.0).max(request.window.start.0);
        self.analysed_until = Some(watermark);
        if since >= watermark {
            return;
        }
        self.totals.watched_ns += watermark - since;
        if since == request.window.start.0 {
            self.totals.idle_while_waiting_ns += findings.idle_while_waiting.0;
            return;
        }
        let part = Window::new(Nanos(since), Nanos(watermark));
        self.totals.idle_while_waiting_ns +=
            analysis::occupancy::idle_while_waiting(model, part, request.filter).total.0;
    }
}

fn shares_cpu(a: &[Cpu], b: &[Cpu]) -> bool {
    a.iter().any(|cpu| b.contains(cpu))
}

fn kind_index(kind: Kind) -> usize {
    Kind::ALL.iter().position(|&k| k == kind).unwrap_or(0)
}
