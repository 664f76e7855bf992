//# allFunctionsCalledOnLoad
// The viewer page: the shared time axis, one panel per trace, the side panel, and the
// interaction — wheel and drag-select zoom, drag and keys to pan, hover, click to
// follow a task (its state track), the critical path, incidents — with the view's state
// mirrored in the URL. Data comes
// from a data source (source.js); tiles through the tile store (tile-store.js).

import { ServerSource } from './source.js';
import { TileStore } from './tile-store.js';
import { TimeScale, clampWindow, pan, ticks, zoom } from './timescale.js';
import { DEFAULTS, formatState, parseState } from './state.js';
import { GUTTER_LEFT, GUTTER_RIGHT, TraceView, fitGutter } from './view.js';
import { duration, exactTime, seconds } from './format.js';
import { Panels, Tooltip } from './panels.js';

const AXIS_HEIGHT = 30;

export class App {
  constructor(source, root) {
    this.source = source;
    this.root = root;
    this.views = [];
    this.incidents = []; // per trace: {status, incidents, total}
    this.overlay = { cursor: null, selection: null, hover: null };
    this.frame = 0;
    this.overlayFrame = 0;
    this.stats = { frames: 0, lastDrawMs: 0, drawMs: [] };
    this.store = new TileStore((key, spec) => this.source.tile(spec.trace, spec), {
      maxBytes: 160 << 20,
      maxInFlight: 16,
      onLoad: (key) => {
        this.firstTilesCame();
        // A prefetched tile changes nothing on screen once the view's own tiles are all
        // there; until then any tile may stand in for a missing one.
        if (this.currentKeys.has(key) || !this.currentDone()) this.requestRender();
      },
    });
    this.current = [];
    this.currentKeys = new Set();
  }

  async start() {
    // A page opened while the server still builds the models waits for their description.
    const loading = this.source.known === null && this.root.querySelector('#views');
    if (loading) loading.dataset.loading = 'Building the models of the traces…';
    this.meta = await this.source.meta();
    if (loading) delete loading.dataset.loading;
    const initial = this.meta.initial || {};
    const defaults = { ...DEFAULTS, forked: !!initial.forked, socket: !!initial.socketOrder };
    this.defaults = defaults;
    this.state = parseState(location.hash, defaults);
    this.bounds = [Math.min(...this.meta.traces.map((t) => t.start)), Math.max(...this.meta.traces.map((t) => t.end))];
    if (!this.state.window) this.state.window = initial.window ? clampWindow(initial.window, this.bounds) : [...this.bounds];
    this.state.window = clampWindow(this.state.window, this.bounds);
    this.buildPage();
    this.panels = new Panels(this, this.root.querySelector('#side'));
    this.tooltip = new Tooltip(this.root.querySelector('#tooltip'));
    fitGutter(this.meta.traces);
    this.views = this.meta.traces.map((trace, i) => new TraceView(this, i, trace, this.root.querySelector('#panels')));
    // A link opens on what it is about: the selection's statistics, the critical path, or
    // the followed task.
    if (this.state.selection) this.panels.show('selection');
    else if (this.state.path) this.panels.show('path');
    else if (this.state.follow) this.panels.show('task');
    this.bindInput();
    this.syncControls();
    // Until the first tiles come (or a moment passes), a frame would show empty tracks
    // only to be painted again at once: the page's first frame waits for them.
    this.firstTiles = true;
    setTimeout(() => this.firstTilesCame(), 250);
    this.resize();
    // Observers report the size they start with: the layout above has it already.
    new ResizeObserver(() => {
      if (this.root.querySelector('#panels').clientWidth !== this.width) this.resize();
    }).observe(this.root.querySelector('#views'));
    window.addEventListener('hashchange', () => this.fromUrl());
    // The tiles first: the incidents and the side panel come while they load.
    this.viewChanged();
    this.loadIncidents();
    this.panels.render();
  }

  buildPage() {
    document.title = `schedlens view · ${this.meta.traces.map((t) => t.name).join(', ')}`;
    this.root.querySelector('#files').textContent = this.meta.traces.map((t) => t.name).join(' · ');
    this.axis = this.root.querySelector('#axis');
    this.statusBar = this.root.querySelector('#status');
    const socketable = this.meta.traces.some((t) => t.rowsBySocket);
    const socket = this.root.querySelector('#socket');
    socket.disabled = !socketable;
    socket.parentElement.title = socketable ? 'Order rows by socket, with socket bands' : 'No topology in the trace (give --topology to schedlens view)';
  }

