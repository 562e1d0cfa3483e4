// The job browser's views in the browser: filters, deep links, the
// histogram zoom, auto-refresh, minions, functions, audit and Salt's output
// modes — against nginx, the release build, the real engine and the data
// real Salt wrote. Expected rows come from the engine's own documents,
// queried here in JavaScript, independently of the Rust code under test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, readManifest, screenshot } from './harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
let b;
let manifest;
let returns; // every return document's _source
before(async () => {
  manifest = readManifest();
  returns = await allReturns();
  b = await openBrowser();
});
after(async () => { await b?.close(); });

async function allReturns() {
  const body = {
    size: 10000,
    query: { bool: { filter: [{ exists: { field: 'minion' } }], must_not: [{ prefix: { _index: 'salt-master-' } }] } },
  };
  const r = await fetch(`${ES_URL}/salt-*/_search`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(r.status, 200);
  return (await r.json()).hits.hits.map((h) => h._source);
}

const failedDoc = (d) => d.success === false && !String(d.fun).startsWith('runner.');
const jidsOf = (docs) => [...new Set(docs.map((d) => d.jid))].sort().reverse();

async function shownJids(page) {
  await page.locator('table.jobs').waitFor();
  await page.waitForFunction(() => !document.querySelector('.list-tools .loading'));
  return page.locator('table.jobs tbody tr.job td:nth-child(2)').allTextContents();
}

test('filters change the URL and the rows', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/?noisy=show'));
  const all = await shownJids(page);
  assert.ok(all.length >= 10, `rows: ${all.length}`);
  await page.getByRole('search').getByLabel('Minion', { exact: true }).fill('db-02');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/minion=db-02/);
  const want = jidsOf(returns.filter((d) => d.minion === 'db-02'));
  await page.waitForFunction((n) => document.querySelectorAll('table.jobs tbody tr.job').length === n, want.length);
  assert.deepEqual(await shownJids(page), want);
  // back: the unfiltered list again
  await page.goBack();
  await page.waitForFunction((n) => document.querySelectorAll('table.jobs tbody tr.job').length === n, all.length);
  assert.equal(await page.getByRole('search').getByLabel('Minion', { exact: true }).inputValue(), '');
  errors.assertNone();
});

test('a deep link reproduces a filtered view', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/?fun=cmd.run&outcome=failed&noisy=show'));
  const want = jidsOf(returns.filter((d) => d.fun === 'cmd.run' && failedDoc(d)));
  assert.ok(want.length > 0, 'the Salt runs have a failed cmd.run');
  await page.waitForFunction((n) => document.querySelectorAll('table.jobs tbody tr.job').length === n, want.length);
  assert.deepEqual(await shownJids(page), want);
  assert.equal(await page.getByRole('search').getByLabel('Function', { exact: true }).inputValue(), 'cmd.run');
  assert.equal(await page.locator('select[name=outcome]').inputValue(), 'failed');
  errors.assertNone();
});

test('dragging across the histogram zooms the time range and narrows the rows', async () => {
  const { page, errors } = await b.newPage();
  const times = returns.map((d) => Date.parse(d['@timestamp'])).sort((a, c) => a - c);
  const from = new Date(times[0] - 1000).toISOString();
  const to = new Date(times[times.length - 1] + 1000).toISOString();
  await page.goto(url(`/?noisy=show&time=${from}..${to}`));
  const before_ = await shownJids(page);
  const svg = page.locator('figure.histogram svg');
  await svg.waitFor();
  const box = await svg.boundingBox();
  // the later half of the range
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2, { steps: 5 });
  await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.waitForURL((u) => new URL(u).searchParams.get('time') !== `${from}..${to}`);
  const [zFrom, zTo] = new URL(page.url()).searchParams.get('time').split('..').map(Date.parse);
  assert.ok(zFrom > Date.parse(from) && zTo <= Date.parse(to) + 1000, `zoomed to ${zFrom}..${zTo}`);
  const want = jidsOf(returns.filter((d) => {
    const t = Date.parse(d['@timestamp']);
    return t >= zFrom && t <= zTo;
  }));
  await page.waitForFunction((n) => document.querySelectorAll('table.jobs tbody tr.job').length === n, want.length);
  const after_ = await shownJids(page);
  assert.deepEqual(after_, want);
  assert.ok(after_.length < before_.length, `${after_.length} of ${before_.length} rows after zooming`);
  await screenshot(page, 'histogram-zoomed');
  errors.assertNone();
});

