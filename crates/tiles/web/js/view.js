//# allFunctionsCalledOnLoad
// One trace's panel: its per-core timeline, a followed task's state track,
// running/waiting track and runqueue strip, one below the other on the shared time axis,
// with markers, the followed task's moves and wakeups, the critical path (its hops as
// arrows, its stretches of scheduler cost boxed), the selection and the cursor on an
// overlay. It asks the tile store for
// the tiles its view needs and paints whatever is there (a coarser or finer tile stands
// in while the right one loads).

import { tileKey } from './source.js';
import { COLORS, HEAT, RUN, dim, packColor, paintQueue, paintStates, paintTimeline, runningWaitingColumns, sampleColumns, paintRunningWaiting } from './draw.js';
import { levelFor, tileIndices, tileSpan } from './timescale.js';
import { escapeHtml, rowLabelPlan } from './format.js';

/** The room left of the plots (CSS px): the row labels of the trace with the most CPUs (see fitGutter). */
export let GUTTER_LEFT = 48;

/** Widens GUTTER_LEFT so that every row of every trace is labelled with its CPU number. */
export function fitGutter(traces) {
  const cpus = Math.max(1, ...traces.map((t) => t.cpus));
  const { font, columns } = rowLabelPlan(rowHeights(cpus).row);
  const widest = String(cpus - 1).length * font * 0.62;
  GUTTER_LEFT = Math.max(48, Math.ceil(22 + columns * (widest + 3) + 6));
}

/** Sums the time between laps into `parts[name]`. */
class Clock {
  constructor(parts) {
    this.parts = parts;
    this.last = performance.now();
  }

  lap(name) {
    const now = performance.now();
    this.parts[name] = (this.parts[name] || 0) + now - this.last;
    this.last = now;
  }
}

/**
 * Whether a band painted from `band.painted` would get the same pixels now: the same
 * window, rows and tiles at the same pixels (a tile that arrived for another layer
 * repaints nothing here).
 */
function unchanged(band, scale, rows, sample) {
  const before = band.painted;
  if (!before || before.rows !== rows || before.scale.start !== scale.start || before.scale.span !== scale.span) return false;
  const old = before.sample;
  if (old.runCount !== sample.runCount || old.tiles.length !== sample.tiles.length) return false;
  for (let i = 0; i < sample.tiles.length; i++) if (old.tiles[i] !== sample.tiles[i]) return false;
  for (let i = 0; i < sample.runCount * RUN; i++) if (old.runs[i] !== sample.runs[i]) return false;
  return true;
}
export const GUTTER_RIGHT = 34;
const FONT = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
const MARKER = '#7a3cc8';
/** The state track's height (CSS px). */
const STATE_TRACK = 14;
/** The critical path's colours: its hops (arrows) and its stretches of scheduler cost. */
export const PATH_COLORS = Object.freeze({ hop: 'rgba(214, 0, 120, 0.95)', cost: 'rgba(235, 40, 40, 0.30)', costEdge: 'rgba(200, 0, 0, 0.95)' });

/**
 * An arrow from (x1, y1) to (x2, y2): a curve leaving and reaching rows horizontally,
 * its head at the end.
 */
function arrow(ctx, x1, y1, x2, y2, color, { dashed = false, width = 1.6 } = {}) {
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  ctx.lineWidth = width;
  ctx.setLineDash(dashed ? [4, 3] : []);
  const bend = Math.min(40, Math.abs(y2 - y1) / 3 + 8);
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.bezierCurveTo(x1 + bend, y1, x2 - bend, y2, x2, y2);
  ctx.stroke();
  ctx.setLineDash([]);
  const angle = Math.atan2(y2 - y1, Math.max(1, x2 - x1) * 0.3);
  const head = 6;
  ctx.beginPath();
  ctx.moveTo(x2, y2);
  ctx.lineTo(x2 - head * Math.cos(angle - 0.45), y2 - head * Math.sin(angle - 0.45));
  ctx.lineTo(x2 - head * Math.cos(angle + 0.45), y2 - head * Math.sin(angle + 0.45));
  ctx.closePath();
  ctx.fill();
}

