//# allFunctionsCalledOnLoad
// Painting tiles into pixels: the per-core timeline and the runqueue strip as images
// (one colour per device pixel column per row, as `graph` draws one per column), the
// running/waiting envelope as lines, a followed task's state track. These functions read tiles through a sampler and
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
export const HEAT = Uint32Array.from(
  [
    [255, 255, 255],
    [200, 230, 200],
    [255, 220, 90],
    [250, 150, 40],
    [225, 60, 30],
    [140, 20, 20],
  ],
  ([r, g, b]) => (0xff000000 | (b << 16) | (g << 8) | r) >>> 0,
);

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

/** Numbers per stretch in a sample's `runs`: slot, first pixel, end pixel, widest pixel. */
export const RUN = 4;

/**
 * Where each device pixel column of the plot reads its data: for pixel x, the tile
 * (`slot[x]`, an index into `tiles`, -1 when none is loaded), the column at the pixel's
 * centre (`center[x]`: its colour) and the columns [first, last] the pixel covers
 * (their extremes: running/waiting, runqueues; `mid[x]` is the one after `first[x]`, or
 * `last[x]` when the pixel covers one column). `runs` lists the stretches of pixels that
 * read one tile (or none) as (slot, from, to, widest) — `widest` the most columns one of
 * its pixels covers — `runCount` of them, so the painters look a tile up once per
 * stretch rather than once per pixel. `find(t)` returns the tile covering time t as
 * {tile, start, columnNs}, or null.
 */
export function sampleColumns(width, t0, nsPerPx, find) {
  const slot = new Int32Array(width);
  const center = new Int32Array(width);
  const first = new Int32Array(width);
  const mid = new Int32Array(width);
  const last = new Int32Array(width);
  const runs = new Int32Array(width * RUN);
  let runCount = 0;
  const tiles = [];
  const index = new Map();
  for (let x = 0; x < width; x++) {
    const hit = find(t0 + (x + 0.5) * nsPerPx);
    let s = -1;
    if (hit) {
      s = index.get(hit.tile);
      if (s === undefined) {
        s = tiles.length;
        tiles.push(hit.tile);
        index.set(hit.tile, s);
      }
      const max = hit.tile.columns - 1;
      const { start, columnNs } = hit;
      const c = Math.min(max, Math.max(0, Math.floor((t0 + (x + 0.5) * nsPerPx - start) / columnNs)));
      center[x] = c;
      first[x] = Math.min(c, Math.max(0, Math.floor((t0 + x * nsPerPx - start) / columnNs)));
      last[x] = Math.max(c, Math.min(max, Math.ceil((t0 + (x + 1) * nsPerPx - start) / columnNs) - 1));
      mid[x] = Math.min(first[x] + 1, last[x]);
    }
    slot[x] = s;
    const covers = s < 0 ? 0 : last[x] - first[x] + 1;
    const open = runCount && runs[(runCount - 1) * RUN] === s;
    const at = (open ? runCount - 1 : runCount++) * RUN;
    if (!open) {
      runs[at] = s;
      runs[at + 1] = x;
      runs[at + 3] = 0;
    }
    runs[at + 2] = x + 1;
    if (covers > runs[at + 3]) runs[at + 3] = covers;
  }
  return { tiles, slot, center, first, mid, last, runs, runCount };
}

