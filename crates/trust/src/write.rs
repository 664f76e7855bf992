//! A script as a real trace.dat file, written by tracedat's writer with Linux 6.18's
//! scheduler event formats (the ones `synth` writes), so the fuzzer reaches the model
//! through the same reader, decoder and merge as a recording: lost events are the
//! ring-buffer page's missed-events flag, a clock that steps back starts a new page.

use crate::script::{At, Common, Op, PREV_STATES, Script, Task, lost_count, name_of};
use model::kernel_formats::SCHED_FORMATS;
use std::sync::OnceLock;
use tracedat::compress::Codec;
use tracedat::format::{EventFormat, parse_event_format};
use tracedat::{CpuSink, Endian, FileFormat, PayloadBuilder, PayloadError, TraceWriter, WriteError};

/// The format of an event the model does not decode (written after the kernel's).
const OTHER_FORMAT: &str = "name: sched_wake_idle_without_ipi\nID: 376\nformat:\n\
     \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
     \tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
     \tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
     \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
     \tfield:int cpu;\toffset:8;\tsize:4;\tsigned:1;\n\n\
     print fmt: \"cpu=%d\", REC->cpu\n";

/// The formats of the events a script writes, in [`Kind`] order: the kernel's, as `synth`
/// uses them, then [`OTHER_FORMAT`].
fn format_texts() -> impl Iterator<Item = &'static str> {
    SCHED_FORMATS.iter().map(|&(_, text)| text).chain([OTHER_FORMAT])
}

/// An event id no format in the file has.
const UNKNOWN_ID: u16 = 999;

/// Why a script could not be written (never for a well-formed script: a writer bug).
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Payload(#[from] PayloadError),
    #[error("bad event format: {0}")]
    Format(String),
}

/// The file format a script's layout byte asks for: mostly uncompressed (compressing is
/// slow, and the reader's fuzzer's business), in either byte order and long size, with
/// pages of 4096, 256 or 128 bytes.
pub fn file_format(script: &Script) -> FileFormat {
    let byte = script.layout.0;
    let endian = if byte & 4 == 0 { Endian::Little } else { Endian::Big };
    let long_size = if byte & 8 == 0 { 8 } else { 4 };
    let page_size = [4096, 4096, 256, 128][usize::from(byte >> 4 & 3)];
    let compressed = if byte & 64 == 0 { Codec::Zstd } else { Codec::Zlib };
    match byte & 3 {
        0 | 1 => FileFormat::v7(Codec::None, endian, long_size, page_size),
        2 => FileFormat::v6(endian, long_size, page_size),
        _ if byte & 128 == 0 => FileFormat::v6(endian, long_size, page_size),
        _ => FileFormat::v7(compressed, endian, long_size, page_size),
    }
}

/// The formats of [`format_texts`] for a long size, parsed once.
fn parsed_formats(long_size: u8) -> Result<&'static [EventFormat], ScriptError> {
    static PARSED: [OnceLock<Result<Vec<EventFormat>, String>>; 2] = [OnceLock::new(), OnceLock::new()];
    let parsed = PARSED[usize::from(long_size == 8)].get_or_init(|| {
        format_texts().map(|text| parse_event_format("sched", text, long_size).map_err(|e| e.to_string())).collect()
    });
    parsed.as_deref().map_err(|e| ScriptError::Format(e.clone()))
}

/// Writes `script` as a trace.dat file held in memory.
pub fn write_trace(script: &Script) -> Result<Vec<u8>, ScriptError> {
    let format = file_format(script);
    let formats = parsed_formats(format.long_size)?;
    let mut writer = TraceWriter::new(format, script.declared_cpus())?;
    for text in format_texts() {
        writer.add_event_format("sched", text);
    }
    let sinks = (0..script.data_cpus()).map(|cpu| writer.cpu_sink(TraceWriter::TOP, cpu)).collect::<Result<_, _>>()?;
    let mut out = Out::new(formats, format.endian, sinks);
    for op in &script.ops {
        out.op(op)?;
    }
    for pid in out.pids_seen() {
        writer.add_cmdline(pid, &String::from_utf8_lossy(name_of(pid)));
    }
    for sink in out.sinks {
        writer.close_sink(sink)?;
    }
    let mut bytes = Vec::new();
    writer.write_to(&mut bytes)?;
    Ok(bytes)
}

