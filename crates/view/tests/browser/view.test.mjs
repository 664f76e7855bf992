// `schedlens view` in a real browser: Debian's Chromium, headless, driven over the
// DevTools protocol (crates/tiles/tests/browser/cdp.mjs). Loads real fixtures and checks
// what is drawn (pixels of known bars, a screenshot against a golden image with a
// tolerance), zoom, pan, hover, following a task, an incident, a range selection, the URL
// state, export, markers and several traces on one time scale.
//
//   SCHEDLENS_BIN=target/debug/schedlens node --test crates/view/tests/browser/
//   SCHEDLENS_BLESS=1 ... rewrites the golden images.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Browser, testTargets } from '../../../tiles/tests/browser/cdp.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { traces, bin, chromium, skip } = testTargets('browser tests');

/** Starts `schedlens view` on fixtures; resolves to {url, stop}. */
function serve(files, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['view', '--no-open', '--port', '0', ...extra, ...files.map((f) => join(traces, f))], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /serving (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve({ url: m[1], stop: () => new Promise((r) => (child.kill('SIGINT'), child.on('exit', r))), child });
    });
    child.stderr.on('data', () => {});
    child.on('exit', (code) => reject(new Error(`schedlens view exited with ${code}: ${out}`)));
  });
}

/** Opens the viewer and waits until everything it shows is drawn. */
async function open(browser, url, { width = 1280, height = 800 } = {}) {
  const page = await browser.newPage({ width, height });
  await page.goto(url);
  await settled(page);
  return page;
}

async function settled(page) {
  await page.waitFor("window.schedlens && window.schedlens.views.length && window.schedlens.complete && !window.schedlens.frame");
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
}

async function incidentsReady(page) {
  await page.waitFor("window.schedlens.incidents.length && window.schedlens.incidents.every((i) => i && i.status === 'ready')");
}

/** Page coordinates of time t (ns from the origin) on a CPU's row of trace `trace`. */
function point(page, trace, cpu, t) {
  return page.evaluate(`(() => {
    const app = window.schedlens;
    const view = app.views[${trace}];
    const rect = view.overlay.getBoundingClientRect();
    const x = view.geometry.x0 + app.scale().x(${t});
    return { x: rect.left + x, y: rect.top + view.rowCenter(${cpu}), canvasX: Math.floor(x), canvasY: Math.floor(view.rowCenter(${cpu})) };
  })()`);
}

/** Zooms to a run of CPU 0 of the first trace and moves the mouse to its middle; where. */
async function hoverMiddle(page, run) {
  const margin = 3 * (run.end - run.start);
  await page.evaluate(`window.schedlens.setWindow([${run.start - margin}, ${run.end + margin}])`);
  await settled(page);
  const at = await point(page, 0, 0, Math.round((run.start + run.end) / 2));
  await page.move(at.x, at.y);
  return at;
}

function pixel(page, trace, x, y) {
  return page.evaluate(`[...document.querySelectorAll('section.trace canvas.base')[${trace}].getContext('2d').getImageData(${x}, ${y}, 1, 1).data.slice(0, 3)]`);
}

const hex = (rgb) => `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
const api = async (url, path) => (await fetch(new URL(path, url))).json();

/** Compares a PNG with a golden file in the page (decoding there): share of differing pixels. */
async function compareWithGolden(page, png, name) {
  const file = join(here, 'golden', name);
  if (process.env.SCHEDLENS_BLESS || !existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, png);
    if (!process.env.SCHEDLENS_BLESS) console.log(`# wrote missing golden ${file}`);
    return 0;
  }
  const golden = readFileSync(file);
  return page.evaluate(`(async () => {
    // An <img> (the page's CSP allows data: images, not fetching data: URLs).
    const load = async (b64) => { const img = new Image(); img.src = 'data:image/png;base64,' + b64; await img.decode(); return img; };
    const [a, b] = await Promise.all([load('${png.toString('base64')}'), load('${golden.toString('base64')}')]);
    if (a.width !== b.width || a.height !== b.height) return 1;
    const data = (img) => { const c = new OffscreenCanvas(img.width, img.height); const x = c.getContext('2d'); x.drawImage(img, 0, 0); return x.getImageData(0, 0, img.width, img.height).data; };
    const da = data(a), db = data(b);
    let differing = 0;
    for (let i = 0; i < da.length; i += 4) {
      if (Math.abs(da[i] - db[i]) > 40 || Math.abs(da[i + 1] - db[i + 1]) > 40 || Math.abs(da[i + 2] - db[i + 2]) > 40) differing++;
    }
    return differing / (da.length / 4);
  })()`);
}

