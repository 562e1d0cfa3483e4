// Fleet status against the data real Salt wrote (scripts/salt-data.sh):
// every minion's latest state run classified failed / changed / unchanged /
// test mode, or unreported — including a minion jobs were published to
// that never returned. The expected standing of each minion is computed
// here from the engine's own documents, in JavaScript, independently of
// the Rust code under test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, readManifest } from './harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const STATE_FUNS = ['state.apply', 'state.highstate', 'state.sls'];
const DAY_MS = 24 * 3600 * 1000;
let b;
let manifest;
let expected; // minion -> { status, sls }
before(async () => {
  manifest = readManifest();
  expected = await expectedFleet();
  b = await openBrowser();
});
after(async () => { await b?.close(); });

async function search(index, body) {
  const r = await fetch(`${ES_URL}/${index}/_search`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, `search ${index}`);
  return r.json();
}

const changed = (c) => c != null && (typeof c !== 'object' || (Array.isArray(c) ? c.length > 0
  : Object.keys(c).some((k) => k !== '_orig_key')));

function classify(doc) {
  const states = doc.data && typeof doc.data === 'object' && !Array.isArray(doc.data)
    ? Object.values(doc.data).filter((s) => s && typeof s === 'object' && 'result' in s) : [];
  const runFailed = doc.success === false || (doc.retcode != null && doc.retcode !== 0)
    || (states.length === 0 && doc.data != null);
  if (runFailed || states.some((s) => s.result === false)) return 'Failed';
  if (states.some((s) => s.result === null)) return 'Test mode';
  if (states.some((s) => changed(s.changes))) return 'Changed';
  return 'Unchanged';
}

async function expectedFleet() {
  // A runner's return carries the master's id, which names no minion.
  const returns = { bool: { filter: [{ exists: { field: 'minion' } }],
    must_not: [{ prefix: { _index: 'salt-master-' } }, { prefix: { 'fun.keyword': 'runner.' } }] } };
  const all = await search('salt-*', { size: 0, query: returns,
    aggs: { m: { terms: { field: 'minion.keyword', size: 10000 } } } });
  const minions = new Map(all.aggregations.m.buckets.map((b) => [b.key, { status: 'Unreported', sls: [] }]));
  const published = await search('salt-master-event-cache*', { size: 0,
    aggs: { m: { terms: { field: 'data.minions.keyword', size: 10000 } } } });
  for (const b of published.aggregations.m.buckets) {
    if (!minions.has(b.key)) minions.set(b.key, { status: 'Unreported', sls: [] });
  }
  const runs = await search('salt-*', { size: 10000, sort: [{ '@timestamp': 'desc' }],
    query: { bool: { filter: [...returns.bool.filter, { terms: { 'fun.keyword': STATE_FUNS } }],
      must_not: returns.bool.must_not } } });
  const seen = new Set();
  for (const { _source: doc } of runs.hits.hits) {
    if (seen.has(doc.minion)) continue;
    seen.add(doc.minion);
    const recent = Date.parse(doc['@timestamp']) >= Date.now() - DAY_MS;
    const sls = [...new Set(Object.values(doc.data || {}).map((s) => s?.__sls__).filter(Boolean))].sort();
    minions.set(doc.minion, { status: recent ? classify(doc) : 'Unreported', sls });
  }
  return minions;
}

async function shownFleet(page) {
  const table = page.getByRole('table', { name: 'Fleet' });
  await table.waitFor();
  const rows = await table.getByRole('row').filter({ has: page.getByRole('cell') })
    .evaluateAll((trs) => trs.map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]));
  return new Map(rows);
}

