//! Reads everything in a trace.dat file except the ring-buffer pages: the file header,
//! header_page/header_event, event formats, kallsyms, printk formats, saved cmdlines,
//! options and the locations of each buffer's per-CPU data. Version 6 stores these one
//! after the other; version 7 in sections found through chained options sections.

use crate::compress::Codec;
use crate::endian::Endian;
use crate::error::{ErrorKind, LResult, Located, Section};
use crate::read::format::{FormatError, parse_field_list};
use crate::read::formats::{Formats, RejectedFormat};
use crate::read::input::{Reader, Source};
use crate::read::options::{self, BufferOption, Options};
use crate::read::ringbuf::PageLayout;
use crate::read::symbols::{Cmdlines, Kallsyms, PrintkFormats};

const MAGIC: &[u8] = b"\x17\x08\x44tracing";
/// Limits on text sizes and counts: larger values can only come from a damaged file and
/// are refused before any allocation.
const MAX_NAME: usize = 4096;
const MAX_FORMATS: u32 = 1 << 20;
const MAX_OPTIONS_SECTIONS: usize = 4096;

/// The fixed start of every trace.dat file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// 6 or 7.
    pub version: u32,
    pub endian: Endian,
    /// The recording user space's long size (the kernel's comes from header_page).
    pub user_long_size: u8,
    pub page_size: u32,
    /// Version 7: the compression named in the header (`none` for version 6).
    pub compression: Codec,
    pub compression_version: String,
    /// Version 7: where the first options section is.
    pub first_options_offset: u64,
}

/// Where one CPU's pages of a buffer are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuData {
    pub cpu: u32,
    pub offset: u64,
    pub size: u64,
    /// Stored as compressed chunks (version 7 with a codec) rather than raw pages.
    pub compressed: bool,
}

/// A tracing instance's ring-buffer data: the top buffer (name "") or a named instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferInfo {
    pub name: String,
    pub clock: Option<String>,
    pub page_size: u32,
    pub cpus: Vec<CpuData>,
}

/// Everything but the events.
#[derive(Debug)]
pub struct Metadata {
    pub header: FileHeader,
    pub header_page: String,
    pub header_event: String,
    pub page_layout: PageLayout,
    /// The kernel's long size, from the commit field of header_page.
    pub kernel_long_size: u8,
    pub formats: Formats,
    /// The format files as stored, (system, text) in file order: what a writer copying
    /// this trace's events into another file (`schedlens watch`'s incidents) stores again.
    pub format_files: Vec<(String, String)>,
    /// Where the kallsyms text is; [`crate::Trace::kallsyms`] reads it when asked.
    pub(crate) kallsyms_at: KallsymsAt,
    pub printk: PrintkFormats,
    pub cmdlines: Cmdlines,
    pub options: Options,
    /// Version 6: the CPU count in the file; version 7: the CPUCOUNT option.
    pub cpu_count: Option<u32>,
    pub buffers: Vec<BufferInfo>,
    /// Problems that did not stop reading (e.g. a latency-format buffer), in plain words.
    pub notes: Vec<String>,
}

/// Reads the metadata of a file.
pub(crate) fn read_metadata(source: &dyn Source) -> LResult<Metadata> {
    let mut r = Reader::over_source(source, 0, Endian::Little, Section::FileHeader);
    let header = read_file_header(&mut r)?;
    match header.version {
        6 => read_v6(source, header, r.offset()),
        _ => read_v7(source, header),
    }
}

fn read_file_header(r: &mut Reader<'_>) -> LResult<FileHeader> {
    let magic = r.bytes(MAGIC.len() as u64).map_err(|e| Located { kind: ErrorKind::BadMagic, ..e })?;
    if magic != MAGIC {
        return Err(Located::new(Section::FileHeader, 0, ErrorKind::BadMagic));
    }
    let version_text = r.cstr(16)?;
    let version = match version_text.as_str() {
        "6" => 6,
        "7" => 7,
        _ => return Err(r.error(ErrorKind::UnsupportedVersion(version_text))),
    };
    let (user_long_size, page_size) = read_machine(r)?;
    let mut header = FileHeader {
        version,
        endian: r.endian,
        user_long_size,
        page_size,
        compression: Codec::None,
        compression_version: String::new(),
        first_options_offset: 0,
    };
    if version >= 7 {
        let at = r.offset();
        let name = r.cstr(64)?;
        header.compression = Codec::from_name(&name).map_err(|kind| Located::new(Section::FileHeader, at, kind))?;
        header.compression_version = r.cstr(64)?;
        header.first_options_offset = r.u64()?;
    }
    Ok(header)
}

