//! `schedlens view`: the interactive viewer the schedgraph paper wished for. A local web
//! server (loopback only, `http`) answers the page's requests for tiles — the per-core timeline,
//! the running/waiting counts and the runqueue lengths of one stretch of time at one
//! resolution, computed by the figures crate exactly as `graph` computes them — and for
//! the details behind a click: a run, a task, a range's statistics, `check`'s incidents,
//! trace markers, and the view exported through the renderer `graph` uses.
//!
//! The page (`web/`: plain ES modules, canvas 2D) holds tiles, never per-event objects,
//! and reads them through a data-source interface, so the same drawing code can later read
//! a precomputed pyramid embedded in a report file.

mod assets;
mod cache;
mod export;
mod http;
mod incidents;
mod lookup;
mod markers;
mod params;
pub mod pyramid;
mod rows_json;
mod server;
mod state;
mod stats_json;
pub mod tiles;

pub use rows_json::{places_json, rows_json};
pub use stats_json::stats_json;

pub use state::{Initial, ViewTrace};

use analysis::TaskFilter;
use server::{App, Slot};
use state::Shown;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Why the viewer cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("cannot listen on 127.0.0.1:{port}")]
    Listen { port: u16, source: std::io::Error },
    #[error("cannot start the web server: {0}")]
    Server(#[from] std::io::Error),
}

/// The port tried first when none is given (then the next few, then any free one).
pub const DEFAULT_PORT: u16 = 8950;

/// A viewer listening on the loopback interface. It can serve before its traces are
/// shown: the browser then loads the page while the models are built, and the page's
/// requests for data wait until [`Viewer::show`].
pub struct Viewer {
    listener: TcpListener,
    slot: Arc<Slot>,
    /// Stops the background preparation when serving stops.
    background_stop: Arc<AtomicBool>,
    url: String,
}

impl Viewer {
    /// Listens on 127.0.0.1: on `port` when given, else on [`DEFAULT_PORT`] or the next
    /// free port after it; no traces yet.
    pub fn listen(port: Option<u16>) -> Result<Viewer, ViewError> {
        let listener = listen(port)?;
        let address = listener.local_addr()?;
        Ok(Viewer {
            listener,
            slot: Arc::new(Slot::default()),
            background_stop: Arc::new(AtomicBool::new(false)),
            url: format!("http://{address}/"),
        })
    }

    /// [`Viewer::listen`], then [`Viewer::show`].
    pub fn bind(
        traces: Vec<ViewTrace>,
        initial: Initial,
        filter: TaskFilter,
        port: Option<u16>,
    ) -> Result<Viewer, ViewError> {
        let viewer = Viewer::listen(port)?;
        viewer.show(traces, initial, filter);
        Ok(viewer)
    }

    /// Shows the traces (once): requests waiting for them are answered, and what the first
    /// view needs is computed on a background thread at once (the page's tiles wait for
    /// it); incidents, markers and the per-task index follow once the first view has been
    /// served. `filter` is what `check`'s incidents count (`--forked`). The thread is left
    /// behind (not waited for) when serving stops.
    pub fn show(&self, traces: Vec<ViewTrace>, initial: Initial, filter: TaskFilter) {
        if self.slot.app().is_some() {
            return;
        }
        let traces = traces.into_iter().map(|view| Shown::new(view, filter.clone())).collect();
        self.slot.fill(App::new(traces, initial));
        let (slot, stop) = (self.slot.clone(), self.background_stop.clone());
        std::thread::Builder::new()
            .name("view-prepare".into())
            .spawn(move || {
                if let Some(app) = slot.app() {
                    server::prepare(app, &stop);
                }
            })
            .expect("a thread can be started");
    }

    /// No traces are coming (they could not be loaded): requests waiting for them get a
    /// 503.
    pub fn abandon(&self) {
        self.slot.abandon();
    }

    /// The page's address, e.g. `http://127.0.0.1:8950/`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serves until `stop` is set (e.g. by Ctrl-C).
    pub fn run(&self, stop: Arc<AtomicBool>) {
        server::serve(&self.listener, &self.slot, &stop);
        self.background_stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

fn listen(port: Option<u16>) -> Result<TcpListener, ViewError> {
    let bind = |port: u16| TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    match port {
        Some(port) => bind(port).map_err(|source| ViewError::Listen { port, source }),
        None => (DEFAULT_PORT..DEFAULT_PORT + 10)
            .find_map(|p| bind(p).ok())
            .map_or_else(|| bind(0).map_err(|source| ViewError::Listen { port: 0, source }), Ok),
    }
}
