//# allFunctionsCalledOnLoad
// The time axis shared by every panel: which nanoseconds the plot's width stands for,
// how to zoom and pan it, which tile level and tiles cover it, and its ticks. Pure
// functions of numbers, so they are unit-tested with node.

/** Shortest window one can zoom to (ns): a few columns of one nanosecond. */
export const MIN_SPAN = 16;

/** Maps [start, end) ns onto `width` pixels. */
export class TimeScale {
  constructor(start, end, width) {
    this.start = start;
    this.end = end;
    this.width = Math.max(1, width);
  }

  get span() {
    return this.end - this.start;
  }

  get nsPerPx() {
    return this.span / this.width;
  }

  x(t) {
    return ((t - this.start) / this.span) * this.width;
  }

  t(x) {
    return this.start + (x / this.width) * this.span;
  }
}

/**
 * The tile level for a resolution: columns of 2^level ns, the coarsest no wider than a
 * pixel, so each pixel shows at least one column of its own (as `graph` draws).
 */
export function levelFor(nsPerPx, maxLevel) {
  if (!(nsPerPx >= 1)) return 0;
  return Math.max(0, Math.min(maxLevel, Math.floor(Math.log2(nsPerPx))));
}

/** Nanoseconds a tile of `columns` columns at `level` covers. */
export function tileSpan(level, columns) {
  return columns * 2 ** level;
}

/** Indices of the tiles at `level` that cover [start, end), clipped to [first, last). */
export function tileIndices(start, end, level, columns, first, last) {
  const span = tileSpan(level, columns);
  const from = Math.floor(Math.max(start, first) / span);
  const to = Math.floor((Math.min(end, last) - 1) / span);
  const out = [];
  for (let i = from; i <= to; i++) out.push(i);
  return out;
}

/**
 * Keeps a window within what can be looked at: no shorter than MIN_SPAN, no longer
 * than the bounds plus a margin, and not panned off them.
 */
export function clampWindow([start, end], [first, last]) {
  const total = Math.max(MIN_SPAN, last - first);
  const margin = total * 0.05;
  let span = Math.min(Math.max(end - start, MIN_SPAN), total + 2 * margin);
  let s = start;
  if (end - start !== span) s = (start + end) / 2 - span / 2;
  s = Math.max(first - margin, Math.min(s, last + margin - span));
  return [Math.round(s), Math.round(s + span)];
}

/** Zooms by `factor` (<1 zooms in) keeping time `anchor` where it is on screen. */
export function zoom([start, end], factor, anchor, bounds) {
  const span = (end - start) * factor;
  const share = (anchor - start) / (end - start);
  return clampWindow([anchor - share * span, anchor - share * span + span], bounds);
}

/** Moves the window by `delta` ns. */
export function pan([start, end], delta, bounds) {
  return clampWindow([start + delta, end + delta], bounds);
}

/** The largest step of 1, 2 or 5 × 10^k that puts at most `maxTicks` ticks on `span`. */
export function niceStep(span, maxTicks) {
  const rough = Math.max(Math.abs(span), Number.MIN_VALUE) / Math.max(1, maxTicks);
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  for (const m of [1, 2, 5, 10]) {
    if (m * magnitude >= rough) return m * magnitude;
  }
  return 10 * magnitude;
}

/** Tick times (ns) at multiples of a nice step in [start, end], and the step. */
export function ticks(start, end, maxTicks) {
  if (!(end > start)) return { step: 1, values: [] };
  const step = Math.max(1, niceStep(end - start, maxTicks));
  const values = [];
  for (let k = Math.ceil(start / step); k * step <= end; k++) values.push(k * step);
  return { step, values };
}
