// The viewer's speed in headless Chromium (a measurement, not a test), run by
// scripts/bench-view.sh: starts the browser, waits until it has settled after its start,
// then starts `schedlens view` on a trace, and navigates the moment the server prints
// that it serves (before it builds the models: the page loads meanwhile). The clock starts
// when it prints that the models are built ("ready"; the first view is prepared from then).
//
// Reports: the first complete view (all tiles of the whole trace drawn) after that
// moment, and after the command started; when the server's background work is done; then a fixed walk of zoom and pan
// steps (zoom in ×2 at a point, pan a quarter, …, zoom out) — each step timed from the
// window change to the last needed tile drawn — and the drawing time of every frame; the
// tile requests' times; the page's JS heap and tile cache before and after the walk.
//
// The first view's end: the page sets `#app`'s data-complete to 1 at the end of the
// frame that drew its last tile; an observer set up before the page's own scripts calls
// a CDP binding at once. (--poll: ask every 25 ms instead, as this benchmark once did:
// that adds 0-25 ms and a round trip.) The server's readiness is read from its output,
// not polled: hundreds of fetches made this process's JIT compile in the background
// while the page loaded, taking 60-120 ms of CPU from the browser on 2 cores.
//
// Drawing is reported twice: the JS of each frame, and the same with the canvas's own
// rasterising (forced by reading one pixel back), which is what the user waits for.
//
//   node bench.mjs SCHEDLENS TRACE [--port N] [--think MS] [--rounds N] [--json] [--poll]
//        [--first-only] [--loads] [--frames] [--profile] [--profile-load]
//   --first-only: stop after the first view (no walk);
//   --loads: every request of the first view (start → end after navigation);
//   --frames: the parts of the slowest tenth of the frames (render's laps, the rest of the
//   JS as "other", the forced rasterising as "raster");
//   --profile / --profile-load: the page's JS self time per function during the walk /
//   until the first complete view.

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Browser } from '../../../tiles/tests/browser/cdp.mjs';

const args = process.argv.slice(2);
const [bin, trace] = args;
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const port = option('--port', 8990);
const url = `http://127.0.0.1:${port}/`;
const think = option('--think', 250);
const rounds = option('--rounds', 3);

