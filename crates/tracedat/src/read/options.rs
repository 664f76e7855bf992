//! trace.dat options: the numbered, sized records that carry everything the fixed layout
//! does not (clock, uname, buffer instances, timestamp corrections, and in version 7 the
//! locations of all other sections). Named and numbered as in trace-cmd's file format docs.

use crate::endian::Endian;
use crate::error::{LResult, Section};
use crate::read::input::Reader;

/// Option ids, as numbered in trace-cmd.dat(5).
pub mod id {
    pub const DONE: u16 = 0;
    pub const DATE: u16 = 1;
    pub const CPUSTAT: u16 = 2;
    pub const BUFFER: u16 = 3;
    pub const TRACECLOCK: u16 = 4;
    pub const UNAME: u16 = 5;
    pub const HOOK: u16 = 6;
    pub const OFFSET: u16 = 7;
    pub const CPUCOUNT: u16 = 8;
    pub const VERSION: u16 = 9;
    pub const PROCMAPS: u16 = 10;
    pub const TRACEID: u16 = 11;
    pub const TIME_SHIFT: u16 = 12;
    pub const GUEST: u16 = 13;
    pub const TSC2NSEC: u16 = 14;
    pub const STRINGS: u16 = 15;
    pub const HEADER_INFO: u16 = 16;
    pub const FTRACE_EVENTS: u16 = 17;
    pub const EVENT_FORMATS: u16 = 18;
    pub const KALLSYMS: u16 = 19;
    pub const PRINTK: u16 = 20;
    pub const CMDLINES: u16 = 21;
    pub const BUFFER_TEXT: u16 = 22;
    pub const BTF_FILE: u16 = 23;
    pub const LAST_BOOT_INFO: u16 = 24;
    pub const MODULES_FILE: u16 = 25;
}

/// The name trace-cmd's docs give an option id.
pub fn option_name(option: u16) -> &'static str {
    const NAMES: [&str; 26] = [
        "DONE",
        "DATE",
        "CPUSTAT",
        "BUFFER",
        "TRACECLOCK",
        "UNAME",
        "HOOK",
        "OFFSET",
        "CPUCOUNT",
        "VERSION",
        "PROCMAPS",
        "TRACEID",
        "TIME_SHIFT",
        "GUEST",
        "TSC2NSEC",
        "STRINGS",
        "HEADER_INFO",
        "FTRACE_EVENTS",
        "EVENT_FORMATS",
        "KALLSYMS",
        "PRINTK",
        "CMDLINES",
        "BUFFER_TEXT",
        "BTF_FILE",
        "LAST_BOOT_INFO",
        "MODULES_FILE",
    ];
    NAMES.get(option as usize).copied().unwrap_or("unknown")
}

/// Where one CPU's ring-buffer data of a buffer lies in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuDataLocation {
    pub cpu: u32,
    pub offset: u64,
    /// As recorded; for compressed data trace-cmd 3.1.6 and older write it 4 bytes short,
    /// so the chunk count is what to trust.
    pub size: u64,
}

/// A BUFFER (or BUFFER_TEXT) option: one tracing instance's data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferOption {
    /// "" for the top instance.
    pub name: String,
    /// Version 7: offset of the buffer's section; version 6: offset of its
    /// `options`/`flyrecord` block.
    pub offset: u64,
    /// Version 7 only.
    pub clock: Option<String>,
    /// Version 7 only.
    pub page_size: Option<u32>,
    /// Version 7 only: the CPUs with data.
    pub cpus: Vec<CpuDataLocation>,
    /// BUFFER_TEXT: a latency (text) trace, not ring-buffer pages.
    pub is_text: bool,
}

/// The TSC2NSEC option: converts TSC counts to nanoseconds as `(ts * mult) >> shift`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tsc2Nsec {
    pub mult: u32,
    pub shift: u32,
    pub offset: u64,
}

/// One guest-to-host timestamp sample of a TIME_SHIFT option.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeShiftSample {
    pub time: u64,
    pub offset: i64,
    pub scaling: u64,
    pub fraction: u64,
}

/// The TIME_SHIFT option of a guest trace: per-CPU samples mapping guest to host time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeShift {
    pub peer_trace_id: u64,
    pub flags: u32,
    /// Per CPU, sorted by time, no two samples at the same time.
    pub cpus: Vec<Vec<TimeShiftSample>>,
}

