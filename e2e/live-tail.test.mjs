// The live tail, fed the way a returner feeds it: event documents written
// into an event-cache index while the view follows the bus. Each event
// arrives once, in time order; one written late (its _stamp older than the
// newest shown) still arrives; the count goes on with them; pause, the cap
// on rows kept and "N new events" behave. (e2e/live-salt.test.mjs follows a
// real master's jobs.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, eventually } from './harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
// Matches the app's salt-master-event-cache*; removed afterwards.
const INDEX = 'salt-master-event-cache-e2etail';
const RUN = `r${Date.now()}`;
const TAG = `saltscope/e2e/${RUN}`;
let b;

before(async () => {
  await fetch(`${ES_URL}/${INDEX}`, { method: 'DELETE' });
  b = await openBrowser();
});
after(async () => {
  await b?.close();
  await fetch(`${ES_URL}/${INDEX}`, { method: 'DELETE' });
});

let seq = 0;
/** Writes events as the returner does ({tag, data: {..., _stamp}}), searchable at once. */
async function write(events) {
  const lines = events.flatMap((e) => [
    JSON.stringify({ index: { _index: INDEX } }),
    JSON.stringify({ tag: `${TAG}/${e.kind || 'tick'}`, data: { id: 'live01.example.com', seq: e.seq, note: e.note || '', _stamp: new Date(e.at).toISOString().replace('Z', '+00:00') } }),
  ]);
  const res = await fetch(`${ES_URL}/_bulk?refresh=true`, {
    method: 'POST', headers: { 'Content-Type': 'application/x-ndjson' }, body: lines.join('\n') + '\n',
  });
  const body = await res.json();
  assert.equal(body.errors, false, JSON.stringify(body.items?.find((i) => i.index?.error)));
}
const next = (at, extra = {}) => ({ seq: ++seq, at, ...extra });

const table = (page) => page.getByRole('table', { name: 'Events' });
const rows = (page) => table(page).getByRole('row').filter({ has: page.getByRole('cell') });
/** The seq of each row shown, top to bottom, from the rows' data. */
async function seqs(page) {
  const times = await table(page).locator('td.when').allTextContents();
  return { count: times.length, times };
}
const polled = (page) => page.waitForResponse((r) => r.url().includes('/_msearch'));

test('new events arrive once each, in time order; a late one arrives too', async () => {
  const { page, errors } = await b.newPage();
  const now = Date.now();
  await write([next(now - 30_000)]);
  await page.goto(url(`/events?tag=${encodeURIComponent(TAG + '/*')}&live=1`));
  const status = page.getByRole('status').filter({ hasText: /^Live/ });
  await status.waitFor();
  assert.equal(await rows(page).count(), 1);
  await page.getByText('1 event matches', { exact: true }).waitFor();

  const t0 = Date.now();
  await write([next(Date.now()), next(Date.now() + 1), next(Date.now() + 2)]);
  await eventually(async () => (await rows(page).count()) === 4, 'three new events shown', { timeout: 10000 });
  const lag = Date.now() - t0;
  console.log(`# write-to-screen lag: ${lag} ms (poll every 2 s)`);
  const first = await seqs(page);
  assert.deepEqual(first.times, [...first.times].sort().reverse(), 'newest first');

  // Written now, stamped 20 s before the newest shown: indexed late.
  await write([next(Date.now() - 20_000, { kind: 'late' })]);
  await rows(page).filter({ hasText: `${TAG}/late` }).waitFor({ timeout: 10000 });
  // Two more polls change nothing: no event twice.
  await polled(page);
  await polled(page);
  assert.equal(await rows(page).count(), 5);
  const after = await seqs(page);
  assert.deepEqual(after.times, [...after.times].sort().reverse(), 'the late one took its place by time');
  // The count goes on with the list: the search's, and what the tail read.
  await page.getByText('5 events match: 1 when the page opened, 4 since', { exact: true }).waitFor();
  errors.assertNone();
});

