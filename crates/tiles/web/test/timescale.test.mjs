import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_SPAN, TimeScale, clampWindow, levelFor, pan, tileIndices, ticks, zoom } from '../js/timescale.js';

test('a scale maps times to pixels and back', () => {
  const scale = new TimeScale(1000, 3000, 200);
  assert.equal(scale.x(2000), 100);
  assert.equal(scale.t(50), 1500);
  assert.equal(scale.nsPerPx, 10);
});

test('the level is the coarsest whose columns are no wider than a pixel', () => {
  assert.equal(levelFor(1, 44), 0);
  assert.equal(levelFor(0.2, 44), 0);
  assert.equal(levelFor(1023, 44), 9);
  assert.equal(levelFor(1024, 44), 10);
  assert.equal(levelFor(2 ** 60, 44), 44);
});

test('tiles cover the window and stay inside the trace', () => {
  // Level 2, 4 columns: tiles of 16 ns.
  assert.deepEqual(tileIndices(10, 50, 2, 4, 0, 1000), [0, 1, 2, 3]);
  assert.deepEqual(tileIndices(-100, 50, 2, 4, 0, 40), [0, 1, 2]);
  assert.deepEqual(tileIndices(-40, -1, 2, 4, -32, 100), [-2, -1]);
});

test('zoom keeps the anchor in place and pan moves, both within bounds', () => {
  const bounds = [0, 1000];
  assert.deepEqual(zoom([0, 1000], 0.5, 250, bounds), [125, 625]);
  assert.deepEqual(pan([100, 200], 50, bounds), [150, 250]);
  assert.deepEqual(pan([100, 200], -1e6, bounds), [-50, 50], 'at most a 5% margin before the start');
  const tiny = zoom([100, 200], 1e-9, 150, bounds);
  assert.equal(tiny[1] - tiny[0], MIN_SPAN);
  assert.deepEqual(clampWindow([-1e9, 1e9], bounds), [-50, 1050]);
});

test('ticks fall on nice steps', () => {
  assert.deepEqual(ticks(0, 1e9, 5), { step: 2e8, values: [0, 2e8, 4e8, 6e8, 8e8, 1e9] });
  assert.deepEqual(ticks(5, 5, 5).values, []);
});
