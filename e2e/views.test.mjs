// The job list and the job page, against the nginx-served release build,
// the real engine and the data real Salt wrote (scripts/salt-data.sh).
// Expected values are computed here from the engine's own documents, in
// JavaScript, independently of the Rust code under test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, readManifest, screenshot, shownJids, jobRows, fixtureJobPath } from './harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
let b;
let manifest;
before(async () => {
  manifest = readManifest();
  b = await openBrowser();
});
after(async () => { await b?.close(); });

async function returnsOf(jid) {
  const body = {
    size: 1000,
    query: { bool: { filter: [{ term: { 'jid.keyword': jid } }, { exists: { field: 'minion' } }] } },
  };
  const r = await fetch(`${ES_URL}/salt-*/_search`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, `engine search for ${jid}`);
  return (await r.json()).hits.hits.map((h) => h._source);
}

// What Salt's highstate outputter would show for one state return.
function expectedStates(data) {
  const runs = Object.values(data)
    .filter((v) => v && typeof v === 'object' && 'result' in v)
    .sort((a, b) => a.__run_num__ - b.__run_num__);
  const changed = (c) => c && typeof c === 'object' && Object.keys(c).some((k) => k !== '_orig_key');
  const ok = runs.filter((r) => r.result !== false).length;
  const none = runs.filter((r) => r.result === null).length;
  const nChanged = runs.filter((r) => changed(r.changes)).length;
  const stats = [none ? `unchanged=${none}` : '', nChanged ? `changed=${nChanged}` : ''].filter(Boolean);
  return {
    rows: runs.map((r) => ({
      id: r.__id__,
      result: r.result === true ? 'True' : r.result === false ? 'False' : 'None',
    })),
    succeeded: `Succeeded: ${ok}` + (stats.length ? ` (${stats.join(', ')})` : ''),
    failed: `Failed: ${runs.filter((r) => r.result === false).length}`,
    total: `Total states run: ${runs.length}`,
  };
}

// A state row's cells: #, Result, ID, Function, Name, Comment, Duration, Changes.
async function stateRowsIn(section) {
  return section.getByRole('table', { name: 'States' }).getByRole('row')
    .filter({ has: section.page().getByRole('cell') })
    .evaluateAll((rows) => rows.map((tr) => ({
      id: tr.cells[2].textContent,
      result: tr.cells[1].textContent.replace(/ \(did not run\)$/, ''),
    })));
}

test('the job list shows the jobs Salt produced, newest first', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/'));
  const jids = await shownJids(page);
  assert.ok(jids.length >= 5, `rows: ${jids.length}`);
  assert.deepEqual(jids, [...jids].sort().reverse(), 'newest first');
  await screenshot(page, 'job-list');
  // One of them, found by its jid (earlier local runs' live-Salt jobs may
  // have pushed it off the first page): its function and minion count.
  await page.goto(url(fixtureJobPath()));
  const multi = manifest.state_apply_multi;
  const link = page.getByRole('link', { name: multi.jid, exact: true });
  await link.waitFor();
  const row = page.getByRole('row').filter({ has: link });
  await assert.doesNotReject(row.getByRole('cell', { name: 'state.apply', exact: true }).waitFor());
  assert.match(await row.textContent(), new RegExp(String(multi.returned.length)));
  errors.assertNone();
});

test('a multi-minion state.apply shows every minion with its states in run order and the right summary', async () => {
  const { page, errors } = await b.newPage();
  const { jid } = manifest.state_apply_multi;
  const docs = await returnsOf(jid);
  assert.ok(docs.length >= 4, `returns of ${jid}: ${docs.length}`);
  await page.goto(url(`/job/${jid}`));
  await page.getByRole('heading', { name: `Job ${jid}` }).waitFor();
  for (const doc of docs) {
    const section = page.getByRole('region', { name: doc.minion, exact: true });
    await section.waitFor();
    const want = expectedStates(doc.data);
    assert.ok(want.rows.length > 5, `${doc.minion} has ${want.rows.length} states`);
    // Each minion's output comes in its own answer: wait for its states.
    await section.getByRole('table', { name: 'States' }).getByRole('row').nth(want.rows.length).waitFor();
    assert.deepEqual(await stateRowsIn(section), want.rows, `states of ${doc.minion}`);
    const summary = await section.getByLabel('Summary').textContent();
    for (const line of [want.succeeded, want.failed, want.total]) {
      assert.ok(summary.includes(line), `${doc.minion}: "${line}" in "${summary}"`);
    }
    const outcome = doc.success ? 'Succeeded' : 'Failed';
    assert.ok((await section.getByRole('heading').textContent()).includes(outcome));
  }
  await screenshot(page, 'job-state-apply');
  errors.assertNone();
});