/// The recording machine's byte order (set on `r`), user space long size and page size,
/// as trace.dat's file header and perf's copy of it both give them after the version.
fn read_machine(r: &mut Reader<'_>) -> LResult<(u8, u32)> {
    r.endian = match r.u8()? {
        0 => Endian::Little,
        1 => Endian::Big,
        other => return Err(r.error(ErrorKind::BadEndian(other))),
    };
    let user_long_size = r.u8()?;
    if !matches!(user_long_size, 4 | 8) {
        return Err(r.error(ErrorKind::BadLongSize(user_long_size)));
    }
    let page_size = r.u32()?;
    check_page_size(r, page_size as u64)?;
    Ok((user_long_size, page_size))
}

fn check_page_size(r: &Reader<'_>, page_size: u64) -> LResult<()> {
    if !(64..=(1 << 26)).contains(&page_size) {
        return Err(r.error(ErrorKind::BadPageSize(page_size)));
    }
    Ok(())
}

/// The parts every version stores the same way, filled in as they are read.
#[derive(Default)]
struct Parts {
    header_page: Option<String>,
    header_event: String,
    layout: Option<(PageLayout, u8)>,
    format_files: Vec<(String, String)>,
    kallsyms_at: KallsymsAt,
    printk: String,
    cmdlines: String,
}

impl Parts {
    fn read_header_info(&mut self, r: &mut Reader<'_>) -> LResult<()> {
        r.section = Section::HeaderPage;
        r.expect(b"header_page\0", "\"header_page\"")?;
        let size = r.u64()?;
        let at = r.offset();
        let text = lossy(r.bytes(size)?);
        let fields = parse_field_list(&text, 8).map_err(|e| format_error(Section::HeaderPage, at, e))?;
        let layout = PageLayout::from_header_fields(&fields, r.endian)
            .ok_or_else(|| Located::malformed(Section::HeaderPage, at, "no usable timestamp/commit/data fields"))?;
        self.layout = Some((layout, layout.commit_size as u8));
        self.header_page = Some(text);
        r.section = Section::HeaderEvent;
        r.expect(b"header_event\0", "\"header_event\"")?;
        let size = r.u64()?;
        let at = r.offset();
        self.header_event = lossy(r.bytes(size)?);
        if !self.header_event.contains("type_len") {
            return Err(Located::new(Section::HeaderEvent, at, ErrorKind::OldRingBuffer));
        }
        Ok(())
    }

    fn read_ftrace_formats(&mut self, r: &mut Reader<'_>) -> LResult<()> {
        r.section = Section::FtraceFormats;
        let count = read_count(r)?;
        for _ in 0..count {
            let size = r.u64()?;
            self.format_files.push(("ftrace".into(), lossy(r.bytes(size)?)));
        }
        Ok(())
    }

    fn read_event_formats(&mut self, r: &mut Reader<'_>) -> LResult<()> {
        r.section = Section::EventFormats;
        let systems = read_count(r)?;
        for _ in 0..systems {
            let system = r.cstr(MAX_NAME)?;
            let count = read_count(r)?;
            for _ in 0..count {
                let size = r.u64()?;
                self.format_files.push((system.clone(), lossy(r.bytes(size)?)));
            }
        }
        Ok(())
    }

    /// Steps over version 6's kallsyms text, noting where it is.
    fn skip_kallsyms(&mut self, r: &mut Reader<'_>) -> LResult<()> {
        r.section = Section::Kallsyms;
        let offset = r.offset();
        let size = r.u32()?;
        r.skip(size.into())?;
        self.kallsyms_at = KallsymsAt::Inline { offset };
        Ok(())
    }

    fn read_printk(&mut self, r: &mut Reader<'_>) -> LResult<()> {
        r.section = Section::PrintkFormats;
        let size = r.u32()?;
        self.printk = lossy(r.bytes(size.into())?);
        Ok(())
    }

