//! Append-only storage for the model's tables, built so that a trace of a hundred million
//! events fits in memory and is written fast: rows are small fixed-size structs kept in
//! chunks (never reallocated and copied, so a table costs what it holds, not twice that
//! while growing, and a new row is one write to one place), times are stored as 32-bit
//! offsets from a per-block base, and durations as 32-bit values, with the rare value
//! that does not fit kept aside.

use std::collections::BTreeMap;
use tracedat::Nanos;

/// Rows per chunk (the first chunk grows up to this like a `Vec`, later ones are
/// allocated whole).
const CHUNK_BITS: u32 = 14;
const CHUNK: usize = 1 << CHUNK_BITS;
const CHUNK_MASK: usize = CHUNK - 1;

/// A growable sequence of rows, in chunks.
#[derive(Clone, Debug)]
pub(crate) struct Column<T> {
    full: Vec<Box<[T]>>,
    tail: Vec<T>,
}

impl<T> Default for Column<T> {
    fn default() -> Self {
        Column { full: Vec::new(), tail: Vec::new() }
    }
}

impl<T: Copy> Column<T> {
    #[inline]
    pub fn push(&mut self, value: T) {
        if self.tail.len() == CHUNK {
            self.start_chunk();
        }
        self.tail.push(value);
    }

    #[cold]
    fn start_chunk(&mut self) {
        let full = std::mem::replace(&mut self.tail, Vec::with_capacity(CHUNK));
        self.full.push(full.into_boxed_slice());
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.full.len() * CHUNK + self.tail.len()
    }

    /// The row at `index`; panics when out of range, like a slice.
    #[inline]
    pub fn get(&self, index: usize) -> T {
        match self.full.get(index >> CHUNK_BITS) {
            Some(chunk) => chunk[index & CHUNK_MASK],
            None => self.tail[index - self.full.len() * CHUNK],
        }
    }

    /// The row at `index`, to change.
    #[inline]
    pub fn get_mut(&mut self, index: usize) -> &mut T {
        let full = self.full.len() * CHUNK;
        match self.full.get_mut(index >> CHUNK_BITS) {
            Some(chunk) => &mut chunk[index & CHUNK_MASK],
            None => &mut self.tail[index - full],
        }
    }

    /// The last row, to change.
    #[inline]
    pub fn last_mut(&mut self) -> Option<&mut T> {
        match self.tail.last_mut() {
            Some(last) => Some(last),
            None => self.full.last_mut().and_then(|chunk| chunk.last_mut()),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.full.iter().flat_map(|chunk| chunk.iter().copied()).chain(self.tail.iter().copied())
    }

    /// Bytes held (for the memory report).
    pub fn heap_bytes(&self) -> usize {
        (self.full.len() * CHUNK + self.tail.capacity()) * std::mem::size_of::<T>()
    }
}

/// Rows per time block: each block has one full time, its rows 32-bit offsets from it.
const BLOCK: usize = 1024;
/// An offset or duration that does not fit: the value is kept aside.
const FAR: u32 = u32::MAX;

/// The times of one column of a table, 4 bytes per row when the times of a block of rows
/// lie within 4.29 s of the block's first time (always, in practice: rows are added in
/// time order). Rows store the offsets; this keeps the bases and the exceptions.
#[derive(Clone, Debug, Default)]
pub(crate) struct Times {
    bases: Vec<u64>,
    /// The last block's base, the one rows are added to: read beside the table's other
    /// fields, without a second memory access through `bases`.
    last_base: u64,
    /// Times whose offset does not fit, by row (added in row order, so sorted).
    far: Vec<(usize, Nanos)>,
}

impl Times {
    /// The offset to store for the time of row `row` (rows are encoded in order).
    #[inline]
    pub fn encode(&mut self, row: usize, time: Nanos) -> u32 {
        if row % BLOCK == 0 {
            self.bases.push(time.0);
            self.last_base = time.0;
        }
        debug_assert_eq!(self.bases.len(), row / BLOCK + 1, "rows are encoded in order");
        match time.0.checked_sub(self.last_base).and_then(|d| u32::try_from(d).ok()).filter(|&d| d != FAR) {
            Some(offset) => offset,
            None => self.keep_far(row, time),
        }
    }

