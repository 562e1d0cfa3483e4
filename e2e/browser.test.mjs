// The job browser's views in the browser: filters, deep links, the
// histogram zoom, auto-refresh, minions, functions, audit and Salt's output
// modes — against nginx, the release build, the real engine and the data
// real Salt wrote. Expected rows come from the engine's own documents,
// queried here in JavaScript, independently of the Rust code under test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, readManifest, screenshot, shownJids, jobRows } from './harness.mjs';

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

// A runner's return says success: false whatever happened: its own
// verdict is data.success (core: ReturnDoc::outcome).
const failedDoc = (d) => (String(d.fun).startsWith('runner.') ? d.data?.success === false : d.success === false);
const jidsOf = (docs) => [...new Set(docs.map((d) => d.jid))].sort().reverse();

/** Waits until the job list shows `n` jobs. */
async function untilRows(page, n) {
  await page.waitForFunction((want) => {
    const table = [...document.querySelectorAll('table')].find((t) => t.getAttribute('aria-label') === 'Jobs');
    return table && table.querySelectorAll('tbody tr a').length === want;
  }, n);
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
  await untilRows(page, want.length);
  assert.deepEqual(await shownJids(page), want);
  // back: the unfiltered list again
  await page.goBack();
  await untilRows(page, all.length);
  assert.equal(await page.getByRole('search').getByLabel('Minion', { exact: true }).inputValue(), '');
  errors.assertNone();
});

test('saving the list of noisy functions hides them from the job list at once', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/'));
  const glob = (g) => new RegExp(`^${g.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
  const defaults = ['saltutil.*', 'mine.update', 'mine.send', 'grains.setval'].map(glob);
  // The first page: fifty jobs at most.
  const shown = (noisy) => jidsOf(returns.filter((d) => !noisy.some((re) => re.test(d.fun)))).slice(0, 50);
  await untilRows(page, shown(defaults).length);
  assert.ok(returns.some((d) => d.fun.startsWith('test.')), 'the Salt runs called test.*');
  await page.getByText('Noisy functions', { exact: true }).click();
  await page.getByLabel(/Hidden unless shown/).fill('test.*, saltutil.*');
  await page.getByRole('button', { name: 'Save' }).click();
  const want = shown([glob('test.*'), glob('saltutil.*')]);
  await untilRows(page, want.length);
  assert.deepEqual(await shownJids(page), want);
  assert.equal(new URL(page.url()).search, '', 'no reload, no new URL: the list asked again by itself');
  await page.getByRole('button', { name: 'Reset' }).click();
  await untilRows(page, shown(defaults).length);
  errors.assertNone();
});

test('a deep link reproduces a filtered view', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/?fun=cmd.run&outcome=failed&noisy=show'));
  const want = jidsOf(returns.filter((d) => d.fun === 'cmd.run' && failedDoc(d)));
  assert.ok(want.length > 0, 'the Salt runs have a failed cmd.run');
  await untilRows(page, want.length);
  assert.deepEqual(await shownJids(page), want);
  assert.equal(await page.getByRole('search').getByLabel('Function', { exact: true }).inputValue(), 'cmd.run');
  assert.equal(await page.getByRole('search').getByLabel('Outcome').inputValue(), 'failed');
  errors.assertNone();
});

/** The job list over a range just wider than every return's time, and its chart. */
async function chartOfAllReturns(page) {
  const times = returns.map((d) => Date.parse(d['@timestamp'])).sort((a, c) => a - c);
  const from = new Date(times[0] - 1000).toISOString();
  const to = new Date(times[times.length - 1] + 1000).toISOString();
  await page.goto(url(`/?noisy=show&time=${from}..${to}`));
  const svg = page.getByRole('figure', { name: 'Returns over time' }).getByRole('img');
  await svg.waitFor();
  return { from, to, box: await svg.boundingBox() };
}

test('dragging across the histogram zooms the time range and narrows the rows', async () => {
  const { page, errors } = await b.newPage();
  const { from, to, box } = await chartOfAllReturns(page);
  const before_ = await shownJids(page);
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
  await untilRows(page, want.length);
  const after_ = await shownJids(page);
  assert.deepEqual(after_, want);
  assert.ok(after_.length < before_.length, `${after_.length} of ${before_.length} rows after zooming`);
  await screenshot(page, 'histogram-zoomed');
  errors.assertNone();
});

test('a drag released past the chart\'s edge zooms to that edge', async () => {
  const { page, errors } = await b.newPage();
  const { from, to, box } = await chartOfAllReturns(page);
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
  await page.mouse.down();
  // out of the chart to the right and below, where the button is let go
  await page.mouse.move(box.x + box.width + 15, box.y + box.height + 40, { steps: 8 });
  await page.mouse.up();
  await page.waitForURL((u) => new URL(u).searchParams.get('time') !== `${from}..${to}`);
  const [zFrom, zTo] = new URL(page.url()).searchParams.get('time').split('..').map(Date.parse);
  const mid = (Date.parse(from) + Date.parse(to)) / 2;
  const span = Date.parse(to) - Date.parse(from);
  assert.ok(Math.abs(zFrom - mid) < span * 0.05, `starts mid-range: ${zFrom} against ${mid}`);
  assert.ok(Math.abs(zTo - Date.parse(to)) < span * 0.05, `ends at the range's end: ${zTo} against ${Date.parse(to)}`);
  errors.assertNone();
});