describe('schedlens view in Chromium', { skip }, () => {
  let browser;
  let server;
  let pinned; // what the server says about the pinned spinners

  before(async () => {
    browser = await Browser.launch(chromium);
    server = await serve(['scenario-pinned-v7zstd.dat']);
    const meta = await api(server.url, '/api/meta');
    const stats = await api(server.url, `/api/stats?trace=0&start=${meta.traces[0].start}&end=${meta.traces[0].end}`);
    const spin = stats.commands.find((c) => c.comm === 'pinned-spin');
    pinned = { first: spin.firstRun, last: spin.lastRun, middle: Math.round((spin.firstRun + spin.lastRun) / 2) };
    pinned.run = await api(server.url, `/api/at?trace=0&cpu=0&t=${pinned.middle}&span=1`);
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
  });

  test('draws the known bars: a pinned spinner on CPU 0, CPU 1 idle', async () => {
    const page = await open(browser, server.url);
    assert.deepEqual(page.errors, []);
    // Zoom to the run under the middle of the spinners' stretch: its bar is its pid's colour.
    const run = pinned.run;
    await page.evaluate(`window.schedlens.setWindow([${run.start - (run.end - run.start)}, ${run.end + (run.end - run.start)}])`);
    await settled(page);
    const middle = Math.round((run.start + run.end) / 2);
    const p0 = await point(page, 0, 0, middle);
    assert.equal(hex(await pixel(page, 0, p0.canvasX, p0.canvasY)), run.pidColor);
    const p1 = await point(page, 0, 1, middle);
    assert.equal(hex(await pixel(page, 0, p1.canvasX, p1.canvasY)), '#ffffff', 'CPU 1 idles');
    await page.close();
  });

  test('looks like the golden screenshot', async () => {
    const page = await open(browser, server.url, { width: 1280, height: 760 });
    await incidentsReady(page);
    await page.evaluate('window.schedlens.panels.render()');
    const png = await page.screenshot();
    const differing = await compareWithGolden(page, png, 'pinned-whole.png');
    assert.ok(differing < 0.01, `${(differing * 100).toFixed(2)}% of the pixels differ from golden/pinned-whole.png`);
    await page.close();
  });

  test('wheel zooms at the mouse, drag and keys pan, the URL follows', async () => {
    const page = await open(browser, server.url);
    const [a, b] = await page.evaluate('window.schedlens.state.window');
    const at = await point(page, 0, 0, pinned.middle);
    await page.wheel(at.x, at.y, -400);
    await settled(page);
    const [c, d] = await page.evaluate('window.schedlens.state.window');
    assert.ok(d - c < (b - a) / 2, `zoomed in: ${d - c} < ${(b - a) / 2}`);
    const anchorBefore = (pinned.middle - a) / (b - a);
    const anchorAfter = (pinned.middle - c) / (d - c);
    assert.ok(Math.abs(anchorBefore - anchorAfter) < 0.01, 'the time under the mouse stays put');
    await page.drag(at.x, at.y, at.x - 200, at.y);
    await settled(page);
    const [e, f] = await page.evaluate('window.schedlens.state.window');
    assert.ok(e > c && Math.abs(f - e - (d - c)) <= 2, 'dragging left moves later in time');
    await page.key('ArrowLeft', 'ArrowLeft', 37);
    const [g] = await page.evaluate('window.schedlens.state.window');
    assert.ok(g < e);
    await page.waitFor(`location.hash.startsWith('#w=${g},')`);
    await page.close();
  });

  test('hover tells the run: task, CPU, start, length, how it ended, the wait before', async () => {
    const page = await open(browser, server.url);
    const run = pinned.run;
    await hoverMiddle(page, run);
    const tip = await page.waitFor("!document.querySelector('#tooltip').hidden && document.querySelector('#tooltip').textContent.includes('pinned-spin') && document.querySelector('#tooltip').textContent");
    assert.match(tip, /CPU 0/);
    assert.match(tip, new RegExp(`pinned-spin:${run.pid}`));
    assert.match(tip, /preempted/);
    assert.match(tip, /waited.* in the runqueue/);
    const cursor = await page.evaluate('window.schedlens.overlay.cursor');
    assert.ok(Math.abs(cursor - (run.start + run.end) / 2) < (run.end - run.start) / 20);
    assert.match(await page.evaluate("document.querySelector('#status').textContent"), /cursor \d+\.\d{3} \d{3} \d{3} s/);
    await page.close();
  });

  test('clicking a run follows its task: its runs stay coloured, others dim', async () => {
    const page = await open(browser, server.url);
    const run = pinned.run;
    const at = await hoverMiddle(page, run);
    await page.waitFor("window.schedlens.overlay.hover && window.schedlens.overlay.hover.run");
    await page.click(at.x, at.y);
    await page.waitFor(`window.schedlens.state.follow && window.schedlens.state.follow.task === ${run.task}`);
    await page.waitFor(`window.schedlens.views[0].task && window.schedlens.views[0].task.task === ${run.task}`);
    await settled(page);
    assert.equal(hex(await pixel(page, 0, at.canvasX, at.canvasY)), run.pidColor, 'the followed run keeps its colour');
    // The run before it on CPU 0 is the other spinner's: dimmed toward white.
    const other = await api(server.url, `/api/at?trace=0&cpu=0&t=${run.start - 1}&span=1`);
    assert.notEqual(other.task, run.task);
    const po = await point(page, 0, 0, Math.round((other.start + other.end) / 2));
    const dimmed = await pixel(page, 0, po.canvasX, po.canvasY);
    assert.ok(dimmed.every((v) => v >= 150), `dimmed: ${dimmed}`);
    const panel = await page.evaluate("document.querySelector('#side .body').textContent");
    assert.match(panel, /pinned-spin/);
    assert.match(panel, /runs/);
    await page.waitFor(`location.hash.includes('f=0.${run.task}')`);
    await page.key('Escape', 'Escape', 27);
    assert.equal(await page.evaluate('window.schedlens.state.follow'), null);
    await page.close();
  });

  test('an incident: ranked in the side panel, a click zooms to it with its CPUs marked', async () => {
    const page = await open(browser, server.url);
    await incidentsReady(page);
    await page.evaluate('window.schedlens.panels.render()');
    const first = await page.evaluate("(() => { const r = document.querySelector('li.incident').getBoundingClientRect(); return { x: r.left + 20, y: r.top + 10 }; })()");
    const incident = await page.evaluate('window.schedlens.incidents[0].incidents[0]');
    assert.equal(incident.rank, 1);
    await page.click(first.x, first.y);
    await settled(page);
    const [a, b] = await page.evaluate('window.schedlens.state.window');
    assert.ok(a <= incident.start && b >= incident.end, 'the incident is in view');
    assert.ok(b - a <= 2.5 * (incident.end - incident.start) + 1000);
    assert.deepEqual(await page.evaluate('window.schedlens.state.incident'), { trace: 0, rank: 1 });
    assert.equal(await page.evaluate("document.querySelectorAll('li.incident.active').length"), 1);
    const marked = await page.evaluate('window.schedlens.views[0].highlightedTasks()');
    assert.ok(marked.length >= 1, 'its tasks are highlighted');
    await page.close();
  });

  test('selecting a range shows its statistics and the incidents inside', async () => {
    const page = await open(browser, server.url);
    await incidentsReady(page);
    const a = await point(page, 0, 0, pinned.first);
    const b = await point(page, 0, 0, pinned.last);
    await page.drag(a.x, a.y, b.x, b.y, 8 /* shift */);
    await page.waitFor("window.schedlens.state.selection && document.querySelector('#side .body table.stats')");
    const text = await page.evaluate("document.querySelector('#side .body').textContent");
    assert.match(text, /Per command/);
    assert.match(text, /pinned-spin/);
    assert.match(text, /Per CPU/);
    assert.match(text, /Incidents \(\d+\)/);
    await page.key('z');
    await settled(page);
    const [s, e] = await page.evaluate('window.schedlens.state.window');
    const sel = await page.evaluate('window.schedlens.state.selection');
    assert.deepEqual([s, e], sel);
    await page.close();
  });

  test('a link reproduces the view', async () => {
    const run = pinned.run;
    const hash = `#w=${run.start - 1000000},${run.end + 1000000}&c=command&f=0.${run.task}&sel=${run.start},${run.end}`;
    const page = await open(browser, server.url + hash);
    assert.deepEqual(await page.evaluate('window.schedlens.state.window'), [run.start - 1000000, run.end + 1000000]);
    assert.equal(await page.evaluate("document.querySelector('#color').value"), 'command');
    assert.deepEqual(await page.evaluate('window.schedlens.state.follow'), { trace: 0, task: run.task });
    assert.deepEqual(await page.evaluate('window.schedlens.state.selection'), [run.start, run.end]);
    const at = await point(page, 0, 0, Math.round((run.start + run.end) / 2));
    assert.equal(hex(await pixel(page, 0, at.canvasX, at.canvasY)), run.commandColor, 'coloured by command');
    await page.close();
  });

  test('export downloads the view through the graph renderer, and nothing leaves 127.0.0.1', async () => {
    const page = await open(browser, server.url);
    const answers = await page.evaluate(`(async () => {
      const app = window.schedlens;
      const out = {};
      for (const format of ['png', 'svg', 'pdf']) {
        const url = app.source.exportUrl({ format, start: app.state.window[0], end: app.state.window[1], color: 'pid', rw: 1, q: 1, width: 900 });
        const response = await fetch(url);
        const bytes = new Uint8Array(await response.arrayBuffer());
        out[format] = { type: response.headers.get('content-type'), disposition: response.headers.get('content-disposition'), head: String.fromCharCode(...bytes.slice(0, 5)) };
      }
      out.origins = [...new Set(performance.getEntriesByType('resource').map((e) => new URL(e.name).host))];
      return out;
    })()`);
    assert.equal(answers.png.type, 'image/png');
    assert.equal(answers.png.head.slice(1, 4), 'PNG');
    assert.match(answers.png.disposition, /attachment; filename="scenario-pinned-v7zstd-view.png"/);
    assert.equal(answers.svg.head, '<svg ');
    assert.equal(answers.pdf.head, '%PDF-');
    assert.deepEqual(answers.origins, [new URL(server.url).host]);
    await page.close();
  });
});

