import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServerSource, splitBatch } from '../js/source.js';
import { encodeTile } from './tile-format.test.mjs';

/** An `/api/tiles` answer as crates/view/src/server.rs writes it: [status, bytes] per tile. */
function batch(parts) {
  const bytes = [...'SLTB'].map((c) => c.charCodeAt(0));
  const u32 = (v) => bytes.push(v & 255, (v >> 8) & 255, (v >> 16) & 255, (v >>> 24) & 255);
  u32(parts.length);
  for (const [status, body] of parts) {
    u32(status);
    u32(body.length);
    bytes.push(...body);
  }
  return new Uint8Array(bytes).buffer;
}

const tileBytes = (rows) => [...new Uint8Array(encodeTile({ columns: 2, rows: rows.length, queue: rows }))];

test('a tile batch splits into its tiles, each with its status', () => {
  const buffer = batch([[200, [1, 2, 3]], [400, [...new TextEncoder().encode('outside')]]]);
  const parts = splitBatch(buffer);
  assert.deepEqual(parts.map((p) => [p.status, [...new Uint8Array(buffer, p.offset, p.length)]]), [[200, [1, 2, 3]], [400, [...new TextEncoder().encode('outside')]]]);
  assert.throws(() => splitBatch(new Uint8Array(8).buffer), /not a tile batch/);
  assert.throws(() => splitBatch(batch([[200, [1, 2, 3]]]).slice(0, 14)), /truncated/);
});

test('tiles asked for together go to the server as one request', async () => {
  const asked = [];
  const real = globalThis.fetch;
  globalThis.fetch = async (url) => {
    asked.push(url);
    const list = new URLSearchParams(url.split('?')[1]).get('list').split(';');
    const parts = list.map((query) => (query.includes('index=9') ? [400, [...new TextEncoder().encode('outside the trace')]] : [200, tileBytes([[Number(new URLSearchParams(query).get('index')), 0]])]));
    return { ok: true, status: 200, arrayBuffer: async () => batch(parts) };
  };
  try {
    const source = new ServerSource();
    const spec = (index) => ({ level: 3, index, columns: 2, layers: 'rq' });
    const results = await Promise.allSettled([source.tile(0, spec(1)), source.tile(0, spec(2)), source.tile(0, spec(9))]);
    assert.equal(asked.length, 1);
    assert.ok(asked[0].startsWith('/api/tiles?list='));
    assert.deepEqual(results.slice(0, 2).map((r) => r.value.queue[0]), [1, 2]);
    assert.match(results[2].reason.message, /400: outside the trace/);
  } finally {
    globalThis.fetch = real;
  }
});

test('a page that holds the meta does not ask for it', async () => {
  const meta = { traces: [] };
  assert.equal(await new ServerSource('', meta).meta(), meta);
});

test('a page opened while the models are built asks for the meta until it comes', async () => {
  const answers = [
    { status: 202, body: { pending: 'building the models of the traces' } },
    { status: 202, body: { pending: 'building the models of the traces' } },
    { status: 200, body: { traces: [{ name: 'a.dat' }] } },
  ];
  const asked = [];
  const real = globalThis.fetch;
  globalThis.fetch = async (url) => {
    asked.push(url);
    const { status, body } = answers.shift();
    return { ok: status < 300, status, json: async () => body };
  };
  try {
    const meta = await new ServerSource().meta();
    assert.deepEqual(meta, { traces: [{ name: 'a.dat' }] });
    assert.deepEqual(asked, ['/api/meta', '/api/meta', '/api/meta']);
  } finally {
    globalThis.fetch = real;
  }
});