    fn read_cmdlines(&mut self, r: &mut Reader<'_>) -> LResult<()> {
        r.section = Section::Cmdlines;
        let size = r.u64()?;
        self.cmdlines = lossy(r.bytes(size)?);
        Ok(())
    }

    fn finish(
        self,
        header: FileHeader,
        options: Options,
        cpu_count: Option<u32>,
        buffers: Vec<BufferInfo>,
    ) -> LResult<Metadata> {
        let Some(((page_layout, kernel_long_size), header_page)) = self.layout.zip(self.header_page) else {
            return Err(Located::malformed(Section::HeaderPage, 0, "the file has no header_page"));
        };
        let formats = Formats::parse(self.format_files.iter().map(|(s, t)| (s.as_str(), t.as_str())), kernel_long_size);
        let mut notes: Vec<String> = formats.rejected.iter().map(describe_rejected).collect();
        notes.extend(
            buffers.iter().filter(|b| b.cpus.is_empty()).map(|b| format!("buffer {:?} holds no CPU data", b.name)),
        );
        Ok(Metadata {
            header,
            header_page,
            header_event: self.header_event,
            page_layout,
            kernel_long_size,
            formats,
            format_files: self.format_files,
            kallsyms_at: self.kallsyms_at,
            printk: PrintkFormats::new(self.printk),
            cmdlines: Cmdlines::parse(&self.cmdlines),
            options,
            cpu_count,
            buffers,
            notes,
        })
    }
}

/// Where a trace keeps its kallsyms text: megabytes that only symbol lookups need, so
/// opening a trace steps over them.
#[derive(Copy, Clone, Debug, Default)]
pub(crate) enum KallsymsAt {
    #[default]
    Absent,
    /// Version 6: the text's size (4 bytes) and the text, at `offset`.
    Inline { offset: u64 },
    /// Version 7: the section at `offset` holding the same.
    Section { offset: u64 },
}

/// Reads the kallsyms text of the trace whose metadata says it is `at`.
pub(crate) fn read_kallsyms(source: &dyn Source, header: &FileHeader, at: KallsymsAt) -> LResult<Kallsyms> {
    let text = |r: &mut Reader<'_>| -> LResult<Kallsyms> {
        let size = r.u32()?;
        Ok(Kallsyms::new(lossy(r.bytes(size.into())?)))
    };
    match at {
        KallsymsAt::Absent => Ok(Kallsyms::default()),
        KallsymsAt::Inline { offset } => {
            text(&mut Reader::over_source(source, offset, header.endian, Section::Kallsyms))
        }
        KallsymsAt::Section { offset } => {
            let body = read_section(source, header, offset, options::id::KALLSYMS, Section::Kallsyms)?;
            text(&mut Reader::over_memory(&body, offset, header.endian, Section::Kallsyms))
        }
    }
}

fn describe_rejected(rejected: &RejectedFormat) -> String {
    format!(
        "an event format of system {:?} could not be parsed ({}); its events stay undecoded",
        rejected.system, rejected.error
    )
}

fn format_error(section: Section, offset: u64, error: FormatError) -> Located {
    Located::malformed(section, offset, error.to_string())
}

fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn read_count(r: &mut Reader<'_>) -> LResult<u32> {
    let count = r.u32()?;
    if count > MAX_FORMATS {
        return Err(r.malformed(format!("implausible count {count}")));
    }
    Ok(count)
}

// ---------------------------------------------------------------------------------------
// Version 6: everything in sequence.

