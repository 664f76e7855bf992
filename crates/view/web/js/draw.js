// Painting tiles into pixels: the per-core timeline and the runqueue strip as images
// (one colour per device pixel column per row, as `graph` draws one per column), the
// running/waiting envelope as lines. These functions read tiles through a sampler and
// know nothing of where tiles come from. Colours match crates/figures.

export const COLORS = Object.freeze({
  ink: '#1e1e1e',
  faint: '#a0a0a0',
  grid: '#ececec',
  running: 'rgb(20,150,40)',
  total: 'rgb(215,30,30)',
  wasted: [255, 214, 150],
  socketBand: '#1e1e1e',
  missing: 0xfff6f6f6, // not loaded yet (ImageData order: 0xAABBGGRR)
  background: 0xffffffff,
});

/** Runqueue length colours (crates/figures running_waiting_plot HEAT), as 0xAABBGGRR. */
export const HEAT = [
  [255, 255, 255],
  [200, 230, 200],
  [255, 220, 90],
  [250, 150, 40],
  [225, 60, 30],
  [140, 20, 20],
].map(([r, g, b]) => (0xff000000 | (b << 16) | (g << 8) | r) >>> 0);

export const HEAT_CSS = ['#ffffff', '#c8e6c8', '#ffdc5a', '#fa9628', '#e13c1e', '#8c1414'];

/** `#rrggbb` → 0xAABBGGRR. */
export function packColor(hex) {
  const v = parseInt(String(hex).replace('#', ''), 16);
  return (0xff000000 | ((v & 0xff) << 16) | (v & 0xff00) | ((v >> 16) & 0xff)) >>> 0;
}

/** A colour 70% of the way to white: runs behind a followed task. */
export function dim(color) {
  const r = color & 0xff;
  const g = (color >> 8) & 0xff;
  const b = (color >> 16) & 0xff;
  const f = (c) => (c * 77 + 255 * 179) >> 8;
  return (0xff000000 | (f(b) << 16) | (f(g) << 8) | f(r)) >>> 0;
}

/**
 * Where each device pixel column of the plot reads its data: for pixel x, the tile
 * (`slot[x]`, an index into `tiles`, -1 when none is loaded), the column at the pixel's
 * centre (`center[x]`: its colour) and the columns [first, last] the pixel covers
 * (their extremes: running/waiting, runqueues). `find(t)` returns the tile covering time
 * t as {tile, start, columnNs}, or null.
 */
export function sampleColumns(width, t0, nsPerPx, find) {
  const slot = new Int32Array(width);
  const center = new Int32Array(width);
  const first = new Int32Array(width);
  const last = new Int32Array(width);
  const tiles = [];
  const index = new Map();
  for (let x = 0; x < width; x++) {
    const hit = find(t0 + (x + 0.5) * nsPerPx);
    if (!hit) {
      slot[x] = -1;
      continue;
    }
    let s = index.get(hit.tile);
    if (s === undefined) {
      s = tiles.length;
      tiles.push(hit.tile);
      index.set(hit.tile, s);
    }
    slot[x] = s;
    const max = hit.tile.columns - 1;
    const column = (t) => (t - hit.start) / hit.columnNs;
    const c = Math.min(max, Math.max(0, Math.floor(column(t0 + (x + 0.5) * nsPerPx))));
    center[x] = c;
    first[x] = Math.min(c, Math.max(0, Math.floor(column(t0 + x * nsPerPx))));
    last[x] = Math.max(c, Math.min(max, Math.ceil(column(t0 + (x + 1) * nsPerPx)) - 1));
  }
  return { tiles, slot, center, first, last };
}

/**
 * Paints timeline rows into `pixels` (a Uint32Array over an ImageData `stride` wide):
 * row r (bottom to top in `rows`) takes `rowPx` device pixels from the bottom of the band
 * `top` + `height`, less `inset` above and below.
 * `highlight`: {tiles, color} columns where followed tasks ran are drawn at full colour
 * (their own colour when the column's colour is another's) and everything else dimmed.
 */