/** Copies device pixel row `y0` of `pixels` (`width` pixels from column `x0`) to rows (y0, y1). */
function copyDown(pixels, stride, x0, width, y0, y1) {
  const from = y0 * stride + x0;
  for (let y = y0 + 1; y < y1; y++) pixels.copyWithin(y * stride + x0, from, from + width);
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
  const { center, tiles, runs, runCount } = sample;
  const highlight = options.highlight;
  // Colours as signed integers (the same bits): a colour past 2^31 read from a
  // Uint32Array and chosen between (`||`) would be boxed, a number object per pixel.
  const out = new Int32Array(pixels.buffer, pixels.byteOffset, pixels.length);
  const background = COLORS.background | 0;
  const missing = COLORS.missing | 0;
  const colorsOf = [];
  for (let k = 0; k < runCount * RUN; k += RUN) {
    const colors = runs[k] < 0 ? null : tiles[runs[k]].colors;
    colorsOf.push(colors && new Int32Array(colors.buffer, colors.byteOffset, colors.length));
  }
  for (let r = 0; r < rows.length; r++) {
    const cpu = rows[r];
    const bottom = top + (rows.length - r) * rowPx;
    const y0 = bottom - rowPx + inset;
    const y1 = bottom - inset;
    if (y1 <= y0) continue;
    // The row's first line of pixels, one stretch of one tile at a time.
    const at = y0 * stride + x0;
    for (let k = 0; k < runCount * RUN; k += RUN) {
      const from = runs[k + 1];
      const to = runs[k + 2];
      const colors = colorsOf[k / RUN];
      if (!colors) {
        out.fill(missing, at + from, at + to);
        continue;
      }
      const base = cpu * tiles[runs[k]].columns;
      for (let x = from; x < to; x++) out[at + x] = colors[base + center[x]] || background;
    }
    if (highlight) markFollowed(pixels.subarray(at, at + width), cpu, highlight);
    copyDown(pixels, stride, x0, width, y0, y1);
  }
}

/** Dims a painted timeline line except where followed tasks ran (see `paintTimeline`). */
function markFollowed(line, cpu, highlight) {
  const { tiles, slot, center } = highlight.sample;
  for (let x = 0; x < line.length; x++) {
    const color = line[x];
    if (color === COLORS.missing) continue;
    const marks = slot[x] < 0 ? null : tiles[slot[x]];
    const marked = marks && marks.highlight && marks.highlight[cpu * marks.columns + center[x]];
    if (marked) line[x] = highlight.color ?? (color === COLORS.background ? 0xff1e1e1e : color);
    else if (color !== COLORS.background) line[x] = dim(color);
  }
}

/**
 * A followed task's thread states, in the order of the states layer's codes (1 + index;
 * crates/tiles/src/states.rs), with Perfetto's thread-state colours: running dark
 * green, runnable lime (after a preemption hatched with Perfetto's darker variant),
 * uninterruptible orange, dead grey, sleeping blank (a thin line: the task exists), and
 * unknown as the timeline's unknown, hatched.
 */
export const STATES = Object.freeze([
  { name: 'running', label: 'running', css: '#317d31' },
  { name: 'runnable-wakeup', label: 'runnable (woken)', css: '#99ba36' },
  { name: 'runnable-preempted', label: 'runnable (preempted)', css: '#99ba36', hatch: '#6e8f12' },
  { name: 'sleeping', label: 'sleeping', css: '#ffffff', line: '#a8a8a8' },
  { name: 'uninterruptible', label: 'uninterruptible (D)', css: '#ff9900' },
  { name: 'dead', label: 'dead', css: '#9e9e9e' },
  { name: 'unknown', label: 'unknown (lost events, not yet seen)', css: '#e2e2e2', hatch: '#c4c4c4' },
]);

/** A state's entry by its name in the documents (`runnable-wakeup`, ...). */
export function stateNamed(name) {
  return STATES.find((s) => s.name === name) || STATES[STATES.length - 1];
}

/** Per code (0: no state), the fill, the hatch (or the fill) and the line (or the fill), packed. */
const STATE_PIXELS = [{ css: '#ffffff' }, ...STATES].map((s) => {
  const fill = packColor(s.css) | 0;
  return { fill, hatch: s.hatch ? packColor(s.hatch) | 0 : fill, line: s.line ? packColor(s.line) | 0 : fill };
});

/**
 * Paints the state track into `pixels` (`stride` wide): `rowPx` device pixel rows from
 * `top`, each pixel column the state of the column at its centre in the sample's tiles
 * (`states` layer); hatches run diagonally every 4 pixels, sleeping is a line across the
 * middle, a missing tile is painted as missing.
 */
