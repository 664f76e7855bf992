//! The routes of the loopback HTTP server (`http`): the page's files, and the API the
//! page's "server tiles" data source calls (`web/js/source.js`). Every answer to a
//! request the server cannot serve is a 4xx with a one-line message; nothing a client
//! sends can panic a connection's thread or start an unbounded computation.
//!
//! Routes (times are ns from the trace's origin, `trace` an index into `/api/meta`'s list):
//! - `GET /` and `/web/...`: the page (embedded at build time, see `assets`).
//! - `GET /api/meta`: the traces, their CPUs and row orders, the tile geometry.
//! - `GET /api/status`: whether the background work (coarse tiles, incidents, markers) is done.
//! - `GET /api/tile?trace&level&index&columns&layers[&cpus][&color&target][&forked][&tasks]`:
//!   a binary tile (see `tiles`; the states layer `s` takes the followed task as `tasks`).
//! - `GET /api/tiles?list=TILE;TILE...`: several tiles in one answer (each `TILE` the
//!   query of an `/api/tile` request).
//! - `GET /api/at?trace&cpu&t&span`: the run under the mouse.
//! - `GET /api/task?trace&task[&start&end]`: a followed task, its migrations and wakeups.
//! - `GET /api/state?trace&task&t&span`: a followed task's state under the mouse, with who
//!   held the CPU it waited for.
//! - `GET /api/queue?trace&cpu&t&span`: the waits in a CPU's runqueue under the mouse, each
//!   with who held the CPU.
//! - `GET /api/path?trace[&task][&start&end]`: the traced command's (or a task's) critical
//!   path: its breakdown, and the hops and stretches of scheduler cost in the range.
//! - `GET /api/stats?trace&start&end[&forked]`: statistics of a range, per command and CPU.
//! - `GET /api/incidents?trace`: `check`'s incidents (202 while they are computed).
//! - `GET /api/markers?trace[&start&end&limit]`: trace markers.
//! - `GET /api/export?format&start&end[&color&target&forked&socket&rw&q&width]`: the view
//!   as a PDF, SVG or PNG file.

use crate::http::{self, Request, Response};
use crate::markers;
use crate::params::{BadRequest, Query};
use analysis::TaskFilter;
use analysis::check::Affinity;
use analysis::critical_path::Target;
use analysis::stats::{self, Grouping};
use documents::page::{ErrorMessage, NotReady, Pending, ServerStatus, Working};
use experiment::profile::WorkloadWindow;
use figures::timeline::Coloring;
use inputs::Input;
use model::{Cpu, Nanos, Pid, TaskId};
use serde::Serialize;
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};
use tiles::assets;
use tiles::cache::Cache;
use tiles::detail::{self, LIST_LIMIT};
use tiles::export::{ExportRequest, export};
use tiles::lookup::Run;
use tiles::markers::markers_in;
use tiles::path::{PathOf, page_path};
use tiles::tile::{Layers, MAX_COLUMNS, MAX_LEVEL, TilePlace, TileRequest, tile, timeline_tiles};
use tiles::{Initial, Shown};

/// Bytes of computed tiles kept.
const CACHE_BYTES: usize = 256 << 20;
/// How long a request for `/api/meta` waits for the models before it is told to ask again.
const META_WAIT: Duration = Duration::from_secs(10);
/// Highest relative time accepted (about 106 days in ns): keeps arithmetic in range.
const MAX_TIME: i64 = 1 << 53;

/// What a trace's recording says about its command, for its critical path.
struct Recorded {
    /// The traced command's pid, when `schedlens record` stored it.
    command_pid: Option<Pid>,
    /// The CPUs its tasks were allowed on, when stored.
    affinity: Option<Affinity>,
}

/// Everything the workers share.
pub struct App {
    pub traces: Vec<Shown>,
    /// The traces' files, for their markers.
    files: Vec<Input>,
    /// Per trace, what its recording says about its command.
    recorded: Vec<Recorded>,
    pub initial: Initial,
    cache: Cache,
    activity: Activity,
    /// Opens once the whole traces' timeline tiles of a first view are cached: until
    /// then, the page's timeline tiles wait instead of computing them a second time.
    first_timelines: Latch,
    /// The background work is done.
    prepared: AtomicBool,
}

