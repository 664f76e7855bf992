//! Writing trace.dat files (version 6, or 7 with zstd, zlib or no compression) in either
//! byte order and kernel long size: for generated traces (events packed into ring-buffer
//! pages) and for recorders that copy raw pages from tracefs. Metadata is collected here;
//! per-CPU data streams through [`CpuSink`]s into a spill file; [`TraceWriter::write_to`]
//! lays the file out once every size is known. The same input gives the same bytes.
//!
//! Generated events (the payload built from the event's format):
//!
//! ```no_run
//! use tracedat::{Endian, FileFormat, PayloadBuilder, TraceWriter, compress::Codec};
//!
//! let text = "name: my_event\nID: 900\nformat:\n\
//!     \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
//!     \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
//!     \tfield:int value;\toffset:8;\tsize:4;\tsigned:1;\n";
//! let my_event = tracedat::format::parse_event_format("demo", text, 8)?;
//! let mut writer = TraceWriter::new(FileFormat::v7(Codec::Zstd, Endian::Little, 8, 4096), 2)?;
//! writer.add_event_format("demo", text);
//! writer.add_cmdline(42, "worker");
//! let mut sink = writer.cpu_sink(TraceWriter::TOP, 1)?;
//! let mut payload = PayloadBuilder::new(&my_event, Endian::Little);
//! payload.set_int("common_pid", 42)?.set_int("value", -1)?;
//! sink.add_event(1_000, payload.bytes())?;
//! sink.mark_lost(Some(3)); // the next page says 3 events were lost before it
//! sink.add_event(2_000, payload.bytes())?;
//! writer.close_sink(sink)?;
//! writer.write_file("synth.dat")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Raw pages, as `per_cpu/cpuN/trace_pipe_raw` gives them (a sink may live on the thread
//! reading its CPU):
//!
//! ```no_run
//! use std::io::Read;
//! use tracedat::{Endian, FileFormat, TraceWriter, compress::Codec};
//!
//! let events = "/sys/kernel/tracing/events";
//! let mut writer = TraceWriter::new(FileFormat::v7(Codec::Zstd, Endian::Little, 8, 4096), 1)?;
//! writer.set_header_info(
//!     &std::fs::read_to_string(format!("{events}/header_page"))?,
//!     &std::fs::read_to_string(format!("{events}/header_event"))?,
//! )?;
//! writer.add_event_format("sched", &std::fs::read_to_string(format!("{events}/sched/sched_switch/format"))?);
//! writer.add_option(0x7e00, b"recorder context".to_vec())?;
//! let mut sink = writer.cpu_sink(TraceWriter::TOP, 0)?;
//! let mut pipe = std::fs::File::open("/sys/kernel/tracing/per_cpu/cpu0/trace_pipe_raw")?;
//! let mut page = vec![0u8; 4096];
//! while pipe.read(&mut page)? == page.len() {
//!     sink.add_page(&page)?;
//! }
//! writer.close_sink(sink)?;
//! writer.write_file("record.dat")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::compress::Codec;
use crate::endian::Endian;
use crate::read::format::parse_field_list;
use crate::read::ringbuf::PageLayout;
use crate::write::pagebuilder::{PageError, STANDARD_HEADER_EVENT, standard_header_page};
use crate::write::sink::{CpuSink, SinkSetup, Spill, StoredCpu};
use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Page sizes the reader accepts.
const PAGE_SIZES: std::ops::RangeInclusive<u32> = 64..=(1 << 26);

/// The file version and, for version 7, its compression.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FileVersion {
    V6,
    V7 { compression: Codec },
}

/// The file's initial format: version, byte order, long size and page size.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FileFormat {
    pub version: FileVersion,
    pub endian: Endian,
    /// The kernel's long size (4 or 8): the size of a page's commit word and stored
    /// lost-event count, hence where its data starts. Also written as the file header's
    /// long size.
    pub long_size: u8,
    /// The ring-buffer page size (of the top buffer; version 7 instances may differ).
    pub page_size: u32,
}

