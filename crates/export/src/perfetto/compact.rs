//! Perfetto's compact scheduler encoding (`FtraceEventBundle.CompactSched`), used where it
//! loses nothing: switches and wakings as columns of varints (times as deltas, task names
//! as indexes into the bundle's table of names), as Perfetto's own recorder writes them.
//!
//! A compact switch does not say which task it switches out, nor a compact waking which
//! task woke another: readers take it from the CPU's previous switch. That is right only
//! where every switch was recorded, so a row is compact only
//! - in a stretch of the CPU where the model saw every switch ([`CleanStretches`]: run
//!   segments begun and ended by a recorded `sched_switch`, outside every uncertain
//!   stretch and loss), and
//! - when the task the readers would infer ([`Running`]: the previous switch's next task,
//!   forgotten at a loss or at any written event that shows another task) is the event's
//!   own previous task (pid, name and priority) or waker.
//!
//! Everything else is written as a full event; events that neither Perfetto's importer
//! nor schedlens's model reads are left out of clean stretches only (elsewhere they are
//! the evidence the model read the CPU's state from).

use crate::{Scope, protobuf};
use model::{Model, Nanos, SegmentEnd};

/// `FtraceEventBundle.CompactSched` fields.
mod field {
    pub const SWITCH_TIMESTAMP: u32 = 1;
    pub const SWITCH_PREV_STATE: u32 = 2;
    pub const SWITCH_NEXT_PID: u32 = 3;
    pub const SWITCH_NEXT_PRIO: u32 = 4;
    pub const INTERN_TABLE: u32 = 5;
    pub const SWITCH_NEXT_COMM_INDEX: u32 = 6;
    pub const WAKING_TIMESTAMP: u32 = 7;
    pub const WAKING_PID: u32 = 8;
    pub const WAKING_TARGET_CPU: u32 = 9;
    pub const WAKING_PRIO: u32 = 10;
    pub const WAKING_COMM_INDEX: u32 = 11;
    pub const WAKING_COMMON_FLAGS: u32 = 12;
}

/// A bundle's table of names is closed past this many names, as Perfetto's recorder does
/// (interning stays a short scan).
pub const MAX_NAMES: usize = 64;

/// Per CPU, the closed time ranges (ns) where the model saw every switch, sorted and
/// disjoint; and whether events no reader uses may be left out of them.
pub struct CleanStretches {
    cpus: Vec<Vec<(u64, u64)>>,
    leave_out: bool,
}

impl CleanStretches {
    /// The stretches of `model` in `scope`. `None` when a CPU's times went backwards
    /// (readers put events in time order, which would move compact rows away from the
    /// switch they are inferred from), so that everything is written in full. A segment
    /// the window's end cuts is not clean (the file holds no switch that ends it). With a
    /// task filter nothing is left out: the file's reader sees only the accepted tasks'
    /// events, so the model's clean stretches are not its own.
    pub fn of(model: &Model, scope: &Scope) -> Option<CleanStretches> {
        if model.anomalies().get(model::Anomaly::TimeWentBackwards) > 0 {
            return None;
        }
        let cpus = model.cpus().iter().map(|timeline| clean_ranges(timeline, scope.window.end)).collect();
        Some(CleanStretches { cpus, leave_out: scope.all_tasks() })
    }

    /// A cursor over `cpu`'s stretches, for events in time order.
    pub fn cursor(&self, cpu: u32) -> Cursor<'_> {
        Cursor { ranges: self.cpus.get(cpu as usize).map_or(&[][..], Vec::as_slice), next: 0, last: 0 }
    }

    /// Whether events no reader uses may be left out of clean stretches.
    pub fn leave_out(&self) -> bool {
        self.leave_out
    }

    /// Nanoseconds in clean stretches, over every CPU.
    #[cfg(test)]
    fn total(&self) -> u64 {
        self.cpus.iter().flatten().map(|&(start, end)| end - start).sum()
    }
}