/** Row heights (CSS px) that suit a number of CPUs. */
export function rowHeights(cpus) {
  // Up to 64 CPUs, rows of 10 px at least: room for each one's label.
  const row = cpus <= 2 ? 44 : cpus <= 4 ? 34 : Math.max(cpus <= 64 ? 10 : 2, Math.min(22, Math.floor(560 / cpus)));
  const strip = Math.max(1, Math.min(10, Math.floor(120 / cpus)));
  return { row, strip };
}

export class TraceView {
  constructor(app, index, meta, container) {
    this.app = app;
    this.index = index;
    this.meta = meta;
    this.heights = rowHeights(meta.cpus);
    this.stats = { bandsKept: 0, parts: {} }; // parts: ms spent per part of render, summed
    this.markers = [];
    this.markerInfo = null;
    this.task = null; // the followed task's details (moves, wakeups)
    this.path = null; // the critical path shown: /api/path's answer for the window, {loading}, or {error}
    this.section = document.createElement('section');
    this.section.className = 'trace';
    this.section.dataset.trace = String(index);
    const lost = meta.lostEvents || meta.lostUnknown
      ? ` · <span class="warn">${meta.lostUnknown ? 'at least ' : ''}${meta.lostEvents} events lost</span>`
      : '';
    this.section.innerHTML = `<h2><span class="name">${escapeHtml(meta.name)}</span><span class="facts">${meta.cpus} CPUs · ${meta.tasks - 1} tasks${lost}</span><span class="status"></span></h2><div class="tracks"><canvas class="base"></canvas><canvas class="overlay"></canvas></div>`;
    container.appendChild(this.section);
    this.tracks = this.section.querySelector('.tracks');
    this.base = this.section.querySelector('canvas.base');
    this.overlay = this.section.querySelector('canvas.overlay');
    this.status = this.section.querySelector('.status');
    this.empty = {
      columns: 1,
      rows: meta.cpus,
      bytes: 0,
      colors: new Uint32Array(meta.cpus),
      queue: new Uint8Array(meta.cpus),
      rw: null,
      highlight: new Uint8Array(meta.cpus),
    };
  }

  /** Display rows bottom to top: {cpu, socket}. */
  rows() {
    const state = this.app.state;
    return state.socket && this.meta.rowsBySocket ? this.meta.rowsBySocket : this.meta.rowsByNumber;
  }

  /** The task followed in this trace whose state track is drawn, or null. */
  stateTask() {
    const follow = this.app.state.follow;
    const can = this.app.source.followsTasks !== false;
    return can && follow && follow.trace === this.index ? follow.task : null;
  }

  /** The panel's geometry in CSS px. */
  layout(width) {
    const state = this.app.state;
    const rows = this.rows().length;
    const timeline = { top: 4, height: rows * this.heights.row };
    let y = timeline.top + timeline.height;
    const states = this.stateTask() !== null ? { top: y + 4, height: STATE_TRACK } : null;
    if (states) y = states.top + states.height;
    const rw = state.rw ? { top: y + 8, height: 78 } : null;
    if (rw) y = rw.top + rw.height;
    const queue = state.queue ? { top: y + 6, height: rows * this.heights.strip } : null;
    if (queue) y = queue.top + queue.height;
    return { width, height: y + 6, x0: GUTTER_LEFT, plotWidth: Math.max(10, width - GUTTER_LEFT - GUTTER_RIGHT), timeline, states, rw, queue };
  }

  resize(width) {
    const dpr = window.devicePixelRatio || 1;
    this.geometry = this.layout(width);
    const { height } = this.geometry;
    for (const canvas of [this.base, this.overlay]) {
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
      canvas.style.width = `${width}px`;
      canvas.style.height = `${height}px`;
    }
    this.tracks.style.height = `${height}px`;
    this.dpr = dpr;
  }

  /**
   * The tile requests of this view for the current window, most needed first; with
   * `deeper` levels finer (to prefetch a zoom in) and the window `widened` by that share
   * of its span on each side (to prefetch a pan).
   */
  wishes(scale, { deeper = 0, widened = 0 } = {}) {
    const specs = this.specs(scale).map((spec) => ({ ...spec, level: Math.max(0, spec.level - deeper) }));
    const out = [];
    const mid = (scale.start + scale.end) / 2;
    const start = scale.start - widened * scale.span;
    const end = scale.end + widened * scale.span;
    for (const spec of specs) {
      const indices = tileIndices(start, end, spec.level, spec.columns, this.meta.start, this.meta.end);
      const span = tileSpan(spec.level, spec.columns);
      indices.sort((a, b) => Math.abs((a + 0.5) * span - mid) - Math.abs((b + 0.5) * span - mid));
      for (const index of indices) {
        const full = { ...spec, index };
        out.push({ key: tileKey(this.index, full), spec: { trace: this.index, ...full } });
      }
    }
    return out;
  }