test('a right click on the histogram opens no zoom', async () => {
  const { page, errors } = await b.newPage();
  const { from, to, box } = await chartOfAllReturns(page);
  const y = box.y + box.height / 2;
  await page.mouse.click(box.x + box.width * 0.3, y, { button: 'right' });
  await page.mouse.click(box.x + box.width * 0.3, y, { button: 'middle' });
  // A left click zooms; Back from it must find the whole range again, not
  // a range the other buttons zoomed to.
  await page.mouse.click(box.x + box.width * 0.7, y);
  await page.waitForURL((u) => new URL(u).searchParams.get('time') !== `${from}..${to}`);
  await page.goBack();
  await page.waitForURL((u) => new URL(u).searchParams.get('time') === `${from}..${to}`);
  errors.assertNone();
});

test('hovering a bar shows its counts', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/?noisy=show&time=1h'));
  const chart = page.getByRole('figure', { name: 'Returns over time' });
  const svg = chart.getByRole('img', { name: /returns from/ });
  await svg.waitFor();
  const box = await svg.boundingBox();
  await page.mouse.move(box.x + box.width - 3, box.y + box.height / 2);
  await chart.getByRole('status').filter({ hasText: /\d+ succeeded, \d+ failed/ }).waitFor();
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
  await jobRows(page).first().waitFor();
  assert.equal(await page.getByRole('alert').count(), 0);
  errors.assertNone({ consoleOk: true });
});

test('auto-refresh keeps an expanded row open', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/?noisy=show&refresh=5s'));
  const first = jobRows(page).first();
  await first.waitFor();
  const toggle = first.getByRole('button', { name: /^Details of / });
  await toggle.click();
  const details = page.getByRole('term').filter({ hasText: 'Failed minions' });
  await details.waitFor();
  // Two refreshes: each is the job list's first _msearch again.
  for (let i = 0; i < 2; i++) {
    await page.waitForRequest((r) => r.url().endsWith('/_msearch'), { timeout: 15000 });
    await page.waitForResponse((r) => r.url().endsWith('/_msearch'), { timeout: 15000 });
  }
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true', 'the expanded row is still open');
  assert.equal(await details.count(), 1);
  assert.equal(await page.getByLabel('Auto-refresh').inputValue(), '5s');
  errors.assertNone();
});

