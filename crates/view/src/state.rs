//! What the server knows about each trace it shows: the model and where its time axis
//! starts, the row orders, and the parts computed once in the background (the per-task
//! index, `check`'s incidents, the markers) so the first view does not wait for them.

use crate::incidents::{self, Incident};
use crate::lookup::{RunCache, TaskIndex};
use crate::markers;
use crate::pyramid::Pyramid;
use analysis::TaskFilter;
use figures::graph::{RowSpec, row_order};
use inputs::Input;
use model::{Marker, Model, Nanos, Topology};
use std::sync::OnceLock;

/// One trace to show, as the command line prepared it.
pub struct ViewTrace {
    /// Shown as its title (the file name).
    pub name: String,
    /// The recording (trace.dat or perf.data), for its markers.
    pub trace: Input,
    pub model: Model,
    /// For socket order and socket bands, when known.
    pub topology: Option<Topology>,
    /// Times are shown in seconds from here (the trace's start, or the end of the
    /// recording's initial sleep).
    pub origin: Nanos,
}

/// What the page starts with unless its URL says otherwise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Initial {
    /// `[start, end)` in ns from the origin.
    pub window: Option<(i64, i64)>,
    pub forked: bool,
    pub socket_order: bool,
}

/// A trace being shown.
pub struct Shown {
    pub view: ViewTrace,
    /// Rows bottom to top in CPU order, and in socket order when the topology is known.
    pub rows_by_number: Vec<RowSpec>,
    pub rows_by_socket: Option<Vec<RowSpec>>,
    pub filter: TaskFilter,
    task_index: OnceLock<TaskIndex>,
    incidents: OnceLock<(Vec<Incident>, usize)>,
    markers: OnceLock<(Vec<Marker>, usize)>,
    /// Base columns for all tasks and for forked tasks only.
    pyramids: [OnceLock<Pyramid>; 2],
    pub runs: RunCache,
}

impl Shown {
    pub fn new(view: ViewTrace, filter: TaskFilter) -> Shown {
        let cpus = view.model.cpus().len();
        let rows_by_number = row_order(cpus, view.topology.as_ref(), false);
        let rows_by_socket = view.topology.as_ref().map(|t| row_order(cpus, Some(t), true));
        Shown {
            view,
            rows_by_number,
            rows_by_socket,
            filter,
            task_index: OnceLock::new(),
            incidents: OnceLock::new(),
            markers: OnceLock::new(),
            pyramids: [OnceLock::new(), OnceLock::new()],
            runs: RunCache::default(),
        }
    }

    pub fn model(&self) -> &Model {
        &self.view.model
    }

    pub fn origin(&self) -> Nanos {
        self.view.origin
    }

    /// Trace time from ns relative to the origin (clamped to the clock's range).
    pub fn absolute(&self, relative: i64) -> Nanos {
        Nanos((i128::from(self.view.origin.0) + i128::from(relative)).clamp(0, i128::from(u64::MAX)) as u64)
    }

    pub fn relative(&self, time: Nanos) -> i64 {
        (i128::from(time.0) - i128::from(self.view.origin.0)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    /// The per-task index (built now if the background has not built it yet).
    pub fn task_index(&self) -> &TaskIndex {
        self.task_index.get_or_init(|| TaskIndex::build(&self.view.model))
    }

    /// The incidents, or `None` while they are being computed.
    pub fn incidents(&self) -> Option<&(Vec<Incident>, usize)> {
        self.incidents.get()
    }

    /// The markers, or `None` while they are being read.
    pub fn markers(&self) -> Option<&(Vec<Marker>, usize)> {
        self.markers.get()
    }

    /// The base columns for a filter (only `forked_only` may be set; built now if not yet).
    pub fn pyramid(&self, filter: &TaskFilter) -> &Pyramid {
        self.pyramids[usize::from(filter.forked_only)]
            .get_or_init(|| Pyramid::build(&self.view.model, self.view.origin, filter))
    }

    /// Computes what the background computes; each part once.
    pub fn prepare(&self) {
        self.markers.get_or_init(|| markers::read(&self.view.trace));
        self.task_index();
        self.incidents.get_or_init(|| incidents::find(&self.view.model, &self.filter));
    }
}
