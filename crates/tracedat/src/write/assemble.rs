//! Lays out and writes a whole trace.dat file once all its data is in: the initial
//! format, then either version 6's fixed sequence (header info, formats, kallsyms, printk,
//! cmdlines, CPU count, options, one flyrecord CPU table per buffer, page-aligned CPU data)
//! or version 7's sections chained through options sections (metadata sections, options,
//! one buffer flyrecord section and options section per buffer, strings). Every offset and
//! size is computed before the first byte goes out, so the output needs no seeking.

use crate::compress::Codec;
use crate::endian::Endian;
use crate::read::options::id;
use crate::write::sink::StoredCpu;
use crate::write::writer::{BufferState, FileVersion, TraceWriter, WriteError};
use std::io::{BufWriter, Write};

const MAGIC: &[u8] = b"\x17\x08\x44tracing";
const SECTION_COMPRESSED: u16 = 1;

type OptionList = Vec<(u16, Vec<u8>)>;

pub(crate) fn write_file(w: &TraceWriter, out: impl Write) -> Result<u64, WriteError> {
    let mut out = Emitter { out: BufWriter::with_capacity(1 << 20, out), pos: 0 };
    match w.format.version {
        FileVersion::V6 => write_v6(w, &mut out)?,
        FileVersion::V7 { compression } => write_v7(w, compression, &mut out)?,
    }
    out.out.flush().map_err(|e| WriteError::io("writing the output", e))?;
    Ok(out.pos)
}

/// Numbers and strings in the file's byte order.
struct Enc {
    endian: Endian,
    buf: Vec<u8>,
}

impl Enc {
    fn new(endian: Endian) -> Enc {
        Enc { endian, buf: Vec::new() }
    }

    fn u16(&mut self, v: u16) -> &mut Enc {
        self.buf.extend_from_slice(&self.endian.to_bytes_u16(v));
        self
    }

    fn u32(&mut self, v: u32) -> &mut Enc {
        self.buf.extend_from_slice(&self.endian.to_bytes_u32(v));
        self
    }

    fn u64(&mut self, v: u64) -> &mut Enc {
        self.buf.extend_from_slice(&self.endian.to_bytes_u64(v));
        self
    }

    fn bytes(&mut self, b: &[u8]) -> &mut Enc {
        self.buf.extend_from_slice(b);
        self
    }

    /// A NUL-terminated string.
    fn cstr(&mut self, s: &str) -> &mut Enc {
        self.bytes(s.as_bytes()).bytes(&[0])
    }

    /// A u32 size, then the data.
    fn sized_u32(&mut self, what: &'static str, data: &[u8]) -> Result<&mut Enc, WriteError> {
        Ok(self.u32(u32_size(what, data.len())?).bytes(data))
    }

    /// A u64 size, then the data.
    fn sized_u64(&mut self, data: &[u8]) -> &mut Enc {
        self.u64(data.len() as u64).bytes(data)
    }

