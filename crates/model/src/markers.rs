//! Trace markers: the text programs write to `trace_marker` (ftrace `print` events: phase
//! markers of rt-app, LISA, benchmarks, people's own scripts) and the kernel's
//! `trace_printk` messages (`bprint`), as a small table in time order, so figures and
//! reports can show where a run's phases begin and end.

use tracedat::{Cpu, EventItems, EventSource, Item, Nanos, Pid};

/// One marker: when, where, by whom, and its text (one final newline dropped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub time: Nanos,
    pub cpu: Cpu,
    pub pid: Pid,
    pub text: String,
}

/// The markers of a trace whose text `keep` accepts, in time order. Every event the
/// source holds is read (all buffers of a trace.dat); damaged pages are skipped (reading
/// the model reports them).
pub fn read_markers<S: EventSource>(source: &S, mut keep: impl FnMut(&str) -> bool) -> Vec<Marker> {
    let formats = source.formats();
    let print = formats.by_name("ftrace:print").map(|f| f.id);
    let bprint = formats.by_name("ftrace:bprint").map(|f| f.id);
    if print.is_none() && bprint.is_none() {
        return Vec::new();
    }
    let mut markers = Vec::new();
    let mut message = Vec::new();
    let mut events = source.all_events();
    while let Some(item) = events.next() {
        let Item::Event(event) = item else { continue };
        message.clear();
        if Some(event.id) == print {
            match event.field("buf").and_then(|v| v.as_str()) {
                Some(text) => message.extend_from_slice(text.as_bytes()),
                None => continue,
            }
        } else if Some(event.id) != bprint || !source.bprint_message(&event, &mut message) {
            continue;
        }
        if message.last() == Some(&b'\n') {
            message.pop();
        }
        let text = String::from_utf8_lossy(&message);
        if keep(&text) {
            markers.push(Marker { time: event.ts, cpu: event.cpu, pid: event.pid(), text: text.into_owned() });
        }
    }
    markers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> tracedat::Trace {
        tracedat::Trace::open(refcheck::fixture(name)).unwrap()
    }

    #[test]
    fn print_events_in_time_order() {
        let trace = fixture("markers-v7zstd.dat");
        let markers = read_markers(&trace, |_| true);
        let texts: Vec<&str> = markers.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["hello", "two\nlines", "no newline", "a\n\nb\n", "z\nx-1 [000] 1.5: fake: y"]);
        assert!(markers.windows(2).all(|w| w[0].time <= w[1].time));
        assert!(markers.iter().all(|m| m.pid == markers[0].pid && m.cpu == Cpu(1)));
        let some = read_markers(&trace, |text| text.contains("line"));
        assert_eq!(some.len(), 2);
    }

    #[test]
    fn bprint_messages_are_markers_too() {
        let trace = fixture("foreign/lisa-thermal-arm32.dat");
        let markers = read_markers(&trace, |_| true);
        assert!(markers.len() > 400, "{} markers", markers.len());
        assert!(markers.iter().any(|m| !m.text.is_empty() && !m.text.starts_with("(NO FORMAT")));
    }
}
