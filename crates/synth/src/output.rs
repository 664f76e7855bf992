//! The synthetic trace as a trace.dat file: a current kernel's scheduler event formats
//! and one payload builder per event, written per CPU through tracedat's streaming
//! writer, so memory stays bounded however many events the simulation emits.

use crate::SynthError;
use model::kernel_formats::SCHED_FORMATS as FORMATS;
use tracedat::format::{EventFormat, parse_event_format};
use tracedat::{CpuSink, FileFormat, PayloadBuilder, TraceWriter};

/// Who an event shows: a pid, its name and priority.
#[derive(Copy, Clone, Debug)]
pub struct Who<'a> {
    pub pid: i32,
    pub comm: &'a str,
    pub prio: i32,
}

/// The formats the trace is written with, parsed for a kernel long size.
pub fn formats(long_size: u8) -> Result<Vec<EventFormat>, SynthError> {
    FORMATS
        .iter()
        .map(|(name, text)| {
            parse_event_format("sched", text, long_size).map_err(|e| SynthError::Format(format!("{name}: {e}")))
        })
        .collect()
}

/// The writer and one reusable payload builder per event.
pub struct TraceOut<'f> {
    writer: TraceWriter,
    builders: Vec<PayloadBuilder<'f>>,
    sinks: Vec<CpuSink>,
    events: u64,
}

impl<'f> TraceOut<'f> {
    /// `formats` are those of [`formats`] for `format`'s long size.
    pub fn new(
        format: FileFormat,
        formats: &'f [EventFormat],
        cpus: u32,
        spill_dir: &std::path::Path,
    ) -> Result<TraceOut<'f>, SynthError> {
        let mut writer = TraceWriter::with_spill_dir(format, cpus, spill_dir)?;
        for (_, text) in FORMATS {
            writer.add_event_format("sched", text);
        }
        let builders = formats.iter().map(|f| PayloadBuilder::new(f, format.endian)).collect();
        writer.set_uname("Linux synth 6.18.44 x86_64");
        writer.set_recorder_version(concat!("schedlens synth ", env!("CARGO_PKG_VERSION")));
        writer.set_trace_clock_file("[local] global counter uptime perf mono mono_raw boot tai x86-tsc\n");
        let sinks = (0..cpus).map(|cpu| writer.cpu_sink(TraceWriter::TOP, cpu)).collect::<Result<Vec<_>, _>>()?;
        Ok(TraceOut { writer, builders, sinks, events: 0 })
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    /// Writes the payload `fill` builds for event `name` on `cpu`, with `running` as
    /// `common_pid`.
    fn write(
        &mut self,
        name: &str,
        cpu: u32,
        ts: u64,
        running: i32,
        fill: impl FnOnce(&mut PayloadBuilder<'f>) -> Result<(), tracedat::PayloadError>,
    ) -> Result<(), SynthError> {
        let index = FORMATS.iter().position(|(n, _)| *n == name).expect("every written event has a format");
        let builder = &mut self.builders[index];
        builder.reset();
        builder.set_int("common_pid", running)?;
        fill(builder)?;
        self.events += 1;
        Ok(self.sinks[cpu as usize].add_event(ts, builder.bytes())?)
    }

    pub fn switch(&mut self, cpu: u32, ts: u64, prev: Who, prev_state: i64, next: Who) -> Result<(), SynthError> {
        self.write("sched_switch", cpu, ts, prev.pid, |b| {
            b.set_str("prev_comm", prev.comm)?.set_int("prev_pid", prev.pid)?.set_int("prev_prio", prev.prio)?;
            b.set_int("prev_state", prev_state)?;
            b.set_str("next_comm", next.comm)?.set_int("next_pid", next.pid)?.set_int("next_prio", next.prio)?;
            Ok(())
        })
    }

    /// `sched_waking`, `sched_wakeup` or `sched_wakeup_new` of `task` for `target_cpu`.
    pub fn wake(
        &mut self,
        event: &str,
        cpu: u32,
        ts: u64,
        running: i32,
        task: Who,
        target: u32,
    ) -> Result<(), SynthError> {
        self.write(event, cpu, ts, running, |b| {
            b.set_str("comm", task.comm)?.set_int("pid", task.pid)?.set_int("prio", task.prio)?;
            b.set_int("target_cpu", target)?;
            Ok(())
        })
    }

    pub fn migrate(
        &mut self,
        cpu: u32,
        ts: u64,
        running: i32,
        task: Who,
        from: u32,
        to: u32,
    ) -> Result<(), SynthError> {
        self.write("sched_migrate_task", cpu, ts, running, |b| {
            b.set_str("comm", task.comm)?.set_int("pid", task.pid)?.set_int("prio", task.prio)?;
            b.set_int("orig_cpu", from)?.set_int("dest_cpu", to)?;
            Ok(())
        })
    }

    pub fn fork(&mut self, cpu: u32, ts: u64, parent: Who, child_pid: i32) -> Result<(), SynthError> {
        self.write("sched_process_fork", cpu, ts, parent.pid, |b| {
            b.set_str("parent_comm", parent.comm)?.set_int("parent_pid", parent.pid)?;
            b.set_str("child_comm", parent.comm)?.set_int("child_pid", child_pid)?;
            Ok(())
        })
    }

    pub fn exec(&mut self, cpu: u32, ts: u64, pid: i32, filename: &str) -> Result<(), SynthError> {
        self.write("sched_process_exec", cpu, ts, pid, |b| {
            b.set_str("filename", filename)?.set_int("pid", pid)?.set_int("old_pid", pid)?;
            Ok(())
        })
    }

    pub fn exit(&mut self, cpu: u32, ts: u64, task: Who) -> Result<(), SynthError> {
        self.write("sched_process_exit", cpu, ts, task.pid, |b| {
            b.set_str("comm", task.comm)?.set_int("pid", task.pid)?.set_int("prio", task.prio)?;
            b.set_int("group_dead", 1)?;
            Ok(())
        })
    }

    /// Closes every CPU's data and writes the file with these options.
    pub fn finish(
        mut self,
        cmdlines: &[(i32, String)],
        options: &[(u16, Vec<u8>)],
        path: &std::path::Path,
    ) -> Result<u64, SynthError> {
        for (pid, comm) in cmdlines {
            self.writer.add_cmdline(*pid, comm);
        }
        for (id, data) in options {
            self.writer.add_option(*id, data.clone())?;
        }
        for sink in self.sinks.drain(..) {
            self.writer.close_sink(sink)?;
        }
        Ok(self.writer.write_file(path)?)
    }
}
