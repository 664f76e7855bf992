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
