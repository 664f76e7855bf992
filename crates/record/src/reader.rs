//! One reader thread per CPU copies whole ring-buffer pages from `per_cpu/cpuN/trace_pipe_raw`
//! into that CPU's [`CpuSink`]. Files are non-blocking: a reader drains its CPU until the
//! kernel says "empty", then polls (woken by the kernel at `buffer_percent`, or after
//! [`POLL_MS`] at the latest). At the end, tracing is switched off first; each reader
//! then drains what is left and stops. Pages carry the kernel's lost-event flags, which
//! are counted here and kept in the file as they are.

use crate::error::RecordError;
use crate::tracefs::Tracefs;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use tracedat::CpuSink;
use tracedat::ringbuf::{Missed, PageHeader, PageLayout, read_page_header};

/// The longest a reader sleeps between drains: the buffer must hold this long's events.
const POLL_MS: i32 = 100;

/// Events the kernel reported lost.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Losses {
    /// Lost events whose number the kernel stored.
    pub events: u64,
    /// Pages saying events were lost before them without saying how many.
    pub unknown: u64,
}

impl Losses {
    pub fn is_none(&self) -> bool {
        *self == Losses::default()
    }

    pub(crate) fn add(&mut self, other: Losses) {
        self.events += other.events;
        self.unknown += other.unknown;
    }

    pub(crate) fn count(&mut self, missed: Missed) {
        match missed {
            Missed::None => {}
            Missed::Unknown => self.unknown += 1,
            Missed::Count(n) => self.events += n,
        }
    }
}

/// What one CPU's reader collected.
pub(crate) struct CpuResult {
    pub sink: CpuSink,
    pub losses: Losses,
}

/// The running readers.
pub(crate) struct Readers {
    stop: Arc<AtomicBool>,
    threads: Vec<(u32, JoinHandle<Result<CpuResult, RecordError>>)>,
}

impl Readers {
    /// Opens every CPU's `trace_pipe_raw` (so a refusal is reported before anything runs)
    /// and starts a reader for each.
    pub fn start(
        fs: &Tracefs,
        sinks: Vec<CpuSink>,
        layout: PageLayout,
        page_size: usize,
    ) -> Result<Readers, RecordError> {
        let stop = Arc::new(AtomicBool::new(false));
        let readers = sinks
            .into_iter()
            .map(|sink| CpuReader::open(fs, sink, layout, page_size))
            .collect::<Result<Vec<_>, _>>()?;
        let threads = readers
            .into_iter()
            .map(|reader| {
                let stop = Arc::clone(&stop);
                let cpu = reader.sink.cpu();
                let thread = std::thread::Builder::new()
                    .name(format!("record-cpu{cpu}"))
                    .spawn(move || reader.run(&stop))
                    .map_err(|source| RecordError::System { context: "starting a reader thread", source })?;
                Ok((cpu, thread))
            })
            .collect::<Result<Vec<_>, RecordError>>()?;
        Ok(Readers { stop, threads })
    }

    /// Lets each reader drain its CPU and stop (call once tracing is off).
    pub fn finish(mut self) -> Result<Vec<CpuResult>, RecordError> {
        self.stop.store(true, Ordering::SeqCst);
        std::mem::take(&mut self.threads)
            .into_iter()
            .map(|(cpu, thread)| thread.join().map_err(|_| RecordError::ReaderPanicked(cpu))?)
            .collect()
    }
}

impl Drop for Readers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// One CPU's `trace_pipe_raw`, read a whole page at a time: both the recording's readers
/// and the live ones ([`crate::live`]) drain it the same way and differ only in what
/// they do with a page.
pub(crate) struct PipeRaw {
    path: PathBuf,
    file: File,
    layout: PageLayout,
    page: Vec<u8>,
    losses: Losses,
}

impl PipeRaw {
    /// Opens `cpu`'s file, non-blocking.
    pub fn open(fs: &Tracefs, cpu: u32, layout: PageLayout, page_size: usize) -> Result<PipeRaw, RecordError> {
        let path = fs.path(&format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
        let file = File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| RecordError::file(&path, e))?;
        Ok(PipeRaw { path, file, layout, page: vec![0; page_size], losses: Losses::default() })
    }

    /// Hands `keep` every page with events or a loss until the kernel has none (losses
    /// counted here); false as soon as `keep` says to stop.
    pub fn drain(
        &mut self,
        keep: &mut impl FnMut(&[u8], &PageHeader) -> Result<bool, RecordError>,
    ) -> Result<bool, RecordError> {
        loop {
            match self.file.read(&mut self.page) {
                Ok(0) => return Ok(true),
                Ok(n) if n == self.page.len() => {
                    let header = read_page_header(&self.page, &self.layout).map_err(|e| RecordError::Content {
                        path: self.path.clone(),
                        text: format!("a page the reader cannot use: {e}"),
                    })?;
                    if header.data_len == 0 && header.missed == Missed::None {
                        continue;
                    }
                    self.losses.count(header.missed);
                    if !keep(&self.page, &header)? {
                        return Ok(false);
                    }
                }
                Ok(n) => {
                    let error = io::Error::other(format!("short read of {n} bytes (pages are {})", self.page.len()));
                    return Err(RecordError::file(&self.path, error));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(RecordError::file(&self.path, e)),
            }
        }
    }

    /// Sleeps until the kernel has pages for this CPU or `poll_ms` passed.
    pub fn wait(&self, poll_ms: i32) {
        let mut poll = libc::pollfd { fd: self.file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd; an interrupted or failed poll just means "drain now".
        unsafe { libc::poll(&mut poll, 1, poll_ms) };
    }

    pub fn layout(&self) -> &PageLayout {
        &self.layout
    }

    pub fn losses(&self) -> Losses {
        self.losses
    }
}

struct CpuReader {
    pipe: PipeRaw,
    sink: CpuSink,
}

impl CpuReader {
    fn open(fs: &Tracefs, sink: CpuSink, layout: PageLayout, page_size: usize) -> Result<CpuReader, RecordError> {
        Ok(CpuReader { pipe: PipeRaw::open(fs, sink.cpu(), layout, page_size)?, sink })
    }

    fn run(mut self, stop: &AtomicBool) -> Result<CpuResult, RecordError> {
        loop {
            // Seen before the drain: a stop set after tracing went off is followed by one
            // more complete drain.
            let stopping = stop.load(Ordering::SeqCst);
            let sink = &mut self.sink;
            self.pipe.drain(&mut |page, _| sink.add_page(page).map(|()| true).map_err(RecordError::from))?;
            if stopping {
                return Ok(CpuResult { sink: self.sink, losses: self.pipe.losses() });
            }
            self.pipe.wait(POLL_MS);
        }
    }
}
