//! `schedlens view`: the interactive viewer the schedgraph paper wished for. A local web
//! server (loopback only, `http`) answers the page's requests (`server`) from the tile
//! engine (crates/tiles): tiles — the per-core timeline, the running/waiting counts and
//! the runqueue lengths of one stretch of time at one resolution — and the details behind
//! a click: a run, a task, a range's statistics, `check`'s incidents, trace markers, and
//! the view exported through the renderer `graph` uses. This crate holds the sockets, the
//! threads and the reading of the trace's markers; everything it answers is computed in
//! `tiles`.
//!
//! The page (crates/tiles/web: plain ES modules, canvas 2D) holds tiles, never per-event
//! objects, and reads them through a data-source interface, so the same drawing code reads
//! a precomputed pyramid embedded in a report file.

mod http;
mod markers;
mod params;
mod server;

use analysis::TaskFilter;
use server::{App, Slot};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tiles::{Initial, Shown, ShownTrace};

/// Why the viewer cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("cannot listen on 127.0.0.1:{port}")]
    Listen { port: u16, source: std::io::Error },
    #[error("cannot start the web server: {0}")]
    Server(#[from] std::io::Error),
}

/// One trace to serve: what the page shows of it, and its file, whose trace markers are
/// read in the background (a second pass over the file) once the first view is served.
pub struct ViewTrace {
    pub shown: ShownTrace,
    pub file: inputs::Input,
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
        let (shown, files) = traces.into_iter().map(|view| (Shown::new(view.shown, filter.clone()), view.file)).unzip();
        self.slot.fill(App::new(shown, files, initial));
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