  /** The time scale of the plot area (CSS px). */
  scale() {
    const width = this.views[0] && this.views[0].geometry ? this.views[0].geometry.plotWidth : 800;
    return new TimeScale(this.state.window[0], this.state.window[1], width);
  }

  selectedIncident() {
    const inc = this.state.incident;
    if (!inc) return null;
    const list = this.incidents[inc.trace];
    const found = list && list.incidents ? list.incidents.find((i) => i.rank === inc.rank) : null;
    return found ? { ...found, trace: inc.trace } : null;
  }

  resize() {
    const width = this.root.querySelector('#panels').clientWidth;
    this.width = width;
    if (!width) return;
    for (const view of this.views) view.resize(width);
    const dpr = window.devicePixelRatio || 1;
    this.axis.width = Math.round(width * dpr);
    this.axis.height = Math.round(AXIS_HEIGHT * dpr);
    this.axis.style.width = `${width}px`;
    this.axis.style.height = `${AXIS_HEIGHT}px`;
    this.viewChanged();
  }

  // --- state changes -------------------------------------------------------------

  setWindow(window) {
    this.state.window = clampWindow(window, this.bounds);
    this.viewChanged();
  }

  /** Something that changes the tiles or the picture changed. */
  viewChanged() {
    this.wantTiles();
    this.requestRender();
    this.saveUrl();
    clearTimeout(this.detailTimer);
    this.detailTimer = setTimeout(() => this.loadDetails(), 120);
  }

  /** Asks for the tiles of the view (each trace's in turn, so panels fill together). */
  wantTiles() {
    if (!this.views.length || !this.views[0].geometry) return;
    this.current = this.interleave((v) => v.wishes(this.scale()));
    this.currentKeys = new Set(this.current.map((w) => w.key));
    this.prefetched = false;
    this.store.want(this.current);
  }

  interleave(wishesOf) {
    const lists = this.views.map(wishesOf);
    const out = [];
    for (let i = 0; lists.some((l) => i < l.length); i++) for (const l of lists) if (i < l.length) out.push(l[i]);
    return out;
  }

  /** Whether every tile of the view is loaded (or failed). */
  currentDone() {
    return this.current.every((w) => this.store.has(w.key) || this.store.failed.has(w.key));
  }

  /**
   * Once the view is drawn: the tiles of the next zoom in and of a pan either way. Asked
   * for after the frame that completes the view (not as its last tile comes), so the
   * server computes them while the page is idle rather than while it paints.
   */
  prefetch() {
    if (this.prefetched || !this.currentDone()) return;
    this.prefetched = true;
    const scale = this.scale();
    const next = [
      ...this.interleave((v) => v.wishes(scale, { deeper: 1 })),
      ...this.interleave((v) => v.wishes(scale, { widened: 0.5 })),
      ...this.interleave((v) => v.wishes(scale, { deeper: 2 })),
    ];
    this.store.want(next);
  }

  saveUrl() {
    clearTimeout(this.urlTimer);
    this.urlTimer = setTimeout(() => {
      const hash = formatState(this.state, this.defaults);
      if (hash !== location.hash) history.replaceState(null, '', hash || location.pathname);
    }, 150);
  }

  fromUrl() {
    const hash = formatState(this.state, this.defaults);
    if (location.hash === hash) return;
    this.state = parseState(location.hash, this.defaults);
    this.state.window = clampWindow(this.state.window || this.bounds, this.bounds);
    this.syncControls();
    this.resize();
    this.panels.render();
  }

  /** Markers, the followed task's details, the legend: after the view settles. */
  async loadDetails() {
    const scale = this.scale();
    await Promise.all(
      this.views.map(async (view) => {
        const start = Math.max(scale.start, view.meta.start);
        const end = Math.min(scale.end, view.meta.end);
        if (end <= start) {
          view.markers = [];
          return;
        }
        try {
          const answer = await this.source.markers(view.index, start, end, 300);
          view.markers = answer.status === 'ready' ? answer.markers : [];
          view.markerInfo = answer;
          if (answer.status !== 'ready') setTimeout(() => this.loadDetails(), 500);
        } catch (error) {
          view.markers = [];
        }
      }),
    );
    await Promise.all([this.loadFollow(), this.loadPath()]);
    this.requestRender();
    this.panels.windowChanged();
  }