impl App {
    pub fn new(traces: Vec<Shown>, files: Vec<Input>, initial: Initial) -> App {
        let recorded = files
            .iter()
            .map(|file| Recorded {
                command_pid: file.command_pid(),
                affinity: file.recorded_context().and_then(|c| Affinity::recorded(&c)),
            })
            .collect();
        App {
            traces,
            files,
            recorded,
            initial,
            cache: Cache::new(CACHE_BYTES),
            activity: Activity::new(),
            first_timelines: Latch::default(),
            prepared: AtomicBool::new(false),
        }
    }
}

/// Where the server finds the [`App`]: listening starts before the traces' models are
/// built, so that the browser loads the page meanwhile. Until the app is there, the
/// page's files are served at once and every other request waits for it.
#[derive(Default)]
pub struct Slot {
    app: std::sync::OnceLock<App>,
    /// Opens when the app is set, or when it never will be (the traces could not be
    /// loaded: waiting requests then get a 503).
    settled: Latch,
}

impl Slot {
    /// Sets the app (once; later calls are ignored) and lets waiting requests through.
    pub fn fill(&self, app: App) {
        let _ = self.app.set(app);
        self.settled.open();
    }

    /// No app is coming: waiting requests are refused.
    pub fn abandon(&self) {
        self.settled.open();
    }

    pub fn app(&self) -> Option<&App> {
        self.app.get()
    }
}

/// A gate that opens once and stays open.
#[derive(Default)]
struct Latch {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Latch {
    fn wait(&self) {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        drop(self.opened.wait_while(open, |open| !*open).unwrap_or_else(|e| e.into_inner()));
    }

    /// Waits at most `limit`; whether it is open.
    fn wait_at_most(&self, limit: Duration) -> bool {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let (open, _) = self.opened.wait_timeout_while(open, limit, |open| !*open).unwrap_or_else(|e| e.into_inner());
        *open
    }

    fn open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.opened.notify_all();
    }
}

/// Opens its latch when dropped, also when the work before it panicked.
struct OpenOnDrop<'l>(&'l Latch);

impl Drop for OpenOnDrop<'_> {
    fn drop(&mut self) {
        self.0.open();
    }
}

/// When the page's tiles were last computed, so background work waits for the first view.
struct Activity {
    /// Tiles being computed for the page now.
    in_flight: AtomicUsize,
    last_done: Mutex<Option<Instant>>,
}

impl Activity {
    fn new() -> Activity {
        Activity { in_flight: AtomicUsize::new(0), last_done: Mutex::new(None) }
    }

    /// Quiet after a first view, or a while after `since` in any case.
    fn quiet(&self, since: Instant) -> bool {
        let last = *self.last_done.lock().unwrap_or_else(|e| e.into_inner());
        let after_first_view = last.is_some_and(|t| t.elapsed() >= Duration::from_millis(300));
        since.elapsed() >= Duration::from_secs(3) || (after_first_view && self.in_flight.load(Ordering::Relaxed) == 0)
    }

    fn tile<T>(&self, compute: impl FnOnce() -> T) -> T {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        let result = compute();
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        *self.last_done.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        result
    }
}

/// Plot widths (device pixels) a first view is expected at, narrowest and widest: the
/// whole trace's tiles for these widths are computed while the page loads.
const FIRST_VIEW_WIDTHS: (i64, i64) = (640, 4096);

/// Computes what every first view needs while the browser loads the page, so its first
/// requests find their answers ready: each trace's running/waiting and runqueue base,
/// and the whole trace's tiles (timeline in the default colouring, running/waiting and
/// runqueue) at the levels a first view asks for. The base sweep and the timelines run
/// side by side; the page's timeline tiles wait for the latter, its track tiles for the
/// base (a once-cell).
fn prepare_first_view(app: &App, stop: &AtomicBool) {
    let levels = first_view_levels(app);
    let tiles_of = |layers: Layers| {
        for trace in 0..app.traces.len() {
            for level in levels.clone().rev() {
                whole_trace_tiles(app, trace, level, layers, stop);
            }
        }
    };
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for shown in &app.traces {
                shown.pyramid(&shown.filter);
            }
        });
        let opens = OpenOnDrop(&app.first_timelines);
        for trace in 0..app.traces.len() {
            whole_trace_timelines(app, trace, levels.clone());
        }
        drop(opens);
        // Tiles that could not come from one placement (times from 2^53 ns on), one by one.
        tiles_of(Layers { timeline: true, ..Layers::default() });
    });
    tiles_of(Layers { running_waiting: true, runqueue: true, ..Layers::default() });
}