describe('several traces, markers', { skip }, () => {
  let browser;
  let server;

  before(async () => {
    browser = await Browser.launch(chromium);
    server = await serve(['markers-v7zstd.dat', 'scenario-overload-v7zstd.dat']);
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
  });

  test('two traces share one time scale and zoom together; markers are labelled lines', async () => {
    const page = await open(browser, server.url);
    assert.equal(await page.evaluate("document.querySelectorAll('section.trace').length"), 2);
    await page.waitFor('window.schedlens.views[0].markers.length === 5');
    const labels = await page.evaluate('window.schedlens.views[0].markers.map((m) => m.text)');
    assert.deepEqual(labels, ['hello', 'two\nlines', 'no newline', 'a\n\nb\n', 'z\nx-1 [000] 1.5: fake: y']);
    // A marker's line is drawn in the marker colour.
    const marker = await page.evaluate('window.schedlens.views[0].markers[0]');
    const m = await point(page, 0, 0, marker.t);
    const colour = await page.evaluate(`(() => {
      const ctx = document.querySelector('section.trace canvas.base').getContext('2d');
      const y = window.schedlens.views[0].geometry.timeline.top + 30;
      return [...ctx.getImageData(${m.canvasX} - 1, y, 3, 1).data];
    })()`);
    assert.ok([0, 4, 8].some((i) => colour[i] === 0x7a || Math.abs(colour[i] - 0x7a) < 30 && colour[i + 2] > 150), `marker line at x: ${colour}`);
    const top = await page.evaluate('(() => { const v = window.schedlens.views[0]; const r = v.overlay.getBoundingClientRect(); return r.top + v.geometry.timeline.top + 6; })()');
    await page.move(m.x, top);
    await page.waitFor("document.querySelector('#tooltip').textContent.includes('hello')");
    // Zooming changes both panels' window: they share the axis.
    const before = await page.evaluate('window.schedlens.scale().span');
    const at = await point(page, 1, 0, marker.t);
    await page.wheel(at.x, at.y, -300);
    await settled(page);
    assert.ok((await page.evaluate('window.schedlens.scale().span')) < before);
    const rendered = await page.evaluate('window.schedlens.views.map((v) => v.sampled.plotPx)');
    assert.equal(rendered[0], rendered[1]);
    await page.close();
  });

  test('colour by command shows the Figure 9 legend', async () => {
    const page = await open(browser, server.url + '#c=command');
    await page.evaluate("window.schedlens.panels.show('legend'); window.schedlens.panels.render()");
    await page.waitFor("document.querySelector('table.legend-table')");
    const text = await page.evaluate("document.querySelector('#side .body').textContent");
    assert.match(text, /first run \(s\)/);
    assert.match(text, /stress-ng-cpu/);
    await page.close();
  });
});