    fn done(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

fn u32_size(what: &'static str, size: usize) -> Result<u32, WriteError> {
    u32::try_from(size).map_err(|_| WriteError::TooLarge { what, size: size as u64 })
}

/// Writes sequentially, counting the offset.
struct Emitter<W: Write> {
    out: BufWriter<W>,
    pos: u64,
}

impl<W: Write> Emitter<W> {
    fn put(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        self.out.write_all(bytes).map_err(|e| WriteError::io("writing the output", e))?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Zeros up to the planned offset `at`.
    fn pad_to(&mut self, at: u64) -> Result<(), WriteError> {
        debug_assert!(at >= self.pos, "layout plan and output disagree");
        let zeros = vec![0u8; (at - self.pos) as usize];
        self.put(&zeros)
    }

    fn cpu_data(&mut self, w: &TraceWriter, cpu: &CpuPlan<'_>) -> Result<(), WriteError> {
        self.pad_to(cpu.offset)?;
        if let Some(chunks) = cpu.stored.chunks {
            self.put(&w.format.endian.to_bytes_u32(chunks))?;
        }
        w.spill
            .copy(&cpu.stored.segments, &mut self.out)
            .map_err(|e| WriteError::io("copying CPU data from the spill file", e))?;
        self.pos += cpu.stored.len;
        Ok(())
    }
}

/// The initial format; version 7 adds the compression and the first options offset.
fn file_header(w: &TraceWriter, first_options: u64) -> Vec<u8> {
    let f = &w.format;
    let mut e = Enc::new(f.endian);
    e.bytes(MAGIC);
    let version = match f.version {
        FileVersion::V6 => "6",
        FileVersion::V7 { .. } => "7",
    };
    e.cstr(version);
    e.bytes(&[(f.endian == Endian::Big) as u8, f.long_size]);
    e.u32(f.page_size);
    if let FileVersion::V7 { compression } = f.version {
        e.cstr(compression.name()).cstr(codec_version(compression)).u64(first_options);
    }
    e.done()
}

/// The library version named after the codec (trace-cmd only checks zlib's major number).
fn codec_version(codec: Codec) -> &'static str {
    match codec {
        Codec::None => "",
        #[cfg(feature = "zstd")]
        Codec::Zstd => zstd::zstd_safe::version_string(),
        #[cfg(not(feature = "zstd"))]
        Codec::Zstd => "",
        Codec::Zlib => "1",
    }
}

/// One part of the metadata every version stores, with its version 7 section id and
/// description.
struct Part {
    id: u16,
    description: &'static str,
    contents: Vec<u8>,
}

/// Header info, ftrace and event formats, kallsyms, printk formats and cmdlines.
fn metadata(w: &TraceWriter) -> Result<Vec<Part>, WriteError> {
    let mut e = Enc::new(w.format.endian);
    e.bytes(b"header_page\0")
        .sized_u64(w.header_page.as_bytes())
        .bytes(b"header_event\0")
        .sized_u64(w.header_event.as_bytes());
    let header_info = e.done();
    e.u32(u32_size("ftrace formats", w.ftrace_formats.len())?);
    for text in &w.ftrace_formats {
        e.sized_u64(text.as_bytes());
    }
    let ftrace = e.done();
    e.u32(u32_size("event systems", w.event_formats.len())?);
    for (system, texts) in &w.event_formats {
        e.cstr(system).u32(u32_size("event formats", texts.len())?);
        for text in texts {
            e.sized_u64(text.as_bytes());
        }
    }
    let events = e.done();
    let kallsyms = e.sized_u32("kallsyms", w.kallsyms.as_bytes())?.done();
    let printk = e.sized_u32("printk formats", w.printk_formats.as_bytes())?.done();
    let cmdlines = e.sized_u64(w.cmdlines.as_bytes()).done();
    let part = |id, description, contents| Part { id, description, contents };
    Ok(vec![
        part(id::HEADER_INFO, "headers", header_info),
        part(id::FTRACE_EVENTS, "ftrace events", ftrace),
        part(id::EVENT_FORMATS, "events format", events),
        part(id::KALLSYMS, "kallsyms", kallsyms),
        part(id::PRINTK, "printk", printk),
        part(id::CMDLINES, "command lines", cmdlines),
    ])
}

/// Options both versions write the same way.
fn common_options(w: &TraceWriter) -> OptionList {
    let o = &w.options;
    let text = |s: &str| {
        let mut data = s.as_bytes().to_vec();
        data.push(0);
        data
    };
    let trace_clock = o.trace_clock.clone().unwrap_or_else(|| format!("[{}]", w.buffers[0].clock));
    let mut list = OptionList::new();
    list.extend(o.date.iter().map(|d| (id::DATE, text(d))));
    list.extend(o.offsets.iter().map(|d| (id::OFFSET, text(d))));
    list.push((id::TRACECLOCK, text(&trace_clock)));
    list.extend(o.uname.iter().map(|d| (id::UNAME, text(d))));
    list.extend(o.version.iter().map(|d| (id::VERSION, text(d))));
    list.extend(o.cpustats.iter().map(|d| (id::CPUSTAT, text(d))));
    list.extend(o.extra.iter().cloned());
    list
}

fn encode_options(e: &mut Enc, options: &OptionList) -> Result<(), WriteError> {
    for (option, data) in options {
        e.u16(*option).sized_u32("option data", data)?;
    }
    Ok(())
}

/// Where one CPU's data goes.
struct CpuPlan<'a> {
    cpu: u32,
    offset: u64,
    stored: &'a StoredCpu,
}

/// Places a buffer's CPU data from `pos` on, each CPU at a page boundary; returns the
/// plan and the end of the data.
fn plan_cpus(buffer: &BufferState, mut pos: u64) -> (Vec<CpuPlan<'_>>, u64) {
    let mut cpus = Vec::new();
    for (&cpu, stored) in &buffer.cpus {
        let Some(stored) = stored.as_ref().filter(|s| s.file_size() > 0) else {
            continue;
        };
        let offset = pos.next_multiple_of(buffer.page_size.into());
        pos = offset + stored.file_size();
        cpus.push(CpuPlan { cpu, offset, stored });
    }
    (cpus, pos)
}

// ---------------------------------------------------------------------------------------
// Version 6

fn write_v6<W: Write>(w: &TraceWriter, out: &mut Emitter<W>) -> Result<(), WriteError> {
    let header = file_header(w, 0);
    let metadata = metadata(w)?;
    let instances = w.buffers.len() - 1;
    let metadata_len: u64 = metadata.iter().map(|m| m.contents.len() as u64).sum();
    let options_at = header.len() as u64 + metadata_len + 4;
    let mut pos = options_at + v6_options(w, &vec![0; instances])?.len() as u64;
    let mut tables = Vec::new();
    for buffer in &w.buffers {
        let table = v6_flyrecord_table(w, buffer, &[]);
        let (cpus, end) = plan_cpus(buffer, pos + table.len() as u64);
        tables.push((pos, cpus));
        pos = end;
    }
    let instance_offsets: Vec<u64> = tables[1..].iter().map(|t| t.0).collect();
    out.put(&header)?;
    for part in &metadata {
        out.put(&part.contents)?;
    }
    out.put(&w.format.endian.to_bytes_u32(w.cpu_count))?;
    debug_assert_eq!(out.pos, options_at);
    out.put(&v6_options(w, &instance_offsets)?)?;
    for (buffer, (at, cpus)) in w.buffers.iter().zip(&tables) {
        debug_assert_eq!(out.pos, *at);
        out.put(&v6_flyrecord_table(w, buffer, cpus))?;
        for cpu in cpus {
            out.cpu_data(w, cpu)?;
        }
    }
    Ok(())
}

/// `options  ` and the options, with a BUFFER option per instance pointing at its
/// flyrecord table, then the closing DONE.
fn v6_options(w: &TraceWriter, instance_offsets: &[u64]) -> Result<Vec<u8>, WriteError> {
    let endian = w.format.endian;
    let mut options = common_options(w);
    for (buffer, &offset) in w.buffers[1..].iter().zip(instance_offsets) {
        let data = Enc::new(endian).u64(offset).cstr(&buffer.name).done();
        options.push((id::BUFFER, data));
    }
    let mut e = Enc::new(endian);
    e.bytes(b"options  \0");
    encode_options(&mut e, &options)?;
    Ok(e.u16(id::DONE).done())
}

/// `flyrecord`, an (offset, size) pair for every CPU of the machine, and the clock.
fn v6_flyrecord_table(w: &TraceWriter, buffer: &BufferState, cpus: &[CpuPlan<'_>]) -> Vec<u8> {
    let mut e = Enc::new(w.format.endian);
    e.bytes(b"flyrecord\0");
    for cpu in 0..w.cpu_count {
        match cpus.iter().find(|c| c.cpu == cpu) {
            Some(c) => e.u64(c.offset).u64(c.stored.file_size()),
            None => e.u64(0).u64(0),
        };
    }
    e.sized_u64(format!("[{}]", buffer.clock).as_bytes());
    e.done()
}

// ---------------------------------------------------------------------------------------
// Version 7

/// Section descriptions, stored in the strings section and named by their offset there.
#[derive(Default)]
struct Strings {
    blob: Vec<u8>,
    ids: Vec<(String, u32)>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&(_, id)) = self.ids.iter().find(|(known, _)| known == s) {
            return id;
        }
        let id = self.blob.len() as u32;
        self.blob.extend_from_slice(s.as_bytes());
        self.blob.push(0);
        self.ids.push((s.to_string(), id));
        id
    }
}

