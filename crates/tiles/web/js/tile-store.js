//# allFunctionsCalledOnLoad
// Tiles in the browser: a byte-bounded cache (least recently used out first, so memory
// stays flat however long the trace or the session) and a loader that asks the data
// source for the tiles the current view wants, a few at a time, newest wishes first —
// tiles a fast zoom has already left behind are never requested.

export class TileStore {
  /**
   * @param {(key: string, spec: object) => Promise<object>} load  fetches and decodes a tile
   * @param {{maxBytes?: number, maxInFlight?: number, onLoad?: (key: string) => void}} options
   *   `onLoad(key)` runs when a tile has come (or failed)
   */
  constructor(load, { maxBytes = 128 << 20, maxInFlight = 4, onLoad = () => {} } = {}) {
    this.load = load;
    this.maxBytes = maxBytes;
    this.maxInFlight = maxInFlight;
    this.onLoad = onLoad;
    this.tiles = new Map(); // key → tile, in order of use (oldest first)
    this.bytes = 0;
    this.inFlight = new Set();
    this.queue = []; // [{key, spec}] wanted, most wanted first
    this.failed = new Map(); // key → error message
  }

  /** A cached tile (marked as just used), or undefined. */
  get(key) {
    const tile = this.tiles.get(key);
    if (tile) {
      this.tiles.delete(key);
      this.tiles.set(key, tile);
    }
    return tile;
  }

  /** Whether a tile is cached, without marking it used. */
  has(key) {
    return this.tiles.has(key);
  }

  put(key, tile) {
    const old = this.tiles.get(key);
    if (old) this.bytes -= old.bytes;
    this.tiles.delete(key);
    this.tiles.set(key, tile);
    this.bytes += tile.bytes;
    for (const [oldest, dropped] of this.tiles) {
      if (this.bytes <= this.maxBytes || this.tiles.size <= 1) break;
      this.tiles.delete(oldest);
      this.bytes -= dropped.bytes;
    }
  }

  /**
   * Replaces the wishes: these tiles, most wanted first. Cached ones and ones being
   * loaded are skipped; earlier wishes not repeated are dropped.
   */
  want(wishes) {
    this.queue = wishes.filter((w) => !this.tiles.has(w.key) && !this.inFlight.has(w.key) && !this.failed.has(w.key));
    this.pump();
  }

  /** Tiles wanted or loading. */
  get pending() {
    return this.queue.length + this.inFlight.size;
  }

  pump() {
    while (this.inFlight.size < this.maxInFlight && this.queue.length) {
      const { key, spec } = this.queue.shift();
      this.inFlight.add(key);
      this.load(key, spec)
        .then((tile) => this.put(key, tile))
        .catch((error) => this.failed.set(key, String(error && error.message ? error.message : error)))
        .finally(() => {
          this.inFlight.delete(key);
          this.pump();
          this.onLoad(key);
        });
    }
  }

  /** Forgets every tile (when what they show changed for good). */
  clear() {
    this.tiles.clear();
    this.bytes = 0;
    this.failed.clear();
  }
}
