//! One CPU's ring-buffer data while a trace is being written. Pages (built from events or
//! copied raw) are gathered a few at a time, compressed into trace-cmd's 10-page chunks
//! when the file is compressed, and appended to a shared spill file, so memory stays at a
//! few pages per CPU however long the trace. The final file is assembled from the spill
//! file at the end, when every size is known.

use crate::compress::Codec;
use crate::endian::Endian;
use crate::read::ringbuf::PageLayout;
use crate::write::pagebuilder::{PageBuilder, TimestampMode};
use crate::write::writer::{BufferId, WriteError};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Pages per compressed chunk, as trace-cmd writes them.
const PAGES_PER_CHUNK: usize = 10;
/// Pages gathered before uncompressed data is spilled.
const PAGES_PER_RAW_BLOCK: usize = 16;
const COPY_BUFFER: usize = 1 << 20;

/// A run of bytes in the spill file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub offset: u64,
    pub len: u64,
}

/// An unnamed temporary file that sinks append to from any thread.
pub(crate) struct Spill {
    file: File,
    end: AtomicU64,
}

impl Spill {
    /// Creates the file in `dir` and unlinks it at once: it disappears with the writer,
    /// even if the process dies.
    pub fn create(dir: &Path) -> io::Result<Spill> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let name = format!(".tracedat-spill-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
            let path = dir.join(name);
            match OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
                Ok(file) => {
                    std::fs::remove_file(&path)?;
                    return Ok(Spill { file, end: AtomicU64::new(0) });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn append(&self, bytes: &[u8]) -> io::Result<u64> {
        let at = self.end.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.file.write_all_at(bytes, at)?;
        Ok(at)
    }

    /// Copies segments to `out`.
    pub fn copy(&self, segments: &[Segment], out: &mut dyn Write) -> io::Result<()> {
        let mut buf = vec![0u8; COPY_BUFFER.min(segments.iter().map(|s| s.len).sum::<u64>() as usize)];
        for segment in segments {
            let mut done = 0;
            while done < segment.len {
                let n = (segment.len - done).min(buf.len() as u64) as usize;
                self.file.read_exact_at(&mut buf[..n], segment.offset + done)?;
                out.write_all(&buf[..n])?;
                done += n as u64;
            }
        }
        Ok(())
    }
}

/// What a closed sink stored.
#[derive(Clone, Debug, Default)]
pub(crate) struct StoredCpu {
    pub segments: Vec<Segment>,
    /// Bytes in the spill file.
    pub len: u64,
    /// Compressed chunks; `None` for raw pages.
    pub chunks: Option<u32>,
}

impl StoredCpu {
    /// The size of the CPU's data in the file: the chunk count word, then the chunks; or
    /// the raw pages. Zero for a CPU without data.
    pub fn file_size(&self) -> u64 {
        match self.chunks {
            Some(n) if n > 0 => 4 + self.len,
            _ => self.len,
        }
    }

    fn record(&mut self, offset: u64, len: u64) {
        self.len += len;
        match self.segments.last_mut() {
            Some(last) if last.offset + last.len == offset => last.len += len,
            _ => self.segments.push(Segment { offset, len }),
        }
    }
}

/// Everything a sink needs from its writer.
pub(crate) struct SinkSetup {
    pub buffer: BufferId,
    pub cpu: u32,
    pub layout: PageLayout,
    pub page_size: u32,
    /// `None` stores raw pages.
    pub codec: Option<Codec>,
    pub spill: Arc<Spill>,
}

/// Receives one CPU's data of one buffer: events (packed into pages here) or whole raw
/// ring-buffer pages (as `trace_pipe_raw` gives them). Made by
/// [`crate::TraceWriter::cpu_sink`], handed back with [`crate::TraceWriter::close_sink`];
/// it may live on another thread in between.
pub struct CpuSink {
    buffer: BufferId,
    cpu: u32,
    builder: PageBuilder,
    page_size: usize,
    codec: Option<Codec>,
    endian: Endian,
    /// Finished pages not yet spilled.
    pending: Vec<u8>,
    spill: Arc<Spill>,
    stored: StoredCpu,
    pages: u64,
}

impl CpuSink {
    pub(crate) fn new(setup: SinkSetup) -> Result<CpuSink, WriteError> {
        Ok(CpuSink {
            buffer: setup.buffer,
            cpu: setup.cpu,
            builder: PageBuilder::new(setup.layout, setup.page_size)?,
            page_size: setup.page_size as usize,
            codec: setup.codec,
            endian: setup.layout.endian,
            pending: Vec::new(),
            spill: setup.spill,
            stored: StoredCpu { chunks: setup.codec.map(|_| 0), ..StoredCpu::default() },
            pages: 0,
        })
    }

    pub fn buffer(&self) -> BufferId {
        self.buffer
    }

    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Pages finished so far (built or raw).
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// How the following events carry their timestamps.
    pub fn set_timestamp_mode(&mut self, mode: TimestampMode) {
        self.builder.set_mode(mode);
    }

    /// Adds an event: `ts` is the raw ring-buffer timestamp, `payload` the record's data
    /// (starting with the common fields). An event earlier than the previous one starts a
    /// new page, whose header carries the full timestamp.
    pub fn add_event(&mut self, ts: u64, payload: &[u8]) -> Result<(), WriteError> {
        if self.builder.add(ts, payload)? {
            return Ok(());
        }
        self.finish_page()?;
        let added = self.builder.add(ts, payload)?;
        debug_assert!(added, "an empty page takes any event that fits a page");
        Ok(())
    }

    /// Adds a whole ring-buffer page as the kernel wrote it (after any events added
    /// before, which end their page).
    pub fn add_page(&mut self, page: &[u8]) -> Result<(), WriteError> {
        if page.len() != self.page_size {
            return Err(WriteError::PageLength { expected: self.page_size, got: page.len() });
        }
        if !self.builder.is_empty() {
            self.finish_page()?;
        }
        self.pending.extend_from_slice(page);
        self.page_added()
    }

    /// Records that events were lost before the next event (`None`: the count is not
    /// known). The page being built ends here; the next one carries the loss in its
    /// commit word (with the count stored after its data when given). A loss after the
    /// last event is not stored, as nothing would report it; raw pages carry their own.
    pub fn mark_lost(&mut self, count: Option<u64>) {
        self.builder.mark_lost(count);
    }

    fn finish_page(&mut self) -> Result<(), WriteError> {
        self.builder.finish_into(&mut self.pending);
        self.page_added()
    }

    fn page_added(&mut self) -> Result<(), WriteError> {
        self.pages += 1;
        let block = match self.codec {
            Some(_) => PAGES_PER_CHUNK,
            None => PAGES_PER_RAW_BLOCK,
        };
        if self.pending.len() >= block * self.page_size {
            self.spill_pending()?;
        }
        Ok(())
    }

    fn spill_pending(&mut self) -> Result<(), WriteError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let chunk;
        let bytes = match self.codec {
            None => &self.pending,
            Some(codec) => {
                chunk = self.chunk(codec)?;
                self.stored.chunks = self.stored.chunks.map(|n| n + 1);
                &chunk
            }
        };
        let at = self.spill.append(bytes).map_err(|e| WriteError::io("writing the spill file", e))?;
        let len = bytes.len() as u64;
        self.stored.record(at, len);
        self.pending.clear();
        Ok(())
    }

    /// The pending pages as one chunk: compressed size, uncompressed size, data.
    fn chunk(&self, codec: Codec) -> Result<Vec<u8>, WriteError> {
        let packed = codec.compress(&self.pending).map_err(|e| WriteError::Compression(e.to_string()))?;
        let mut chunk = Vec::with_capacity(8 + packed.len());
        chunk.extend_from_slice(&self.endian.to_bytes_u32(packed.len() as u32));
        chunk.extend_from_slice(&self.endian.to_bytes_u32(self.pending.len() as u32));
        chunk.extend_from_slice(&packed);
        Ok(chunk)
    }

    /// Stores what is left; the data as the file will hold it.
    pub(crate) fn close(mut self) -> Result<(BufferId, u32, StoredCpu), WriteError> {
        if !self.builder.is_empty() {
            self.finish_page()?;
        }
        self.spill_pending()?;
        Ok((self.buffer, self.cpu, self.stored))
    }

    pub(crate) fn spill(&self) -> &Arc<Spill> {
        &self.spill
    }
}