/// The levels the page asks for when it shows every trace whole at a plot width within
/// [`FIRST_VIEW_WIDTHS`] (`levelFor` in `web/js/timescale.js`: the coarsest level whose
/// column is no wider than a device pixel).
fn first_view_levels(app: &App) -> std::ops::RangeInclusive<u32> {
    let from = app.traces.iter().map(|shown| shown.relative(shown.model().start())).min().unwrap_or(0);
    let to = app.traces.iter().map(|shown| shown.relative(shown.model().end()) + 1).max().unwrap_or(1);
    let level = |width: i64| {
        let ns_per_px = (to - from).max(1) / width;
        if ns_per_px < 1 { 0 } else { ns_per_px.ilog2().min(MAX_LEVEL) }
    };
    level(FIRST_VIEW_WIDTHS.1)..=level(FIRST_VIEW_WIDTHS.0)
}

/// Computes what the first view needs at once, then — once the first view has been
/// served (they would slow it down on a small machine) — the coarse timeline tiles, the
/// markers, the task index and the incidents, until done or stopped.
pub fn prepare(app: &App, stop: &AtomicBool) {
    prepare_first_view(app, stop);
    let prepared = Instant::now();
    while !app.activity.quiet(prepared) {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    warm_up(app, stop);
    for (shown, file) in app.traces.iter().zip(&app.files) {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        shown.prepare(|| markers::read(file));
    }
    app.prepared.store(true, Ordering::Relaxed);
}

/// An answer.
enum Reply {
    /// A JSON document (see `documents::page`).
    Json(Vec<u8>),
    /// Still being computed: 202 with a JSON body.
    Pending(Vec<u8>),
    Bytes {
        content_type: &'static str,
        body: Arc<Vec<u8>>,
        attachment: Option<String>,
    },
}

/// Why a request gets no answer.
enum Refusal {
    Bad(BadRequest),
    NotFound,
    Method,
    /// The Host header names another machine (a DNS-rebinding page): refused.
    Host,
    Failed(String),
    /// The traces could not be loaded (the server is stopping).
    Unavailable,
}

impl From<BadRequest> for Refusal {
    fn from(error: BadRequest) -> Refusal {
        Refusal::Bad(error)
    }
}

/// Serves requests until `stop` is set; returns once every connection has ended.
pub fn serve(listener: &TcpListener, slot: &Slot, stop: &AtomicBool) {
    http::serve(listener, &|request| answer(slot, request), stop);
}

fn answer(slot: &Slot, request: &Request) -> Response {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| route_when_ready(slot, request)))
        .unwrap_or_else(|_| Err(Refusal::Failed("internal error".into())));
    match outcome {
        Ok(Reply::Json(body)) => response(200, "application/json", Arc::new(body)),
        Ok(Reply::Pending(body)) => response(202, "application/json", Arc::new(body)),
        Ok(Reply::Bytes { content_type, body, attachment }) => {
            let mut response = response(200, content_type, body);
            if let Some(name) = attachment {
                response.headers.push(("Content-Disposition", format!("attachment; filename=\"{name}\"")));
            }
            response
        }
        Err(refusal) => {
            let (status, message) = match refusal {
                Refusal::Bad(error) => (400, error.0),
                Refusal::NotFound => (404, "not found".to_string()),
                Refusal::Method => (405, "only GET is served".to_string()),
                Refusal::Host => (403, "this server only answers requests for localhost".to_string()),
                Refusal::Failed(message) => (500, message),
                Refusal::Unavailable => (503, "the traces could not be loaded".to_string()),
            };
            response(status, "application/json", Arc::new(json(&ErrorMessage { error: message })))
        }
    }
}

fn response(status: u16, content_type: &str, body: Arc<Vec<u8>>) -> Response {
    let headers = vec![
        ("Content-Type", content_type.to_string()),
        ("Cache-Control", "no-store".to_string()),
        ("X-Content-Type-Options", "nosniff".to_string()),
        (
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'"
                .to_string(),
        ),
    ];
    Response { status, headers, body }
}