  /**
   * The critical path shown, per trace: the traced command's, or the followed task's
   * (in its trace), its hops and stretches of scheduler cost in the window. The first
   * answer may take a while (the server walks the path once).
   */
  async loadPath() {
    const which = this.state.path;
    const follow = this.state.follow;
    const scale = this.scale();
    await Promise.all(
      this.views.map(async (view) => {
        const task = which === 'task' ? (follow && follow.trace === view.index ? follow.task : undefined) : null;
        if (!which || task === undefined) {
          view.path = null;
          return;
        }
        let start = Math.max(scale.start, view.meta.start);
        let end = Math.min(scale.end, view.meta.end);
        if (end <= start) [start, end] = [view.meta.start, view.meta.end];
        const key = `${which}|${task}|${start}|${end}`;
        if (view.path && view.path.key === key) return;
        const known = view.path && view.path.of === `${which}|${task}`;
        if (!known) {
          view.path = { loading: true, key, of: `${which}|${task}` };
          this.panels.render();
        }
        try {
          const answer = await this.source.path(view.index, task, start, end);
          if (this.state.path === which) view.path = { ...answer, key, of: `${which}|${task}` };
        } catch (error) {
          view.path = { error: error.message, key, of: `${which}|${task}` };
        }
      }),
    );
    this.panels.render();
    this.requestOverlay();
  }

  /** Shows the critical path of `which` ('command', 'task') or none (null). */
  showPath(which) {
    this.state.path = which;
    this.root.querySelector('#path').value = which || '';
    for (const view of this.views) view.path = null;
    if (which) this.panels.show('path');
    this.viewChanged();
    this.panels.render();
  }

  async loadFollow() {
    const follow = this.state.follow;
    for (const view of this.views) if (!follow || follow.trace !== view.index) view.task = null;
    if (!follow || !this.views[follow.trace]) return;
    const view = this.views[follow.trace];
    const scale = this.scale();
    const start = Math.max(scale.start, view.meta.start);
    const end = Math.min(scale.end, view.meta.end);
    try {
      view.task = end > start ? await this.source.task(follow.trace, follow.task, start, end) : null;
    } catch (error) {
      view.task = null;
      this.panels.error(`cannot follow task ${follow.task}: ${error.message}`);
    }
    this.panels.render();
    this.requestOverlay();
  }

  async loadIncidents() {
    await Promise.all(
      this.meta.traces.map(async (_, i) => {
        for (;;) {
          try {
            const answer = await this.source.incidents(i);
            this.incidents[i] = answer;
            if (answer.status === 'ready') break;
          } catch (error) {
            this.incidents[i] = { status: 'error', error: error.message };
            break;
          }
          this.panels.render();
          await new Promise((r) => setTimeout(r, 400));
        }
      }),
    );
    this.panels.render();
    this.requestRender();
  }

  follow(trace, task) {
    this.state.follow = task === null ? null : { trace, task };
    this.state.incident = null;
    if (this.state.path === 'task') for (const view of this.views) view.path = null;
    this.panels.show('task');
    // The followed task's state track comes or goes: the panels' layout changes.
    this.resize();
    this.panels.render();
  }

  selectIncident(trace, incident) {
    const followed = this.state.follow;
    this.state.incident = { trace, rank: incident.rank };
    this.state.follow = null;
    const length = Math.max(incident.end - incident.start, 1000);
    this.setWindow([incident.start - length / 2, incident.end + length / 2]);
    if (followed) this.resize();
    this.panels.render();
  }

  select(range) {
    this.state.selection = range;
    this.overlay.selection = range;
    this.panels.show(range ? 'selection' : this.panels.tab);
    this.panels.render();
    this.saveUrl();
    this.requestOverlay();
  }

  setOption(name, value) {
    this.state[name] = value;
    if (name === 'socket' || name === 'rw' || name === 'queue') this.resize();
    else this.viewChanged();
    this.panels.render();
  }