test('a state comment holding <script> and <img onerror> shows as text and runs nothing', async () => {
  const { page, errors } = await b.newPage();
  let dialogs = 0;
  page.on('dialog', async (d) => { dialogs += 1; await d.dismiss(); });
  const { jid } = manifest.state_apply_multi;
  await page.goto(url(`/job/${jid}`));
  const comment = page.getByText('<script>alert(1)</script> and <img src=x onerror=alert(1)>').first();
  await comment.waitFor();
  // No element was made from the document's text, so nothing of it can run
  // (an <img onerror> would need the element).
  assert.equal(await page.locator('main script, main img').count(), 0, 'no element was made from document text');
  assert.equal(dialogs, 0, 'no script ran');
  errors.assertNone();
});

test('a job targeting a minion that is not running lists it as missing', async () => {
  const { page, errors } = await b.newPage();
  const scenario = manifest.missing_minion;
  const missing = scenario.minions.filter((m) => !scenario.returned.includes(m));
  assert.ok(missing.length > 0, 'the scenario targets a minion that never returns');
  await page.goto(url(`/job/${scenario.jid}`));
  const list = page.getByRole('region', { name: 'Missing minions' });
  await list.waitFor();
  for (const m of missing) assert.ok((await list.textContent()).includes(m), m);
  errors.assertNone();
});

test('a minion a list target named but the master did not know is missing, with why', async () => {
  const { page, errors } = await b.newPage();
  const scenario = manifest.unknown_minion;
  await page.goto(url(`/job/${scenario.jid}`));
  const list = page.getByRole('region', { name: 'Missing minions' });
  await list.getByText('ghost01').waitFor();
  assert.match(await list.textContent(), /ghost01 — the master did not know this minion/);
  await page.getByRole('region', { name: 'web01.prod.example.com', exact: true }).waitFor();
  assert.match(await page.getByRole('region', { name: 'Totals' }).textContent(), /Missing: 1/);
  // The job list counts it in its Missing column.
  await page.goto(url(`/?jid=${scenario.jid}`));
  const row = jobRows(page).filter({ has: page.getByRole('link', { name: scenario.jid, exact: true }) });
  await row.waitFor();
  const headers = await page.getByRole('table', { name: 'Jobs' }).getByRole('columnheader').allTextContents();
  const cells = await row.getByRole('cell').allTextContents();
  assert.equal(cells[headers.indexOf('Missing')], '1');
  errors.assertNone();
});

test('a non-state job shows its return', async () => {
  const { page, errors } = await b.newPage();
  const { jid } = manifest.cmd_run;
  const docs = await returnsOf(jid);
  await page.goto(url(`/job/${jid}`));
  for (const doc of docs) {
    const section = page.getByRole('region', { name: doc.minion, exact: true });
    await section.waitFor();
    const output = section.getByText(String(doc.data).split('\n')[0]);
    assert.equal(await output.textContent(), String(doc.data), `return of ${doc.minion}`);
  }
  assert.ok(docs.some((d) => !d.success), 'one minion exited non-zero');
  const failed = docs.find((d) => !d.success);
  const heading = await page.getByRole('region', { name: failed.minion, exact: true }).getByRole('heading').textContent();
  assert.match(heading, /Failed/);
  assert.match(heading, new RegExp(`retcode ${failed.retcode}`));
  errors.assertNone();
});

