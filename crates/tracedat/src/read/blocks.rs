//! Getting one CPU's ring-buffer pages off disk in blocks: raw pages read in page-aligned
//! blocks, or version 7 compressed chunks decompressed one at a time, optionally on
//! worker threads ahead of the reader. Only a few blocks per CPU are ever in memory, so
//! memory does not grow with the file.

use crate::compress::Codec;
use crate::endian::Endian;
use crate::error::Section;
use crate::read::input::{Reader, Source};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;

/// Pages per block when reading uncompressed data.
const RAW_BLOCK_PAGES: u64 = 16;
/// A chunk may not claim to decompress to more than this (trace-cmd writes 10 pages).
const MAX_CHUNK_BYTES: u32 = 256 << 20;
/// Blocks requested ahead per CPU when a prefetcher is used.
const PREFETCH_DEPTH: usize = 6;

/// One compressed chunk: where its compressed bytes are and how long it decompresses to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub offset: u64,
    pub compressed_len: u32,
    pub len: u32,
}

/// How a CPU's data is cut into blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockPlan {
    Raw { offset: u64, size: u64, block_len: u64 },
    Chunks { codec: Codec, chunks: Vec<Chunk> },
}

/// A problem found while planning or reading blocks, with the file offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockError {
    pub offset: u64,
    pub message: String,
}

impl BlockPlan {
    pub fn raw(offset: u64, size: u64, page_size: u32, file_len: u64) -> (BlockPlan, Option<BlockError>) {
        let available = file_len.saturating_sub(offset);
        let damage = (size > available).then(|| BlockError {
            offset: offset.saturating_add(available),
            message: format!("data cut off: {size} bytes recorded, {available} present"),
        });
        let plan = BlockPlan::Raw { offset, size: size.min(available), block_len: page_size as u64 * RAW_BLOCK_PAGES };
        (plan, damage)
    }

    /// Reads the chunk table at `offset`: a chunk count, then `{compressed size, size, data}`
    /// per chunk. Damage ends the table early; the chunks before it stay usable.
    pub fn chunks(source: &dyn Source, offset: u64, endian: Endian, codec: Codec) -> (BlockPlan, Option<BlockError>) {
        let mut r = Reader::over_source(source, offset, endian, Section::FlyrecordTable);
        let mut chunks = Vec::new();
        let damage = (|| {
            let count = r.u32().map_err(|e| BlockError { offset: e.offset, message: e.kind.to_string() })?;
            let mut ahead = ReadAhead::default();
            for index in 0..count {
                let at = r.offset();
                let header = match ahead.header_at(source, at, endian) {
                    Some(header) => r.skip(8).map(|()| header),
                    // Near the end, or unreadable: the reader says what is wrong.
                    None => r.u32().and_then(|c| Ok((c, r.u32()?))),
                };
                let (compressed_len, len) = header.map_err(|e| BlockError {
                    offset: e.offset,
                    message: format!("chunk {index} of {count}: {}", e.kind),
                })?;
                if len > MAX_CHUNK_BYTES || u64::from(compressed_len) > r.remaining() {
                    return Err(BlockError {
                        offset: at,
                        message: format!(
                            "chunk {index} of {count} is damaged ({compressed_len} bytes packed, {len} unpacked)"
                        ),
                    });
                }
                chunks.push(Chunk { offset: r.offset(), compressed_len, len });
                r.skip(compressed_len.into()).expect("checked above");
            }
            Ok(())
        })()
        .err();
        (BlockPlan::Chunks { codec, chunks }, damage)
    }

    pub fn block_count(&self) -> usize {
        match self {
            BlockPlan::Raw { size, block_len, .. } => size.div_ceil(*block_len) as usize,
            BlockPlan::Chunks { chunks, .. } => chunks.len(),
        }
    }

    /// File offset where block `index` starts (its compressed bytes, for chunks).
    pub fn block_offset(&self, index: usize) -> u64 {
        match self {
            BlockPlan::Raw { offset, block_len, .. } => offset + index as u64 * block_len,
            BlockPlan::Chunks { chunks, .. } => chunks[index].offset,
        }
    }

    /// Bytes of the file block `index` covers.
    pub fn block_file_len(&self, index: usize) -> u64 {
        match self {
            BlockPlan::Raw { size, block_len, .. } => (*block_len).min(size - index as u64 * block_len),
            BlockPlan::Chunks { chunks, .. } => chunks[index].compressed_len as u64 + 8,
        }
    }

    /// Reads block `index` (decompressed) into `out`.
    pub fn read_block(&self, source: &dyn Source, index: usize, out: &mut Vec<u8>) -> Result<(), BlockError> {
        let offset = self.block_offset(index);
        let io_error = |e: std::io::Error| BlockError { offset, message: e.to_string() };
        match self {
            BlockPlan::Raw { .. } => {
                out.clear();
                out.resize(self.block_file_len(index) as usize, 0);
                source.read_exact_at(offset, out).map_err(io_error)
            }
            BlockPlan::Chunks { codec, chunks } => {
                let chunk = chunks[index];
                let mut packed = vec![0u8; chunk.compressed_len as usize];
                source.read_exact_at(offset, &mut packed).map_err(io_error)?;
                codec
                    .decompress(&packed, chunk.len as usize, out)
                    .map_err(|e| BlockError { offset, message: format!("chunk {index}: {e}") })
            }
        }
    }
}