  syncControls() {
    const $ = (id) => this.root.querySelector(id);
    $('#color').value = this.state.color;
    $('#target').value = this.state.target;
    $('#target').hidden = this.state.color !== 'target';
    $('#forked').checked = this.state.forked;
    $('#socket').checked = this.state.socket;
    $('#rw').checked = this.state.rw;
    $('#queue').checked = this.state.queue;
    $('#path').value = this.state.path || '';
    this.overlay.selection = this.state.selection;
  }

  // --- drawing -------------------------------------------------------------------

  firstTilesCame() {
    if (!this.firstTiles) return;
    this.firstTiles = false;
    this.requestRender();
  }

  requestRender() {
    if (this.frame || this.firstTiles) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  requestOverlay() {
    if (this.overlayFrame || this.frame) return;
    this.overlayFrame = requestAnimationFrame(() => {
      this.overlayFrame = 0;
      this.renderOverlays();
    });
  }

  render() {
    const began = performance.now();
    const scale = this.scale();
    for (const view of this.views) view.render(scale);
    this.renderOverlays();
    const ms = performance.now() - began;
    this.stats.frames++;
    this.stats.lastDrawMs = ms;
    this.stats.drawMs.push(ms);
    if (this.stats.drawMs.length > 1000) this.stats.drawMs.shift();
    this.updateStatus();
    if (this.currentDone() && !this.prefetched) setTimeout(() => this.prefetch());
  }

  renderOverlays() {
    const scale = this.scale();
    this.drawAxis(scale);
    for (const view of this.views) view.renderOverlay(scale, this.overlay);
  }

  /** Whether every tile the view wants is drawn (for tests and the benchmark). */
  get complete() {
    return this.currentDone() && !this.frame;
  }

  drawAxis(scale) {
    const ctx = this.axis.getContext('2d');
    const dpr = window.devicePixelRatio || 1;
    const width = this.axis.width / dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, AXIS_HEIGHT);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, width, AXIS_HEIGHT);
    const plot = width - GUTTER_LEFT - GUTTER_RIGHT;
    const xOf = (t) => GUTTER_LEFT + ((t - scale.start) / scale.span) * plot;
    const selection = this.overlay.selection;
    if (selection) {
      ctx.fillStyle = 'rgba(40, 110, 220, 0.18)';
      ctx.fillRect(xOf(selection[0]), 0, xOf(selection[1]) - xOf(selection[0]), AXIS_HEIGHT);
    }
    const { step, values } = ticks(scale.start, scale.end, Math.max(2, Math.floor(plot / 95)));
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#1e1e1e';
    ctx.strokeStyle = '#1e1e1e';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'alphabetic';
    for (const t of values) {
      const x = Math.round(xOf(t)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(x, AXIS_HEIGHT - 6);
      ctx.lineTo(x, AXIS_HEIGHT);
      ctx.stroke();
      ctx.fillText(seconds(t, step), x, AXIS_HEIGHT - 10);
    }
    ctx.textAlign = 'left';
    ctx.fillStyle = '#666';
    ctx.fillText('s', 6, AXIS_HEIGHT - 10);
    if (this.overlay.cursor !== null) {
      const x = xOf(this.overlay.cursor);
      const text = exactTime(this.overlay.cursor);
      ctx.font = '11px ui-monospace, "DejaVu Sans Mono", monospace';
      const w = ctx.measureText(text).width + 10;
      const left = Math.min(Math.max(x - w / 2, 0), width - w);
      ctx.fillStyle = '#1e1e1e';
      ctx.fillRect(left, 2, w, 16);
      ctx.fillStyle = '#fff';
      ctx.fillText(text, left + 5, 14);
    }
  }

  updateStatus() {
    const [a, b] = this.state.window;
    const pending = this.current.filter((w) => !this.store.has(w.key) && !this.store.failed.has(w.key)).length;
    const cursor = this.overlay.cursor !== null ? `cursor ${exactTime(this.overlay.cursor)} · ` : '';
    this.statusBar.textContent = `${cursor}window ${seconds(a, (b - a) / 100)}–${seconds(b, (b - a) / 100)} s (${duration(b - a)})${pending ? ` · loading ${pending} tiles` : ''}`;
    const complete = this.complete;
    if (complete && this.firstCompleteAt === undefined) this.firstCompleteAt = performance.now();
    // The per-core timelines come first; the running/waiting and runqueue tracks may follow.
    const timelineDone = !this.frame && this.current.every((w) => w.spec.layers !== 't' || this.store.has(w.key) || this.store.failed.has(w.key));
    if (timelineDone && this.current.length && this.firstTimelineAt === undefined) this.firstTimelineAt = performance.now();
    this.root.dataset.complete = complete ? '1' : '0';
  }

