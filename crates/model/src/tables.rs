//! The model's tables: run segments and runqueue pieces per CPU, wait stretches, wakeups
//! and migrations. Each row type says here how it is stored (compact rows, see `columns`:
//! 12 to 24 bytes, times as offsets) and read back as a plain value, and what only its
//! table does; `table` gives every table the same accessors. The storage is private, so
//! the model's invariants (rows in time order, ids that point somewhere) hold by
//! construction.

use crate::columns::Durations;
use crate::table::{ByRow, MigrationId, Row, Table, WaitId, WakeupId, sealed::Layout};
use crate::tasks::TaskId;
use std::ops::Range;
use tracedat::{Cpu, Nanos};

/// The largest number of CPUs the model holds; CPU numbers are stored in 16 bits, with
/// `u16::MAX` meaning "none".
pub const MAX_CPUS: u32 = u16::MAX as u32;
const NO_CPU: u16 = u16::MAX;

/// A CPU number in 16 bits (the tracker only stores CPUs below [`MAX_CPUS`]).
fn cpu16(cpu: Cpu) -> u16 {
    debug_assert!(cpu.0 < MAX_CPUS);
    cpu.0 as u16
}

fn opt_cpu16(cpu: Option<Cpu>) -> u16 {
    cpu.map_or(NO_CPU, cpu16)
}

fn cpu_of(raw: u16) -> Option<Cpu> {
    (raw != NO_CPU).then_some(Cpu(u32::from(raw)))
}

/// How a run segment ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SegmentEnd {
    /// Switched out while still runnable (`prev_state` R or R+).
    Preempted,
    /// Switched out to sleep (S, D, I, ...; see `prev_state`).
    Blocked,
    /// Switched out for the last time after `sched_process_exit`.
    Exited,
    /// Still running at the CPU's last event.
    TraceEnd,
    /// Events were lost on the CPU; what happened next is unknown.
    Lost,
    /// The CPU went on to another task without a recorded `sched_switch`: the segment
    /// ends at the last event that showed the task running.
    Unrecorded,
}

const SEGMENT_ENDS: [SegmentEnd; 6] = [
    SegmentEnd::Preempted,
    SegmentEnd::Blocked,
    SegmentEnd::Exited,
    SegmentEnd::TraceEnd,
    SegmentEnd::Lost,
    SegmentEnd::Unrecorded,
];

/// Segment flags.
pub mod segment_flags {
    /// Began without a recorded `sched_switch` to the task: already running at the
    /// CPU's first event, or first seen running after an unrecorded switch.
    pub const NO_SWITCH_IN: u8 = 1;
}

/// One stretch of a task running on a CPU: `[start, end)`. The idle task's segments
/// make idle time explicit, so a CPU's known time is covered without gaps except where
/// events were lost.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start: Nanos,
    pub end: Nanos,
    pub task: TaskId,
    pub end_kind: SegmentEnd,
    pub flags: u8,
    /// The raw `prev_state` of the switch that ended it (0 when not ended by a switch).
    pub prev_state: u16,
}

impl Segment {
    pub fn duration(&self) -> Nanos {
        self.end.saturating_sub(self.start)
    }

    pub fn started_by_switch(&self) -> bool {
        self.flags & segment_flags::NO_SWITCH_IN == 0
    }
}

/// In a segment's packed bits: the end kind (3 bits), its flags, and whether its end is
/// stored (rather than being the next segment's start).
const KIND_MASK: u8 = 0b111;
const FLAGS_SHIFT: u32 = 3;
const STORED_END: u8 = 1 << 7;

/// A stored segment: its start as an offset, its task, its `prev_state` and packed bits.
#[derive(Copy, Clone, Debug)]
#[repr(C)]
pub struct SegmentRow {
    start: u32,
    task: TaskId,
    prev_state: u16,
    bits: u8,
}

/// Beside a CPU's segments: the ends that are not the next segment's start.
#[derive(Clone, Debug, Default)]
pub struct SegmentEnds {
    /// Ends of segments other than the last that are not the next one's start, by row.
    stored: Vec<(usize, Nanos)>,
    last: Nanos,
}

