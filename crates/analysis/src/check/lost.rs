//! The one sweep `check` makes over the run segments and runqueues: per CPU, the stretches
//! in which tasks waited in its runqueue while it ran something else and some other CPU
//! idled (the CPU time the machine lost there), the overloaded stretches, and the time
//! a task waited while a core idled — all from [`sweep_cpus_in_parts`].
//!
//! Lost CPU time is counted machine-wide at every instant as the waiting tasks that could
//! have run on idle CPUs: `min(W, I)`, with `W` the tasks waiting behind a busy CPU and `I`
//! the idle CPUs; each of the `W` tasks is charged `min(W, I) / W` of it. A task queued on
//! an idle CPU about to run it is not charged (that is wakeup latency, not a core left
//! idle while another is overloaded), nor is any time where a CPU's state is unknown.
//!
//! A CPU's *piece* is a maximal stretch during which it is busy with tasks waiting behind
//! it; the piece's span is trimmed to the first and last instants it lost time. Pieces
//! carry the running total of the idle-while-waiting time at their ends, so the share of
//! that total any set of episodes covers is a subtraction.

use crate::occupancy::{CpuSweepVisitor, Cuts, IdleWhileWaiting, IdleWhileWaitingSum, Occupancy, sweep_cpus_in_parts};
use crate::window::{TaskFilter, Window};
use model::{Cpu, Model, Nanos};

/// The sweep is cut into this many parts whatever the machine: results do not depend on
/// the number of cores that computed them.
const PARTS: usize = 8;

/// Overload is judged per bin of this length (ns), on a grid from the window's start...
const BIN: u64 = 1_000_000;
/// ... or longer bins when the window would need more than this many (a window of over
/// 70 minutes, or a damaged timestamp), so the grid's size stays bounded.
const MAX_BINS: u64 = 1 << 22;

/// The overload grid's bin length for a window.
pub(crate) fn bin_ns(window: Window) -> u64 {
    BIN.max(window.len().0.div_ceil(MAX_BINS))
}

/// A stretch during which one CPU's waiting tasks lost CPU time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct LostPiece {
    pub cpu: Cpu,
    /// The first and last instants the piece lost time.
    pub start: Nanos,
    pub end: Nanos,
    pub lost: u64,
    /// The running idle-while-waiting total at `start` and `end`.
    pub marks: (u64, u64),
}

/// One bin of the overload grid.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bin {
    /// Time during which tasks waited and no CPU idled (ns).
    pub overloaded: u64,
    /// The most runnable tasks at once.
    pub most: u32,
}

/// What the sweep found.
pub(crate) struct Swept {
    /// By CPU, then time.
    pub pieces: Vec<LostPiece>,
    /// The overload grid over the window.
    pub bins: Vec<Bin>,
    pub idle_while_waiting: IdleWhileWaiting,
}

/// Sweeps `window` once.
pub(crate) fn sweep(model: &Model, window: Window, filter: &TaskFilter) -> Swept {
    let cpus = model.cpus().len();
    // Clearly more runnable tasks than CPUs: by two, or a quarter of the CPUs if more.
    let threshold = model.cpu_count() + (model.cpu_count() / 4).max(2);
    let parts = sweep_cpus_in_parts(model, window, filter, PARTS, Cuts::EqualTime, |part| {
        PartSweep::new(part, window, cpus, threshold)
    });
    let mut raw: Vec<RawPiece> = Vec::new();
    let mut bins = vec![Bin::default(); window.len().0.div_ceil(bin_ns(window)) as usize];
    let mut sum = IdleWhileWaitingSum::default();
    let mut offset = 0;
    for mut part in parts {
        part.finish();
        raw.extend(part.pieces.into_iter().map(|p| p.shifted(offset)));
        offset += part.marks;
        for (index, bin) in part.bins.iter().enumerate() {
            if let Some(total) = bins.get_mut(part.first_bin + index) {
                total.overloaded += bin.overloaded;
                total.most = total.most.max(bin.most);
            }
        }
        sum = sum.then(part.sum);
    }
    Swept { pieces: stitch(raw), bins, idle_while_waiting: sum.finish() }
}