fn read_v6(source: &dyn Source, header: FileHeader, start: u64) -> LResult<Metadata> {
    let mut r = Reader::over_source(source, start, header.endian, Section::HeaderPage);
    let mut parts = Parts::default();
    parts.read_header_info(&mut r)?;
    parts.read_ftrace_formats(&mut r)?;
    parts.read_event_formats(&mut r)?;
    parts.skip_kallsyms(&mut r)?;
    parts.read_printk(&mut r)?;
    parts.read_cmdlines(&mut r)?;
    r.section = Section::CpuCount;
    let cpu_count = r.u32()?;
    if cpu_count > 1 << 16 {
        return Err(r.malformed(format!("implausible CPU count {cpu_count}")));
    }
    let mut options = Options::default();
    let mut notes = Vec::new();
    let top_cpus = read_v6_data_block(&mut r, cpu_count, &mut options, &mut notes)?;
    let mut clock = None;
    if options.trace_clock_file.is_some() {
        // The clock text follows the top buffer's CPU table when TRACECLOCK is set.
        r.section = Section::TraceClock;
        match r.u64().and_then(|size| r.bytes(size)) {
            Ok(text) => options.trace_clock_file = Some(lossy(text)),
            Err(_) => notes.push("the trace clock after the CPU table is unreadable; assuming \"local\"".into()),
        }
    }
    clock = options.selected_clock().or(clock);
    let mut buffers =
        vec![BufferInfo { name: String::new(), clock: clock.clone(), page_size: header.page_size, cpus: top_cpus }];
    for instance in options.buffers.clone().iter().filter(|b| !b.name.is_empty()) {
        let mut r = Reader::over_source(source, instance.offset, header.endian, Section::Options);
        let mut instance_options = Options::default();
        let cpus = read_v6_data_block(&mut r, cpu_count, &mut instance_options, &mut notes)?;
        buffers.push(BufferInfo {
            name: instance.name.clone(),
            clock: clock.clone(),
            page_size: header.page_size,
            cpus,
        });
    }
    let mut metadata = parts.finish(header, options, Some(cpu_count), buffers)?;
    metadata.notes.extend(notes);
    Ok(metadata)
}

/// Reads an optional `options  ` block and the `flyrecord` CPU table that follows it.
fn read_v6_data_block(
    r: &mut Reader<'_>,
    cpus: u32,
    options: &mut Options,
    notes: &mut Vec<String>,
) -> LResult<Vec<CpuData>> {
    r.section = Section::Options;
    let mut tag = r.bytes(10)?;
    if tag.starts_with(b"options") {
        read_v6_options(r, options)?;
        r.section = Section::Options;
        tag = r.bytes(10)?;
    }
    if tag.starts_with(b"latency") {
        notes.push("the file holds a latency (text) trace, which has no events to decode".into());
        return Ok(Vec::new());
    }
    if !tag.starts_with(b"flyrecord") {
        return Err(Located::new(
            Section::Options,
            r.offset() - 10,
            ErrorKind::Unexpected { expected: "\"flyrecord\"", found: String::from_utf8_lossy(&tag).into_owned() },
        ));
    }
    r.section = Section::FlyrecordTable;
    let mut table = Vec::new();
    for cpu in 0..cpus {
        let (offset, size) = (r.u64()?, r.u64()?);
        table.push(CpuData { cpu, offset, size, compressed: false });
    }
    Ok(table.into_iter().filter(|c| c.size > 0).collect())
}

fn read_v6_options(r: &mut Reader<'_>, options: &mut Options) -> LResult<()> {
    loop {
        r.section = Section::Options;
        let option = r.u16()?;
        if option == options::id::DONE {
            return Ok(());
        }
        let size = r.u32()?;
        let at = r.offset();
        r.section = Section::Option(option);
        let data = r.bytes(size.into())?;
        options.absorb(option, &data, at, r.endian, 6)?;
    }
}

// ---------------------------------------------------------------------------------------
// Version 7: sections found through options.

/// A version 7 section header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionHeader {
    pub id: u16,
    pub flags: u16,
    pub description: u32,
    pub size: u64,
}

impl SectionHeader {
    pub const COMPRESSED: u16 = 1;

    pub fn is_compressed(&self) -> bool {
        self.flags & Self::COMPRESSED != 0
    }
}

fn read_section_header(source: &dyn Source, offset: u64, endian: Endian) -> LResult<SectionHeader> {
    let mut r = Reader::over_source(source, offset, endian, Section::SectionHeader);
    Ok(SectionHeader { id: r.u16()?, flags: r.u16()?, description: r.u32()?, size: r.u64()? })
}

/// Reads a section's body at `offset` (its header), decompressed.
fn read_section(
    source: &dyn Source,
    header: &FileHeader,
    offset: u64,
    expected_id: u16,
    section: Section,
) -> LResult<Vec<u8>> {
    let sh = read_section_header(source, offset, header.endian)?;
    if sh.id != expected_id {
        return Err(Located::malformed(
            section,
            offset,
            format!(
                "section id {} found where {expected_id} ({}) was expected",
                sh.id,
                options::option_name(expected_id)
            ),
        ));
    }
    let mut r = Reader::over_source(source, offset + 16, header.endian, section.clone());
    if !sh.is_compressed() {
        return r.bytes(sh.size);
    }
    let compressed_size = r.u32()?;
    let size = r.u32()?;
    let at = r.offset();
    let packed = r.bytes(compressed_size.into())?;
    let mut body = Vec::new();
    header.compression.decompress(&packed, size as usize, &mut body).map_err(|kind| Located::new(section, at, kind))?;
    Ok(body)
}