  /** Tile specs (without index) for the layers shown now. */
  specs(scale) {
    const state = this.app.state;
    const level = levelFor(scale.nsPerPx / this.dpr, this.app.meta.maxLevel);
    const columns = this.app.meta.tileColumns;
    const common = { level, columns, forked: state.forked };
    const specs = [{ ...common, layers: 't', color: state.color, target: state.target }];
    if (state.rw || state.queue) specs.push({ ...common, layers: 'rq' });
    const tasks = this.highlightedTasks();
    if (tasks.length) specs.push({ ...common, layers: 'h', tasks });
    const followed = this.stateTask();
    if (followed !== null) specs.push({ level, columns, forked: false, layers: 's', tasks: [followed] });
    return specs;
  }

  highlightedTasks() {
    const state = this.app.state;
    if (state.follow && state.follow.trace === this.index) return [state.follow.task];
    const incident = this.app.selectedIncident();
    if (incident && incident.trace === this.index) return incident.tasks.slice(0, 64);
    return [];
  }

  /**
   * A sampler over cached tiles like `spec`, with coarser or finer ones standing in.
   * Consecutive pixels mostly fall in the tile of the level asked for that the previous
   * pixel found: that one is tried first, without a lookup.
   */
  finder(spec) {
    const store = this.app.store;
    const memo = new Map(); // level → (index → hit or null)
    const { start, end } = this.meta;
    const levels = [0, 1, 2, 3, 4, 5, 6, -1, -2].map((d) => spec.level + d).filter((l) => l >= 0 && l <= this.app.meta.maxLevel);
    const outside = { tile: this.empty, start: 0, columnNs: Infinity };
    let best = null; // the last hit at the level asked for
    const lookup = (level, index) => {
      let known = memo.get(level);
      if (!known) memo.set(level, (known = new Map()));
      let hit = known.get(index);
      if (hit === undefined) {
        const span = tileSpan(level, spec.columns);
        const tile = store.get(tileKey(this.index, { ...spec, level, index })) || null;
        hit = tile && { tile, start: index * span, end: (index + 1) * span, columnNs: 2 ** level, level };
        known.set(index, hit);
      }
      return hit;
    };
    // Tiles of finer levels nest in those of coarser ones: where no level has a tile for
    // t, none has one anywhere in the finest level's tile around t.
    const finest = tileSpan(Math.min(...levels), spec.columns);
    let missFrom = Infinity;
    let missTo = -Infinity;
    return (t) => {
      if (t < start || t >= end) return outside;
      if (best && t >= best.start && t < best.end) return best;
      if (t >= missFrom && t < missTo) return null;
      for (const level of levels) {
        const hit = lookup(level, Math.floor(t / tileSpan(level, spec.columns)));
        if (hit) {
          if (level === levels[0]) best = hit;
          return hit;
        }
      }
      missFrom = Math.floor(t / finest) * finest;
      missTo = missFrom + finest;
      return null;
    };
  }