/// Bytes read ahead of a walk over a chunk table, whose headers lie one compressed chunk
/// apart: trace-cmd's chunks pack to a few KB, so one read of [`READ_AHEAD`] bytes serves
/// several headers instead of a system call per header (13,400 of them on a 38 MB trace).
/// Where chunks are larger than a quarter of that, each header is read alone.
#[derive(Default)]
struct ReadAhead {
    start: u64,
    bytes: Vec<u8>,
    /// Where the previous header was asked for.
    previous: u64,
}

/// Bytes a chunk table's walk reads at once.
const READ_AHEAD: usize = 64 << 10;

impl ReadAhead {
    /// The header at `at` (compressed size, size), unless the source ends first or cannot
    /// be read.
    fn header_at(&mut self, source: &dyn Source, at: u64, endian: Endian) -> Option<(u32, u32)> {
        const HEADER: usize = 8;
        let end = at.checked_add(HEADER as u64)?;
        if at < self.start || end > self.start + self.bytes.len() as u64 {
            let chunks_are_small = at.saturating_sub(self.previous) < READ_AHEAD as u64 / 4;
            let wanted = if chunks_are_small { READ_AHEAD as u64 } else { HEADER as u64 };
            let len = wanted.min(source.len().saturating_sub(at));
            if len < HEADER as u64 {
                return None;
            }
            self.bytes.resize(len as usize, 0);
            if source.read_exact_at(at, &mut self.bytes).is_err() {
                self.bytes.clear();
                return None;
            }
            self.start = at;
        }
        self.previous = at;
        let from = (at - self.start) as usize;
        let word = |at: usize| Some(endian.u32(self.bytes[at..at + 4].try_into().ok()?));
        Some((word(from)?, word(from + 4)?))
    }
}

/// A block as delivered: its bytes, or why it could not be read.
pub type BlockResult = Result<Vec<u8>, BlockError>;

type Job = Box<dyn FnOnce() + Send>;

