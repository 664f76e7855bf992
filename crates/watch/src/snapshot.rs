//! A stretch of the ring as a trace.dat: the kernel's page header and formats, the
//! machine's metadata and the recorded context (topology, tunables, affinity) around the
//! pages as read. Detection reads such a file from memory (so it sees exactly what
//! `schedlens check` would see in an incident file), and incidents are written as one.

use crate::ring::Ring;
use std::path::Path;
use tracedat::ringbuf::PageLayout;
use tracedat::{Endian, FileFormat, FileVersion, RecordedContext, Trace, TraceWriter, WriteError};

/// What every file cut from the ring carries besides its pages: what tracefs said when
/// watching began (or what a replayed trace holds).
#[derive(Clone, Debug)]
pub struct Setup {
    pub cpu_count: u32,
    pub page_size: u32,
    /// The kernel's long size (the commit word's).
    pub long_size: u8,
    pub endian: Endian,
    pub header_page: String,
    pub header_event: String,
    /// Format files, (system, text).
    pub format_files: Vec<(String, String)>,
    pub printk_formats: String,
    /// `saved_cmdlines` text (`PID COMM` lines).
    pub cmdlines: String,
    pub clock: String,
    pub trace_clock_file: Option<String>,
    pub uname: Option<String>,
    /// Per-CPU statistics texts (`CPU: N` then tracefs's `stats`), when known.
    pub cpu_stats: Vec<String>,
    pub context: RecordedContext,
}

impl Setup {
    /// The setup of a recorded trace, to replay its pages.
    pub fn of_trace(trace: &Trace) -> Setup {
        let meta = trace.metadata();
        let cmdlines: String = meta.cmdlines.iter().map(|(pid, comm)| format!("{pid} {comm}\n")).collect();
        Setup {
            cpu_count: trace.cpu_count(),
            page_size: meta.header.page_size,
            long_size: meta.kernel_long_size,
            endian: meta.header.endian,
            header_page: meta.header_page.clone(),
            header_event: meta.header_event.clone(),
            format_files: meta.format_files.clone(),
            printk_formats: meta.printk.text().to_string(),
            cmdlines,
            clock: trace.clock().unwrap_or("local").to_string(),
            trace_clock_file: None,
            uname: meta.options.uname.clone(),
            cpu_stats: Vec::new(),
            context: trace.recorded_context().unwrap_or_default(),
        }
    }

    /// The pages' layout, from `header_page`.
    pub fn layout(&self) -> PageLayout {
        let fields = tracedat::format::parse_field_list(&self.header_page, self.long_size).unwrap_or_default();
        PageLayout::from_header_fields(&fields, self.endian)
            .unwrap_or_else(|| PageLayout::standard(self.endian, usize::from(self.long_size)))
    }
}

/// The events of `from_ns` to `to_ns` (whole pages around them) of every CPU as a trace
/// writer, ready to write; its spill file goes to `spill_dir`.
pub fn snapshot(
    setup: &Setup,
    ring: &Ring,
    (from_ns, to_ns): (u64, u64),
    version: FileVersion,
    spill_dir: &Path,
) -> Result<TraceWriter, WriteError> {
    let format = match version {
        FileVersion::V6 => FileFormat::v6(setup.endian, setup.long_size, setup.page_size),
        FileVersion::V7 { compression } => FileFormat::v7(compression, setup.endian, setup.long_size, setup.page_size),
    };
    let mut writer = TraceWriter::with_spill_dir(format, setup.cpu_count, spill_dir)?;
    writer.set_header_info(&setup.header_page, &setup.header_event)?;
    for (system, text) in &setup.format_files {
        writer.add_event_format(system, text);
    }
    writer.set_printk_formats(&setup.printk_formats);
    writer.set_cmdlines(&setup.cmdlines);
    writer.set_clock(&setup.clock);
    if let Some(text) = &setup.trace_clock_file {
        writer.set_trace_clock_file(text);
    }
    if let Some(uname) = &setup.uname {
        writer.set_uname(uname);
    }
    writer.set_recorder_version(&format!("schedlens {} watch", env!("CARGO_PKG_VERSION")));
    for text in &setup.cpu_stats {
        writer.add_cpustat(text);
    }
    for (id, data) in setup.context.to_options() {
        writer.add_option(id, data)?;
    }
    for cpu in 0..ring.cpu_count() {
        let mut pages = ring.pages(cpu, from_ns, to_ns).peekable();
        if pages.peek().is_none() {
            continue;
        }
        let mut sink = writer.cpu_sink(TraceWriter::TOP, cpu)?;
        for page in pages {
            sink.add_page(&page.bytes)?;
        }
        writer.close_sink(sink)?;
    }
    Ok(writer)
}

/// The snapshot read back from memory, as `check` would open the file.
pub fn in_memory(setup: &Setup, ring: &Ring, span: (u64, u64), spill_dir: &Path) -> Result<Trace, crate::WatchError> {
    let writer = snapshot(setup, ring, span, FileVersion::V6, spill_dir)?;
    let mut bytes = Vec::new();
    writer.write_to(&mut bytes)?;
    Ok(Trace::from_bytes("the watched ring", bytes)?)
}