impl Layout for Segment {
    type Stored = SegmentRow;
    type Aside = SegmentEnds;
    type Iter<'a> = SegmentIter<'a>;

    #[inline]
    fn time_offset(stored: &SegmentRow) -> u32 {
        stored.start
    }

    fn read(table: &Segments, index: usize) -> Segment {
        table.iter_range(index..index + 1).next().expect("index in range")
    }

    #[inline]
    fn iter_range(segments: &Segments, range: Range<usize>) -> SegmentIter<'_> {
        SegmentIter { segments, next: range.start, end: range.end, next_start: None }
    }

    fn aside_bytes(ends: &SegmentEnds) -> usize {
        ends.stored.capacity() * 16
    }
}

impl Row for Segment {
    type Id = usize;
}

/// One CPU's run segments, in time order, not overlapping. Most segments end where the
/// next begins, so only the other ends are stored.
pub type Segments = Table<Segment>;

impl Segments {
    /// Appends a segment; it must start no earlier than the previous one ends (the
    /// tracker's clock never goes backwards).
    #[inline]
    pub(crate) fn push(&mut self, row: Segment) {
        let len = self.len();
        if len > 0 && self.aside.last != row.start {
            self.store_previous_end(len - 1);
        }
        debug_assert!(len == 0 || self.aside.last <= row.start);
        let kind = SEGMENT_ENDS.iter().position(|&k| k == row.end_kind).unwrap_or(0) as u8;
        let start = self.times.encode(len, row.start);
        self.rows.push(SegmentRow {
            start,
            task: row.task,
            prev_state: row.prev_state,
            bits: kind | (row.flags << FLAGS_SHIFT),
        });
        self.aside.last = row.end;
    }

    #[cold]
    fn store_previous_end(&mut self, index: usize) {
        self.aside.stored.push((index, self.aside.last));
        if let Some(row) = self.rows.last_mut() {
            row.bits |= STORED_END;
        }
    }

    #[inline]
    pub fn end(&self, index: usize) -> Nanos {
        if index + 1 == self.len() {
            self.aside.last
        } else if self.rows.get(index).bits & STORED_END != 0 {
            self.stored_end(index)
        } else {
            self.start(index + 1)
        }
    }

    #[cold]
    fn stored_end(&self, index: usize) -> Nanos {
        let stored = &self.aside.stored;
        stored[stored.partition_point(|&(row, _)| row < index)].1
    }

    #[inline]
    pub fn task(&self, index: usize) -> TaskId {
        self.rows.get(index).task
    }

    /// The tasks of all segments, in order (cheaper than whole rows).
    pub fn tasks(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.rows.iter().map(|row| row.task)
    }

    /// Indices of the segments overlapping `[start, end)` (a binary search).
    pub fn overlapping(&self, start: Nanos, end: Nanos) -> Range<usize> {
        let first = self.first_ending_after(start);
        let last = self.first_starting_at_or_after(end);
        first..last.max(first)
    }

    /// The first segment that ends after `time` (the one under way then, or the next).
    /// Segments do not overlap, so it is the last one starting by `time` or the next.
    pub fn first_ending_after(&self, time: Nanos) -> usize {
        let next = self.first_starting_after(time);
        match next.checked_sub(1) {
            Some(last) if self.end(last) > time => last,
            _ => next,
        }
    }

    /// The first segment that ends at or after `time`.
    pub fn first_ending_at_or_after(&self, time: Nanos) -> usize {
        let next = self.first_starting_at_or_after(time);
        match next.checked_sub(1) {
            Some(last) if self.end(last) >= time => last,
            _ => next,
        }
    }
}

/// The segments of a range, in order, each start decoded once (see [`Table::iter_range`]).
pub struct SegmentIter<'a> {
    segments: &'a Segments,
    next: usize,
    end: usize,
    /// The next segment's start, when known (the end of the last one returned).
    next_start: Option<Nanos>,
}