test('hovering a bar shows its counts', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/?noisy=show&time=1h'));
  const bar = page.locator('figure.histogram g.bar rect.bar-succeeded').last();
  await bar.waitFor({ state: 'attached' });
  const svg = page.locator('figure.histogram svg');
  const box = await svg.boundingBox();
  await page.mouse.move(box.x + box.width - 3, box.y + box.height / 2);
  await page.locator('figure.histogram .hover').filter({ hasText: /\d+ succeeded, \d+ failed/ }).waitFor();
  errors.assertNone();
});

test('a free-text syntax error shows the engine\'s explanation and the filter still works', async () => {
  const { page, errors } = await b.newPage();
  errors.ignore(/HTTP 400/);
  await page.goto(url('/?q=fun%3A('));
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /answered 400.*[Pp]arse/s);
  await page.getByRole('search').getByLabel('Search', { exact: true }).fill('fun:cmd.run');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.locator('table.jobs tbody tr.job').first().waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
  errors.assertNone({ consoleOk: true });
});

test('auto-refresh keeps an expanded row open', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/?noisy=show&refresh=5s'));
  const first = page.locator('table.jobs tbody tr.job').first();
  await first.waitFor();
  await first.getByRole('button').click();
  await page.locator('tr.job-detail').waitFor();
  const refreshes = [];
  page.on('request', (r) => { if (r.url().endsWith('/_msearch')) refreshes.push(Date.now()); });
  await page.waitForTimeout(6500);
  assert.ok(refreshes.length >= 2, `requests during refresh: ${refreshes.length}`);
  assert.equal(await page.locator('tr.job-detail').count(), 1, 'the expanded row is still open');
  assert.equal(await page.getByLabel('Auto-refresh').inputValue(), '5s');
  errors.assertNone();
});

test('the minions view counts each minion and opens its job history', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/minions?noisy=show'));
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'db-02', exact: true }) });
  await row.waitFor();
  const mine = returns.filter((d) => d.minion === 'db-02');
  const cells = await row.locator('td').allTextContents();
  assert.equal(cells[2], String(new Set(mine.map((d) => d.jid)).size), 'jobs');
  assert.equal(cells[3], String(mine.length), 'returns');
  assert.equal(cells[4], String(mine.filter(failedDoc).length), 'failed');
  await row.getByRole('link', { name: 'db-02', exact: true }).click();
  await page.waitForURL(/\/minion\/db-02/);
  await page.getByRole('heading', { name: 'Minion db-02' }).waitFor();
  const want = jidsOf(mine);
  await page.waitForFunction((n) => document.querySelectorAll('table.jobs tbody tr.job').length === n, want.length);
  assert.deepEqual(await shownJids(page), want);
  errors.assertNone();
});

test('the functions view shows failure rates and who is failing now', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/functions?noisy=show'));
  const link = page.getByRole('link', { name: 'state.apply', exact: true });
  await link.waitFor();
  const docs = returns.filter((d) => d.fun === 'state.apply');
  const cells = await page.getByRole('row').filter({ has: link }).locator('td').allTextContents();
  assert.equal(cells[1], String(docs.length));
  assert.equal(cells[4], `${(docs.filter(failedDoc).length / docs.length * 100).toFixed(1)} %`);
  await link.click();
  await page.waitForURL(/\/function\/state\.apply/);
  const latest = new Map();
  for (const d of docs) {
    const prev = latest.get(d.minion);
    if (!prev || prev['@timestamp'] < d['@timestamp']) latest.set(d.minion, d);
  }
  const failing = [...latest.values()].filter(failedDoc).length;
  await page.getByText(`${latest.size} minions, ${failing} failing now`).waitFor();
  errors.assertNone();
});

