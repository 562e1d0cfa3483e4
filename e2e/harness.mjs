// Shared helpers for Saltscope's browser tests (run with `node --test e2e/`).
//
// - Chromium is Debian's (/usr/bin/chromium), driven by playwright-core: the
//   Playwright browser download is not available on these machines.
// - BASE_URL (default http://127.0.0.1:8090) is the nginx that scripts/test.sh
//   starts in front of the test build and the test engine.
// - Specs find elements by role and visible text (page.getByRole / getByText).
//
// Typical spec:
//   import { test, before, after } from 'node:test';
//   import assert from 'node:assert/strict';
//   import { openBrowser, BASE_URL } from './harness.mjs';
//   let b; before(async () => { b = await openBrowser(); }); after(() => b.close());
//   test('home', async () => {
//     const { page, errors } = await b.newPage();
//     await page.goto(BASE_URL);
//     ...
//     errors.assertNone();
//   });

import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '..');
export const BASE_URL = (process.env.BASE_URL || 'http://127.0.0.1:8090').replace(/\/+$/, '');
export const SALTSCOPE_WORK = process.env.SALTSCOPE_WORK || path.join(REPO, '.work');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
/** Default timeout (ms) for waits in specs; the wasm app needs a moment to boot. */
export const TIMEOUT = Number(process.env.E2E_TIMEOUT_MS || 15000);

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/**
 * Point the app of `page` at indices with another prefix (the generator's
 * `saltgen`), as an operator would in config.json.
 */
export async function useIndexPrefix(page, prefix) {
  await page.route('**/config.json', (route) => route.fulfill({
    contentType: 'application/json',
    body: JSON.stringify(prefixConfig(prefix)),
  }));
}

/** config.json for indices named `<prefix>-…`. */
export function prefixConfig(prefix) {
  return {
    engine_url: '/es',
    index_pattern: `${prefix}-*`,
    job_cache_index: `${prefix}-master-job-cache`,
    event_index_pattern: `${prefix}-master-event-cache*`,
  };
}

/**
 * `useIndexPrefix` for measurements: the page's first config.json is
 * answered through the DevTools protocol, which then stops intercepting.
 * While requests are intercepted at all (any `page.route`, or the
 * protocol's Fetch domain even for one URL), a request the app sends right
 * after a history.pushState (the job list's, after a filter change) waited
 * 8-20 ms before it left the browser, measured on the job list at 1M,
 * against 1-2 ms with nothing intercepted. A person's browser has no such
 * wait, so the benchmarks must not either. The app reads config.json once,
 * at start-up; a page that loads it again gets nginx's.
 */
export async function serveConfigFor(page, config) {
  const cdp = await page.context().newCDPSession(page);
  cdp.on('Fetch.requestPaused', async (e) => {
    await cdp.send('Fetch.fulfillRequest', {
      requestId: e.requestId,
      responseCode: 200,
      responseHeaders: [{ name: 'Content-Type', value: 'application/json' }],
      body: Buffer.from(JSON.stringify(config)).toString('base64'),
    }).catch(() => {});
    await cdp.send('Fetch.disable').catch(() => {});
  });
  await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*/config.json', requestStage: 'Request' }] });
}

/**
 * The jids the job list shows, once it has its answer: the job links of the
 * table named "Jobs", read as a person reads them.
 */
export async function shownJids(page) {
  const table = page.getByRole('table', { name: 'Jobs' });
  await table.and(page.locator('[aria-busy=false]')).waitFor();
  return table.getByRole('row').getByRole('link').allTextContents();
}

/** The rows of the job list: one per job (its jid is the row's link). */
export function jobRows(page) {
  return page.getByRole('table', { name: 'Jobs' }).getByRole('row').filter({ has: page.getByRole('link') });
}

/**
 * Waits until `check()` (async, outside the page: the engine, a file)
 * returns something truthy, asking again every `every` ms; fails with
 * `what` after `timeout` ms. Returns what `check` returned.
 */