  // --- input ---------------------------------------------------------------------

  bindInput() {
    const $ = (id) => this.root.querySelector(id);
    $('#color').addEventListener('change', (e) => {
      this.state.color = e.target.value;
      $('#target').hidden = this.state.color !== 'target';
      if (this.state.color === 'target' && !this.state.target) {
        $('#target').focus();
        return;
      }
      this.setOption('color', this.state.color);
    });
    $('#target').addEventListener('change', (e) => {
      this.state.target = e.target.value.trim();
      if (this.state.target) this.setOption('color', 'target');
    });
    for (const [id, name] of [['#forked', 'forked'], ['#socket', 'socket'], ['#rw', 'rw'], ['#queue', 'queue']]) {
      $(id).addEventListener('change', (e) => this.setOption(name, e.target.checked));
    }
    $('#path').addEventListener('change', (e) => this.showPath(e.target.value || null));
    $('#home').addEventListener('click', () => this.setWindow([...this.bounds]));
    for (const format of ['pdf', 'svg', 'png']) $(`#export-${format}`).addEventListener('click', () => this.exportView(format));
    $('#help-button').addEventListener('click', () => ($('#help').hidden = !$('#help').hidden));
    $('#help').addEventListener('click', () => ($('#help').hidden = true));
    const views = $('#views');
    views.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
    views.addEventListener('pointerdown', (e) => this.onPointerDown(e));
    views.addEventListener('pointermove', (e) => this.onPointerMove(e));
    views.addEventListener('pointerup', (e) => this.onPointerUp(e));
    views.addEventListener('pointerleave', () => this.onLeave());
    views.addEventListener('dblclick', (e) => this.onDoubleClick(e));
    window.addEventListener('keydown', (e) => this.onKey(e));
  }

  /** The panel and position under a pointer event. */
  locate(event) {
    const axisRect = this.axis.getBoundingClientRect();
    if (event.clientY >= axisRect.top && event.clientY < axisRect.bottom) {
      const x = event.clientX - axisRect.left;
      return { view: null, axis: true, x, y: 0, t: this.scale().t(x - GUTTER_LEFT) };
    }
    for (const view of this.views) {
      const rect = view.overlay.getBoundingClientRect();
      if (event.clientY >= rect.top && event.clientY < rect.bottom && event.clientX >= rect.left && event.clientX < rect.right) {
        const x = event.clientX - rect.left;
        const y = event.clientY - rect.top;
        return { view, x, y, t: this.scale().t(x - GUTTER_LEFT), hit: view.hit(x, y, this.scale()) };
      }
    }
    return null;
  }

  onWheel(event) {
    const at = this.locate(event);
    if (!at) return;
    event.preventDefault();
    const unit = event.deltaMode === 1 ? 33 : event.deltaMode === 2 ? 400 : 1;
    const dx = event.deltaX * unit;
    const dy = event.deltaY * unit;
    if (event.shiftKey || Math.abs(dx) > Math.abs(dy)) {
      const delta = ((event.shiftKey ? dy || dx : dx) / this.scale().width) * this.scale().span;
      this.setWindow(pan(this.state.window, delta, this.bounds));
      return;
    }
    const factor = Math.exp(dy * 0.0022);
    this.setWindow(zoom(this.state.window, factor, at.t, this.bounds));
  }

  onPointerDown(event) {
    if (event.button !== 0) return;
    const at = this.locate(event);
    if (!at || (at.view && !at.hit && !at.axis)) return;
    event.preventDefault();
    const select = event.shiftKey || at.axis;
    this.drag = { startX: event.clientX, t: at.t, window: [...this.state.window], select, moved: false, at };
    this.root.querySelector('#views').setPointerCapture(event.pointerId);
  }