/// One CPU's clean ranges: segments begun and ended (before `window_end`) by a recorded
/// switch, merged where they touch, less every other segment and uncertain stretch
/// (closed: a time shared with one is not clean).
fn clean_ranges(timeline: &model::CpuTimeline, window_end: Nanos) -> Vec<(u64, u64)> {
    let mut clean: Vec<(u64, u64)> = Vec::new();
    let mut unclean: Vec<(u64, u64)> = timeline.uncertain().iter().map(|&(start, end)| (start.0, end.0)).collect();
    for segment in timeline.segments().iter() {
        let range = (segment.start.0, segment.end.0);
        let recorded_end = matches!(segment.end_kind, SegmentEnd::Preempted | SegmentEnd::Blocked | SegmentEnd::Exited);
        if !(segment.started_by_switch() && recorded_end && segment.end < window_end) {
            unclean.push(range);
            continue;
        }
        match clean.last_mut() {
            Some(last) if last.1 >= range.0 => last.1 = last.1.max(range.1),
            _ => clean.push(range),
        }
    }
    unclean.sort_unstable();
    subtract(&clean, &unclean)
}

/// `ranges` less `holes` (both closed, sorted by start; `ranges` disjoint).
fn subtract(ranges: &[(u64, u64)], holes: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut first_hole = 0;
    for &(start, end) in ranges {
        while first_hole < holes.len() && holes[first_hole].1 < start {
            first_hole += 1;
        }
        let mut from = start;
        for &(hole_start, hole_end) in holes[first_hole..].iter().take_while(|&&(s, _)| s <= end) {
            if hole_start > from {
                out.push((from, hole_start - 1));
            }
            from = from.max(hole_end.saturating_add(1));
        }
        if from <= end && from >= start {
            out.push((from, end));
        }
    }
    out
}

/// Whether times fall in a CPU's clean stretches, asked in time order.
pub struct Cursor<'c> {
    ranges: &'c [(u64, u64)],
    next: usize,
    last: u64,
}

impl Cursor<'_> {
    #[inline]
    pub fn is_clean(&mut self, time: u64) -> bool {
        if time < self.last {
            return false; // out of order: never compact
        }
        self.last = time;
        while self.next < self.ranges.len() && self.ranges[self.next].1 < time {
            self.next += 1;
        }
        self.ranges.get(self.next).is_some_and(|&(start, _)| start <= time)
    }
}

/// The task a reader infers to be running on the CPU: the previous switch's next task.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Running {
    pub pid: i64,
    pub prio: i64,
    comm: Option<NameKey>,
}

impl Running {
    pub fn new(pid: i64, prio: i64, comm: Option<NameKey>) -> Running {
        Running { pid, prio, comm }
    }

    /// Whether a switch from (`pid`, `prio`, `comm`) is what a reader infers (a name
    /// longer than 16 bytes never is).
    pub fn is(&self, pid: i64, prio: i64, comm: Option<NameKey>) -> bool {
        self.pid == pid && self.prio == prio && comm.is_some() && self.comm == comm
    }
}

/// A task name of up to 16 bytes (the kernel's `TASK_COMM_LEN`) as one number (its bytes,
/// zero-padded) and its length: names compare at once.
pub type NameKey = (u128, usize);

/// `name`'s key; `None` when it is longer than 16 bytes.
#[inline]
pub fn name_key(name: &[u8]) -> Option<NameKey> {
    if name.len() > 16 {
        return None;
    }
    let mut bytes = [0u8; 16];
    bytes[..name.len()].copy_from_slice(name);
    Some((u128::from_le_bytes(bytes), name.len()))
}

/// A compact switch: what the row holds.
pub struct SwitchRow {
    pub ts: u64,
    pub prev_state: i64,
    pub next_pid: i64,
    pub next_prio: i64,
}

/// A compact waking.
pub struct WakingRow {
    pub ts: u64,
    pub pid: i64,
    pub target_cpu: i64,
    pub prio: i64,
    pub common_flags: i64,
}

/// One bundle's compact rows, column by column, as packed varints.
#[derive(Default)]
pub struct Columns {
    names: Vec<Vec<u8>>,
    /// Each name's key (`None` past 16 bytes).
    keys: Vec<Option<NameKey>>,
    switch_ts: Column,
    prev_state: Column,
    next_pid: Column,
    next_prio: Column,
    next_comm: Column,
    waking_ts: Column,
    waking_pid: Column,
    target_cpu: Column,
    waking_prio: Column,
    waking_comm: Column,
    waking_flags: Column,
    last_switch: u64,
    last_waking: u64,
}