/// A version 7 section, its contents compressed (with their sizes) when the file is.
struct Section {
    id: u16,
    flags: u16,
    description: u32,
    body: Vec<u8>,
}

impl Section {
    fn new(w: &TraceWriter, id: u16, description: u32, contents: Vec<u8>) -> Result<Section, WriteError> {
        let Some(codec) = w.format.codec() else {
            return Ok(Section { id, flags: 0, description, body: contents });
        };
        let packed = codec.compress(&contents).map_err(|e| WriteError::Compression(e.to_string()))?;
        let mut e = Enc::new(w.format.endian);
        e.u32(u32_size("compressed section", packed.len())?).u32(u32_size("section", contents.len())?).bytes(&packed);
        Ok(Section { id, flags: SECTION_COMPRESSED, description, body: e.done() })
    }

    fn len(&self) -> u64 {
        16 + self.body.len() as u64
    }

    fn emit<W: Write>(&self, w: &TraceWriter, out: &mut Emitter<W>) -> Result<(), WriteError> {
        out.put(&section_header(w, self.id, self.flags, self.description, self.body.len() as u64))?;
        out.put(&self.body)
    }
}

fn section_header(w: &TraceWriter, id: u16, flags: u16, description: u32, size: u64) -> Vec<u8> {
    Enc::new(w.format.endian).u16(id).u16(flags).u32(description).u64(size).done()
}