impl Iterator for SegmentIter<'_> {
    type Item = Segment;

    #[inline]
    fn next(&mut self) -> Option<Segment> {
        let index = self.next;
        if index >= self.end {
            return None;
        }
        self.next += 1;
        let segments = self.segments;
        let row = segments.rows.get(index);
        let start = self.next_start.take().unwrap_or_else(|| segments.times.decode(index, row.start));
        let end = if index + 1 == segments.len() {
            segments.aside.last
        } else if row.bits & STORED_END != 0 {
            segments.stored_end(index)
        } else {
            let next = segments.start(index + 1);
            self.next_start = Some(next);
            next
        };
        Some(Segment {
            start,
            end,
            task: row.task,
            end_kind: SEGMENT_ENDS[usize::from(row.bits & KIND_MASK)],
            flags: (row.bits & !STORED_END) >> FLAGS_SHIFT,
            prev_state: row.prev_state,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.end - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for SegmentIter<'_> {}

/// How a task's wait in a runqueue ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WaitEnd {
    /// It got the CPU.
    Ran,
    /// It ran, but the switch to it was not recorded (a task queued on an idle CPU that
    /// later shows idle again): the wait ends where it was enqueued, its run is uncertain.
    Unrecorded,
    /// Still waiting at the end of the trace.
    TraceEnd,
    /// Events were lost on its CPU; the wait's end is unknown.
    Lost,
}

const WAIT_ENDS: [WaitEnd; 4] = [WaitEnd::Ran, WaitEnd::Unrecorded, WaitEnd::TraceEnd, WaitEnd::Lost];

/// Why a task became runnable.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WaitCause {
    Wakeup,
    NewTask,
    Preempted,
}

const WAIT_CAUSES: [WaitCause; 3] = [WaitCause::Wakeup, WaitCause::NewTask, WaitCause::Preempted];

/// A stretch of time a task was runnable but not running, from becoming runnable to
/// getting a CPU; it may move between runqueues on the way (see [`QueuePiece`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    pub task: TaskId,
    pub start: Nanos,
    pub end: Nanos,
    pub cause: WaitCause,
    pub end_kind: WaitEnd,
    /// The CPU it ran on (meaningful when `end_kind` is `Ran`).
    pub ran_on: Cpu,
}

impl Wait {
    pub fn duration(&self) -> Nanos {
        self.end.saturating_sub(self.start)
    }
}

/// A stored wait.
#[derive(Copy, Clone, Debug)]
#[repr(C)]
pub struct WaitRow {
    task: TaskId,
    start: u32,
    duration: u32,
    ran_on: u16,
    /// Cause (low 2 bits) and end kind (next 2 bits).
    bits: u8,
}

impl Layout for Wait {
    type Stored = WaitRow;
    type Aside = Durations;
    type Iter<'a> = ByRow<'a, Wait>;

    #[inline]
    fn time_offset(stored: &WaitRow) -> u32 {
        stored.start
    }

    fn read(table: &Waits, index: usize) -> Wait {
        let row = table.rows.get(index);
        let start = table.times.decode(index, row.start);
        Wait {
            task: row.task,
            start,
            end: start + table.aside.decode(index, row.duration),
            cause: WAIT_CAUSES[usize::from(row.bits & 0b11)],
            end_kind: WAIT_ENDS[usize::from(row.bits >> 2 & 0b11)],
            ran_on: Cpu(u32::from(row.ran_on)),
        }
    }

    fn iter_range(table: &Waits, range: Range<usize>) -> ByRow<'_, Wait> {
        ByRow::new(table, range)
    }

    fn aside_bytes(durations: &Durations) -> usize {
        durations.heap_bytes()
    }
}

impl Row for Wait {
    type Id = WaitId;
}

/// All waits of a trace, in order of their start.
pub type Waits = Table<Wait>;

impl Waits {
    /// Starts a wait (open until [`Waits::end`]).
    pub(crate) fn begin(&mut self, task: TaskId, start: Nanos, cause: WaitCause, queue: Cpu) -> WaitId {
        let (id, index) = (self.next_id(), self.len());
        let cause = WAIT_CAUSES.iter().position(|&c| c == cause).unwrap_or(0) as u8;
        let trace_end = WAIT_ENDS.iter().position(|&e| e == WaitEnd::TraceEnd).unwrap_or(0) as u8;
        let start = self.times.encode(index, start);
        self.rows.push(WaitRow { task, start, duration: 0, ran_on: cpu16(queue), bits: cause | trace_end << 2 });
        id
    }