export async function eventually(check, what, { timeout = TIMEOUT, every = 100 } = {}) {
  const t0 = Date.now();
  for (;;) {
    const got = await check();
    if (got) return got;
    if (Date.now() - t0 > timeout) throw new Error(`not within ${timeout} ms: ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** URL under BASE_URL: url('/job/123') */
export function url(p = '/') {
  return BASE_URL + (p.startsWith('/') ? p : '/' + p);
}

/**
 * Launch chromium. Returns { browser, newPage, close }.
 * newPage() gives { page, context, errors } where `errors` collects console
 * errors, uncaught page errors and failed requests of that page.
 */
export async function openBrowser(opts = {}) {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`chromium not found at ${CHROMIUM}: run scripts/setup.sh (apt-get install chromium)`);
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 60000,
    ...opts,
  });
  const contexts = [];
  return {
    browser,
    async newPage(ctxOpts = {}) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...ctxOpts });
      contexts.push(context);
      context.setDefaultTimeout(TIMEOUT);
      const page = await context.newPage();
      const errors = collectErrors(page);
      return { page, context, errors };
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close().catch(() => {});
    },
  };
}

/**
 * Collect problems a user would not see but a spec should:
 *   console: console.error(...) messages (incl. CSP violations, failed loads)
 *   page:    uncaught exceptions / unhandled rejections (incl. wasm panics
 *            reported through console_error_panic_hook -> console.error)
 *   requests: failed requests: network errors and HTTP status >= 400
 * `ignore` takes regexes for expected noise.
 */
export function collectErrors(page, { ignore = [] } = {}) {
  const console_ = [];
  const pageErrors = [];
  const requests = [];
  const skip = (text) => ignore.some((re) => re.test(text));
  page.on('console', (msg) => {
    // Chrome's "Failed to load resource" has no URL; the 'response' handler
    // below records those with their URL instead.
    if (msg.type() === 'error' && !/^Failed to load resource/.test(msg.text()) && !skip(msg.text())) {
      console_.push(msg.text());
    }
  });
  page.on('response', (resp) => {
    const text = `HTTP ${resp.status()} ${resp.request().method()} ${resp.url()}`;
    if (resp.status() >= 400 && !skip(text)) requests.push(text);
  });
  page.on('pageerror', (err) => {
    const text = String(err && (err.stack || err.message) || err);
    if (!skip(text)) pageErrors.push(text);
  });
  page.on('requestfailed', (req) => {
    const text = `${req.method()} ${req.url()}: ${req.failure()?.errorText}`;
    // aborted requests are normal (navigation, AbortController)
    if (!/ERR_ABORTED/.test(text) && !skip(text)) requests.push(text);
  });
  return {
    console: console_,
    page: pageErrors,
    requests,
    ignore(re) { ignore.push(re); },
    all() { return [...pageErrors.map((e) => 'pageerror: ' + e), ...console_.map((e) => 'console: ' + e), ...requests.map((e) => 'request: ' + e)]; },
    /** assert no page errors (and, unless {consoleOk:true}, no console errors / failed requests) */
    assertNone({ consoleOk = false } = {}) {
      const list = consoleOk ? pageErrors.map((e) => 'pageerror: ' + e) : this.all();
      assert.deepEqual(list, [], 'browser reported errors:\n' + list.join('\n'));
    },
  };
}

/**
 * The salt data manifest written by scripts/salt-data.sh:
 * $SALTSCOPE_WORK/salt-data/manifest.json, mapping scenario -> jid (and
 * whatever else that script records). Throws with a clear message if absent.
 */
export function readManifest(file = process.env.SALT_MANIFEST || path.join(SALTSCOPE_WORK, 'salt-data', 'manifest.json')) {
  if (!fs.existsSync(file)) {
    throw new Error(`salt data manifest not found at ${file}: run scripts/salt-data.sh (scripts/test.sh does)`);
  }
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/**
 * Where a test that only needs real jobs to load goes: the job list narrowed
 * to Salt's multi-minion state.apply, so the job is on screen however many
 * jobs the live-Salt tests of earlier local runs have added since.
 */
export function fixtureJobPath() {
  return `/?jid=${readManifest().state_apply_multi.jid}`;
}

/** true when the manifest exists (for specs that skip without salt data) */
export function haveManifest(file = process.env.SALT_MANIFEST || path.join(SALTSCOPE_WORK, 'salt-data', 'manifest.json')) {
  return fs.existsSync(file);
}

/** Save a screenshot under $SALTSCOPE_WORK/e2e-screenshots/<name>.png and return its path. */
export async function screenshot(page, name) {
  const dir = path.join(SALTSCOPE_WORK, 'e2e-screenshots');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name.replace(/[^\w.-]+/g, '_') + '.png');
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