/// Answers a request; while the models are being built, the page (without its data)
/// and its files at once, anything else once the app is there.
fn route_when_ready(slot: &Slot, request: &Request) -> Result<Reply, Refusal> {
    if request.method != "GET" {
        return Err(Refusal::Method);
    }
    if !local_host(request) {
        return Err(Refusal::Host);
    }
    let query = Query::parse(&request.target)?;
    if let Some(app) = slot.app() {
        return route(app, &query);
    }
    match query.path.as_str() {
        // The page without its data (it asks `/api/meta`), and its files.
        path @ ("/" | "/index.html") => asset(path),
        path if path.starts_with("/web/") => asset(path),
        // The page's first question: answered "not yet" now and then during a long build,
        // so that no connection waits for minutes (the page asks again).
        "/api/meta" if !slot.settled.wait_at_most(META_WAIT) => {
            Ok(Reply::Pending(json(&Pending { pending: "building the models of the traces".into() })))
        }
        _ => {
            slot.settled.wait();
            route(slot.app().ok_or(Refusal::Unavailable)?, &query)
        }
    }
}

fn route(app: &App, query: &Query) -> Result<Reply, Refusal> {
    match query.path.as_str() {
        "/" | "/index.html" => Ok(page(app)),
        "/api/meta" => Ok(Reply::Json(json(&meta(app)))),
        "/api/status" => Ok(Reply::Json(json(&ServerStatus {
            prepared: app.prepared.load(Ordering::Relaxed),
            cached_tile_bytes: app.cache.bytes(),
        }))),
        "/api/tile" => tile_reply(app, query),
        "/api/tiles" => tiles_reply(app, query),
        "/api/at" => at(app, query),
        "/api/task" => task(app, query),
        "/api/state" => state(app, query),
        "/api/queue" => queue(app, query),
        "/api/path" => path(app, query),
        "/api/stats" => range_stats(app, query),
        "/api/incidents" => incidents(app, query),
        "/api/markers" => markers(app, query),
        "/api/export" => export_reply(app, query),
        path => asset(path),
    }
}

/// One of the page's files.
fn asset(path: &str) -> Result<Reply, Refusal> {
    let (content_type, body) = page_file(path).ok_or(Refusal::NotFound)?;
    Ok(Reply::Bytes { content_type, body: Arc::new(body), attachment: None })
}

/// The page's file a request path names, with its type: `/` is `web/index.html`, every
/// other file is served under `/web/`. For work on the page,
/// `SCHEDLENS_WEB_DIR=crates/tiles/web` serves the files from disk instead (reload the
/// page, no rebuild); the list of files stays the embedded one.
fn page_file(path: &str) -> Option<(&'static str, Vec<u8>)> {
    let name = if path == "/" || path == "/index.html" { "index.html" } else { path.strip_prefix("/web/")? };
    let asset = assets::find(name)?;
    let from_disk =
        std::env::var_os("SCHEDLENS_WEB_DIR").and_then(|dir| std::fs::read(Path::new(&dir).join(asset.path)).ok());
    Some((asset.content_type, from_disk.unwrap_or_else(|| asset.bytes.to_vec())))
}

/// Whether the request's Host is this machine's loopback name (any port: an SSH tunnel
/// may forward another local port).
fn local_host(request: &Request) -> bool {
    let Some(host) = request.host.as_deref() else { return true };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    matches!(name, "127.0.0.1" | "localhost" | "::1")
}

fn shown<'a>(app: &'a App, query: &Query) -> Result<&'a Shown, BadRequest> {
    let index = query.int("trace", 0..=app.traces.len() as i64 - 1)?;
    Ok(&app.traces[index as usize])
}

/// The page, with `/api/meta`'s answer in it (a JSON script element the page reads
/// instead of asking).
fn page(app: &App) -> Reply {
    let (content_type, html) = page_file("/").expect("the page is embedded");
    let html = String::from_utf8_lossy(&html);
    // `<` only occurs inside JSON strings, where `\u003c` means the same: the element
    // cannot be closed early by a trace's name.
    let meta_json = String::from_utf8(json(&meta(app))).expect("JSON is UTF-8").replace('<', "\\u003c");
    let element = format!("<script type=\"application/json\" id=\"meta\">{meta_json}</script>\n</head>");
    let body = html.replacen("</head>", &element, 1).into_bytes();
    Reply::Bytes { content_type, body: Arc::new(body), attachment: None }
}

fn meta(app: &App) -> documents::page::Meta {
    tiles::meta(app.traces.iter().map(|shown| &shown.trace), PAGE_COLUMNS, MAX_COLUMNS, &app.initial)
}

/// A document as JSON.
fn json(document: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(document).expect("a document is JSON")
}

