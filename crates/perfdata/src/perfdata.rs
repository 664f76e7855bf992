//! The friendly API: open a perf.data file (file or pipe mode, either byte order), read
//! its attributes and feature sections, and read every record once, keeping each CPU's
//! tracepoint samples (the raw payload: one ftrace event record) and loss notices in time
//! order, and the comm/fork/exit records. Events are then read per CPU, or merged, as
//! `tracedat::Event`s decoded with the formats of the file's tracing data.

use crate::attrs::{Attr, Attrs, sample};
use crate::damage::{Damage, Located, Part, io_error};
use crate::features::Features;
use crate::header::{FEATURE_TRACING_DATA, FileHeader, FileSection, PIPE_HEADER_SIZE, Start, read_start};
use crate::pieces::{KindCounts, Split};
use crate::records::{RawRecord, Records};
use crate::store::{CpuStore, Events, MAX_CPUS, Stores};
use std::path::Path;
use tracedat::{Cmdlines, Endian, Error, EventSource, Formats, TracingData};

/// Record types the reader acts on.
pub(crate) mod kind {
    pub const LOST: u32 = 2;
    pub const COMM: u32 = 3;
    pub const EXIT: u32 = 4;
    pub const FORK: u32 = 7;
    pub const SAMPLE: u32 = 9;
    pub const LOST_SAMPLES: u32 = 13;
    pub const HEADER_ATTR: u32 = 64;
    pub const HEADER_TRACING_DATA: u32 = 66;
    pub const AUXTRACE: u32 = 71;
    pub const HEADER_FEATURE: u32 = 80;
    pub const COMPRESSED: u32 = 81;
    pub const COMPRESSED2: u32 = 83;
}

/// `misc` bit of a COMM record written at exec.
const MISC_COMM_EXEC: u16 = 1 << 13;

/// A comm, fork or exit record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRecord {
    /// From the record's `sample_id` trailer, when the recording kept one.
    pub time: Option<u64>,
    pub cpu: Option<u32>,
    pub what: TaskChange,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskChange {
    Comm { pid: i32, tid: i32, comm: String, exec: bool },
    Fork { pid: i32, ppid: i32, tid: i32, ptid: i32 },
    Exit { pid: i32, ppid: i32, tid: i32, ptid: i32 },
}

/// Records lost by the kernel (`PERF_RECORD_LOST`) or samples it dropped
/// (`PERF_RECORD_LOST_SAMPLES`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Loss {
    pub time: Option<u64>,
    pub cpu: Option<u32>,
    pub count: u64,
    /// `LOST_SAMPLES` rather than `LOST` (those stamped 0 are perf's end-of-recording
    /// count per event and CPU of the losses `LOST` records placed: not placed again).
    pub samples: bool,
}

/// How many records of each kind the file held, and what was left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub records: u64,
    /// (record type, count), by type.
    pub by_kind: Vec<(u32, u64)>,
    pub tracepoint_samples: u64,
    /// Samples of events that are not tracepoints (cycles, the dummy event): not read.
    pub other_samples: u64,
    /// Compressed records (`perf record -z`), which this reader does not inflate.
    pub compressed: u64,
}

/// An open perf.data file, read whole.
pub struct PerfData {
    input: String,
    /// The file's bytes, where the events' payloads are read from.
    data: Data,
    size: u64,
    endian: Endian,
    pipe: bool,
    attrs: Vec<Attr>,
    features: Features,
    tracing: Option<TracingData>,
    formats: Formats,
    pub(crate) stores: Vec<CpuStore>,
    pub(crate) cmdlines: Cmdlines,
    tasks: Vec<TaskRecord>,
    losses: Vec<Loss>,
    counts: Counts,
    damage: Damage,
}

impl std::fmt::Debug for PerfData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfData").field("input", &self.input).finish_non_exhaustive()
    }
}