#[derive(Default)]
struct Column {
    bytes: Vec<u8>,
}

impl Column {
    #[inline]
    fn push(&mut self, value: i64) {
        protobuf::varint(&mut self.bytes, value as u64);
    }

    /// The column as a packed field (nothing when empty).
    fn write(&self, buf: &mut Vec<u8>, tag: u32) {
        if !self.bytes.is_empty() {
            protobuf::raw(buf, tag, &self.bytes);
        }
    }

    fn encoded_len(&self, tag: u32) -> usize {
        if self.bytes.is_empty() {
            return 0;
        }
        protobuf::varint_len(u64::from(tag << 3)) + protobuf::varint_len(self.bytes.len() as u64) + self.bytes.len()
    }
}

impl Columns {
    pub fn is_empty(&self) -> bool {
        self.switch_ts.bytes.is_empty() && self.waking_ts.bytes.is_empty()
    }

    /// Whether `name` (with its `key`) can go in a table of names (a protobuf `string`):
    /// it is in this one, or it is UTF-8.
    #[inline]
    pub fn can_intern(&self, name: &[u8], key: Option<NameKey>) -> bool {
        self.index_of(name, key).is_some() || std::str::from_utf8(name).is_ok()
    }

    #[inline]
    fn index_of(&self, name: &[u8], key: Option<NameKey>) -> Option<usize> {
        match key {
            Some(key) => self.keys.iter().position(|&k| k == Some(key)),
            None => self.names.iter().position(|n| n == name),
        }
    }

    /// The index of `name` (with its `key`) in the table (added if new), or `None` when
    /// the table is full.
    #[inline]
    pub fn intern(&mut self, name: &[u8], key: Option<NameKey>) -> Option<usize> {
        if let Some(index) = self.index_of(name, key) {
            return Some(index);
        }
        if self.names.len() >= MAX_NAMES {
            return None;
        }
        self.names.push(name.to_vec());
        self.keys.push(key);
        Some(self.names.len() - 1)
    }

    /// Appends a switch whose next task's name is `name` in the table.
    pub fn switch(&mut self, row: &SwitchRow, name: usize) {
        let delta = row.ts - std::mem::replace(&mut self.last_switch, row.ts);
        self.switch_ts.push(delta as i64);
        self.prev_state.push(row.prev_state);
        self.next_pid.push(row.next_pid);
        self.next_prio.push(row.next_prio);
        self.next_comm.push(name as i64);
    }

    /// Appends a waking whose woken task's name is `name` in the table.
    pub fn waking(&mut self, row: &WakingRow, name: usize) {
        let delta = row.ts - std::mem::replace(&mut self.last_waking, row.ts);
        self.waking_ts.push(delta as i64);
        self.waking_pid.push(row.pid);
        self.target_cpu.push(row.target_cpu);
        self.waking_prio.push(row.prio);
        self.waking_comm.push(name as i64);
        self.waking_flags.push(row.common_flags);
    }

    /// The time of the bundle's last row, if it has one.
    pub fn last_row(&self) -> Option<u64> {
        let switch = (!self.switch_ts.bytes.is_empty()).then_some(self.last_switch);
        let waking = (!self.waking_ts.bytes.is_empty()).then_some(self.last_waking);
        switch.max(waking)
    }

    /// Whether the bundle has a waking at or after `time`: readers take a bundle's
    /// switches before its wakings, so a switch at that time goes in the next bundle.
    pub fn waking_at_or_after(&self, time: u64) -> bool {
        !self.waking_ts.bytes.is_empty() && self.last_waking >= time
    }

    /// Bytes the columns take so far (without the table of names).
    pub fn len(&self) -> usize {
        self.columns().iter().map(|(column, _)| column.bytes.len()).sum()
    }

