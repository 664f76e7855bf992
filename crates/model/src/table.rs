//! One table type for the model's five tables, so each declares its row once (how the
//! row is stored, how it reads back, what names it: [`Row`]) and every table is read
//! through the same accessors: `len`, `get`, `iter`, `iter_range`, `ids`, and for the
//! per-CPU tables searches by start time. Rows live in chunks (`columns`) with their
//! times as offsets; the storage stays private, so only the model writes rows and hands
//! out the ids that name them.
//!
//! Rows of the trace-wide tables are named by typed ids ([`WaitId`], [`WakeupId`],
//! [`MigrationId`]): other rows point at them (a runqueue piece and a wakeup at their
//! wait), and an id of one table cannot index another. Rows of the per-CPU tables
//! (segments, runqueue pieces) are found by time, so a position (`usize`) names them.

use crate::columns::{Column, Times};
use std::num::NonZeroU32;
use std::ops::Range;
use tracedat::Nanos;

/// The parts of a row type the model keeps to itself: how it is stored and read back.
pub(crate) mod sealed {
    use super::{Row, Table};
    use std::ops::Range;

    pub trait Layout: Sized {
        /// The row as stored, 12 to 24 bytes.
        type Stored: Copy;
        /// What the table keeps beside its rows (ends that are not the next row's start,
        /// long durations, indexes).
        type Aside: Clone + std::fmt::Debug + Default;
        /// The rows of a range, in order.
        type Iter<'a>: ExactSizeIterator<Item = Self>
        where
            Self: 'a;

        /// The stored time the table is ordered by, as an offset (see `columns::Times`).
        fn time_offset(stored: &Self::Stored) -> u32;

        /// Row `index` as callers read it.
        fn read(table: &Table<Self>, index: usize) -> Self
        where
            Self: Row;

        fn iter_range(table: &Table<Self>, range: Range<usize>) -> Self::Iter<'_>
        where
            Self: Row;

        /// Bytes `aside` holds (for the memory report).
        fn aside_bytes(aside: &Self::Aside) -> usize;
    }

    pub trait FromIndex {
        /// The id of row `index` (only the model makes them).
        fn from_index(index: usize) -> Self;
    }
}

/// A row of one of the model's tables, read as a plain value.
pub trait Row: Copy + sealed::Layout {
    /// What names a row of its table.
    type Id: RowId;
}

/// What names a row of a table: a typed id, or a position in a per-CPU table.
pub trait RowId: Copy + sealed::FromIndex {
    /// The row's position in its table (`0..len`), for arrays beside the table.
    fn index(self) -> usize;
}

impl sealed::FromIndex for usize {
    #[inline]
    fn from_index(index: usize) -> usize {
        index
    }
}

impl RowId for usize {
    #[inline]
    fn index(self) -> usize {
        self
    }
}

/// Typed row ids: the position plus one, so that `Option` of an id is 4 bytes and a row
/// that points at no other row needs no magic number.
macro_rules! row_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(NonZeroU32);

        impl $name {
            /// The row's position in its table (`0..len`), for arrays beside the table.
            #[inline]
            pub fn index(self) -> usize {
                self.0.get() as usize - 1
            }
        }

        impl sealed::FromIndex for $name {
            #[inline]
            fn from_index(index: usize) -> $name {
                let number = u32::try_from(index + 1).ok().and_then(NonZeroU32::new);
                $name(number.expect("a table holds fewer than 2^32 - 1 rows"))
            }
        }

        impl RowId for $name {
            #[inline]
            fn index(self) -> usize {
                $name::index(self)
            }
        }
    };
}

row_id!(
    /// A wait of one model ([`crate::Waits`]): only the model hands them out.
    WaitId
);
row_id!(
    /// A wakeup of one model ([`crate::Wakeups`]): only the model hands them out.
    WakeupId
);
row_id!(
    /// A migration of one model ([`crate::Migrations`]): only the model hands them out.
    MigrationId
);

/// The rows of one table, in the order of the time each is filed by (a segment's or a
/// wait's start, a migration's time).
#[derive(Clone, Debug)]
pub struct Table<R: Row> {
    pub(crate) rows: Column<R::Stored>,
    pub(crate) times: Times,
    pub(crate) aside: R::Aside,
}

impl<R: Row> Default for Table<R> {
    fn default() -> Self {
        Table { rows: Column::default(), times: Times::default(), aside: R::Aside::default() }
    }
}

impl<R: Row> Table<R> {
    #[inline]
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The row `id` names.
    #[inline]
    pub fn get(&self, id: R::Id) -> R {
        R::read(self, id.index())
    }

