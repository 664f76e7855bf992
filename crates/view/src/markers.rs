//! The viewer's one reading of trace markers from the file (crates/tiles, which lists
//! them for the page, reads no files): the `print` and `bprint` texts the model's
//! `read_markers` finds (a second pass over the trace, done in the background), at most
//! [`LIMIT`] of them kept, the rest counted.

use model::Marker;
use tracedat::EventSource;

/// Markers kept at most.
const LIMIT: usize = 100_000;

/// The trace's first [`LIMIT`] markers in time order, and how many there were in all.
pub fn read<S: EventSource>(trace: &S) -> (Vec<Marker>, usize) {
    let mut total = 0;
    let markers = model::read_markers(trace, |_| {
        total += 1;
        total <= LIMIT
    });
    (markers, total)
}
