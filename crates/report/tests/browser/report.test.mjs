// `schedlens report` in a real browser: Debian's Chromium, headless, over the DevTools
// protocol (crates/tiles/tests/browser/cdp.mjs), offline. A report of real fixtures is opened from
// file:// and must draw completely, zoom, hover, link incidents to the timeline, sort
// tables, draw the heat map and the latency histogram, and quote the critical path, with
// no request leaving the page.
//
//   SCHEDLENS_BIN=target/debug/schedlens node --test crates/report/tests/browser/

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Browser, testTargets } from '../../../tiles/tests/browser/cdp.mjs';

const { traces, bin, chromium, skip } = testTargets('report browser tests');

/** Writes a report of fixtures; its path. */
function report(dir, name, files, extra = []) {
  const out = join(dir, name);
  const run = spawnSync(bin, ['report', '-o', out, ...extra, ...files.map((f) => join(traces, f))], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  return out;
}

/** A results directory as `schedlens runs --record` leaves it, its runs' traces being
 * fixtures (the fastest and the slowest are the two hackbench traces), and a failed run. */
function series(dir, name, recorded) {
  const out = join(dir, name);
  mkdirSync(join(out, 'traces'), { recursive: true });
  const run = (order, wall, ok, fixture) => {
    const trace = recorded && fixture ? `traces/run-00${order}-s1-r${order}.dat` : null;
    if (trace) copyFileSync(join(traces, fixture), join(out, trace));
    return { order, setting: 0, repetition: order, wall_s: wall, user_s: 0.1, sys_s: 0.2, exit: ok ? 'exit 0' : 'exit 1', ok, trace,
      log: `logs/run-00${order}-s1-r${order}.log`, metrics: [], wall_from: recorded ? 'trace' : 'clock' };
  };
  const results = { command: ['hackbench', '-g', '1'], repetitions: 3, sleep_s: 1, recorded, knobs: [], settings: [{ values: [], shown: [] }],
    metrics: [], runs: [run(1, 0.25, true, 'hackbench-v7zstd.dat'), run(2, 0.31, true, 'hackbench-v6.dat'), run(3, 0.9, false, null)], interrupted_by: null };
  writeFileSync(join(out, 'results.json'), JSON.stringify(results));
  const made = spawnSync(bin, ['report', out], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  return join(out, 'report.html');
}

/** Opens a report offline, recording every request; waits until all it shows is drawn. */
async function open(browser, path) {
  const page = await browser.newPage({ width: 1400, height: 1000 });
  const requests = [];
  browser.listeners.add((message) => {
    if (message.sessionId === page.sessionId && message.method === 'Network.requestWillBeSent') requests.push(message.params.request.url);
  });
  await page.send('Network.enable');
  await page.send('Network.emulateNetworkConditions', { offline: true, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
  const url = pathToFileURL(path).href;
  await page.goto(url);
  await page.waitFor("document.body.dataset.ready === '1'");
  await settled(page);
  return { page, requests, url };
}

async function settled(page) {
  await page.waitFor('window.schedlens.complete && !window.schedlens.frame');
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
}

/** Page coordinates of time t (ns from the origin) on a CPU's row of trace `trace`. */
function point(page, trace, cpu, t) {
  return page.evaluate(`(() => {
    const app = window.schedlens, view = app.views[${trace}];
    const rect = view.overlay.getBoundingClientRect();
    const g = view.geometry, scale = app.scale();
    const rows = view.rows(), at = rows.findIndex((r) => r.cpu === ${cpu});
    const y = g.timeline.top + (rows.length - 1 - at + 0.5) * view.heights.row;
    return { x: rect.left + g.x0 + scale.x(${t}), y: rect.top + y };
  })()`);
}

/** Share of the timeline's pixels that are not background. */
function painted(page, trace = 0) {
  return page.evaluate(`(() => {
    const view = window.schedlens.views[${trace}], g = view.geometry, d = view.dpr;
    const ctx = view.base.getContext('2d');
    const w = Math.round(g.plotWidth * d), h = Math.round(g.timeline.height * d);
    const data = ctx.getImageData(Math.round(g.x0 * d), Math.round(g.timeline.top * d), w, h).data;
    let n = 0;
    for (let i = 0; i < data.length; i += 4) if (!(data[i] === 255 && data[i + 1] === 255 && data[i + 2] === 255)) n++;
    return n / (w * h);
  })()`);
}

describe('schedlens report in Chromium', { skip }, () => {
  let browser;
  let dir;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'schedlens-report-'));
    browser = await Browser.launch(chromium);
  });
  after(async () => {
    if (browser) await browser.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the same trace gives the same bytes', () => {
    const a = report(dir, 'a.html', ['scenario-overload-v7zstd.dat']);
    const b = report(dir, 'b.html', ['scenario-overload-v7zstd.dat']);
    assert.ok(readFileSync(a).equals(readFileSync(b)));
  });

  test('offline from file://: renders completely, zooms, hovers; no request leaves the page', async () => {
    const path = report(dir, 'hackbench.html', ['hackbench-v7zstd.dat']);
    const { page, requests, url } = await open(browser, path);
    assert.deepEqual(page.errors, []);
    assert.ok((await painted(page)) > 0.03, 'the timeline is drawn');
    assert.equal(await page.evaluate("document.querySelector('#viewer').dataset.complete"), '1');
    const before = await page.evaluate('window.schedlens.state.window');
    // hackbench runs in the last 6% of the trace (after the recording's sleep).
    const busy = before[1] - 0.03 * (before[1] - before[0]);
    const centre = await point(page, 0, 0, busy);
    await page.wheel(centre.x, centre.y, -600);
    await page.wheel(centre.x, centre.y, -600);
    await settled(page);
    const zoomed = await page.evaluate('window.schedlens.state.window');
    assert.ok(zoomed[1] - zoomed[0] < (before[1] - before[0]) / 2, `zoomed in: ${zoomed} from ${before}`);
    assert.ok((await painted(page)) > 0.2, 'the zoomed timeline is drawn');
    // Hover a busy spot: the tooltip names a task from the embedded colours.
    let named = '';
    for (const share of [0.7, 0.8, 0.9, 0.6, 0.75, 0.85, 0.5]) {
      const at = await point(page, 0, 1, zoomed[0] + share * (zoomed[1] - zoomed[0]));
      await page.move(at.x, at.y);
      named = await page.waitFor("(() => { const t = document.querySelector('#tooltip'); return !t.hidden && t.textContent; })()").catch(() => '');
      if (/hackbench:\d+/.test(named)) break;
    }
    assert.match(named, /hackbench:\d+/);
    // Far beyond the embedded pyramid the page says so, and still draws.
    await page.evaluate(`window.schedlens.setWindow([${zoomed[0]}, ${zoomed[0]} + 20000])`);
    await settled(page);
    assert.equal(await page.evaluate("document.querySelector('#viewer').dataset.beyond"), '1');
    assert.match(await page.evaluate("document.querySelector('#resolution').textContent"), /schedlens view/);
    assert.ok(requests.includes(url), `the page's own load is seen: ${requests.slice(0, 3)}`);
    const outside = requests.filter((r) => r !== url && !r.startsWith('data:'));
    assert.deepEqual(outside, [], 'no request leaves the page');
    // Why it was slow: critical-path's sentence and parts, latency --figure's histogram.
    assert.match(await page.evaluate("document.querySelector('#critical-path p.quote').textContent"), /^of the .* running, .* runnable while a core idled.*: the scheduler cost at most \d+%/);
    assert.equal(await page.evaluate("document.querySelectorAll('#critical-path table.path-parts tbody tr').length"), 7);
    assert.ok(await page.evaluate("(() => { const img = document.querySelector('img.latency-histogram'); return img.complete && img.naturalWidth > 100; })()"), 'the latency histogram is drawn');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("the traced command's critical path: the sentence critical-path prints, its hops drawn", async () => {
    const path = report(dir, 'ring.html', ['token-ring-record.dat']);
    const printed = spawnSync(bin, ['critical-path', join(traces, 'token-ring-record.dat')], { encoding: 'utf8' });
    const sentence = printed.stdout.split('\n')[0];
    assert.match(sentence, /the scheduler cost at most/);
    const { page } = await open(browser, path);
    await page.evaluate("window.schedlens.showPath('command')");
    await page.waitFor("window.schedlens.views[0].path && window.schedlens.views[0].path.hops && document.querySelector('blockquote.quote')");
    assert.equal(await page.evaluate("document.querySelector('blockquote.quote').textContent"), sentence);
    assert.ok(await page.evaluate('window.schedlens.views[0].path.hops.length') > 100, 'the ring\'s hops');
    assert.equal(await page.evaluate('window.schedlens.views[0].geometry.states'), null, 'no state track: following needs the trace');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test('incidents link to the timeline; tables sort; the heat map is drawn', async () => {
    const path = report(dir, 'overload.html', ['scenario-overload-v7zstd.dat']);
    const { page } = await open(browser, path);
    const links = await page.evaluate("document.querySelectorAll('a.show-incident').length");
    assert.ok(links > 0, 'incidents are listed');
    await page.evaluate("document.querySelector('a.show-incident').click()");
    await settled(page);
    const selected = await page.evaluate('window.schedlens.state.incident');
    assert.deepEqual(selected, { trace: 0, rank: 1 });
    const incident = await page.evaluate('window.schedlens.incidents[0].incidents[0]');
    const window = await page.evaluate('window.schedlens.state.window');
    assert.ok(window[0] <= incident.start && window[1] >= incident.end, 'the timeline shows the incident');
    const first = () => page.evaluate("document.querySelector('#statistics table.sortable tbody tr td').textContent");
    const order = async () => page.evaluate("[...document.querySelector('#statistics table.sortable').tBodies[0].rows].map((r) => Number(r.cells[3].dataset.v))");
    await page.evaluate("document.querySelector('#statistics table.sortable th:nth-child(4)').click()");
    const switches = await order();
    assert.deepEqual(switches, [...switches].sort((a, b) => b - a), 'sorted by switches, most first');
    await page.evaluate("document.querySelector('#statistics table.sortable th:nth-child(1)').click()");
    assert.ok((await first()) <= (await page.evaluate("document.querySelector('#statistics table.sortable tbody tr:last-child td').textContent")));
    // The latency table sorts too: by p99, largest first.
    await page.evaluate("document.querySelector('table.latency-commands th:nth-child(5)').click()");
    const p99 = await page.evaluate("[...document.querySelector('table.latency-commands').tBodies[0].rows].map((r) => Number(r.cells[4].dataset.v))");
    assert.ok(p99.length > 1 && p99.every((v, i) => i === 0 || p99[i - 1] >= v), `sorted by p99: ${p99}`);
    const heat = await page.evaluate("(() => { const c = document.querySelector('canvas.migration-map'); return c.width > 0 && c.height > 0; })()");
    assert.ok(heat);
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test('64 CPUs on 4 NUMA nodes in socket order: every row a CPU once, the hover says where it sits', async () => {
    const lscpu = join(traces, 'manycore/barrier64.dat.lscpu');
    const path = report(dir, 'barrier64.html', ['manycore/barrier64.dat'], ['--topology', lscpu, '--socket-order']);
    const { page } = await open(browser, path);
    assert.deepEqual(page.errors, []);
    const rows = await page.evaluate('window.schedlens.views[0].rows().map((r) => r.cpu)');
    assert.deepEqual([...rows].sort((a, b) => a - b), [...Array(64).keys()]);
    const window = await page.evaluate('window.schedlens.state.window');
    const at = await point(page, 0, 37, window[0] + 0.02 * (window[1] - window[0]));
    await page.move(at.x, at.y);
    const tip = await page.waitFor("(() => { const t = document.querySelector('#tooltip'); return !t.hidden && t.textContent; })()");
    assert.match(tip, /CPU 37/);
    assert.match(tip, /core 18 · socket 2 · node 2 · SMT sibling: CPU 36/);
    await page.close();
  });

  test('two traces on one time scale with the comparison table', async () => {
    const path = report(dir, 'two.html', ['hackbench-v7zstd.dat', 'hackbench-v6.dat']);
    const { page } = await open(browser, path);
    assert.equal(await page.evaluate('window.schedlens.views.length'), 2);
    assert.ok((await painted(page, 1)) > 0.01, 'the second trace is drawn');
    assert.ok(await page.evaluate("document.querySelectorAll('#comparison table.sortable tbody tr').length > 0"));
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test('a run series: its statistics and figure, its fastest and slowest runs on one time scale with the comparison', async () => {
    const path = series(dir, 'recorded', true);
    const { page, requests, url } = await open(browser, path);
    assert.deepEqual(page.errors, []);
    const settings = await page.evaluate("[...document.querySelectorAll('#settings tbody td')].map((td) => td.textContent)");
    assert.deepEqual(settings.slice(0, 4), ['as found', '2', '1', '0.2800'], 'n, failed and median as runs computes them');
    assert.ok(await page.evaluate("(() => { const img = document.querySelector('img.running-times'); return img.complete && img.naturalWidth > 100; })()"), 'the figure is drawn');
    assert.equal(await page.evaluate("document.querySelectorAll('#run-list tbody tr').length"), 3);
    const latencyCells = await page.evaluate("[...document.querySelectorAll('#run-list tbody tr:first-child td')].slice(-3).map((td) => td.textContent)");
    assert.deepEqual(latencyCells, ['unknown', 'unknown', 'unknown'], 'results without the latency metrics say unknown');
    assert.equal(await page.evaluate('window.schedlens.views.length'), 2, 'fastest and slowest');
    assert.ok((await painted(page, 0)) > 0.01 && (await painted(page, 1)) > 0.01, 'both timelines are drawn');
    assert.equal(await page.evaluate("document.querySelector('#viewer').dataset.complete"), '1');
    assert.match(await page.evaluate("document.querySelector('#trace').textContent"), /fastest: run 1 .*slowest: run 2/s);
    assert.ok(await page.evaluate("document.querySelectorAll('#comparison table.sortable tbody tr').length > 0"));
    assert.deepEqual(requests.filter((r) => r !== url && !r.startsWith('data:')), [], 'no request leaves the page');
    await page.close();
  });

  test('an untraced run series: tables and figure, no timeline', async () => {
    const path = series(dir, 'untraced', false);
    const { page } = await open(browser, path);
    assert.deepEqual(page.errors, []);
    assert.equal(await page.evaluate("document.querySelector('#viewer')"), null);
    assert.ok(await page.evaluate("(() => { const img = document.querySelector('img.running-times'); return img.complete && img.naturalWidth > 100; })()"));
    await page.close();
  });
});