impl PerfData {
    /// Opens a file and reads it whole (mapped into memory when it is a regular file).
    pub fn open(path: impl AsRef<Path>) -> Result<PerfData, Error> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let data = Data::of_file(path).map_err(|e| io_error(&name, Part::FileHeader, 0, e))?;
        PerfData::from_data(name, data)
    }

    /// Reads a perf.data held in memory; `name` is used in messages.
    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Result<PerfData, Error> {
        PerfData::from_data(name.into(), Data::Owned(bytes))
    }

    fn from_data(input: String, data: Data) -> Result<PerfData, Error> {
        let split = Split::for_this_machine();
        PerfData::read(input, data, split)
    }

    pub(crate) fn read(input: String, data: Data, split: Split) -> Result<PerfData, Error> {
        let bytes = data.bytes();
        let head = &bytes[..bytes.len().min(crate::header::FILE_HEADER_SIZE as usize)];
        let start = read_start(head).map_err(|e| e.named(&input))?;
        let mut reading = Reading::new(&input, bytes, &start, split);
        let located = match &start {
            Start::File(header) => reading.file_mode(header),
            Start::Pipe { .. } => reading.pipe_mode(),
        };
        located.map_err(|e| e.named(&input))?;
        let size = bytes.len() as u64;
        let mut perf = reading.finish(input.clone(), size, matches!(start, Start::Pipe { .. }))?;
        perf.data = data;
        Ok(perf)
    }

    pub fn input(&self) -> &str {
        &self.input
    }

    /// The file's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// Written in pipe mode (`perf record -o -`).
    pub fn is_pipe_mode(&self) -> bool {
        self.pipe
    }

    pub fn attrs(&self) -> &[Attr] {
        &self.attrs
    }

    pub fn features(&self) -> &Features {
        &self.features
    }

    /// The tracing data (formats, kallsyms, printk formats), when the recording has
    /// tracepoints.
    pub fn tracing(&self) -> Option<&TracingData> {
        self.tracing.as_ref()
    }

    /// Each CPU's store, in CPU order.
    pub fn cpus(&self) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        self.stores.iter().map(|s| (s.cpu, s.events, s.losses))
    }

    /// Comm, fork and exit records, in file order.
    pub fn tasks(&self) -> &[TaskRecord] {
        &self.tasks
    }

    pub fn losses(&self) -> &[Loss] {
        &self.losses
    }

    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Damage found while reading (also given by [`EventSource::damage`]).
    pub fn damage_found(&self) -> Vec<Error> {
        self.damage.errors(&self.input)
    }

    /// The events of some CPUs (`None`: all), merged in time order.
    pub fn events_of(&self, cpus: Option<&[u32]>) -> Events<'_> {
        let chosen = self.stores.iter().filter(|s| cpus.is_none_or(|cpus| cpus.contains(&s.cpu)));
        Events::new(chosen, self.data.bytes(), &self.formats, self.endian)
    }

    fn store(&self, cpu: u32) -> Option<&CpuStore> {
        self.stores.binary_search_by_key(&cpu, |s| s.cpu).ok().map(|i| &self.stores[i])
    }
}

impl EventSource for PerfData {
    type Items<'s> = Events<'s>;

    fn input(&self) -> &str {
        &self.input
    }

    fn formats(&self) -> &Formats {
        &self.formats
    }

    fn cpu_count(&self) -> u32 {
        let seen = self.stores.last().map_or(0, |s| s.cpu + 1);
        self.features.nr_cpus.map_or(0, |(avail, _)| avail.min(MAX_CPUS)).max(seen)
    }

    fn cpu_sizes(&self) -> Vec<(u32, u64)> {
        self.stores.iter().map(|s| (s.cpu, s.size())).collect()
    }

    fn cpu_events(&self, cpu: u32) -> Events<'_> {
        Events::new(self.store(cpu).into_iter(), self.data.bytes(), &self.formats, self.endian)
    }

    fn all_events(&self) -> Events<'_> {
        Events::new(self.stores.iter(), self.data.bytes(), &self.formats, self.endian)
    }

    fn buffer(&self) -> &str {
        ""
    }

    fn cmdlines(&self) -> &Cmdlines {
        &self.cmdlines
    }

    fn damage(&self) -> Vec<Error> {
        self.damage.errors(&self.input)
    }
}

