//! Reading and decoding run on worker threads, one per group of CPUs, ahead of the
//! tracker: each worker decompresses and decodes its CPUs' events, puts them in time
//! order among themselves a block of time at a time, and sends them in batches of compact
//! scheduler events whose names are worker-local numbers; the tracker's thread merges the
//! workers' batches. Ordering per worker and then merging across workers yields exactly
//! the order of one merge over all CPUs (timestamp, then CPU), so the model does not
//! depend on the number of threads. Batches are recycled: the pipeline allocates nothing
//! in the steady state and holds a bounded number of events in flight (a block holds at
//! least one instant's events, see [`stage`]).

use crate::events::{EventContext, RawName, Sched, SchedDecoder};
use crate::radix::{RadixScratch, sort_by_offset};
use crate::tasks::CommId;
use crate::tasks::Comms;
use crate::tracker::Tracker;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use tracedat::{Cpu, EventItems, EventSource, Item};

/// Events per batch (its capacity; a batch is sent once half full, so that the next
/// block fits): large enough that channel traffic is negligible, small enough to stay
/// in cache.
const BATCH_EVENTS: usize = 8192;
/// Batches all workers together may have in flight: a scheduler timeslice of work or
/// so. With fewer, a worker sharing a core with the tracker fills its queue in well under
/// a timeslice and then blocks and wakes over and over (on the 41M-event trace of 256
/// CPUs on 2 cores, 2 workers of 4 batches each made `graph` 8-9% slower than of 16).
const BATCHES_IN_FLIGHT: usize = 32;

/// The batches one of `workers` workers may have in flight.
fn batches_ahead(workers: usize) -> usize {
    (BATCHES_IN_FLIGHT / workers.max(1)).clamp(4, 16)
}

/// A name as a worker numbers it (from 1; `None`: empty).
type NameId = Option<NonZeroU32>;

/// One item of a worker's stream, decoded. A loss is reported with the context of the
/// event it precedes, so it sorts right before it. (The context comes first whatever the
/// item, so the merges read its time at one place, without looking at the kind first.)
#[derive(Copy, Clone)]
pub(crate) struct Staged {
    ctx: EventContext,
    what: StagedKind,
}

#[derive(Copy, Clone)]
enum StagedKind {
    Event(Sched<NameId>),
    Lost(Option<u64>),
}

impl Staged {
    #[inline]
    fn key(&self) -> (tracedat::Nanos, Cpu) {
        (self.ctx.ts, self.ctx.cpu)
    }
}

/// A run of decoded items, and the names first numbered in it.
#[derive(Default)]
pub(crate) struct Batch {
    items: Vec<Staged>,
    new_names: Vec<Box<[u8]>>,
}

impl Batch {
    fn new() -> Batch {
        Batch { items: Vec::with_capacity(BATCH_EVENTS), new_names: Vec::new() }
    }
}

/// What the workers' streams reported once exhausted.
#[derive(Default)]
pub(crate) struct StreamEnd {
    pub events: u64,
    pub unknown_events: u64,
    pub damage: Vec<tracedat::Error>,
}

/// Reads the CPUs of `source` on worker threads and feeds every event to `tracker`, in
/// order. `progress` gets the bytes read so far, now and then.
pub(crate) fn track<S: EventSource>(
    source: &S,
    decoder: &SchedDecoder,
    tracker: &mut Tracker<'_>,
    progress: &mut dyn FnMut(u64),
) -> StreamEnd {
    let groups = cpu_groups(source.cpu_sizes());
    let ahead = batches_ahead(groups.len());
    let bytes_done = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let mut workers = Vec::with_capacity(groups.len());
        let mut handles = Vec::with_capacity(groups.len());
        for cpus in groups {
            let (full_tx, full_rx) = sync_channel::<Batch>(ahead);
            let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Batch>();
            let bytes_done = &bytes_done;
            let handle = std::thread::Builder::new()
                .name("model-reader".into())
                .spawn_scoped(scope, move || {
                    let queues = cpus.iter().map(|&cpu| CpuQueue::new(source.cpu_events(cpu))).collect();
                    stage(queues, decoder, full_tx, empty_rx, bytes_done)
                })
                .expect("a thread can be started");
            workers.push(Worker::new(full_rx, empty_tx));
            handles.push(handle);
        }
        merge(&mut workers, tracker, &mut || progress(bytes_done.load(Ordering::Relaxed)));
        drop(workers);
        let mut end = StreamEnd::default();
        for handle in handles {
            let part = handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            end.events += part.events;
            end.unknown_events += part.unknown_events;
            end.damage.extend(part.damage);
        }
        end
    })
}

