//# allFunctionsCalledOnLoad
// Where the page's data comes from. The drawing code only sees this interface:
//
//   meta()                              traces, CPUs, row orders, tile geometry
//   tile(trace, spec)                   a decoded tile (see tile-format.js);
//                                       spec = {level, index, columns, layers, color,
//                                               target, forked, tasks}; layers 's' are
//                                               the states of tasks[0]
//   at(trace, cpu, t, span)             the run under the mouse
//   task(trace, task, start, end)       a followed task: totals, moves, wakeups
//   state(trace, task, t, span)         its state under the mouse, who held the CPU it waited for
//   queue(trace, cpu, t, span)          the waits in a runqueue under the mouse, who held the CPU
//   path(trace, task, start, end)       the critical path of the traced command (task null) or a task
//   stats(trace, start, end, forked)    a range's statistics per command and CPU
//   incidents(trace)                    check's incidents ({status: 'computing'} until ready)
//   markers(trace, start, end, limit)   trace markers in a range
//   exportUrl(params)                   a URL that downloads the view as a figure, or null
//
// `ServerSource` asks `schedlens view`'s server. A report file (issue 17) will provide
// the same interface over a precomputed level-of-detail pyramid embedded in the page.

import { decodeTile } from './tile-format.js';

/** The key a tile is cached under: everything that changes its content. */
export function tileKey(trace, spec) {
  return [trace, spec.layers, spec.level, spec.index, spec.columns, spec.color, spec.target || '', spec.forked ? 1 : 0, (spec.tasks || []).join('+')].join('|');
}

/** Tiles asked for in one request at most. */
const MAX_BATCH = 32;

/**
 * The parts of an `/api/tiles` answer (crates/view/src/server.rs): [{status, offset,
 * length}] of `buffer`.
 */
export function splitBatch(buffer) {
  const view = new DataView(buffer);
  if (buffer.byteLength < 8 || view.getUint32(0, true) !== 0x42544c53) throw new Error('not a tile batch');
  const count = view.getUint32(4, true);
  const parts = [];
  let at = 8;
  for (let i = 0; i < count; i++) {
    if (at + 8 > buffer.byteLength) throw new Error('tile batch truncated');
    const status = view.getUint32(at, true);
    const length = view.getUint32(at + 4, true);
    at += 8;
    if (at + length > buffer.byteLength) throw new Error('tile batch truncated');
    parts.push({ status, offset: at, length });
    at += length;
  }
  return parts;
}

export class ServerSource {
  /** `meta`: /api/meta's answer when the page already holds it (the server puts it in the page). */
  constructor(base = '', meta = null) {
    this.base = base;
    this.known = meta;
  }

  async json(path, params) {
    const response = await fetch(this.url(path, params));
    const body = await response.json();
    if (!response.ok && response.status !== 202) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }

  url(path, params = {}) {
    const query = this.query(params);
    return `${this.base}${path}${query ? `?${query}` : ''}`;
  }

  query(params) {
    return Object.entries(params)
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => `${k}=${encodeURIComponent(Array.isArray(v) ? v.join(',') : v)}`)
      .join('&');
  }

  /** While the server builds the models it answers "pending" now and then: ask again. */
  async meta() {
    if (this.known) return this.known;
    for (;;) {
      const answer = await this.json('/api/meta');
      if (!answer.pending) return answer;
    }
  }

  /**
   * Tiles asked for in one turn of the event loop (the tile store asks for several at
   * once) go to the server as one request.
   */
  tile(trace, spec) {
    const params = {
      trace,
      level: spec.level,
      index: spec.index,
      columns: spec.columns,
      layers: spec.layers,
      forked: spec.forked ? 1 : undefined,
    };
    if (spec.layers.includes('t')) {
      params.color = spec.color;
      if (spec.color === 'target') params.target = spec.target;
    }
    if (/[hs]/.test(spec.layers)) params.tasks = spec.tasks;
    return new Promise((resolve, reject) => {
      this.batch ||= [];
      this.batch.push({ query: this.query(params), resolve, reject });
      if (this.batch.length === 1) queueMicrotask(() => this.sendBatch());
    });
  }

  async sendBatch() {
    const batch = this.batch.splice(0, MAX_BATCH);
    if (this.batch.length) queueMicrotask(() => this.sendBatch());
    try {
      const response = await fetch(this.url('/api/tiles', { list: batch.map((b) => b.query).join(';') }));
      if (!response.ok) throw new Error(`tiles: HTTP ${response.status}`);
      const buffer = await response.arrayBuffer();
      const parts = splitBatch(buffer);
      if (parts.length !== batch.length) throw new Error('tiles: wrong count');
      batch.forEach((b, i) => {
        const { status, offset, length } = parts[i];
        if (status === 200) b.resolve(decodeTile(buffer, offset, length));
        else b.reject(new Error(`tile: HTTP ${status}: ${new TextDecoder().decode(new Uint8Array(buffer, offset, length))}`));
      });
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }

  at(trace, cpu, t, span) {
    return this.json('/api/at', { trace, cpu, t: Math.round(t), span: Math.max(1, Math.round(span)) });
  }

  task(trace, task, start, end) {
    return this.json('/api/task', { trace, task, start: Math.round(start), end: Math.round(end) });
  }

  state(trace, task, t, span) {
    return this.json('/api/state', { trace, task, t: Math.round(t), span: Math.max(1, Math.round(span)) });
  }

  queue(trace, cpu, t, span) {
    return this.json('/api/queue', { trace, cpu, t: Math.round(t), span: Math.max(1, Math.round(span)) });
  }

  path(trace, task, start, end) {
    return this.json('/api/path', { trace, task: task ?? undefined, start: Math.round(start), end: Math.round(end) });
  }

  stats(trace, start, end, forked) {
    return this.json('/api/stats', { trace, start: Math.round(start), end: Math.round(end), forked: forked ? 1 : undefined });
  }

  incidents(trace) {
    return this.json('/api/incidents', { trace });
  }

  markers(trace, start, end, limit = 500) {
    return this.json('/api/markers', { trace, start: Math.round(start), end: Math.round(end), limit });
  }

  exportUrl(params) {
    return this.url('/api/export', params);
  }
}