/// A file's bytes: mapped (a regular file), or read into memory (a pipe, bytes given).
/// Mapping saves copying the file (and the kernel's zeroing of as many fresh pages): on
/// an 811 MB recording, 0.06 s of system time to fault the mapping in, against 1.1 s to
/// read it into memory. perf maps its files the same way; like perf, a file cut short
/// by another process while it is read ends the process (SIGBUS).
pub(crate) enum Data {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Data {
    fn of_file(path: &Path) -> std::io::Result<Data> {
        let mut file = std::fs::File::open(path)?;
        let metadata = file.metadata()?;
        if metadata.is_file() && metadata.len() > 0 {
            // SAFETY: the mapping is read-only and private; what another process writes
            // to the file is read as bytes like any other, every bound is checked
            // against the length taken here.
            return Ok(Data::Mapped(unsafe { memmap2::Mmap::map(&file)? }));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes)?;
        Ok(Data::Owned(bytes))
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Data::Mapped(map) => map,
            Data::Owned(bytes) => bytes,
        }
    }
}

/// The state of the one pass over a file.
struct Reading<'a> {
    input: &'a str,
    bytes: &'a [u8],
    endian: Endian,
    attrs: Vec<Attr>,
    /// Built when the first record that needs it comes (pipe mode: after the attributes).
    lookup: Option<Attrs>,
    features: Features,
    tracing: Option<TracingData>,
    stores: Stores,
    initial_names: Vec<(i32, String)>,
    seen_sample: bool,
    tasks: Vec<TaskRecord>,
    losses: Vec<Loss>,
    counts: Counts,
    by_kind: KindCounts,
    damage: Damage,
    /// How file mode's data section may be cut into pieces read in parallel.
    split: Split,
}