/// The CPUs (with the bytes each holds) in groups, one per worker, balanced by the bytes
/// each must read.
fn cpu_groups(sizes: Vec<(u32, u64)>) -> Vec<Vec<u32>> {
    let mut cpus: Vec<(u64, u32)> = sizes.into_iter().map(|(cpu, size)| (size, cpu)).collect();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, cpus.len().max(1));
    cpus.sort_by_key(|&(size, cpu)| (std::cmp::Reverse(size), cpu));
    let mut groups = vec![(0u64, Vec::new()); workers];
    for (size, cpu) in cpus {
        let lightest = groups.iter_mut().min_by_key(|(load, _)| *load).expect("at least one group");
        lightest.0 += size;
        lightest.1.push(cpu);
    }
    groups
        .into_iter()
        .map(|(_, mut cpus)| {
            cpus.sort_unstable();
            cpus
        })
        .collect()
}

/// The tracker's side of one worker: its current batch and how its names translate.
struct Worker {
    full: Receiver<Batch>,
    empty: std::sync::mpsc::Sender<Batch>,
    batch: Batch,
    position: usize,
    names: Vec<Box<[u8]>>,
    comms: Vec<Option<CommId>>,
    done: bool,
}

impl Worker {
    fn new(full: Receiver<Batch>, empty: std::sync::mpsc::Sender<Batch>) -> Worker {
        Worker { full, empty, batch: Batch::default(), position: 0, names: Vec::new(), comms: Vec::new(), done: false }
    }

    /// The key of the next item, fetching a batch when the current one is used up.
    #[inline]
    fn head(&mut self) -> Option<(tracedat::Nanos, Cpu)> {
        if self.position == self.batch.items.len() && !self.refill() {
            return None;
        }
        Some(self.batch.items[self.position].key())
    }

    #[cold]
    fn refill(&mut self) -> bool {
        while !self.done {
            match self.full.recv() {
                Ok(batch) => {
                    let used = std::mem::replace(&mut self.batch, batch);
                    let _ = self.empty.send(used);
                    self.position = 0;
                    for name in self.batch.new_names.drain(..) {
                        self.names.push(name);
                        self.comms.push(None);
                    }
                    if !self.batch.items.is_empty() {
                        return true;
                    }
                }
                Err(_) => self.done = true,
            }
        }
        false
    }

    /// The model's name for one of this worker's names.
    #[inline]
    fn comm(comms: &mut [Option<CommId>], names: &[Box<[u8]>], name: NameId, table: &mut Comms) -> Option<CommId> {
        let index = name?.get() as usize - 1;
        // Ids are numbered densely by the worker and announced in the batch that first
        // uses them, before any use.
        Some(*comms[index].get_or_insert_with(|| table.intern(&names[index])))
    }

    /// Feeds the current item to the tracker and moves on.
    #[inline]
    fn feed(&mut self, tracker: &mut Tracker<'_>) {
        let Staged { ctx, what } = self.batch.items[self.position];
        match what {
            StagedKind::Event(event) => {
                let (comms, names) = (&mut self.comms, &self.names);
                tracker.event(ctx, &event, &mut |name, table| Worker::comm(comms, names, name, table));
            }
            StagedKind::Lost(count) => tracker.lost(ctx.cpu, count),
        }
        self.position += 1;
    }
}

