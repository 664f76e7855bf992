//! What the page knows about each trace it shows: the model and where its time axis
//! starts ([`ShownTrace`], the one description the viewer's server and the report both
//! take), and for the server the row orders, the parts computed once in the background
//! (the per-task index, `check`'s incidents, the markers) so the first view does not wait
//! for them, and those computed for the tasks the page follows (runs, thread states,
//! critical paths) ([`Shown`]).

use crate::incidents;
use crate::lookup::{RunCache, TaskIndex};
use crate::path::PathCache;
use crate::pyramid::Pyramid;
use crate::states::StateCache;
use crate::tile::MAX_LEVEL;
use analysis::TaskFilter;
use documents::page::{Incidents, InitialView, Meta, MetaTrace, Place, Row};
use figures::graph::{RowSpec, row_order};
use model::{CpuPlace, Marker, Model, Nanos, Topology};
use std::sync::OnceLock;

/// One trace to show, as the command line prepared it.
pub struct ShownTrace {
    /// Shown as its title (the file name).
    pub name: String,
    pub model: Model,
    /// For socket order and socket bands, when known.
    pub topology: Option<Topology>,
    /// Times are shown in ns from here (the trace's start, or the end of the
    /// recording's initial sleep).
    pub origin: Nanos,
}

impl ShownTrace {
    /// Trace time from ns relative to the origin (clamped to the clock's range).
    pub fn absolute(&self, relative: i64) -> Nanos {
        Nanos((i128::from(self.origin.0) + i128::from(relative)).clamp(0, i128::from(u64::MAX)) as u64)
    }

    /// `time` in ns from the origin.
    pub fn relative(&self, time: Nanos) -> i64 {
        (i128::from(time.0) - i128::from(self.origin.0)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    /// Rows bottom to top in CPU order.
    pub fn rows_by_number(&self) -> Vec<RowSpec> {
        row_order(self.model.cpus().len(), self.topology.as_ref(), false)
    }

    /// Rows bottom to top in socket order, when the topology is known.
    pub fn rows_by_socket(&self) -> Option<Vec<RowSpec>> {
        self.topology.as_ref().map(|t| row_order(self.model.cpus().len(), Some(t), true))
    }

    /// The trace as the page lays it out.
    fn meta(&self) -> MetaTrace {
        let model = &self.model;
        let lost = model.lost();
        let rows = |rows: Vec<RowSpec>| -> Vec<Row> {
            rows.into_iter().map(|r| Row { cpu: r.cpu.0, socket: r.socket, node: r.node, core: r.core }).collect()
        };
        MetaTrace {
            name: self.name.clone(),
            cpus: model.cpus().len(),
            start: self.relative(model.start()),
            end: self.relative(model.end()) + 1,
            origin: self.origin.0.to_string(),
            tasks: model.tasks().len(),
            lost_events: lost.events,
            lost_unknown: lost.unknown_losses,
            rows_by_number: rows(self.rows_by_number()),
            rows_by_socket: self.rows_by_socket().map(rows),
            places: self.topology.as_ref().map(places),
        }
    }
}

/// Every CPU the topology places, in CPU order, with its SMT siblings.
fn places(topology: &Topology) -> Vec<Place> {
    let place = |p: &CpuPlace| {
        let siblings = topology.siblings(p.cpu).into_iter().filter(|&c| c != p.cpu).map(|c| c.0).collect();
        Place { cpu: p.cpu.0, core: p.core, socket: p.socket, node: p.node, siblings }
    };
    topology.places().iter().map(place).collect()
}

/// The page's meta document: the traces, tiles of `tile_columns` columns (`max_columns`
/// at most), and the page's first state.
pub fn meta<'a>(
    traces: impl IntoIterator<Item = &'a ShownTrace>,
    tile_columns: u32,
    max_columns: u32,
    initial: &Initial,
) -> Meta {
    Meta {
        version: env!("CARGO_PKG_VERSION").to_string(),
        tile_columns,
        max_columns,
        max_level: MAX_LEVEL,
        traces: traces.into_iter().map(ShownTrace::meta).collect(),
        initial: InitialView {
            window: initial.window.map(|(a, b)| [a, b]),
            forked: initial.forked,
            socket_order: initial.socket_order,
        },
    }
}

/// What the page starts with unless its URL says otherwise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Initial {
    /// `[start, end)` in ns from the origin.
    pub window: Option<(i64, i64)>,
    pub forked: bool,
    pub socket_order: bool,
}

/// A trace being served.
pub struct Shown {
    pub trace: ShownTrace,
    /// Rows bottom to top in CPU order, and in socket order when the topology is known.
    pub rows_by_number: Vec<RowSpec>,
    pub rows_by_socket: Option<Vec<RowSpec>>,
    pub filter: TaskFilter,
    task_index: OnceLock<TaskIndex>,
    incidents: OnceLock<Incidents>,
    markers: OnceLock<(Vec<Marker>, usize)>,
    /// Base columns for all tasks and for forked tasks only.
    pyramids: [OnceLock<Pyramid>; 2],
    pub runs: RunCache,
    /// Followed tasks' thread states.
    pub states: StateCache,
    /// Critical paths walked.
    pub paths: PathCache,
}

impl Shown {
    pub fn new(trace: ShownTrace, filter: TaskFilter) -> Shown {
        Shown {
            rows_by_number: trace.rows_by_number(),
            rows_by_socket: trace.rows_by_socket(),
            trace,
            filter,
            task_index: OnceLock::new(),
            incidents: OnceLock::new(),
            markers: OnceLock::new(),
            pyramids: [OnceLock::new(), OnceLock::new()],
            runs: RunCache::default(),
            states: StateCache::default(),
            paths: PathCache::default(),
        }
    }

    pub fn model(&self) -> &Model {
        &self.trace.model
    }

    pub fn origin(&self) -> Nanos {
        self.trace.origin
    }

    /// Trace time from ns relative to the origin (clamped to the clock's range).
    pub fn absolute(&self, relative: i64) -> Nanos {
        self.trace.absolute(relative)
    }

    /// `time` in ns from the origin.
    pub fn relative(&self, time: Nanos) -> i64 {
        self.trace.relative(time)
    }

    /// The per-task index (built now if the background has not built it yet).
    pub fn task_index(&self) -> &TaskIndex {
        self.task_index.get_or_init(|| TaskIndex::build(&self.trace.model))
    }

    /// The incidents as the page lists them, or `None` while they are being computed.
    pub fn incidents(&self) -> Option<&Incidents> {
        self.incidents.get()
    }

    /// The markers, or `None` while they are being read.
    pub fn markers(&self) -> Option<&(Vec<Marker>, usize)> {
        self.markers.get()
    }

    /// The base columns for a filter (only `forked_only` may be set; built now if not yet).
    pub fn pyramid(&self, filter: &TaskFilter) -> &Pyramid {
        self.pyramids[usize::from(filter.forked_only)]
            .get_or_init(|| Pyramid::build(&self.trace.model, self.trace.origin, filter))
    }

    /// Computes what the background computes, each part once: the markers (read by
    /// `read_markers`: at most some of them, and how many there were in all), the task
    /// index and the incidents.
    pub fn prepare(&self, read_markers: impl FnOnce() -> (Vec<Marker>, usize)) {
        self.markers.get_or_init(read_markers);
        self.task_index();
        self.incidents.get_or_init(|| incidents::find(&self.trace, &self.filter));
    }
}