    /// Ends wait `id` at `end` (no earlier than its start).
    pub(crate) fn end(&mut self, id: WaitId, end: Nanos, how: WaitEnd, ran_on: Cpu) {
        self.set_end(id, end);
        let how = WAIT_ENDS.iter().position(|&e| e == how).unwrap_or(0) as u8;
        let row = self.rows.get_mut(id.index());
        row.bits = (row.bits & 0b11) | how << 2;
        row.ran_on = cpu16(ran_on);
    }

    /// Sets the end of a wait (still open at the end of the trace, when called alone).
    pub(crate) fn set_end(&mut self, id: WaitId, end: Nanos) {
        let start = self.start(id);
        let index = id.index();
        let row = self.rows.get_mut(index);
        row.duration = self.aside.encode(index, row.duration, end.saturating_sub(start));
    }

    #[inline]
    pub fn task(&self, id: WaitId) -> TaskId {
        self.rows.get(id.index()).task
    }

    #[inline]
    pub fn start(&self, id: WaitId) -> Nanos {
        self.filed_at(id.index())
    }
}

/// Part of a wait spent on one CPU's runqueue.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueuePiece {
    pub start: Nanos,
    pub end: Nanos,
    /// The wait it is part of (in a model built with waits, see [`crate::Detail`]).
    pub wait: Option<WaitId>,
}

/// A stored runqueue piece.
#[derive(Copy, Clone, Debug)]
#[repr(C)]
pub struct PieceRow {
    start: u32,
    duration: u32,
    wait: Option<WaitId>,
}

/// Pieces per block of the index of ends ([`QueuePieces::open_at`]).
const END_BLOCK: usize = 64;

/// Beside a CPU's runqueue pieces: their long durations and the index of their ends.
#[derive(Clone, Debug, Default)]
pub struct PieceEnds {
    durations: Durations,
    /// Per block of [`END_BLOCK`] pieces: the latest end in the block, and the latest end
    /// in it and every block before (so a search finds the first block that may still be
    /// open at a time, and blocks over by then are skipped).
    block_last_end: Vec<Nanos>,
    reach: Vec<Nanos>,
}

impl Layout for QueuePiece {
    type Stored = PieceRow;
    type Aside = PieceEnds;
    type Iter<'a> = ByRow<'a, QueuePiece>;

    #[inline]
    fn time_offset(stored: &PieceRow) -> u32 {
        stored.start
    }

    fn read(table: &QueuePieces, index: usize) -> QueuePiece {
        QueuePiece { start: table.start(index), end: table.end_of(index), wait: table.wait(index) }
    }

    fn iter_range(table: &QueuePieces, range: Range<usize>) -> ByRow<'_, QueuePiece> {
        ByRow::new(table, range)
    }

    fn aside_bytes(ends: &PieceEnds) -> usize {
        ends.durations.heap_bytes()
            + (ends.block_last_end.capacity() + ends.reach.capacity()) * std::mem::size_of::<Nanos>()
    }
}

impl Row for QueuePiece {
    type Id = usize;
}

/// One CPU's runqueue pieces, in order of their start.
pub type QueuePieces = Table<QueuePiece>;

impl QueuePieces {
    pub(crate) fn begin(&mut self, start: Nanos, wait: Option<WaitId>) -> u32 {
        let index = self.len();
        match self.aside.block_last_end.get_mut(index / END_BLOCK) {
            Some(latest) => *latest = (*latest).max(start),
            None => self.aside.block_last_end.push(start),
        }
        let start = self.times.encode(index, start);
        self.rows.push(PieceRow { start, duration: 0, wait });
        index as u32
    }

