//# allFunctionsCalledOnLoad
// How times, durations and counts read on the page. Times are integers of nanoseconds
// from the trace's origin (exact in a double up to 2^53 ns, about 104 days).

/** Seconds with every nanosecond: "1.234567890 s", digits grouped by three. */
export function exactTime(ns) {
  const sign = ns < 0 ? '-' : '';
  const abs = Math.abs(Math.round(ns));
  const seconds = Math.floor(abs / 1e9);
  const fraction = String(abs % 1e9).padStart(9, '0');
  return `${sign}${seconds}.${fraction.slice(0, 3)} ${fraction.slice(3, 6)} ${fraction.slice(6)} s`;
}

/** Seconds with as many decimals as `step` (a tick step in ns) needs. */
export function seconds(ns, step = 1) {
  const decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / 1e9) - 1e-9)));
  const value = ns / 1e9;
  return (value + 0).toFixed(decimals).replace(/^-0(\.0*)?$/, (m) => m.slice(1));
}

/** A duration in the unit that suits it: "850 ns", "12.3 µs", "4.56 ms", "1.234 s". */
export function duration(ns) {
  const abs = Math.abs(ns);
  if (abs < 1e3) return `${Math.round(ns)} ns`;
  if (abs < 1e6) return `${trim(ns / 1e3)} µs`;
  if (abs < 1e9) return `${trim(ns / 1e6)} ms`;
  return `${trim(ns / 1e9)} s`;
}

function trim(value) {
  const abs = Math.abs(value);
  return value.toFixed(abs >= 100 ? 1 : abs >= 10 ? 2 : 3);
}

/** A share as a percentage: "12.5%". */
export function percent(part, whole) {
  if (!whole) return '0%';
  const value = (100 * part) / whole;
  return `${value.toFixed(value >= 10 ? 1 : 2)}%`;
}

/** Integers with thin separators: 1234567 → "1 234 567". */
export function count(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '\u2009');
}

/** Text safe to put in HTML. */
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

/** Numbers as ranges, sorted and each once: [5, 0, 1, 2] → "0–2, 5". */
export function ranges(values) {
  const sorted = [...new Set(values)].sort((a, b) => a - b);
  const parts = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j > i ? `${sorted[i]}–${sorted[j]}` : String(sorted[i]));
    i = j;
  }
  return parts.join(', ');
}

/** A set of CPUs: "CPU 5", "CPUs 2–3", with the NUMA nodes when `places` (the meta's) are known: "CPUs 2–3 (node 0)". */
export function cpuSet(cpus, places) {
  if (!cpus.length) return '';
  const noun = cpus.length === 1 ? 'CPU' : 'CPUs';
  const byCpu = new Map((places || []).map((p) => [p.cpu, p]));
  const nodes = cpus.map((cpu) => byCpu.get(cpu)?.node);
  if (!places || nodes.some((node) => node === undefined)) return `${noun} ${ranges(cpus)}`;
  const list = ranges(nodes);
  return `${noun} ${ranges(cpus)} (${/[–,]/.test(list) ? 'nodes' : 'node'} ${list})`;
}

/** Where a CPU sits, for the hover: "core 18 · socket 2 · node 2 · SMT sibling: CPU 36"; '' when unknown. */
export function placeText(cpu, places) {
  const place = (places || []).find((p) => p.cpu === cpu);
  if (!place) return '';
  const siblings = place.siblings.length ? ` · SMT sibling${place.siblings.length > 1 ? 's' : ''}: CPU ${ranges(place.siblings)}` : '';
  return `core ${place.core} · socket ${place.socket} · node ${place.node}${siblings}`;
}

/**
 * How every row's CPU number fits beside rows `rowHeight` CSS px apart (as the figures'
 * row labels): the text size, and the columns the labels take turns in so that labels one
 * above the other in a column never overlap.
 */
export function rowLabelPlan(rowHeight) {
  const font = Math.min(11, Math.max(7, rowHeight - 1));
  return { font, columns: Math.max(1, Math.ceil((font + 1) / Math.max(rowHeight, 0.01))) };
}