describe('following a task that migrates', { skip }, () => {
  let browser;
  let server;

  before(async () => {
    browser = await Browser.launch(chromium);
    server = await serve(['hackbench-v7zstd.dat']);
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
  });

  test('its moves between CPUs are arrows, its wakeups come from the waker', async () => {
    // A hackbench task that moved from one CPU to the other and was woken from a CPU.
    const meta = await api(server.url, '/api/meta');
    let task = null;
    for (let id = 1; id < meta.traces[0].tasks && !task; id++) {
      const answer = await api(server.url, `/api/task?trace=0&task=${id}`);
      if (answer.comm === 'hackbench' && answer.moves.length && answer.wakeups.some((w) => w.wakerCpu !== null && w.ran)) task = answer;
    }
    assert.ok(task, 'a hackbench task migrates');
    const move = task.moves[0];
    const span = Math.max(move.arrived - move.left, 1000) * 8;
    const page = await open(browser, `${server.url}#w=${move.left - span},${move.arrived + span}&f=0.${task.task}`);
    await page.waitFor(`window.schedlens.views[0].task && window.schedlens.views[0].task.task === ${task.task}`);
    await settled(page);
    const panel = await page.evaluate("document.querySelector('#side .body').textContent");
    assert.match(panel, /moves in the window/);
    // The arrow's head at the CPU it arrived on, drawn on the overlay in near-black.
    const head = await page.evaluate(`(() => {
      const app = window.schedlens;
      const view = app.views[0];
      const move = view.task.moves.find((m) => m.left === ${move.left} && m.arrived === ${move.arrived});
      if (!move) return null;
      const x2 = view.geometry.x0 + app.scale().x(move.arrived);
      const y1 = view.rowCenter(move.from), y2 = view.rowCenter(move.to);
      const x1 = view.geometry.x0 + app.scale().x(move.left);
      const angle = Math.atan2(y2 - y1, Math.max(1, x2 - x1) * 0.3);
      const x = Math.round((x2 - 3 * Math.cos(angle)) * view.dpr), y = Math.round((y2 - 3 * Math.sin(angle)) * view.dpr);
      return [...view.overlay.getContext('2d').getImageData(x, y, 1, 1).data];
    })()`);
    assert.ok(head, 'the page has the move');
    assert.ok(head[3] > 200 && head.slice(0, 3).every((v) => v < 60), `arrow head: ${head}`);
    await page.close();
  });
});