  onPointerMove(event) {
    const at = this.locate(event);
    if (this.drag) {
      const dx = event.clientX - this.drag.startX;
      if (Math.abs(dx) > 3) this.drag.moved = true;
      if (!this.drag.moved) return;
      const scale = new TimeScale(this.drag.window[0], this.drag.window[1], this.scale().width);
      if (this.drag.select) {
        const t = at ? at.t : scale.t(event.clientX - this.axis.getBoundingClientRect().left - GUTTER_LEFT);
        this.overlay.selection = [Math.min(this.drag.t, t), Math.max(this.drag.t, t)].map(Math.round);
        this.overlay.cursor = t;
        this.requestOverlay();
      } else {
        this.setWindow(pan(this.drag.window, (-dx / scale.width) * scale.span, this.bounds));
      }
      return;
    }
    this.overlay.cursor = at && (at.hit || at.axis) ? at.t : null;
    this.hover(at, event);
    this.requestOverlay();
    this.updateStatus();
  }

  onPointerUp(event) {
    const drag = this.drag;
    this.drag = null;
    if (!drag) return;
    if (drag.select && drag.moved) {
      this.select(this.overlay.selection);
      return;
    }
    if (!drag.moved) this.click(drag.at, event);
  }

  onLeave() {
    if (this.drag) return;
    this.overlay.cursor = null;
    this.overlay.hover = null;
    this.tooltip.hide();
    this.requestOverlay();
  }

  onDoubleClick(event) {
    const at = this.locate(event);
    if (!at) return;
    const sel = this.state.selection;
    if (sel && at.t >= sel[0] && at.t <= sel[1]) this.zoomToSelection();
    else this.setWindow(zoom(this.state.window, 0.5, at.t, this.bounds));
  }

  zoomToSelection() {
    const sel = this.state.selection;
    if (sel) this.setWindow(sel);
  }

  click(at, event) {
    if (!at || !at.hit) return;
    if (at.hit.kind === 'row') {
      const run = this.overlay.hover && this.overlay.hover.run;
      if (run && run.cpu === at.hit.cpu && this.overlay.hover.trace === at.view.index) this.follow(at.view.index, run.task);
      else if (this.state.follow) this.follow(at.view.index, null);
    } else if (at.hit.kind === 'marker') {
      this.tooltip.showMarker(at.hit.marker, event);
    }
  }

  onKey(event) {
    if (event.target.tagName === 'INPUT' || event.target.tagName === 'SELECT') return;
    const scale = this.scale();
    const center = this.overlay.cursor ?? (scale.start + scale.end) / 2;
    const step = scale.span * 0.2;
    const key = event.key;
    const handled = {
      ArrowLeft: () => this.setWindow(pan(this.state.window, -step, this.bounds)),
      a: () => this.setWindow(pan(this.state.window, -step, this.bounds)),
      ArrowRight: () => this.setWindow(pan(this.state.window, step, this.bounds)),
      d: () => this.setWindow(pan(this.state.window, step, this.bounds)),
      ArrowUp: () => this.setWindow(zoom(this.state.window, 1 / 1.6, center, this.bounds)),
      w: () => this.setWindow(zoom(this.state.window, 1 / 1.6, center, this.bounds)),
      '+': () => this.setWindow(zoom(this.state.window, 1 / 1.6, center, this.bounds)),
      '=': () => this.setWindow(zoom(this.state.window, 1 / 1.6, center, this.bounds)),
      ArrowDown: () => this.setWindow(zoom(this.state.window, 1.6, center, this.bounds)),
      s: () => this.setWindow(zoom(this.state.window, 1.6, center, this.bounds)),
      '-': () => this.setWindow(zoom(this.state.window, 1.6, center, this.bounds)),
      Home: () => this.setWindow([...this.bounds]),
      0: () => this.setWindow([...this.bounds]),
      z: () => this.zoomToSelection(),
      Enter: () => this.zoomToSelection(),
      f: () => this.overlay.hover && this.overlay.hover.run && this.follow(this.overlay.hover.trace, this.overlay.hover.run.task),
      Escape: () => {
        this.state.follow = null;
        this.state.incident = null;
        this.select(null);
        this.resize();
      },
      '?': () => (this.root.querySelector('#help').hidden = !this.root.querySelector('#help').hidden),
    }[key];
    if (handled) {
      event.preventDefault();
      handled();
    }
  }

