//! Walks one CPU's records of one buffer in file order: block → page → record, keeping
//! the running timestamp and the "events lost before this page" notice. Damage skips the
//! damaged page or block and is recorded; it never stops the other CPUs.

use crate::error::{Error, ErrorKind, Section};
use crate::read::blocks::{BlockError, BlockFetcher, BlockPlan, Prefetcher};
use crate::read::ringbuf::{Missed, PageLayout, PageRecords, read_page_header};
use crate::read::timestamps::TimeCorrection;

/// Order of events across CPUs: timestamp, then buffer, then CPU (trace-cmd's tie rule).
pub(crate) type MergeKey = (u64, u16, u32);

pub(crate) struct CpuCursor {
    pub buffer: u16,
    pub cpu: u32,
    buffer_name: String,
    input: String,
    fetcher: BlockFetcher,
    layout: PageLayout,
    page_size: usize,
    correction: TimeCorrection,
    block: Vec<u8>,
    /// Index of the block held in `block`.
    block_index: usize,
    page_start: usize,
    data_start: usize,
    data_end: usize,
    record_pos: usize,
    raw_ts: u64,
    in_page: bool,
    pending_missed: Missed,
    /// The current record: corrected timestamp, bounds in `block`, loss before it.
    pub ts: u64,
    start: usize,
    end: usize,
    pub missed: Missed,
    pub bytes_done: u64,
}

pub(crate) struct CursorSetup {
    pub buffer: u16,
    pub buffer_name: String,
    pub cpu: u32,
    pub input: String,
    pub layout: PageLayout,
    pub page_size: u32,
    pub correction: TimeCorrection,
}

impl CpuCursor {
    pub fn new(setup: CursorSetup, fetcher: BlockFetcher) -> CpuCursor {
        CpuCursor {
            buffer: setup.buffer,
            cpu: setup.cpu,
            buffer_name: setup.buffer_name,
            input: setup.input,
            fetcher,
            layout: setup.layout,
            page_size: setup.page_size as usize,
            correction: setup.correction,
            block: Vec::new(),
            block_index: 0,
            page_start: 0,
            data_start: 0,
            data_end: 0,
            record_pos: 0,
            raw_ts: 0,
            in_page: false,
            pending_missed: Missed::None,
            ts: 0,
            start: 0,
            end: 0,
            missed: Missed::None,
            bytes_done: 0,
        }
    }

    #[inline]
    pub fn key(&self) -> MergeKey {
        (self.ts, self.buffer, self.cpu)
    }

    /// The current record's bytes.
    #[inline]
    pub fn record(&self) -> &[u8] {
        &self.block[self.start..self.end]
    }

    /// The bytes after the current record up to the end of its page.
    #[inline]
    pub fn page_rest(&self) -> &[u8] {
        let page_end = (self.page_start + self.page_size).min(self.block.len());
        &self.block[self.end.min(page_end)..page_end]
    }

    /// Moves to the next data record; false when the CPU has no more.
    pub fn advance(&mut self, prefetcher: Option<&Prefetcher>, damage: &mut Vec<Error>) -> bool {
        loop {
            if self.in_page {
                let data = &self.block[self.data_start..self.data_end];
                let mut records = PageRecords::resume(data, self.record_pos, self.raw_ts, self.layout.endian);
                match records.next() {
                    Some(Ok(record)) => {
                        self.record_pos = records.position();
                        self.raw_ts = records.timestamp();
                        self.ts = self.correction.apply(record.timestamp, self.cpu);
                        self.start = self.data_start + record.start;
                        self.end = self.data_start + record.end;
                        self.missed = std::mem::replace(&mut self.pending_missed, Missed::None);
                        return true;
                    }
                    Some(Err(kind)) => damage.push(self.page_error(kind)),
                    None => {}
                }
                self.in_page = false;
                self.page_start += self.page_size;
            }
            if !self.enter_page(prefetcher, damage) {
                return false;
            }
        }
    }

    /// Makes the page at `page_start` current, loading blocks as needed.
    fn enter_page(&mut self, prefetcher: Option<&Prefetcher>, damage: &mut Vec<Error>) -> bool {
        loop {
            while self.page_start >= self.block.len() {
                if !self.load_block(prefetcher, damage) {
                    return false;
                }
            }
            let page_end = (self.page_start + self.page_size).min(self.block.len());
            match read_page_header(&self.block[self.page_start..page_end], &self.layout) {
                Ok(header) => {
                    self.data_start = self.page_start + self.layout.data_offset;
                    self.data_end = self.data_start + header.data_len;
                    self.record_pos = 0;
                    self.raw_ts = header.timestamp;
                    self.pending_missed = self.pending_missed.and(header.missed);
                    self.in_page = true;
                    return true;
                }
                Err(kind) => {
                    damage.push(self.page_error(kind));
                    self.page_start += self.page_size;
                }
            }
        }
    }

    fn load_block(&mut self, prefetcher: Option<&Prefetcher>, damage: &mut Vec<Error>) -> bool {
        loop {
            let index = self.fetcher.next_index();
            match self.fetcher.next(prefetcher, &mut self.block) {
                None => return false,
                Some(result) => {
                    self.bytes_done += self.fetcher.plan().block_file_len(index);
                    self.block_index = index;
                    self.page_start = 0;
                    match result {
                        Ok(()) => return true,
                        Err(e) => {
                            self.block.clear();
                            damage.push(self.block_error(e));
                        }
                    }
                }
            }
        }
    }

    fn section(&self) -> Section {
        Section::CpuData { buffer: self.buffer_name.clone(), cpu: self.cpu }
    }

    pub fn block_error(&self, e: BlockError) -> Error {
        Error {
            input: self.input.clone(),
            section: self.section(),
            offset: e.offset,
            kind: ErrorKind::Malformed(e.message),
        }
    }

    fn page_error(&self, kind: ErrorKind) -> Error {
        let plan = self.fetcher.plan();
        let block_offset = plan.block_offset(self.block_index);
        let (offset, kind) = match plan {
            BlockPlan::Raw { .. } => (block_offset + self.page_start as u64, kind),
            BlockPlan::Chunks { .. } => {
                let page = self.page_start / self.page_size;
                (block_offset, ErrorKind::Malformed(format!("page {page} of the chunk: {kind}")))
            }
        };
        Error { input: self.input.clone(), section: self.section(), offset, kind }
    }
}
