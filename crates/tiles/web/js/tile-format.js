//# allFunctionsCalledOnLoad
// Decodes the binary tiles the server computes (crates/view/src/tiles.rs documents the
// layout) into typed arrays ready to paint: per row and column a colour, the
// running/waiting extents per column, runqueue lengths, highlighted columns, a followed
// task's state per column. A tile holds pixels' worth of data, never per-event objects.

const MAGIC = 0x31544c53; // "SLT1" read as a little-endian u32

export const LAYER = Object.freeze({ timeline: 1, runningWaiting: 2, runqueue: 4, highlight: 8, states: 16 });

/**
 * @returns {{columns:number, rows:number, bytes:number,
 *   colors: Uint32Array|null,   // rows × columns, 0xAABBGGRR (ImageData order), 0 = background
 *   rw: {running: Uint16Array, total: Uint16Array, wasted: Float32Array}|null, // 4 values per column: first, min, max, last
 *   queue: Uint8Array|null,     // rows × columns
 *   highlight: Uint8Array|null, // rows × columns, 1 where a highlighted task ran
 *   states: Uint8Array|null}    // columns: the followed task's state (0 none, else 1 + its place in STATES, draw.js)
 */
export function decodeTile(buffer, offset = 0, length = buffer.byteLength - offset) {
  const view = new DataView(buffer, offset, length);
  let at = 0;
  const need = (n) => {
    if (at + n > view.byteLength) throw new Error(`tile truncated at byte ${at}`);
  };
  const u32 = () => {
    need(4);
    const v = view.getUint32(at, true);
    at += 4;
    return v;
  };
  const u16 = () => {
    need(2);
    const v = view.getUint16(at, true);
    at += 2;
    return v;
  };
  if (u32() !== MAGIC) throw new Error('not a tile');
  const columns = u32();
  const rows = u32();
  const layers = u32();
  if (columns === 0 || columns > 65535 || rows > 65535) throw new Error('tile size out of range');
  const tile = { columns, rows, bytes: 0, colors: null, rw: null, queue: null, highlight: null, states: null };
  if (layers & LAYER.timeline) {
    const colors = new Uint32Array(rows * columns);
    for (let row = 0; row < rows; row++) {
      const n = u32();
      need(n * 8);
      const base = row * columns;
      for (let end = at + n * 8; at < end; at += 8) {
        // u16 x0, u16 x1; then r, g, b, 0: read as one little-endian word, that is the
        // colour in ImageData's order once its alpha is set.
        const span = view.getUint32(at, true);
        const color = (view.getUint32(at + 4, true) | 0xff000000) >>> 0;
        const x0 = base + (span & 0xffff);
        const x1 = base + Math.min(columns, span >>> 16);
        if (x1 - x0 > 16) colors.fill(color, x0, x1);
        else for (let x = x0; x < x1; x++) colors[x] = color;
      }
    }
    tile.colors = colors;
  }
  if (layers & LAYER.runningWaiting) {
    const running = new Uint16Array(columns * 4);
    const total = new Uint16Array(columns * 4);
    const wasted = new Float32Array(columns);
    need(columns * 18);
    for (let c = 0; c < columns; c++) {
      for (let k = 0; k < 4; k++) running[c * 4 + k] = u16();
      for (let k = 0; k < 4; k++) total[c * 4 + k] = u16();
      wasted[c] = u16() / 65535;
    }
    tile.rw = { running, total, wasted };
  }
  if (layers & LAYER.runqueue) {
    need(rows * columns);
    tile.queue = new Uint8Array(buffer.slice(offset + at, offset + at + rows * columns));
    at += rows * columns;
  }
  if (layers & LAYER.highlight) {
    const marks = new Uint8Array(rows * columns);
    for (let row = 0; row < rows; row++) {
      const n = u32();
      need(n * 4);
      for (let i = 0; i < n; i++) {
        const x0 = u16();
        const x1 = Math.min(columns, u16());
        marks.fill(1, row * columns + x0, row * columns + x1);
      }
    }
    tile.highlight = marks;
  }
  if (layers & LAYER.states) {
    need(columns);
    tile.states = new Uint8Array(buffer.slice(offset + at, offset + at + columns));
    at += columns;
  }
  tile.bytes =
    (tile.colors ? tile.colors.byteLength : 0) +
    (tile.rw ? columns * 20 : 0) +
    (tile.queue ? tile.queue.byteLength : 0) +
    (tile.highlight ? tile.highlight.byteLength : 0) +
    (tile.states ? tile.states.byteLength : 0);
  return tile;
}