test('the audit view flags a risky command and links to its job', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/audit'));
  const { jid } = manifest.risky_rm;
  const row = page.locator('tr.audit-line').filter({ has: page.getByRole('link', { name: jid }) });
  await row.waitFor();
  assert.match(await row.getAttribute('class'), /\brisky\b/);
  assert.match(await row.textContent(), /sudo_carol/);
  assert.match(await row.locator('td.risk').textContent(), /recursive forced delete/);
  const alice = manifest.sudo_user_jobs[0].jid;
  const plain = page.locator('tr.audit-line').filter({ has: page.getByRole('link', { name: alice }) });
  assert.doesNotMatch(await plain.getAttribute('class'), /\brisky\b/);
  await page.getByLabel('High-risk only').check();
  await page.waitForURL(/risky=1/);
  await page.waitForFunction(() => [...document.querySelectorAll('tr.audit-line')].every((r) => r.classList.contains('risky')));
  await row.getByRole('link', { name: jid }).click();
  await page.getByRole('heading', { name: `Job ${jid}` }).waitFor();
  await screenshot(page, 'audit-to-job');
  errors.assertNone();
});

test('the job page switches Salt\'s output modes and hides clean states on request', async () => {
  const { page, errors } = await b.newPage();
  const { jid } = manifest.state_apply_multi;
  await page.goto(url(`/job/${jid}?output=terse`));
  const section = page.getByRole('region', { name: 'db-02', exact: true });
  await section.waitFor();
  const rows = section.locator('table.states tbody tr.state');
  const n = await rows.count();
  assert.equal(await section.locator('tr.state.terse').count(), n, 'terse: every state on one line');
  await page.getByRole('link', { name: 'mixed' }).click();
  await page.waitForURL(/output=mixed/);
  const failedRows = await section.locator('tr.state-false').count();
  assert.ok(failedRows > 0);
  await page.waitForFunction(() => document.querySelectorAll('tr.state-false.terse').length === 0);
  await page.getByRole('link', { name: 'failures and changes only' }).click();
  await page.waitForURL(/only=problems/);
  await page.waitForFunction(() => document.querySelectorAll('tr.state-true.terse').length === 0
    || [...document.querySelectorAll('tr.state-true')].length < 200);
  const doc = returns.find((d) => d.jid === jid && d.minion === 'db-02');
  const states = Object.values(doc.data).filter((v) => v && typeof v === 'object' && 'result' in v);
  const changed = (c) => c && typeof c === 'object' && Object.keys(c).some((k) => k !== '_orig_key');
  const problems = states.filter((s) => s.result !== true || changed(s.changes)).length;
  await page.waitForFunction((want) => {
    const s = [...document.querySelectorAll('section[aria-label="db-02"] table.states tbody tr.state')];
    return s.length === want;
  }, problems);
  await page.getByRole('link', { name: 'group by SLS' }).click();
  await page.waitForURL(/group=sls/);
  await section.locator('tbody.sls-group').first().waitFor();
  await screenshot(page, 'job-modes');
  errors.assertNone();
});

test('an index pattern that matches nothing says why, and a missing job cache leaves the rest working', async () => {
  const { page, errors } = await b.newPage();
  await page.route('**/config.json', (route) => route.fulfill({
    contentType: 'application/json',
    body: JSON.stringify({ engine_url: '/es', index_pattern: 'nosuch-*', job_cache_index: 'nosuch-job-cache', event_index_pattern: 'nosuch-events*' }),
  }));
  await page.goto(url('/'));
  await page.getByText('No jobs match.').waitFor();
  await page.getByText(/indices matching `nosuch-\*` have no field `jid`/).waitFor();
  // the filter bar still works
  await page.getByRole('search').getByLabel('Minion', { exact: true }).fill('db-02');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/minion=db-02/);
  await page.getByText('No jobs match.').waitFor();
  errors.assertNone();

  // Real returns, but the job cache and event indices do not exist: the
  // job list and the job page still show every return.
  const p2 = await b.newPage();
  await p2.page.route('**/config.json', (route) => route.fulfill({
    contentType: 'application/json',
    body: JSON.stringify({ engine_url: '/es', job_cache_index: 'nosuch-job-cache', event_index_pattern: 'nosuch-events*' }),
  }));
  const { jid } = manifest.state_apply_multi;
  await p2.page.goto(url(`/job/${jid}`));
  await p2.page.getByRole('region', { name: 'db-02', exact: true }).waitFor();
  await p2.page.getByText(/no publish event or job-cache load/).waitFor();
  await p2.page.goto(url('/audit'));
  await p2.page.getByText(/turn on `event_return: elasticsearch`/).waitFor();
  p2.errors.assertNone();
});
