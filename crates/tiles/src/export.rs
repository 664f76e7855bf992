//! "Export": the view on screen as a PDF, SVG or PNG file, drawn by the same code as
//! `schedlens graph` and `schedlens running-waiting` (crates/figures laid out, crates/render
//! written), so the figure for a paper is the figure one was looking at.

use crate::shown::Shown;
use analysis::{TaskFilter, Window};
use figures::graph::{GraphRequest, PlotSize, graph};
use figures::running_waiting_plot::{RunningWaitingRequest, running_waiting_plot};
use figures::timeline::Coloring;
use model::Nanos;
use render::{Document, Format, PngOptions, Scene};

/// What the page shows, to draw as a figure.
#[derive(Clone, Debug)]
pub struct ExportRequest {
    /// `[start, end)` in ns from each trace's origin.
    pub start: i64,
    pub end: i64,
    pub coloring: Coloring,
    pub filter: TaskFilter,
    pub socket_order: bool,
    pub running_waiting: bool,
    pub runqueues: bool,
    /// Plot width in CSS pixels.
    pub width: f32,
    pub format: Format,
}

/// The document: per trace its timeline, then its running/waiting plot when shown; PDF
/// gets a page per trace, SVG and PNG one image with the traces one below the other.
pub fn export(traces: &[&Shown], request: &ExportRequest) -> Result<Vec<u8>, render::Error> {
    let span = Nanos(request.end.saturating_sub(request.start).max(1) as u64);
    let mut pages = Vec::with_capacity(traces.len());
    for shown in traces {
        let model = shown.model();
        let window = Window::new(shown.absolute(request.start), shown.absolute(request.end));
        let rows = match (&shown.rows_by_socket, request.socket_order) {
            (Some(rows), true) => rows.as_slice(),
            _ => shown.rows_by_number.as_slice(),
        };
        let size = PlotSize { width: request.width, height: None };
        // The markers the page shows (none while they are still being read).
        let markers = shown.markers().map_or(&[][..], |(markers, _)| markers.as_slice());
        let columns_per_px = if request.format == Format::Png { PngOptions::default().scale } else { 1.0 };
        let timeline = GraphRequest {
            title: shown.trace.name.clone(),
            window,
            origin: shown.origin(),
            span,
            rows,
            filter: &request.filter,
            coloring: &request.coloring,
            size,
            columns_per_px,
            markers,
        };
        let mut scenes = vec![graph(model, &timeline)];
        if request.running_waiting {
            let strips = if request.runqueues { rows } else { &[] };
            let plot = RunningWaitingRequest {
                title: format!("{}: running and waiting tasks", shown.trace.name),
                window,
                origin: shown.origin(),
                span,
                filter: &request.filter,
                per_cpu: strips,
                size: PlotSize { width: request.width, height: Some(160.0) },
                columns_per_px,
                markers,
            };
            scenes.push(running_waiting_plot(model, &plot).0);
        }
        pages.push(Scene::stack(scenes, 0.0));
    }
    let mut out = Vec::new();
    render::write(&Document { pages }, request.format, &PngOptions::default(), &mut out)?;
    Ok(out)
}