/// `color=pid|command|target` (with `target=PREFIX`).
fn coloring(query: &Query) -> Result<Coloring, BadRequest> {
    match query.get("color").unwrap_or("pid") {
        "pid" => Ok(Coloring::ByPid),
        "command" => Ok(Coloring::ByCommand),
        "target" => {
            let prefix = query.require("target")?;
            if prefix.is_empty() || prefix.len() > 256 {
                return Err(BadRequest::new("target: a command name prefix of 1 to 256 bytes"));
            }
            Ok(Coloring::Target(prefix.to_string()))
        }
        other => Err(BadRequest(format!("color={other}: expected pid, command or target"))),
    }
}

fn filter(query: &Query) -> Result<TaskFilter, BadRequest> {
    Ok(TaskFilter { forked_only: query.flag("forked")?, command_prefix: None, descendants_of: None })
}

fn tasks_param(shown: &Shown, query: &Query) -> Result<Vec<TaskId>, BadRequest> {
    let limit = shown.model().tasks().len() as u32;
    let tasks = query.int_list("tasks", limit)?.unwrap_or_default();
    if tasks.len() > 64 {
        return Err(BadRequest::new("tasks: at most 64"));
    }
    Ok(tasks.into_iter().map(|t| task_id(shown.model(), t)).collect())
}

/// The task at `index` of the model's task table (`index` checked against its length).
fn task_id(model: &model::Model, index: u32) -> TaskId {
    model.tasks().ids().nth(index as usize).unwrap_or(TaskId::IDLE)
}

/// A tile as asked for.
struct TileSpec {
    trace: usize,
    place: TilePlace,
    layers: Layers,
    cpus: Vec<Cpu>,
    coloring: Coloring,
    filter: TaskFilter,
    tasks: Vec<TaskId>,
}

impl TileSpec {
    fn parse(app: &App, query: &Query) -> Result<TileSpec, BadRequest> {
        let trace = query.int("trace", 0..=app.traces.len() as i64 - 1)? as usize;
        let shown = &app.traces[trace];
        let place = TilePlace {
            level: query.int("level", 0..=i64::from(MAX_LEVEL))? as u32,
            index: query.int("index", -(1 << 50)..=(1 << 50))?,
            columns: query.int("columns", 1..=i64::from(MAX_COLUMNS))? as u32,
        };
        let layers = Layers::parse(query.require("layers")?)?;
        let cpu_count = shown.model().cpus().len() as u32;
        let cpus = query.int_list("cpus", cpu_count.max(1))?.unwrap_or_else(|| (0..cpu_count).collect());
        let tasks = if layers.highlight || layers.states { tasks_param(shown, query)? } else { Vec::new() };
        if layers.states && tasks.len() != 1 {
            return Err(BadRequest::new("layers=s: the states of one task (tasks=N)"));
        }
        Ok(TileSpec {
            trace,
            place,
            layers,
            cpus: cpus.into_iter().map(Cpu).collect(),
            coloring: coloring(query)?,
            filter: filter(query)?,
            tasks,
        })
    }

    /// Everything that changes the tile's bytes.
    fn key(&self) -> String {
        let cpus: Vec<u32> = self.cpus.iter().map(|c| c.0).collect();
        let p = &self.place;
        format!(
            "{}|{}|{}|{}|{:?}|{:?}|{:?}|{}|{:?}",
            self.trace,
            p.level,
            p.index,
            p.columns,
            self.layers,
            cpus,
            self.coloring,
            self.filter.forked_only,
            self.tasks
        )
    }
}

fn tile_reply(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let spec = TileSpec::parse(app, query)?;
    let body = app.activity.tile(|| requested_tile(app, &spec))?;
    Ok(Reply::Bytes { content_type: "application/octet-stream", body, attachment: None })
}

/// Tiles asked for at most in one `/api/tiles` request.
const MAX_BATCH: usize = 64;

/// Several tiles in one answer (`list`: tile queries as `/api/tile` takes them, joined by
/// `;`), so a view's tiles cost one round trip. Each comes with its own status, so one
/// tile refused does not refuse the others:
///
/// ```text
/// "SLTB"  u32 count, then per tile: u32 status (200, or 400 with a message as the
///         body), u32 length, the tile's bytes (see `tiles`)
/// ```
fn tiles_reply(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let list: Vec<&str> = query.require("list")?.split(';').collect();
    if list.len() > MAX_BATCH {
        return Err(BadRequest(format!("list: at most {MAX_BATCH} tiles")).into());
    }
    let mut body = Vec::with_capacity(1024 * list.len());
    body.extend_from_slice(b"SLTB");
    body.extend_from_slice(&(list.len() as u32).to_le_bytes());
    let tiles: Vec<_> = app.activity.tile(|| {
        list.iter()
            .map(|tile_query| {
                Query::parse(&format!("/api/tile?{tile_query}"))
                    .and_then(|query| TileSpec::parse(app, &query))
                    .and_then(|spec| requested_tile(app, &spec))
            })
            .collect()
    });
    for tile in tiles {
        let (status, bytes) = match &tile {
            Ok(bytes) => (200u32, bytes.as_slice()),
            Err(error) => (400, error.0.as_bytes()),
        };
        body.extend_from_slice(&status.to_le_bytes());
        body.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        body.extend_from_slice(bytes);
    }
    Ok(Reply::Bytes { content_type: "application/octet-stream", body: Arc::new(body), attachment: None })
}