    pub(crate) fn end(&mut self, index: u32, end: Nanos) {
        let index = index as usize;
        let start = self.start(index);
        let row = self.rows.get_mut(index);
        row.duration = self.aside.durations.encode(index, row.duration, end.saturating_sub(start));
        let latest = &mut self.aside.block_last_end[index / END_BLOCK];
        *latest = (*latest).max(end);
    }

    #[inline]
    pub fn end_of(&self, index: usize) -> Nanos {
        let row = self.rows.get(index);
        self.times.decode(index, row.start) + self.aside.durations.decode(index, row.duration)
    }

    /// The wait piece `index` is part of (in a model built with waits).
    #[inline]
    pub fn wait(&self, index: usize) -> Option<WaitId> {
        self.rows.get(index).wait
    }

    /// The pieces under way at `time` (begun before it, ending at or after it), in start
    /// order: a piece begun long before may still be open, so this looks through the
    /// index of ends instead of every earlier piece.
    pub fn open_at(&self, time: Nanos) -> impl Iterator<Item = usize> + '_ {
        let before = self.first_starting_at_or_after(time);
        let first_block = self.aside.reach.partition_point(|&end| end < time);
        (first_block..before.div_ceil(END_BLOCK))
            .filter(move |&block| self.aside.block_last_end[block] >= time)
            .flat_map(move |block| block * END_BLOCK..((block + 1) * END_BLOCK).min(before))
            .filter(move |&i| self.end_of(i) >= time)
    }

    /// Completes the index of ends once every piece has ended (each block's latest end
    /// was kept as its pieces began and ended: no pass over the pieces again).
    pub(crate) fn index_ends(&mut self) {
        self.aside.reach = self
            .aside
            .block_last_end
            .iter()
            .scan(Nanos(0), |latest, &end| {
                *latest = (*latest).max(end);
                Some(*latest)
            })
            .collect();
    }
}

/// Whether a wakeup made a new task runnable or woke a sleeping one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WakeupKind {
    Wakeup,
    NewTask,
}

/// A wakeup: who woke whom, where the wakee ran before and where it was placed. When
/// it was enqueued and when and where it then ran are its wait's start, end and CPU.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Wakeup {
    pub kind: WakeupKind,
    pub wakee: TaskId,
    /// `sched_waking` time (the wakeup's start), when recorded.
    pub waking: Option<Nanos>,
    /// The task running where `sched_waking` was emitted (idle for interrupts).
    pub waker: Option<TaskId>,
    pub waker_cpu: Option<Cpu>,
    /// The CPU the wakee last ran on.
    pub prev_cpu: Option<Cpu>,
    /// The CPU whose runqueue it was put on.
    pub target_cpu: Cpu,
    /// The wait the wakeup began, once the wakee was enqueued (in a model built with
    /// waits).
    pub wait: Option<WaitId>,
}

const NEW_TASK: u8 = 1;
const HAS_WAKING: u8 = 2;

/// A stored wakeup.
#[derive(Copy, Clone, Debug)]
#[repr(C)]
pub struct WakeupRow {
    /// `sched_waking` time, or the enqueue time without one.
    time: u32,
    wakee: TaskId,
    waker: TaskId,
    wait: Option<WaitId>,
    waker_cpu: u16,
    prev_cpu: u16,
    target_cpu: u16,
    bits: u8,
}

impl Layout for Wakeup {
    type Stored = WakeupRow;
    type Aside = ();
    type Iter<'a> = ByRow<'a, Wakeup>;

    #[inline]
    fn time_offset(stored: &WakeupRow) -> u32 {
        stored.time
    }

    fn read(table: &Wakeups, index: usize) -> Wakeup {
        let row = table.rows.get(index);
        let waking = row.bits & HAS_WAKING != 0;
        Wakeup {
            kind: if row.bits & NEW_TASK != 0 { WakeupKind::NewTask } else { WakeupKind::Wakeup },
            wakee: row.wakee,
            waking: waking.then(|| table.times.decode(index, row.time)),
            waker: waking.then_some(row.waker),
            waker_cpu: cpu_of(row.waker_cpu),
            prev_cpu: cpu_of(row.prev_cpu),
            target_cpu: Cpu(u32::from(row.target_cpu)),
            wait: row.wait,
        }
    }