const quantile = (values, q) => {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const summary = (values) => ({ n: values.length, p50: quantile(values, 0.5), p95: quantile(values, 0.95), max: Math.max(...values) });
const ms = (v) => `${v.toFixed(1)} ms`;

/** A process's resident memory. */
const rss = (pid) => {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return kb ? `${Math.round(kb[1] / 1024)} MB` : '?';
};

/** CPU time (ms) used so far by a process and its descendants still running. */
function treeCpuMs(root) {
  const children = new Map();
  const cpu = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Fields after the command (which may hold spaces): state, ppid, ... utime (14), stime (15).
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(fields[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
      cpu.set(Number(name), ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
    } catch {
      // The process ended meanwhile.
    }
  }
  let total = 0;
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop();
    total += cpu.get(pid) || 0;
    todo.push(...(children.get(pid) || []));
  }
  return total;
}

/** Waits until the browser has settled after its start (under 2% of a core over half a
 *  second; 15 s at most), as a browser the user already has open would be: a fresh
 *  Chromium keeps up to a core and a half busy for seconds, taking it from the server
 *  and the page being measured. Returns how long that took. */
async function browserSettled(pid) {
  const began = performance.now();
  let before = treeCpuMs(pid);
  while (performance.now() - began < 15000) {
    await new Promise((r) => setTimeout(r, 500));
    const now = treeCpuMs(pid);
    if (now - before < 10) break;
    before = now;
  }
  return performance.now() - began;
}

/**
 * Starts `schedlens view` on the trace: `serving` resolves when it prints that it serves
 * (it listens before it builds the models), `ready` when it prints that the models are
 * built.
 */
function startServer() {
  const server = spawn(bin, ['view', '--no-open', '--port', String(port), trace], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const printed = (word) =>
    new Promise((resolve, reject) => {
      const read = () => {
        if (output.includes(word)) resolve(performance.now());
      };
      server.stdout.on('data', read);
      server.stderr.on('data', read);
      server.on('exit', (code) => reject(new Error(`schedlens view exited (${code}) before "${word}":\n${output}`)));
    });
  server.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  server.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  return { server, serving: printed('schedlens view: serving'), ready: printed('schedlens view: ready') };
}

/** Stops the server (Ctrl-C), killing it if it does not end in 5 s. */
async function stopServer(server) {
  if (server.exitCode !== null) return;
  const ended = new Promise((resolve) => server.on('exit', resolve));
  server.kill('SIGINT');
  const timer = setTimeout(() => server.kill('SIGKILL'), 5000);
  await ended;
  clearTimeout(timer);
}

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
let server;
try {
  const page = await browser.newPage({ width: 1600, height: 1000 });
  await page.send('Performance.enable');
  // --profile-load: the page's JS CPU profile of the first view, self time per function.
  const profilingLoad = args.includes('--profile-load');
  if (profilingLoad) await startProfile(page);
  // The page says when its first view is complete: `#app`'s data-complete turns 1 at the
  // end of the frame that drew the last tile. --poll asks for it every 25 ms instead
  // (the older method: adds 0-25 ms and a round trip); otherwise an observer set up
  // before the page's own scripts calls a binding at once (a message to this process).
  const polling = args.includes('--poll');
  let signalled;
  if (!polling) {
    await page.send('Runtime.addBinding', { name: 'schedlensBenchComplete' });
    signalled = new Promise((resolve) => {
      const listener = (message) => {
        if (message.method === 'Runtime.bindingCalled' && message.params.name === 'schedlensBenchComplete') {
          browser.listeners.delete(listener);
          resolve(performance.now());
        }
      };
      browser.listeners.add(listener);
    });
    await page.send('Page.addScriptToEvaluateOnNewDocument', {
      source: `new MutationObserver((records, observer) => {
        const app = document.querySelector('#app');
        if (app && app.dataset.complete === '1') {
          observer.disconnect();
          schedlensBenchComplete('');
        }
      }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-complete'] });`,
    });
  }
  // The browser is up and settled: start the server and navigate as soon as it serves.
  console.log(`browser settled after its start in ${ms(await browserSettled(browser.child.pid))}`);
  const began = performance.now();
  const started = startServer();
  server = started.server;
  const serving = await started.serving;
  const navigated = performance.now();
  await page.send('Page.navigate', { url });
  const ready = await started.ready;
  console.log(`serving after ${ms(serving - began)}; models built ("ready") after ${ms(ready - began)}; server RSS ${rss(server.pid)}`);
  const completeAt = polling
    ? (await page.waitFor("document.querySelector('#app') && document.querySelector('#app').dataset.complete === '1'", 120000), performance.now())
    : await Promise.race([signalled, new Promise((_, reject) => setTimeout(() => reject(new Error('no complete view in 120 s')), 120000).unref())]);
  const firstView = completeAt - ready;
  const fromNavigation = completeAt - navigated;
  if (profilingLoad) await printProfile(page, 'JS self time until the first complete view:');
  const inPage = await page.evaluate('window.schedlens.firstCompleteAt');
  const timelineInPage = await page.evaluate('window.schedlens.firstTimelineAt');
  // Where the first view's time went: each resource's request and answer after navigation start.
  const loads = await page.evaluate(`performance.getEntriesByType('resource').map((e) => [e.name.replace(location.origin, ''), e.startTime, e.responseEnd])`);
  const meta = await page.evaluate('window.schedlens.meta.traces.map((t) => `${t.name} (${t.cpus} CPUs)`).join(", ")');
  console.log(`trace: ${meta}`);
  const method = polling ? 'polled every 25 ms' : 'signalled by the page';
  console.log(`first complete view (${method}): ${ms(firstView)} after the models were built, ${ms(completeAt - began)} after the command started, ${ms(fromNavigation)} after the navigation was sent (${ms(inPage)} after the page's navigation start)`);
  console.log(`  its per-core timelines were drawn ${ms(firstView - (inPage - timelineInPage))} after the models were built`);
  if (args.includes('--loads')) {
    for (const [name, start, end] of loads) console.log(`    ${start.toFixed(0).padStart(5)} → ${end.toFixed(0).padStart(5)} ms  ${name.slice(0, 110)}`);
  }
  if (args.includes('--json')) console.log(JSON.stringify({ method: polling ? 'poll' : 'signal', firstView, fromNavigation, inPage }));
  // --first-only: no walk.
  if (!args.includes('--first-only')) {
    await walkAndReport(page, ready);
    console.log(`server RSS after the walk: ${rss(server.pid)}`);
  }
} finally {
  await browser.close();
  if (server) await stopServer(server);
}

/** The walk after the first view, and what it measured. */
async function walkAndReport(page, ready) {
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
  console.log(`background work (coarse tiles, markers, task index, incidents) done ${ms(prepared)} after the models were built`);
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
  if (args.includes('--json')) console.log(JSON.stringify({ steps: s, draws: d, rasterised: f, tiles: t, before, after }));
}