/// Feeds the workers' items to the tracker in (timestamp, CPU) order. The worker that
/// is earliest usually stays so for a run of items, which are taken without comparing
/// with the others again.
fn merge(workers: &mut [Worker], tracker: &mut Tracker<'_>, progress: &mut dyn FnMut()) {
    let mut fed = 0usize;
    loop {
        let mut best: Option<(usize, (tracedat::Nanos, Cpu))> = None;
        let mut second: Option<(tracedat::Nanos, Cpu)> = None;
        for (index, worker) in workers.iter_mut().enumerate() {
            let Some(key) = worker.head() else { continue };
            match best {
                Some((_, best_key)) if best_key < key => second = Some(second.map_or(key, |s| s.min(key))),
                _ => {
                    if let Some((_, beaten)) = best {
                        second = Some(second.map_or(beaten, |s| s.min(beaten)));
                    }
                    best = Some((index, key));
                }
            }
        }
        let Some((index, _)) = best else { break };
        let worker = &mut workers[index];
        loop {
            worker.feed(tracker);
            fed += 1;
            if fed % (BATCH_EVENTS * 4) == 0 {
                progress();
            }
            match worker.head() {
                Some(key) if second.is_none_or(|s| key < s) => {}
                _ => break,
            }
        }
    }
    progress();
}

/// A fast hasher for names packed into integers (a worker's map holds the few names of
/// one trace; no untrusted party picks them to collide).
#[derive(Default)]
struct PackedNameHasher(u64);

impl Hasher for PackedNameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u128(&mut self, word: u128) {
        self.write_u64(word as u64);
        self.write_u64((word >> 64) as u64);
    }
}

/// Slots of a worker's cache of recent names (a power of two).
const NAME_CACHE: usize = 4096;

/// A worker's names: numbered from 1 in order of first use. Most lookups hit a small
/// direct-mapped cache keyed by the packed name; the maps hold them all.
struct WorkerNames {
    cache: Box<[(u128, u32)]>,
    short: HashMap<u128, NonZeroU32, BuildHasherDefault<PackedNameHasher>>,
    long: HashMap<Box<[u8]>, NonZeroU32>,
    count: u32,
}

impl Default for WorkerNames {
    fn default() -> Self {
        WorkerNames {
            cache: vec![(0, 0); NAME_CACHE].into_boxed_slice(),
            short: HashMap::default(),
            long: HashMap::new(),
            count: 0,
        }
    }
}