    fn iter_range(table: &Wakeups, range: Range<usize>) -> ByRow<'_, Wakeup> {
        ByRow::new(table, range)
    }

    fn aside_bytes(_: &()) -> usize {
        0
    }
}

impl Row for Wakeup {
    type Id = WakeupId;
}

/// All wakeups of a trace, in order of their start.
pub type Wakeups = Table<Wakeup>;

impl Wakeups {
    /// A wakeup starting at `time`: with `sched_waking` when `waker` is given (task and
    /// CPU), else at its enqueue.
    pub(crate) fn begin(
        &mut self,
        time: Nanos,
        wakee: TaskId,
        waker: Option<(TaskId, Cpu)>,
        prev_cpu: Option<Cpu>,
        target_cpu: Cpu,
    ) -> WakeupId {
        let (id, index) = (self.next_id(), self.len());
        let time = self.times.encode(index, time);
        self.rows.push(WakeupRow {
            time,
            wakee,
            waker: waker.map_or(TaskId::IDLE, |(task, _)| task),
            wait: None,
            waker_cpu: opt_cpu16(waker.map(|(_, cpu)| cpu)),
            prev_cpu: opt_cpu16(prev_cpu),
            target_cpu: cpu16(target_cpu),
            bits: if waker.is_some() { HAS_WAKING } else { 0 },
        });
        id
    }

    /// The wakee of wakeup `id` was enqueued on `target` (wait `wait`).
    pub(crate) fn enqueued(&mut self, id: WakeupId, kind: WakeupKind, target: Cpu, wait: Option<WaitId>) {
        let row = self.rows.get_mut(id.index());
        let bits = row.bits & !NEW_TASK;
        row.bits = if kind == WakeupKind::NewTask { bits | NEW_TASK } else { bits };
        row.target_cpu = cpu16(target);
        row.wait = wait;
    }

    /// The wait wakeup `id` began, if its wakee was enqueued.
    #[inline]
    pub fn wait(&self, id: WakeupId) -> Option<WaitId> {
        self.rows.get(id.index()).wait
    }
}

/// Why a task moved between CPUs, as far as the trace tells.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MigrationReason {
    /// Placed on another CPU while being woken (`select_task_rq` at wakeup).
    WakeupPlacement,
    /// A new task placed at fork or `wakeup_new`.
    ForkPlacement,
    /// A queued, runnable task pulled or pushed by load balancing.
    LoadBalance,
    /// Moved by a CPU stopper thread (`migration/N`): active balancing, exec balancing,
    /// affinity changes.
    Stopper,
    /// A sleeping task moved (affinity change, CPU hotplug).
    Other,
    /// No `sched_migrate_task` was seen: the task simply ran on another CPU.
    Inferred,
}

const MIGRATION_REASONS: [MigrationReason; 6] = [
    MigrationReason::WakeupPlacement,
    MigrationReason::ForkPlacement,
    MigrationReason::LoadBalance,
    MigrationReason::Stopper,
    MigrationReason::Other,
    MigrationReason::Inferred,
];

/// A move of a task from one CPU to another.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Migration {
    pub time: Nanos,
    pub task: TaskId,
    pub from: Cpu,
    pub to: Cpu,
    pub reason: MigrationReason,
}

/// A stored migration.
#[derive(Copy, Clone, Debug)]
#[repr(C)]
pub struct MigrationRow {
    time: u32,
    task: TaskId,
    from: u16,
    to: u16,
    reason: u8,
}

impl Layout for Migration {
    type Stored = MigrationRow;
    type Aside = ();
    type Iter<'a> = ByRow<'a, Migration>;

    #[inline]
    fn time_offset(stored: &MigrationRow) -> u32 {
        stored.time
    }

    fn read(table: &Migrations, index: usize) -> Migration {
        let row = table.rows.get(index);
        Migration {
            time: table.times.decode(index, row.time),
            task: row.task,
            from: Cpu(u32::from(row.from)),
            to: Cpu(u32::from(row.to)),
            reason: MIGRATION_REASONS[usize::from(row.reason)],
        }
    }