export function paintTimeline(pixels, stride, area, rows, sample, options = {}) {
  const { x0, top, width, rowPx, inset } = area;
  const { tiles, slot, center } = sample;
  const highlight = options.highlight;
  const line = new Uint32Array(width);
  for (let r = 0; r < rows.length; r++) {
    const cpu = rows[r];
    for (let x = 0; x < width; x++) {
      const s = slot[x];
      const tile = s < 0 ? null : tiles[s];
      if (!tile || !tile.colors) {
        line[x] = COLORS.missing;
        continue;
      }
      const at = cpu * tile.columns + center[x];
      const color = tile.colors[at] || COLORS.background;
      if (!highlight) {
        line[x] = color;
        continue;
      }
      const marks = highlight.sample.slot[x] < 0 ? null : highlight.sample.tiles[highlight.sample.slot[x]];
      const marked = marks && marks.highlight && marks.highlight[cpu * marks.columns + highlight.sample.center[x]];
      if (marked) line[x] = highlight.color ?? (color === COLORS.background ? 0xff1e1e1e : color);
      else line[x] = color === COLORS.background ? color : dim(color);
    }
    const bottom = top + (rows.length - r) * rowPx;
    const y0 = bottom - rowPx + inset;
    const y1 = bottom - inset;
    for (let y = y0; y < y1; y++) pixels.set(line, y * stride + x0);
  }
}

/** Paints runqueue strips (top to bottom in `rows`): the longest queue in each pixel. */
export function paintQueue(pixels, stride, area, rows, sample) {
  const { x0, top, width, rowPx } = area;
  const { tiles, slot, first, last } = sample;
  const line = new Uint32Array(width);
  for (let r = 0; r < rows.length; r++) {
    const cpu = rows[r];
    for (let x = 0; x < width; x++) {
      const s = slot[x];
      const tile = s < 0 ? null : tiles[s];
      if (!tile || !tile.queue) {
        line[x] = COLORS.missing;
        continue;
      }
      let most = 0;
      const base = cpu * tile.columns;
      for (let c = first[x]; c <= last[x]; c++) most = Math.max(most, tile.queue[base + c]);
      line[x] = HEAT[Math.min(most, HEAT.length - 1)];
    }
    const y0 = top + r * rowPx;
    for (let y = y0; y < y0 + rowPx; y++) pixels.set(line, y * stride + x0);
  }
}

/**
 * The running/waiting extents of each pixel column: per pixel the first, lowest,
 * highest and last count of running and of running + waiting tasks, and the share of
 * it with a task waiting while a core idled. NaN where no tile is loaded.
 */
export function runningWaitingColumns(sample, width) {
  const out = { running: new Float64Array(width * 4).fill(NaN), total: new Float64Array(width * 4).fill(NaN), wasted: new Float64Array(width) };
  const { tiles, slot, first, last } = sample;
  for (let x = 0; x < width; x++) {
    const s = slot[x];
    const tile = s < 0 ? null : tiles[s];
    if (!tile || !tile.rw) continue;
    for (const name of ['running', 'total']) {
      const src = tile.rw[name];
      const dst = out[name];
      dst[x * 4] = src[first[x] * 4];
      let low = Infinity;
      let high = -Infinity;
      for (let c = first[x]; c <= last[x]; c++) {
        low = Math.min(low, src[c * 4 + 1]);
        high = Math.max(high, src[c * 4 + 2]);
      }
      dst[x * 4 + 1] = low;
      dst[x * 4 + 2] = high;
      dst[x * 4 + 3] = src[last[x] * 4 + 3];
    }
    let wasted = 0;
    for (let c = first[x]; c <= last[x]; c++) wasted += tile.rw.wasted[c];
    out.wasted[x] = wasted / (last[x] - first[x] + 1);
  }
  return out;
}

/** The envelope line of one count (see crates/figures running_waiting_plot). */
export function envelopePath(ctx, extents, width, x0, yOf, scale = 1) {
  ctx.beginPath();
  let drawing = false;
  for (let x = 0; x < width; x++) {
    const first = extents[x * 4];
    if (Number.isNaN(first)) {
      drawing = false;
      continue;
    }
    const px = x0 + x / scale;
    if (!drawing) ctx.moveTo(px, yOf(first));
    else ctx.lineTo(px, yOf(first));
    ctx.lineTo(px, yOf(extents[x * 4 + 1]));
    ctx.lineTo(px, yOf(extents[x * 4 + 2]));
    ctx.lineTo(px, yOf(extents[x * 4 + 3]));
    ctx.lineTo(px + 1 / scale, yOf(extents[x * 4 + 3]));
    drawing = true;
  }
}