  /**
   * Hover: the run under the mouse or the followed task's state (asked of the source,
   * with who held the CPU it waited for), counts on the tracks, and on a runqueue strip
   * the tasks waiting there with who held the CPU (asked of the source after the counts).
   */
  hover(at, event) {
    if (!at || !at.hit) {
      this.overlay.hover = null;
      this.tooltip.hide();
      return;
    }
    const { view, hit } = at;
    if (hit.kind === 'row') {
      const known = this.overlay.hover;
      if (known && known.trace === view.index && known.run && known.run.cpu === hit.cpu && hit.t >= known.run.start && hit.t < known.run.end) {
        this.tooltip.showRun(view, known.run, event, this.state);
        return;
      }
      this.pendingHover = { view, hit, event };
      if (!this.hoverInFlight) this.askHover();
      return;
    }
    if (hit.kind === 'state') {
      const known = this.overlay.hover;
      if (known && known.trace === view.index && known.state && known.state.task === hit.task && hit.t >= known.state.start && hit.t < known.state.end) {
        this.tooltip.showState(view, known.state, event);
        return;
      }
      this.pendingHover = { view, hit, event };
      if (!this.hoverInFlight) this.askHover();
      return;
    }
    this.overlay.hover = null;
    if (hit.kind === 'marker') this.tooltip.showMarker(hit.marker, event);
    else if (hit.kind === 'rw') this.tooltip.showCounts(view, hit, view.valuesAt(hit.x), event);
    else if (hit.kind === 'queue') {
      this.tooltip.showQueue(view, hit, view.valuesAt(hit.x, hit.cpu), event);
      this.pendingHover = { view, hit, event };
      if (!this.hoverInFlight) this.askHover();
    }
  }

  async askHover() {
    const ask = this.pendingHover;
    this.pendingHover = null;
    if (!ask) return;
    this.hoverInFlight = true;
    const { view, hit, event } = ask;
    const span = this.scale().nsPerPx;
    try {
      if (hit.kind === 'row') {
        const run = await this.source.at(view.index, hit.cpu, hit.t, span);
        if (!this.pendingHover) {
          this.overlay.hover = run.found ? { trace: view.index, run } : null;
          if (run.found) this.tooltip.showRun(view, run, event, this.state);
          else this.tooltip.showIdle(view, hit, event);
          this.requestOverlay();
        }
      } else if (hit.kind === 'state') {
        const state = await this.source.state(view.index, hit.task, hit.t, span);
        if (!this.pendingHover) {
          this.overlay.hover = state.found ? { trace: view.index, state } : null;
          if (state.found) this.tooltip.showState(view, state, event);
          else this.tooltip.hide();
          this.requestOverlay();
        }
      } else if (hit.kind === 'queue') {
        const queue = await this.source.queue(view.index, hit.cpu, hit.t, span);
        if (!this.pendingHover) this.tooltip.showQueue(view, hit, view.valuesAt(hit.x, hit.cpu), event, queue);
      }
    } catch (error) {
      // A source without the detail (the report) keeps the counts the tiles gave.
      if (hit.kind !== 'queue') this.tooltip.hide();
    }
    this.hoverInFlight = false;
    if (this.pendingHover) this.askHover();
  }

  exportView(format) {
    const [start, end] = this.state.window;
    const s = this.state;
    const url = this.source.exportUrl({
      format,
      start: Math.round(start),
      end: Math.round(end),
      color: s.color,
      target: s.color === 'target' ? s.target : undefined,
      forked: s.forked ? 1 : undefined,
      socket: s.socket ? 1 : undefined,
      rw: s.rw ? 1 : undefined,
      q: s.queue ? 1 : undefined,
      width: Math.round(this.scale().width),
    });
    if (!url) return;
    const link = document.createElement('a');
    link.href = url;
    link.download = '';
    document.body.appendChild(link);
    link.click();
    link.remove();
  }
}

if (typeof document !== 'undefined' && document.querySelector('#app')) {
  // The server writes /api/meta's answer into the page, saving a round trip.
  const inline = document.querySelector('#meta');
  const app = new App(new ServerSource('', inline ? JSON.parse(inline.textContent) : null), document.querySelector('#app'));
  window.schedlens = app;
  app.start().catch((error) => {
    document.querySelector('#panels').textContent = `Cannot start: ${error.message}`;
    throw error;
  });
}