describe('64 CPUs on 4 NUMA nodes in socket order', { skip }, () => {
  let browser;
  let server;

  before(async () => {
    browser = await Browser.launch(chromium);
    const lscpu = join(traces, 'manycore/barrier64.dat.lscpu');
    server = await serve(['manycore/barrier64.dat'], ['--topology', lscpu, '--socket-order']);
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
  });

  test('every row is a CPU once; the hover says CPU, core, socket, node and SMT sibling', async () => {
    const meta = await api(server.url, '/api/meta');
    const rows = meta.traces[0].rowsBySocket;
    assert.deepEqual(rows.map((r) => r.cpu).sort((a, b) => a - b), [...Array(64).keys()]);
    assert.deepEqual(rows.slice(36, 38), [{ cpu: 36, socket: 2, node: 2, core: 18 }, { cpu: 37, socket: 2, node: 2, core: 18 }]);
    const page = await open(browser, server.url);
    // Early in the run, when CPU 37 idles, in the middle of its row.
    const at = await point(page, 0, 37, Math.round(meta.traces[0].start + 0.02 * (meta.traces[0].end - meta.traces[0].start)));
    await page.move(at.x, at.y);
    const tip = await page.waitFor("!document.querySelector('#tooltip').hidden && document.querySelector('#tooltip').textContent");
    assert.match(tip, /CPU 37/);
    assert.match(tip, /core 18 · socket 2 · node 2 · SMT sibling: CPU 36/);
    await page.close();
  });
});

