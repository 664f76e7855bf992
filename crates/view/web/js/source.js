// Where the page's data comes from. The drawing code only sees this interface:
//
//   meta()                              traces, CPUs, row orders, tile geometry
//   tile(trace, spec)                   a decoded tile (see tile-format.js);
//                                       spec = {level, index, columns, layers, color,
//                                               target, forked, tasks}
//   at(trace, cpu, t, span)             the run under the mouse
//   task(trace, task, start, end)       a followed task: totals, moves, wakeups
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

export class ServerSource {
  constructor(base = '') {
    this.base = base;
  }

  async json(path, params) {
    const response = await fetch(this.url(path, params));
    const body = await response.json();
    if (!response.ok && response.status !== 202) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }

  url(path, params = {}) {
    const query = Object.entries(params)
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => `${k}=${encodeURIComponent(Array.isArray(v) ? v.join(',') : v)}`)
      .join('&');
    return `${this.base}${path}${query ? `?${query}` : ''}`;
  }

  meta() {
    return this.json('/api/meta');
  }

  async tile(trace, spec) {
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
    if (spec.layers.includes('h')) params.tasks = spec.tasks;
    const response = await fetch(this.url('/api/tile', params));
    if (!response.ok) throw new Error(`tile: HTTP ${response.status}`);
    return decodeTile(await response.arrayBuffer());
  }

  at(trace, cpu, t, span) {
    return this.json('/api/at', { trace, cpu, t: Math.round(t), span: Math.max(1, Math.round(span)) });
  }

  task(trace, task, start, end) {
    return this.json('/api/task', { trace, task, start: Math.round(start), end: Math.round(end) });
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
