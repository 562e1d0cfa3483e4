// The events view at a million generated events (scripts/generate.sh with
// EVENTS=1000000, prefix GEN_EVENTS_PREFIX): the first page and page 1,000
// (event 100,001 on, by a deep link the engine's own search_after walk
// gives) paint in about the same time, show the right events, and Older
// events goes on from there. Run by scripts/test.sh after the generator:
//   BASE_URL=… ES_URL=… GEN_EVENTS_PREFIX=saltev node --test e2e/scale/events-1m.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, useIndexPrefix } from '../harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const PREFIX = process.env.GEN_EVENTS_PREFIX || 'saltev';
const WANT = Number(process.env.GEN_EVENTS || 1000000);
const PAGE = 100;
const DEEP = 1000; // the page to open
const INDEX = `${PREFIX}-master-event-cache*`;
const SORT = [{ 'data._stamp': { order: 'desc' } }, { 'tag.keyword': { order: 'desc' } }];
let b;
let total;

async function es(path, body) {
  const r = await fetch(`${ES_URL}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 200, `${path}: ${r.status} ${await r.clone().text()}`);
  return r.json();
}

before(async () => {
  total = (await es(`/${INDEX}/_count`, { query: { exists: { field: 'tag' } } })).count;
  assert.ok(total >= WANT, `the generator loaded ${total} events, at least ${WANT} wanted`);
  b = await openBrowser();
});
after(async () => { await b?.close(); });

/** Navigation start to the events view painted (the app's own mark), in ms. */
async function painted(page) {
  await page.waitForFunction(() => performance.getEntriesByName('saltscope:painted:events').length > 0, null, { timeout: 60000 });
  return page.evaluate(() => performance.getEntriesByName('saltscope:painted:events')[0].startTime);
}

const rows = (page) => page.getByRole('table', { name: 'Events' }).getByRole('row').filter({ has: page.getByRole('cell') });
const tags = (page) => rows(page).locator('td.tag code').allTextContents();

/** The events from position `from` (0-based) on, newest first, as the engine sorts them. */
async function engineFrom(from, n) {
  const keys = [];
  let after;
  while (keys.length < from + n) {
    const size = Math.min(10000, from + n - keys.length);
    const body = { size, sort: SORT, _source: false, query: { exists: { field: 'tag' } }, track_total_hits: false };
    if (after) body.search_after = after;
    const hits = (await es(`/${INDEX}/_search`, body)).hits.hits;
    keys.push(...hits.map((h) => ({ ms: h.sort[0], tag: h.sort[1] })));
    if (hits.length < size) break;
    after = hits.at(-1).sort;
  }
  return { before: keys.slice(0, from), from: keys.slice(from, from + n) };
}

test('page 1,000 of a million events paints as fast as page 1, with the right events', { timeout: 300000 }, async () => {
  const { page: first, errors: e1 } = await b.newPage();
  await useIndexPrefix(first, PREFIX);
  await first.goto(url('/events?time=all'));
  const t1 = await painted(first);
  await first.getByText(`${total} events match`).waitFor();

  // The cursor of page 1,000: the last event of page 999 and how many
  // events of its very (ms, tag) pages 1-999 showed.
  const at = (DEEP - 1) * PAGE;
  const { before, from } = await engineFrom(at, PAGE);
  const last = before.at(-1);
  let skip = 0;
  for (let i = before.length - 1; i >= 0 && before[i].ms === last.ms && before[i].tag === last.tag; i--) skip++;
  const { page: deep, errors: e2 } = await b.newPage();
  await useIndexPrefix(deep, PREFIX);
  await deep.goto(url(`/events?time=all&after=${encodeURIComponent(`${last.ms}:${skip}:${last.tag}`)}`));
  const tDeep = await painted(deep);
  await rows(deep).first().waitFor();
  assert.deepEqual(await tags(deep), from.map((k) => k.tag), 'page 1,000 shows events 99,901-100,000 in order');
  console.log(`# events view at ${total} events: page 1 painted at ${t1.toFixed(0)} ms, page ${DEEP} at ${tDeep.toFixed(0)} ms after navigation`);
  assert.ok(tDeep <= t1 * 1.5 + 250, `page ${DEEP} (${tDeep.toFixed(0)} ms) about as fast as page 1 (${t1.toFixed(0)} ms)`);

  // Older events goes on from there.
  const { from: next } = await engineFrom(at + PAGE, PAGE);
  const start = Date.now();
  await deep.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Older events' }).click();
  await deep.getByRole('region', { name: 'Event list' }).and(deep.locator('[aria-busy=false]')).waitFor();
  await rows(deep).first().waitFor();
  assert.deepEqual(await tags(deep), next.map((k) => k.tag));
  console.log(`# page ${DEEP + 1} by Older events: ${Date.now() - start} ms`);
  e1.assertNone();
  e2.assertNone();
});

test('tag families count all million events', async () => {
  const { page, errors } = await b.newPage();
  await useIndexPrefix(page, PREFIX);
  await page.goto(url('/events?time=all'));
  const families = page.getByRole('navigation', { name: 'Tag families' });
  const rets = (await es(`/${INDEX}/_count`, { query: { wildcard: { 'tag.keyword': { value: 'salt/job/*/ret/*' } } } })).count;
  assert.ok(rets > 0);
  await families.getByRole('listitem').filter({ hasText: 'job return' }).getByText(String(rets), { exact: true }).waitFor({ timeout: 30000 });
  errors.assertNone();
});
