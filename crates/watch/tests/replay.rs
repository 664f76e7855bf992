//! The streaming detector on recorded traces replayed page by page in real-time order,
//! in chunks, as the live readers deliver them: what it reports must be what `check`
//! finds in the whole file.

use analysis::check::{Affinity, CheckRequest, Incident, check};
use analysis::{TaskFilter, WindowRequest};
use model::{Detail, Model, Nanos};
use tracedat::Trace;
use watch::{DetectOptions, Detector, Ring, Setup};

/// Episodes as compared: kind, CPUs, start and end.
type Key = (String, Vec<u32>, u64, u64);

fn key(incident: &Incident) -> Key {
    (incident.kind.name().to_string(), incident.cpus.iter().map(|c| c.0).collect(), incident.start.0, incident.end.0)
}

/// `check`'s episodes on the whole file.
fn checked(trace: &Trace, min_lost: Nanos) -> Vec<Key> {
    let (model, _) = Model::build(trace, Detail::FULL, &mut |_| {}).unwrap();
    let (window, _) = WindowRequest::default().resolve(&model).unwrap();
    let affinity = trace.recorded_context().and_then(|c| Affinity::recorded(&c));
    let filter = TaskFilter::default();
    let request =
        CheckRequest { window, filter: &filter, min_lost, min_overload: Nanos(u64::MAX), affinity: affinity.as_ref() };
    let mut keys: Vec<Key> = check(&model, &request).episodes().map(key).collect();
    keys.sort_by_key(|k| (k.2, k.3));
    keys
}

/// Each CPU's pages with their times, as the recorder read them.
fn pages_of(trace: &Trace, setup: &Setup) -> Vec<Vec<(u64, u64, Vec<u8>)>> {
    let layout = setup.layout();
    (0..trace.cpu_count())
        .map(|cpu| {
            let mut pages = Vec::new();
            trace
                .raw_pages(cpu, |bytes| {
                    if let Some(page) = watch::Page::parse(bytes, &layout) {
                        pages.push((page.first_ns, page.last_ns, bytes.to_vec()));
                    }
                })
                .unwrap();
            pages
        })
        .collect()
}

/// What the detector reports when the trace's pages arrive `chunk_ns` of trace time at a
/// time (a page once its last event happened), with a tick after each chunk.
fn replayed(trace: &Trace, options: DetectOptions, chunk_ns: u64) -> (Vec<Key>, Vec<u64>) {
    let (found, lags, _) = replayed_with_ring(trace, options, chunk_ns, None);
    (found, lags)
}

/// As [`replayed`], with the losses the ring saw and the detector's count of episodes
/// left out for them; with `lose`, the kernel says events of that CPU were lost before
/// its first page after that time.
fn replayed_with_ring(
    trace: &Trace,
    options: DetectOptions,
    chunk_ns: u64,
    lose: Option<(usize, u64)>,
) -> (Vec<Key>, Vec<u64>, (Vec<watch::Loss>, u64)) {
    let setup = Setup::of_trace(trace);
    let mut cpus = pages_of(trace, &setup);
    if let Some((cpu, after)) = lose {
        let layout = setup.layout();
        let page = cpus[cpu].iter_mut().find(|p| p.0 > after).expect("a page after the loss");
        // The commit word's "events were lost before this page" flag (count not stored).
        page.2[layout.commit_offset + 3] |= 0x80;
    }
    let start = cpus.iter().filter_map(|p| p.first()).map(|p| p.0).min().unwrap();
    let end = cpus.iter().filter_map(|p| p.last()).map(|p| p.1).max().unwrap();
    let mut ring = Ring::new(setup.layout(), trace.cpu_count());
    let mut detector = Detector::new(options);
    let mut next = vec![0; cpus.len()];
    let mut losses = Vec::new();
    let (mut found, mut lags) = (Vec::new(), Vec::new());
    let mut now = start;
    loop {
        now = (now + chunk_ns).min(end);
        for (cpu, pages) in cpus.iter().enumerate() {
            while next[cpu] < pages.len() && pages[next[cpu]].1 <= now {
                ring.add_page(cpu as u32, &pages[next[cpu]].2);
                next[cpu] += 1;
            }
            // Drained: complete up to now, or to just before the next page's first event.
            let until = pages.get(next[cpu]).map_or(now, |p| now.min(p.0.saturating_sub(1)));
            ring.drained(cpu as u32, until);
        }
        let at_end = now == end;
        let watermark = ring.watermark(None).unwrap_or(start);
        for incident in detector.tick(&setup, &ring, watermark, at_end).unwrap() {
            lags.push(now - incident.end.0);
            found.push(key(&incident));
        }
        for loss in ring.losses() {
            if !losses.contains(loss) {
                losses.push(*loss);
            }
        }
        ring.evict_before(detector.keep_from(watermark, 10_000_000_000));
        if at_end {
            break;
        }
    }
    found.sort_by_key(|k| (k.2, k.3));
    (found, lags, (losses, detector.totals.suppressed_by_losses))
}

fn options(min_lost: Nanos, lookback_ns: u64) -> DetectOptions {
    DetectOptions { min_lost, settle_ns: 300_000_000, lookback_ns, spill_dir: std::env::temp_dir() }
}