impl TimeShift {
    pub const FLAG_INTERPOLATE: u32 = 1;
}

/// A GUEST option: a guest traced alongside this (host) trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guest {
    pub name: String,
    pub trace_id: u64,
    /// (guest CPU, host pid running it)
    pub vcpus: Vec<(u32, i32)>,
}

/// Every option of a file, decoded where the format is known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// DATE: offset to wall-clock time, as written (microseconds, often hex).
    pub date: Option<String>,
    /// OFFSET options, as written (nanoseconds).
    pub offsets: Vec<String>,
    /// CPUSTAT: one text per CPU.
    pub cpustats: Vec<String>,
    pub buffers: Vec<BufferOption>,
    /// TRACECLOCK: the `trace_clock` file ("[local] global ...").
    pub trace_clock_file: Option<String>,
    pub uname: Option<String>,
    pub hooks: Vec<String>,
    pub cpu_count: Option<u32>,
    /// VERSION: the recorder's version.
    pub recorder_version: Option<String>,
    pub procmaps: Option<String>,
    pub trace_id: Option<u64>,
    pub time_shift: Option<TimeShift>,
    pub guests: Vec<Guest>,
    pub tsc2nsec: Option<Tsc2Nsec>,
    pub last_boot_info: Option<String>,
    /// Version 7: offsets of sections named by options HEADER_INFO .. MODULES_FILE.
    pub sections: Vec<(u16, u64)>,
    /// Options this reader does not know, kept raw: (id, data).
    pub unknown: Vec<(u16, Vec<u8>)>,
}

impl Options {
    /// The clock marked `[current]` in the TRACECLOCK option.
    pub fn selected_clock(&self) -> Option<String> {
        let file = self.trace_clock_file.as_deref()?;
        let start = file.find('[')? + 1;
        let end = start + file[start..].find(']')?;
        Some(file[start..end].to_string())
    }

    pub fn section_offset(&self, option: u16) -> Option<u64> {
        self.sections.iter().rev().find(|(id, _)| *id == option).map(|&(_, offset)| offset)
    }

    /// Decodes one option's data into `self`. Unknown options are kept raw; options too
    /// short for their fixed fields are an error naming the option.
    pub(crate) fn absorb(
        &mut self,
        option: u16,
        data: &[u8],
        offset: u64,
        endian: Endian,
        file_version: u32,
    ) -> LResult<()> {
        let mut r = Reader::over_memory(data, offset, endian, Section::Option(option));
        match option {
            id::DATE => self.date = Some(text(data)),
            id::OFFSET => self.offsets.push(text(data)),
            id::CPUSTAT => self.cpustats.push(text(data)),
            id::BUFFER | id::BUFFER_TEXT => self.buffers.push(read_buffer(&mut r, option, file_version)?),
            id::TRACECLOCK => self.trace_clock_file = Some(text(data)),
            id::UNAME => self.uname = Some(text(data)),
            id::HOOK => self.hooks.push(text(data)),
            id::CPUCOUNT => self.cpu_count = Some(r.u32()?),
            id::VERSION => self.recorder_version = Some(text(data)),
            id::PROCMAPS => self.procmaps = Some(text(data)),
            id::TRACEID => self.trace_id = Some(r.u64()?),
            id::TIME_SHIFT => self.time_shift = Some(read_time_shift(&mut r)?),
            id::GUEST => self.guests.push(read_guest(&mut r)?),
            id::TSC2NSEC => self.tsc2nsec = Some(Tsc2Nsec { mult: r.u32()?, shift: r.u32()?, offset: r.u64()? }),
            id::LAST_BOOT_INFO => self.last_boot_info = Some(text(data)),
            id::HEADER_INFO..=id::CMDLINES | id::BTF_FILE | id::MODULES_FILE => self.sections.push((option, r.u64()?)),
            _ => self.unknown.push((option, data.to_vec())),
        }
        Ok(())
    }
}

/// Option text: NUL-terminated (or not), possibly not UTF-8.
fn text(data: &[u8]) -> String {
    let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    String::from_utf8_lossy(&data[..end]).into_owned()
}