fn read_v7(source: &dyn Source, header: FileHeader) -> LResult<Metadata> {
    let options = read_v7_options(source, &header)?;
    let mut parts = Parts::default();
    type SectionReader = fn(&mut Parts, &mut Reader<'_>) -> LResult<()>;
    let readers: [(u16, Section, SectionReader); 5] = [
        (options::id::HEADER_INFO, Section::HeaderPage, Parts::read_header_info),
        (options::id::FTRACE_EVENTS, Section::FtraceFormats, Parts::read_ftrace_formats),
        (options::id::EVENT_FORMATS, Section::EventFormats, Parts::read_event_formats),
        (options::id::PRINTK, Section::PrintkFormats, Parts::read_printk),
        (options::id::CMDLINES, Section::Cmdlines, Parts::read_cmdlines),
    ];
    for (id, section, read) in readers {
        let Some(offset) = options.section_offset(id) else {
            continue;
        };
        let body = read_section(source, &header, offset, id, section.clone())?;
        let mut r = Reader::over_memory(&body, offset, header.endian, section);
        read(&mut parts, &mut r)?;
    }
    if let Some(offset) = options.section_offset(options::id::KALLSYMS) {
        parts.kallsyms_at = KallsymsAt::Section { offset };
    }
    let mut notes = Vec::new();
    let buffers = v7_buffers(source, &header, &options, &mut notes)?;
    let cpu_count = options.cpu_count;
    let mut metadata = parts.finish(header, options, cpu_count, buffers)?;
    metadata.notes.extend(notes);
    Ok(metadata)
}

fn read_v7_options(source: &dyn Source, header: &FileHeader) -> LResult<Options> {
    let mut options = Options::default();
    let mut next = header.first_options_offset;
    let mut visited = Vec::new();
    while next != 0 {
        if visited.contains(&next) || visited.len() >= MAX_OPTIONS_SECTIONS {
            return Err(Located::malformed(Section::Options, next, "options sections form a loop"));
        }
        visited.push(next);
        let body = read_section(source, header, next, options::id::DONE, Section::Options)?;
        next = absorb_options_section(&body, next, header.endian, &mut options)?;
    }
    Ok(options)
}

/// Decodes one options section body; returns the offset of the next options section.
fn absorb_options_section(body: &[u8], base: u64, endian: Endian, options: &mut Options) -> LResult<u64> {
    let mut r = Reader::over_memory(body, base, endian, Section::Options);
    loop {
        r.section = Section::Options;
        let option = r.u16()?;
        let size = r.u32()?;
        let at = r.offset();
        r.section = Section::Option(option);
        let data = r.bytes(size.into())?;
        if option == options::id::DONE {
            let mut done = Reader::over_memory(&data, at, endian, Section::Option(option));
            return done.u64();
        }
        options.absorb(option, &data, at, endian, 7)?;
    }
}

fn v7_buffers(
    source: &dyn Source,
    header: &FileHeader,
    options: &Options,
    notes: &mut Vec<String>,
) -> LResult<Vec<BufferInfo>> {
    let mut buffers = Vec::new();
    for buffer in &options.buffers {
        if buffer.is_text {
            notes.push(format!("buffer {:?} is a latency (text) trace, which has no events to decode", buffer.name));
            continue;
        }
        buffers.push(v7_buffer(source, header, buffer)?);
    }
    // The top buffer first, then instances in file order.
    buffers.sort_by_key(|b| !b.name.is_empty());
    Ok(buffers)
}

fn v7_buffer(source: &dyn Source, header: &FileHeader, buffer: &BufferOption) -> LResult<BufferInfo> {
    let section = read_section_header(source, buffer.offset, header.endian)?;
    let compressed = section.is_compressed();
    if compressed && header.compression == Codec::None {
        return Err(Located::malformed(
            Section::SectionHeader,
            buffer.offset,
            "compressed data in a file without compression",
        ));
    }
    let page_size = buffer.page_size.unwrap_or(header.page_size);
    let r = Reader::over_source(source, buffer.offset, header.endian, Section::Option(options::id::BUFFER));
    check_page_size(&r, page_size as u64)?;
    let mut cpus: Vec<CpuData> = buffer
        .cpus
        .iter()
        .filter(|c| c.size > 0)
        .map(|c| CpuData { cpu: c.cpu, offset: c.offset, size: c.size, compressed })
        .collect();
    cpus.sort_by_key(|c| c.cpu);
    if let Some(pair) = cpus.windows(2).find(|w| w[0].cpu == w[1].cpu) {
        return Err(Located::malformed(
            Section::Option(options::id::BUFFER),
            buffer.offset,
            format!("buffer {:?} lists CPU {} twice", buffer.name, pair[0].cpu),
        ));
    }
    Ok(BufferInfo { name: buffer.name.clone(), clock: buffer.clock.clone(), page_size, cpus })
}

// ---------------------------------------------------------------------------------------
// The same block inside another container: perf.data's tracing data.

/// trace.dat's initial block as perf keeps it in perf.data's `HEADER_TRACING_DATA`
/// feature (version "0.6" or "0.5"): the magic, the recording's byte order, long and page
/// size, header_page, header_event, ftrace and event format files, kallsyms, printk
/// formats and, from version 0.6, the saved cmdlines. Read whole (perf keeps kallsyms
/// here, so symbol lookups need no second reading).
#[derive(Debug)]
pub struct TracingData {
    pub version: String,
    pub endian: Endian,
    /// The recording user space's long size.
    pub user_long_size: u8,
    pub page_size: u32,
    pub header_page: String,
    pub header_event: String,
    /// The kernel's long size, from the commit field of header_page.
    pub kernel_long_size: u8,
    pub formats: Formats,
    pub kallsyms: Kallsyms,
    pub printk: PrintkFormats,
    pub cmdlines: Cmdlines,
    /// Problems that did not stop reading (a format that could not be parsed).
    pub notes: Vec<String>,
}

impl TracingData {
    /// Reads the block from `bytes`, which start at byte `base` of the file `input` (for
    /// error messages).
    pub fn parse(input: &str, bytes: &[u8], base: u64) -> crate::Result<TracingData> {
        read_tracing_data(bytes, base).map_err(|e| e.named(input))
    }
}

fn read_tracing_data(bytes: &[u8], base: u64) -> LResult<TracingData> {
    let mut r = Reader::over_memory(bytes, base, Endian::Little, Section::FileHeader);
    let magic = r.bytes(MAGIC.len() as u64).map_err(|e| Located { kind: ErrorKind::BadMagic, ..e })?;
    if magic != MAGIC {
        return Err(Located::new(Section::FileHeader, base, ErrorKind::BadMagic));
    }
    let version = r.cstr(16)?;
    let (user_long_size, page_size) = read_machine(&mut r)?;
    let mut parts = Parts::default();
    parts.read_header_info(&mut r)?;
    parts.read_ftrace_formats(&mut r)?;
    parts.read_event_formats(&mut r)?;
    r.section = Section::Kallsyms;
    let size = r.u32()?;
    let kallsyms = Kallsyms::new(lossy(r.bytes(size.into())?));
    parts.read_printk(&mut r)?;
    if !r.is_at_end() {
        parts.read_cmdlines(&mut r)?;
    }
    let Some(((_, kernel_long_size), header_page)) = parts.layout.zip(parts.header_page) else {
        return Err(Located::malformed(Section::HeaderPage, base, "the tracing data has no header_page"));
    };
    let formats = Formats::parse(parts.format_files.iter().map(|(s, t)| (s.as_str(), t.as_str())), kernel_long_size);
    Ok(TracingData {
        version,
        endian: r.endian,
        user_long_size,
        page_size,
        header_page,
        header_event: parts.header_event,
        kernel_long_size,
        notes: formats.rejected.iter().map(describe_rejected).collect(),
        formats,
        kallsyms,
        printk: PrintkFormats::new(parts.printk),
        cmdlines: Cmdlines::parse(&parts.cmdlines),
    })
}