test('an unreachable engine gives a message naming the URL, not a blank page', async () => {
  const { page, errors } = await b.newPage();
  errors.ignore(/127\.0\.0\.1:9\//);
  errors.ignore(/Failed to fetch|ERR_CONNECTION_REFUSED/);
  await page.route('**/config.json', (route) => route.fulfill({
    contentType: 'application/json',
    body: JSON.stringify({ engine_url: 'http://127.0.0.1:9' }),
  }));
  await page.goto(url('/'));
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const text = await alert.textContent();
  assert.match(text, /cannot be reached/);
  assert.match(text, /http:\/\/127\.0\.0\.1:9\//);
  errors.assertNone({ consoleOk: true });
});

test('an engine error answer shows the engine\'s reason', async () => {
  const { page, errors } = await b.newPage();
  errors.ignore(/HTTP 404/);
  await page.route('**/config.json', (route) => route.fulfill({
    contentType: 'application/json',
    body: JSON.stringify({ engine_url: '/es/saltscope-no-such-index' }),
  }));
  await page.goto(url('/'));
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const text = await alert.textContent();
  assert.match(text, /answered 404/);
  assert.match(text, /no such index \[saltscope-no-such-index\]/);
  errors.assertNone({ consoleOk: true });
});

test('a search text the engine cannot parse says what to change, with no Retry that cannot help', async () => {
  const { page, errors } = await b.newPage();
  errors.ignore(/HTTP 400/);
  await page.goto(url('/?q=%22rm+-rf'));
  const alert = page.getByRole('alert').filter({ hasText: 'The search text does not parse' });
  await alert.waitFor();
  assert.match(await alert.textContent(), /Close its quotes and brackets/);
  assert.equal(await alert.getByRole('button').count(), 0);
  // Changed and applied, the list is back.
  await page.getByRole('searchbox', { name: 'Search' }).fill('"rm -rf"');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText(/^\d+ jobs?, \d+ returns?/).first().waitFor();
  assert.equal(await alert.count(), 0);
  errors.assertNone({ consoleOk: true });
});

test('a page cursor in the address that is no jid is said so, and the newest jobs are shown', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/?before=%3Cscript%3E'));
  await page.getByRole('list', { name: 'Link problems' })
    .getByText('Ignored in the link: before=<script>: no jid to page from; the newest jobs are shown').waitFor();
  await page.goto(url('/?time=all'));
  const rows = await shownJids(page);
  await page.goto(url('/?time=all&after=nope'));
  await page.getByRole('list', { name: 'Link problems' }).waitFor();
  assert.deepEqual(await shownJids(page), rows, 'the first page, as without the cursor');
  errors.assertNone();
});

test('a job no minion answered, asked for by its jid, is not in the list made of returns: the list links to its page', async () => {
  const { page, errors } = await b.newPage();
  const { jid } = manifest.test_ping_blacklisted;
  assert.equal((await returnsOf(jid)).length, 0, 'no minion returned it');
  await page.goto(url(`/?jid=${jid}&time=all&noisy=show`));
  await page.getByText('No minion\'s return holds job').getByRole('link', { name: jid }).click();
  await page.getByRole('heading', { name: `Job ${jid}` }).waitFor();
  await page.getByRole('region', { name: 'Totals' }).getByText(/^Missing: \d+$/).waitFor();
  errors.assertNone();
});

test('a runner in the audit trail links to its job page, as every other job does', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/audit?time=all'));
  const trail = page.getByRole('table', { name: 'Audit trail' });
  const runner = trail.getByRole('row').filter({ hasText: '(runner)' }).first();
  await runner.waitFor();
  const link = runner.getByRole('link', { name: /^\d{20}$/ });
  const jid = await link.textContent();
  await link.click();
  await page.getByRole('heading', { name: `Job ${jid}` }).waitFor();
  errors.assertNone();
});

test('the audit trail answers who touched a minion: jobs that reached it through a glob are listed', async () => {
  const { page, errors } = await b.newPage();
  const rm = manifest.risky_rm;
  assert.equal(rm.tgt, 'web0*', 'a glob, not the minion\'s name');
  await page.goto(url('/audit'));
  const trail = page.getByRole('table', { name: 'Audit trail' });
  await trail.getByRole('link', { name: manifest.missing_minion.jid }).waitFor();
  const form = page.getByRole('search', { name: 'Filter' });
  await form.getByLabel('Minion').fill('web01.prod.example.com');
  await form.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/minion=web01\.prod\.example\.com/);
  // The unfiltered trail stays until the filtered one is drawn: a job sent
  // to db-02 and offline-05 only leaves it, the rm -rf on web0* stays.
  await trail.getByRole('link', { name: manifest.missing_minion.jid }).waitFor({ state: 'detached' });
  await trail.getByRole('link', { name: rm.jid }).waitFor();
  errors.assertNone();
});

test('a minion that never returned: its page says so and leads to the jobs published to it', async () => {
  const { page, errors } = await b.newPage();
  const { jid, never_returns: [minion] } = manifest.missing_minion;
  assert.ok(minion, 'salt-data.sh targets a minion that never answers');
  await page.goto(url(`/minion/${minion}`));
  const line = page.getByText(`No return from ${minion} matches.`);
  await line.waitFor();
  assert.equal(await page.getByText(/check that the index pattern/).count(), 0, 'no advice about config.json');
  await line.getByRole('link', { name: 'audit trail' }).click();
  await page.waitForURL((u) => u.pathname === '/audit' && u.searchParams.get('minion') === minion);
  await page.getByRole('table', { name: 'Audit trail' }).getByRole('link', { name: jid }).waitFor();
  // Narrowed to failed returns, no match says nothing of never answering.
  await page.goto(url(`/minion/${minion}?outcome=failed`));
  await page.getByText('No jobs match.').waitFor();
  assert.equal(await page.getByText(/No return from/).count(), 0);
  errors.assertNone();
});