impl WorkerNames {
    /// (Small enough to be inlined into the decoding of every name; misses go elsewhere.)
    #[inline(always)]
    fn number(&mut self, name: RawName<'_>, announced: &mut Vec<Box<[u8]>>) -> NameId {
        match name {
            RawName::Packed(0) => None,
            // The cache is keyed by the stored bytes, cut at their NUL only on a miss.
            RawName::Packed(word) | RawName::Array(word) => {
                let mixed = (word as u64 ^ ((word >> 64) as u64).rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let slot = (mixed >> 52) as usize & (NAME_CACHE - 1);
                let (cached, id) = self.cache[slot];
                if cached == word && id != 0 {
                    return NonZeroU32::new(id);
                }
                self.number_missed(name, word, slot, announced)
            }
            RawName::Long(bytes) => Some(self.number_long(bytes, announced)),
        }
    }

    /// A short name, `stored` as the record holds it, not in the cache's `slot`:
    /// numbered, and cached there.
    #[cold]
    fn number_missed(
        &mut self,
        name: RawName<'_>,
        stored: u128,
        slot: usize,
        announced: &mut Vec<Box<[u8]>>,
    ) -> NameId {
        let word = name.word().unwrap_or(0);
        let id = (word != 0).then(|| self.number_packed(word, announced));
        self.cache[slot] = (stored, id.map_or(0, NonZeroU32::get));
        id
    }

    #[cold]
    fn number_long(&mut self, bytes: &[u8], announced: &mut Vec<Box<[u8]>>) -> NonZeroU32 {
        match self.long.get(bytes) {
            Some(&id) => id,
            None => {
                let id = self.announce(bytes, announced);
                self.long.insert(bytes.into(), id);
                id
            }
        }
    }

    fn number_packed(&mut self, word: u128, announced: &mut Vec<Box<[u8]>>) -> NonZeroU32 {
        if let Some(&id) = self.short.get(&word) {
            return id;
        }
        let id = self.announce(&RawName::Packed(word).to_bytes(), announced);
        self.short.insert(word, id);
        id
    }

    #[cold]
    fn announce(&mut self, name: &[u8], announced: &mut Vec<Box<[u8]>>) -> NonZeroU32 {
        announced.push(name.into());
        self.count += 1;
        NonZeroU32::new(self.count).expect("numbered from 1")
    }
}

/// One CPU's stream, decoded on demand.
struct CpuSource<E> {
    stream: E,
    pending_loss: Option<Option<u64>>,
    events: u64,
    exhausted: bool,
}

impl<E: EventItems> CpuSource<E> {
    /// Decodes items onto `out` until it holds `limit`, an event is stamped after
    /// `until` (it is decoded too), or the stream ends.
    fn decode_onto(
        &mut self,
        out: &mut Vec<Staged>,
        limit: usize,
        until: tracedat::Nanos,
        decoder: &SchedDecoder,
        names: &mut WorkerNames,
        announced: &mut Vec<Box<[u8]>>,
    ) {
        while !self.exhausted && out.len() < limit {
            match self.stream.next() {
                Some(Item::Event(event)) => {
                    self.events += 1;
                    let ctx = EventContext { ts: event.ts, cpu: event.cpu, pid: event.pid() };
                    // A loss is reported just before the next event of its CPU.
                    if let Some(count) = self.pending_loss.take() {
                        out.push(Staged { ctx, what: StagedKind::Lost(count) });
                    }
                    let decoded = decoder.decode_named(&event, &mut |name| names.number(name, announced));
                    out.push(Staged { ctx, what: StagedKind::Event(decoded) });
                    if ctx.ts > until {
                        break;
                    }
                }
                Some(Item::Lost(lost)) => self.pending_loss = Some(lost.count),
                None => self.exhausted = true,
            }
        }
    }
}

/// One CPU's source and the items decoded ahead from it (an event and its loss notice).
struct CpuQueue<E> {
    source: CpuSource<E>,
    items: Vec<Staged>,
    next: usize,
}

impl<E: EventItems> CpuQueue<E> {
    fn new(stream: E) -> CpuQueue<E> {
        let source = CpuSource { stream, pending_loss: None, events: 0, exhausted: false };
        CpuQueue { source, items: Vec::with_capacity(2), next: 0 }
    }

    /// The key of the next item, decoding an event ahead when none is left.
    #[inline]
    fn head(
        &mut self,
        decoder: &SchedDecoder,
        names: &mut WorkerNames,
        announced: &mut Vec<Box<[u8]>>,
    ) -> Option<(tracedat::Nanos, Cpu)> {
        if self.next == self.items.len() {
            self.items.clear();
            self.next = 0;
            self.source.decode_onto(&mut self.items, 1, tracedat::Nanos::MAX, decoder, names, announced);
        }
        Some(self.items.get(self.next)?.key())
    }