test('the minions view counts each minion and opens its job history', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/minions?noisy=show'));
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'db-02', exact: true }) });
  await row.waitFor();
  const mine = returns.filter((d) => d.minion === 'db-02');
  const cells = await row.getByRole('cell').allTextContents();
  assert.equal(cells[2], String(new Set(mine.map((d) => d.jid)).size), 'jobs');
  assert.equal(cells[3], String(mine.length), 'returns');
  assert.equal(cells[4], String(mine.filter(failedDoc).length), 'failed');
  // A runner's return carries the master's id: no minion, unless a runner
  // is asked for by name.
  const minions = new Set(returns.filter((d) => !String(d.fun).startsWith('runner.')).map((d) => d.minion));
  const masters = [...new Set(returns.filter((d) => String(d.fun).startsWith('runner.')).map((d) => d.minion))]
    .filter((m) => !minions.has(m));
  assert.ok(masters.length > 0, 'the real data has runner returns');
  const table = page.getByRole('table');
  for (const master of masters) {
    assert.equal(await table.getByRole('link', { name: master, exact: true }).count(), 0, `${master} is listed as a minion`);
  }
  const runner = returns.find((d) => String(d.fun).startsWith('runner.'));
  await page.goto(url(`/minions?fun=${runner.fun}&time=all`));
  await page.getByRole('link', { name: runner.minion, exact: true }).waitFor();
  await page.goBack();
  await row.getByRole('link', { name: 'db-02', exact: true }).click();
  await page.waitForURL(/\/minion\/db-02/);
  await page.getByRole('heading', { name: 'Minion db-02' }).waitFor();
  const want = jidsOf(mine);
  await untilRows(page, want.length);
  assert.deepEqual(await shownJids(page), want);
  errors.assertNone();
});

test('a path no view has says so, and the views are a click away', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/nowhere/at/all'));
  await page.getByText('No such page.').waitFor();
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Minions' }).click();
  await page.waitForURL(/\/minions$/);
  await page.getByRole('link', { name: 'db-02', exact: true }).waitFor();
  assert.equal(await page.getByText('No such page.').count(), 0);
  // A trailing slash names the same view.
  await page.goto(url('/minion/db-02/'));
  await page.getByRole('heading', { name: 'Minion db-02' }).waitFor();
  errors.assertNone();
});

test('the functions view shows failure rates and who is failing now', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/functions?noisy=show'));
  const link = page.getByRole('link', { name: 'state.apply', exact: true });
  await link.waitFor();
  const docs = returns.filter((d) => d.fun === 'state.apply');
  const cells = await page.getByRole('row').filter({ has: link }).getByRole('cell').allTextContents();
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
  // A function no minion ran says so, and where the names are.
  await page.goto(url('/function/no.such'));
  const none = page.getByText('No minion returned no.such in this time range.');
  await none.waitFor();
  assert.equal(await page.getByRole('table', { name: 'Latest returns' }).count(), 0);
  assert.equal(await page.getByRole('link', { name: 'show failing only' }).count(), 0);
  await none.getByRole('link', { name: 'every function' }).click();
  await page.waitForURL((u) => u.pathname === '/functions');
  // Over all time there is no range to widen.
  await page.goto(url('/function/no.such?time=all'));
  await page.getByText('No minion returned no.such. Find the function among every function.').waitFor();
  assert.equal(await page.getByText(/Widen it/).count(), 0);
  errors.assertNone();
});

test('the functions and minions views link on in their own filter', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/functions?minion=db-02&time=all&noisy=show'));
  await page.getByRole('link', { name: 'jobs of state.apply' }).click();
  await page.waitForURL((u) => u.pathname === '/' && u.searchParams.get('fun') === 'state.apply'
    && u.searchParams.get('minion') === 'db-02' && u.searchParams.get('time') === 'all');
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  await page.goto(url('/minions?fun=state.apply&time=all'));
  await page.getByRole('link', { name: 'db-02', exact: true }).click();
  await page.waitForURL((u) => u.pathname === '/minion/db-02' && u.searchParams.get('fun') === 'state.apply'
    && u.searchParams.get('time') === 'all');
  await page.getByRole('heading', { name: 'Minion db-02' }).waitFor();
  errors.assertNone();
});