impl<'a> Reading<'a> {
    fn new(input: &'a str, bytes: &'a [u8], start: &Start, split: Split) -> Reading<'a> {
        let endian = match start {
            Start::File(header) => header.endian,
            Start::Pipe { endian } => *endian,
        };
        Reading {
            input,
            bytes,
            endian,
            attrs: Vec::new(),
            lookup: None,
            features: Features::default(),
            tracing: None,
            stores: Stores::default(),
            initial_names: Vec::new(),
            seen_sample: false,
            tasks: Vec::new(),
            losses: Vec::new(),
            counts: Counts::default(),
            by_kind: KindCounts::default(),
            damage: Damage::default(),
            split,
        }
    }

    fn read(&self, part: Part, section: FileSection) -> Result<&'a [u8], Located> {
        let len = self.bytes.len() as u64;
        if section.end() > len || section.offset > section.end() {
            return Err(Located::new(
                part,
                section.offset,
                format!(
                    "the section claims bytes {}..{}, the file has {len}",
                    section.offset,
                    section.offset as u128 + section.size as u128,
                ),
            ));
        }
        Ok(&self.bytes[section.offset as usize..section.end() as usize])
    }

    fn file_mode(&mut self, header: &FileHeader) -> Result<(), Located> {
        self.read_feature_sections(header)?;
        self.read_attr_section(header)?;
        self.attrs_ready()?;
        let data = header.data;
        let len = self.bytes.len() as u64;
        if data.end() > len {
            self.damage.add(Located::new(
                Part::Data,
                data.offset,
                format!(
                    "the data section claims {} bytes, the file holds {} of them",
                    data.size,
                    len.saturating_sub(data.offset)
                ),
            ));
        }
        let lookup = self.lookup.as_ref().expect("built by attrs_ready");
        let end = data.end().min(len);
        match crate::pieces::read(self.bytes, self.endian, lookup, data.offset, end, self.split) {
            Some(pieces) => {
                pieces.into_iter().for_each(|piece| self.absorb(piece));
                Ok(())
            }
            None => self.read_records(data.offset, data.end()),
        }
    }

    /// What a piece of the data section held, after what the pieces before it held.
    fn absorb(&mut self, piece: crate::pieces::Piece) {
        self.counts.records += piece.records;
        self.counts.tracepoint_samples += piece.tracepoint_samples;
        self.counts.other_samples += piece.other_samples;
        self.by_kind.add_all(&piece.by_kind);
        if !self.seen_sample {
            self.initial_names.extend(piece.early_names);
        }
        self.seen_sample |= piece.seen_sample;
        self.tasks.extend(piece.tasks);
        self.losses.extend(piece.losses);
        self.stores.append(piece.stores);
    }

    fn pipe_mode(&mut self) -> Result<(), Located> {
        self.read_records(PIPE_HEADER_SIZE, self.bytes.len() as u64)
    }

    fn read_feature_sections(&mut self, header: &FileHeader) -> Result<(), Located> {
        let ids: Vec<u32> = header.feature_ids().collect();
        let table = FileSection { offset: header.data.end(), size: 16 * ids.len() as u64 };
        let table_bytes = self.read(Part::FeatureTable, table)?;
        for (index, &id) in ids.iter().enumerate() {
            let entry = &table_bytes[16 * index..16 * index + 16];
            let section = FileSection {
                offset: self.endian.u64(entry[..8].try_into().expect("8 bytes")),
                size: self.endian.u64(entry[8..].try_into().expect("8 bytes")),
            };
            let bytes = self.read(Part::Feature(id), section)?;
            self.absorb_feature(id, bytes, section.offset)?;
        }
        Ok(())
    }

    /// Reads a feature section: the tracing data must be readable; the others only
    /// describe the recording, so damage there is a warning.
    fn absorb_feature(&mut self, id: u32, bytes: &[u8], at: u64) -> Result<(), Located> {
        if id == FEATURE_TRACING_DATA {
            return self.absorb_tracing_data(bytes, at);
        }
        if let Err(damage) = self.features.absorb(id, bytes, at, self.endian) {
            self.damage.add(damage);
        }
        Ok(())
    }

    fn absorb_tracing_data(&mut self, bytes: &[u8], at: u64) -> Result<(), Located> {
        let tracing = TracingData::parse(self.input, bytes, at).map_err(|e| {
            Located::new(Part::Feature(FEATURE_TRACING_DATA), e.offset, format!("{}: {}", e.section, e.kind))
        })?;
        self.tracing = Some(tracing);
        Ok(())
    }

    /// File mode's attributes: each entry (`struct perf_file_attr`, `attr_size` bytes)
    /// is an attribute and the section of its ids.
    fn read_attr_section(&mut self, header: &FileHeader) -> Result<(), Located> {
        let entry = header.attr_size;
        if !(64 + 16..=4096).contains(&entry) {
            return Err(Located::new(Part::FileHeader, 16, format!("attribute entry size {entry}")));
        }
        let attr_len = (entry - 16) as usize;
        let bytes = self.read(Part::Attributes, header.attrs)?;
        for (index, chunk) in bytes.chunks(entry as usize).enumerate() {
            let at = header.attrs.offset + index as u64 * entry;
            if chunk.len() < entry as usize {
                return Err(Located::new(Part::Attributes, at, "the attribute section ends inside an attribute"));
            }
            let mut attr = Attr::parse(&chunk[..attr_len], self.endian, at)?;
            let ids_at = &chunk[attr_len..];
            let ids = FileSection {
                offset: self.endian.u64(ids_at[..8].try_into().expect("8 bytes")),
                size: self.endian.u64(ids_at[8..16].try_into().expect("8 bytes")),
            };
            attr.ids = self
                .read(Part::Attributes, ids)?
                .chunks_exact(8)
                .map(|b| self.endian.u64(b.try_into().expect("8")))
                .collect();
            self.attrs.push(attr);
        }
        Ok(())
    }

    /// Checks that every tracepoint was recorded with what the reader needs, and builds
    /// the id lookup.
    fn attrs_ready(&mut self) -> Result<(), Located> {
        if self.attrs.is_empty() {
            return Err(Located::new(Part::Attributes, 0, "the file has no event attributes"));
        }
        for attr in self.attrs.iter().filter(|a| a.is_tracepoint()) {
            let name = self.event_name(attr);
            let lacks = |flag: &str, how: &str| {
                Located::new(Part::Attributes, 0, format!("{name} was recorded without {flag}: {how}"))
            };
            if attr.sample_type & sample::CPU == 0 {
                return Err(lacks(
                    "PERF_SAMPLE_CPU (which CPU each sample is from)",
                    "record system-wide (`perf sched record`, or `perf record -a -e 'sched:*'`) or add `--sample-cpu`",
                ));
            }
            if attr.sample_type & sample::TIME == 0 {
                return Err(lacks(
                    "PERF_SAMPLE_TIME (timestamps)",
                    "record with `perf record -T` (`perf sched record` always does)",
                ));
            }
            if attr.sample_type & sample::RAW == 0 {
                return Err(lacks(
                    "PERF_SAMPLE_RAW (the tracepoint's fields)",
                    "record the tracepoint with `perf record -e SYSTEM:EVENT -R` or `perf sched record`",
                ));
            }
        }
        let lookup = Attrs::new(self.attrs.clone(), self.endian)
            .map_err(|message| Located::new(Part::Attributes, 0, message))?;
        self.lookup = Some(lookup);
        Ok(())
    }

    fn event_name(&self, attr: &Attr) -> String {
        if let Some(name) = &attr.name {
            return name.clone();
        }
        let format = self.tracing.as_ref().and_then(|t| t.formats.by_id(attr.config as u32));
        format.map_or_else(|| format!("tracepoint {}", attr.config), |f| format!("{}:{}", f.system, f.name))
    }

    fn read_records(&mut self, start: u64, end: u64) -> Result<(), Located> {
        let mut records = Records::new(self.bytes, self.endian, start, end);
        loop {
            let record = match records.next() {
                None => break,
                Some(Ok(record)) => record,
                Some(Err(damage)) => {
                    self.damage.add(damage);
                    break;
                }
            };
            self.counts.records += 1;
            self.by_kind.add(record.kind);
            let following = match record.kind {
                kind::HEADER_TRACING_DATA => Following::TracingData(self.pipe_tracing_size(&record)?),
                kind::AUXTRACE => {
                    Following::Skip(record.body.get(..8).map_or(0, |b| self.endian.u64(b.try_into().expect("8 bytes"))))
                }
                _ => {
                    self.record(&record)?;
                    Following::Nothing
                }
            };
            self.following(&mut records, following)?;
        }
        Ok(())
    }

    /// Pipe mode's tracing data record: the size of the data that follows it (padded
    /// to 8 bytes).
    fn pipe_tracing_size(&mut self, record: &RawRecord<'_>) -> Result<u64, Located> {
        let size = record.body.get(..4).map(|b| self.endian.u32(b.try_into().expect("4 bytes")));
        let size = size.ok_or_else(|| record.damage("the record is too short to hold its size"))?;
        Ok(u64::from(size).next_multiple_of(8))
    }

    /// Reads or steps over the bytes that follow a record outside its size.
    fn following(&mut self, records: &mut Records<'_>, following: Following) -> Result<(), Located> {
        let at = records.position();
        match following {
            Following::Nothing => Ok(()),
            Following::Skip(len) => {
                if !records.skip_following(len) {
                    self.damage.add(Located::new(
                        Part::Data,
                        at,
                        format!("AUXTRACE data of {len} bytes runs past the end"),
                    ));
                }
                Ok(())
            }
            Following::TracingData(len) => match records.take_following(len) {
                Some(bytes) => self.absorb_tracing_data(bytes, at),
                None => Err(Located::new(
                    Part::Feature(FEATURE_TRACING_DATA),
                    at,
                    format!("the tracing data claims {len} bytes, the file has fewer left"),
                )),
            },
        }
    }

    fn record(&mut self, record: &RawRecord<'_>) -> Result<(), Located> {
        match record.kind {
            kind::SAMPLE => self.sample(record),
            kind::LOST | kind::LOST_SAMPLES => self.loss(record),
            kind::COMM | kind::FORK | kind::EXIT => self.task(record),
            kind::HEADER_ATTR => return self.pipe_attr(record),
            kind::HEADER_FEATURE => {
                let id = record.body.get(..8).map(|b| self.endian.u64(b.try_into().expect("8 bytes")));
                let id = id.ok_or_else(|| record.damage("the record is too short to name its feature"))?;
                let id = u32::try_from(id).map_err(|_| record.damage(format!("feature id {id}")))?;
                self.absorb_feature(id, &record.body[8..], record.offset + 16)?;
            }
            kind::COMPRESSED | kind::COMPRESSED2 => {
                if self.counts.compressed == 0 {
                    self.damage.add(record.damage(
                        "the file holds compressed records (`perf record -z`), which schedlens does not inflate: write an uncompressed copy with `perf inject -i FILE -o COPY`",
                    ));
                }
                self.counts.compressed += 1;
            }
            _ => {}
        }
        Ok(())
    }

    /// Pipe mode's attribute record: the attribute, then its ids to the record's end.
    fn pipe_attr(&mut self, record: &RawRecord<'_>) -> Result<(), Located> {
        let body = record.body;
        let size =
            Attr::declared_size(body, self.endian).ok_or_else(|| record.damage("the attribute is cut off"))? as usize;
        let attr_bytes = body.get(..size).ok_or_else(|| {
            record.damage(format!("the attribute claims {size} bytes, the record has {}", body.len()))
        })?;
        let mut attr = Attr::parse(attr_bytes, self.endian, record.offset + 8)?;
        attr.ids = body[size..].chunks_exact(8).map(|b| self.endian.u64(b.try_into().expect("8 bytes"))).collect();
        self.attrs.push(attr);
        self.lookup = None;
        Ok(())
    }

    fn lookup(&mut self) -> Result<&Attrs, Located> {
        if self.lookup.is_none() {
            self.attrs_ready()?;
        }
        Ok(self.lookup.as_ref().expect("built above"))
    }

    fn sample(&mut self, record: &RawRecord<'_>) {
        self.seen_sample = true;
        let endian = self.endian;
        let lookup = match self.lookup() {
            Ok(lookup) => lookup,
            Err(error) => {
                let message = format!("{} (attributes: {})", error.message, self.attrs.len());
                self.damage.add(record.damage(message));
                return;
            }
        };
        match sample_of(lookup, record, endian) {
            Err(damage) => self.damage.add(damage),
            Ok(Sampled::Other) => self.counts.other_samples += 1,
            Ok(Sampled::Tracepoint { cpu, time, payload_at, len }) => {
                let Some(store) = self.stores.of_cpu(cpu) else {
                    self.damage.add(record.damage(format!("the sample names CPU {cpu}")));
                    return;
                };
                store.push_event(time, payload_at, len);
                self.counts.tracepoint_samples += 1;
            }
        }
    }

    /// The attribute of a record other than a sample, and its `sample_id` trailer.
    fn trailer(&mut self, record: &RawRecord<'_>) -> crate::attrs::Trailer {
        let endian = self.endian;
        match self.lookup() {
            Ok(lookup) => trailer_of(lookup, record, endian),
            Err(_) => Default::default(),
        }
    }

    fn loss(&mut self, record: &RawRecord<'_>) {
        let count = match loss_count(record, self.endian) {
            Ok(count) => count,
            Err(damage) => return self.damage.add(damage),
        };
        let trailer = self.trailer(record);
        let samples = record.kind == kind::LOST_SAMPLES;
        self.losses.push(Loss { time: trailer.time, cpu: trailer.cpu, count, samples });
        // perf writes a LOST_SAMPLES record per event and CPU at the end of a recording,
        // stamped 0: the kernel's count of the losses its LOST records already placed.
        if samples && trailer.time.unwrap_or(0) == 0 {
            return;
        }
        match trailer.cpu {
            Some(cpu) => {
                if let Some(store) = self.stores.of_cpu(cpu) {
                    let time = trailer.time.unwrap_or(store.last_time());
                    store.push_loss(time, Some(count));
                }
            }
            // A loss that does not say its CPU leaves every CPU uncertain.
            None => {
                for store in self.stores.iter_mut() {
                    let time = trailer.time.unwrap_or(store.last_time());
                    store.push_loss(time, Some(count));
                }
            }
        }
    }

    fn task(&mut self, record: &RawRecord<'_>) {
        let what = match task_change(record, self.endian) {
            Ok(what) => what,
            Err(damage) => return self.damage.add(damage),
        };
        if let TaskChange::Comm { tid, comm, exec: false, .. } = &what {
            if !self.seen_sample {
                self.initial_names.push((*tid, comm.clone()));
            }
        }
        let trailer = self.trailer(record);
        self.tasks.push(TaskRecord { time: trailer.time, cpu: trailer.cpu, what });
    }

    fn finish(mut self, input: String, size: u64, pipe: bool) -> Result<PerfData, Error> {
        if self.lookup.is_none() {
            self.attrs_ready().map_err(|e| e.named(&input))?;
        }
        self.counts.by_kind = self.by_kind.into_vec();
        let tracing = self.tracing;
        let formats = tracing.as_ref().map(|t| t.formats.clone()).unwrap_or_default();
        let mut names = tracing.as_ref().map_or_else(String::new, |t| {
            t.cmdlines.iter().map(|(pid, comm)| format!("{pid} {comm}\n")).collect::<String>()
        });
        for (tid, comm) in &self.initial_names {
            names.push_str(&format!("{tid} {}\n", comm.replace('\n', " ")));
        }
        Ok(PerfData {
            input,
            data: Data::Owned(Vec::new()),
            size,
            endian: self.endian,
            pipe,
            attrs: self.attrs,
            features: self.features,
            formats,
            tracing,
            stores: self.stores.finish(),
            cmdlines: Cmdlines::parse(&names),
            tasks: self.tasks,
            losses: self.losses,
            counts: self.counts,
            damage: self.damage,
        })
    }
}

