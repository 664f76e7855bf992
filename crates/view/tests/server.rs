//! The viewer's server on real fixtures, over real sockets: it listens on loopback only,
//! answers every route, computes tiles exactly as `graph` does, and answers bad requests
//! (outside the trace, huge, malformed, unknown, foreign hosts, raw garbage) with 4xx
//! while it keeps serving.

use analysis::{TaskFilter, Window};
use figures::timeline::{Coloring, TimelineRequest, rows};
use model::{Cpu, Model, Nanos};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tiles::{Initial, ShownTrace};
use view::{ViewTrace, Viewer};

/// A bundled trace and its model.
fn trace_and_model(name: &str) -> (tracedat::Trace, Model) {
    let trace = tracedat::Trace::open(refcheck::fixture(name)).unwrap();
    let (model, _) = Model::build(&trace, model::Detail::FULL, &mut |_| {}).unwrap();
    (trace, model)
}

struct Running {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

fn view_traces(names: &[&str]) -> Vec<ViewTrace> {
    names
        .iter()
        .map(|name| {
            let (trace, model) = trace_and_model(name);
            let origin = model.start();
            ViewTrace {
                shown: ShownTrace { name: name.to_string(), model, topology: None, origin },
                file: inputs::Input::TraceDat(trace),
            }
        })
        .collect()
}

fn start(names: &[&str]) -> Running {
    let viewer = Viewer::bind(view_traces(names), Initial::default(), TaskFilter::default(), Some(0)).unwrap();
    run(Arc::new(viewer))
}

fn run(viewer: Arc<Viewer>) -> Running {
    let address: SocketAddr = viewer.url().trim_start_matches("http://").trim_end_matches('/').parse().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || viewer.run(flag));
    Running { address, stop, thread: Some(thread) }
}

/// Sends raw bytes; returns the status and the body.
fn raw(address: SocketAddr, request: &[u8]) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    stream.write_all(request).unwrap();
    // Nothing more to send: a request cut short ends here instead of waiting.
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.windows(4).position(|w| w == b"\r\n\r\n").map_or(Vec::new(), |at| answer[at + 4..].to_vec());
    (status, body)
}