test('a runner that raised is a failed return: in the job list, the job page\'s counts and its section', async () => {
  // salt-run jobs.list_jobs against the elasticsearch job cache raises
  // (the returner has no get_jids): the returner still writes success:
  // false on every runner return, so only data.success tells.
  const raised = returns.find((d) => String(d.fun).startsWith('runner.') && d.data?.success === false);
  assert.ok(raised, 'the Salt runs have a runner that raised');
  const { page, errors } = await b.newPage();
  await page.goto(url('/?outcome=failed&noisy=show&time=all'));
  await page.getByRole('table', { name: 'Jobs' }).getByRole('link', { name: raised.jid, exact: true }).waitFor();
  // Who ran it, from the runner's own publish event (salt/run/<jid>/new).
  const row = page.getByRole('table', { name: 'Jobs' }).getByRole('row')
    .filter({ has: page.getByRole('link', { name: raised.jid, exact: true }) });
  await row.getByText(raised.data.user, { exact: true }).waitFor();
  await page.goto(url(`/job/${raised.jid}`));
  await page.getByText('Failed: 1', { exact: true }).waitFor();
  await page.getByText('Succeeded: 0', { exact: true }).waitFor();
  const section = page.getByRole('region', { name: raised.minion });
  await section.getByText('Failed', { exact: true }).waitFor();
  errors.assertNone();
});

test('"All succeeded" counts the jobs without a failure; the minions view then counts returns that did not fail', async () => {
  const failedJids = new Set(returns.filter(failedDoc).map((d) => d.jid));
  const good = jidsOf(returns.filter((d) => !failedJids.has(d.jid)));
  assert.ok(failedJids.size > 0 && good.length > 0, 'the Salt runs have jobs of both kinds');
  const { page, errors } = await b.newPage();
  await page.goto(url('/?outcome=succeeded&noisy=show&time=all'));
  await page.getByText(`${good.length} jobs`, { exact: true }).waitFor();
  const mine = returns.filter((d) => d.minion === 'db-02');
  const ok = mine.filter((d) => !failedDoc(d));
  assert.ok(ok.length < mine.length, 'db-02 has failed returns');
  await page.goto(url('/minions?outcome=succeeded&noisy=show&time=all'));
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'db-02', exact: true }) });
  await row.waitFor();
  const cells = await row.getByRole('cell').allTextContents();
  assert.equal(cells[2], String(new Set(ok.map((d) => d.jid)).size), 'jobs');
  assert.equal(cells[3], String(ok.length), 'returns');
  assert.equal(cells[4], '0', 'failed');
  errors.assertNone();
});

test('the audit view flags a risky command and links to its job', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/audit'));
  const { jid } = manifest.risky_rm;
  const trail = page.getByRole('table', { name: 'Audit trail' });
  const row = trail.getByRole('row').filter({ has: page.getByRole('link', { name: jid }) });
  await row.waitFor();
  assert.match(await row.textContent(), /sudo_carol/);
  const riskOf = async (r) => (await r.getByRole('cell').allTextContents()).at(-1);
  assert.match(await riskOf(row), /recursive forced delete/);
  const alice = manifest.sudo_user_jobs[0].jid;
  const plain = trail.getByRole('row').filter({ has: page.getByRole('link', { name: alice }) });
  assert.equal(await riskOf(plain), '', 'no risk flagged');
  await page.getByLabel('High-risk only').check();
  await page.waitForURL(/risky=1/);
  await plain.waitFor({ state: 'detached' });
  // The whole trail was read (one page of the real data's published jobs).
  await page.getByText(/^\d+ high-risk among the \d+ published jobs from the master's publish events$/).waitFor();
  for (const r of await trail.getByRole('row').filter({ has: page.getByRole('cell') }).all()) {
    assert.notEqual(await riskOf(r), '', 'only flagged lines');
  }
  await row.getByRole('link', { name: jid }).click();
  await page.getByRole('heading', { name: `Job ${jid}` }).waitFor();
  await screenshot(page, 'audit-to-job');
  errors.assertNone();
});

