//! The trace.dat a recording writes, through `tracedat`'s writer: the kernel's own
//! header_page/header_event and event formats (so raw pages copy through unchanged), then
//! at the end the metadata trace-cmd also stores (printk formats, saved cmdlines, clock,
//! uname, per-CPU stats) and schedlens's context options.

use crate::error::RecordError;
use crate::events::{self, EventName};
use crate::tracefs::Tracefs;
use std::path::Path;
use tracedat::RecordedContext;
use tracedat::format::parse_field_list;
use tracedat::ringbuf::PageLayout;
use tracedat::{Endian, FileFormat, FileVersion, TraceWriter};

const HEADER_PAGE: &str = "events/header_page";
const HEADER_EVENT: &str = "events/header_event";

/// A writer set up for this kernel's ring-buffer pages.
pub(crate) struct Output {
    pub writer: TraceWriter,
    pub layout: PageLayout,
    pub page_size: usize,
}

impl Output {
    /// A writer for `cpu_count` CPUs whose pages follow the kernel's `header_page`; CPU data
    /// spills next to `path`.
    pub fn new(fs: &Tracefs, version: FileVersion, cpu_count: u32, path: &Path) -> Result<Output, RecordError> {
        let header_page = fs.read(HEADER_PAGE)?;
        let header_event = fs.read(HEADER_EVENT)?;
        let bad_header = || RecordError::Content { path: fs.path(HEADER_PAGE), text: header_page.clone() };
        let (layout, page_size) = page_format(&header_page).ok_or_else(bad_header)?;
        let long_size = layout.commit_size as u8;
        let format = match version {
            FileVersion::V6 => FileFormat::v6(layout.endian, long_size, page_size as u32),
            FileVersion::V7 { compression } => FileFormat::v7(compression, layout.endian, long_size, page_size as u32),
        };
        let spill_dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut writer = TraceWriter::with_spill_dir(format, cpu_count, spill_dir)?;
        writer.set_header_info(&header_page, &header_event)?;
        Ok(Output { writer, layout, page_size })
    }

    /// The formats of every enabled event and of the `ftrace` system.
    pub fn add_formats(&mut self, fs: &Tracefs) -> Result<(), RecordError> {
        let mut all: Vec<EventName> = events::enabled(fs)?;
        all.extend(events::ftrace_events(fs)?);
        for event in all {
            let text = fs.read(&format!("{}/format", event.dir()))?;
            self.writer.add_event_format(&event.system, &text);
        }
        Ok(())
    }

    /// What the kernel knows at the end of the recording, and the context.
    pub fn add_metadata(&mut self, fs: &Tracefs, cpus: &[u32], context: &RecordedContext) -> Result<(), RecordError> {
        let w = &mut self.writer;
        w.set_printk_formats(&fs.read("printk_formats")?);
        w.set_cmdlines(&fs.read("saved_cmdlines")?);
        let clock_file = fs.read("trace_clock")?;
        let clock = restore::selected(&clock_file)
            .ok_or_else(|| RecordError::Content { path: fs.path("trace_clock"), text: clock_file.clone() })?;
        w.set_clock(clock);
        w.set_trace_clock_file(&clock_file);
        if let Some(uname) = crate::machine::uname() {
            w.set_uname(&uname);
        }
        w.set_recorder_version(&format!("schedlens {}", env!("CARGO_PKG_VERSION")));
        for cpu in cpus {
            w.add_cpustat(&format!("CPU: {cpu}\n{}", fs.read(&format!("per_cpu/cpu{cpu}/stats"))?));
        }
        for (id, data) in context.to_options() {
            w.add_option(id, data)?;
        }
        Ok(())
    }
}

/// The page layout and page size `header_page` describes (the page ends with `data`).
pub(crate) fn page_format(header_page: &str) -> Option<(PageLayout, usize)> {
    let fields = parse_field_list(header_page, 8).ok()?;
    let endian = if cfg!(target_endian = "big") { Endian::Big } else { Endian::Little };
    let layout = PageLayout::from_header_fields(&fields, endian)?;
    let data = fields.iter().find(|f| f.name == "data")?;
    Some((layout, (data.offset + data.size) as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_header_page_gives_layout_and_page_size() {
        let text = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
                    \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
                    \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
                    \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        let (layout, page_size) = page_format(text).unwrap();
        assert_eq!((layout.commit_size, layout.data_offset, page_size), (8, 16, 4096));
    }
}