fn get(address: SocketAddr, target: &str) -> (u16, Vec<u8>) {
    raw(address, format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").as_bytes())
}

fn json(address: SocketAddr, target: &str) -> serde_json::Value {
    let (status, body) = get(address, target);
    assert_eq!(status, 200, "{target}: {}", String::from_utf8_lossy(&body));
    serde_json::from_slice(&body).unwrap()
}

/// The viewer serves while the models are built: the page and its files at once, the
/// page without its data (it asks for it), data requests once the traces are shown —
/// or a 503 when they never will be.
#[test]
fn serves_the_page_before_the_traces_are_shown_and_data_after() {
    let viewer = Arc::new(Viewer::listen(Some(0)).unwrap());
    let server = run(viewer.clone());
    let a = server.address;
    let (status, page) = get(a, "/");
    assert_eq!(status, 200);
    assert!(!String::from_utf8_lossy(&page).contains("id=\"meta\""), "no data in the page yet");
    assert_eq!(get(a, "/web/js/main.js").0, 200);
    assert_eq!(get(a, "/web/nothing.js").0, 404);
    // Refusals that need no trace come at once.
    assert_eq!(get(a, "/api/tiles?x=%zz").0, 400);
    let (status, _) = raw(a, b"GET /api/meta HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 403);
    let waiting = std::thread::spawn(move || json(a, "/api/meta"));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!waiting.is_finished(), "a data request waits for the traces");
    viewer.show(view_traces(&["scenario-pinned-v7zstd.dat"]), Initial::default(), TaskFilter::default());
    assert_eq!(waiting.join().unwrap()["traces"][0]["cpus"], 2);
    assert!(String::from_utf8_lossy(&get(a, "/").1).contains("id=\"meta\""));

    let abandoned = Arc::new(Viewer::listen(Some(0)).unwrap());
    let server = run(abandoned.clone());
    let b = server.address;
    let waiting = std::thread::spawn(move || get(b, "/api/meta").0);
    std::thread::sleep(Duration::from_millis(100));
    abandoned.abandon();
    assert_eq!(waiting.join().unwrap(), 503);
    assert_eq!(get(b, "/api/tiles?list=x").0, 503);
}

#[test]
fn listens_on_loopback_only() {
    let server = start(&["scenario-pinned-v7zstd.dat"]);
    assert!(server.address.ip().is_loopback());
    // Another address of this machine (the one it would reach the network from) is refused.
    let outward =
        UdpSocket::bind("0.0.0.0:0").and_then(|s| s.connect("10.255.255.1:9").map(|_| s)).and_then(|s| s.local_addr());
    match outward {
        Ok(local) if !local.ip().is_loopback() && !local.ip().is_unspecified() => {
            let other = SocketAddr::new(local.ip(), server.address.port());
            assert!(TcpStream::connect_timeout(&other, Duration::from_secs(2)).is_err(), "reachable on {other}");
        }
        _ => eprintln!("no non-loopback address here; only the bound address was checked"),
    }
}

#[test]
fn serves_the_page_and_every_route() {
    let server = start(&["scenario-pinned-v7zstd.dat", "scenario-overload-v7zstd.dat"]);
    let a = server.address;
    let (status, page) = get(a, "/");
    assert_eq!(status, 200);
    let page = String::from_utf8_lossy(&page);
    assert!(page.contains("<script type=\"module\" src=\"/web/js/main.js\">"));
    assert_eq!(get(a, "/web/js/main.js").0, 200);
    let meta = json(a, "/api/meta");
    // The page holds /api/meta's answer, so it need not ask.
    let inline = page.split("<script type=\"application/json\" id=\"meta\">").nth(1).unwrap().split("</script>").next();
    assert_eq!(serde_json::from_str::<serde_json::Value>(inline.unwrap()).unwrap(), meta);
    assert_eq!(meta["traces"].as_array().unwrap().len(), 2);
    assert_eq!(meta["traces"][0]["cpus"], 2);
    let end = meta["traces"][0]["end"].as_i64().unwrap();
    let stats = json(a, &format!("/api/stats?trace=0&start=0&end={end}"));
    assert!(stats["commands"].as_array().unwrap().iter().any(|c| c["comm"] == "pinned-spin"));
    // The run under the mouse in the middle of the pinned spinners' stretch on CPU 0.
    let runs = stats["commands"].as_array().unwrap().iter().find(|c| c["comm"] == "pinned-spin").unwrap().clone();
    let middle = (runs["firstRun"].as_i64().unwrap() + runs["lastRun"].as_i64().unwrap()) / 2;
    let at = json(a, &format!("/api/at?trace=0&cpu=0&t={middle}&span=1000"));
    assert_eq!(at["found"], true, "{at}");
    assert_eq!(at["comm"], "pinned-spin");
    assert!(at["ended"].as_str().unwrap().starts_with("preempted"), "{at}");
    let task = json(a, &format!("/api/task?trace=0&task={}", at["task"]));
    assert!(task["runs"].as_u64().unwrap() > 10);
    assert_eq!(task["cpusUsed"], serde_json::json!([0]));
    for _ in 0..600 {
        let (status, body) = get(a, "/api/incidents?trace=0");
        if status == 200 {
            let incidents: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let list = incidents["incidents"].as_array().unwrap();
            assert!(
                list.iter().any(|i| i["kind"] == "work-conservation" && i["possiblyPinned"] == true),
                "{incidents}"
            );
            break;
        }
        assert_eq!(status, 202);
        std::thread::sleep(Duration::from_millis(50));
    }
    let markers = loop {
        let (status, body) = get(a, "/api/markers?trace=1");
        if status == 200 {
            break serde_json::from_slice::<serde_json::Value>(&body).unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(markers["total"], 0);
    for (format, magic) in [("png", &b"\x89PNG"[..]), ("pdf", b"%PDF"), ("svg", b"<svg")] {
        let (status, body) = get(a, &format!("/api/export?format={format}&start=0&end={end}&rw=1&q=1&color=command"));
        assert_eq!(status, 200, "{format}");
        assert!(body.starts_with(magic), "{format}");
    }
}

#[test]
fn markers_are_the_trace_marker_text() {
    let server = start(&["markers-v7zstd.dat"]);
    let markers = loop {
        let (status, body) = get(server.address, "/api/markers?trace=0");
        if status == 200 {
            break serde_json::from_slice::<serde_json::Value>(&body).unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let texts: Vec<&str> = markers["markers"].as_array().unwrap().iter().map(|m| m["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["hello", "two\nlines", "no newline", "a\n\nb\n", "z\nx-1 [000] 1.5: fake: y"]);
}

/// Decodes a tile's timeline layer: per row, (x0, x1, rgb) spans.
fn timeline_spans(body: &[u8]) -> Vec<Vec<(u32, u32, [u8; 3])>> {
    let u32_at = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().unwrap());
    let u16_at = |at: usize| u32::from(u16::from_le_bytes(body[at..at + 2].try_into().unwrap()));
    assert_eq!(&body[..4], b"SLT1");
    let rows = u32_at(8) as usize;
    let mut at = 16;
    let mut out = Vec::new();
    for _ in 0..rows {
        let n = u32_at(at) as usize;
        at += 4;
        let spans = (0..n).map(|i| {
            let s = at + i * 8;
            (u16_at(s), u16_at(s + 2), [body[s + 4], body[s + 5], body[s + 6]])
        });
        out.push(spans.collect());
        at += n * 8;
    }
    out
}

#[test]
fn tiles_are_the_columns_graph_draws() {
    let server = start(&["scenario-barrier-v7zstd.dat"]);
    let (_, model) = trace_and_model("scenario-barrier-v7zstd.dat");
    for (level, index) in [(20u32, 0i64), (12, 300), (5, 1_000_000)] {
        let target = format!("/api/tile?trace=0&level={level}&index={index}&columns=512&layers=t&color=command");
        let (status, body) = get(server.address, &target);
        if status == 400 {
            continue; // past the end at this level
        }
        assert_eq!(status, 200, "{target}");
        let start = model.start().0 + (index as u64) * (512u64 << level);
        let window = Window::new(Nanos(start), Nanos(start + (512u64 << level)));
        let cpus = [Cpu(0), Cpu(1)];
        let request = TimelineRequest {
            window,
            columns: 512,
            rows: &cpus,
            filter: &TaskFilter::default(),
            coloring: &Coloring::ByCommand,
        };
        let expected: Vec<Vec<(u32, u32, [u8; 3])>> = rows(&model, &request)
            .into_iter()
            .map(|row| row.spans.iter().map(|s| (s.x0, s.x1, [s.color.0, s.color.1, s.color.2])).collect())
            .collect();
        assert_eq!(timeline_spans(&body), expected, "{target}");
        assert!(expected.iter().any(|row| !row.is_empty()), "{target} shows something");
    }
}

/// The parts of an `/api/tiles` answer: (status, bytes) per tile.
fn batch_parts(body: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let u32_at = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().unwrap());
    assert_eq!(&body[..4], b"SLTB");
    let mut at = 8;
    let parts = (0..u32_at(4))
        .map(|_| {
            let (status, length) = (u32_at(at), u32_at(at + 4) as usize);
            at += 8 + length;
            (status, body[at - length..at].to_vec())
        })
        .collect();
    assert_eq!(at, body.len());
    parts
}

#[test]
fn a_batch_of_tiles_is_each_tile_as_asked_alone() {
    let server = start(&["scenario-barrier-v7zstd.dat"]);
    let a = server.address;
    let tiles = [
        "trace=0&level=20&index=0&columns=512&layers=t&color=command",
        "trace=0&level=18&index=1&columns=256&layers=rq",
        "trace=0&level=20&index=99999&columns=512&layers=t", // outside the trace
        "trace=0&level=16&index=2&columns=512&layers=trqh&tasks=1",
    ];
    let list: Vec<String> = tiles.iter().map(|t| t.replace('&', "%26").replace('=', "%3D")).collect();
    let (status, body) = get(a, &format!("/api/tiles?list={}", list.join(";")));
    assert_eq!(status, 200);
    let parts = batch_parts(&body);
    assert_eq!(parts.len(), tiles.len());
    for (tile, (status, bytes)) in tiles.iter().zip(&parts) {
        let (alone_status, alone) = get(a, &format!("/api/tile?{tile}"));
        assert_eq!(u16::try_from(*status).unwrap(), alone_status, "{tile}");
        if alone_status == 200 {
            assert_eq!(bytes, &alone, "{tile}");
        }
    }
    assert_eq!(parts[2].0, 400, "one tile refused, the others answered");
    let too_many = vec![tiles[0].replace('&', "%26").replace('=', "%3D"); 65].join(";");
    assert_eq!(get(a, &format!("/api/tiles?list={too_many}")).0, 400);
    assert_eq!(get(a, "/api/tiles").0, 400);
}

#[test]
fn bad_requests_get_4xx_and_the_server_keeps_serving() {
    let server = start(&["scenario-pinned-v7zstd.dat"]);
    let a = server.address;
    let bad = [
        ("/api/tile?trace=0&level=20&index=99999&columns=512&layers=t", 400), // outside the trace
        ("/api/tile?trace=0&level=20&index=-99999&columns=512&layers=t", 400),
        ("/api/tile?trace=0&level=44&index=1125899906842624&columns=4096&layers=t", 400),
        ("/api/tile?trace=0&level=20&index=0&columns=100000&layers=t", 400), // huge width
        ("/api/tile?trace=0&level=99&index=0&columns=512&layers=t", 400),
        ("/api/tile?trace=0&level=20&index=0&columns=512&layers=zz", 400),
        ("/api/tile?trace=0&level=20&index=0&columns=512", 400),
        ("/api/tile?trace=7&level=20&index=0&columns=512&layers=t", 400),
        ("/api/tile?trace=0&level=20&index=0&columns=512&layers=t&cpus=0-99", 400),
        ("/api/tile?trace=0&level=20&index=0&columns=512&layers=t&color=plaid", 400),
        ("/api/tile?trace=0&level=20&index=0&columns=512&layers=t&color=target", 400),
        ("/api/tile?trace=0&level=20&index=0&columns=512&layers=h&tasks=0-99999", 400),
        ("/api/tile?trace=0&level=x&index=0&columns=512&layers=t", 400),
        ("/api/tile?trace=0&trace=0", 400),
        ("/api/at?trace=0&cpu=9&t=0", 400),
        ("/api/at?trace=0&cpu=0&t=99999999999999999999", 400),
        ("/api/task?trace=0&task=0", 400),
        ("/api/task?trace=0&task=999999", 400),
        ("/api/tile?trace=0&level=20&index=0&columns=512&layers=s", 400), // states of no task
        ("/api/tile?trace=0&level=20&index=0&columns=512&layers=s&tasks=1,2", 400),
        ("/api/state?trace=0&task=0&t=0", 400),
        ("/api/state?trace=0&task=1", 400),
        ("/api/state?trace=0&task=1&t=0&span=0", 400),
        ("/api/queue?trace=0&cpu=2&t=0", 400),
        ("/api/queue?trace=0&cpu=0", 400),
        ("/api/path?trace=3", 400),
        ("/api/path?trace=0&task=999999", 400),
        ("/api/path?trace=0&start=900000000000000&end=900000000000001", 400),
        ("/api/stats?trace=0&start=5&end=5", 400),
        ("/api/stats?trace=0&start=900000000000000&end=900000000000001", 400),
        ("/api/markers?trace=0&limit=0", 400),
        ("/api/export?format=gif&start=0&end=10", 400),
        ("/api/export?format=png&start=0&end=10&width=99999", 400),
        ("/api/export?format=png&start=900000000000000&end=900000000000001", 400),
        ("/api/meta?x=%zz", 400),
        ("/api/meta?x=%ff", 400),
        ("/nowhere", 404),
        ("/web/../../Cargo.toml", 404),
        ("/api/", 404),
    ];
    for (target, expected) in bad {
        let (status, body) = get(a, target);
        assert_eq!(status, expected, "{target}: {}", String::from_utf8_lossy(&body));
        let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert!(message["error"].is_string(), "{target}");
    }
    let long = format!("/api/meta?x={}", "a".repeat(40_000));
    assert!((400..500).contains(&get(a, &long).0));
    let (status, _) =
        raw(a, b"POST /api/meta HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 405);
    let (status, _) = raw(a, b"GET /api/meta HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 403, "a page on another host name (DNS rebinding) gets nothing");
    for garbage in [&b"\x00\x01\x02garbage\r\n\r\n"[..], b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b""] {
        let (status, _) = raw(a, garbage);
        assert!(status == 0 || (400..600).contains(&status), "{garbage:?} gave {status}");
    }
    // Still serving.
    let meta = json(a, "/api/meta");
    assert_eq!(meta["traces"][0]["cpus"], 2);
    let (status, body) = get(a, "/api/tile?trace=0&level=20&index=0&columns=512&layers=trqh&tasks=1");
    assert_eq!(status, 200);
    assert_eq!(&body[..4], b"SLT1");
}

/// Decodes a tile's states layer (a tile asked for with `layers=s` alone).
fn state_codes(body: &[u8]) -> Vec<u8> {
    assert_eq!(&body[..4], b"SLT1");
    let columns = u32::from_le_bytes(body[4..8].try_into().unwrap()) as usize;
    assert_eq!(u32::from_le_bytes(body[12..16].try_into().unwrap()), 16, "the states layer alone");
    assert_eq!(body.len(), 16 + columns);
    body[16..].to_vec()
}

/// A followed task's state track, its state under the mouse with who held the CPU it
/// waited for, and the waits in a runqueue: as `analysis` computes them, for any pixel.
#[test]
fn a_followed_tasks_states_and_who_held_its_cpu() {
    let server = start(&["hackbench-v7zstd.dat"]);
    let a = server.address;
    let (_, model) = trace_and_model("hackbench-v7zstd.dat");
    let origin = model.start();
    // A hackbench task that waited behind another one.
    let window = Window::new(model.start(), Nanos(model.end().0 + 1));
    let task = model
        .tasks()
        .ids()
        .find(|&t| {
            model.comm_at(t, model.end()) == "hackbench"
                && !analysis::latency::antagonists(&model, window, &[t]).is_empty()
        })
        .unwrap();
    let life = tiles::states::life(&model, task);
    let stretches = analysis::states::task_states(&model, task, life);
    // Its stretches sum, state by state, to what `stats --states` counts over its life.
    let totals = analysis::states::compute(&model, life, &TaskFilter::default());
    let (_, _, expected) = totals.by_task.iter().find(|(t, ..)| *t == task).unwrap();
    let sum = |state| stretches.iter().filter(|s| s.state == state).map(|s| s.end.0 - s.start.0).sum::<u64>();
    assert_eq!(sum(analysis::states::ThreadState::Running), expected.running_ns);
    assert_eq!(sum(analysis::states::ThreadState::Sleeping), expected.sleeping_ns);
    assert_eq!(sum(analysis::states::ThreadState::RunnableWakeup), expected.runnable_wakeup_ns);
    assert_eq!(stretches.iter().map(|s| s.end.0 - s.start.0).sum::<u64>(), expected.total_ns());
    // Tiles of its states at three levels: each column the state covering most of it.
    for level in [22u32, 14, 8] {
        let index = (life.start.0 - origin.0 + 1000) as i64 / (512i64 << level);
        let target =
            format!("/api/tile?trace=0&level={level}&index={index}&columns=512&layers=s&tasks={}", task.index());
        let (status, body) = get(a, &target);
        assert_eq!(status, 200, "{target}: {}", String::from_utf8_lossy(&body));
        let start = origin.0 + index as u64 * (512u64 << level);
        let tile_window = Window::new(Nanos(start), Nanos(start + (512u64 << level)));
        assert_eq!(state_codes(&body), tiles::states::state_columns(&stretches, tile_window, 512), "{target}");
    }
    // Under the mouse: a runnable stretch, with who held the CPU during that wait.
    let runnable = stretches
        .iter()
        .find(|s| s.wait.is_some_and(|w| !analysis::latency::wait_antagonists(&model, w).antagonists.is_empty()));
    let runnable = runnable.unwrap();
    let middle = (runnable.start.0 + runnable.end.0) / 2 - origin.0;
    let state = json(a, &format!("/api/state?trace=0&task={}&t={middle}&span=1", task.index()));
    assert_eq!(state["found"], true);
    assert!(state["state"].as_str().unwrap().starts_with("runnable-"), "{state}");
    assert_eq!(state["start"].as_u64().unwrap(), runnable.start.0 - origin.0);
    let holders = analysis::latency::wait_antagonists(&model, runnable.wait.unwrap());
    let held = &state["wait"]["heldBy"];
    assert_eq!(held[0]["held"].as_u64().unwrap(), holders.antagonists[0].held_ns, "{state}");
    assert_eq!(state["wait"]["holderCount"].as_u64().unwrap() as usize, holders.antagonists.len());
    assert_eq!(state["wait"]["cpus"][0].as_u64().unwrap(), u64::from(holders.cpus[0].0));
    // The runqueue strip at that moment on that CPU lists the wait, with the same holders.
    let cpu = holders.cpus[0].0;
    let queue = json(a, &format!("/api/queue?trace=0&cpu={cpu}&t={middle}&span=1"));
    let listed = queue["waiting"].as_array().unwrap();
    let ours = listed.iter().find(|w| w["task"]["task"].as_u64() == Some(task.index() as u64)).unwrap();
    assert_eq!(ours["wait"], state["wait"]);
    // Before the task's life: nothing.
    if life.start > model.start() {
        let before = life.start.0 - origin.0 - 1;
        let nothing = json(a, &format!("/api/state?trace=0&task={}&t={before}&span=1", task.index()));
        assert_eq!(nothing, serde_json::json!({"found": false}));
    }
    // The same request, the same bytes.
    let again = get(a, &format!("/api/state?trace=0&task={}&t={middle}&span=1", task.index())).1;
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&again).unwrap(), state);
}

/// The critical path on the timeline: the command's (the recorded command of a
/// `schedlens record` trace) and a task's, as `critical-path` walks them; its hops within
/// the range asked for, each from the waker's CPU to where the woken task ran.
#[test]
fn the_critical_path_of_the_command_and_of_a_task() {
    let server = start(&["token-ring-record.dat", "scenario-pinned-v7zstd.dat"]);
    let a = server.address;
    let path = json(a, "/api/path?trace=0");
    assert_eq!(path["target"], "command");
    let sentence = path["sentence"].as_str().unwrap();
    assert!(sentence.starts_with("of the ") && sentence.contains("the scheduler cost at most"), "{sentence}");
    let wall = path["end"].as_i64().unwrap() - path["start"].as_i64().unwrap();
    let parts: u64 = path["breakdown"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(parts as i64, wall, "the parts sum to the wall time");
    let hops = path["hops"].as_array().unwrap();
    assert_eq!(path["hopCount"].as_u64().unwrap() as usize, hops.len(), "the whole range: every hop");
    assert!(hops.len() > 100, "the ring's hops: {}", hops.len());
    let arrows = hops.iter().filter(|h| h["fromCpu"].is_u64() && h["ran"].is_object()).count();
    assert!(arrows * 10 >= hops.len() * 9, "{arrows} of {} hops have both ends", hops.len());
    for pair in hops.windows(2) {
        assert!(pair[0]["start"].as_i64() <= pair[1]["start"].as_i64(), "in time order");
        assert_eq!(pair[1]["wokenBy"], pair[0]["task"]["task"], "each hop woken by the previous hop's task");
    }
    // A range: only the hops overlapping it.
    let (from, to) = (hops[10]["start"].as_i64().unwrap(), hops[20]["start"].as_i64().unwrap());
    let part = json(a, &format!("/api/path?trace=0&start={from}&end={to}"));
    assert_eq!(part["sentence"], path["sentence"]);
    let inside = part["hops"].as_array().unwrap();
    assert!(inside.iter().all(|h| h["end"].as_i64().unwrap() > from && h["start"].as_i64().unwrap() < to));
    assert_eq!(inside.len(), part["hopsInRange"].as_u64().unwrap() as usize);
    assert!((10..=12).contains(&inside.len()), "{}", inside.len());
    // A task's path, as `critical-path --task`.
    let task = hops[5]["task"]["task"].as_u64().unwrap();
    let of_task = json(a, &format!("/api/path?trace=0&task={task}"));
    assert_eq!(of_task["target"], "task");
    assert_eq!(of_task["task"]["task"].as_u64(), Some(task));
    // The same request, the same bytes.
    assert_eq!(get(a, "/api/path?trace=0").1, get(a, "/api/path?trace=0").1);
    // A trace that names no command (no exec, nothing recorded): refused, still serving.
    let (status, body) = get(a, "/api/path?trace=1");
    let said = String::from_utf8_lossy(&body);
    assert!(status == 200 || (status == 400 && said.contains("names no command")), "{status} {said}");
}

/// On a trace that lost events, every task's state track, its states under the mouse and
/// its critical path are answered (unknown where the trace does not say), never a failure.
#[test]
fn lost_events_make_states_unknown_and_nothing_fails() {
    let server = start(&["lost-events-v7zstd.dat"]);
    let a = server.address;
    let (_, model) = trace_and_model("lost-events-v7zstd.dat");
    let span = model.end().0 - model.start().0;
    let level = (span / 512).max(1).ilog2() + 1;
    let mut unknown = 0;
    for task in model.tasks().ids().skip(1) {
        let tile = format!("/api/tile?trace=0&level={level}&index=0&columns=512&layers=s&tasks={}", task.index());
        let (status, body) = get(a, &tile);
        assert_eq!(status, 200, "{tile}");
        unknown += state_codes(&body).iter().filter(|&&code| code == 7).count();
        for t in [0, span / 3, span / 2, span - 1] {
            let (status, _) = get(a, &format!("/api/state?trace=0&task={}&t={t}&span=1000", task.index()));
            assert_eq!(status, 200);
        }
    }
    assert!(unknown > 0, "lost events leave some state unknown");
    let path = json(a, "/api/path?trace=0");
    assert!(path["breakdown"]["unknown_ns"].as_u64().unwrap() > 0, "{path}");
    for cpu in [0, 1] {
        assert_eq!(get(a, &format!("/api/queue?trace=0&cpu={cpu}&t={}&span=1000000", span / 2)).0, 200);
    }
}