/// A tile the page asked for: timeline tiles wait until the first view's are prepared.
fn requested_tile(app: &App, spec: &TileSpec) -> Result<Arc<Vec<u8>>, BadRequest> {
    if spec.layers.timeline {
        app.first_timelines.wait();
    }
    cached_tile(app, spec)
}

/// The tile from the cache, or computed and cached.
fn cached_tile(app: &App, spec: &TileSpec) -> Result<Arc<Vec<u8>>, BadRequest> {
    let shown = &app.traces[spec.trace];
    let model = shown.model();
    let window = spec.place.window(shown.origin(), model.start(), model.end())?;
    let key = spec.key();
    if let Some(body) = app.cache.get(&key) {
        return Ok(body);
    }
    let layers = spec.layers;
    let highlighted = if layers.highlight { spec.tasks.as_slice() } else { &[] };
    let runs: Vec<Arc<Vec<Run>>> = shown.runs.runs_of(model, highlighted);
    let highlight: Vec<&[Run]> = runs.iter().map(|r| r.as_slice()).collect();
    let states = layers.states.then(|| shown.states.states_of(model, spec.tasks[0]));
    let pyramid = (layers.running_waiting || layers.runqueue).then(|| shown.pyramid(&spec.filter));
    let request = TileRequest {
        place: spec.place,
        window,
        columns: spec.place.columns,
        cpus: &spec.cpus,
        coloring: &spec.coloring,
        filter: &spec.filter,
        layers,
        highlight: &highlight,
        states: states.as_deref().map_or(&[], Vec::as_slice),
        pyramid,
    };
    let body = Arc::new(tile(model, &request));
    app.cache.put(key, body.clone());
    Ok(body)
}

/// Columns of the tiles the page asks for (`tileColumns` in `/api/meta`).
const PAGE_COLUMNS: u32 = 512;
/// Levels of timeline tiles computed ahead below the one that shows a trace in one tile.
const WARM_LEVELS: u32 = 7;

/// Computes the coarse timeline tiles of every trace as the page asks for them by default
/// (colours by pid, all tasks): each level costs a scan of every run in the trace, which
/// would make the first zoom steps into a large trace slow. Yields to the page's own
/// requests; stops when `stop` is set.
fn warm_up(app: &App, stop: &AtomicBool) {
    let timeline = Layers { timeline: true, ..Layers::default() };
    for (trace, shown) in app.traces.iter().enumerate() {
        let (from, to) = (shown.relative(shown.model().start()), shown.relative(shown.model().end()) + 1);
        let top =
            (0..=MAX_LEVEL).find(|&l| i128::from(PAGE_COLUMNS) << l >= i128::from(to - from)).unwrap_or(MAX_LEVEL);
        for level in (top.saturating_sub(WARM_LEVELS)..=top).rev() {
            if !whole_trace_tiles(app, trace, level, timeline, stop) {
                return;
            }
        }
    }
}

/// Computes the timeline tiles that cover a whole trace at each of `levels`, as the page
/// asks for them by default, from one placement of the trace's runs, into the cache.
fn whole_trace_timelines(app: &App, trace: usize, levels: std::ops::RangeInclusive<u32>) {
    let shown = &app.traces[trace];
    let runs: Vec<(TilePlace, u32)> = levels
        .map(|level| {
            let indices = whole_trace_indices(shown, level);
            let count = (indices.end() - indices.start() + 1) as u32;
            (TilePlace { level, index: *indices.start(), columns: PAGE_COLUMNS }, count)
        })
        .collect();
    let timeline = Layers { timeline: true, ..Layers::default() };
    let cpus = default_spec(app, trace, runs[0].0, timeline).cpus;
    let Ok(tiles) = timeline_tiles(shown.model(), shown.origin(), &runs, &cpus, &Coloring::ByPid, &shown.filter) else {
        return;
    };
    for ((first, _), tiles) in runs.iter().zip(tiles) {
        for (n, bytes) in tiles.into_iter().enumerate() {
            let place = TilePlace { index: first.index + n as i64, ..*first };
            app.cache.put(default_spec(app, trace, place, timeline).key(), Arc::new(bytes));
        }
    }
}