  /** Paints the base canvas: tracks, labels, markers. */
  render(scale) {
    const g = this.geometry;
    if (!g) return;
    const dpr = this.dpr;
    const ctx = this.base.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, this.base.width, this.base.height);
    const plotPx = Math.round(g.plotWidth * dpr);
    const x0 = Math.round(g.x0 * dpr);
    const nsPerDevPx = scale.span / plotPx;
    const specs = this.specs(scale);
    const rows = this.rows();
    const cpus = rows.map((r) => r.cpu);
    const clock = new Clock(this.stats.parts);
    const timelineSample = sampleColumns(plotPx, scale.start, nsPerDevPx, this.finder(specs[0]));
    const hlSpec = specs.find((s) => s.layers === 'h');
    let highlight = null;
    if (hlSpec) {
      const sample = sampleColumns(plotPx, scale.start, nsPerDevPx, this.finder(hlSpec));
      const color = this.app.state.follow && this.task && this.task.task === this.app.state.follow.task ? packColor(this.app.state.color === 'command' ? this.task.commandColor : this.task.pidColor) : null;
      highlight = { sample, color };
    }
    const rowPx = Math.round(this.heights.row * dpr);
    const inset = this.heights.row >= 8 ? Math.round(this.heights.row * 0.1 * dpr) : 0;
    clock.lap('sample');
    const timeline = this.band('timeline', ctx, plotPx, rows.length * rowPx);
    if (!highlight && unchanged(timeline, scale, rows, timelineSample)) this.stats.bandsKept++;
    else paintTimeline(timeline.pixels, plotPx, { x0: 0, top: 0, width: plotPx, rowPx, inset }, cpus, timelineSample, { highlight });
    timeline.painted = highlight ? null : { scale, rows, sample: timelineSample };
    clock.lap('timeline');
    ctx.putImageData(timeline.image, x0, Math.round(g.timeline.top * dpr));
    clock.lap('put');
    let rwColumns = null;
    const rqSpec = specs.find((s) => s.layers === 'rq');
    if (rqSpec) {
      const sample = sampleColumns(plotPx, scale.start, nsPerDevPx, this.finder(rqSpec));
      if (g.queue) {
        const stripPx = Math.round(this.heights.strip * dpr);
        const queue = this.band('queue', ctx, plotPx, rows.length * stripPx);
        if (unchanged(queue, scale, rows, sample)) this.stats.bandsKept++;
        else paintQueue(queue.pixels, plotPx, { x0: 0, top: 0, width: plotPx, rowPx: stripPx }, [...cpus].reverse(), sample);
        queue.painted = { scale, rows, sample };
        clock.lap('queue');
        ctx.putImageData(queue.image, x0, Math.round(g.queue.top * dpr));
        clock.lap('put');
      }
      if (g.rw) {
        const kept = this.rwKept;
        rwColumns = kept && kept.width === plotPx && unchanged(kept, scale, rows, sample) ? kept.columns : runningWaitingColumns(sample, plotPx);
        this.rwKept = { painted: { scale, rows, sample }, width: plotPx, columns: rwColumns };
      }
    }
    const stSpec = specs.find((s) => s.layers === 's');
    if (stSpec && g.states) {
      const sample = sampleColumns(plotPx, scale.start, nsPerDevPx, this.finder(stSpec));
      const trackPx = Math.round(g.states.height * dpr);
      const band = this.band('states', ctx, plotPx, trackPx);
      paintStates(band.pixels, plotPx, { x0: 0, top: 0, width: plotPx, rowPx: trackPx }, sample);
      ctx.putImageData(band.image, x0, Math.round(g.states.top * dpr));
      clock.lap('states');
    }
    this.sampled = { timeline: timelineSample, rw: rwColumns, plotPx, nsPerDevPx };
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    clock.lap('rwColumns');
    if (g.rw && rwColumns) this.drawRunningWaiting(ctx, rwColumns, plotPx);
    clock.lap('rw');
    this.drawFrames(ctx, rows);
    this.drawEnd(ctx, scale);
    this.drawMarkers(ctx, scale);
    clock.lap('labels');
  }

  /**
   * The pixels of one image band (timeline rows, runqueue strips), kept from frame to
   * frame: every pixel a painter does not write (a row's inset) stays background.
   */
  band(name, ctx, width, height) {
    this.bands ||= {};
    let band = this.bands[name];
    if (!band || band.image.width !== width || band.image.height !== Math.max(1, height)) {
      const image = ctx.createImageData(width, Math.max(1, height));
      const pixels = new Uint32Array(image.data.buffer);
      pixels.fill(COLORS.background);
      band = this.bands[name] = { image, pixels };
    }
    return band;
  }

  drawRunningWaiting(ctx, data, plotPx) {
    const g = this.geometry;
    const { top, height } = g.rw;
    const cores = this.meta.cpus;
    let most = cores;
    for (let x = 0; x < plotPx; x++) if (data.total[x * 4 + 2] > most) most = data.total[x * 4 + 2];
    const yMax = most * 1.1;
    const yOf = (v) => top + height - (v / yMax) * height;
    this.rwScale = { yMax };
    const dpr = this.dpr;
    const bandTop = Math.round(top * dpr);
    const band = this.band('rw', ctx, plotPx, Math.round((top + height) * dpr) - bandTop);
    const rowOf = (v) => yOf(v) * dpr - bandTop;
    if (band.painted && band.painted.data === data && band.painted.yMax === yMax) this.stats.bandsKept++;
    else paintRunningWaiting(band.pixels, plotPx, band.image.height, data, plotPx, rowOf, Math.max(1, Math.round(1.5 * dpr)));
    band.painted = { data, yMax };
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.putImageData(band.image, Math.round(g.x0 * dpr), bandTop);
    ctx.restore();
    ctx.save();
    ctx.setLineDash([2, 3]);
    ctx.strokeStyle = '#000';
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(g.x0, Math.round(yOf(cores)) + 0.5);
    ctx.lineTo(g.x0 + g.plotWidth, Math.round(yOf(cores)) + 0.5);
    ctx.stroke();
    ctx.restore();
    ctx.fillStyle = COLORS.ink;
    ctx.font = FONT;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    // 0, the core count (the dotted line) and the highest count, those with room.
    const labels = [0];
    for (const value of [cores, Math.round(most)]) {
      if (labels.every((other) => Math.abs(yOf(other) - yOf(value)) >= 11)) labels.push(value);
    }
    for (const value of labels) ctx.fillText(String(value), g.x0 - 6, yOf(value));
    ctx.save();
    ctx.translate(12, top + height / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.fillText('tasks', 0, 0);
    ctx.restore();
  }

  drawFrames(ctx, rows) {
    const g = this.geometry;
    ctx.strokeStyle = COLORS.faint;
    ctx.lineWidth = 1;
    const frame = (area) => ctx.strokeRect(g.x0 - 0.5, area.top - 0.5, g.plotWidth + 1, area.height + 1);
    frame(g.timeline);
    if (g.states) frame(g.states);
    if (g.rw) frame(g.rw);
    if (g.queue) frame(g.queue);
    ctx.font = FONT;
    ctx.fillStyle = COLORS.ink;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    const rowH = this.heights.row;
    const bottom = g.timeline.top + g.timeline.height;
    const incident = this.app.selectedIncident();
    const marked = new Set(incident && incident.trace === this.index ? incident.cpus : []);
    // Every row's CPU number; where rows are lower than the text, labels take turns in a
    // few columns (as the figures' row labels). The incident's CPUs in bold.
    const plan = rowLabelPlan(rowH);
    const font = (bold) => `${bold ? 'bold ' : ''}${plan.font}px system-ui, -apple-system, "Segoe UI", sans-serif`;
    ctx.font = font(true);
    const column = Math.max(...rows.map((r) => ctx.measureText(String(r.cpu)).width)) + 3;
    rows.forEach((r, i) => {
      ctx.font = font(marked.has(r.cpu));
      ctx.fillText(String(r.cpu), g.x0 - 6 - (i % plan.columns) * column, bottom - (i + 0.5) * rowH);
    });
    // A core's hardware threads (SMT siblings, adjacent in socket order) joined by a bracket.
    ctx.fillStyle = COLORS.ink;
    for (let i = 0; i < rows.length; ) {
      let j = i;
      while (j + 1 < rows.length && rows[i].core != null && rows[j + 1].core === rows[i].core && rows[j + 1].socket === rows[i].socket) j++;
      if (j > i && rowH >= 4) ctx.fillRect(g.x0 - 3, Math.round(bottom - (j + 0.5) * rowH), 1, Math.round((j - i) * rowH) + 1);
      i = j + 1;
    }
    if (marked.size) {
      ctx.fillStyle = 'rgba(255, 196, 0, 0.9)';
      rows.forEach((r, i) => marked.has(r.cpu) && ctx.fillRect(g.x0 - 4, bottom - (i + 1) * rowH, 3, rowH));
    }
    // Socket (and NUMA node) bands and names: "S0", or "S0 N1" where the node's number differs.
    ctx.font = FONT;
    ctx.textAlign = 'left';
    let start = 0;
    for (let i = 1; i <= rows.length; i++) {
      if (i < rows.length && rows[i].socket === rows[start].socket && rows[i].node === rows[start].node) continue;
      if (rows[start].socket !== null && rows[start].socket !== undefined) {
        const mid = bottom - ((start + i) / 2) * rowH;
        const node = rows[start].node;
        ctx.fillStyle = COLORS.ink;
        ctx.fillText(`S${rows[start].socket}${node != null && node !== rows[start].socket ? ` N${node}` : ''}`, g.x0 + g.plotWidth + 6, mid);
        if (i < rows.length) {
          ctx.fillStyle = COLORS.socketBand;
          ctx.fillRect(g.x0, Math.round(bottom - i * rowH) - 1, g.plotWidth, 2);
        }
      }
      start = i;
    }
    ctx.save();
    ctx.translate(12, g.timeline.top + g.timeline.height / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.fillStyle = COLORS.ink;
    ctx.fillText('CPU', 0, 0);
    ctx.restore();
    if (g.states) {
      ctx.font = FONT;
      ctx.textAlign = 'right';
      ctx.fillStyle = COLORS.ink;
      ctx.fillText('state', g.x0 - 6, g.states.top + g.states.height / 2);
    }
    if (g.queue) {
      ctx.save();
      ctx.translate(12, g.queue.top + g.queue.height / 2);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'center';
      ctx.fillText(g.queue.height > 40 ? 'runqueue' : 'rq', 0, 0);
      ctx.restore();
    }
  }

  /** Where this trace's data ends inside the window (a shorter run than the slowest). */
  drawEnd(ctx, scale) {
    const g = this.geometry;
    for (const [t, text] of [[this.meta.end, 'end'], [this.meta.start, 'start']]) {
      if (t <= scale.start || t >= scale.end) continue;
      const x = g.x0 + ((t - scale.start) / scale.span) * g.plotWidth;
      ctx.save();
      ctx.setLineDash([4, 3]);
      ctx.strokeStyle = COLORS.ink;
      ctx.beginPath();
      ctx.moveTo(Math.round(x) + 0.5, g.timeline.top);
      ctx.lineTo(Math.round(x) + 0.5, g.height - 6);
      ctx.stroke();
      ctx.restore();
      ctx.fillStyle = COLORS.ink;
      ctx.font = FONT;
      ctx.textAlign = text === 'end' ? 'left' : 'right';
      ctx.textBaseline = 'top';
      ctx.fillText(text, x + (text === 'end' ? 3 : -3), g.timeline.top + 2);
    }
  }

  drawMarkers(ctx, scale) {
    const g = this.geometry;
    const placed = [];
    ctx.font = FONT;
    ctx.textBaseline = 'top';
    ctx.textAlign = 'left';
    for (const marker of this.markers) {
      if (marker.t < scale.start || marker.t >= scale.end) continue;
      const x = Math.round(g.x0 + ((marker.t - scale.start) / scale.span) * g.plotWidth) + 0.5;
      ctx.save();
      ctx.strokeStyle = MARKER;
      ctx.globalAlpha = 0.85;
      ctx.setLineDash([3, 2]);
      ctx.beginPath();
      ctx.moveTo(x, g.timeline.top);
      ctx.lineTo(x, g.height - 6);
      ctx.stroke();
      ctx.restore();
      const text = marker.text.split('\n')[0].slice(0, 40) || '(empty)';
      const width = ctx.measureText(text).width + 8;
      if (placed.some(([a, b]) => x < b && x + width > a) || x + width > g.x0 + g.plotWidth + GUTTER_RIGHT) continue;
      placed.push([x, x + width + 2]);
      ctx.fillStyle = 'rgba(255,255,255,0.88)';
      ctx.fillRect(x + 1, g.timeline.top + 1, width, 14);
      ctx.fillStyle = MARKER;
      ctx.fillText(text, x + 4, g.timeline.top + 2);
    }
  }

  /** What is at CSS position (x, y) of the panel. */
  hit(x, y, scale) {
    const g = this.geometry;
    if (!g || x < g.x0 || x >= g.x0 + g.plotWidth) return null;
    const t = scale.start + ((x - g.x0) / g.plotWidth) * scale.span;
    const rows = this.rows();
    const marker = this.markerNear(x, scale);
    const tl = g.timeline;
    if (y >= tl.top && y < tl.top + tl.height) {
      const i = Math.floor((tl.top + tl.height - y) / this.heights.row);
      if (marker && y < tl.top + 16) return { kind: 'marker', marker, t };
      return i >= 0 && i < rows.length ? { kind: 'row', cpu: rows[i].cpu, row: i, t, x } : null;
    }
    if (g.states && y >= g.states.top && y < g.states.top + g.states.height) return { kind: 'state', task: this.stateTask(), t, x };
    if (g.rw && y >= g.rw.top && y < g.rw.top + g.rw.height) return { kind: 'rw', t, x };
    if (g.queue && y >= g.queue.top && y < g.queue.top + g.queue.height) {
      const i = Math.floor((y - g.queue.top) / this.heights.strip);
      const top = [...rows].reverse();
      return i >= 0 && i < top.length ? { kind: 'queue', cpu: top[i].cpu, t, x } : null;
    }
    return marker ? { kind: 'marker', marker, t } : null;
  }

  markerNear(x, scale) {
    const g = this.geometry;
    let best = null;
    for (const marker of this.markers) {
      const mx = g.x0 + ((marker.t - scale.start) / scale.span) * g.plotWidth;
      if (Math.abs(mx - x) <= 3 && (!best || Math.abs(mx - x) < best.d)) best = { d: Math.abs(mx - x), marker };
    }
    return best && best.marker;
  }

  /** The running/waiting values and runqueue lengths under CSS x, from painted tiles. */
  valuesAt(x, cpu) {
    const s = this.sampled;
    if (!s) return null;
    const px = Math.floor((x - this.geometry.x0) * this.dpr);
    if (px < 0 || px >= s.plotPx) return null;
    const out = {};
    if (s.rw && !Number.isNaN(s.rw.total[px * 4])) {
      out.running = [s.rw.running[px * 4 + 1], s.rw.running[px * 4 + 2]];
      out.total = [s.rw.total[px * 4 + 1], s.rw.total[px * 4 + 2]];
      out.wasted = s.rw.wasted[px];
    }
    if (cpu !== undefined) {
      const spec = this.specs(this.app.scale()).find((sp) => sp.layers === 'rq');
      const sample = spec && sampleColumns(1, this.app.scale().start + px * s.nsPerDevPx, s.nsPerDevPx, this.finder(spec));
      const tile = sample && sample.slot[0] >= 0 ? sample.tiles[sample.slot[0]] : null;
      if (tile && tile.queue) {
        let most = 0;
        for (let c = sample.first[0]; c <= sample.last[0]; c++) most = Math.max(most, tile.queue[cpu * tile.columns + c]);
        out.queue = most;
      }
    }
    return out;
  }

  /** The y (CSS px) of a CPU's row centre in the timeline. */
  rowCenter(cpu) {
    const rows = this.rows();
    const i = rows.findIndex((r) => r.cpu === cpu);
    if (i < 0) return null;
    const tl = this.geometry.timeline;
    return tl.top + tl.height - (i + 0.5) * this.heights.row;
  }

  /** Paints the overlay: selection, cursor, hovered run, followed task's moves, incident. */
  renderOverlay(scale, overlay) {
    const g = this.geometry;
    if (!g) return;
    const ctx = this.overlay.getContext('2d');
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.clearRect(0, 0, g.width, g.height);
    const xOf = (t) => g.x0 + ((t - scale.start) / scale.span) * g.plotWidth;
    ctx.save();
    ctx.beginPath();
    ctx.rect(g.x0, 0, g.plotWidth, g.height);
    ctx.clip();
    const incident = this.app.selectedIncident();
    if (incident && incident.trace === this.index) {
      ctx.strokeStyle = 'rgba(230, 150, 0, 0.95)';
      ctx.lineWidth = 2;
      ctx.setLineDash([6, 3]);
      const a = xOf(incident.start);
      const b = xOf(incident.end);
      ctx.strokeRect(a, g.timeline.top + 1, Math.max(2, b - a), g.height - g.timeline.top - 8);
      ctx.setLineDash([]);
    }
    const selection = overlay.selection;
    if (selection) {
      const a = xOf(selection[0]);
      const b = xOf(selection[1]);
      ctx.fillStyle = 'rgba(40, 110, 220, 0.13)';
      ctx.fillRect(a, 0, b - a, g.height);
      ctx.strokeStyle = 'rgba(40, 110, 220, 0.8)';
      ctx.lineWidth = 1;
      for (const x of [a, b]) {
        ctx.beginPath();
        ctx.moveTo(Math.round(x) + 0.5, 0);
        ctx.lineTo(Math.round(x) + 0.5, g.height);
        ctx.stroke();
      }
    }
    this.drawFollow(ctx, xOf);
    // The path on top: a hop into the followed task is also one of its wakeups.
    this.drawPath(ctx, xOf);
    const hover = overlay.hover;
    if (hover && hover.trace === this.index && hover.state && g.states) {
      const a = Math.max(g.x0 - 2, xOf(hover.state.start));
      const b = Math.min(g.x0 + g.plotWidth + 2, xOf(hover.state.end));
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 1.5;
      ctx.strokeRect(a - 1, g.states.top - 1, Math.max(2, b - a) + 2, g.states.height + 2);
    }
    if (hover && hover.trace === this.index && hover.run) {
      const y = this.rowCenter(hover.run.cpu);
      if (y !== null) {
        const a = Math.max(g.x0 - 2, xOf(hover.run.start));
        const b = Math.min(g.x0 + g.plotWidth + 2, xOf(hover.run.end));
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 1.5;
        ctx.strokeRect(a - 1, y - this.heights.row / 2 - 1, Math.max(2, b - a) + 2, this.heights.row + 2);
      }
    }
    if (overlay.cursor !== null && overlay.cursor !== undefined) {
      const x = Math.round(xOf(overlay.cursor)) + 0.5;
      ctx.strokeStyle = 'rgba(0,0,0,0.55)';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(x, 0);
      ctx.lineTo(x, g.height);
      ctx.stroke();
    }
    ctx.restore();
  }

  /**
   * The critical path shown: its stretches of scheduler cost boxed on the row of the CPU
   * whose runqueue the task waited on, its hops as arrows from the CPU the waker woke the
   * next task from to where that task then ran.
   */
  drawPath(ctx, xOf) {
    const path = this.path;
    if (!this.app.state.path || !path || !path.hops) return;
    const rowH = this.heights.row;
    ctx.lineWidth = 1.5;
    for (const cost of path.costs) {
      const y = cost.waitedOn !== null ? this.rowCenter(cost.waitedOn) : null;
      if (y === null) continue;
      const a = xOf(cost.start);
      const w = Math.max(2, xOf(cost.end) - a);
      ctx.fillStyle = PATH_COLORS.cost;
      ctx.fillRect(a, y - rowH / 2, w, rowH);
      ctx.strokeStyle = PATH_COLORS.costEdge;
      ctx.strokeRect(a, y - rowH / 2 + 0.75, w, rowH - 1.5);
    }
    for (const hop of path.hops) {
      if (hop.fromCpu === null || !hop.ran) continue;
      const y1 = this.rowCenter(hop.fromCpu);
      const y2 = this.rowCenter(hop.ran.cpu);
      if (y1 === null || y2 === null) continue;
      const x1 = xOf(hop.start);
      arrow(ctx, x1, y1, xOf(hop.ran.t), y2, PATH_COLORS.hop, { width: 2 });
      ctx.beginPath();
      ctx.arc(x1, y1, 3, 0, 2 * Math.PI);
      ctx.fill();
    }
  }

  /** The followed task's moves between CPUs (arrows) and wakeups (dashed, from the waker). */
  drawFollow(ctx, xOf) {
    const follow = this.app.state.follow;
    if (!follow || follow.trace !== this.index || !this.task || this.task.task !== follow.task) return;
    const limit = 400;
    for (const wakeup of this.task.wakeups.slice(0, limit)) {
      if (wakeup.wakerCpu === null || !wakeup.ran) continue;
      const y1 = this.rowCenter(wakeup.wakerCpu);
      const y2 = this.rowCenter(wakeup.ran.cpu);
      if (y1 === null || y2 === null) continue;
      const x1 = xOf(wakeup.t);
      arrow(ctx, x1, y1, xOf(wakeup.ran.t), y2, 'rgba(0, 110, 190, 0.9)', { dashed: true });
      ctx.beginPath();
      ctx.arc(x1, y1, 2.5, 0, 2 * Math.PI);
      ctx.fill();
    }
    for (const move of this.task.moves.slice(0, limit)) {
      const y1 = this.rowCenter(move.from);
      const y2 = this.rowCenter(move.to);
      if (y1 === null || y2 === null) continue;
      arrow(ctx, xOf(move.left), y1, xOf(move.arrived), y2, 'rgba(20, 20, 20, 0.9)');
    }
  }

  /** A status line for loading work. */
  setStatus(text) {
    this.status.textContent = text;
  }
}

export { HEAT, dim };
