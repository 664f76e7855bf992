// The report's data source: the same interface as `ServerSource` (source.js), answered
// from the data embedded in the file instead of asking `schedlens view`'s server. The
// data is one block of zlib-compressed parts (crates/report/src/bundle.rs): the JSON
// document (the server's meta, incidents, statistics and markers, the tile list, the
// tasks behind each colour) and the viewer's own binary tiles, inflated when first
// asked for. Tiles the report does not hold (finer than its pyramid, other colourings,
// forked-only, highlights) are refused, so the page draws a coarser one in their place.

import { decodeTile } from './tile-format.js';

/** Why a tile or a detail is not in the file. */
export const BEYOND = 'not in this report: open the trace with schedlens view for every event';

/** Bytes from base64 text. */
export function fromBase64(text) {
  const binary = atob(text.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Inflates one zlib part. */
export async function inflate(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Response(stream).arrayBuffer();
}

/** '#rrggbb' of a tile colour (0xAABBGGRR). */
export function hexOf(packed) {
  const hex = (v) => v.toString(16).padStart(2, '0');
  return `#${hex(packed & 0xff)}${hex((packed >>> 8) & 0xff)}${hex((packed >>> 16) & 0xff)}`;
}

const UNKNOWN = '#e2e2e2';

export class EmbeddedSource {
  /** @param bytes the bundle; @param doc where the document part lies: [offset, length] */
  constructor(bytes, [offset, length]) {
    this.bytes = bytes;
    this.docPart = [offset, length];
    this.decoded = new Map(); // tile part → decoded tile (timeline tiles, for hover)
  }

  async load() {
    const [offset, length] = this.docPart;
    const text = new TextDecoder().decode(await inflate(this.bytes.subarray(offset, offset + length)));
    this.doc = JSON.parse(text);
    return this;
  }

  part(name) {
    const where = this.doc.tiles[name];
    if (!where) return null;
    return inflate(this.bytes.subarray(where[0], where[0] + where[1]));
  }

  /** Whether the file holds this tile (`layers` 't' or 'rq'). */
  has(trace, layers, level, index) {
    return `${trace}/${layers}/${level}/${index}` in this.doc.tiles;
  }

  meta() {
    return Promise.resolve(this.doc.meta);
  }

  async tile(trace, spec) {
    const plain = spec.layers === 'rq' || (spec.layers === 't' && spec.color === 'pid');
    if (!plain || spec.forked || spec.columns !== this.doc.meta.tileColumns) throw new Error(BEYOND);
    const name = `${trace}/${spec.layers}/${spec.level}/${spec.index}`;
    const bytes = await this.part(name);
    if (!bytes) throw new Error(BEYOND);
    const tile = decodeTile(bytes);
    if (spec.layers === 't') this.remember(name, tile);
    return tile;
  }

  remember(name, tile) {
    this.decoded.set(name, tile);
    if (this.decoded.size > 64) this.decoded.delete(this.decoded.keys().next().value);
  }

  /** The finest embedded timeline tile covering `t` no finer than `level`. */
  async timelineTile(trace, level, t) {
    const columns = this.doc.meta.tileColumns;
    for (let l = Math.max(0, level); l <= this.doc.meta.maxLevel; l++) {
      const span = columns * 2 ** l;
      const index = Math.floor(t / span);
      const name = `${trace}/t/${l}/${index}`;
      if (!(name in this.doc.tiles)) continue;
      let tile = this.decoded.get(name);
      if (!tile) {
        tile = decodeTile(await this.part(name));
        this.remember(name, tile);
      }
      return { tile, start: index * span, columnNs: 2 ** l };
    }
    return null;
  }

  /**
   * The task under the mouse, as far as the tiles tell: the task whose colour the
   * column shows, and the stretch of columns in that colour. Marked `approximate`.
   */
  async at(trace, cpu, t, span) {
    const level = Math.floor(Math.log2(Math.max(1, span)));
    const found = await this.timelineTile(trace, level, t);
    if (!found) return { found: false };
    const { tile, start, columnNs } = found;
    const column = Math.floor((t - start) / columnNs);
    if (column < 0 || column >= tile.columns || cpu >= tile.rows) return { found: false };
    const row = cpu * tile.columns;
    const packed = tile.colors[row + column];
    if (!packed) return { found: false };
    let first = column;
    let last = column;
    while (first > 0 && tile.colors[row + first - 1] === packed) first--;
    while (last + 1 < tile.columns && tile.colors[row + last + 1] === packed) last++;
    const color = hexOf(packed);
    const tasks = this.doc.traces[trace].colors[color] || [];
    const [pid, comm] = tasks[0] || [null, color === UNKNOWN ? 'unknown state' : 'a task'];
    return {
      found: true,
      approximate: true,
      unknown: color === UNKNOWN,
      cpu,
      pid,
      comm,
      others: tasks.slice(1, 6),
      start: start + first * columnNs,
      end: start + (last + 1) * columnNs,
      columnNs,
      pidColor: color,
      commandColor: color,
      wait: null,
      nextCpu: null,
    };
  }

  /** The page does not draw a state track: following a task needs the trace. */
  get followsTasks() {
    return false;
  }

  task() {
    return Promise.reject(new Error(`following a task is ${BEYOND}`));
  }

  state() {
    return Promise.reject(new Error(`a task's states are ${BEYOND}`));
  }

  queue() {
    return Promise.reject(new Error(`the waits in a runqueue are ${BEYOND}`));
  }

  /**
   * The traced command's critical path (the report holds the whole trace's, its hops an
   * even sample of at most 2000): the hops and stretches of scheduler cost in the range.
   */
  path(trace, task, start, end) {
    const path = this.doc.traces[trace].criticalPath;
    if (task !== null && task !== undefined) return Promise.reject(new Error(`a task's critical path is ${BEYOND}`));
    if (!path) return Promise.reject(new Error('the trace names no command: no critical path'));
    const inside = (item) => item.end > start && item.start < end;
    const hops = path.hops.filter(inside);
    return Promise.resolve({ ...path, hops, hopsInRange: hops.length, costs: path.costs.filter(inside) });
  }

  /** Statistics: the whole trace's (the report holds no others). */
  stats(trace, start, end) {
    const stats = this.doc.traces[trace].stats;
    const meta = this.doc.meta.traces[trace];
    if (start > meta.start || end < meta.end) return Promise.reject(new Error(`statistics of a range are ${BEYOND}`));
    return Promise.resolve(stats);
  }

  incidents(trace) {
    return Promise.resolve(this.doc.traces[trace].incidents);
  }

  markers(trace, start, end, limit = 500) {
    const all = this.doc.traces[trace].markers;
    const inside = all.filter((m) => m.t >= start && m.t < end);
    const step = Math.max(1, Math.ceil(inside.length / limit));
    return Promise.resolve({ status: 'ready', markers: inside.filter((_, i) => i % step === 0), inRange: inside.length, total: this.doc.traces[trace].markerTotal });
  }

  exportUrl() {
    return null;
  }
}