describe('the profiler: a followed task\'s states, the critical path, who held the CPU', { skip }, () => {
  let browser;
  let server;
  let path; // the traced command's critical path, as the server gives it
  let hop; // a hop of it whose woken task waited while others held its CPU
  let waited; // that task's state just before it ran: runnable, with who held the CPU
  let ran; // its state once it ran

  before(async () => {
    browser = await Browser.launch(chromium);
    server = await serve(['hackbench-v7zstd.dat']);
    path = await api(server.url, '/api/path?trace=0');
    for (const h of path.hops) {
      if (h.fromCpu === null || !h.ran) continue;
      const state = await api(server.url, `/api/state?trace=0&task=${h.task.task}&t=${h.ran.t - 1}&span=1`);
      if (state.found && state.wait && state.wait.heldBy.length && state.end - state.start > 1000000) {
        [hop, waited] = [h, state];
        break;
      }
    }
    ran = await api(server.url, `/api/state?trace=0&task=${hop.task.task}&t=${hop.ran.t + 1}&span=1`);
  });

  after(async () => {
    await server?.stop();
    await browser?.close();
  });

  /** A pixel of the state track (device px of the base canvas) at time t, two rows below its top. */
  async function statePixel(page, t) {
    const [x, y] = await page.evaluate(`(() => {
      const app = window.schedlens, view = app.views[0], g = view.geometry;
      return [Math.floor((g.x0 + app.scale().x(${t})) * view.dpr), Math.round(g.states.top * view.dpr) + 2];
    })()`);
    return hex(await pixel(page, 0, x, y));
  }

  test('following a task draws its state track in Perfetto\'s colours, its path as arrows, the sentence to quote', async () => {
    assert.ok(hop, 'a hop of the path whose task waited behind others');
    assert.equal(waited.state, 'runnable-wakeup');
    assert.equal(ran.state, 'running');
    const margin = (waited.end - waited.start) / 4;
    const page = await open(browser, `${server.url}#w=${Math.round(waited.start - margin)},${Math.round(waited.end + margin)}&f=0.${hop.task.task}&cp=command`);
    assert.deepEqual(page.errors, []);
    await page.waitFor("window.schedlens.views[0].path && window.schedlens.views[0].path.hops && document.querySelector('blockquote.quote')");
    await settled(page);
    assert.ok(await page.evaluate('window.schedlens.views[0].geometry.states !== null'), 'a state track under the timeline');
    assert.equal(await statePixel(page, (waited.start + waited.end) / 2), '#99ba36', 'runnable after a wakeup: lime');
    // The Path tab: the sentence `critical-path` prints.
    assert.equal(await page.evaluate("document.querySelector('blockquote.quote').textContent"), path.sentence);
    assert.match(await page.evaluate("document.querySelector('#side .body').textContent"), /Largest stretches of scheduler cost/);
    // The hop into the followed task: an arrow whose head is where it ran.
    const head = await page.evaluate(`(() => {
      const app = window.schedlens, view = app.views[0], g = view.geometry;
      const hop = view.path.hops.find((h) => h.start === ${hop.start} && h.task.task === ${hop.task.task});
      if (!hop) return null;
      const x1 = g.x0 + app.scale().x(hop.start), x2 = g.x0 + app.scale().x(hop.ran.t);
      const y1 = view.rowCenter(hop.fromCpu), y2 = view.rowCenter(hop.ran.cpu);
      const angle = Math.atan2(y2 - y1, Math.max(1, x2 - x1) * 0.3);
      const x = Math.round((x2 - 3 * Math.cos(angle)) * view.dpr), y = Math.round((y2 - 3 * Math.sin(angle)) * view.dpr);
      return [...view.overlay.getContext('2d').getImageData(x, y, 1, 1).data];
    })()`);
    assert.ok(head, 'the page has the hop');
    assert.ok(head[3] > 200 && head[0] > 150 && head[1] < 90 && head[2] > 60, `a magenta arrow head: ${head}`);
    await page.waitFor(`location.hash.includes('f=0.${hop.task.task}') && location.hash.includes('cp=command')`);
    // Zoomed to its run: dark green.
    const run = ran.end - ran.start;
    await page.evaluate(`window.schedlens.setWindow([${ran.start - run}, ${ran.end + run}])`);
    await settled(page);
    assert.equal(await statePixel(page, (ran.start + ran.end) / 2), '#317d31', 'running: dark green');
    await page.close();
  });

  test('hovering its wait, or the runqueue it waited in, says who held the CPU and for how long', async () => {
    const margin = (waited.end - waited.start) / 4;
    const page = await open(browser, `${server.url}#w=${Math.round(waited.start - margin)},${Math.round(waited.end + margin)}&f=0.${hop.task.task}`);
    const middle = Math.round((waited.start + waited.end) / 2);
    const at = await page.evaluate(`(() => {
      const app = window.schedlens, view = app.views[0], g = view.geometry, rect = view.overlay.getBoundingClientRect();
      return { x: rect.left + g.x0 + app.scale().x(${middle}), y: rect.top + g.states.top + g.states.height / 2 };
    })()`);
    await page.move(at.x, at.y);
    const tip = await page.waitFor("(() => { const t = document.querySelector('#tooltip'); return !t.hidden && t.textContent.includes('who held the CPU') && t.textContent; })()");
    assert.match(tip, /runnable \(woken\)/);
    const first = waited.wait.heldBy[0];
    assert.ok(tip.includes(`${first.comm}:${first.pid}`), `the longest holder ${first.comm}:${first.pid} in: ${tip}`);
    const rows = await page.evaluate("[...document.querySelectorAll('#tooltip table.holders tr')].map((tr) => [...tr.cells].map((c) => c.textContent))");
    waited.wait.heldBy.slice(0, 5).forEach((h, i) => assert.deepEqual(rows[i], [h.kernelThread ? 'k' : '', `${h.comm}:${h.pid}`, rows[i][2]], `holder ${i}`));
    assert.ok(await page.evaluate('window.schedlens.overlay.hover && window.schedlens.overlay.hover.state'), 'the stretch is outlined');
    // The runqueue strip of the CPU it waited on, at the same moment.
    const cpu = waited.wait.cpus[0];
    const queue = await api(server.url, `/api/queue?trace=0&cpu=${cpu}&t=${middle}&span=1`);
    assert.ok(queue.waiting.length > 0);
    const strip = await page.evaluate(`(() => {
      const app = window.schedlens, view = app.views[0], g = view.geometry, rect = view.overlay.getBoundingClientRect();
      const i = [...view.rows()].reverse().findIndex((r) => r.cpu === ${cpu});
      return { x: rect.left + g.x0 + app.scale().x(${middle}), y: rect.top + g.queue.top + (i + 0.5) * view.heights.strip };
    })()`);
    await page.move(strip.x, strip.y);
    const named = `${queue.waiting[0].task.comm}:${queue.waiting[0].task.pid}`;
    const queueTip = await page.waitFor(`(() => { const t = document.querySelector('#tooltip'); return !t.hidden && t.textContent.includes('who held the CPU') && t.textContent.includes(${JSON.stringify(named)}) && t.textContent; })()`);
    assert.match(queueTip, new RegExp(`CPU ${cpu}`));
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});
