// The job page's timeline, and following a young job live. The timeline is
// read on the real Salt data; the young job is written the way the master
// and the returner write one (publish event, then one return document and
// one ret event per minion as each answers), so the test decides when each
// minion answers. (e2e/live-salt.test.mjs follows a real master's job.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, readManifest } from './harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const RETURNS = 'salt-test_version-e2efollow';
const EVENTS = 'salt-master-event-cache-e2efollow';
let b;
let manifest;

before(async () => {
  manifest = readManifest();
  for (const i of [RETURNS, EVENTS]) await fetch(`${ES_URL}/${i}`, { method: 'DELETE' });
  b = await openBrowser();
});
after(async () => {
  await b?.close();
  for (const i of [RETURNS, EVENTS]) await fetch(`${ES_URL}/${i}`, { method: 'DELETE' });
});

async function bulk(docs) {
  const body = docs.flatMap(([index, doc]) => [JSON.stringify({ index: { _index: index } }), JSON.stringify(doc)]).join('\n') + '\n';
  const res = await fetch(`${ES_URL}/_bulk?refresh=true`, { method: 'POST', headers: { 'Content-Type': 'application/x-ndjson' }, body });
  const answer = await res.json();
  assert.equal(answer.errors, false, JSON.stringify(answer.items?.find((i) => i.index?.error)));
}
const stamp = (ms) => new Date(ms).toISOString().replace('Z', '+00:00');

async function count(index, query) {
  const res = await fetch(`${ES_URL}/${index}/_count?ignore_unavailable=true`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query }) });
  return (await res.json()).count;
}

test('the timeline of a real job: published at +0, each return after it, or why the returns are missing', async () => {
  const { page, errors } = await b.newPage();
  const jid = manifest.state_apply_multi.jid;
  await page.goto(url(`/job/${jid}`));
  const timeline = page.getByRole('table', { name: 'Timeline' });
  await page.getByText(/^Timeline: /).waitFor();
  if (!(await timeline.isVisible())) await page.getByText(/^Timeline: /).click();
  await timeline.getByRole('row').filter({ hasText: 'published' }).filter({ hasText: '+0.000 s' }).waitFor();
  const rets = await count('salt-master-event-cache*', { prefix: { 'tag.keyword': `salt/job/${jid}/ret/` } });
  const returned = timeline.getByRole('row').filter({ hasText: /returned/ });
  assert.equal(await returned.count(), rets);
  if (rets === 0) {
    // Dynamic mappings: the engine refused these ret events (their `return`
    // is a dict of states, the first one it saw was `true`).
    await page.getByText(/the event cache holds no return event of this job/).waitFor();
  } else {
    const afters = (await returned.locator('td.after').allTextContents()).map((t) => Number(t.replace(/[^\d.]/g, '')));
    assert.deepEqual(afters, [...afters].sort((x, y) => x - y), 'in time order');
    if (rets >= 3) assert.equal(await timeline.getByText('slowest').count(), 1);
  }
  errors.assertNone();
});

test('a young job is followed live: returns appear as minions answer and the missing list shrinks', async () => {
  const { page, errors } = await b.newPage();
  const now = Date.now();
  const jid = new Date(now).toISOString().replace(/\D/g, '').slice(0, 17) + '123';
  const minions = ['live01.example.com', 'live02.example.com', 'live03.example.com'];
  const published = { tag: `salt/job/${jid}/new`, data: { jid, fun: 'test.version', arg: [], tgt: 'live*', tgt_type: 'glob', user: 'root', minions, missing: [], _stamp: stamp(now) } };
  const answer = (minion, at) => [
    [RETURNS, { '@timestamp': stamp(at), success: true, retcode: 0, minion, fun: 'test.version', jid, counts: {}, data: '3008.5' }],
    [EVENTS, { tag: `salt/job/${jid}/ret/${minion}`, data: { cmd: '_return', id: minion, success: true, return: '3008.5', retcode: 0, jid, fun: 'test.version', fun_args: [], _stamp: stamp(at) } }],
  ];
  await bulk([[EVENTS, published], ...answer(minions[0], now + 300)]);

  await page.goto(url(`/job/${jid}`));
  const following = page.getByRole('status').filter({ hasText: 'Following this job live' });
  await following.getByText('1 of 3 minions answered').waitFor();
  const missing = page.getByRole('region', { name: 'Missing minions' });
  await missing.getByRole('heading', { name: 'Targeted, not answered yet' }).waitFor();
  assert.equal(await missing.getByRole('listitem').count(), 2);

  await bulk(answer(minions[1], now + 900));
  await following.getByText('2 of 3 minions answered').waitFor({ timeout: 10000 });
  await page.getByRole('region', { name: minions[1] }).waitFor();
  assert.equal(await missing.getByRole('listitem').count(), 1);
  await page.getByRole('table', { name: 'Timeline' }).getByRole('row').filter({ hasText: minions[1] }).filter({ hasText: '+0.900 s' }).waitFor();

  await bulk(answer(minions[2], now + 2500));
  await page.getByRole('region', { name: minions[2] }).waitFor({ timeout: 10000 });
  await following.waitFor({ state: 'detached' });
  assert.equal(await missing.count(), 0, 'nobody is missing');
  await page.getByRole('region', { name: 'Totals' }).getByText('Minions returned: 3').waitFor();
  // The slowest of three is marked.
  await page.getByRole('table', { name: 'Timeline' }).getByRole('row').filter({ hasText: minions[2] }).getByText('slowest').waitFor();
  errors.assertNone();
});
