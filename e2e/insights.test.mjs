// Across runs and across the fleet, on the data real Salt wrote
// (scripts/salt-data.sh): comparing two state runs, failure patterns, SLS
// rollups. `state.sls drift` ran three times on saltcall-plain, its health
// check failing on the third run; the ordered_demo failure and the broken
// SLS's render error happened on several minions. Expected figures are
// computed here from the engine's documents, independently of the Rust code.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, readManifest, eventually } from './harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const STATE_FUNS = ['state.apply', 'state.highstate', 'state.sls'];
let b;
let manifest;
let stateRuns; // every state-function return, with data
before(async () => {
  manifest = readManifest();
  const r = await fetch(`${ES_URL}/salt-*/_search`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ size: 10000, query: { bool: {
      filter: [{ exists: { field: 'minion' } }, { terms: { 'fun.keyword': STATE_FUNS } }],
      must_not: [{ prefix: { _index: 'salt-master-' } }] } } }),
  });
  assert.equal(r.status, 200);
  stateRuns = (await r.json()).hits.hits.map((h) => h._source);
  b = await openBrowser();
});
after(async () => { await b?.close(); });

const states = (doc) => (doc.data && typeof doc.data === 'object' && !Array.isArray(doc.data)
  ? Object.values(doc.data).filter((s) => s && typeof s === 'object' && 'result' in s) : []);
const drift = (n) => manifest.salt_call.plain[`drift_run_${n}`].jid;

test('"Compare with the previous run" on a job page: the state that started failing, the one that changes every run', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url(`/job/${drift(3)}`));
  const section = page.getByRole('region', { name: 'saltcall-plain.example.net' });
  await section.getByRole('link', { name: 'Compare with the previous run' }).click();
  await page.getByRole('heading', { name: 'Compare state runs' }).waitFor();
  const runs = page.getByRole('list', { name: 'Runs compared' });
  await runs.getByRole('link', { name: new RegExp(`${drift(2)} on saltcall-plain`) }).waitFor();
  await runs.getByRole('link', { name: new RegExp(`${drift(3)} on saltcall-plain`) }).waitFor();
  const table = page.getByRole('table', { name: 'Differences' });
  const health = table.getByRole('row').filter({ hasText: 'drift.health_check' });
  await health.getByText(/result True → False/).waitFor();
  await health.getByText('health check failed: backend 10.20.30.40:8443 refused the connection').waitFor();
  await table.getByRole('row').filter({ hasText: 'drift.every_run' }).getByText(/other changes/).waitFor();
  assert.equal(await table.getByRole('row').filter({ hasText: 'drift.idempotent' }).count(), 0,
    'the idempotent state is folded as identical');
  await page.getByText(/\d+ identical \(folded\)/).waitFor();
  await page.getByText('B is the run asked for, A the state run before it on that minion.').waitFor();
  // A step back in the minion's history: run 2 against run 1.
  await page.getByRole('link', { name: 'Compare A with its previous run' }).click();
  await runs.getByRole('link', { name: new RegExp(`${drift(1)} on saltcall-plain`) }).waitFor();
  await runs.getByRole('link', { name: new RegExp(`${drift(2)} on saltcall-plain`) }).waitFor();
  assert.equal(await runs.getByRole('link', { name: new RegExp(drift(3)) }).count(), 0);
  // The form says what the comparison calls A and B: the run asked for is B.
  const form = page.getByRole('search', { name: 'Runs' });
  await eventually(async () => (await form.getByLabel('Run A').inputValue()) === `${drift(1)}:saltcall-plain.example.net`,
    'Run A holds the earlier run');
  assert.equal(await form.getByLabel('Run B').inputValue(), `${drift(2)}:saltcall-plain.example.net`);
  errors.assertNone();
});

test('a minion\'s first state run has nothing before it: said so, nothing to retry', async () => {
  const { page, errors } = await b.newPage();
  const firsts = new Map();
  for (const d of stateRuns) {
    const seen = firsts.get(d.minion);
    if (!seen || d['@timestamp'] < seen['@timestamp']) firsts.set(d.minion, d);
  }
  const first = firsts.get('saltcall-plain.example.net');
  assert.ok(first, 'saltcall-plain has state runs');
  await page.goto(url(`/compare?a=${first.jid}:${first.minion}`));
  await page.getByRole('status').getByText(`This is the first state run of ${first.minion} in the engine (job ${first.jid}): there is no earlier run to compare it with.`).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Retry' }).count(), 0);
  assert.equal(await page.getByRole('alert').count(), 0);
  const form = page.getByRole('search', { name: 'Runs' });
  assert.equal(await form.getByLabel('Run B').inputValue(), `${first.jid}:${first.minion}`);
  assert.equal(await form.getByLabel('Run A').inputValue(), '');
  errors.assertNone();
});