    /// Moves the items stamped up to `last` onto `out`: those decoded ahead, then the
    /// stream's, decoded straight onto `out`. The first event past `last` (with its loss
    /// notice) is taken back as the item decoded ahead.
    fn move_until(
        &mut self,
        last: tracedat::Nanos,
        out: &mut Vec<Staged>,
        decoder: &SchedDecoder,
        names: &mut WorkerNames,
        announced: &mut Vec<Box<[u8]>>,
    ) {
        while let Some(&item) = self.items.get(self.next).filter(|item| item.ctx.ts <= last) {
            out.push(item);
            self.next += 1;
        }
        if self.next < self.items.len() {
            return;
        }
        let from = out.len();
        self.source.decode_onto(out, usize::MAX, last, decoder, names, announced);
        let past = out[from..].iter().rev().take_while(|item| item.ctx.ts > last).count();
        self.items.clear();
        self.items.extend(out.drain(out.len() - past..));
        self.next = 0;
    }
}

/// A tournament tree over a worker's CPU queues: the queue with the earliest next item
/// is known at once, and moving it on costs one comparison per level. Keys are the next
/// item's time and the queue's index (queues are in CPU order, so ties go to the lower
/// CPU); an exhausted queue's key is `u128::MAX`. Each internal node holds the key and
/// queue of the loser of its match, so a replay reads one node per level.
struct Tournament {
    /// `nodes[node]` for internal nodes `1..leaves`; `nodes[0]` is the winner.
    nodes: Vec<(u128, usize)>,
    leaves: usize,
}

impl Tournament {
    fn new(keys: Vec<u128>) -> Tournament {
        let leaves = keys.len().next_power_of_two();
        // Winners of each subtree, bottom up; losers stay at the nodes.
        let mut winners: Vec<(u128, usize)> = vec![(u128::MAX, 0); 2 * leaves];
        for (leaf, slot) in winners[leaves..].iter_mut().enumerate() {
            *slot = (keys.get(leaf).copied().unwrap_or(u128::MAX), leaf);
        }
        let mut nodes = vec![(u128::MAX, 0); leaves];
        for node in (1..leaves).rev() {
            let (a, b) = (winners[2 * node], winners[2 * node + 1]);
            let (winner, loser) = if a.0 <= b.0 { (a, b) } else { (b, a) };
            winners[node] = winner;
            nodes[node] = loser;
        }
        nodes[0] = winners[1];
        Tournament { nodes, leaves }
    }

    /// The queue with the earliest next item, unless all are exhausted.
    #[inline]
    fn winner(&self) -> Option<usize> {
        let (key, winner) = self.nodes[0];
        (key != u128::MAX).then_some(winner)
    }

