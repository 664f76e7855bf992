// The viewer's speed in headless Chromium (a measurement, not a test): run by
// scripts/bench-view.sh, which starts `schedlens view` on a trace after this script has
// started the browser, so the clock starts when the server answers (the model is built).
//
// Reports: the first complete view (all tiles of the whole trace drawn) after the server
// is ready; when the server's background work is done; then a fixed walk of zoom and pan steps (zoom in ×2 at a point, pan a quarter,
// …, zoom out) — each step timed from the window change to the last needed tile drawn —
// and the drawing time of every frame; the tile requests' times; the page's JS heap and
// tile cache before and after the walk.
//
// Drawing is reported twice: the JS of each frame, and the same with the canvas's own
// rasterising (forced by reading one pixel back), which is what the user waits for.
//
//   node bench.mjs URL [--think MS] [--rounds N] [--json] [--loads] [--frames] [--profile] [--profile-load]
//   --loads: every request of the first view (start → end after navigation);
//   --frames: the parts of the slowest tenth of the frames (render's laps, the rest of the
//   JS as "other", the forced rasterising as "raster");
//   --profile / --profile-load: the page's JS self time per function during the walk /
//   until the first complete view.

import { Browser } from './cdp.mjs';

const args = process.argv.slice(2);
const url = args[0];
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const think = option('--think', 250);
const rounds = option('--rounds', 3);

const quantile = (values, q) => {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const summary = (values) => ({ n: values.length, p50: quantile(values, 0.5), p95: quantile(values, 0.95), max: Math.max(...values) });
const ms = (v) => `${v.toFixed(1)} ms`;

async function startProfile(page) {
  await page.send('Profiler.enable');
  await page.send('Profiler.setSamplingInterval', { interval: 200 });
  await page.send('Profiler.start');
}

/** Stops the profiler and prints the 25 functions that took the most self time. */
async function printProfile(page, title) {
  const { profile } = await page.send('Profiler.stop');
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const f = byId.get(id).callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
    self.set(name, (self.get(name) || 0) + (profile.timeDeltas[i] || 0) / 1000);
  });
  const top = [...self].filter(([n]) => !n.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, 25);
  console.log(title);
  for (const [name, t] of top) console.log(`  ${t.toFixed(0).padStart(6)} ms  ${name}`);
}