export function paintStates(pixels, stride, area, sample) {
  const { x0, top, width, rowPx } = area;
  const { center, tiles, slot } = sample;
  const out = new Int32Array(pixels.buffer, pixels.byteOffset, pixels.length);
  const missing = COLORS.missing | 0;
  const middle = Math.floor(rowPx / 2);
  for (let x = 0; x < width; x++) {
    const tile = slot[x] < 0 ? null : tiles[slot[x]];
    const states = tile && tile.states;
    const look = states ? STATE_PIXELS[states[center[x]]] || STATE_PIXELS[0] : null;
    for (let y = 0, at = top * stride + x0 + x; y < rowPx; y++, at += stride) {
      if (!look) out[at] = missing;
      else if (y === middle) out[at] = look.line;
      else out[at] = (x + y) % 4 === 0 ? look.hatch : look.fill;
    }
  }
}

/** Runqueue length → colour: HEAT, the longest queues all in its last colour. */
const HEAT_OF_LENGTH = Int32Array.from({ length: 256 }, (_, length) => HEAT[Math.min(length, HEAT.length - 1)] | 0);

/**
 * A tile's longest runqueues over runs of 1, 2, 4, … columns (`tables[j][c]`: the longest
 * of columns c to c + 2^j - 1), up to runs of `widest`: so the longest over any span of
 * columns is the longer of two reads. Kept per tile, made when a pixel first covers more
 * than three of its columns (the tile stands in for a coarser one).
 */
const QUEUE_MAXIMA = new WeakMap();
function queueMaxima(tile, widest) {
  let tables = QUEUE_MAXIMA.get(tile);
  if (!tables) QUEUE_MAXIMA.set(tile, (tables = [tile.queue]));
  while (1 << tables.length <= widest) {
    const before = tables[tables.length - 1];
    const half = 1 << (tables.length - 1);
    const table = new Uint8Array(before.length);
    for (let c = 0; c + half < before.length; c++) table[c] = Math.max(before[c], before[c + half]);
    tables.push(table);
  }
  return tables;
}

/** Paints runqueue strips (top to bottom in `rows`): the longest queue in each pixel. */
export function paintQueue(pixels, stride, area, rows, sample) {
  const { x0, top, width, rowPx } = area;
  const { first, mid, last, tiles, runs, runCount } = sample;
  const heat = HEAT_OF_LENGTH;
  const missing = COLORS.missing | 0;
  const out = new Int32Array(pixels.buffer, pixels.byteOffset, pixels.length); // as in paintTimeline
  // Per stretch whose pixels cover more than three columns: its tile's maxima.
  const maxima = [];
  for (let k = 0; k < runCount * RUN; k += RUN) {
    const tile = runs[k] < 0 ? null : tiles[runs[k]];
    maxima.push(tile && tile.queue && runs[k + 3] > 3 ? queueMaxima(tile, runs[k + 3]) : null);
  }
  for (let r = 0; r < rows.length; r++) {
    const cpu = rows[r];
    const y0 = top + r * rowPx;
    const at = y0 * stride + x0;
    for (let k = 0; k < runCount * RUN; k += RUN) {
      const s = runs[k];
      const from = runs[k + 1];
      const to = runs[k + 2];
      const queue = s < 0 ? null : tiles[s].queue;
      if (!queue) {
        out.fill(missing, at + from, at + to);
        continue;
      }
      const base = cpu * tiles[s].columns;
      const tables = maxima[k / RUN];
      if (!tables) {
        // At the level asked for a pixel covers one to three columns: three reads.
        for (let x = from; x < to; x++) out[at + x] = heat[Math.max(queue[base + first[x]], queue[base + mid[x]], queue[base + last[x]])];
        continue;
      }
      for (let x = from; x < to; x++) {
        const a = base + first[x];
        const b = base + last[x];
        const j = 31 - Math.clz32(b - a + 1);
        const table = tables[j];
        out[at + x] = heat[Math.max(table[a], table[b - (1 << j) + 1])];
      }
    }
    copyDown(pixels, stride, x0, width, y0, y0 + rowPx);
  }
}

/**
 * The running/waiting extents of each pixel column: per pixel the first, lowest,
 * highest and last count of running and of running + waiting tasks, and the share of
 * it with a task waiting while a core idled. NaN where no tile is loaded.
 */
