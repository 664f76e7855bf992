import { test } from 'node:test';
import assert from 'node:assert/strict';
import { count, duration, escapeHtml, exactTime, percent, seconds } from '../js/format.js';

test('exact times show every nanosecond', () => {
  assert.equal(exactTime(1234567890), '1.234 567 890 s');
  assert.equal(exactTime(5), '0.000 000 005 s');
  assert.equal(exactTime(-1500000000), '-1.500 000 000 s');
});

test('tick labels have the decimals their step needs', () => {
  assert.equal(seconds(2e8, 1e8), '0.2');
  assert.equal(seconds(1234567, 1e3), '0.001235');
  assert.equal(seconds(3e9, 1e9), '3');
  assert.equal(seconds(-0.0, 1e8), '0.0');
});

test('durations pick their unit', () => {
  assert.equal(duration(850), '850 ns');
  assert.equal(duration(12345), '12.35 µs');
  assert.equal(duration(4.56e6), '4.560 ms');
  assert.equal(duration(1.234e9), '1.234 s');
  assert.equal(duration(150e6), '150.0 ms');
});

test('shares, counts and HTML', () => {
  assert.equal(percent(1, 8), '12.5%');
  assert.equal(percent(1, 0), '0%');
  assert.equal(count(1234567), '1\u2009234\u2009567');
  assert.equal(escapeHtml('<a href="x">&</a>'), '&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;');
});

test('CPU sets read as ranges with their NUMA nodes', async () => {
  const { cpuSet, placeText, ranges } = await import('../js/format.js');
  assert.equal(ranges([5, 0, 1, 2, 7, 8, 2]), '0–2, 5, 7–8');
  const places = Array.from({ length: 64 }, (_, cpu) => ({
    cpu, core: cpu >> 1, socket: cpu >> 4, node: cpu >> 4, siblings: [cpu ^ 1],
  }));
  assert.equal(cpuSet([3, 2], places), 'CPUs 2–3 (node 0)');
  assert.equal(cpuSet([17], places), 'CPU 17 (node 1)');
  assert.equal(cpuSet([...Array(32).keys()], places), 'CPUs 0–31 (nodes 0–1)');
  assert.equal(cpuSet([2, 3], null), 'CPUs 2–3');
  assert.equal(cpuSet([2, 70], places), 'CPUs 2, 70');
  assert.equal(placeText(37, places), 'core 18 · socket 2 · node 2 · SMT sibling: CPU 36');
  assert.equal(placeText(37, null), '');
});

test('every row gets a label that does not overlap its neighbours', async () => {
  const { rowLabelPlan } = await import('../js/format.js');
  assert.deepEqual(rowLabelPlan(44), { font: 11, columns: 1 });
  for (const height of [10, 8, 5, 3, 2, 0.5]) {
    const { font, columns } = rowLabelPlan(height);
    assert.ok(columns * height >= font + 1, `${height}: ${font} ${columns}`);
    assert.ok(font >= 7);
  }
});
