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