    fn iter_range(table: &Migrations, range: Range<usize>) -> ByRow<'_, Migration> {
        ByRow::new(table, range)
    }

    fn aside_bytes(_: &()) -> usize {
        0
    }
}

impl Row for Migration {
    type Id = MigrationId;
}

/// All migrations of a trace, in time order.
pub type Migrations = Table<Migration>;

impl Migrations {
    pub(crate) fn push(&mut self, row: Migration) {
        let time = self.times.encode(self.len(), row.time);
        let reason = MIGRATION_REASONS.iter().position(|&r| r == row.reason).unwrap_or(0) as u8;
        self.rows.push(MigrationRow { time, task: row.task, from: cpu16(row.from), to: cpu16(row.to), reason });
    }

    #[inline]
    pub fn time(&self, id: MigrationId) -> Nanos {
        self.filed_at(id.index())
    }
}

/// Everything known about one CPU.
#[derive(Clone, Debug, Default)]
pub struct CpuTimeline {
    pub(crate) cpu: Cpu,
    pub(crate) first_event: Option<Nanos>,
    pub(crate) last_event: Option<Nanos>,
    pub(crate) segments: Segments,
    pub(crate) queue: QueuePieces,
    pub(crate) uncertain: Vec<(Nanos, Nanos)>,
    pub(crate) lost_events: u64,
    pub(crate) lost_unknown: u64,
}

impl CpuTimeline {
    pub(crate) fn new(cpu: Cpu) -> CpuTimeline {
        CpuTimeline { cpu, ..CpuTimeline::default() }
    }

    pub fn cpu(&self) -> Cpu {
        self.cpu
    }

    /// First and last events recorded on this CPU (of any type).
    pub fn first_event(&self) -> Option<Nanos> {
        self.first_event
    }

    pub fn last_event(&self) -> Option<Nanos> {
        self.last_event
    }

    /// Run segments (idle included), in time order.
    pub fn segments(&self) -> &Segments {
        &self.segments
    }

    /// Runqueue pieces of waiting tasks, ordered by start.
    pub fn queue(&self) -> &QueuePieces {
        &self.queue
    }

    /// Stretches whose state is unknown because events were lost, in time order.
    pub fn uncertain(&self) -> &[(Nanos, Nanos)] {
        &self.uncertain
    }

    /// Events the kernel reported lost with a count.
    pub fn lost_events(&self) -> u64 {
        self.lost_events
    }

    /// Losses the kernel reported without a count.
    pub fn lost_unknown(&self) -> u64 {
        self.lost_unknown
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.segments.heap_bytes() + self.queue.heap_bytes() + self.uncertain.capacity() * 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_pieces_are_found_through_the_index_of_ends() {
        // 1,000 pieces, one every 10 ns, most 5 ns long, every 97th 3,000 ns long.
        let mut queue = QueuePieces::default();
        for i in 0..1000u64 {
            let index = queue.begin(Nanos(i * 10), None);
            queue.end(index, Nanos(i * 10 + if i % 97 == 0 { 3000 } else { 5 }));
        }
        queue.index_ends();
        for time in (0..10_500).step_by(7).map(Nanos) {
            let before = queue.first_starting_at_or_after(time);
            let expected: Vec<usize> = (0..before).filter(|&i| queue.end_of(i) >= time).collect();
            assert_eq!(queue.open_at(time).collect::<Vec<_>>(), expected, "at {time:?}");
        }
    }

    fn seg(start: u64, end: u64) -> Segment {
        Segment {
            start: Nanos(start),
            end: Nanos(end),
            task: TaskId::IDLE,
            end_kind: SegmentEnd::Blocked,
            flags: segment_flags::NO_SWITCH_IN,
            prev_state: 1,
        }
    }

    #[test]
    fn the_searches_from_a_nearby_row_find_what_the_whole_searches_find() {
        // Starts with repeats (zero-length segments) and gaps, over more than one block.
        let mut s = Segments::default();
        let mut start = 0;
        for i in 0..3000u64 {
            let length = [0, 3, 0, 7, 1000][(i % 5) as usize];
            s.push(seg(start, start + length));
            start += length + i % 3;
        }
        for time in (0..start + 20).step_by(13).map(Nanos) {
            let (at_or_after, after) = (s.first_starting_at_or_after(time), s.first_starting_after(time));
            for near in [0, 1, 2, 500, 1499, 1500, 2998, 2999, 3000, 9999, at_or_after, after] {
                assert_eq!(s.first_starting_at_or_after_near(time, near), at_or_after, "{time:?} from {near}");
                assert_eq!(s.first_starting_after_near(time, near), after, "{time:?} from {near}");
            }
        }
        assert_eq!(Segments::default().first_starting_after_near(Nanos(5), 3), 0);
    }

    #[test]
    fn segments_round_trip_with_gaps() {
        let mut s = Segments::default();
        let rows = [seg(0, 10), seg(10, 20), seg(25, 30), seg(30, 30), seg(30, 45)];
        for row in rows {
            s.push(row);
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), rows);
        assert_eq!(s.overlapping(Nanos(5), Nanos(12)), 0..2);
        assert_eq!(s.overlapping(Nanos(20), Nanos(25)), 2..2);
        assert_eq!(s.overlapping(Nanos(29), Nanos(100)), 2..5);
        assert_eq!(s.overlapping(Nanos(50), Nanos(60)), 5..5);
        assert_eq!(s.first_ending_at_or_after(Nanos(20)), 1);
    }

