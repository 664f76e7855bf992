// The report page: starts the viewer (main.js's App, unchanged) on the embedded data,
// says when the view is finer than the report holds, links the incident list to the
// timeline, sorts the statistics tables, and draws the migration heat maps.

import { App } from './main.js';
import { EmbeddedSource, fromBase64 } from './embedded-source.js';
import { levelFor, tileIndices } from './timescale.js';
import { duration, escapeHtml, exactTime } from './format.js';

export async function start() {
  const root = document.getElementById('viewer');
  // A run series recorded without traces has tables only.
  if (!root) return finish(null);
  const element = document.getElementById('report-data');
  const doc = element.dataset.doc.split(',').map(Number);
  const source = await new EmbeddedSource(fromBase64(element.textContent), doc).load();
  element.textContent = '';
  const app = new App(source, root);
  window.schedlens = app;
  try {
    await app.start();
  } catch (error) {
    root.querySelector('#panels').textContent = `Cannot start: ${error.message}`;
    throw error;
  }
  adaptTooltip(app);
  watchResolution(app, source);
  linkIncidents(app);
  for (const canvas of document.querySelectorAll('canvas.migration-map')) heatMap(canvas, source.doc.traces[Number(canvas.dataset.trace)].migrations);
  finish(app);
}

/** Sorts tables, and says the page is ready. */
function finish(app) {
  for (const table of document.querySelectorAll('table.sortable')) sortable(table);
  if (!app) window.schedlens = { complete: true, frame: null, views: [] };
  document.body.dataset.ready = '1';
}

/** Hovered runs come from the tiles: say what is known, and that the rest is not here. */
function adaptTooltip(app) {
  const tooltip = app.tooltip;
  const showRun = tooltip.showRun.bind(tooltip);
  tooltip.showRun = (view, run, event, state) => {
    if (!run.approximate) return showRun(view, run, event, state);
    if (run.unknown) return tooltip.show(`<b>CPU ${run.cpu}</b>: state unknown (lost events)<br><span class="muted">${exactTime(app.overlay.cursor ?? run.start)}</span>`, event);
    const others = run.others.length ? `<tr><th>or</th><td>${run.others.map(([pid, comm]) => `${escapeHtml(comm)}:${pid}`).join(', ')} (same colour)</td></tr>` : '';
    tooltip.show(
      `<div class="tip-head"><span class="swatch" style="background:${run.pidColor}"></span><b>${escapeHtml(run.comm)}</b>:${run.pid}<span class="muted"> · CPU ${run.cpu}</span></div>
       <table>
         <tr><th>at</th><td>${exactTime(app.overlay.cursor ?? run.start)}</td></tr>
         <tr><th>shown</th><td>${exactTime(run.start)} for ${duration(run.end - run.start)} (columns of ${duration(run.columnNs)})</td></tr>
         ${others}
       </table><div class="muted hint">runs, waits and wakeups: open the trace with schedlens view</div>`,
      event,
    );
  };
}

/** Shows, above the timeline, when the view is finer than the embedded tiles. */
function watchResolution(app, source) {
  const note = document.getElementById('resolution');
  const update = () => {
    const scale = app.scale();
    const dpr = window.devicePixelRatio || 1;
    const missing = app.views.some((view) => {
      const level = levelFor(scale.nsPerPx / dpr, app.meta.maxLevel);
      const indices = tileIndices(scale.start, scale.end, level, app.meta.tileColumns, view.meta.start, view.meta.end);
      return indices.some((index) => !source.has(view.index, 't', level, index));
    });
    note.textContent = missing ? `Zoomed in beyond what this report holds: the timeline is drawn from coarser tiles. For every event, open the trace with schedlens view.` : '';
    note.className = missing ? 'beyond' : '';
    app.root.dataset.beyond = missing ? '1' : '0';
  };
  const viewChanged = app.viewChanged.bind(app);
  app.viewChanged = () => {
    viewChanged();
    update();
  };
  update();
}

/** The incident list's links select the incident on the timeline. */
function linkIncidents(app) {
  for (const link of document.querySelectorAll('a.show-incident')) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      const trace = Number(link.dataset.trace);
      const rank = Number(link.dataset.rank);
      const list = app.incidents[trace];
      const incident = list && list.incidents ? list.incidents.find((i) => i.rank === rank) : null;
      if (!incident) return;
      app.panels.show('incidents');
      app.selectIncident(trace, incident);
      document.getElementById('timeline').scrollIntoView({ block: 'start' });
    });
  }
}

/** Click a column's title to sort by it (numbers largest first, text A to Z; again to reverse). */
export function sortable(table) {
  const headers = [...table.tHead.rows[0].cells];
  headers.forEach((th, column) => {
    th.addEventListener('click', () => {
      const numeric = th.dataset.sort === 'num';
      const descending = th.dataset.order ? th.dataset.order !== 'desc' : numeric;
      for (const other of headers) delete other.dataset.order;
      th.dataset.order = descending ? 'desc' : 'asc';
      const body = table.tBodies[0];
      const key = (row) => {
        const cell = row.cells[column];
        if (!numeric) return cell.textContent;
        const value = Number(cell.dataset.v);
        return Number.isNaN(value) ? -Infinity : value;
      };
      const rows = [...body.rows].map((row, i) => ({ row, key: key(row), i }));
      rows.sort((a, b) => {
        const order = numeric ? a.key - b.key : a.key.localeCompare(b.key);
        return (descending ? -order : order) || a.i - b.i;
      });
      for (const { row } of rows) body.appendChild(row);
    });
  });
}

/** The migration matrix ({cpus, pairs: [[from, to, count]]}) as a heat map: row = from, column = to; hover for the count. */
export function heatMap(canvas, { cpus: n, pairs }) {
  if (!n) return;
  const cell = Math.max(2, Math.min(24, Math.floor(640 / n)));
  const size = n * cell;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(size * dpr);
  canvas.height = Math.round(size * dpr);
  canvas.style.width = `${size}px`;
  canvas.style.height = `${size}px`;
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const counts = new Map(pairs.map(([from, to, count]) => [from * n + to, count]));
  const most = pairs.reduce((m, p) => Math.max(m, p[2]), 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, size, size);
  for (const [from, to, v] of pairs) {
    if (!v || from >= n || to >= n) continue;
    const share = Math.log1p(v) / Math.log1p(most);
    ctx.fillStyle = `hsl(12, 85%, ${Math.round(95 - share * 70)}%)`;
    ctx.fillRect(to * cell, from * cell, cell, cell);
  }
  const label = document.createElement('div');
  label.className = 'heat-label muted';
  label.textContent = `from CPU (rows) to CPU (columns); most: ${most}`;
  canvas.after(label);
  canvas.addEventListener('pointermove', (event) => {
    const rect = canvas.getBoundingClientRect();
    const to = Math.floor((event.clientX - rect.left) / cell);
    const from = Math.floor((event.clientY - rect.top) / cell);
    if (from < 0 || to < 0 || from >= n || to >= n) return;
    label.textContent = `CPU ${from} → CPU ${to}: ${counts.get(from * n + to) || 0} migrations`;
  });
}
