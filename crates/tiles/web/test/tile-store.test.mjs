import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TileStore } from '../js/tile-store.js';

const tile = (bytes) => ({ bytes });
const settle = () => new Promise((r) => setTimeout(r, 0));

test('loads the wanted tiles a few at a time, newest wishes first', async () => {
  const asked = [];
  const loaded = [];
  const gates = new Map();
  const store = new TileStore((key) => {
    asked.push(key);
    return new Promise((resolve) => gates.set(key, () => resolve(tile(10))));
  }, { maxInFlight: 2, onLoad: (key) => loaded.push(key) });
  store.want(['a', 'b', 'c', 'd'].map((key) => ({ key, spec: {} })));
  assert.deepEqual(asked, ['a', 'b']);
  store.want(['x', 'c'].map((key) => ({ key, spec: {} })));
  gates.get('a')();
  await settle();
  await settle();
  assert.deepEqual(asked, ['a', 'b', 'x'], 'd was dropped, x comes before c');
  assert.ok(store.has('a'));
  assert.deepEqual(loaded, ['a'], 'onLoad names the tile that came');
  assert.equal(store.pending, 3);
});

test('memory is bounded: least recently used out first', () => {
  const store = new TileStore(() => Promise.reject(new Error('unused')), { maxBytes: 25 });
  store.put('a', tile(10));
  store.put('b', tile(10));
  store.get('a');
  store.put('c', tile(10));
  assert.ok(store.has('a') && store.has('c') && !store.has('b'));
  assert.equal(store.bytes, 20);
});

test('a failed tile is not asked for again', async () => {
  let calls = 0;
  const store = new TileStore(() => {
    calls++;
    return Promise.reject(new Error('400'));
  });
  store.want([{ key: 'k', spec: {} }]);
  await settle();
  await settle();
  store.want([{ key: 'k', spec: {} }]);
  assert.equal(calls, 1);
  assert.equal(store.failed.get('k'), '400');
});
