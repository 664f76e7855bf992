//! File mode's data section read in pieces, one thread each: most of the time of
//! opening a large recording is the first touch of its bytes and the walk over millions
//! of records, which two or more cores share. Records have no markers, so a piece after
//! the first starts at the first place after its nominal start where a chain of
//! plausible record headers begins, and is taken only if the piece before it ended at
//! exactly that place (every record is read once, in order). The result is the same as
//! one pass in file order: pieces are joined in order, each CPU's entries appended. A
//! piece gives up on whatever would make it depend on the pieces before it or that one
//! pass reports with a record's number (damage of any kind, a loss that does not say its
//! CPU, pipe-mode and compressed records); the one pass then reads the whole section.

use crate::attrs::Attrs;
use crate::perfdata::{Loss, Sampled, TaskChange, TaskRecord, kind, loss_count, sample_of, task_change, trailer_of};
use crate::records::{RawRecord, Records};
use crate::store::Stores;
use tracedat::Endian;

/// A piece is at least this large: smaller sections are read in one pass.
const MIN_PIECE_BYTES: u64 = 16 << 20;
/// Headers that must follow each other, each plausible, for a piece to start there.
const CHAIN: usize = 16;
/// How far past its nominal start a piece looks for its first record.
const SEARCH_BYTES: u64 = 1 << 20;

/// How many pieces the data section may be cut into.
#[derive(Copy, Clone, Debug)]
pub struct Split {
    pub pieces: usize,
    pub min_piece_bytes: u64,
}

impl Split {
    /// One piece per core.
    pub fn for_this_machine() -> Split {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Split { pieces: cores.min(16), min_piece_bytes: MIN_PIECE_BYTES }
    }
}

/// Records per type: the usual ones counted in place, any other in a map.
#[derive(Clone, Debug, Default)]
pub struct KindCounts {
    low: Vec<u64>,
    high: std::collections::BTreeMap<u32, u64>,
}

impl KindCounts {
    const LOW: usize = 128;

    #[inline]
    pub fn add(&mut self, kind: u32) {
        if (kind as usize) < Self::LOW {
            if self.low.is_empty() {
                self.low = vec![0; Self::LOW];
            }
            self.low[kind as usize] += 1;
        } else {
            *self.high.entry(kind).or_default() += 1;
        }
    }

