//! `schedlens view`: serves the interactive viewer on 127.0.0.1 until Ctrl-C, printing
//! its address and opening a browser when there is a display, while it builds each
//! trace's model (the page loads meanwhile and shows the traces once they are built).

use crate::Outcome;
use crate::common::WindowArgs;
use crate::figure::load_runs;
use crate::topology::TopologyArgs;
use anyhow::{Context, Result};
use model::Detail;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tiles::{Initial, ShownTrace};
use view::{ViewTrace, Viewer};

#[derive(clap::Args)]
pub struct Args {
    /// The trace.dat files, shown one below the other on one time scale.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// Port on 127.0.0.1 (default: 8950, or the next free one).
    #[arg(long)]
    port: Option<u16>,
    /// Do not open a browser.
    #[arg(long)]
    no_open: bool,
    #[command(flatten)]
    window: WindowArgs,
    #[command(flatten)]
    topology: TopologyArgs,
}

pub fn run(args: Args) -> Result<Outcome> {
    // A trace that cannot be opened is said before anything is served.
    for path in &args.traces {
        crate::common::open_trace(path)?;
    }
    // Serve first: the browser loads the page while the models are built.
    let viewer = Arc::new(Viewer::listen(args.port).context("schedlens view")?);
    let url = viewer.url().to_string();
    say(&format!("schedlens view: serving {url} (Ctrl-C to stop)"));
    // A signal (Ctrl-C, SIGTERM, SIGHUP) ends the process at once while the models are
    // built, and stops the server cleanly after.
    let interrupts = restore::Interrupts::start().context("cannot catch Ctrl-C")?;
    let stop = interrupts.stop_flag();
    let building = interrupts.exit_at_once();
    let server = {
        let (viewer, stop) = (viewer.clone(), stop.clone());
        std::thread::Builder::new().name("view-server".into()).spawn(move || viewer.run(stop))?
    };
    if !args.no_open {
        open_browser(&url);
    }
    let outcome = match load(&args) {
        Ok((traces, initial, outcome)) => {
            viewer.show(traces, initial, args.window.filter());
            drop(building);
            say("schedlens view: ready");
            outcome
        }
        Err(error) => {
            viewer.abandon();
            stop.store(true, Ordering::Relaxed);
            let _ = server.join();
            return Err(error);
        }
    };
    let _ = server.join();
    eprintln!("schedlens view: stopped");
    Ok(outcome)
}

/// A line on stdout for whoever started the viewer (a script waits for these); one that
/// stopped reading (a closed pipe) does not stop the viewer.
fn say(line: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}").and_then(|()| stdout.flush());
}

/// Builds the traces' models as the viewer shows them, and its initial state.
fn load(args: &Args) -> Result<(Vec<ViewTrace>, Initial, Outcome)> {
    let (runs, outcome) = load_runs(&args.traces, &args.window, Detail::FULL)?;
    let mut traces = Vec::with_capacity(runs.len());
    let mut window = None;
    for run in runs {
        let model = &run.loaded.model;
        let topology = args.topology.resolve(&run.loaded.trace, model.cpus().len(), &run.path)?;
        if args.window.min.is_some() || args.window.max.is_some() {
            let rel = |t: model::Nanos| t.0 as i64 - run.origin.0 as i64;
            window = Some((rel(run.window.start), rel(run.window.end)));
        }
        let name = run.path.file_name().map_or_else(|| run.path.display().to_string(), |n| n.to_string_lossy().into());
        let shown = ShownTrace { name, model: run.loaded.model, topology, origin: run.origin };
        traces.push(ViewTrace { shown, file: run.loaded.trace });
    }
    let initial = Initial { window, forked: args.window.forked, socket_order: args.topology.socket_order };
    Ok((traces, initial, outcome))
}

/// Opens `url` with `xdg-open` when a graphical session is there; says what to do otherwise.
fn open_browser(url: &str) {
    let display = ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()));
    if !display {
        eprintln!(
            "schedlens view: no display here; open {url} in a browser (from another machine: ssh -L PORT:localhost:PORT this-host)"
        );
        return;
    }
    let spawned = std::process::Command::new("xdg-open")
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if spawned.is_err() {
        eprintln!("schedlens view: could not start xdg-open; open {url} in a browser");
    }
}