    /// Every row, in order.
    #[inline]
    pub fn iter(&self) -> R::Iter<'_> {
        R::iter_range(self, 0..self.len())
    }

    /// The rows at positions `range`, in order (clipped to the table): a part of the
    /// table, e.g. to share it out among threads.
    #[inline]
    pub fn iter_range(&self, range: Range<usize>) -> R::Iter<'_> {
        let end = range.end.min(self.len());
        R::iter_range(self, range.start.min(end)..end)
    }

    /// The ids of every row, in order.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = R::Id> + use<R> {
        (0..self.len()).map(<R::Id as sealed::FromIndex>::from_index)
    }

    /// The time row `index` is filed by.
    #[inline]
    pub(crate) fn filed_at(&self, index: usize) -> Nanos {
        self.times.decode(index, R::time_offset(&self.rows.get(index)))
    }

    /// The id of the row about to be added.
    pub(crate) fn next_id(&self) -> R::Id {
        <R::Id as sealed::FromIndex>::from_index(self.len())
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.rows.heap_bytes() + self.times.heap_bytes() + R::aside_bytes(&self.aside)
    }
}

/// The per-CPU tables, whose rows are found by their start time.
impl<R: Row<Id = usize>> Table<R> {
    #[inline]
    pub fn start(&self, index: usize) -> Nanos {
        self.filed_at(index)
    }

    /// The first row that starts at or after `time`.
    pub fn first_starting_at_or_after(&self, time: Nanos) -> usize {
        self.times.partition_point(self.len(), |i| self.start(i), |start| start < time)
    }

    /// The first row that starts after `time`.
    pub fn first_starting_after(&self, time: Nanos) -> usize {
        self.times.partition_point(self.len(), |i| self.start(i), |start| start <= time)
    }

    /// [`Self::first_starting_at_or_after`], searched outwards from `near` (the answer for
    /// a nearby time): a few reads instead of a search of the whole table when a pass asks
    /// about times in about their order. Any `near` gives the same answer.
    pub fn first_starting_at_or_after_near(&self, time: Nanos, near: usize) -> usize {
        self.partition_point_near(near, |start| start < time)
    }

    /// [`Self::first_starting_after`], searched outwards from `near` (see
    /// [`Self::first_starting_at_or_after_near`]).
    pub fn first_starting_after_near(&self, time: Nanos, near: usize) -> usize {
        self.partition_point_near(near, |start| start <= time)
    }

    fn partition_point_near(&self, near: usize, pred: impl Fn(Nanos) -> bool) -> usize {
        partition_point_near(self.len(), near, |index| pred(self.start(index)))
    }
}

/// The rows of a range, each read on its own (see [`Table::iter`]).
pub struct ByRow<'a, R: Row> {
    table: &'a Table<R>,
    next: usize,
    end: usize,
}

impl<'a, R: Row> ByRow<'a, R> {
    pub(crate) fn new(table: &'a Table<R>, range: Range<usize>) -> Self {
        ByRow { table, next: range.start, end: range.end }
    }
}

impl<R: Row> Iterator for ByRow<'_, R> {
    type Item = R;

    #[inline]
    fn next(&mut self) -> Option<R> {
        let index = self.next;
        if index >= self.end {
            return None;
        }
        self.next += 1;
        Some(R::read(self.table, index))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.end - self.next;
        (left, Some(left))
    }
}

impl<R: Row> ExactSizeIterator for ByRow<'_, R> {}

/// The first index of `0..len` where `holds` fails (it holds for a prefix), searched
/// outwards from `near` (the answer for a nearby question; any gives the same answer):
/// an exponential search from there, then a binary search of the bracket it found. A few
/// reads instead of a search of the whole range when a pass asks in about its order.
pub fn partition_point_near(len: usize, near: usize, holds: impl Fn(usize) -> bool) -> usize {
    let Some(last) = len.checked_sub(1) else { return 0 };
    let near = near.min(last);
    // `holds` holds below `low` and fails from `high` on.
    let (mut low, mut high);
    if holds(near) {
        (low, high) = (near + 1, len);
        let mut step = 1;
        while let Some(probe) = (near + step < len).then_some(near + step) {
            if !holds(probe) {
                high = probe;
                break;
            }
            low = probe + 1;
            step *= 2;
        }
    } else {
        (low, high) = (0, near);
        let mut step = 1;
        while let Some(probe) = near.checked_sub(step) {
            if holds(probe) {
                low = probe + 1;
                break;
            }
            high = probe;
            step *= 2;
        }
    }
    while low < high {
        let mid = low + (high - low) / 2;
        if holds(mid) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

#[cfg(test)]
mod tests {
    use super::sealed::FromIndex;
    use super::*;

    #[test]
    fn an_id_is_its_position_and_an_option_of_it_costs_nothing() {
        assert_eq!(WaitId::from_index(0).index(), 0);
        assert_eq!(WakeupId::from_index(41).index(), 41);
        assert_eq!(std::mem::size_of::<Option<MigrationId>>(), 4);
    }
}