/// A piece as one part of the sweep saw it.
#[derive(Copy, Clone, Debug)]
struct RawPiece {
    cpu: u32,
    opened: Nanos,
    closed: Nanos,
    lost: u64,
    first: Option<(Nanos, u64)>,
    last: Option<(Nanos, u64)>,
    /// Open at the part's start: it may go on from the previous part.
    continued: bool,
    /// Still open at the part's end.
    unfinished: bool,
}

impl RawPiece {
    fn shifted(mut self, offset: u64) -> RawPiece {
        self.first = self.first.map(|(t, m)| (t, m + offset));
        self.last = self.last.map(|(t, m)| (t, m + offset));
        self
    }
}

/// Joins the pieces cut by the parts' boundaries; keeps those that lost time, by CPU
/// and time.
fn stitch(mut raw: Vec<RawPiece>) -> Vec<LostPiece> {
    raw.sort_by_key(|p| (p.cpu, p.opened, p.closed));
    let mut joined: Vec<RawPiece> = Vec::with_capacity(raw.len());
    for piece in raw {
        match joined.last_mut() {
            Some(last)
                if last.cpu == piece.cpu && last.unfinished && piece.continued && last.closed == piece.opened =>
            {
                last.closed = piece.closed;
                last.lost = last.lost.saturating_add(piece.lost);
                last.first = last.first.or(piece.first);
                last.last = piece.last.or(last.last);
                last.unfinished = piece.unfinished;
            }
            _ => joined.push(piece),
        }
    }
    joined
        .into_iter()
        .filter_map(|p| {
            let ((start, m0), (end, m1)) = (p.first?, p.last?);
            (p.lost > 0).then_some(LostPiece { cpu: Cpu(p.cpu), start, end, lost: p.lost, marks: (m0, m1) })
        })
        .collect()
}

/// One CPU as the sweep follows it.
#[derive(Copy, Clone, Debug, Default)]
struct CpuNow {
    /// Tasks waiting behind it while it is busy (0 while idle or unknown).
    waiting_behind: u32,
    open: Option<Open>,
    /// Waiting for the first instant its open piece loses time.
    pending: bool,
}

#[derive(Copy, Clone, Debug)]
struct Open {
    opened: Nanos,
    /// The per-task lost total when `lost` was last brought up to date.
    charged_at: u64,
    lost: u64,
    first: Option<(Nanos, u64)>,
    continued: bool,
}

/// The sweep of one part of the window.
struct PartSweep {
    part: Window,
    cpus: Vec<CpuNow>,
    pending: Vec<u32>,
    /// Tasks waiting behind busy CPUs, machine-wide.
    waiting_behind: u32,
    /// Whether the stretch visited last lost time.
    losing: bool,
    /// Lost time charged to each waiting task so far (ns).
    per_task: u64,
    /// Idle-while-waiting time so far in this part (ns).
    marks: u64,
    /// Runnable tasks that make an overload.
    overload_threshold: u32,
    /// The part's bins of the overload grid, from `first_bin` on.
    first_bin: usize,
    bins: Vec<Bin>,
    window_start: Nanos,
    /// The grid's bin length (ns).
    bin_ns: u64,
    /// When the machine last stopped losing time, with `marks` then.
    stopped: (Nanos, u64),
    pieces: Vec<RawPiece>,
    sum: IdleWhileWaitingSum,
}

impl PartSweep {
    fn new(part: Window, window: Window, cpus: usize, overload_threshold: u32) -> PartSweep {
        let bin = |t: Nanos| (t.saturating_sub(window.start).0 / bin_ns(window)) as usize;
        let first_bin = bin(part.start);
        PartSweep {
            part,
            cpus: vec![CpuNow::default(); cpus],
            pending: Vec::new(),
            waiting_behind: 0,
            losing: false,
            per_task: 0,
            marks: 0,
            overload_threshold,
            first_bin,
            bins: vec![Bin::default(); bin(part.end) - first_bin + 1],
            window_start: window.start,
            bin_ns: bin_ns(window),
            stopped: (part.start, 0),
            pieces: Vec::new(),
            sum: IdleWhileWaitingSum::default(),
        }
    }