/// Computes (or finds cached) the tiles of `layers` that cover a whole trace at `level`,
/// as the page asks for them by default, yielding to the page's own requests; false when
/// stopped.
fn whole_trace_tiles(app: &App, trace: usize, level: u32, layers: Layers, stop: &AtomicBool) -> bool {
    for index in whole_trace_indices(&app.traces[trace], level) {
        while app.activity.in_flight.load(Ordering::Relaxed) > 0 {
            std::thread::sleep(Duration::from_millis(20));
        }
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let place = TilePlace { level, index, columns: PAGE_COLUMNS };
        let _ = cached_tile(app, &default_spec(app, trace, place, layers));
    }
    true
}

/// The indices of the page's tiles at `level` that cover a whole trace.
fn whole_trace_indices(shown: &Shown, level: u32) -> std::ops::RangeInclusive<i64> {
    let (from, to) = (shown.relative(shown.model().start()), shown.relative(shown.model().end()) + 1);
    let span = i64::from(PAGE_COLUMNS) << level;
    from.div_euclid(span)..=(to - 1).div_euclid(span)
}

/// A tile as the page asks for it by default: colours by pid, all tasks, all CPUs.
fn default_spec(app: &App, trace: usize, place: TilePlace, layers: Layers) -> TileSpec {
    let shown = &app.traces[trace];
    TileSpec {
        trace,
        place,
        layers,
        cpus: (0..shown.model().cpus().len() as u32).map(Cpu).collect(),
        coloring: Coloring::ByPid,
        filter: shown.filter.clone(),
        tasks: Vec::new(),
    }
}

fn at(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let shown = shown(app, query)?;
    let cpu = Cpu(query.int("cpu", 0..=shown.model().cpus().len() as i64 - 1)? as u32);
    let (from, to) = pixel(shown, query)?;
    Ok(Reply::Json(json(&detail::run_at(shown, cpu, from, to))))
}

/// `start`/`end` as a window of trace time (default: the whole trace).
fn range(shown: &Shown, query: &Query) -> Result<(Nanos, Nanos), BadRequest> {
    let model = shown.model();
    let start = query.get("start").map(|_| query.int("start", -MAX_TIME..=MAX_TIME)).transpose()?;
    let end = query.get("end").map(|_| query.int("end", -MAX_TIME..=MAX_TIME)).transpose()?;
    let start = start.map_or(model.start(), |s| shown.absolute(s));
    let end = end.map_or(Nanos(model.end().0 + 1), |e| shown.absolute(e));
    if end <= start {
        return Err(BadRequest::new("start must be before end"));
    }
    if end <= model.start() || start > model.end() {
        return Err(BadRequest::new("the range lies outside the trace"));
    }
    Ok((start, end))
}

fn task(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let shown = shown(app, query)?;
    let task = task_param(shown, query)?;
    let (start, end) = range(shown, query)?;
    Ok(Reply::Json(json(&detail::task(shown, task, start, end))))
}

/// The task named by `task` (an index into the model's task table, not the idle task).
fn task_param(shown: &Shown, query: &Query) -> Result<TaskId, BadRequest> {
    let model = shown.model();
    Ok(task_id(model, query.int("task", 1..=model.tasks().len() as i64 - 1)? as u32))
}

/// `t` and `span` (the pixel under the mouse) as `[from, to)` of trace time.
fn pixel(shown: &Shown, query: &Query) -> Result<(Nanos, Nanos), BadRequest> {
    let t = query.int("t", -MAX_TIME..=MAX_TIME)?;
    let span = query.int_or("span", 1..=MAX_TIME, 1)?;
    Ok((shown.absolute(t - span / 2), shown.absolute(t - span / 2 + span)))
}

fn state(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let shown = shown(app, query)?;
    let task = task_param(shown, query)?;
    let (from, to) = pixel(shown, query)?;
    Ok(Reply::Json(json(&detail::state_at(shown, task, from, to))))
}

fn queue(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let shown = shown(app, query)?;
    let cpu = Cpu(query.int("cpu", 0..=shown.model().cpus().len() as i64 - 1)? as u32);
    let (from, to) = pixel(shown, query)?;
    Ok(Reply::Json(json(&detail::queue_at(shown, cpu, from, to))))
}