test('every minion has the standing of its latest state run, counted in the bar', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/'));
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Fleet' }).click();
  const shown = await shownFleet(page);
  const want = new Map([...expected].map(([m, e]) => [m, e.status]));
  assert.deepEqual(Object.fromEntries([...shown].sort()), Object.fromEntries([...want].sort()));
  // Real Salt gives every standing but test mode on a minion's latest run
  // only where `state.apply test=True` came last; failed (the broken SLS)
  // and unreported (offline-05, targeted, never returned) always.
  assert.equal(shown.get('offline-05'), 'Unreported', 'a targeted minion that never returned');
  const master = await search('salt-*', { size: 1, query: { prefix: { 'fun.keyword': 'runner.' } } });
  const masterId = master.hits.hits[0]?._source.minion;
  assert.ok(masterId, 'salt-data.sh ran a runner');
  assert.ok(!shown.has(masterId), `the master (${masterId}) is no minion of the fleet`);
  assert.ok([...shown.values()].includes('Failed'), 'a failed run');
  const bar = page.getByRole('navigation', { name: 'Fleet status' });
  for (const status of ['Failed', 'Unreported', 'Test mode', 'Changed', 'Unchanged']) {
    const n = [...want.values()].filter((s) => s === status).length;
    if (n > 0) await bar.getByRole('link', { name: `${status} ${n}` }).waitFor();
  }
  // Which way it was computed, said: the Elasticsearch run indexes through
  // the index templates and their summary pipeline, OpenSearch's does not.
  const path = process.env.ENGINE === 'elasticsearch'
    ? /^Computed by the engine from the summary fields the `saltscope-return-summary` ingest pipeline wrote$/
    : /^Computed from the state runs' documents: the returns have no summary fields/;
  await page.getByText(path).waitFor();
  errors.assertNone();
});

test('the minion filter shows only the minions it names, each with its own standing', async () => {
  // Jobs published to web01 and db-02 together are found by `web*`; the
  // engine hands back all of their targets, and db-02 once showed as a
  // `web*` minion that never reported.
  const { page, errors } = await b.newPage();
  await page.goto(url('/fleet'));
  await page.getByRole('search', { name: 'Filter' }).getByLabel('Minion').fill('web*');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/minion=web/);
  const named = [...expected].filter(([m]) => m.startsWith('web'));
  assert.ok(named.length >= 2, `${named.length} web* minions in the data`);
  await page.getByText(`${named.length} minions`, { exact: true }).waitFor();
  const shown = await shownFleet(page);
  assert.deepEqual(Object.fromEntries([...shown].sort()),
    Object.fromEntries(named.map(([m, e]) => [m, e.status]).sort()));
  errors.assertNone();
});

test('a standing in the bar filters the list, in the URL; the SLS filter keeps the runs that applied it', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/fleet'));
  const failed = [...expected].filter(([, e]) => e.status === 'Failed').map(([m]) => m).sort();
  await page.getByRole('navigation', { name: 'Fleet status' })
    .getByRole('link', { name: `Failed ${failed.length}` }).click();
  await page.waitForURL(/status=failed/);
  await page.getByText(`${failed.length} of ${expected.size} minions failed`).waitFor();
  assert.deepEqual([...(await shownFleet(page)).keys()].sort(), failed);

  await page.goto(url('/fleet'));
  await page.getByRole('search', { name: 'Filter' }).getByLabel('SLS').fill('saltscope.packages');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/sls=saltscope.packages/);
  const applied = [...expected].filter(([, e]) => e.sls.includes('saltscope.packages')).map(([m]) => m).sort();
  assert.ok(applied.length >= 4, `${applied.length} minions applied saltscope.packages`);
  await page.getByText(`${applied.length} minions`, { exact: true }).waitFor();
  assert.deepEqual([...(await shownFleet(page)).keys()].sort(), applied);

  // Each run links to that minion's return on the job page.
  const web01 = page.getByRole('row').filter({ hasText: 'web01.prod.example.com' });
  await web01.getByRole('link', { name: /^state\./ }).click();
  await page.getByRole('heading', { name: /^Job \d{20}$/ }).waitFor();
  assert.match(page.url(), /#minion-web01\.prod\.example\.com$/);
  errors.assertNone();
});