export function runningWaitingColumns(sample, width) {
  const running = new Float64Array(width * 4).fill(NaN);
  const total = new Float64Array(width * 4).fill(NaN);
  const wasted = new Float64Array(width);
  const { tiles, runs, runCount, first, last } = sample;
  for (let k = 0; k < runCount * RUN; k += RUN) {
    const rw = runs[k] < 0 ? null : tiles[runs[k]].rw;
    if (!rw) continue;
    const [from, to] = [runs[k + 1], runs[k + 2]];
    extents(rw.running, running, first, last, from, to);
    extents(rw.total, total, first, last, from, to);
    const share = rw.wasted;
    for (let x = from; x < to; x++) {
      let sum = 0;
      for (let c = first[x]; c <= last[x]; c++) sum += share[c];
      wasted[x] = sum / (last[x] - first[x] + 1);
    }
  }
  return { running, total, wasted };
}

/** Per pixel of [from, to): the first, lowest, highest and last of the columns it covers. */
function extents(columns, out, first, last, from, to) {
  for (let x = from; x < to; x++) {
    const a = first[x] * 4;
    const b = last[x] * 4;
    let low = columns[a + 1];
    let high = columns[a + 2];
    for (let c = a + 4; c <= b; c += 4) {
      if (columns[c + 1] < low) low = columns[c + 1];
      if (columns[c + 2] > high) high = columns[c + 2];
    }
    out[x * 4] = columns[a];
    out[x * 4 + 1] = low;
    out[x * 4 + 2] = high;
    out[x * 4 + 3] = columns[b + 3];
  }
}

/** `rgb(r,g,b)` at `alpha` over white, as 0xAABBGGRR. */
function overWhite([r, g, b], alpha) {
  const f = (c) => Math.round(255 + (c - 255) * alpha);
  return (0xff000000 | (f(b) << 16) | (f(g) << 8) | f(r)) >>> 0;
}

/** The waiting-while-idle shades: four steps, stronger the more of a pixel it covered. */
const WASTED_SHADES = [0.25, 0.5, 0.75, 1].map((alpha) => overWhite(COLORS.wasted, alpha));
const RUNNING = packColor('#149628');
const TOTAL = packColor('#d71e1e');

/**
 * Paints the running/waiting track into `pixels` (`stride` wide, `height` rows, the
 * track's own band): each pixel column shaded by its share of waiting while a core
 * idled, then the envelopes of running + waiting (red) and running (green) tasks — per
 * column a vertical stroke over the values it took, joined to the previous column's
 * last value, `thickness` pixels thick — as the step lines of crates/figures'
 * running/waiting plot. `yOf(v)` is the row of value v. Pixels, not paths: stroking
 * thousands of joined segments cost the canvas ~80 ms per frame.
 */
export function paintRunningWaiting(pixels, stride, height, data, width, yOf, thickness = 2) {
  const wasted = data.wasted;
  for (let x = 0; x < width; x++) {
    const share = wasted[x];
    pixels[x] = share > 0 ? WASTED_SHADES[Math.min(4, Math.max(1, Math.ceil(share * 4))) - 1] : COLORS.background;
  }
  copyDown(pixels, stride, 0, width, 0, height);
  const clampRow = (y) => Math.max(0, Math.min(height - 1, Math.round(y)));
  for (const [extents, color] of [[data.total, TOTAL], [data.running, RUNNING]]) {
    let previous = NaN;
    for (let x = 0; x < width; x++) {
      const first = extents[x * 4];
      if (Number.isNaN(first)) {
        previous = NaN;
        continue;
      }
      let low = Math.min(extents[x * 4 + 1], Number.isNaN(previous) ? first : previous);
      let high = Math.max(extents[x * 4 + 2], Number.isNaN(previous) ? first : previous);
      const top = clampRow(yOf(high) - thickness / 2);
      const bottom = clampRow(yOf(low) + thickness / 2 - 1);
      for (let y = top, at = top * stride + x; y <= bottom; y++, at += stride) pixels[at] = color;
      previous = extents[x * 4 + 3];
    }
  }
}