    /// The winner's key changed to `key`: replays its matches up to the root.
    #[inline]
    fn replace_winner(&mut self, key: u128) {
        let mut winner = (key, self.nodes[0].1);
        let mut node = (self.leaves + winner.1) / 2;
        while node > 0 {
            let slot = &mut self.nodes[node];
            if slot.0 < winner.0 {
                std::mem::swap(slot, &mut winner);
            }
            node /= 2;
        }
        self.nodes[0] = winner;
    }
}

/// A queue's tournament key: its next item's time, then its index.
fn tournament_key(key: Option<(tracedat::Nanos, Cpu)>, index: usize) -> u128 {
    key.map_or(u128::MAX, |(ts, _)| u128::from(ts.0) << 64 | index as u128)
}

/// A worker: reads its CPUs (each in bursts, in order) a block of time at a time, puts
/// each block's items in (timestamp, CPU) order and sends them in batches to `full`,
/// reusing those that come back on `empty`. Stops early when the tracker has gone.
///
/// A block holds, from every CPU, the run of next items stamped up to the block's end,
/// which starts at the earliest next item. Whatever a merge of the CPUs would yield before
/// the block's items it has already yielded, and after them it yields only later items
/// (each CPU's next item is then past the block's end), so ordering block by block is
/// the merge. The block's length adapts to hold about [`BLOCK_ITEMS`] (but at least
/// every item of its first instant, however many share it: a damaged trace whose times
/// stand still makes one large block, never a wrong order). Ordering a block costs a few
/// radix passes per item, where a tournament over hundreds of CPUs cost a mispredicted
/// branch per level per item.
fn stage<E: EventItems>(
    mut queues: Vec<CpuQueue<E>>,
    decoder: &SchedDecoder,
    full: SyncSender<Batch>,
    empty: Receiver<Batch>,
    bytes_done: &AtomicU64,
) -> StreamEnd {
    let mut names = WorkerNames::default();
    let mut batch = Batch::new();
    let mut order = BlockOrder::default();
    let mut reported = 0u64;
    let mut span_ns = INITIAL_SPAN_NS;
    loop {
        let Batch { items, new_names } = &mut batch;
        if let [queue] = &mut queues[..] {
            // One CPU's items are in its stream's order already: decoded straight into batches.
            let source = &mut queue.source;
            source.decode_onto(items, BATCH_EVENTS / 2, tracedat::Nanos::MAX, decoder, &mut names, new_names);
            if source.exhausted {
                break;
            }
        } else {
            let heads = queues.iter_mut().filter_map(|queue| queue.head(decoder, &mut names, new_names));
            let Some(start) = heads.map(|(ts, _)| ts.0).min() else { break };
            let last = tracedat::Nanos(start.saturating_add(span_ns - 1));
            order.block.clear();
            order.runs.clear();
            let mut in_time_order = true;
            for queue in &mut queues {
                let run_start = order.block.len();
                queue.move_until(last, &mut order.block, decoder, &mut names, new_names);
                let run = &order.block[run_start..];
                if !run.is_empty() {
                    in_time_order &= run.windows(2).all(|pair| pair[0].ctx.ts <= pair[1].ctx.ts);
                    order.runs.push(run_start..order.block.len());
                }
            }
            span_ns = next_span(span_ns, order.block.len());
            order.arrange_into(items, start, in_time_order);
        }
        if batch.items.len() >= BATCH_EVENTS / 2 {
            let done: u64 = queues.iter().map(|q| q.source.stream.bytes_done()).sum();
            bytes_done.fetch_add(done - reported, Ordering::Relaxed);
            reported = done;
            let next = empty.try_recv().unwrap_or_else(|_| Batch::new());
            if full.send(std::mem::replace(&mut batch, next)).is_err() {
                break;
            }
            batch.items.clear();
            batch.new_names.clear();
        }
    }
    let done: u64 = queues.iter().map(|q| q.source.stream.bytes_done()).sum();
    bytes_done.fetch_add(done.saturating_sub(reported), Ordering::Relaxed);
    if !batch.items.is_empty() {
        let _ = full.send(batch);
    }
    let mut end = StreamEnd::default();
    for queue in &mut queues {
        let source = &mut queue.source;
        end.events += source.events;
        end.unknown_events += source.stream.unknown_events();
        end.damage.extend(source.stream.take_damage());
    }
    end
}

/// Items a worker's block aims to hold: enough that sorting costs little per item, few
/// enough to stay in cache.
const BLOCK_ITEMS: usize = BATCH_EVENTS / 4;
/// The first block's length (ns); later ones adapt to the trace's event rate.
const INITIAL_SPAN_NS: u64 = 1 << 20;

/// The next block's length after one of `span_ns` held `items`: scaled towards
/// [`BLOCK_ITEMS`], longer by at most 2 (so a block seldom overfills its batch) and
/// shorter by at most 8, never below 1 ns.
fn next_span(span_ns: u64, items: usize) -> u64 {
    let wanted = u128::from(span_ns) * BLOCK_ITEMS as u128 / items.max(1) as u128;
    wanted.clamp(u128::from(span_ns / 8), u128::from(span_ns).saturating_mul(2)).clamp(1, u128::from(u64::MAX)) as u64
}

/// Puts a block's runs (one per CPU, in CPU order, each in the CPU's order) in the order
/// a merge by (timestamp, CPU) yields them: a stable radix sort on the times when every
/// run is in time order, a tournament over the runs when one is not (a damaged trace).
#[derive(Default)]
struct BlockOrder {
    /// The block's items, run after run, as the worker took them.
    block: Vec<Staged>,
    /// The block's runs: ranges of `block`.
    runs: Vec<std::ops::Range<usize>>,
    /// Time since the block's start (high 32 bits) and place in the block (low 32 bits).
    keys: Vec<u64>,
    scratch: RadixScratch<u64>,
}

impl BlockOrder {
    /// Appends the block's items to `out` in order; the block starts at `start_ns`.
    fn arrange_into(&mut self, out: &mut Vec<Staged>, start_ns: u64, in_time_order: bool) {
        let block = &self.block;
        if self.runs.len() < 2 && in_time_order {
            out.extend_from_slice(block);
            return;
        }
        let latest = block.iter().map(|item| item.key().0.0.saturating_sub(start_ns)).max().unwrap_or(0);
        match u32::try_from(latest) {
            Ok(latest) if in_time_order => {
                self.keys.clear();
                let key = |(place, item): (usize, &Staged)| (item.key().0.0 - start_ns) << 32 | place as u64;
                self.keys.extend(block.iter().enumerate().map(key));
                sort_by_offset(&mut self.keys, &mut self.scratch, latest, |&key| (key >> 32) as u32);
                out.extend(self.keys.iter().map(|&key| block[key as u32 as usize]));
            }
            _ => self.merge_runs(out),
        }
    }

