//! The model of one trace, built in one pass over its events, and the questions every
//! analysis asks of it first: its time span, and where the workload starts after the
//! recording's initial `sleep`.

use crate::anomalies::Anomalies;
use crate::events::SchedDecoder;
use crate::staging::{self, Batch, Staged};
use crate::tables::{CpuTimeline, Migrations, WaitEnd, Waits, Wakeup, Wakeups};
use crate::tasks::{Comms, TaskId, Tasks};
use crate::tracker::{Output, Tracker, TrackerOptions};
use tracedat::{Cpu, Nanos, Selection, Trace};

/// Why a model could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(
        "{input}: the trace has no sched_switch events; record with `-e sched` (e.g. `trace-cmd record -e sched ...`)"
    )]
    NoSwitchEvents { input: String },
    #[error("{input}: the trace holds no events")]
    NoEvents { input: String },
}

/// Why `--after-sleep` has no start time.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AfterSleepError {
    #[error("no sched_process_exec in the trace, so the traced command cannot be found")]
    NoExec,
    #[error(
        "no task named `sleep` in the traced command's process tree; record the command as `sh -c 'sleep 1; COMMAND'` or choose a start with --min"
    )]
    NoSleep,
}

/// What building the model met in the file.
#[derive(Debug, Default)]
pub struct BuildReport {
    pub events: u64,
    /// Damaged parts of the file (the model covers the rest).
    pub damage: Vec<tracedat::Error>,
    /// Events with no format in the file.
    pub unknown_events: u64,
    /// Scheduler events whose format lacks a field the model needs.
    pub unusable_events: Vec<String>,
    /// The buffer the model was built from ("" is the top buffer).
    pub buffer: String,
}

/// Tasks, CPUs, run segments, runqueues, wakeups and migrations of one trace.
#[derive(Clone, Debug)]
pub struct Model {
    /// CPUs of the traced machine, including those that recorded nothing.
    pub cpu_count: u32,
    /// One timeline per CPU, indexed by CPU number.
    pub cpus: Vec<CpuTimeline>,
    pub tasks: Tasks,
    pub comms: Comms,
    pub waits: Waits,
    pub wakeups: Wakeups,
    pub migrations: Migrations,
    pub anomalies: Anomalies,
    /// The task of the trace's first `sched_process_exec`: the traced command.
    pub first_exec: Option<TaskId>,
    /// First and last event of the trace.
    pub start: Nanos,
    pub end: Nanos,
}

