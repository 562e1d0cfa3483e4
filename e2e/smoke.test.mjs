// Smoke test: the app loads from nginx, the wasm boots and renders its
// heading, and the browser reports no errors (CSP, MIME type, panics...).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, screenshot } from './harness.mjs';

let b;
before(async () => { b = await openBrowser(); });
after(async () => { await b?.close(); });

test('home page shows the Saltscope banner and the job list without errors', async () => {
  const { page, errors } = await b.newPage();
  const resp = await page.goto(url('/'));
  assert.equal(resp.status(), 200);
  await page.getByRole('banner').getByRole('link', { name: 'Saltscope' }).waitFor({ state: 'visible' });
  await page.getByRole('heading', { name: 'Jobs', level: 1 }).waitFor({ state: 'visible' });
  // The banner names the engine as GET / describes it (version.distribution).
  const product = process.env.ENGINE === 'elasticsearch' ? /^Elasticsearch \d+\.\d+\.\d+$/ : /^OpenSearch \d+\.\d+\.\d+$/;
  await page.getByRole('banner').getByText(product).waitFor();
  await screenshot(page, 'smoke-home');
  errors.assertNone();
});

test('deep link is served by the SPA fallback', async () => {
  const { page, errors } = await b.newPage();
  const resp = await page.goto(url('/job/20240101000000000000'));
  assert.equal(resp.status(), 200);
  await page.getByRole('heading', { name: 'Job 20240101000000000000' }).waitFor({ state: 'visible' });
  await page.getByText('No return document holds this jid.').waitFor();
  errors.assertNone({ consoleOk: true });
});

test('an address whose id cannot be a jid says so, and waits for nothing', async () => {
  const { page, errors } = await b.newPage();
  // Twenty digits that are no time are told apart from what is no number.
  for (const [id, why] of [['notajid', ''], ['99999999999999999999', ' its digits are no time:']]) {
    await page.goto(url(`/job/${id}`));
    await page.getByText(`“${id}” is not a Salt job id:${why} a jid is 20 digits, the time the job started (YYYYMMDDhhmmssffffff).`).waitFor();
    assert.equal(await page.getByText(/Following this job live/).count(), 0);
    // Nothing that speaks of a job: no totals, no publish data, no switches.
    assert.equal(await page.getByRole('region', { name: 'Totals' }).count(), 0);
    assert.equal(await page.getByText(/no publish event/).count(), 0);
    assert.equal(await page.getByRole('navigation', { name: 'State output' }).count(), 0);
  }
  errors.assertNone({ consoleOk: true });
});