    fn columns(&self) -> [(&Column, u32); 11] {
        use field::*;
        [
            (&self.switch_ts, SWITCH_TIMESTAMP),
            (&self.next_pid, SWITCH_NEXT_PID),
            (&self.prev_state, SWITCH_PREV_STATE),
            (&self.next_prio, SWITCH_NEXT_PRIO),
            (&self.next_comm, SWITCH_NEXT_COMM_INDEX),
            (&self.waking_ts, WAKING_TIMESTAMP),
            (&self.waking_pid, WAKING_PID),
            (&self.target_cpu, WAKING_TARGET_CPU),
            (&self.waking_prio, WAKING_PRIO),
            (&self.waking_comm, WAKING_COMM_INDEX),
            (&self.waking_flags, WAKING_COMMON_FLAGS),
        ]
    }

    /// Writes the rows as the bundle's `compact_sched` field (`tag`), in the order
    /// Perfetto's recorder writes them (names, switch columns, waking columns), and
    /// empties them for the next bundle.
    pub fn write_and_clear(&mut self, buf: &mut Vec<u8>, tag: u32) {
        if self.is_empty() {
            self.clear();
            return;
        }
        let names: usize = self.names.iter().map(|n| 1 + protobuf::varint_len(n.len() as u64) + n.len()).sum();
        let len = names + self.columns().iter().map(|&(column, tag)| column.encoded_len(tag)).sum::<usize>();
        protobuf::header(buf, tag, len);
        for name in &self.names {
            protobuf::raw(buf, field::INTERN_TABLE, name);
        }
        for (column, tag) in self.columns() {
            column.write(buf, tag);
        }
        self.clear();
    }

    fn clear(&mut self) {
        self.names.clear();
        self.keys.clear();
        for column in [
            &mut self.switch_ts,
            &mut self.prev_state,
            &mut self.next_pid,
            &mut self.next_prio,
            &mut self.next_comm,
            &mut self.waking_ts,
            &mut self.waking_pid,
            &mut self.target_cpu,
            &mut self.waking_prio,
            &mut self.waking_comm,
            &mut self.waking_flags,
        ] {
            column.bytes.clear();
        }
        self.last_switch = 0;
        self.last_waking = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_are_cut_out_closed() {
        let ranges = [(10, 20), (30, 40), (50, 60)];
        let holes = [(0, 10), (15, 16), (25, 35), (40, 45), (58, 70)];
        assert_eq!(subtract(&ranges, &holes), [(11, 14), (17, 20), (36, 39), (50, 57)]);
        assert_eq!(subtract(&ranges, &[]), ranges);
        assert_eq!(subtract(&[(5, 5)], &[(5, 5)]), []);
    }

    #[test]
    fn the_cursor_answers_in_time_order_and_refuses_going_back() {
        let stretches = CleanStretches { cpus: vec![vec![(10, 20), (30, 30)]], leave_out: true };
        let mut cursor = stretches.cursor(0);
        let answers: Vec<bool> = [5, 10, 20, 21, 30, 31].iter().map(|&t| cursor.is_clean(t)).collect();
        assert_eq!(answers, [false, true, true, false, true, false]);
        assert!(!cursor.is_clean(15), "a time before the last one asked");
        assert!(!stretches.cursor(7).is_clean(15), "a CPU the model does not know");
        assert_eq!(stretches.total(), 10);
    }

    #[test]
    fn a_name_table_fills_up() {
        let mut columns = Columns::default();
        let intern = |columns: &mut Columns, name: &[u8]| columns.intern(name, name_key(name));
        for i in 0..MAX_NAMES {
            assert_eq!(intern(&mut columns, format!("task{i}").as_bytes()), Some(i));
        }
        assert_eq!(intern(&mut columns, b"task3"), Some(3), "a name already there");
        assert_eq!(intern(&mut columns, b"another"), None);
        let mut columns = Columns::default();
        let long = [b"a-name-longer-than-16-bytes-one".as_slice(), b"a-name-longer-than-16-bytes-two", b"x\0", b"x"];
        for (i, name) in long.iter().enumerate() {
            assert_eq!(intern(&mut columns, name), Some(i));
        }
        for (i, name) in long.iter().enumerate().rev() {
            assert_eq!(intern(&mut columns, name), Some(i), "{name:?} found again");
        }
    }
}