impl Model {
    /// Builds the model from a trace's top buffer (or its first buffer when it has no
    /// top buffer). `progress` is called now and then with the bytes read so far.
    pub fn build(trace: &Trace, progress: &mut dyn FnMut(u64)) -> Result<(Model, BuildReport), ModelError> {
        let decoder = SchedDecoder::new(trace.formats());
        let input = trace.input().to_string();
        if !decoder.has_switch() {
            return Err(ModelError::NoSwitchEvents { input });
        }
        let buffer = trace.buffers().iter().find(|b| b.name.is_empty()).or(trace.buffers().first());
        let buffer = buffer.map(|b| b.name.clone()).ok_or_else(|| ModelError::NoEvents { input: input.clone() })?;
        let options = TrackerOptions {
            waking_enqueues: !decoder.has_wakeup(),
            initial_names: trace.metadata().cmdlines.iter().map(|(pid, comm)| (pid, comm.to_string())).collect(),
        };
        let mut tracker = Tracker::new(trace.cpu_count(), options);
        let stream = trace.events_of(&Selection { buffers: Some(vec![buffer.clone()]), ..Selection::all() });
        let end = std::thread::scope(|scope| {
            let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Batch>(4);
            let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Batch>();
            let reader = std::thread::Builder::new()
                .name("model-reader".into())
                .spawn_scoped(scope, || staging::stage(stream, &decoder, full_tx, empty_rx))
                .expect("a thread can be started");
            for batch in full_rx {
                progress(batch.bytes_done);
                track_batch(&mut tracker, &batch);
                let _ = empty_tx.send(batch);
            }
            reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        if end.events == 0 {
            return Err(ModelError::NoEvents { input });
        }
        let report = BuildReport {
            events: end.events,
            unknown_events: end.unknown_events,
            damage: end.damage,
            unusable_events: decoder.unusable.clone(),
            buffer,
        };
        Ok((Model::from_output(tracker.finish(), trace.cpu_count()), report))
    }

    /// The model of a tracker's output.
    pub fn from_output(output: Output, cpu_count: u32) -> Model {
        let start = output.cpus.iter().filter_map(|c| c.first_event).min().unwrap_or_default();
        let end = output.cpus.iter().filter_map(|c| c.last_event).max().unwrap_or_default();
        Model {
            cpu_count: cpu_count.max(output.cpus.len() as u32),
            cpus: output.cpus,
            tasks: output.tasks,
            comms: output.comms,
            waits: output.waits,
            wakeups: output.wakeups,
            migrations: output.migrations,
            anomalies: output.anomalies,
            first_exec: output.first_exec,
            start,
            end,
        }
    }

    /// Whether `cpu` was idle at `time` (`None` where its state is unknown).
    pub fn cpu_idle_at(&self, cpu: Cpu, time: Nanos) -> Option<bool> {
        let segments = &self.cpus.get(cpu.index())?.segments;
        let index = segments.start.partition_point(|&s| s <= time).checked_sub(1)?;
        (time < segments.end[index] || segments.start[index] == time).then(|| segments.task[index] == TaskId::IDLE)
    }

    /// When and where a wakeup's wakee then ran, if it did.
    pub fn wakeup_ran(&self, wakeup: &Wakeup) -> Option<(Nanos, Cpu)> {
        let wait = self.waits.get(wakeup.wait? as usize);
        (wait.end_kind == WaitEnd::Ran).then_some((wait.end, wait.ran_on))
    }

    /// When the wakee was put on a runqueue.
    pub fn wakeup_enqueued(&self, wakeup: &Wakeup) -> Option<Nanos> {
        Some(self.waits.start[wakeup.wait? as usize])
    }

    /// Time from the wakeup's start (`sched_waking`, else the enqueue) until the wakee ran.
    pub fn wakeup_latency(&self, wakeup: &Wakeup) -> Option<Nanos> {
        let start = wakeup.waking.or_else(|| self.wakeup_enqueued(wakeup))?;
        Some(self.wakeup_ran(wakeup)?.0.saturating_sub(start))
    }

    /// The name of a task at a time.
    pub fn comm_at(&self, task: TaskId, time: Nanos) -> &str {
        self.comms.name(self.tasks.get(task).comm_at(time))
    }

    /// When the recording's initial `sleep` ended. The rule: the traced command is the
    /// task of the trace's first `sched_process_exec`; among it and the tasks it forked
    /// (directly or not), take those that were ever named `sleep`; the answer is the
    /// earliest time one of them exited (`sched_process_exit`, else its last run).
    pub fn after_sleep(&self) -> Result<Nanos, AfterSleepError> {
        let root = self.first_exec.ok_or(AfterSleepError::NoExec)?;
        let sleep = self.comms.find("sleep").ok_or(AfterSleepError::NoSleep)?;
        self.tasks
            .iter()
            .filter(|(id, task)| task.comms.iter().any(|&(_, c)| c == sleep) && self.descends_from(*id, root))
            .map(|(id, task)| task.exit.unwrap_or_else(|| self.last_run_end(id)))
            .min()
            .ok_or(AfterSleepError::NoSleep)
    }

    fn descends_from(&self, mut task: TaskId, ancestor: TaskId) -> bool {
        for _ in 0..self.tasks.len() {
            if task == ancestor {
                return true;
            }
            match self.tasks.get(task).parent {
                Some(parent) => task = parent,
                None => return false,
            }
        }
        false
    }

    fn last_run_end(&self, task: TaskId) -> Nanos {
        self.cpus
            .iter()
            .flat_map(|c| c.segments.iter().filter(|s| s.task == task).map(|s| s.end))
            .max()
            .unwrap_or(self.tasks.last_seen(task))
    }
}
/// Feeds one batch of decoded items to the tracker.
fn track_batch(tracker: &mut Tracker, batch: &Batch) {
    for item in &batch.items {
        match item {
            Staged::Event(ctx, event) => tracker.event(*ctx, &event.map_names(|name| batch.name(name))),
            Staged::Lost(cpu, count) => tracker.lost(*cpu, *count),
        }
    }
}