fn read_buffer(r: &mut Reader<'_>, option: u16, file_version: u32) -> LResult<BufferOption> {
    let offset = r.u64()?;
    let name = r.cstr(4096)?;
    let mut buffer = BufferOption {
        name,
        offset,
        clock: None,
        page_size: None,
        cpus: Vec::new(),
        is_text: option == id::BUFFER_TEXT,
    };
    if file_version < 7 {
        return Ok(buffer);
    }
    buffer.clock = Some(r.cstr(256)?);
    if buffer.is_text {
        return Ok(buffer);
    }
    buffer.page_size = Some(r.u32()?);
    let count = r.u32()?;
    // Each CPU entry is 20 bytes: refuse counts the option cannot hold.
    if u64::from(count) * 20 > r.remaining() {
        return Err(r.malformed(format!(
            "buffer {:?} claims {count} CPUs but holds {} bytes",
            buffer.name,
            r.remaining()
        )));
    }
    for _ in 0..count {
        buffer.cpus.push(CpuDataLocation { cpu: r.u32()?, offset: r.u64()?, size: r.u64()? });
    }
    Ok(buffer)
}

fn read_time_shift(r: &mut Reader<'_>) -> LResult<TimeShift> {
    let peer_trace_id = r.u64()?;
    let flags = r.u32()?;
    let cpu_count = r.u32()?;
    let mut cpus = Vec::new();
    for _ in 0..cpu_count {
        let count = r.u32()? as u64;
        if count * 24 > r.remaining() {
            return Err(r.malformed(format!("{count} time samples do not fit in {} bytes", r.remaining())));
        }
        let times = (0..count).map(|_| r.u64()).collect::<LResult<Vec<_>>>()?;
        let offsets = (0..count).map(|_| r.u64()).collect::<LResult<Vec<_>>>()?;
        let scalings = (0..count).map(|_| r.u64()).collect::<LResult<Vec<_>>>()?;
        let samples: Vec<TimeShiftSample> = (0..count as usize)
            .map(|i| TimeShiftSample { time: times[i], offset: offsets[i] as i64, scaling: scalings[i], fraction: 0 })
            .collect();
        cpus.push(samples);
    }
    // Newer recorders append the fraction bits of every sample.
    if !r.is_at_end() {
        for samples in &mut cpus {
            for s in samples.iter_mut() {
                s.fraction = r.u64()?;
            }
        }
    }
    for samples in &mut cpus {
        samples.sort_by_key(|s| s.time);
        samples.dedup_by_key(|s| s.time);
    }
    Ok(TimeShift { peer_trace_id, flags, cpus })
}

fn read_guest(r: &mut Reader<'_>) -> LResult<Guest> {
    let name = r.cstr(4096)?;
    let trace_id = r.u64()?;
    let count = r.u32()?;
    if u64::from(count) * 8 > r.remaining() {
        return Err(r.malformed(format!("guest {name:?} claims {count} CPUs")));
    }
    let vcpus = (0..count).map(|_| Ok((r.u32()?, r.u32()? as i32))).collect::<LResult<Vec<_>>>()?;
    Ok(Guest { name, trace_id, vcpus })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selected_clock_is_the_bracketed_one() {
        let opts = Options { trace_clock_file: Some("local global [mono] x86-tsc\n".into()), ..Options::default() };
        assert_eq!(opts.selected_clock().as_deref(), Some("mono"));
    }

    #[test]
    fn v7_buffer_option_with_cpus() {
        let mut data = Vec::new();
        data.extend(1234u64.to_le_bytes());
        data.extend(b"inst\0mono\0");
        data.extend(4096u32.to_le_bytes());
        data.extend(1u32.to_le_bytes());
        data.extend(1u32.to_le_bytes());
        data.extend(8192u64.to_le_bytes());
        data.extend(100u64.to_le_bytes());
        let mut opts = Options::default();
        opts.absorb(id::BUFFER, &data, 0, Endian::Little, 7).unwrap();
        let b = &opts.buffers[0];
        assert_eq!((b.name.as_str(), b.clock.as_deref(), b.page_size), ("inst", Some("mono"), Some(4096)));
        assert_eq!(b.cpus, vec![CpuDataLocation { cpu: 1, offset: 8192, size: 100 }]);
    }

    #[test]
    fn absurd_cpu_counts_are_refused() {
        let mut data = Vec::new();
        data.extend(0u64.to_le_bytes());
        data.extend(b"\0local\0");
        data.extend(4096u32.to_le_bytes());
        data.extend(u32::MAX.to_le_bytes());
        let err = Options::default().absorb(id::BUFFER, &data, 0, Endian::Little, 7).unwrap_err();
        assert!(err.kind.to_string().contains("claims"));
    }
}