/// The writing state: the clock, each CPU's sink and current task, one payload builder
/// per format.
struct Out<'f> {
    builders: Vec<PayloadBuilder<'f>>,
    sinks: Vec<CpuSink>,
    current: Vec<Task>,
    endian: Endian,
    now: u64,
    pids: std::collections::BTreeSet<i32>,
}

/// Index of each event in [`format_texts`].
#[derive(Copy, Clone)]
enum Kind {
    Switch = 0,
    Waking,
    Wakeup,
    WakeupNew,
    Migrate,
    Fork,
    Exec,
    Exit,
    Other,
}

impl<'f> Out<'f> {
    fn new(formats: &'f [EventFormat], endian: Endian, sinks: Vec<CpuSink>) -> Out<'f> {
        let current = vec![Task::IDLE; sinks.len()];
        let builders = formats.iter().map(|f| PayloadBuilder::new(f, endian)).collect();
        Out { builders, sinks, current, endian, now: 0, pids: Default::default() }
    }

    fn pids_seen(&self) -> impl Iterator<Item = i32> + '_ {
        self.pids.iter().copied().filter(|&pid| pid != 0)
    }

    fn op(&mut self, op: &Op) -> Result<(), ScriptError> {
        match *op {
            Op::Switch { at, prev, state, next } => {
                let prev_state = PREV_STATES[usize::from(state) % PREV_STATES.len()];
                self.event(Kind::Switch, at, |b, pids| {
                    b.set_str("prev_comm", name_of(prev.pid()))?.set_int("prev_pid", pids.see(prev))?;
                    b.set_int("prev_prio", 120)?.set_int("prev_state", prev_state)?;
                    b.set_str("next_comm", name_of(next.pid()))?.set_int("next_pid", pids.see(next))?;
                    b.set_int("next_prio", 120)?;
                    Ok(())
                })?;
                let cpu = self.cpu_index(at.cpu);
                self.current[cpu] = next;
            }
            Op::Waking { at, task, target } => self.wake(Kind::Waking, at, task, target.value())?,
            Op::Wakeup { at, task, target } => self.wake(Kind::Wakeup, at, task, target.value())?,
            Op::WakeupNew { at, task, target } => self.wake(Kind::WakeupNew, at, task, target.value())?,
            Op::Migrate { at, task, orig, dest } => self.event(Kind::Migrate, at, |b, pids| {
                b.set_str("comm", name_of(task.pid()))?.set_int("pid", pids.see(task))?.set_int("prio", 120)?;
                b.set_int("orig_cpu", orig.value())?.set_int("dest_cpu", dest.value())?;
                Ok(())
            })?,
            Op::Fork { at, parent, child } => self.event(Kind::Fork, at, |b, pids| {
                b.set_str("parent_comm", name_of(parent.pid()))?.set_int("parent_pid", pids.see(parent))?;
                b.set_str("child_comm", name_of(parent.pid()))?.set_int("child_pid", pids.see(child))?;
                Ok(())
            })?,
            Op::Exec { at, task, file } => self.event(Kind::Exec, at, |b, pids| {
                let filename = crate::script::NAMES[usize::from(file) % crate::script::NAMES.len()];
                b.set_str("filename", filename)?.set_int("pid", pids.see(task))?.set_int("old_pid", task.pid())?;
                Ok(())
            })?,
            Op::Exit { at, task } => self.event(Kind::Exit, at, |b, pids| {
                b.set_str("comm", name_of(task.pid()))?.set_int("pid", pids.see(task))?.set_int("prio", 120)?;
                b.set_int("group_dead", 1)?;
                Ok(())
            })?,
            Op::Other { at } => self.event(Kind::Other, at, |b, _| {
                b.set_int("cpu", i32::from(at.cpu))?;
                Ok(())
            })?,
            Op::Unknown { at } => {
                let ts = self.tick(at.dt);
                let cpu = self.cpu_index(at.cpu);
                let pid = self.common_pid(cpu, at.common);
                let (id, pid) = match self.endian {
                    Endian::Little => (UNKNOWN_ID.to_le_bytes(), pid.to_le_bytes()),
                    Endian::Big => (UNKNOWN_ID.to_be_bytes(), pid.to_be_bytes()),
                };
                let payload = [id[0], id[1], 0, 0, pid[0], pid[1], pid[2], pid[3]];
                self.sinks[cpu].add_event(ts, &payload)?;
            }
            Op::Lost { cpu, count } => {
                let cpu = self.cpu_index(cpu);
                self.sinks[cpu].mark_lost(lost_count(count));
            }
            Op::Advance(ns) => self.now = self.now.saturating_add(u64::from(ns)),
            Op::Back(ns) => self.now = self.now.saturating_sub(u64::from(ns)),
            Op::SetTime(ns) => self.now = ns,
        }
        Ok(())
    }