test('two minions of one job, typed as <jid>:<minion>, side by side', async () => {
  const { page, errors } = await b.newPage();
  const { jid } = manifest.state_apply_multi;
  await page.goto(url('/compare'));
  await page.getByRole('alert').getByText(/no run to compare/).waitFor();
  const form = page.getByRole('search', { name: 'Runs' });
  await form.getByLabel('Run A').fill(`${jid}:web01.prod.example.com`);
  await form.getByLabel('Run B').fill(`${jid}:db-02`);
  await form.getByRole('button', { name: 'Compare' }).click();
  await page.waitForURL(/a=.*&b=/);
  const runs = page.getByRole('list', { name: 'Runs compared' });
  await runs.getByRole('link', { name: new RegExp(`${jid} on web01`) }).waitFor();
  await runs.getByRole('link', { name: new RegExp(`${jid} on db-02`) }).waitFor();
  // Computed from the two documents: states whose result, comment or
  // changes differ between them.
  const [a, bb] = ['web01.prod.example.com', 'db-02'].map((m) => stateRuns.find((d) => d.jid === jid && d.minion === m));
  const byId = (d) => new Map(states(d).map((s) => [s.__id__ + '|' + s.name, s]));
  const [ma, mb] = [byId(a), byId(bb)];
  const differing = [...mb].filter(([k, s]) => !ma.has(k) || ma.get(k).comment !== s.comment
    || ma.get(k).result !== s.result || JSON.stringify(ma.get(k).changes) !== JSON.stringify(s.changes)).length
    + [...ma.keys()].filter((k) => !mb.has(k)).length;
  assert.ok(differing > 0, 'the two minions ran their states differently');
  const rows = page.getByRole('table', { name: 'Differences' }).getByRole('row').filter({ has: page.getByRole('cell') });
  await page.getByRole('table', { name: 'Differences' }).waitFor();
  assert.equal(await rows.count(), differing);
  errors.assertNone();
});

test('failure patterns: one failure on several minions is one line, comments as text', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/'));
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Failures' }).click();
  await page.getByRole('search', { name: 'Filter' }).getByLabel('Time').selectOption('all');
  await page.waitForURL(/time=all/);
  const table = page.getByRole('table', { name: 'Failure patterns' });
  await table.waitFor();
  const demo = 'ordered demo failure <b>bold?</b>';
  const failing = new Set(stateRuns.filter((d) => states(d).some((s) => s.result === false && s.comment === demo)).map((d) => d.minion));
  assert.ok(failing.size >= 2, `the ordered_demo failure on ${failing.size} minions`);
  const row = table.getByRole('row').filter({ hasText: demo });
  assert.equal(await row.count(), 1, 'one pattern');
  assert.equal((await row.getByRole('cell').first().textContent()).match(/^\d+/)[0], String(failing.size));
  assert.equal(await table.locator('b').count(), 0, 'a comment is text, never HTML');
  // The render error of the broken SLS, a run that never started.
  const rendered = new Set(stateRuns.filter((d) => Array.isArray(d.data?.return)
    && d.data.return.join(' ').includes('broken')).map((d) => d.minion));
  const render = table.getByRole('row').filter({ hasText: '(render)' }).filter({ hasText: 'broken' });
  assert.equal((await render.first().getByRole('cell').first().textContent()).match(/^\d+/)[0], String(rendered.size));
  // The health check's IP and port are a placeholder.
  await table.getByRole('row').filter({ hasText: 'health check failed: backend <ip> refused the connection' }).waitFor();
  errors.assertNone();
});

test('SLS rollups: runs, failure and change rates of the SLS that ran three times; the slowest states', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/sls?time=all'));
  const table = page.getByRole('table', { name: 'SLS' });
  await table.waitFor();
  const runs = stateRuns.filter((d) => states(d).some((s) => s.__sls__ === 'drift'));
  const failed = runs.filter((d) => states(d).some((s) => s.__sls__ === 'drift' && s.result === false)).length;
  assert.equal(runs.length, 3);
  const cells = await table.getByRole('row').filter({ has: page.getByRole('cell', { name: 'drift', exact: true }) })
    .getByRole('cell').allTextContents();
  assert.equal(cells[1], '3');
  assert.equal(cells[2], `${Math.round(failed * 100 / 3)} % (${failed})`);
  assert.equal(cells[3], '100 % (3)', 'its cmd.run changes something on every run');
  const slowest = page.getByRole('table', { name: 'Slowest states' }).getByRole('row').filter({ has: page.getByRole('cell') });
  assert.ok(await slowest.count() > 0);
  errors.assertNone();
});

test('states that change every run: over the last three runs the cmd.run without unless is listed, the idempotent file is not', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/'));
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Drift' }).click();
  const form = page.getByRole('search', { name: 'Filter' });
  await form.getByLabel('Last runs').fill('3');
  await form.getByLabel('Changed in at least').fill('3');
  await form.getByLabel('Minion').fill('saltcall-plain.example.net');
  await form.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/runs=3/);
  const table = page.getByRole('table', { name: 'Changing states' });
  await table.waitFor();
  const every = table.getByRole('row').filter({ hasText: 'drift.every_run' });
  await every.getByRole('cell', { name: 'cmd.run', exact: true }).waitFor();
  await every.getByRole('link', { name: 'saltcall-plain.example.net' }).waitFor();
  assert.equal(await table.getByRole('row').filter({ hasText: 'drift.idempotent' }).count(), 0);
  assert.match(await every.textContent(), /stdout/, 'what keeps changing');
  await every.getByRole('link', { name: 'saltcall-plain.example.net' }).click();
  assert.ok(page.url().includes(`/job/${drift(3)}`), page.url());
  errors.assertNone();
});
