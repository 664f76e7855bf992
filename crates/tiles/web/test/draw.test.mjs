import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COLORS, HEAT, STATES, dim, packColor, paintQueue, paintStates, paintTimeline, runningWaitingColumns, sampleColumns, stateNamed } from '../js/draw.js';

const RED = packColor('#ff0000');
const BLUE = packColor('#0000ff');

/** A 1-CPU tile of 4 columns of 10 ns starting at 0: red, red, idle, blue. */
function tile() {
  return {
    columns: 4,
    rows: 1,
    colors: new Uint32Array([RED, RED, 0, BLUE]),
    queue: new Uint8Array([1, 3, 0, 2]),
    rw: { running: new Uint16Array([1, 1, 1, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1]), total: new Uint16Array([1, 1, 1, 1, 1, 1, 3, 2, 0, 0, 0, 0, 1, 1, 1, 1]), wasted: new Float32Array([0, 0.5, 0, 0]) },
    highlight: new Uint8Array([0, 1, 0, 0]),
  };
}

const finder = (t0) => (t) => (t >= 0 && t < 40 ? { tile: t0, start: 0, columnNs: 10 } : null);

test('colours: packed for ImageData, dimmed toward white', () => {
  assert.equal(RED, 0xff0000ff);
  assert.equal(dim(0xff000000), 0xffb2b2b2);
  assert.equal(dim(COLORS.background), COLORS.background);
});

test('each pixel reads the column at its centre and spans the columns it covers', () => {
  const t = tile();
  // 8 pixels of 5 ns: two per column; then 2 pixels of 20 ns: two columns each.
  const fine = sampleColumns(8, 0, 5, finder(t));
  assert.deepEqual([...fine.center], [0, 0, 1, 1, 2, 2, 3, 3]);
  const coarse = sampleColumns(2, 0, 20, finder(t));
  assert.deepEqual([...coarse.first], [0, 2]);
  assert.deepEqual([...coarse.last], [1, 3]);
  const outside = sampleColumns(2, 40, 5, finder(t));
  assert.deepEqual([...outside.slot], [-1, -1]);
});

test('a timeline row is painted with the columns colours, a missing tile as missing', () => {
  const t = tile();
  const pixels = new Uint32Array(6 * 4);
  const sample = sampleColumns(6, 0, 8, finder(t)); // centres at 4, 12, 20, 28, 36, 44 ns
  paintTimeline(pixels, 6, { x0: 0, top: 0, width: 6, rowPx: 4, inset: 1 }, [0], sample);
  const row = [...pixels.slice(6, 12)];
  assert.deepEqual(row, [RED, RED, COLORS.background, COLORS.background, BLUE, COLORS.missing]);
  assert.deepEqual([...pixels.slice(0, 6)], [0, 0, 0, 0, 0, 0], 'the inset stays unpainted');
});

test('a followed task stands out: its columns in full colour, the rest dimmed', () => {
  const t = tile();
  const pixels = new Uint32Array(4);
  const sample = sampleColumns(4, 0, 10, finder(t));
  paintTimeline(pixels, 4, { x0: 0, top: 0, width: 4, rowPx: 1, inset: 0 }, [0], sample, { highlight: { sample, color: null } });
  assert.deepEqual([...pixels], [dim(RED), RED, COLORS.background, dim(BLUE)]);
});

test('running/waiting keeps the extremes of the columns a pixel covers', () => {
  const sample = sampleColumns(2, 0, 20, finder(tile()));
  const out = runningWaitingColumns(sample, 2);
  assert.deepEqual([...out.total.slice(0, 4)], [1, 1, 3, 2]);
  assert.deepEqual([...out.running.slice(4, 8)], [0, 0, 1, 1]);
  assert.deepEqual([...out.wasted], [0.25, 0]);
});

test('a runqueue strip shows the longest queue of the columns each pixel covers', () => {
  const t = tile(); // queue lengths 1, 3, 0, 2
  const at = (width, nsPerPx) => {
    const pixels = new Uint32Array(width * 2);
    paintQueue(pixels, width, { x0: 0, top: 0, width, rowPx: 2 }, [0], sampleColumns(width, 0, nsPerPx, finder(t)));
    assert.deepEqual([...pixels.slice(width)], [...pixels.slice(0, width)], 'every row of a strip alike');
    return [...pixels.slice(0, width)];
  };
  assert.deepEqual(at(4, 10), [HEAT[1], HEAT[3], HEAT[0], HEAT[2]]);
  assert.deepEqual(at(3, 13), [HEAT[3], HEAT[3], HEAT[2]], 'pixels over two or three columns');
  assert.deepEqual(at(1, 40), [HEAT[3]], 'a pixel over every column');
  assert.deepEqual(at(5, 10).slice(4), [COLORS.missing], 'no tile: missing');
});

test('the state track: each pixel the state of its column, in Perfetto\'s colours', () => {
  // 4 columns of 10 ns: no state yet, running, runnable after a preemption, sleeping.
  const t = { columns: 4, rows: 1, states: new Uint8Array([0, 1, 3, 4]) };
  const width = 8;
  const rowPx = 5;
  const pixels = new Uint32Array(width * rowPx).fill(COLORS.background);
  paintStates(pixels, width, { x0: 0, top: 0, width, rowPx }, sampleColumns(width, 0, 5, finder(t)));
  const at = (x, y) => pixels[y * width + x];
  assert.equal(at(0, 0), COLORS.background, 'before the task was seen: blank');
  assert.equal(at(2, 0), packColor('#317d31'), 'running: dark green');
  assert.equal(at(3, 4), packColor('#317d31'));
  assert.equal(at(5, 0), packColor('#99ba36'), 'runnable: lime');
  assert.equal(at(4, 0), packColor('#6e8f12'), 'preempted: hatched');
  assert.equal(at(6, 2), packColor('#a8a8a8'), 'sleeping: a line across the middle');
  assert.equal(at(6, 0), COLORS.background);
  const missing = new Uint32Array(width * rowPx);
  paintStates(missing, width, { x0: 0, top: 0, width, rowPx }, sampleColumns(width, 40, 5, finder(t)));
  assert.equal(missing[0], COLORS.missing, 'no tile: missing');
  assert.equal(STATES.length, 7);
  assert.equal(stateNamed('uninterruptible').css, '#ff9900');
  assert.equal(stateNamed('what').name, 'unknown');
});