/// Bytes that follow a record outside its size.
enum Following {
    Nothing,
    /// AUXTRACE data: stepped over.
    Skip(u64),
    /// Pipe mode's tracing data.
    TracingData(u64),
}

/// What a sample is, as far as the reader needs it.
pub(crate) enum Sampled {
    /// A sample of an event that is not a tracepoint (cycles, the dummy event).
    Other,
    /// A tracepoint's sample: its raw payload's place in the file.
    Tracepoint { cpu: u32, time: u64, payload_at: u64, len: usize },
}

/// Reads a sample record; damage names the record.
pub(crate) fn sample_of(lookup: &Attrs, record: &RawRecord<'_>, endian: Endian) -> Result<Sampled, Located> {
    let index = lookup.of_sample(record.body).map_err(|id| {
        record.damage(id.map_or_else(
            || "it is too short to hold its event's id".to_string(),
            |id| format!("its id {id} names no event"),
        ))
    })?;
    let attr = &lookup.list[index];
    if !attr.is_tracepoint() {
        return Ok(Sampled::Other);
    }
    let parsed = attr.sample(record.body, endian).map_err(|what| record.damage(what))?;
    let (Some(cpu), Some(time), Some(raw)) = (parsed.cpu, parsed.time, parsed.raw) else {
        return Err(record.damage("the sample lacks its CPU, time or raw data"));
    };
    Ok(Sampled::Tracepoint { cpu, time, payload_at: record.offset + 8 + raw.start as u64, len: raw.len() })
}