const browser = await Browser.launch();
try {
  const page = await browser.newPage({ width: 1600, height: 1000 });
  await page.send('Performance.enable');
  // Wait for the server: it listens once the model is built.
  let ready;
  for (;;) {
    try {
      const response = await fetch(new URL('/api/meta', url));
      if (response.ok) {
        ready = performance.now();
        break;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  // --profile-load: the page's JS CPU profile of the first view, self time per function.
  const profilingLoad = args.includes('--profile-load');
  if (profilingLoad) await startProfile(page);
  await page.send('Page.navigate', { url });
  await page.waitFor("document.querySelector('#app') && document.querySelector('#app').dataset.complete === '1'", 120000);
  const firstView = performance.now() - ready;
  if (profilingLoad) await printProfile(page, 'JS self time until the first complete view:');
  const inPage = await page.evaluate('window.schedlens.firstCompleteAt');
  const timelineInPage = await page.evaluate('window.schedlens.firstTimelineAt');
  // Where the first view's time went: each resource's request and answer after navigation start.
  const loads = await page.evaluate(`performance.getEntriesByType('resource').map((e) => [e.name.replace(location.origin, ''), e.startTime, e.responseEnd])`);
  const heap = async () => {
    const { metrics } = await page.send('Performance.getMetrics');
    const get = (name) => metrics.find((m) => m.name === name).value;
    return { heapMB: get('JSHeapUsedSize') / 2 ** 20, tilesMB: (await page.evaluate('window.schedlens.store.bytes')) / 2 ** 20 };
  };
  // The server then computes the coarse tiles, markers and incidents in the background.
  for (;;) {
    const response = await fetch(new URL('/api/status', url));
    if (!response.ok) throw new Error(`/api/status: HTTP ${response.status} (an older server on this port?)`);
    if ((await response.json()).prepared) break;
    if (performance.now() - ready > 600000) throw new Error('the server did not finish its background work in 10 minutes');
    await new Promise((r) => setTimeout(r, 50));
  }
  const prepared = performance.now() - ready;
  const before = await heap();
  // --profile: the page's JS CPU profile during the walk, self time per function.
  const profiling = args.includes('--profile');
  if (profiling) await startProfile(page);
  // The walk, in the page: each step changes the window and waits until it is drawn.
  const walk = await page.evaluate(`(async () => {
    const app = window.schedlens;
    const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
    const sleep = (t) => new Promise((r) => setTimeout(r, t));
    let seed = 12345;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const steps = [];
    // A frame's drawing with the canvas's own rasterising (deferred until the frame is
    // shown, or forced here by reading a pixel back), not only the JS that records it.
    const flushed = [];
    const render = app.render.bind(app);
    // Each frame's parts (render's own laps, summed over the panels), for the slowest frames.
    const partsNow = () => {
      const sum = {};
      for (const view of app.views) for (const [name, ms] of Object.entries(view.stats.parts)) sum[name] = (sum[name] || 0) + ms;
      return sum;
    };
    const frames = [];
    app.render = () => {
      const before = partsNow();
      const began = performance.now();
      render();
      const drawn = performance.now();
      for (const view of app.views) view.base.getContext('2d').getImageData(0, 0, 1, 1);
      const ms = performance.now() - began;
      flushed.push(ms);
      const parts = {};
      for (const [name, total] of Object.entries(partsNow())) parts[name] = +(total - (before[name] || 0)).toFixed(2);
      parts.other = +(drawn - began - Object.values(parts).reduce((a, b) => a + b, 0)).toFixed(2);
      parts.raster = +(performance.now() - drawn).toFixed(2);
      frames.push({ ms, parts, loading: app.store.inFlight.size });
    };
    const step = async (kind, window) => {
      const drawsBefore = app.stats.drawMs.length;
      const flushedBefore = flushed.length;
      const began = performance.now();
      app.setWindow(window);
      for (;;) {
        await frame();
        if (app.complete) break;
      }
      steps.push({ kind, ms: performance.now() - began, draws: app.stats.drawMs.slice(drawsBefore), flushed: flushed.slice(flushedBefore) });
      await sleep(${think});
    };
    for (let round = 0; round < ${rounds}; round++) {
      await step('whole', [...app.bounds]);
      for (let i = 0; i < 10; i++) {
        const [a, b] = app.state.window;
        const anchor = a + (0.2 + 0.6 * random()) * (b - a);
        await step('zoom in', [anchor - (anchor - a) / 2, anchor + (b - anchor) / 2]);
        const [c, d] = app.state.window;
        const shift = (random() < 0.5 ? -0.25 : 0.25) * (d - c);
        await step('pan', [c + shift, d + shift]);
      }
      for (let i = 0; i < 4; i++) {
        const [a, b] = app.state.window;
        const mid = (a + b) / 2;
        await step('zoom out', [mid - 2 * (b - a), mid + 2 * (b - a)]);
      }
    }
    const tiles = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/tile')).map((e) => e.duration);
    // Full repaints (no band kept) at the last window once its tiles are in: the painting's own cost.
    const repaints = [];
    const firstRepaint = frames.length;
    for (let i = 0; i < 20; i++) {
      for (const view of app.views) {
        for (const band of Object.values(view.bands || {})) band.painted = null;
        view.rwKept = null;
      }
      app.render();
      repaints.push(frames[frames.length - 1]);
      await frame();
    }
    frames.length = firstRepaint;
    return { steps, tiles, frames, repaints };
  })()`);
  const after = await heap();
  const parts = await page.evaluate('JSON.stringify(window.schedlens.views.map((v) => v.stats))');
  if (profiling) await printProfile(page, 'JS self time during the walk:');
  const stepMs = walk.steps.filter((s) => s.kind !== 'whole').map((s) => s.ms);
  const draws = walk.steps.flatMap((s) => s.draws);
  const flushedDraws = walk.steps.flatMap((s) => s.flushed);
  const byKind = {};
  for (const s of walk.steps) (byKind[s.kind] ||= []).push(s.ms);
  const meta = await page.evaluate('window.schedlens.meta.traces.map((t) => `${t.name} (${t.cpus} CPUs)`).join(", ")');
  console.log(`trace: ${meta}`);
  console.log(`first complete view: ${ms(firstView)} after the server was ready (${ms(inPage)} after navigation start)`);
  console.log(`  its per-core timelines were drawn ${ms(firstView - (inPage - timelineInPage))} after the server was ready`);
  if (args.includes('--loads')) {
    for (const [name, start, end] of loads) console.log(`    ${start.toFixed(0).padStart(5)} → ${end.toFixed(0).padStart(5)} ms  ${name.slice(0, 110)}`);
  }
  console.log(`background work (coarse tiles, markers, task index, incidents) done ${ms(prepared)} after the server was ready`);
  const s = summary(stepMs);
  console.log(`zoom/pan steps (think time ${think} ms): n=${s.n} p50 ${ms(s.p50)} p95 ${ms(s.p95)} max ${ms(s.max)}`);
  for (const [kind, values] of Object.entries(byKind)) {
    const k = summary(values);
    console.log(`  ${kind.padEnd(9)} n=${k.n} p50 ${ms(k.p50)} p95 ${ms(k.p95)} max ${ms(k.max)}`);
  }
  const d = summary(draws);
  console.log(`drawing per frame (JS): n=${d.n} p50 ${ms(d.p50)} p95 ${ms(d.p95)} max ${ms(d.max)}`);
  const f = summary(flushedDraws);
  console.log(`drawing per frame with rasterising: n=${f.n} p50 ${ms(f.p50)} p95 ${ms(f.p95)} max ${ms(f.max)}`);
  console.log(`  render's parts (ms, summed over the whole session; bands kept = repaints skipped): ${parts}`);
  if (args.includes('--frames')) {
    const slow = [...walk.frames].sort((a, b) => b.ms - a.ms).slice(0, Math.max(1, Math.ceil(walk.frames.length / 10)));
    console.log('  the slowest tenth of the frames (with rasterising), by part:');
    for (const frame of slow) console.log(`    ${ms(frame.ms)}  ${Object.entries(frame.parts).map(([k, v]) => `${k} ${v}`).join(', ')}; tiles loading ${frame.loading}`);
    const [loading, idle] = [walk.frames.filter((f) => f.loading), walk.frames.filter((f) => !f.loading)].map((list) => summary(list.map((f) => f.ms)));
    const full = summary(walk.repaints.map((f) => f.ms));
    const mean = {};
    for (const f of walk.repaints) for (const [k, v] of Object.entries(f.parts)) mean[k] = +((mean[k] || 0) + v / walk.repaints.length).toFixed(2);
    console.log(`  full repaints at the last window, tiles loaded: n=${full.n} p50 ${ms(full.p50)} p95 ${ms(full.p95)}; mean parts ${Object.entries(mean).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    console.log(`  frames drawn while tiles load: n=${loading.n} p50 ${ms(loading.p50)} p95 ${ms(loading.p95)}; otherwise: n=${idle.n} p50 ${ms(idle.p50)} p95 ${ms(idle.p95)}`);
  }
  const t = summary(walk.tiles);
  console.log(`tile requests: n=${t.n} p50 ${ms(t.p50)} p95 ${ms(t.p95)} max ${ms(t.max)}`);
  console.log(`page memory: JS heap ${before.heapMB.toFixed(1)} MB -> ${after.heapMB.toFixed(1)} MB; tile cache ${before.tilesMB.toFixed(1)} MB -> ${after.tilesMB.toFixed(1)} MB`);
  if (args.includes('--json')) console.log(JSON.stringify({ firstView, inPage, steps: s, draws: d, rasterised: f, tiles: t, before, after }));
} finally {
  await browser.close();
}