test('the audit trail says how many jobs returned beside how many it lists', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/audit?time=all'));
  const trail = page.getByRole('table', { name: 'Audit trail' });
  await trail.getByRole('row').nth(1).waitFor();
  const note = page.getByRole('list', { name: 'Notes' }).getByText(/^In this range \d+ jobs returned and \d+ were published/);
  await note.waitFor();
  const [, jobs, published] = (await note.textContent()).match(/^In this range (\d+) jobs returned and (\d+) were published \(a publish record\), not always the same jobs\. Only the published are listed/);
  assert.equal(Number(jobs), jidsOf(returns).length, 'every job that returned');
  await page.getByText(`${published} published jobs`).waitFor();
  // salt-call --local publishes nothing: its job returned, and the trail
  // cannot list it.
  const local = manifest.salt_call.plain.state_apply.jid;
  assert.ok(returns.some((d) => d.jid === local), 'the local job returned');
  assert.equal(await trail.getByRole('link', { name: local }).count(), 0);
  // A filter that matches nothing is said so, not taken for a master that
  // indexes no events.
  await page.goto(url('/audit?time=all&fun=no.such.function'));
  await page.getByRole('list', { name: 'Notes' }).getByText(/matches: widen the time range or the filter, or, if the master indexes neither/).waitFor();
  await page.getByText('0 published jobs', { exact: true }).waitFor();
  assert.equal(await page.getByText(/from the master job cache/).count(), 0, 'a page of neither source names none');
  errors.assertNone();
});

test('the job page switches Salt\'s output modes and hides clean states on request', async () => {
  const { page, errors } = await b.newPage();
  const { jid } = manifest.state_apply_multi;
  await page.goto(url(`/job/${jid}?output=terse`));
  const section = page.getByRole('region', { name: 'db-02', exact: true });
  const table = section.getByRole('table', { name: 'States' });
  await table.waitFor();
  // A state row's cells: #, Result, ID, Function, Name, Comment, Duration, Changes.
  const rowCells = () => table.getByRole('row').filter({ has: page.getByRole('cell') })
    .evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  const terseWords = ['Clean', 'Changed', 'Failed', 'Differs'];
  const terse = await rowCells();
  assert.ok(terse.length > 5);
  assert.ok(terse.every((c) => terseWords.includes(c[5])), 'terse: one word for every state');
  await page.getByRole('link', { name: 'mixed' }).click();
  await page.waitForURL(/output=mixed/);
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('section[aria-label="db-02"] table[aria-label="States"] tbody tr')];
    return rows.some((r) => r.cells[1]?.textContent.startsWith('False') && r.cells[5]?.textContent !== 'Failed');
  });
  const mixed = await rowCells();
  const failed = mixed.filter((c) => c[1].startsWith('False'));
  assert.ok(failed.length > 0);
  assert.ok(failed.every((c) => c[5] !== 'Failed'), 'mixed: failures in full, with their comment');
  assert.ok(mixed.filter((c) => c[1] === 'True').every((c) => terseWords.includes(c[5])), 'mixed: the rest terse');
  await page.getByRole('switch', { name: 'failures and changes only', checked: false }).click();
  await page.waitForURL(/only=problems/);
  const doc = returns.find((d) => d.jid === jid && d.minion === 'db-02');
  const states = Object.values(doc.data).filter((v) => v && typeof v === 'object' && 'result' in v);
  const changed = (c) => c && typeof c === 'object' && Object.keys(c).some((k) => k !== '_orig_key');
  const problems = states.filter((s) => s.result !== true || changed(s.changes)).length;
  await page.waitForFunction((want) => {
    const rows = [...document.querySelectorAll('section[aria-label="db-02"] table[aria-label="States"] tbody tr')];
    return rows.length === want;
  }, problems);
  await page.getByRole('switch', { name: 'failures and changes only', checked: true }).waitFor();
  // A switch turns on Space, as a person at the keyboard expects.
  await page.getByRole('switch', { name: 'group by SLS', checked: false }).focus();
  await page.keyboard.press('Space');
  await page.waitForURL(/group=sls/);
  await table.getByRole('rowheader', { name: /^SLS / }).first().or(table.getByRole('columnheader', { name: /^SLS / }).first()).waitFor();
  await screenshot(page, 'job-modes');
  errors.assertNone();
});

