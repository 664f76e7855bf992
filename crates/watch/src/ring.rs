//! The bounded memory of `watch`: each CPU's raw ring-buffer pages as the kernel handed
//! them over, with the times they span, the last `--keep` seconds of them (and more
//! while an episode is still open, up to a cap). Each CPU also knows up to when all its
//! events have arrived (its last event, or a drain that found nothing new after some
//! other CPU's event); the [`Ring::watermark`] is the least of those over the CPUs: up
//! to it the ring holds everything the kernel recorded, so detection there is final.

use std::collections::VecDeque;
use tracedat::ringbuf::{Missed, PageLayout, PageRecords, read_page_header};

/// One page as read, with what detection and eviction need of it.
#[derive(Clone, Debug)]
pub struct Page {
    pub bytes: Box<[u8]>,
    /// The page's first and last event times (raw trace clock), or the header's time
    /// for a page without events.
    pub first_ns: u64,
    pub last_ns: u64,
    pub events: u32,
    /// Events lost just before this page.
    pub missed: Missed,
}

impl Page {
    /// Decodes the page's header and records' times; `None` for a page that cannot be
    /// read (counted by the caller) or holds nothing (no events, no loss).
    pub fn parse(bytes: &[u8], layout: &PageLayout) -> Option<Page> {
        let header = read_page_header(bytes, layout).ok()?;
        let data = bytes.get(layout.data_offset..layout.data_offset + header.data_len)?;
        let (mut first, mut last, mut events) = (None, header.timestamp, 0u32);
        for record in PageRecords::new(data, header.timestamp, layout.endian) {
            let Ok(record) = record else { break };
            first.get_or_insert(record.timestamp);
            last = record.timestamp;
            events += 1;
        }
        if events == 0 && header.missed == Missed::None {
            return None;
        }
        Some(Page {
            bytes: bytes.into(),
            first_ns: first.unwrap_or(header.timestamp),
            last_ns: last,
            events,
            missed: header.missed,
        })
    }
}

/// A loss the kernel reported: events of `cpu` were dropped between `after_ns` (its
/// previous page's last event) and `before_ns` (the first event after the loss).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Loss {
    pub cpu: u32,
    pub after_ns: u64,
    pub before_ns: u64,
    /// `None`: the kernel did not say how many.
    pub events: Option<u64>,
}

#[derive(Debug, Default)]
struct CpuPages {
    pages: VecDeque<Page>,
    /// Every event of this CPU up to here has arrived.
    complete_until: u64,
    /// Whether the CPU delivered anything or said it was drained.
    heard: bool,
    /// The last event time of the pages evicted or kept (the time a loss starts after).
    last_ns: u64,
}

/// The pages of every CPU.
#[derive(Debug)]
pub struct Ring {
    layout: PageLayout,
    cpus: Vec<CpuPages>,
    losses: Vec<Loss>,
    bytes: usize,
    /// Totals since the start.
    pub events_seen: u64,
    pub events_lost: u64,
    pub losses_unknown: u64,
    pub pages_unreadable: u64,
}

impl Ring {
    pub fn new(layout: PageLayout, cpu_count: u32) -> Ring {
        Ring {
            layout,
            cpus: (0..cpu_count).map(|_| CpuPages::default()).collect(),
            losses: Vec::new(),
            bytes: 0,
            events_seen: 0,
            events_lost: 0,
            losses_unknown: 0,
            pages_unreadable: 0,
        }
    }

    pub fn cpu_count(&self) -> u32 {
        self.cpus.len() as u32
    }

    /// Keeps a page that `cpu`'s reader copied (pages of CPUs beyond the count, and
    /// unreadable pages, are counted and dropped).
    pub fn add_page(&mut self, cpu: u32, bytes: &[u8]) {
        let Some(state) = self.cpus.get_mut(cpu as usize) else {
            self.pages_unreadable += 1;
            return;
        };
        if read_page_header(bytes, &self.layout).is_err() {
            self.pages_unreadable += 1;
            return;
        }
        let Some(page) = Page::parse(bytes, &self.layout) else { return };
        if page.missed != Missed::None {
            let events = match page.missed {
                Missed::Count(n) => Some(n),
                _ => None,
            };
            self.events_lost += events.unwrap_or(0);
            self.losses_unknown += u64::from(events.is_none());
            self.losses.push(Loss { cpu, after_ns: state.last_ns, before_ns: page.first_ns, events });
        }
        self.events_seen += u64::from(page.events);
        state.heard = true;
        state.complete_until = state.complete_until.max(page.last_ns);
        state.last_ns = state.last_ns.max(page.last_ns);
        self.bytes += page.bytes.len();
        state.pages.push_back(page);
    }