/// A few worker threads that read and decompress blocks ahead of the reader.
pub struct Prefetcher {
    jobs: Option<mpsc::Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl Prefetcher {
    pub fn new(threads: usize) -> Prefetcher {
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let workers = (0..threads.max(1))
            .map(|_| {
                let receiver = Arc::clone(&receiver);
                std::thread::spawn(move || {
                    loop {
                        let job = receiver.lock().map(|r| r.recv());
                        match job {
                            Ok(Ok(job)) => job(),
                            _ => break,
                        }
                    }
                })
            })
            .collect();
        Prefetcher { jobs: Some(sender), workers }
    }

    fn submit(&self, job: Job) {
        if let Some(jobs) = &self.jobs {
            // Workers only stop when the sender is dropped, so sending cannot fail here.
            let _ = jobs.send(job);
        }
    }
}

impl Drop for Prefetcher {
    fn drop(&mut self) {
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// Delivers a CPU's blocks in order, directly or through a [`Prefetcher`].
pub struct BlockFetcher {
    plan: Arc<BlockPlan>,
    source: Arc<dyn Source>,
    requested: usize,
    delivered: usize,
    in_flight: VecDeque<mpsc::Receiver<BlockResult>>,
}

impl BlockFetcher {
    pub fn new(plan: BlockPlan, source: Arc<dyn Source>) -> BlockFetcher {
        BlockFetcher { plan: Arc::new(plan), source, requested: 0, delivered: 0, in_flight: VecDeque::new() }
    }

    pub fn plan(&self) -> &BlockPlan {
        &self.plan
    }

    /// Index of the block the next call returns.
    pub fn next_index(&self) -> usize {
        self.delivered
    }

    /// The next block; `out` is reused when reading directly.
    pub fn next(&mut self, prefetcher: Option<&Prefetcher>, out: &mut Vec<u8>) -> Option<Result<(), BlockError>> {
        if self.delivered >= self.plan.block_count() {
            return None;
        }
        let index = self.delivered;
        self.delivered += 1;
        let Some(prefetcher) = prefetcher else {
            return Some(self.plan.read_block(&*self.source, index, out));
        };
        // Refill in bursts: a worker woken for one job takes the rest without sleeping,
        // so the threads wake each other a few times per burst, not per block.
        if self.in_flight.len() <= PREFETCH_DEPTH / 2 {
            while self.in_flight.len() < PREFETCH_DEPTH && self.requested < self.plan.block_count() {
                self.request(prefetcher);
            }
        }
        let received = self.in_flight.pop_front().and_then(|rx| rx.recv().ok());
        Some(match received {
            Some(Ok(bytes)) => {
                *out = bytes;
                Ok(())
            }
            Some(Err(e)) => Err(e),
            None => Err(BlockError { offset: self.plan.block_offset(index), message: "worker thread failed".into() }),
        })
    }

    fn request(&mut self, prefetcher: &Prefetcher) {
        let (tx, rx) = mpsc::sync_channel(1);
        let (plan, source, index) = (Arc::clone(&self.plan), Arc::clone(&self.source), self.requested);
        prefetcher.submit(Box::new(move || {
            let mut out = Vec::new();
            let result = plan.read_block(&*source, index, &mut out).map(|()| out);
            let _ = tx.send(result);
        }));
        self.in_flight.push_back(rx);
        self.requested += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked_file(pieces: &[&[u8]]) -> Vec<u8> {
        let mut file = vec![0u8; 8]; // unrelated leading bytes
        file.extend((pieces.len() as u32).to_le_bytes());
        for piece in pieces {
            let packed = Codec::Zstd.compress(piece).unwrap();
            file.extend((packed.len() as u32).to_le_bytes());
            file.extend((piece.len() as u32).to_le_bytes());
            file.extend(packed);
        }
        file
    }

    #[test]
    fn chunks_decode_directly_and_through_workers() {
        let pieces: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 1000 + i as usize]).collect();
        let refs: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
        let source: Arc<dyn Source> = Arc::new(chunked_file(&refs));
        let (plan, damage) = BlockPlan::chunks(&*source, 8, Endian::Little, Codec::Zstd);
        assert!(damage.is_none());
        let prefetcher = Prefetcher::new(2);
        for pool in [None, Some(&prefetcher)] {
            let mut fetcher = BlockFetcher::new(plan.clone(), Arc::clone(&source));
            let mut out = Vec::new();
            let mut got = Vec::new();
            while let Some(result) = fetcher.next(pool, &mut out) {
                result.unwrap();
                got.push(out.clone());
            }
            assert_eq!(got, pieces);
        }
    }

    #[test]
    fn truncated_chunk_table_keeps_the_good_chunks() {
        let file = chunked_file(&[b"aaaa", b"bbbbbbbb"]);
        let cut = file[..file.len() - 3].to_vec();
        let (plan, damage) = BlockPlan::chunks(&cut, 8, Endian::Little, Codec::Zstd);
        assert_eq!(plan.block_count(), 1);
        assert!(damage.unwrap().message.contains("chunk 1 of 2"));
    }

    #[test]
    fn a_chunk_table_reads_the_same_in_windows_as_header_by_header() {
        // Small chunks share a read-ahead window; the large ones are read header by header.
        let pieces: Vec<Vec<u8>> = (0..40u32)
            .map(|i| {
                let len = if i % 13 == 5 { 40_000 } else { 300 + i as usize * 37 };
                (0..len).map(|b| (b as u32).wrapping_mul(2_654_435_761).wrapping_add(i) as u8).collect()
            })
            .collect();
        let refs: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
        let file = chunked_file(&refs);
        // The table as written, walked without the plan's code.
        let mut expected = Vec::new();
        let mut at = 12;
        while at < file.len() {
            let word = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
            expected.push(Chunk { offset: at as u64 + 8, compressed_len: word(at), len: word(at + 4) });
            at += 8 + word(at) as usize;
        }
        let (plan, damage) = BlockPlan::chunks(&file, 8, Endian::Little, Codec::Zstd);
        assert!(damage.is_none());
        assert_eq!(plan, BlockPlan::Chunks { codec: Codec::Zstd, chunks: expected.clone() });
        // Cut anywhere, the chunks wholly present stay, and the damage is where the cut is.
        for cut in (13..file.len()).step_by(97) {
            let (plan, damage) = BlockPlan::chunks(&file[..cut].to_vec(), 8, Endian::Little, Codec::Zstd);
            let whole = expected.iter().take_while(|c| c.offset + u64::from(c.compressed_len) <= cut as u64).count();
            assert_eq!(
                plan,
                BlockPlan::Chunks { codec: Codec::Zstd, chunks: expected[..whole].to_vec() },
                "cut at {cut}"
            );
            let damage = damage.expect("a cut table is damaged");
            let header = expected.get(whole).map_or(cut as u64, |c| c.offset - 8);
            assert!(damage.offset >= header && damage.offset <= cut as u64, "cut at {cut}: {damage:?}");
            assert!(damage.message.contains(&format!("chunk {whole} of 40")), "cut at {cut}: {damage:?}");
        }
    }

    #[test]
    fn raw_plan_is_cut_to_the_file() {
        let (plan, damage) = BlockPlan::raw(100, 10_000, 64, 5_000);
        assert_eq!((0..plan.block_count()).map(|i| plan.block_file_len(i)).sum::<u64>(), 4_900);
        assert_eq!(damage.unwrap().offset, 5_000);
        assert_eq!(plan.block_count(), 5);
    }
}