/// An options section: the options, then DONE with the offset of the next options
/// section (0 for the last).
fn options_section(w: &TraceWriter, description: u32, options: &OptionList, next: u64) -> Result<Vec<u8>, WriteError> {
    let mut body = Enc::new(w.format.endian);
    encode_options(&mut body, options)?;
    let body = body.u16(id::DONE).u32(8).u64(next).done();
    let mut section = section_header(w, id::DONE, 0, description, body.len() as u64);
    section.extend_from_slice(&body);
    Ok(section)
}

/// A buffer flyrecord section and the options section after it that describes it.
struct BufferPlan<'a> {
    section_at: u64,
    description: u32,
    cpus: Vec<CpuPlan<'a>>,
    data_end: u64,
    options: OptionList,
    options_at: u64,
}

impl<'a> BufferPlan<'a> {
    fn new(w: &TraceWriter, buffer: &'a BufferState, at: u64, description: u32) -> Self {
        let (cpus, data_end) = plan_cpus(buffer, at + 16);
        let mut e = Enc::new(w.format.endian);
        e.u64(at).cstr(&buffer.name).cstr(&buffer.clock).u32(buffer.page_size).u32(cpus.len() as u32);
        for cpu in &cpus {
            e.u32(cpu.cpu).u64(cpu.offset).u64(cpu.stored.file_size());
        }
        BufferPlan {
            section_at: at,
            description,
            cpus,
            data_end,
            options: vec![(id::BUFFER, e.done())],
            options_at: data_end,
        }
    }
}

fn write_v7<W: Write>(w: &TraceWriter, codec: Codec, out: &mut Emitter<W>) -> Result<(), WriteError> {
    let mut strings = Strings::default();
    let mut sections = Vec::new();
    for part in metadata(w)? {
        let description = strings.id(part.description);
        sections.push(Section::new(w, part.id, description, part.contents)?);
    }
    let options_description = strings.id("options");
    let buffer_descriptions: Vec<u32> =
        w.buffers.iter().map(|b| strings.id(&format!("buffer flyrecord {}", b.name))).collect();
    let strings_description = strings.id("strings");

    let mut pos = file_header(w, 0).len() as u64;
    let mut main_options = OptionList::new();
    for section in &sections {
        main_options.push((section.id, Enc::new(w.format.endian).u64(pos).done()));
        pos += section.len();
    }
    main_options.extend(common_options(w));
    main_options.push((id::CPUCOUNT, Enc::new(w.format.endian).u32(w.cpu_count).done()));
    let main_at = pos;
    pos += options_section(w, options_description, &main_options, 0)?.len() as u64;
    let mut buffers = Vec::new();
    for (buffer, &description) in w.buffers.iter().zip(&buffer_descriptions) {
        let plan = BufferPlan::new(w, buffer, pos, description);
        pos = plan.options_at + options_section(w, options_description, &plan.options, 0)?.len() as u64;
        buffers.push(plan);
    }
    let strings_section = Section::new(w, id::STRINGS, strings_description, strings.blob)?;

    out.put(&file_header(w, main_at))?;
    for section in &sections {
        section.emit(w, out)?;
    }
    debug_assert_eq!(out.pos, main_at);
    let next = buffers.first().map_or(0, |b| b.options_at);
    out.put(&options_section(w, options_description, &main_options, next)?)?;
    for (index, plan) in buffers.iter().enumerate() {
        debug_assert_eq!(out.pos, plan.section_at);
        let flags = if codec == Codec::None { 0 } else { SECTION_COMPRESSED };
        let size = plan.data_end - (plan.section_at + 16);
        out.put(&section_header(w, id::BUFFER, flags, plan.description, size))?;
        for cpu in &plan.cpus {
            out.cpu_data(w, cpu)?;
        }
        let next = buffers.get(index + 1).map_or(0, |b| b.options_at);
        out.put(&options_section(w, options_description, &plan.options, next)?)?;
    }
    strings_section.emit(w, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_stored_once_and_named_by_offset() {
        let mut s = Strings::default();
        assert_eq!(s.id("options"), 0);
        assert_eq!(s.id("headers"), 8);
        assert_eq!(s.id("options"), 0);
        assert_eq!(s.id(""), 16);
        assert_eq!(s.id(""), 16);
        assert_eq!(s.blob, b"options\0headers\0\0");
    }
}