    /// Says that `cpu`'s reader found nothing more after every event up to `until_ns`
    /// had been recorded (some CPU's event at that time had already arrived when the
    /// drain began).
    pub fn drained(&mut self, cpu: u32, until_ns: u64) {
        if let Some(state) = self.cpus.get_mut(cpu as usize) {
            state.heard = true;
            state.complete_until = state.complete_until.max(until_ns);
        }
    }

    /// The latest event time of any CPU.
    pub fn latest_ns(&self) -> u64 {
        self.cpus.iter().map(|c| c.last_ns).max().unwrap_or(0)
    }

    /// The time up to which every CPU's events have arrived; `None` until every CPU was
    /// heard from (`only` limits the CPUs that count: those being read).
    pub fn watermark(&self, only: Option<&[u32]>) -> Option<u64> {
        let counted = |cpu: usize| only.is_none_or(|list| list.contains(&(cpu as u32)));
        let cpus: Vec<&CpuPages> = self.cpus.iter().enumerate().filter(|(i, _)| counted(*i)).map(|(_, c)| c).collect();
        if cpus.is_empty() || cpus.iter().any(|c| !c.heard) {
            return None;
        }
        cpus.iter().map(|c| c.complete_until).min()
    }

    /// The earliest time the ring holds.
    pub fn start_ns(&self) -> Option<u64> {
        self.cpus.iter().filter_map(|c| c.pages.front()).map(|p| p.first_ns).min()
    }

    /// Drops the pages whose events all came before `ns`, and the losses before them.
    pub fn evict_before(&mut self, ns: u64) {
        for state in &mut self.cpus {
            while state.pages.front().is_some_and(|p| p.last_ns < ns) {
                let page = state.pages.pop_front().expect("a front page");
                self.bytes -= page.bytes.len();
            }
        }
        self.losses.retain(|l| l.before_ns >= ns);
    }

    /// The pages of `cpu` that hold events from `from_ns` to `to_ns` (whole pages: the
    /// first may start before, the last end after).
    pub fn pages(&self, cpu: u32, from_ns: u64, to_ns: u64) -> impl Iterator<Item = &Page> {
        let pages = self.cpus.get(cpu as usize).map(|c| &c.pages);
        pages.into_iter().flatten().filter(move |p| p.last_ns >= from_ns && p.first_ns <= to_ns)
    }

    /// The losses the ring still covers.
    pub fn losses(&self) -> &[Loss] {
        &self.losses
    }

    /// Bytes of pages held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracedat::Endian;
    use tracedat::pagebuilder::PageBuilder;

    fn layout() -> PageLayout {
        PageLayout::standard(Endian::Little, 8)
    }

    fn page(times: &[u64], lost: Option<Option<u64>>) -> Vec<u8> {
        let mut builder = PageBuilder::new(layout(), 4096).unwrap();
        if let Some(count) = lost {
            builder.mark_lost(count);
        }
        for &t in times {
            assert!(builder.add(t, &[1, 0, 0, 0, 7, 0, 0, 0]).unwrap());
        }
        let mut out = Vec::new();
        builder.finish_into(&mut out);
        out
    }

    #[test]
    fn the_watermark_waits_for_every_cpu_and_losses_are_kept() {
        let mut ring = Ring::new(layout(), 2);
        ring.add_page(0, &page(&[100, 200, 300], None));
        assert_eq!(ring.watermark(None), None, "CPU 1 not heard from");
        ring.drained(1, 250);
        assert_eq!(ring.watermark(None), Some(250));
        ring.add_page(1, &page(&[400, 500], Some(Some(12))));
        assert_eq!(ring.watermark(None), Some(300));
        assert_eq!(ring.losses(), &[Loss { cpu: 1, after_ns: 0, before_ns: 400, events: Some(12) }]);
        assert_eq!((ring.events_seen, ring.events_lost), (5, 12));
        ring.evict_before(350);
        assert_eq!(ring.pages(0, 0, u64::MAX).count(), 0);
        assert_eq!(ring.pages(1, 0, u64::MAX).count(), 1);
        assert_eq!(ring.start_ns(), Some(400));
        assert_eq!(ring.bytes(), 4096);
    }
}