#[test]
fn pinned_spinners_streamed_give_checks_episodes() {
    let trace = Trace::open(refcheck::fixture("spin-pinned-record.dat")).unwrap();
    let min_lost = analysis::check::DEFAULT_MIN_LOST;
    let expected = checked(&trace, min_lost);
    assert!(expected.iter().any(|k| k.0 == "work-conservation" && k.3 - k.2 > 200_000_000), "{expected:?}");
    let (found, lags) = replayed(&trace, options(min_lost, 10_000_000_000), 100_000_000);
    assert_eq!(found, expected);
    eprintln!("lags (ms): {:?}", lags.iter().map(|l| l / 1_000_000).collect::<Vec<_>>());
}

#[test]
fn a_short_lookback_still_sees_the_long_episode_whole() {
    let trace = Trace::open(refcheck::fixture("spin-pinned-record.dat")).unwrap();
    let min_lost = Nanos(10_000_000);
    let expected = checked(&trace, min_lost);
    assert_eq!(expected.len(), 1, "{expected:?}");
    let (found, lags) = replayed(&trace, options(min_lost, 400_000_000), 50_000_000);
    assert_eq!(found, expected);
    eprintln!("lags (ms): {:?}", lags.iter().map(|l| l / 1_000_000).collect::<Vec<_>>());
}

#[test]
fn unpinned_spinners_streamed_give_checks_episodes() {
    let trace = Trace::open(refcheck::fixture("spin-unpinned-record.dat")).unwrap();
    for min_lost in [analysis::check::DEFAULT_MIN_LOST, Nanos(10_000_000)] {
        let expected = checked(&trace, min_lost);
        let (found, _) = replayed(&trace, options(min_lost, 10_000_000_000), 100_000_000);
        assert_eq!(found, expected, "min_lost {min_lost:?}");
    }
}

#[test]
fn episodes_around_lost_events_are_never_incidents() {
    // The pinned spinners' long episode, with a loss reported on CPU 0 in its middle.
    let trace = Trace::open(refcheck::fixture("spin-pinned-record.dat")).unwrap();
    let min_lost = analysis::check::DEFAULT_MIN_LOST;
    let expected = checked(&trace, min_lost);
    let long = expected.iter().find(|k| k.3 - k.2 > 200_000_000).unwrap().clone();
    let middle = (long.2 + long.3) / 2;
    let (found, _, (losses, suppressed)) =
        replayed_with_ring(&trace, options(min_lost, 10_000_000_000), 100_000_000, Some((0, middle)));
    assert_eq!(losses.len(), 1);
    assert!(suppressed >= 1);
    for incident in &found {
        let touches = losses.iter().any(|l| l.after_ns <= incident.3 && incident.2 <= l.before_ns);
        assert!(!touches, "{incident:?} touches a loss: {losses:?}");
    }
    // The episodes away from the loss are still reported as check finds them.
    let away: Vec<&Key> = expected.iter().filter(|k| k.3 < losses[0].after_ns).collect();
    assert!(!away.is_empty());
    assert!(away.iter().all(|k| found.contains(k)), "{found:?} {expected:?}");
    assert!(!found.iter().any(|k| k.2 <= middle && middle <= k.3), "{found:?}");
}

#[test]
fn an_incident_file_holds_the_episode_for_check_and_trace_cmd() {
    let trace = Trace::open(refcheck::fixture("spin-pinned-record.dat")).unwrap();
    let min_lost = Nanos(10_000_000);
    let expected = checked(&trace, min_lost);
    let setup = Setup::of_trace(&trace);
    let mut ring = Ring::new(setup.layout(), trace.cpu_count());
    for (cpu, pages) in pages_of(&trace, &setup).iter().enumerate() {
        pages.iter().for_each(|p| ring.add_page(cpu as u32, &p.2));
    }
    let watermark = ring.watermark(None).unwrap();
    let mut detector = Detector::new(options(min_lost, 10_000_000_000));
    let found = detector.tick(&setup, &ring, watermark, true).unwrap();
    assert_eq!(found.iter().map(key).collect::<Vec<_>>(), expected);
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for keep_ns in [300_000_000, 10_000_000_000] {
        let path = dir.join(format!("watch-incident-{keep_ns}.dat"));
        let span = watch::incident_span(&found[0], keep_ns, watermark);
        let version = tracedat::FileVersion::V7 { compression: tracedat::compress::Codec::Zstd };
        watch::write_incident(&setup, &ring, span, version, &path).unwrap();
        let file = Trace::open(&path).unwrap();
        assert_eq!(file.recorded_context(), trace.recorded_context(), "the recorded context is kept");
        assert_eq!(checked(&file, min_lost), expected, "check on the incident file (keep {keep_ns} ns)");
        match std::process::Command::new("trace-cmd").args(["report", "-i"]).arg(&path).output() {
            Ok(report) => assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr)),
            Err(_) => eprintln!("trace-cmd is not installed: its reading of {} is not checked", path.display()),
        }
    }
}

#[test]
fn late_ticks_leave_no_stretch_unanalysed() {
    // A loaded machine delays ticks: here the watermark moves 1 s between ticks while each
    // tick looks back only 0.4 s. What the previous tick could not call final must still be
    // analysed, or episodes in between are never reported.
    for name in ["spin-pinned-record.dat", "spin-unpinned-record.dat"] {
        let trace = Trace::open(refcheck::fixture(name)).unwrap();
        let min_lost = analysis::check::DEFAULT_MIN_LOST;
        let expected = checked(&trace, min_lost);
        let (found, _) = replayed(&trace, options(min_lost, 400_000_000), 1_000_000_000);
        assert_eq!(found, expected, "{name}");
    }
}
