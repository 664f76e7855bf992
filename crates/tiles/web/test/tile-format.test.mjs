import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeTile } from '../js/tile-format.js';

/** Builds a tile as crates/tiles/src/tile.rs writes it. */
export function encodeTile({ columns, rows, timeline, rw, queue, highlight, states }) {
  const bytes = [];
  const u32 = (v) => bytes.push(v & 255, (v >> 8) & 255, (v >> 16) & 255, (v >>> 24) & 255);
  const u16 = (v) => bytes.push(v & 255, (v >> 8) & 255);
  for (const c of 'SLT1') bytes.push(c.charCodeAt(0));
  u32(columns);
  u32(rows);
  u32((timeline ? 1 : 0) | (rw ? 2 : 0) | (queue ? 4 : 0) | (highlight ? 8 : 0) | (states ? 16 : 0));
  for (const spans of timeline || []) {
    u32(spans.length);
    for (const [x0, x1, [r, g, b]] of spans) {
      u16(x0);
      u16(x1);
      bytes.push(r, g, b, 0);
    }
  }
  for (const column of rw || []) {
    for (const v of [...column.running, ...column.total]) u16(v);
    u16(Math.round(column.wasted * 65535));
  }
  for (const row of queue || []) bytes.push(...row);
  for (const spans of highlight || []) {
    u32(spans.length);
    for (const [x0, x1] of spans) {
      u16(x0);
      u16(x1);
    }
  }
  bytes.push(...(states || []));
  return new Uint8Array(bytes).buffer;
}

test('every layer decodes', () => {
  const buffer = encodeTile({
    columns: 4,
    rows: 2,
    timeline: [[[0, 2, [255, 0, 0]]], [[1, 4, [0, 0, 255]]]],
    rw: [0, 1, 2, 3].map((c) => ({ running: [c, c, c + 1, c], total: [c, c, c + 2, c + 1], wasted: c / 4 })),
    queue: [[0, 1, 2, 3], [4, 5, 6, 255]],
    highlight: [[[1, 3]], []],
    states: [0, 1, 4, 7],
  });
  const tile = decodeTile(buffer);
  assert.equal(tile.columns, 4);
  assert.equal(tile.rows, 2);
  const red = 0xff0000ff;
  const blue = 0xffff0000;
  assert.deepEqual([...tile.colors], [red, red, 0, 0, 0, blue, blue, blue]);
  assert.deepEqual([...tile.rw.total.slice(8, 12)], [2, 2, 4, 3]);
  assert.ok(Math.abs(tile.rw.wasted[3] - 0.75) < 1e-4);
  assert.deepEqual([...tile.queue], [0, 1, 2, 3, 4, 5, 6, 255]);
  assert.deepEqual([...tile.highlight], [0, 1, 1, 0, 0, 0, 0, 0]);
  assert.deepEqual([...tile.states], [0, 1, 4, 7]);
  assert.ok(tile.bytes > 0);
});

test('damaged tiles are refused, not misread', () => {
  const good = encodeTile({ columns: 4, rows: 1, timeline: [[[0, 4, [1, 2, 3]]]] });
  assert.throws(() => decodeTile(good.slice(0, good.byteLength - 2)), /truncated/);
  const bad = new Uint8Array(good.slice(0));
  bad[0] = 0;
  assert.throws(() => decodeTile(bad.buffer), /not a tile/);
  const states = encodeTile({ columns: 4, rows: 1, states: [1, 1, 2, 2] });
  assert.throws(() => decodeTile(states.slice(0, states.byteLength - 1)), /truncated/);
});