    /// Merges the runs as the worker's queues would be merged: whichever run's next item
    /// has the earliest time (then the lowest CPU) goes first, even where a run's times
    /// go back.
    fn merge_runs(&mut self, out: &mut Vec<Staged>) {
        let block = &self.block;
        let key = |run: &std::ops::Range<usize>, index: usize| {
            tournament_key((!run.is_empty()).then(|| block[run.start].key()), index)
        };
        let mut tournament =
            Tournament::new(self.runs.iter().enumerate().map(|(index, run)| key(run, index)).collect());
        while let Some(index) = tournament.winner() {
            let run = &mut self.runs[index];
            out.push(block[run.start]);
            run.start += 1;
            tournament.replace_winner(key(run, index));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracedat::{Selection, Trace};

    #[test]
    fn the_tournament_yields_keys_in_order() {
        for sources in [1usize, 2, 3, 5, 8, 13] {
            let mut lists: Vec<Vec<u64>> =
                (0..sources).map(|s| (0..20).map(|i| (i * 7 + s as u64 * 3) % 50).collect::<Vec<_>>()).collect();
            lists.iter_mut().for_each(|l| l.sort());
            let mut positions = vec![0usize; sources];
            let key = |s: usize, p: usize, lists: &Vec<Vec<u64>>| {
                lists[s].get(p).map_or(u128::MAX, |&t| u128::from(t) << 64 | s as u128)
            };
            let mut tournament = Tournament::new((0..sources).map(|s| key(s, 0, &lists)).collect());
            let mut merged = Vec::new();
            while let Some(s) = tournament.winner() {
                merged.push((lists[s][positions[s]], s));
                positions[s] += 1;
                tournament.replace_winner(key(s, positions[s], &lists));
            }
            let mut expected: Vec<(u64, usize)> =
                lists.iter().enumerate().flat_map(|(s, l)| l.iter().map(move |&t| (t, s))).collect();
            expected.sort();
            assert_eq!(merged, expected, "{sources} sources");
        }
    }

    /// A trace of `cpus` CPUs whose events (of no scheduler format: the model's `Other`)
    /// are stamped `times[cpu]` in file order, with an uncounted loss before each time
    /// listed in `losses`.
    fn trace_of(times: &[Vec<u64>], losses: &[u64]) -> Trace {
        use tracedat::compress::Codec;
        use tracedat::{Endian, FileFormat, TraceWriter};
        let format = FileFormat::v7(Codec::None, Endian::Little, 8, 256);
        let mut writer = TraceWriter::new(format, times.len() as u32).expect("a writer");
        writer.add_event_format("sched", crate::kernel_formats::sched_format("sched_switch").expect("a kernel format"));
        for (cpu, times) in times.iter().enumerate() {
            let mut sink = writer.cpu_sink(TraceWriter::TOP, cpu as u32).expect("a CPU");
            for &ts in times {
                if losses.contains(&ts) {
                    sink.mark_lost(None);
                }
                let payload = [0xff, 0xff, 0, 0, 1, 0, 0, 0];
                sink.add_event(ts, &payload).expect("an event");
            }
            writer.close_sink(sink).expect("closed");
        }
        let mut bytes = Vec::new();
        writer.write_to(&mut bytes).expect("written");
        Trace::from_bytes("staged.dat", bytes).expect("readable")
    }

    /// What one worker over all CPUs stages, as (time, CPU, loss) in order.
    fn staged(trace: &Trace) -> Vec<(u64, u32, bool)> {
        let decoder = SchedDecoder::new(trace.formats());
        let queues =
            (0..trace.cpu_count()).map(|cpu| CpuQueue::new(trace.events_of(&Selection::one_cpu("", cpu)))).collect();
        let (full_tx, full_rx) = sync_channel::<Batch>(batches_ahead(1));
        let (_empty_tx, empty_rx) = std::sync::mpsc::channel::<Batch>();
        let items = std::thread::scope(|scope| {
            let reader = scope.spawn(move || full_rx.iter().flat_map(|batch| batch.items).collect::<Vec<_>>());
            stage(queues, &decoder, full_tx, empty_rx, &AtomicU64::new(0));
            reader.join().expect("collected")
        });
        items
            .iter()
            .map(|item| {
                let (ts, cpu) = item.key();
                (ts.0, cpu.0, matches!(item.what, StagedKind::Lost(_)))
            })
            .collect()
    }

    /// The same through the reader's own merge of every CPU (losses before their event).
    fn merged(trace: &Trace) -> Vec<(u64, u32, bool)> {
        let mut stream = trace.events();
        let mut order = Vec::new();
        let mut lost = false;
        while let Some(item) = stream.next() {
            match item {
                Item::Lost(_) => lost = true,
                Item::Event(event) => {
                    if std::mem::take(&mut lost) {
                        order.push((event.ts.0, event.cpu.0, true));
                    }
                    order.push((event.ts.0, event.cpu.0, false));
                }
            }
        }
        order
    }

    #[test]
    fn a_worker_stages_its_cpus_in_the_order_of_one_merge_over_all_cpus() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut random = |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        for case in 0..12 {
            // Dense and sparse stretches (gaps of up to 20 s), bursts of equal times,
            // losses, and on some CPUs times that go back (damage).
            let cpus = 1 + random(9) as usize;
            let times: Vec<Vec<u64>> = (0..cpus)
                .map(|cpu| {
                    let mut ts = 1_000_000_000 + random(3) * 1000;
                    (0..random(3000))
                        .map(|_| {
                            ts = match random(100) {
                                0 => ts + random(20_000_000_000),
                                1 if case % 3 == 0 && cpu % 2 == 1 => ts.saturating_sub(random(5_000_000)),
                                2..=30 => ts,
                                _ => ts + random(50_000),
                            };
                            ts / 1000 * 1000
                        })
                        .collect()
                })
                .collect();
            let losses: Vec<u64> = times.iter().flatten().copied().filter(|_| random(200) == 0).collect();
            let trace = trace_of(&times, &losses);
            assert_eq!(staged(&trace), merged(&trace), "case {case}: {cpus} CPUs");
        }
    }

    #[test]
    fn staged_items_stay_small() {
        assert!(std::mem::size_of::<Staged>() <= 40, "{}", std::mem::size_of::<Staged>());
    }

    #[test]
    fn names_are_numbered_once_in_order_of_first_use() {
        let mut names = WorkerNames::default();
        let mut batch = Batch::default();
        let long = b"/usr/lib/a-long-file-name";
        let ids: Vec<NameId> = [&b"sh"[..], b"", b"hackbench", b"sh", long, long]
            .iter()
            .map(|name| names.number(RawName::of(name), &mut batch.new_names))
            .collect();
        let id = |n| NonZeroU32::new(n);
        assert_eq!(ids, [id(1), None, id(2), id(1), id(3), id(3)]);
        assert_eq!(batch.new_names, [b"sh"[..].into(), b"hackbench"[..].into(), long[..].into()]);
    }
}
