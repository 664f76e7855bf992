// A minimal Chrome DevTools Protocol client for the browser tests of the page (the
// viewer's, crates/view/tests/browser, and the report's, crates/report/tests/browser)
// and the viewer's benchmark:
// starts the system's Chromium headless with --remote-debugging-pipe (messages are
// NUL-terminated JSON on file descriptors 3 and 4: no websocket, no npm package, no
// browser download), opens pages and drives them.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Chromium binary, or null when none is installed. */
export function findChromium() {
  const candidates = [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
  return candidates.find((path) => path && existsSync(path)) || null;
}

/**
 * What the browser tests of `suite` run against: the repository's fixtures, the schedlens
 * binary (`SCHEDLENS_BIN`, else the debug build) and Chromium; `skip` says why they cannot
 * run here (and is printed), or is false.
 */
export function testTargets(suite) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
  const bin = process.env.SCHEDLENS_BIN ? resolve(process.env.SCHEDLENS_BIN) : join(root, 'target/debug/schedlens');
  const chromium = findChromium();
  const skip = !chromium ? 'no Chromium installed (apt-get install chromium)' : !existsSync(bin) ? `no schedlens binary at ${bin} (cargo build)` : false;
  if (skip) console.log(`# ${suite} skipped: ${skip}`);
  return { root, traces: join(root, 'testdata/traces'), bin, chromium, skip };
}

export class Browser {
  static async launch(executable = findChromium()) {
    if (!executable) throw new Error('no Chromium found (apt-get install chromium)');
    const profile = mkdtempSync(join(tmpdir(), 'schedlens-chromium-'));
    const args = [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-extensions',
      '--disable-features=Translate,MediaRouter,OptimizationHints',
      '--hide-scrollbars',
      '--mute-audio',
      '--font-render-hinting=none',
      '--force-color-profile=srgb',
      `--user-data-dir=${profile}`,
      '--remote-debugging-pipe',
      'about:blank',
    ];
    const child = spawn(executable, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    child.stderr.on('data', () => {});
    const browser = new Browser(child, profile);
    await browser.send('Target.setDiscoverTargets', { discover: false });
    return browser;
  }

  constructor(child, profile) {
    this.child = child;
    this.profile = profile;
    this.nextId = 1;
    this.waiting = new Map();
    this.listeners = new Set();
    this.pending = '';
    this.writer = child.stdio[3];
    child.stdio[4].on('data', (chunk) => this.receive(chunk));
    this.exited = new Promise((resolve) => child.on('exit', resolve));
  }

  receive(chunk) {
    this.pending += chunk.toString('utf8');
    let end;
    while ((end = this.pending.indexOf('\0')) >= 0) {
      const message = JSON.parse(this.pending.slice(0, end));
      this.pending = this.pending.slice(end + 1);
      if (message.id && this.waiting.has(message.id)) {
        const { resolve, reject, method } = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message.result);
      } else {
        for (const listener of this.listeners) listener(message);
      }
    }
  }

  send(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, method });
      this.writer.write(`${JSON.stringify(message)}\0`);
    });
  }

  async newPage({ width = 1400, height = 900 } = {}) {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, sessionId, targetId);
    await page.send('Page.enable');
    await page.send('Runtime.enable');
    await page.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
    return page;
  }

  async close() {
    try {
      await Promise.race([this.send('Browser.close'), new Promise((r) => setTimeout(r, 2000))]);
    } catch {
      // already gone
    }
    this.child.kill('SIGKILL');
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 2000))]);
    // Chromium's helper processes may write into the profile a moment longer: removing it
    // is retried for a few seconds, and a leftover temporary directory fails no test.
    for (let attempt = 0; attempt < 30; attempt++) {
      try {
        rmSync(this.profile, { recursive: true, force: true });
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

export class Page {
  constructor(browser, sessionId, targetId) {
    this.browser = browser;
    this.sessionId = sessionId;
    this.targetId = targetId;
    this.errors = [];
    this.requests = [];
    browser.listeners.add((message) => {
      if (message.sessionId !== sessionId) return;
      if (message.method === 'Runtime.exceptionThrown') this.errors.push(message.params.exceptionDetails);
      if (message.method === 'Runtime.consoleAPICalled' && message.params.type === 'error') this.errors.push(message.params.args.map((a) => a.value ?? a.description).join(' '));
    });
  }

  send(method, params) {
    return this.browser.send(method, params, this.sessionId);
  }

  async goto(url) {
    const loaded = new Promise((resolve) => {
      const listener = (message) => {
        if (message.sessionId === this.sessionId && message.method === 'Page.loadEventFired') {
          this.browser.listeners.delete(listener);
          resolve();
        }
      };
      this.browser.listeners.add(listener);
    });
    await this.send('Page.navigate', { url });
    await loaded;
  }

  /** Evaluates an expression (awaiting promises) and returns its JSON value. */
  async evaluate(expression) {
    const result = await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (result.exceptionDetails) {
      const detail = result.exceptionDetails.exception ? result.exceptionDetails.exception.description : result.exceptionDetails.text;
      throw new Error(`evaluate: ${detail}`);
    }
    return result.result.value;
  }

  /** Waits until `expression` is truthy, polling. */
  async waitFor(expression, timeoutMs = 20000) {
    const began = Date.now();
    for (;;) {
      const value = await this.evaluate(expression);
      if (value) return value;
      if (Date.now() - began > timeoutMs) throw new Error(`timed out waiting for ${expression}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async screenshot(clip) {
    const params = { format: 'png' };
    if (clip) params.clip = { ...clip, scale: 1 };
    const { data } = await this.send('Page.captureScreenshot', params);
    return Buffer.from(data, 'base64');
  }

  async mouse(type, x, y, extra = {}) {
    await this.send('Input.dispatchMouseEvent', { type, x, y, button: 'none', ...extra });
  }

  async move(x, y, modifiers = 0) {
    await this.mouse('mouseMoved', x, y, { modifiers });
  }

  async click(x, y, modifiers = 0) {
    await this.mouse('mouseMoved', x, y, { modifiers });
    await this.mouse('mousePressed', x, y, { button: 'left', clickCount: 1, buttons: 1, modifiers });
    await this.mouse('mouseReleased', x, y, { button: 'left', clickCount: 1, modifiers });
  }

  async drag(x1, y1, x2, y2, modifiers = 0, steps = 8) {
    await this.mouse('mouseMoved', x1, y1, { modifiers });
    await this.mouse('mousePressed', x1, y1, { button: 'left', clickCount: 1, buttons: 1, modifiers });
    for (let i = 1; i <= steps; i++) {
      const x = x1 + ((x2 - x1) * i) / steps;
      const y = y1 + ((y2 - y1) * i) / steps;
      await this.mouse('mouseMoved', x, y, { button: 'left', buttons: 1, modifiers });
    }
    await this.mouse('mouseReleased', x2, y2, { button: 'left', clickCount: 1, modifiers });
  }

  async wheel(x, y, deltaY, deltaX = 0, modifiers = 0) {
    await this.send('Input.dispatchMouseEvent', { type: 'mouseWheel', x, y, deltaX, deltaY, modifiers });
  }

  async key(key, code = key, keyCode = 0) {
    for (const type of ['keyDown', 'keyUp']) {
      await this.send('Input.dispatchKeyEvent', { type, key, code, windowsVirtualKeyCode: keyCode, text: type === 'keyDown' && key.length === 1 ? key : undefined });
    }
  }

  async close() {
    await this.browser.send('Target.closeTarget', { targetId: this.targetId });
  }
}