/// The critical path of the traced command, or of `task` when given.
fn path(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let index = query.int("trace", 0..=app.traces.len() as i64 - 1)? as usize;
    let (shown, recorded) = (&app.traces[index], &app.recorded[index]);
    let model = shown.model();
    let of = match query.get("task") {
        Some(_) => PathOf::Task(task_param(shown, query)?),
        None => PathOf::Command,
    };
    let (start, end) = range(shown, query)?;
    let target = || -> Option<Target> {
        match of {
            PathOf::Command => WorkloadWindow::of(model, recorded.command_pid, false).critical_path_target(),
            PathOf::Task(task) => Some(Target::task(model, task)),
        }
    };
    let walked = shown.paths.path(&shown.trace, of, target, recorded.affinity.as_ref());
    let walked = walked.as_ref().as_ref().ok_or_else(|| {
        BadRequest::new("the trace names no command (no recorded command pid, no exec): follow a task for its path")
    })?;
    Ok(Reply::Json(json(&page_path(&shown.trace, walked, start, end))))
}

/// Command rows listed at most.
const STATS_ROWS: usize = 200;

fn range_stats(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let shown = shown(app, query)?;
    let model = shown.model();
    let (start, end) = range(shown, query)?;
    let window = analysis::Window::new(start, end);
    let stats = stats::compute(model, window, &filter(query)?, Grouping::Command);
    Ok(Reply::Json(json(&tiles::range_stats::range_stats(&stats, STATS_ROWS, |t| shown.relative(t)))))
}

fn incidents(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let shown = shown(app, query)?;
    Ok(match shown.incidents() {
        Some(incidents) => Reply::Json(json(incidents)),
        None => Reply::Pending(json(&NotReady { status: Working::Computing })),
    })
}

fn markers(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let shown = shown(app, query)?;
    let (start, end) = range(shown, query)?;
    let limit = query.int_or("limit", 1..=LIST_LIMIT as i64, 500)? as usize;
    let Some((all, total)) = shown.markers() else {
        return Ok(Reply::Pending(json(&NotReady { status: Working::Reading })));
    };
    Ok(Reply::Json(json(&markers_in(&shown.trace, all, *total, start, end, limit))))
}

fn export_reply(app: &App, query: &Query) -> Result<Reply, Refusal> {
    let format = match query.require("format")? {
        "pdf" => render::Format::Pdf,
        "svg" => render::Format::Svg,
        "png" => render::Format::Png,
        other => return Err(BadRequest(format!("format={other}: expected pdf, svg or png")).into()),
    };
    let start = query.int("start", -MAX_TIME..=MAX_TIME)?;
    let end = query.int("end", -MAX_TIME..=MAX_TIME)?;
    if end <= start {
        return Err(BadRequest::new("start must be before end").into());
    }
    let traces: Vec<&Shown> = app
        .traces
        .iter()
        .filter(|shown| shown.absolute(end) > shown.model().start() && shown.absolute(start) <= shown.model().end())
        .collect();
    if traces.is_empty() {
        return Err(BadRequest::new("the range lies outside every trace").into());
    }
    let request = ExportRequest {
        start,
        end,
        coloring: coloring(query)?,
        filter: filter(query)?,
        socket_order: query.flag("socket")?,
        running_waiting: query.flag("rw")?,
        runqueues: query.flag("q")?,
        width: query.int_or("width", 200..=8000, 1200)? as f32,
        format,
    };
    let body = export(&traces, &request).map_err(|e| Refusal::Failed(e.to_string()))?;
    let (content_type, extension) = match format {
        render::Format::Pdf => ("application/pdf", "pdf"),
        render::Format::Svg => ("image/svg+xml", "svg"),
        render::Format::Png => ("image/png", "png"),
    };
    let stem = traces[0].trace.name.rsplit_once('.').map_or(traces[0].trace.name.as_str(), |(stem, _)| stem);
    let name: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    Ok(Reply::Bytes { content_type, body: Arc::new(body), attachment: Some(format!("{name}-view.{extension}")) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_to_the_page_files() {
        assert!(page_file("/").unwrap().0.starts_with("text/html"));
        assert!(page_file("/web/js/main.js").unwrap().0.starts_with("text/javascript"));
        assert!(page_file("/web/../Cargo.toml").is_none());
        assert!(page_file("/js/main.js").is_none());
    }
}