    #[test]
    fn searches_agree_with_a_scan_across_blocks() {
        let mut s = Segments::default();
        let mut time = 0;
        for i in 0..5000u64 {
            let gap = if i % 7 == 0 { 3 } else { 0 };
            let length = i % 5;
            s.push(seg(time + gap, time + gap + length));
            time += gap + length;
        }
        let rows: Vec<Segment> = s.iter().collect();
        let scan = |pred: &dyn Fn(&Segment) -> bool| rows.iter().position(|r| !pred(r)).unwrap_or(rows.len());
        for t in (0..time + 5).step_by(3).map(Nanos) {
            assert_eq!(s.first_starting_after(t), scan(&|r| r.start <= t), "{t:?}");
            assert_eq!(s.first_starting_at_or_after(t), scan(&|r| r.start < t), "{t:?}");
            assert_eq!(s.first_ending_after(t), scan(&|r| r.end <= t), "{t:?}");
            assert_eq!(s.first_ending_at_or_after(t), scan(&|r| r.end < t), "{t:?}");
        }
    }

    #[test]
    fn rows_are_small() {
        assert_eq!(std::mem::size_of::<SegmentRow>(), 12);
        assert_eq!(std::mem::size_of::<PieceRow>(), 12);
        assert_eq!(std::mem::size_of::<WaitRow>(), 16);
        assert_eq!(std::mem::size_of::<WakeupRow>(), 24);
        assert_eq!(std::mem::size_of::<MigrationRow>(), 16);
    }

    #[test]
    fn rows_keep_every_field() {
        let mut w = Waits::default();
        let i = w.begin(TaskId::IDLE, Nanos(100), WaitCause::Preempted, Cpu(3));
        assert_eq!(w.get(i).end_kind, WaitEnd::TraceEnd);
        w.end(i, Nanos(150), WaitEnd::Lost, Cpu(7));
        let row = w.get(i);
        assert_eq!(
            (row.start, row.end, row.cause, row.end_kind, row.ran_on),
            (Nanos(100), Nanos(150), WaitCause::Preempted, WaitEnd::Lost, Cpu(7))
        );
        let mut k = Wakeups::default();
        let wakeup = k.begin(Nanos(5), TaskId::IDLE, None, None, Cpu(1));
        k.enqueued(wakeup, WakeupKind::NewTask, Cpu(2), Some(i));
        let row = k.get(wakeup);
        assert_eq!(
            (row.kind, row.waking, row.waker_cpu, row.target_cpu, row.wait),
            (WakeupKind::NewTask, None, None, Cpu(2), Some(i))
        );
    }
}