test('pause holds the list, resume catches up; the rate is shown', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url(`/events?tag=${encodeURIComponent(TAG + '/*')}&live=1`));
  await page.getByRole('status').filter({ hasText: /^Live/ }).waitFor();
  const before = await rows(page).count();
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByRole('status').filter({ hasText: /^Paused/ }).waitFor();
  await write([next(Date.now(), { kind: 'while-paused' })]);
  assert.equal(await rows(page).count(), before, 'nothing comes in while paused');
  await page.getByRole('button', { name: 'Resume' }).click();
  await rows(page).filter({ hasText: `${TAG}/while-paused` }).waitFor({ timeout: 10000 });
  await write(Array.from({ length: 40 }, (_, i) => next(Date.now() + i)));
  await eventually(async () => (await rows(page).count()) === before + 41, 'the burst shown', { timeout: 10000 });
  const rate = Number((await page.locator('.live-status').textContent()).match(/([\d.]+) events\/s/)[1]);
  assert.ok(rate > 0, `events per second shown (${rate})`);
  errors.assertNone();
});

test('a cap on rows kept lets the oldest go; reading further down, new ones wait behind "N new events"', async () => {
  const { page, errors } = await b.newPage({ viewport: { width: 1280, height: 600 } });
  await page.goto(url(`/events?tag=${encodeURIComponent(TAG + '/*')}&live=1`));
  await page.getByRole('status').filter({ hasText: /^Live/ }).waitFor();
  await page.getByLabel('Keep the newest').selectOption('200');
  const base = Date.now();
  await write(Array.from({ length: 250 }, (_, i) => next(base + i)));
  await eventually(async () => (await rows(page).count()) === 200, 'at most 200 rows kept', { timeout: 15000 });
  await page.getByRole('status').filter({ hasText: /older let go/ }).waitFor();

  // Reading further down: new events wait.
  await rows(page).nth(150).scrollIntoViewIfNeeded();
  const newest = await table(page).locator('td.when').first().textContent();
  await write([next(Date.now() + 5000, { kind: 'arrived' }), next(Date.now() + 5001, { kind: 'arrived' })]);
  const button = page.getByRole('button', { name: '2 new events' });
  await button.waitFor({ timeout: 10000 });
  assert.equal(await table(page).locator('td.when').first().textContent(), newest, 'the list did not move');
  await button.click();
  await rows(page).first().filter({ hasText: `${TAG}/arrived` }).waitFor();
  assert.equal(await button.count(), 0);
  errors.assertNone();
});

test('event data is text: markup in it is shown, not run', async () => {
  const { page, errors } = await b.newPage();
  await write([next(Date.now(), { kind: 'markup', note: '<img src=x onerror="window.__pwned=1">' })]);
  await page.goto(url(`/events?tag=${encodeURIComponent(TAG + '/markup')}`));
  const row = rows(page).first();
  await row.getByText('data', { exact: true }).click();
  await row.getByText('<img src=x onerror="window.__pwned=1">').waitFor();
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  errors.assertNone();
});

test('a burst longer than the first page is counted once, not again as new', async () => {
  const { page, errors } = await b.newPage();
  const now = Date.now();
  await write(Array.from({ length: 150 }, (_, i) => next(now - 150 + i, { kind: 'burst' })));
  await page.goto(url(`/events?tag=${encodeURIComponent(TAG + '/burst')}&live=1`));
  await page.getByRole('status').filter({ hasText: /^Live/ }).waitFor();
  await page.getByText('150 events match', { exact: true }).waitFor();
  // The tail's first polls bring the 50 beyond the first page of 100: they
  // are shown, and the count already had them.
  await eventually(async () => (await rows(page).count()) === 150, 'the whole burst shown', { timeout: 10000 });
  await polled(page);
  assert.equal(await page.locator('p.count').textContent(), '150 events match');
  errors.assertNone();
});
