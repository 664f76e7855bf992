//! `schedlens export --format otf2 -o DIR`: an OTF2 archive (`DIR/traces.otf2`) for
//! Vampir, following the VAMPIR paper's mapping of scheduling onto its displays:
//! - each CPU is a location (Vampir's process/thread row);
//! - a task running on a CPU is a region (one per task, named `comm (pid)`) entered at
//!   its switch-in and left at its switch-out, so the timeline shows who ran where and
//!   the function summary each task's CPU time;
//! - a migration is a one-byte message from the old CPU to the new one, tagged with its
//!   reason (0 wakeup placement, 1 fork placement, 2 load balance, 3 stopper, 4 other,
//!   5 inferred), so the message statistics show the CPU-to-CPU migration matrix;
//! - counters per CPU: runnable tasks (running plus waiting in its runqueue), context
//!   switches and forks (counts since the start).
//!
//! Written through the OTF2 C library (cargo feature `otf2`; `ffi` declares the few
//! functions used). Every location's events are written in time order.

mod ffi;

use crate::{ExportError, Input, ProgressFn, Result};
use analysis::occupancy::cpu_queue_length;
use model::{MigrationReason, Nanos, TaskId};
use std::collections::HashMap;
use std::ffi::CString;
use std::path::Path;
use tracedat::{EventItems, EventSource, Item};

/// What the archive holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Otf2Summary {
    pub locations: u64,
    pub regions: u64,
    /// Enter events (as many leave events follow).
    pub enters: u64,
    /// Migration messages (a send and a receive each).
    pub messages: u64,
    pub metric_values: u64,
}

/// An event on one location.
#[derive(Copy, Clone, Debug)]
enum Record {
    Enter(u32),
    Leave(u32),
    Send { to: u32, tag: u32 },
    Recv { from: u32, tag: u32 },
    Metric { class: u32, value: u64 },
}

/// Metric classes (one member each).
const RUNNABLE: u32 = 0;
const SWITCHES: u32 = 1;
const FORKS: u32 = 2;
const COMM: u32 = 0;

/// Writes the archive `dir/traces.otf2` (with `dir/traces/` and `dir/traces.def`).
pub fn write(input: &Input<'_>, dir: &Path, progress: ProgressFn<'_>) -> Result<Otf2Summary> {
    std::fs::create_dir_all(dir).map_err(|e| ExportError::io(dir, e))?;
    for stale in ["traces.otf2", "traces.def", "traces"] {
        let path = dir.join(stale);
        let _ = if path.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
    }
    let mut regions = Regions::default();
    let mut locations = per_cpu_records(input, &mut regions, progress);
    let mut summary =
        Otf2Summary { locations: locations.len() as u64, regions: regions.names.len() as u64, ..Default::default() };
    for records in &mut locations {
        records.sort_by_key(|&(time, order, _)| (time, order));
        for (_, _, record) in records.iter() {
            match record {
                Record::Enter(_) => summary.enters += 1,
                Record::Send { .. } => summary.messages += 1,
                Record::Metric { .. } => summary.metric_values += 1,
                _ => {}
            }
        }
    }
    let archive = Archive::open(dir)?;
    archive.write_events(&locations)?;
    archive.write_definitions(input, &regions, &locations)?;
    archive.close()?;
    Ok(summary)
}

/// One region per task that ran in the window.
#[derive(Default)]
struct Regions {
    by_task: HashMap<TaskId, u32>,
    names: Vec<String>,
}

impl Regions {
    fn of(&mut self, input: &Input<'_>, task: TaskId) -> u32 {
        *self.by_task.entry(task).or_insert_with(|| {
            let model = input.model;
            let info = model.tasks().get(task);
            self.names.push(format!("{} ({})", model.comms().name(info.last_comm()), info.pid));
            (self.names.len() - 1) as u32
        })
    }
}

/// A location's records: (time, order among equal times, record).
type Records = Vec<(u64, u64, Record)>;