impl FileFormat {
    pub fn v6(endian: Endian, long_size: u8, page_size: u32) -> FileFormat {
        FileFormat { version: FileVersion::V6, endian, long_size, page_size }
    }

    pub fn v7(compression: Codec, endian: Endian, long_size: u8, page_size: u32) -> FileFormat {
        FileFormat { version: FileVersion::V7 { compression }, endian, long_size, page_size }
    }

    /// The codec of compressed sections and CPU data; `None` when nothing is compressed.
    pub(crate) fn codec(&self) -> Option<Codec> {
        match self.version {
            FileVersion::V7 { compression } if compression != Codec::None => Some(compression),
            _ => None,
        }
    }
}

/// A buffer of the trace: [`TraceWriter::TOP`] or an instance from
/// [`TraceWriter::add_instance`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BufferId(pub(crate) usize);

/// Why a trace could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{context}: {source}")]
    Io {
        context: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("unsupported long size {0} (expected 4 or 8)")]
    LongSize(u8),
    #[error("page size {0} is out of range (64 bytes to 64 MiB)")]
    PageSize(u32),
    #[error(transparent)]
    Page(#[from] PageError),
    #[error("header_page: {0}")]
    HeaderPage(String),
    #[error("the header texts must be set before the first CPU sink is made")]
    HeaderAfterSinks,
    #[error("CPU {cpu} is outside the trace's {cpu_count} CPUs")]
    CpuOutOfRange { cpu: u32, cpu_count: u32 },
    #[error("CPU {cpu} of buffer {buffer:?} was given a sink already")]
    SinkExists { buffer: String, cpu: u32 },
    #[error("the sink of CPU {cpu} of buffer {buffer:?} was not closed")]
    SinkNotClosed { buffer: String, cpu: u32 },
    #[error("the sink was made by another writer")]
    ForeignSink,
    #[error("buffer {0:?} exists already")]
    DuplicateBuffer(String),
    #[error("version 6 files have one page size ({file}); buffer {name:?} asks for {page_size}")]
    V6PageSize { name: String, page_size: u32, file: u32 },
    #[error("a raw page of {got} bytes where pages are {expected} bytes")]
    PageLength { expected: usize, got: usize },
    #[error("{what} of {size} bytes is too large for the file format")]
    TooLarge { what: &'static str, size: u64 },
    #[error("option id 0 (DONE) ends an options list and cannot be added")]
    ReservedOption,
    #[error("compression failed: {0}")]
    Compression(String),
}

impl WriteError {
    pub(crate) fn io(context: &'static str, source: io::Error) -> WriteError {
        WriteError::Io { context, source }
    }
}

/// A buffer being written.
pub(crate) struct BufferState {
    pub name: String,
    pub clock: String,
    pub page_size: u32,
    /// `None` while the CPU's sink is open.
    pub cpus: BTreeMap<u32, Option<StoredCpu>>,
}

/// The options with text (or caller-given) data, in the order they are written.
#[derive(Default)]
pub(crate) struct TextOptions {
    pub date: Option<String>,
    pub offsets: Vec<String>,
    pub trace_clock: Option<String>,
    pub uname: Option<String>,
    pub version: Option<String>,
    pub cpustats: Vec<String>,
    pub extra: Vec<(u16, Vec<u8>)>,
}

/// Collects a trace's metadata and per-CPU data, then writes the file.
pub struct TraceWriter {
    pub(crate) format: FileFormat,
    pub(crate) page_layout: PageLayout,
    pub(crate) cpu_count: u32,
    pub(crate) header_page: String,
    pub(crate) header_event: String,
    pub(crate) ftrace_formats: Vec<String>,
    /// (system, format texts) in the order systems were first seen.
    pub(crate) event_formats: Vec<(String, Vec<String>)>,
    pub(crate) kallsyms: String,
    pub(crate) printk_formats: String,
    pub(crate) cmdlines: String,
    pub(crate) options: TextOptions,
    pub(crate) buffers: Vec<BufferState>,
    pub(crate) spill: Arc<Spill>,
}

impl TraceWriter {
    /// The top buffer (the trace's main instance).
    pub const TOP: BufferId = BufferId(0);

    /// A writer for a machine with `cpu_count` CPUs, spilling CPU data into the system's
    /// temporary directory.
    pub fn new(format: FileFormat, cpu_count: u32) -> Result<TraceWriter, WriteError> {
        TraceWriter::with_spill_dir(format, cpu_count, &std::env::temp_dir())
    }

    /// As [`TraceWriter::new`], spilling CPU data into `dir` (e.g. next to the output).
    pub fn with_spill_dir(format: FileFormat, cpu_count: u32, dir: &Path) -> Result<TraceWriter, WriteError> {
        if !matches!(format.long_size, 4 | 8) {
            return Err(WriteError::LongSize(format.long_size));
        }
        check_page_size(format.page_size)?;
        let page_layout = PageLayout::standard(format.endian, format.long_size as usize);
        let spill = Spill::create(dir).map_err(|e| WriteError::io("creating the spill file", e))?;
        Ok(TraceWriter {
            format,
            page_layout,
            cpu_count,
            header_page: standard_header_page(format.long_size, format.page_size),
            header_event: STANDARD_HEADER_EVENT.to_string(),
            ftrace_formats: Vec::new(),
            event_formats: Vec::new(),
            kallsyms: String::new(),
            printk_formats: String::new(),
            cmdlines: String::new(),
            options: TextOptions::default(),
            buffers: vec![BufferState {
                name: String::new(),
                clock: "local".into(),
                page_size: format.page_size,
                cpus: BTreeMap::new(),
            }],
            spill: Arc::new(spill),
        })
    }

    pub fn format(&self) -> &FileFormat {
        &self.format
    }

    /// Uses the kernel's own `header_page` and `header_event` texts instead of generated
    /// ones. The page layout is taken from `header_page`; its commit size must be the
    /// format's long size. Only before the first sink is made.
    pub fn set_header_info(&mut self, header_page: &str, header_event: &str) -> Result<(), WriteError> {
        if self.buffers.iter().any(|b| !b.cpus.is_empty()) {
            return Err(WriteError::HeaderAfterSinks);
        }
        let fields =
            parse_field_list(header_page, self.format.long_size).map_err(|e| WriteError::HeaderPage(e.to_string()))?;
        let layout = PageLayout::from_header_fields(&fields, self.format.endian)
            .ok_or_else(|| WriteError::HeaderPage("no usable timestamp/commit/data fields".into()))?;
        if layout.commit_size != self.format.long_size as usize {
            return Err(WriteError::HeaderPage(format!(
                "commit is {} bytes but the long size is {}",
                layout.commit_size, self.format.long_size
            )));
        }
        self.page_layout = layout;
        self.header_page = header_page.to_string();
        self.header_event = header_event.to_string();
        Ok(())
    }

    /// Adds an event format file (`events/<system>/<event>/format`); system `ftrace`
    /// goes to the ftrace formats. The text is stored as given.
    pub fn add_event_format(&mut self, system: &str, text: &str) {
        if system == "ftrace" {
            self.ftrace_formats.push(text.to_string());
            return;
        }
        match self.event_formats.iter_mut().find(|(s, _)| s == system) {
            Some((_, texts)) => texts.push(text.to_string()),
            None => self.event_formats.push((system.to_string(), vec![text.to_string()])),
        }
    }

    /// `/proc/kallsyms` text.
    pub fn set_kallsyms(&mut self, text: &str) {
        self.kallsyms = text.to_string();
    }

    /// `printk_formats` text.
    pub fn set_printk_formats(&mut self, text: &str) {
        self.printk_formats = text.to_string();
    }

    /// `saved_cmdlines` text (`PID COMM` lines), replacing any added before.
    pub fn set_cmdlines(&mut self, text: &str) {
        self.cmdlines = text.to_string();
    }

    /// Adds one `PID COMM` line to the saved cmdlines.
    pub fn add_cmdline(&mut self, pid: i32, comm: &str) {
        self.cmdlines.push_str(&format!("{pid} {comm}\n"));
    }

    /// The top buffer's trace clock (`local` unless set).
    pub fn set_clock(&mut self, clock: &str) {
        self.buffers[0].clock = clock.to_string();
    }

    /// TRACECLOCK: the `trace_clock` file listing the clocks, the current one in brackets.
    /// Without it, the option lists only the top buffer's clock.
    pub fn set_trace_clock_file(&mut self, text: &str) {
        self.options.trace_clock = Some(text.to_string());
    }

    /// UNAME: the traced system (`sysname nodename release machine`).
    pub fn set_uname(&mut self, text: &str) {
        self.options.uname = Some(text.to_string());
    }

    /// VERSION: the recorder's version.
    pub fn set_recorder_version(&mut self, text: &str) {
        self.options.version = Some(text.to_string());
    }

    /// DATE: offset to wall-clock time in microseconds, as text (`0x...`).
    pub fn set_date(&mut self, text: &str) {
        self.options.date = Some(text.to_string());
    }

    /// OFFSET: nanoseconds added to every timestamp, as text.
    pub fn add_offset(&mut self, text: &str) {
        self.options.offsets.push(text.to_string());
    }

    /// CPUSTAT: one CPU's `per_cpu/cpuN/stats` text; add one per CPU, in CPU order.
    pub fn add_cpustat(&mut self, text: &str) {
        self.options.cpustats.push(text.to_string());
    }

    /// Any other option, stored as given after the ones above. `trace-cmd report` skips
    /// ids it does not know.
    pub fn add_option(&mut self, id: u16, data: Vec<u8>) -> Result<(), WriteError> {
        if id == crate::read::options::id::DONE {
            return Err(WriteError::ReservedOption);
        }
        self.options.extra.push((id, data));
        Ok(())
    }

    /// Adds a tracing instance (`record -B NAME`). Version 6 files have one page size.
    pub fn add_instance(&mut self, name: &str, clock: &str, page_size: u32) -> Result<BufferId, WriteError> {
        check_page_size(page_size)?;
        if self.buffers.iter().any(|b| b.name == name) {
            return Err(WriteError::DuplicateBuffer(name.to_string()));
        }
        if self.format.version == FileVersion::V6 && page_size != self.format.page_size {
            return Err(WriteError::V6PageSize { name: name.to_string(), page_size, file: self.format.page_size });
        }
        self.buffers.push(BufferState {
            name: name.to_string(),
            clock: clock.to_string(),
            page_size,
            cpus: BTreeMap::new(),
        });
        Ok(BufferId(self.buffers.len() - 1))
    }

    /// The sink for one CPU of a buffer; one per CPU and buffer.
    pub fn cpu_sink(&mut self, buffer: BufferId, cpu: u32) -> Result<CpuSink, WriteError> {
        if cpu >= self.cpu_count {
            return Err(WriteError::CpuOutOfRange { cpu, cpu_count: self.cpu_count });
        }
        let state = &mut self.buffers[buffer.0];
        if state.cpus.contains_key(&cpu) {
            return Err(WriteError::SinkExists { buffer: state.name.clone(), cpu });
        }
        let sink = CpuSink::new(SinkSetup {
            buffer,
            cpu,
            layout: self.page_layout,
            page_size: state.page_size,
            codec: self.format.codec(),
            spill: Arc::clone(&self.spill),
        })?;
        state.cpus.insert(cpu, None);
        Ok(sink)
    }

    /// Takes a sink's data back (finishing its last page).
    pub fn close_sink(&mut self, sink: CpuSink) -> Result<(), WriteError> {
        if !Arc::ptr_eq(sink.spill(), &self.spill) {
            return Err(WriteError::ForeignSink);
        }
        let (buffer, cpu, stored) = sink.close()?;
        self.buffers[buffer.0].cpus.insert(cpu, Some(stored));
        Ok(())
    }

    /// Writes the file to `out`; returns its size. Every sink must have been closed.
    pub fn write_to(self, out: impl io::Write) -> Result<u64, WriteError> {
        for buffer in &self.buffers {
            if let Some((&cpu, _)) = buffer.cpus.iter().find(|(_, s)| s.is_none()) {
                return Err(WriteError::SinkNotClosed { buffer: buffer.name.clone(), cpu });
            }
        }
        crate::write::assemble::write_file(&self, out)
    }

    /// Writes the file to `path`.
    pub fn write_file(self, path: impl AsRef<Path>) -> Result<u64, WriteError> {
        let file = std::fs::File::create(path.as_ref()).map_err(|e| WriteError::io("creating the output file", e))?;
        self.write_to(file)
    }
}

fn check_page_size(page_size: u32) -> Result<(), WriteError> {
    if !PAGE_SIZES.contains(&page_size) {
        return Err(WriteError::PageSize(page_size));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(version: FileVersion) -> TraceWriter {
        let format = FileFormat { version, endian: Endian::Little, long_size: 8, page_size: 4096 };
        TraceWriter::new(format, 2).unwrap()
    }

    #[test]
    fn sinks_can_move_to_other_threads() {
        fn is_send<T: Send>() {}
        is_send::<CpuSink>();
    }

    #[test]
    fn misuse_is_an_error() {
        let mut w = writer(FileVersion::V6);
        assert!(matches!(w.cpu_sink(TraceWriter::TOP, 2), Err(WriteError::CpuOutOfRange { cpu: 2, .. })));
        assert!(matches!(w.add_instance("x", "local", 8192), Err(WriteError::V6PageSize { .. })));
        assert!(matches!(w.add_instance("", "local", 4096), Err(WriteError::DuplicateBuffer(_))));
        assert!(matches!(w.add_option(0, vec![]), Err(WriteError::ReservedOption)));
        let mut sink = w.cpu_sink(TraceWriter::TOP, 1).unwrap();
        assert!(matches!(w.cpu_sink(TraceWriter::TOP, 1), Err(WriteError::SinkExists { cpu: 1, .. })));
        assert!(matches!(sink.add_page(&[0; 100]), Err(WriteError::PageLength { expected: 4096, got: 100 })));
        assert!(matches!(sink.add_event(1, &[0; 5000]), Err(WriteError::Page(PageError::EventTooLarge { .. }))));
        assert!(matches!(
            w.set_header_info(&standard_header_page(8, 4096), STANDARD_HEADER_EVENT),
            Err(WriteError::HeaderAfterSinks)
        ));
        let mut other = writer(FileVersion::V6);
        let stranger = other.cpu_sink(TraceWriter::TOP, 0).unwrap();
        assert!(matches!(w.close_sink(stranger), Err(WriteError::ForeignSink)));
        assert!(matches!(w.write_to(Vec::new()), Err(WriteError::SinkNotClosed { cpu: 1, .. })));
        drop(sink);
    }

    #[test]
    fn header_page_must_match_the_long_size() {
        let mut w = writer(FileVersion::V7 { compression: Codec::None });
        assert!(matches!(
            w.set_header_info(&standard_header_page(4, 4096), STANDARD_HEADER_EVENT),
            Err(WriteError::HeaderPage(_))
        ));
        assert!(matches!(w.set_header_info("garbage", ""), Err(WriteError::HeaderPage(_))));
        let kernel_text = standard_header_page(8, 4096).replace("signed:0;\n", "signed:1;\n");
        w.set_header_info(&kernel_text, STANDARD_HEADER_EVENT).unwrap();
        assert_eq!(w.header_page, kernel_text);
        assert!(matches!(TraceWriter::new(FileFormat::v6(Endian::Big, 2, 4096), 1), Err(WriteError::LongSize(2))));
        assert!(matches!(TraceWriter::new(FileFormat::v6(Endian::Big, 8, 32), 1), Err(WriteError::PageSize(32))));
    }
}