    /// Brings an open piece's lost time up to date.
    fn charge(&mut self, cpu: usize) {
        let now = &mut self.cpus[cpu];
        if let Some(open) = now.open.as_mut() {
            // Saturating: tasks × ns passes u64 for stretches near the end of time.
            let lost = u64::from(now.waiting_behind).saturating_mul(self.per_task - open.charged_at);
            open.lost = open.lost.saturating_add(lost);
            open.charged_at = self.per_task;
        }
    }

    /// The last instant up to `time` that the machine lost time, with `marks` then.
    fn last_losing(&self, time: Nanos) -> (Nanos, u64) {
        if self.losing { (time, self.marks) } else { self.stopped }
    }

    fn close(&mut self, cpu: usize, time: Nanos, unfinished: bool) {
        self.charge(cpu);
        let Some(open) = self.cpus[cpu].open.take() else { return };
        let last = (open.lost > 0).then(|| self.last_losing(time));
        self.pieces.push(RawPiece {
            cpu: cpu as u32,
            opened: open.opened,
            closed: time,
            lost: open.lost,
            first: open.first,
            last,
            continued: open.continued,
            unfinished,
        });
    }

    /// Closes the pieces still open at the part's end.
    fn finish(&mut self) {
        for cpu in 0..self.cpus.len() {
            self.close(cpu, self.part.end, true);
        }
    }

    /// Adds a stretch to the overload grid: overloaded when runnable tasks clearly
    /// outnumber the CPUs and none idles (waiting is inevitable).
    fn overload(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
        let runnable = occupancy.running + occupancy.waiting;
        if runnable < self.overload_threshold || occupancy.idle > 0 {
            return;
        }
        let mut from = start.saturating_sub(self.window_start).0;
        let until = end.saturating_sub(self.window_start).0;
        while from < until {
            let index = (from / self.bin_ns) as usize;
            // Saturating: a bin at the end of time would end past u64::MAX.
            let to = until.min((from - from % self.bin_ns).saturating_add(self.bin_ns));
            if let Some(bin) = index.checked_sub(self.first_bin).and_then(|i| self.bins.get_mut(i)) {
                bin.overloaded += to - from;
                bin.most = bin.most.max(runnable);
            }
            from = to;
        }
    }
}

impl CpuSweepVisitor for PartSweep {
    fn stretch(&mut self, start: Nanos, end: Nanos, occupancy: Occupancy) {
        self.sum.add(start, end, occupancy);
        self.overload(start, end, occupancy);
        let losing = self.waiting_behind > 0 && occupancy.idle > 0;
        if self.losing && !losing {
            self.stopped = (start, self.marks);
        }
        self.losing = losing;
        if losing {
            for cpu in self.pending.drain(..) {
                let now = &mut self.cpus[cpu as usize];
                now.pending = false;
                if let Some(open) = now.open.as_mut() {
                    open.first.get_or_insert((start, self.marks));
                }
            }
            let (length, waiting) = (u128::from(end.saturating_sub(start).0), u128::from(self.waiting_behind));
            self.per_task += (length * waiting.min(u128::from(occupancy.idle)) / waiting) as u64;
        }
        if occupancy.waiting_while_idle() {
            self.marks += end.saturating_sub(start).0;
        }
    }

    fn cpu(&mut self, time: Nanos, cpu: Cpu, counts: Occupancy) {
        let index = cpu.index();
        let busy = counts.known > 0 && counts.idle == 0;
        let behind = if busy { counts.waiting } else { 0 };
        let before = self.cpus[index].waiting_behind;
        if behind == before {
            return;
        }
        self.charge(index);
        self.waiting_behind = self.waiting_behind - before + behind;
        self.cpus[index].waiting_behind = behind;
        if behind == 0 {
            self.close(index, time, false);
        } else if before == 0 {
            let continued = time == self.part.start;
            let now = &mut self.cpus[index];
            now.open = Some(Open { opened: time, charged_at: self.per_task, lost: 0, first: None, continued });
            if !now.pending {
                now.pending = true;
                self.pending.push(cpu.0);
            }
        }
    }
}
