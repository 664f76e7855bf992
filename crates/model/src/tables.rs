//! The model's columnar tables: run segments and runqueue pieces per CPU, wait stretches,
//! wakeups and migrations. Each table is a struct of vectors (compact, fast to scan) with
//! a plain row type for reading and writing one entry.

use crate::tasks::TaskId;
use tracedat::{Cpu, Nanos};

/// Declares a row type and its columnar table (one `Vec` per field).
macro_rules! table {
    ($(#[$meta:meta])* $table:ident of $row:ident { $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq)]
        pub struct $row { $($(#[$fmeta])* pub $field: $ty),* }

        #[doc = concat!("Columnar storage of [`", stringify!($row), "`] rows.")]
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct $table { $(pub $field: Vec<$ty>),* }

        impl $table {
            pub fn push(&mut self, row: $row) {
                $(self.$field.push(row.$field);)*
            }

            pub fn get(&self, index: usize) -> $row {
                $row { $($field: self.$field[index]),* }
            }



            pub fn len(&self) -> usize {
                table!(@first self $($field)*).len()
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            pub fn iter(&self) -> impl ExactSizeIterator<Item = $row> + '_ {
                (0..self.len()).map(move |i| self.get(i))
            }


        }
    };
    (@first $self:ident $first:ident $($rest:ident)*) => { $self.$first };
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

/// Segment flags.
pub mod segment_flags {
    /// Began without a recorded `sched_switch` to the task: already running at the
    /// CPU's first event, or first seen running after an unrecorded switch.
    pub const NO_SWITCH_IN: u8 = 1;
}

table! {
    /// One stretch of a task running on a CPU: `[start, end)`. The idle task's segments
    /// make idle time explicit, so a CPU's known time is covered without gaps except where
    /// events were lost.
    Segments of Segment {
        start: Nanos,
        end: Nanos,
        task: TaskId,
        end_kind: SegmentEnd,
        flags: u8,
        /// The raw `prev_state` of the switch that ended it (0 when not ended by a switch).
        prev_state: u16,
    }
}

impl Segment {
    pub fn duration(&self) -> Nanos {
        self.end.saturating_sub(self.start)
    }

    pub fn started_by_switch(&self) -> bool {
        self.flags & segment_flags::NO_SWITCH_IN == 0
    }
}

impl Segments {
    /// Indices of the segments overlapping `[start, end)` (segments are in time order and
    /// do not overlap, so this is a binary search).
    pub fn overlapping(&self, start: Nanos, end: Nanos) -> std::ops::Range<usize> {
        let first = self.end.partition_point(|&e| e <= start);
        let last = self.start.partition_point(|&s| s < end);
        first..last.max(first)
    }
}

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

/// Why a task became runnable.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WaitCause {
    Wakeup,
    NewTask,
    Preempted,
}

table! {
    /// A stretch of time a task was runnable but not running, from becoming runnable to
    /// getting a CPU; it may move between runqueues on the way (see [`QueuePiece`]).
    Waits of Wait {
        task: TaskId,
        start: Nanos,
        end: Nanos,
        cause: WaitCause,
        end_kind: WaitEnd,
        /// The CPU it ran on (meaningful when `end_kind` is `Ran`).
        ran_on: Cpu,
    }
}

impl Wait {
    pub fn duration(&self) -> Nanos {
        self.end.saturating_sub(self.start)
    }
}

table! {
    /// Part of a wait spent on one CPU's runqueue.
    QueuePieces of QueuePiece {
        start: Nanos,
        end: Nanos,
        /// Index in [`Waits`].
        wait: u32,
    }
}

/// Whether a wakeup made a new task runnable or woke a sleeping one.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WakeupKind {
    Wakeup,
    NewTask,
}

table! {
    /// A wakeup: who woke whom, where the wakee ran before and where it was placed. When
    /// it was enqueued and when and where it then ran are its wait's start, end and CPU.
    Wakeups of Wakeup {
        kind: WakeupKind,
        wakee: TaskId,
        /// `sched_waking` time (the wakeup's start), when recorded.
        waking: Option<Nanos>,
        /// The task running where `sched_waking` was emitted (idle for interrupts).
        waker: Option<TaskId>,
        waker_cpu: Option<Cpu>,
        /// The CPU the wakee last ran on.
        prev_cpu: Option<Cpu>,
        /// The CPU whose runqueue it was put on.
        target_cpu: Cpu,
        /// Index in [`Waits`] of the wait the wakeup began, once the wakee was enqueued.
        wait: Option<u32>,
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

table! {
    /// A move of a task from one CPU to another.
    Migrations of Migration {
        time: Nanos,
        task: TaskId,
        from: Cpu,
        to: Cpu,
        reason: MigrationReason,
    }
}

/// Everything known about one CPU.
#[derive(Clone, Debug, Default)]
pub struct CpuTimeline {
    pub cpu: Cpu,
    /// First and last events recorded on this CPU (of any type).
    pub first_event: Option<Nanos>,
    pub last_event: Option<Nanos>,
    /// Run segments (idle included), in time order.
    pub segments: Segments,
    /// Runqueue pieces of waiting tasks, ordered by start.
    pub queue: QueuePieces,
    /// Stretches whose state is unknown because events were lost, in time order.
    pub uncertain: Vec<(Nanos, Nanos)>,
    /// Events the kernel reported lost with a count, and losses without one.
    pub lost_events: u64,
    pub lost_unknown: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(start: u64, end: u64) -> Segment {
        Segment {
            start: Nanos(start),
            end: Nanos(end),
            task: TaskId(1),
            end_kind: SegmentEnd::Blocked,
            flags: 0,
            prev_state: 1,
        }
    }

    #[test]
    fn a_segment_is_at_most_24_bytes() {
        let per_row = std::mem::size_of::<Nanos>() * 2
            + std::mem::size_of::<TaskId>()
            + std::mem::size_of::<SegmentEnd>()
            + std::mem::size_of::<u8>()
            + std::mem::size_of::<u16>();
        assert!(per_row <= 24, "{per_row}");
    }

    #[test]
    fn overlapping_is_a_binary_search() {
        let mut s = Segments::default();
        for (a, b) in [(0, 10), (10, 20), (25, 30)] {
            s.push(seg(a, b));
        }
        assert_eq!(s.overlapping(Nanos(5), Nanos(12)), 0..2);
        assert_eq!(s.overlapping(Nanos(20), Nanos(25)), 2..2);
        assert_eq!(s.overlapping(Nanos(29), Nanos(100)), 2..3);
        assert_eq!(s.overlapping(Nanos(40), Nanos(50)), 3..3);
        assert_eq!(s.get(1), seg(10, 20));
    }
}