test('the job page lists only the minions that failed on request, its totals still the whole job\'s', async () => {
  const { page, errors } = await b.newPage();
  const { jid } = manifest.state_apply_multi;
  const docs = returns.filter((d) => d.jid === jid);
  const failed = docs.filter((d) => d.success === false).map((d) => d.minion).sort();
  assert.ok(failed.length > 0 && failed.length < docs.length, `${failed.length} of ${docs.length} failed`);
  await page.goto(url(`/job/${jid}`));
  const chips = page.getByRole('navigation', { name: 'Minions' });
  await chips.getByRole('link').nth(docs.length - 1).waitFor();
  await page.getByRole('switch', { name: 'failed minions only', checked: false }).click();
  await page.waitForURL(/outcome=failed/);
  await page.getByRole('status').getByText(`Listing the ${failed.length} failed of ${docs.length} minions that returned.`).waitFor();
  assert.deepEqual(await chips.getByRole('link').allTextContents(), failed);
  const sections = page.locator('main').getByRole('region').filter({ has: page.getByRole('heading', { level: 2 }) });
  assert.equal(await sections.count(), failed.length);
  await page.getByRole('region', { name: 'Totals' }).getByText(`Minions returned: ${docs.length}`).waitFor();
  // Pressed again: every minion.
  await page.getByRole('switch', { name: 'failed minions only', checked: true }).click();
  await page.waitForURL((u) => !u.search.includes('outcome='));
  await chips.getByRole('link').nth(docs.length - 1).waitFor();
  // A link to a minion that succeeded, opened listing only the failed: said,
  // with the way to it.
  const fine = docs.find((d) => d.success !== false).minion;
  await page.goto(url(`/job/${jid}?outcome=failed#minion-${fine}`));
  const elsewhere = page.getByText('The minion the link names is not among the failed:');
  await elsewhere.getByRole('link', { name: 'see it among every minion' }).click();
  await page.waitForURL((u) => !u.search.includes('outcome=') && u.hash === `#minion-${fine}`);
  await page.getByRole('region', { name: fine, exact: true }).waitFor();
  // A job no minion failed: none listed, the job's state totals still said.
  const byJid = new Map();
  for (const d of returns) byJid.set(d.jid, [...(byJid.get(d.jid) || []), d]);
  const isStateRun = (d) => d.data && typeof d.data === 'object'
    && Object.values(d.data).some((v) => v && typeof v === 'object' && '__run_num__' in v);
  const [clean] = [...byJid].find(([, ds]) => ds.every((d) => d.success === true && isStateRun(d))) || [];
  assert.ok(clean, 'a state run where no minion failed');
  await page.goto(url(`/job/${clean}`));
  const states = page.getByRole('region', { name: 'Totals' }).getByText(/Total states run: \d+/);
  const whole = await states.textContent();
  await page.goto(url(`/job/${clean}?outcome=failed`));
  await page.getByRole('status').getByText('No minion failed in this job.').waitFor();
  assert.equal(await states.textContent(), whole);
  errors.assertNone();
});

test('a link naming a minion the job page does not list leads to its line among the missing, or says it has no return', async () => {
  const { page, errors } = await b.newPage();
  await page.setViewportSize({ width: 1200, height: 400 });
  const { jid, never_returns: [gone] } = manifest.missing_minion;
  assert.ok(gone, 'salt-data.sh targets a minion that never answers');
  const inView = (id) => page.waitForFunction((id) => {
    const r = document.getElementById(id)?.getBoundingClientRect();
    return r && r.top >= 0 && r.bottom <= innerHeight;
  }, id);
  // Targeted, never answered: the page scrolls to its line, listing every
  // minion or only the failed, and says nothing of failing.
  for (const query of ['', '?outcome=failed']) {
    await page.goto(url(`/job/${jid}${query}#minion-${gone}`));
    await page.getByRole('region', { name: 'Missing minions' }).getByRole('listitem').filter({ hasText: gone }).waitFor();
    await inView(`minion-${gone}`);
    assert.equal(await page.getByText(/which the link names|not among the failed/).count(), 0, query);
  }
  // No such minion in the job: said, not silently ignored.
  await page.goto(url(`/job/${jid}#minion-nosuch`));
  await page.getByText('nosuch, which the link names, has no return in this job.').waitFor();
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
  await page.getByText('No return from db-02 matches.').waitFor();
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