fn per_cpu_records(input: &Input<'_>, regions: &mut Regions, progress: ProgressFn<'_>) -> Vec<Records> {
    let (model, scope) = (input.model, input.scope);
    let window = scope.window;
    let cpus = model.cpus().len();
    let mut locations: Vec<Records> = vec![Vec::new(); cpus];
    // Order among records at one time: a segment's leave, then the next one's enter (in
    // segment order), then messages, then counters.
    let mut seq = 0u64;
    for timeline in model.cpus() {
        let records = &mut locations[timeline.cpu().index()];
        let segments = &timeline.segments();
        let mut switches = 0u64;
        records.push((window.start.0, u64::MAX, Record::Metric { class: SWITCHES, value: 0 }));
        for i in segments.overlapping(window.start, window.end) {
            let segment = segments.get(i);
            if segment.started_by_switch() && window.contains(segment.start) {
                switches += 1;
                let (start, _) = window.clip(segment.start, segment.end);
                records.push((start.0, u64::MAX, Record::Metric { class: SWITCHES, value: switches }));
            }
            if segment.task == TaskId::IDLE || !scope.accepts(segment.task) {
                continue;
            }
            let region = regions.of(input, segment.task);
            let (start, end) = window.clip(segment.start, segment.end);
            records.push((start.0, seq, Record::Enter(region)));
            records.push((end.0, seq + 1, Record::Leave(region)));
            seq += 2;
        }
        cpu_queue_length(model, timeline.cpu(), window, &scope.filter, |start, _, length| {
            records.push((start.0, u64::MAX, Record::Metric { class: RUNNABLE, value: length.into() }));
        });
    }
    for migration in model.migrations().iter() {
        let (from, to) = (migration.from.index(), migration.to.index());
        if !window.contains(migration.time) || !scope.accepts(migration.task) || from >= cpus || to >= cpus {
            continue;
        }
        let tag = reason_tag(migration.reason);
        locations[from].push((migration.time.0, u64::MAX - 1, Record::Send { to: to as u32, tag }));
        locations[to].push((migration.time.0, u64::MAX - 1, Record::Recv { from: from as u32, tag }));
    }
    for (cpu, times) in fork_times(input, progress).into_iter().enumerate().take(cpus) {
        let records = &mut locations[cpu];
        records.push((window.start.0, u64::MAX, Record::Metric { class: FORKS, value: 0 }));
        for (count, time) in times.into_iter().enumerate() {
            records.push((time.0, u64::MAX, Record::Metric { class: FORKS, value: count as u64 + 1 }));
        }
    }
    locations
}

fn reason_tag(reason: MigrationReason) -> u32 {
    match reason {
        MigrationReason::WakeupPlacement => 0,
        MigrationReason::ForkPlacement => 1,
        MigrationReason::LoadBalance => 2,
        MigrationReason::Stopper => 3,
        MigrationReason::Other => 4,
        MigrationReason::Inferred => 5,
    }
}

/// Per CPU, the times of the `sched_process_fork` events it recorded in the scope (the
/// model keeps forks per task, not where they happened).
fn fork_times(input: &Input<'_>, progress: ProgressFn<'_>) -> Vec<Vec<Nanos>> {
    let mut forks = vec![Vec::new(); input.model.cpus().len()];
    let Some(format) = input.trace.formats().by_name("sched:sched_process_fork") else { return forks };
    let filter = crate::EventFilter::new(input.scope, input.trace.formats());
    let total = input.trace.data_size();
    let mut stream = crate::buffer_events(input.trace, input.buffer);
    let mut count = 0u64;
    loop {
        count += 1;
        if count % (1 << 16) == 0 {
            progress(stream.bytes_done(), total);
        }
        let Some(item) = stream.next() else { break };
        let Item::Event(event) = item else { continue };
        if event.ts >= input.scope.window.end {
            break;
        }
        if event.id == format.id && filter.keeps(&event) {
            if let Some(times) = forks.get_mut(event.cpu.index()) {
                times.push(event.ts);
            }
        }
    }
    progress(total, total);
    forks
}

fn check(call: &'static str, code: ffi::ErrorCode) -> Result<()> {
    if code == ffi::SUCCESS { Ok(()) } else { Err(ExportError::Otf2 { call, code }) }
}

extern "C" fn pre_flush(_: *mut std::ffi::c_void, _: u8, _: u64, _: *mut std::ffi::c_void, _: bool) -> u8 {
    ffi::FLUSH
}

static FLUSH_CALLBACKS: ffi::FlushCallbacks = ffi::FlushCallbacks { pre_flush, post_flush: None };

/// An open archive, closed on drop if not closed explicitly.
struct Archive(*mut ffi::Archive);

