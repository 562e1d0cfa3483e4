// Faults between the app and the engine, as a person meets them: a real
// HTTP front (this file's own, in Node) between the project's nginx and the
// real engine forwards every request and, on demand, delays one, answers
// 503 or 429 with Retry-After, or drops the connection. What the person
// sees is asserted: the deadline's message and Retry, "retrying in N s",
// a start-up that recovers by itself, an auto-refresh that never aborts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { openBrowser, REPO, jobRows, eventually } from './harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const FRONT_PORT = Number(process.env.FAULT_FRONT_PORT || 9297);
const NGINX_PORT = Number(process.env.FAULT_NGINX_PORT || 8097);
const BASE = `http://127.0.0.1:${NGINX_PORT}`;

/** Faults to inject, first match wins: {match, times, act(req, res) -> handled}. */
let faults = [];
/** What the front saw: every request, and the ones the client gave up on. */
const seen = { msearch: 0, abandoned: 0 };

function forward(req, res, body) {
  const headers = { ...req.headers };
  delete headers.host;
  const up = http.request(`${ES_URL}${req.url}`, { method: req.method, headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
  up.end(body);
}

const front = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (req.url.endsWith('/_msearch')) {
      seen.msearch += 1;
      res.on('close', () => { if (!res.writableFinished) seen.abandoned += 1; });
    }
    const fault = faults.find((f) => f.match.test(`${req.method} ${req.url}`) && f.times > 0);
    if (fault) {
      fault.times -= 1;
      fault.act(req, res, () => forward(req, res, body));
    } else {
      forward(req, res, body);
    }
  });
});

const answer = (status, headers = {}) => (req, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { type: 'injected', reason: `injected ${status}` }, status }));
};
const delay = (ms) => (req, res, pass) => setTimeout(pass, ms);
const drop = () => (req) => req.socket.destroy();

const nginx = (cmd) => execFileSync(path.join(REPO, 'scripts/nginx.sh'), [cmd], {
  env: { ...process.env, NGINX_PORT: String(NGINX_PORT), ENGINE_URL: `http://127.0.0.1:${FRONT_PORT}` },
  stdio: 'pipe',
});

let b;
before(async () => {
  await new Promise((r) => front.listen(FRONT_PORT, '127.0.0.1', r));
  nginx('start');
  b = await openBrowser();
});
after(async () => {
  await b?.close();
  try { nginx('stop'); } catch { /* already gone */ }
  front.close();
});

/** A page whose config.json is the shipped one with `overrides`. */
async function pageWith(overrides = {}) {
  const { page, errors } = await b.newPage();
  const shipped = await (await fetch(`${BASE}/config.json`)).json();
  await page.route('**/config.json', (route) => route.fulfill({
    contentType: 'application/json', body: JSON.stringify({ ...shipped, ...overrides }),
  }));
  return { page, errors };
}

test('a hung engine gives "no answer … within 3 s" and Retry, never endless loading', async () => {
  faults = [{ match: /_msearch$/, times: 1, act: delay(8000) }];
  const { page, errors } = await pageWith({ request_timeout_ms: 3000 });
  errors.ignore(/_msearch/);
  await page.goto(`${BASE}/?noisy=show`);
  const alert = page.getByRole('alert');
  await alert.getByText('The engine did not answer in time').waitFor();
  assert.match(await alert.textContent(), new RegExp(`no answer from ${BASE}/es/_msearch within 3 s`));
  await alert.getByRole('button', { name: 'Retry' }).click();
  await jobRows(page).first().waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
  errors.assertNone({ consoleOk: true });
});

test('503 twice then 200: the page says it is retrying, then shows the jobs', async () => {
  faults = [{ match: /_msearch$/, times: 2, act: answer(503) }];
  const { page, errors } = await pageWith();
  errors.ignore(/HTTP 503/);
  await page.goto(`${BASE}/?noisy=show`);
  await page.getByRole('status').filter({ hasText: /answered 503: retrying in \d+ s/ }).waitFor();
  await jobRows(page).first().waitFor({ timeout: 20000 });
  assert.equal(await page.getByRole('alert').count(), 0, 'no error left');
  await page.getByRole('status').filter({ hasText: /retrying/ }).waitFor({ state: 'detached' });
  errors.assertNone();
});

test('429 with Retry-After: 1 waits the second the engine asked for', async () => {
  faults = [{ match: /_msearch$/, times: 1, act: answer(429, { 'retry-after': '1' }) }];
  const { page, errors } = await pageWith();
  errors.ignore(/HTTP 429/);
  await page.goto(`${BASE}/?noisy=show`);
  await page.getByRole('status').filter({ hasText: 'answered 429: retrying in 1 s' }).waitFor();
  await jobRows(page).first().waitFor();
  errors.assertNone();
});

test('a connection dropped once is retried by the proxy: the person just sees the jobs', async () => {
  faults = [{ match: /_msearch$/, times: 1, act: drop() }];
  const before_ = seen.msearch;
  const { page, errors } = await pageWith();
  await page.goto(`${BASE}/?noisy=show`);
  await jobRows(page).first().waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
  assert.ok(seen.msearch - before_ >= 3, 'the dropped search was sent again (and the list\'s two round trips)');
  errors.assertNone();
});

test('a connection that keeps dropping shows the proxy\'s 502, and Retry recovers', async () => {
  faults = [{ match: /_msearch$/, times: 1000, act: drop() }];
  const { page, errors } = await pageWith();
  errors.ignore(/HTTP 502/);
  await page.goto(`${BASE}/?noisy=show`);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /answered 502/);
  faults = [];
  await alert.getByRole('button', { name: 'Retry' }).click();
  await jobRows(page).first().waitFor();
  errors.assertNone({ consoleOk: true });
});

test('a failed start-up is tried again by itself and recovers without a reload', async () => {
  // More 503s than the client retries: start-up fails once, then the engine is back.
  faults = [{ match: /^GET \/$/, times: 4, act: answer(503) }];
  const { page, errors } = await pageWith();
  errors.ignore(/HTTP 503/);
  await page.goto(`${BASE}/?noisy=show`);
  await page.evaluate(() => { window.saltscopeNotReloaded = true; });
  const alert = page.getByRole('alert');
  await alert.getByText(/Trying again in \d+ s/).waitFor({ timeout: 30000 });
  assert.match(await alert.textContent(), /answered 503/);
  await jobRows(page).first().waitFor({ timeout: 30000 });
  assert.equal(await page.evaluate(() => window.saltscopeNotReloaded), true, 'the same page, not a reload');
  errors.assertNone();
});

test('auto-refresh skips a tick while the last query runs instead of aborting it', async () => {
  const { page, errors } = await pageWith();
  await page.goto(`${BASE}/?noisy=show&refresh=5s`);
  await jobRows(page).first().waitFor();
  // Every job-list query now takes 7 s: longer than the 5 s interval.
  faults = [{ match: /_msearch$/, times: 6, act: delay(3500) }];
  const before_ = { ...seen };
  await eventually(() => seen.msearch - before_.msearch >= 4, 'two refreshes (two round trips each)', { timeout: 40000 });
  assert.equal(seen.abandoned - before_.abandoned, 0, 'no query was aborted by the next tick');
  faults = [];
  errors.assertNone();
});