    #[cold]
    fn keep_far(&mut self, row: usize, time: Nanos) -> u32 {
        self.far.push((row, time));
        FAR
    }

    #[inline]
    pub fn decode(&self, row: usize, offset: u32) -> Nanos {
        match offset {
            FAR => self.far_time(row),
            offset => Nanos(self.bases[row / BLOCK] + u64::from(offset)),
        }
    }

    /// For a column of `len` rows in time order, the first row whose time fails `pred`
    /// (which holds for a prefix of the times): a search over the blocks' first times,
    /// which lie together in memory, then within one block.
    pub fn partition_point(&self, len: usize, time_of: impl Fn(usize) -> Nanos, pred: impl Fn(Nanos) -> bool) -> usize {
        let passing_blocks = self.bases.partition_point(|&base| pred(Nanos(base)));
        let Some(block) = passing_blocks.checked_sub(1) else { return 0 };
        let (from, to) = (block * BLOCK, ((block + 1) * BLOCK).min(len));
        let (mut low, mut high) = (from, to);
        while low < high {
            let mid = low + (high - low) / 2;
            if pred(time_of(mid)) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }

    #[cold]
    fn far_time(&self, row: usize) -> Nanos {
        self.far[self.far.partition_point(|&(r, _)| r < row)].1
    }

    pub fn heap_bytes(&self) -> usize {
        self.bases.capacity() * 8 + self.far.capacity() * 16
    }
}

/// The durations of one column of a table (set in any row order), 4 bytes per row;
/// longer ones (over 4.29 s) are kept aside.
#[derive(Clone, Debug, Default)]
pub struct Durations {
    long: BTreeMap<usize, Nanos>,
}

impl Durations {
    /// The value to store for the duration of row `row`, whose stored value was `old`.
    #[inline]
    pub fn encode(&mut self, row: usize, old: u32, duration: Nanos) -> u32 {
        if old == FAR {
            self.long.remove(&row);
        }
        match u32::try_from(duration.0).ok().filter(|&d| d != FAR) {
            Some(d) => d,
            None => {
                self.long.insert(row, duration);
                FAR
            }
        }
    }

    #[inline]
    pub fn decode(&self, row: usize, stored: u32) -> Nanos {
        match stored {
            FAR => self.long[&row],
            d => Nanos(u64::from(d)),
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.long.len() * 48
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_span_chunks() {
        let mut c = Column::default();
        for i in 0..(CHUNK * 2 + 5) as u32 {
            c.push(i);
        }
        assert_eq!(c.len(), CHUNK * 2 + 5);
        assert_eq!(c.get(CHUNK + 3), CHUNK as u32 + 3);
        *c.get_mut(CHUNK * 2 + 4) = 7;
        *c.get_mut(1) = 9;
        assert_eq!((c.iter().last(), c.get(1)), (Some(7), 9));
        *c.last_mut().unwrap() = 8;
        assert_eq!(c.get(CHUNK * 2 + 4), 8);
    }

    #[test]
    fn times_far_from_their_block_are_kept_exactly() {
        let mut t = Times::default();
        let mut rows = Vec::new();
        let mut times = vec![5, 6, u64::from(u32::MAX) + 10, 7, 3, u64::MAX];
        times.extend((0..3 * BLOCK as u64).map(|i| 1_000_000_000 * i));
        for (row, &x) in times.iter().enumerate() {
            rows.push(t.encode(row, Nanos(x)));
        }
        for (row, &x) in times.iter().enumerate() {
            assert_eq!(t.decode(row, rows[row]), Nanos(x), "row {row}");
        }
    }

    #[test]
    fn long_durations_are_kept_aside_and_can_shrink() {
        let mut d = Durations::default();
        let a = d.encode(0, 0, Nanos(3));
        let b = d.encode(1, 0, Nanos(1 << 40));
        assert_eq!((d.decode(0, a), d.decode(1, b)), (Nanos(3), Nanos(1 << 40)));
        let b = d.encode(1, b, Nanos(9));
        let a = d.encode(0, a, Nanos(u64::MAX));
        assert_eq!((d.decode(0, a), d.decode(1, b)), (Nanos(u64::MAX), Nanos(9)));
        assert_eq!(d.long.len(), 1);
    }
}