/// The `sample_id` trailer of a record other than a sample, read with its attribute's
/// layout.
pub(crate) fn trailer_of(lookup: &Attrs, record: &RawRecord<'_>, endian: Endian) -> crate::attrs::Trailer {
    lookup.of_other(record.body).map(|i| lookup.list[i].trailer(record.body, endian)).unwrap_or_default()
}

/// The count of a LOST or LOST_SAMPLES record.
pub(crate) fn loss_count(record: &RawRecord<'_>, endian: Endian) -> Result<u64, Located> {
    let at = if record.kind == kind::LOST { 8 } else { 0 };
    let count = record.body.get(at..at + 8).map(|b| endian.u64(b.try_into().expect("8 bytes")));
    count.ok_or_else(|| record.damage("the record is too short to hold its count"))
}

/// What a COMM, FORK or EXIT record says.
pub(crate) fn task_change(record: &RawRecord<'_>, endian: Endian) -> Result<TaskChange, Located> {
    let body = record.body;
    let int = |at: usize| body.get(at..at + 4).map(|b| endian.u32(b.try_into().expect("4 bytes")) as i32);
    let short = || record.damage("the record is too short");
    if record.kind == kind::COMM {
        let (Some(pid), Some(tid)) = (int(0), int(4)) else { return Err(short()) };
        let name = body[8..].split(|&b| b == 0).next().unwrap_or(&[]);
        let comm = String::from_utf8_lossy(name).into_owned();
        let exec = record.misc & MISC_COMM_EXEC != 0;
        return Ok(TaskChange::Comm { pid, tid, comm, exec });
    }
    let (Some(pid), Some(ppid), Some(tid), Some(ptid)) = (int(0), int(4), int(8), int(12)) else {
        return Err(short());
    };
    Ok(match record.kind {
        kind::FORK => TaskChange::Fork { pid, ppid, tid, ptid },
        _ => TaskChange::Exit { pid, ppid, tid, ptid },
    })
}