impl Archive {
    fn open(dir: &Path) -> Result<Archive> {
        let path = CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| ExportError::Invalid(format!("{}: a path with a NUL byte", dir.display())))?;
        let name = CString::new("traces").expect("no NUL");
        // SAFETY: valid C strings; the library copies them.
        let raw = unsafe {
            ffi::OTF2_Archive_Open(
                path.as_ptr(),
                name.as_ptr(),
                ffi::FILEMODE_WRITE,
                ffi::CHUNK_SIZE_EVENTS,
                ffi::CHUNK_SIZE_DEFINITIONS,
                ffi::SUBSTRATE_POSIX,
                ffi::COMPRESSION_NONE,
            )
        };
        if raw.is_null() {
            return Err(ExportError::Otf2 { call: "OTF2_Archive_Open", code: -1 });
        }
        let archive = Archive(raw);
        let creator = CString::new(format!("schedlens {}", env!("CARGO_PKG_VERSION"))).expect("no NUL");
        let description = CString::new(
            "Linux scheduling: CPUs as locations, tasks as regions, migrations as messages \
             (tag: 0 wakeup placement, 1 fork placement, 2 load balance, 3 stopper, 4 other, 5 inferred)",
        )
        .expect("no NUL");
        // SAFETY: the archive is open; the callbacks are 'static; strings are copied.
        unsafe {
            check(
                "OTF2_Archive_SetFlushCallbacks",
                ffi::OTF2_Archive_SetFlushCallbacks(raw, &FLUSH_CALLBACKS, std::ptr::null_mut()),
            )?;
            check("OTF2_Archive_SetSerialCollectiveCallbacks", ffi::OTF2_Archive_SetSerialCollectiveCallbacks(raw))?;
            check("OTF2_Archive_SetCreator", ffi::OTF2_Archive_SetCreator(raw, creator.as_ptr()))?;
            check("OTF2_Archive_SetDescription", ffi::OTF2_Archive_SetDescription(raw, description.as_ptr()))?;
        }
        Ok(archive)
    }

    fn write_events(&self, locations: &[Records]) -> Result<()> {
        let types = [ffi::TYPE_UINT64];
        // SAFETY: the archive is open; each writer is used for its location only and
        // closed before the event files are.
        unsafe {
            check("OTF2_Archive_OpenEvtFiles", ffi::OTF2_Archive_OpenEvtFiles(self.0))?;
            for (cpu, records) in locations.iter().enumerate() {
                let w = ffi::OTF2_Archive_GetEvtWriter(self.0, cpu as u64);
                if w.is_null() {
                    return Err(ExportError::Otf2 { call: "OTF2_Archive_GetEvtWriter", code: -1 });
                }
                let none = std::ptr::null_mut();
                for &(time, _, record) in records {
                    let code = match record {
                        Record::Enter(region) => ffi::OTF2_EvtWriter_Enter(w, none, time, region),
                        Record::Leave(region) => ffi::OTF2_EvtWriter_Leave(w, none, time, region),
                        Record::Send { to, tag } => ffi::OTF2_EvtWriter_MpiSend(w, none, time, to, COMM, tag, 1),
                        Record::Recv { from, tag } => ffi::OTF2_EvtWriter_MpiRecv(w, none, time, from, COMM, tag, 1),
                        Record::Metric { class, value } => {
                            let values = [ffi::MetricValue { unsigned_int: value }];
                            ffi::OTF2_EvtWriter_Metric(w, none, time, class, 1, types.as_ptr(), values.as_ptr())
                        }
                    };
                    check("OTF2_EvtWriter_*", code)?;
                }
                check("OTF2_Archive_CloseEvtWriter", ffi::OTF2_Archive_CloseEvtWriter(self.0, w))?;
            }
            check("OTF2_Archive_CloseEvtFiles", ffi::OTF2_Archive_CloseEvtFiles(self.0))?;
            check("OTF2_Archive_OpenDefFiles", ffi::OTF2_Archive_OpenDefFiles(self.0))?;
            for cpu in 0..locations.len() {
                let w = ffi::OTF2_Archive_GetDefWriter(self.0, cpu as u64);
                check("OTF2_Archive_CloseDefWriter", ffi::OTF2_Archive_CloseDefWriter(self.0, w))?;
            }
            check("OTF2_Archive_CloseDefFiles", ffi::OTF2_Archive_CloseDefFiles(self.0))?;
        }
        Ok(())
    }

    fn write_definitions(&self, input: &Input<'_>, regions: &Regions, locations: &[Records]) -> Result<()> {
        // SAFETY: the archive is open; every pointer passed lives across its call.
        let w = unsafe { ffi::OTF2_Archive_GetGlobalDefWriter(self.0) };
        if w.is_null() {
            return Err(ExportError::Otf2 { call: "OTF2_Archive_GetGlobalDefWriter", code: -1 });
        }
        let mut strings = Strings { writer: w, ids: HashMap::new() };
        let window = input.scope.window;
        let undefined = ffi::UNDEFINED_U32;
        unsafe {
            check(
                "WriteClockProperties",
                ffi::OTF2_GlobalDefWriter_WriteClockProperties(
                    w,
                    1_000_000_000,
                    window.start.0,
                    window.len().0,
                    ffi::UNDEFINED_TIMESTAMP,
                ),
            )?;
            let empty = strings.get("")?;
            for (id, name) in regions.names.iter().enumerate() {
                let name = strings.get(name)?;
                let code = ffi::OTF2_GlobalDefWriter_WriteRegion(
                    w,
                    id as u32,
                    name,
                    name,
                    empty,
                    ffi::REGION_ROLE_FUNCTION,
                    ffi::PARADIGM_USER,
                    ffi::REGION_FLAG_NONE,
                    empty,
                    0,
                    0,
                );
                check("WriteRegion", code)?;
            }
            let machine = strings.get(&format!("machine ({})", input.trace.input()))?;
            let class = strings.get("machine")?;
            check(
                "WriteSystemTreeNode",
                ffi::OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, machine, class, undefined),
            )?;
            for (cpu, records) in locations.iter().enumerate() {
                let name = strings.get(&format!("CPU {cpu}"))?;
                let code = ffi::OTF2_GlobalDefWriter_WriteLocationGroup(
                    w,
                    cpu as u32,
                    name,
                    ffi::LOCATION_GROUP_TYPE_PROCESS,
                    0,
                    undefined,
                );
                check("WriteLocationGroup", code)?;
                let code = ffi::OTF2_GlobalDefWriter_WriteLocation(
                    w,
                    cpu as u64,
                    name,
                    ffi::LOCATION_TYPE_CPU_THREAD,
                    records.len() as u64,
                    cpu as u32,
                );
                check("WriteLocation", code)?;
            }
            let members: Vec<u64> = (0..locations.len() as u64).collect();
            let count = members.len() as u32;
            let (locations_name, cpus_name) = (strings.get("CPU locations")?, strings.get("CPUs")?);
            let code = ffi::OTF2_GlobalDefWriter_WriteGroup(
                w,
                0,
                locations_name,
                ffi::GROUP_TYPE_COMM_LOCATIONS,
                ffi::PARADIGM_MPI,
                ffi::GROUP_FLAG_NONE,
                count,
                members.as_ptr(),
            );
            check("WriteGroup", code)?;
            let code = ffi::OTF2_GlobalDefWriter_WriteGroup(
                w,
                1,
                cpus_name,
                ffi::GROUP_TYPE_COMM_GROUP,
                ffi::PARADIGM_MPI,
                ffi::GROUP_FLAG_NONE,
                count,
                members.as_ptr(),
            );
            check("WriteGroup", code)?;
            let comm_name = strings.get("migrations")?;
            check(
                "WriteComm",
                ffi::OTF2_GlobalDefWriter_WriteComm(w, COMM, comm_name, 1, undefined, ffi::COMM_FLAG_NONE),
            )?;
            let metrics = [
                (RUNNABLE, "runnable tasks", "tasks running or waiting on this CPU", ffi::METRIC_ABSOLUTE_NEXT),
                (
                    SWITCHES,
                    "context switches",
                    "sched_switch events on this CPU since the start",
                    ffi::METRIC_ACCUMULATED_START,
                ),
                (
                    FORKS,
                    "forks",
                    "sched_process_fork events on this CPU since the start",
                    ffi::METRIC_ACCUMULATED_START,
                ),
            ];
            let unit = strings.get("#")?;
            for (id, name, description, mode) in metrics {
                let (name, description) = (strings.get(name)?, strings.get(description)?);
                let code = ffi::OTF2_GlobalDefWriter_WriteMetricMember(
                    w,
                    id,
                    name,
                    description,
                    ffi::METRIC_TYPE_USER,
                    mode,
                    ffi::TYPE_UINT64,
                    ffi::BASE_DECIMAL,
                    0,
                    unit,
                );
                check("WriteMetricMember", code)?;
                let members = [id];
                let code = ffi::OTF2_GlobalDefWriter_WriteMetricClass(
                    w,
                    id,
                    1,
                    members.as_ptr(),
                    ffi::METRIC_ASYNCHRONOUS,
                    ffi::RECORDER_KIND_CPU,
                );
                check("WriteMetricClass", code)?;
            }
        }
        Ok(())
    }

    fn close(mut self) -> Result<()> {
        let raw = std::mem::replace(&mut self.0, std::ptr::null_mut());
        // SAFETY: closing the archive opened in `open`, once.
        check("OTF2_Archive_Close", unsafe { ffi::OTF2_Archive_Close(raw) })
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the archive is open and not used after this.
            unsafe { ffi::OTF2_Archive_Close(self.0) };
        }
    }
}

/// Global string definitions, each written once.
struct Strings {
    writer: *mut ffi::GlobalDefWriter,
    ids: HashMap<String, u32>,
}

impl Strings {
    fn get(&mut self, text: &str) -> Result<u32> {
        if let Some(&id) = self.ids.get(text) {
            return Ok(id);
        }
        let id = self.ids.len() as u32;
        let c = CString::new(text.replace('\0', " ")).expect("NULs replaced");
        // SAFETY: the writer is the archive's global definition writer; the string is copied.
        check("WriteString", unsafe { ffi::OTF2_GlobalDefWriter_WriteString(self.writer, id, c.as_ptr()) })?;
        self.ids.insert(text.to_string(), id);
        Ok(id)
    }
}