    fn wake(&mut self, kind: Kind, at: At, task: Task, target: i32) -> Result<(), ScriptError> {
        self.event(kind, at, |b, pids| {
            b.set_str("comm", name_of(task.pid()))?.set_int("pid", pids.see(task))?.set_int("prio", 120)?;
            b.set_int("target_cpu", target)?;
            Ok(())
        })
    }

    fn cpu_index(&self, cpu: u8) -> usize {
        usize::from(cpu) % self.sinks.len()
    }

    fn tick(&mut self, dt: u16) -> u64 {
        self.now = self.now.saturating_add(u64::from(dt));
        self.now
    }

    fn common_pid(&mut self, cpu: usize, common: Common) -> i32 {
        let task = if common == Common::CURRENT { self.current[cpu] } else { Task(common.0) };
        self.pids.insert(task.pid());
        task.pid()
    }

    /// Writes one event of `kind` whose fields `fill` sets.
    fn event(
        &mut self,
        kind: Kind,
        at: At,
        fill: impl FnOnce(&mut PayloadBuilder<'f>, &mut Pids<'_>) -> Result<(), PayloadError>,
    ) -> Result<(), ScriptError> {
        let ts = self.tick(at.dt);
        let cpu = self.cpu_index(at.cpu);
        let common = self.common_pid(cpu, at.common);
        let builder = &mut self.builders[kind as usize];
        builder.reset();
        builder.set_int("common_pid", common)?;
        fill(builder, &mut Pids(&mut self.pids))?;
        self.sinks[cpu].add_event(ts, builder.bytes())?;
        Ok(())
    }
}

/// Notes the pids an event names, for the saved cmdlines.
struct Pids<'a>(&'a mut std::collections::BTreeSet<i32>);

impl Pids<'_> {
    fn see(&mut self, task: Task) -> i32 {
        self.0.insert(task.pid());
        task.pid()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{CpuField, Layout, View};
    use tracedat::{Item, Trace};

    #[test]
    fn every_layout_reads_back_with_its_events_and_losses() {
        let at = |cpu, dt| At { cpu, dt, common: Common::CURRENT };
        for layout in 0..=255u8 {
            let script = Script {
                layout: Layout(layout),
                cpus: 1,
                declared: 7,
                view: View::default(),
                ops: vec![
                    Op::SetTime(1_000_000),
                    Op::Switch { at: at(0, 10), prev: Task(0), state: 0, next: Task(5) },
                    Op::Wakeup { at: at(1, 10), task: Task(6), target: CpuField(1) },
                    Op::Lost { cpu: 1, count: 9 },
                    Op::Other { at: at(1, 5) },
                    Op::Back(100),
                    Op::Unknown { at: at(0, 1) },
                ],
            };
            let bytes = write_trace(&script).unwrap();
            let trace = Trace::from_bytes("script", bytes).unwrap();
            assert_eq!(trace.cpu_count(), 64);
            let mut events = trace.events();
            let mut seen = Vec::new();
            while let Some(item) = events.next() {
                seen.push(match item {
                    Item::Event(e) => format!("{}@{}:{}", e.cpu.0, e.ts.0, e.format.map_or("?", |f| f.name.as_str())),
                    Item::Lost(l) => format!("lost {:?}", l.count),
                });
            }
            assert!(events.damage().is_empty(), "layout {layout}: {:?}", events.damage());
            assert_eq!(
                seen,
                [
                    "0@1000010:sched_switch",
                    "0@999926:?",
                    "1@1000020:sched_wakeup",
                    "lost Some(9)",
                    "1@1000025:sched_wake_idle_without_ipi",
                ]
                .map(String::from),
                "layout {layout}"
            );
        }
    }
}
