// A screenshot of a running `schedlens view` in headless Chromium, once everything the
// page shows is drawn and the incidents are listed: the README's image is made with it
// (scripts/view-screenshot.sh).
//
//   node screenshot.mjs URL OUT.png [--width W] [--height H]

import { writeFileSync } from 'node:fs';
import { Browser } from '../../../tiles/tests/browser/cdp.mjs';

const [url, out, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const i = rest.indexOf(name);
  return i >= 0 ? Number(rest[i + 1]) : fallback;
};
if (!url || !out) {
  console.error('usage: node screenshot.mjs URL OUT.png [--width W] [--height H]');
  process.exit(2);
}
const browser = await Browser.launch();
try {
  const page = await browser.newPage({ width: option('--width', 1400), height: option('--height', 820) });
  await page.goto(url);
  const drawn = "window.schedlens && window.schedlens.views.length && window.schedlens.complete && !window.schedlens.frame";
  await page.waitFor(drawn, 120000);
  await page.waitFor("window.schedlens.incidents.length && window.schedlens.incidents.every((i) => i && i.status === 'ready')", 120000);
  await page.evaluate('window.schedlens.panels.render()');
  await page.waitFor(drawn, 120000);
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
  writeFileSync(out, await page.screenshot());
  if (page.errors.length) console.error(`page errors: ${JSON.stringify(page.errors)}`);
  await page.close();
} finally {
  await browser.close();
}