    pub fn add_all(&mut self, other: &KindCounts) {
        for (kind, count) in other.iter() {
            if (kind as usize) < Self::LOW {
                if self.low.is_empty() {
                    self.low = vec![0; Self::LOW];
                }
                self.low[kind as usize] += count;
            } else {
                *self.high.entry(kind).or_default() += count;
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        let low = self.low.iter().enumerate().filter(|&(_, &n)| n > 0).map(|(kind, &n)| (kind as u32, n));
        low.chain(self.high.iter().map(|(&kind, &n)| (kind, n)))
    }

    /// (type, count) of every type seen, by type.
    pub fn into_vec(self) -> Vec<(u32, u64)> {
        self.iter().collect()
    }
}

/// What one piece held.
#[derive(Debug, Default)]
pub struct Piece {
    pub stores: Stores,
    pub losses: Vec<Loss>,
    pub tasks: Vec<TaskRecord>,
    /// Names of COMM records before the piece's first sample (not at exec).
    pub early_names: Vec<(i32, String)>,
    pub seen_sample: bool,
    pub records: u64,
    pub by_kind: KindCounts,
    pub tracepoint_samples: u64,
    pub other_samples: u64,
    /// Where its first record started and its last ended.
    begin: u64,
    end: u64,
}

/// Why a piece gave up.
struct GiveUp;

/// Reads `start..end` in pieces, in order; `None` when the section is too small to cut
/// or a piece gave up (the one pass reads it then).
pub fn read(bytes: &[u8], endian: Endian, lookup: &Attrs, start: u64, end: u64, split: Split) -> Option<Vec<Piece>> {
    let len = end.saturating_sub(start);
    let count = (split.pieces as u64).min(len / split.min_piece_bytes.max(1)).max(1);
    if count < 2 {
        return None;
    }
    // Piece i reads the records that start in nominal[i]..nominal[i + 1].
    let nominal: Vec<u64> = (0..count).map(|i| start + len / count * i).chain([end]).collect();
    let pieces: Vec<Option<Piece>> = std::thread::scope(|scope| {
        let handles: Vec<_> = nominal
            .windows(2)
            .enumerate()
            .map(|(index, bounds)| {
                let (from, stop) = (bounds[0], bounds[1]);
                scope.spawn(move || {
                    let first = if index == 0 { Some(from) } else { first_record(bytes, endian, start, from, end) };
                    first.and_then(|first| read_piece(bytes, endian, lookup, first, stop, end).ok())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    let pieces: Vec<Piece> = pieces.into_iter().collect::<Option<_>>()?;
    let joined = pieces.windows(2).all(|pair| pair[0].end == pair[1].begin);
    (joined && pieces.last().is_some_and(|p| p.end == end)).then_some(pieces)
}

/// The first place at or after `from` (at a multiple of 8 bytes from the section's
/// start, as perf aligns records) where a chain of plausible headers begins.
fn first_record(bytes: &[u8], endian: Endian, start: u64, from: u64, end: u64) -> Option<u64> {
    let first = start + (from - start).next_multiple_of(8);
    let limit = first.saturating_add(SEARCH_BYTES).min(end);
    (first..limit).step_by(8).find(|&at| plausible_chain(bytes, endian, at, end))
}

/// Whether `CHAIN` headers from `at` have known types and sizes that fit, or end exactly
/// at the section's end.
fn plausible_chain(bytes: &[u8], endian: Endian, mut at: u64, end: u64) -> bool {
    for index in 0..CHAIN {
        if at == end {
            return index > 0;
        }
        if end - at < 8 {
            return false;
        }
        let header = &bytes[at as usize..at as usize + 8];
        let kind = endian.u32(header[..4].try_into().expect("4 bytes"));
        let size = u64::from(endian.u16(header[6..8].try_into().expect("2 bytes")));
        let known = (1..=21).contains(&kind) || (64..=83).contains(&kind);
        if !known || size < 8 || size % 8 != 0 || size > end - at {
            return false;
        }
        at += size;
    }
    true
}

/// Reads the records that start in `first..stop` (the last may end past `stop`).
fn read_piece(bytes: &[u8], endian: Endian, lookup: &Attrs, first: u64, stop: u64, end: u64) -> Result<Piece, GiveUp> {
    let mut records = Records::new(bytes, endian, first, end);
    let mut piece = Piece { begin: first, ..Piece::default() };
    while records.position() < stop {
        let record = match records.next() {
            None => break,
            Some(Ok(record)) => record,
            Some(Err(_)) => return Err(GiveUp),
        };
        piece.records += 1;
        piece.by_kind.add(record.kind);
        match record.kind {
            kind::SAMPLE => piece.sample(lookup, &record, endian)?,
            kind::LOST | kind::LOST_SAMPLES => piece.loss(lookup, &record, endian)?,
            kind::COMM | kind::FORK | kind::EXIT => piece.task(lookup, &record, endian)?,
            kind::HEADER_ATTR
            | kind::HEADER_TRACING_DATA
            | kind::HEADER_FEATURE
            | kind::AUXTRACE
            | kind::COMPRESSED
            | kind::COMPRESSED2 => return Err(GiveUp),
            _ => {}
        }
    }
    piece.end = records.position();
    Ok(piece)
}

impl Piece {
    #[inline]
    fn sample(&mut self, lookup: &Attrs, record: &RawRecord<'_>, endian: Endian) -> Result<(), GiveUp> {
        self.seen_sample = true;
        match sample_of(lookup, record, endian).map_err(|_| GiveUp)? {
            Sampled::Other => self.other_samples += 1,
            Sampled::Tracepoint { cpu, time, payload_at, len } => {
                self.stores.of_cpu(cpu).ok_or(GiveUp)?.push_event(time, payload_at, len);
                self.tracepoint_samples += 1;
            }
        }
        Ok(())
    }

    /// A loss, placed as the one pass places it when that depends on this piece alone.
    fn loss(&mut self, lookup: &Attrs, record: &RawRecord<'_>, endian: Endian) -> Result<(), GiveUp> {
        let count = loss_count(record, endian).map_err(|_| GiveUp)?;
        let trailer = trailer_of(lookup, record, endian);
        let samples = record.kind == kind::LOST_SAMPLES;
        self.losses.push(Loss { time: trailer.time, cpu: trailer.cpu, count, samples });
        if samples && trailer.time.unwrap_or(0) == 0 {
            return Ok(());
        }
        let cpu = trailer.cpu.ok_or(GiveUp)?;
        if let Some(store) = self.stores.of_cpu(cpu) {
            let time = match trailer.time {
                Some(time) => time,
                None if !store.is_empty() => store.last_time(),
                None => return Err(GiveUp),
            };
            store.push_loss(time, Some(count));
        }
        Ok(())
    }

    fn task(&mut self, lookup: &Attrs, record: &RawRecord<'_>, endian: Endian) -> Result<(), GiveUp> {
        let what = task_change(record, endian).map_err(|_| GiveUp)?;
        if let TaskChange::Comm { tid, comm, exec: false, .. } = &what {
            if !self.seen_sample {
                self.early_names.push((*tid, comm.clone()));
            }
        }
        let trailer = trailer_of(lookup, record, endian);
        self.tasks.push(TaskRecord { time: trailer.time, cpu: trailer.cpu, what });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PerfData;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!("{}/../../testdata/perf/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn open(bytes: &[u8], split: Split) -> PerfData {
        PerfData::read("fixture".into(), crate::perfdata::Data::Owned(bytes.to_vec()), split).unwrap()
    }

    /// Everything the reader keeps, as text, for comparing two readings.
    fn kept(perf: &PerfData) -> String {
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            perf.stores.iter().map(|s| s.flat()).collect::<Vec<_>>(),
            perf.tasks(),
            perf.losses(),
            perf.counts(),
            perf.cmdlines,
            perf.damage_found()
        )
    }

    #[test]
    fn pieces_read_what_one_pass_reads() {
        // The lossy fixture has LOST records (with their CPU and time) and several CPUs.
        for name in ["sched-hackbench.data", "sched-lost.data", "sched-all.data"] {
            let bytes = fixture(name);
            let one = open(&bytes, Split { pieces: 1, min_piece_bytes: MIN_PIECE_BYTES });
            for pieces in [2, 3, 7, 16] {
                let split = Split { pieces, min_piece_bytes: 1 };
                let perf = open(&bytes, split);
                assert_eq!(kept(&perf), kept(&one), "{name} in {pieces} pieces");
            }
            let header = crate::header::read_start(&bytes).unwrap();
            let crate::header::Start::File(header) = header else { panic!("{name} is in file mode") };
            let lookup = Attrs::new(one.attrs().to_vec(), one.endian()).unwrap();
            let (start, end) = (header.data.offset, header.data.end());
            let read = read(&bytes, one.endian(), &lookup, start, end, Split { pieces: 7, min_piece_bytes: 1 });
            assert_eq!(read.map(|p| p.len()), Some(7), "{name}: no piece gave up");
        }
    }

    #[test]
    fn a_damaged_section_is_read_in_one_pass() {
        let mut bytes = fixture("sched-hackbench.data");
        let one_whole = open(&bytes, Split { pieces: 1, min_piece_bytes: MIN_PIECE_BYTES });
        let crate::header::Start::File(header) = crate::header::read_start(&bytes).unwrap() else { panic!() };
        // A sample's size claimed larger, two thirds into the data.
        let lookup = Attrs::new(one_whole.attrs().to_vec(), one_whole.endian()).unwrap();
        let third = header.data.offset + header.data.size * 2 / 3;
        let at = first_record(&bytes, one_whole.endian(), header.data.offset, third, header.data.end()).unwrap();
        bytes[at as usize + 6] = 0xff;
        let (start, end) = (header.data.offset, header.data.end());
        assert!(
            read(&bytes, one_whole.endian(), &lookup, start, end, Split { pieces: 3, min_piece_bytes: 1 }).is_none()
        );
        let one = open(&bytes, Split { pieces: 1, min_piece_bytes: MIN_PIECE_BYTES });
        let split = open(&bytes, Split { pieces: 3, min_piece_bytes: 1 });
        assert_eq!(kept(&split), kept(&one));
        assert!(!one.damage_found().is_empty());
    }
}
