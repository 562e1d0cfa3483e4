// The job list at 1,000,000 generated returns (scripts/generate.sh, prefix
// `saltgen`): a deep link far into history and paging on from there with
// "Older jobs" to the very first job, each page checked against the
// engine's own composite aggregation and timed. Run by scripts/test.sh
// after the generator has loaded the returns:
//   BASE_URL=… ES_URL=… node --test e2e/scale/jobs-1m.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, screenshot, useIndexPrefix, eventually } from '../harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const PREFIX = process.env.GEN_PREFIX || 'saltgen';
const WANT_RETURNS = Number(process.env.GEN_RETURNS || 1000000);
const PAGE = 50;
let b;
let jids; // every jid with a return, newest first, as the engine aggregates them

async function es(path, body) {
  const r = await fetch(`${ES_URL}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, `${path}: ${r.status}`);
  return r.json();
}

const RETURNS = { bool: { filter: [{ exists: { field: 'minion' } }], must_not: [{ prefix: { _index: `${PREFIX}-master-` } }] } };

before(async () => {
  const count = await es(`/${PREFIX}-*/_count`, { query: RETURNS });
  assert.equal(count.count, WANT_RETURNS, `the generator loaded ${count.count} returns`);
  jids = [];
  let afterKey;
  for (;;) {
    const composite = { size: 10000, sources: [{ jid: { terms: { field: 'jid.keyword', order: 'desc' } } }] };
    if (afterKey) composite.after = afterKey;
    const r = await es(`/${PREFIX}-*/_search`, { size: 0, query: RETURNS, aggs: { j: { composite } } });
    const buckets = r.aggregations.j.buckets;
    jids.push(...buckets.map((x) => x.key.jid));
    if (buckets.length < 10000) break;
    afterKey = r.aggregations.j.after_key;
  }
  b = await openBrowser();
});
after(async () => { await b?.close(); });

async function generatedPage() {
  const { page, errors } = await b.newPage();
  await useIndexPrefix(page, PREFIX);
  return { page, errors };
}

async function rowsShown(page, first) {
  const table = page.getByRole('table', { name: 'Jobs' });
  await table.getByRole('link', { name: first, exact: true }).waitFor();
  await table.and(page.locator('[aria-busy=false]')).waitFor();
  return table.getByRole('row').getByRole('link').allTextContents();
}

test('the newest page of a million returns shows fifty jobs with their counts', async () => {
  const { page, errors } = await generatedPage();
  const t0 = Date.now();
  await page.goto(url('/?time=all&noisy=show'));
  const shown = await rowsShown(page, jids[0]);
  const ms = Date.now() - t0;
  assert.deepEqual(shown, jids.slice(0, PAGE));
  const count = await page.getByText(/[\d,]+ jobs, [\d,]+ returns/).textContent();
  const [, jobs, returns] = count.match(/([\d,]+) jobs, ([\d,]+) returns/);
  assert.equal(Number(returns), WANT_RETURNS);
  assert.ok(Math.abs(Number(jobs) - jids.length) <= jids.length * 0.01, `${jobs} jobs shown, ${jids.length} in the engine`);
  console.log(`# newest page of ${jids.length} jobs / ${WANT_RETURNS} returns: ${ms} ms`);
  await screenshot(page, 'scale-newest');
  errors.assertNone();
});

test('paging deep into the job list: a deep link, then Older jobs to the first job ever', async () => {
  const { page, errors } = await generatedPage();
  const start = jids.length - 7 * PAGE - 13; // eight pages from the oldest job
  const t0 = Date.now();
  await page.goto(url(`/?time=all&noisy=show&after=${jids[start - 1]}`));
  let shown = await rowsShown(page, jids[start]);
  console.log(`# deep link to job #${start + 1} of ${jids.length}: ${Date.now() - t0} ms`);
  assert.deepEqual(shown, jids.slice(start, start + PAGE));
  const times = [];
  let at = start;
  for (;;) {
    const older = page.getByRole('link', { name: 'Older jobs' });
    if (at + PAGE >= jids.length) {
      assert.equal(await older.count(), 0, 'the last page has no Older link');
      break;
    }
    const t = Date.now();
    await older.click();
    at += PAGE;
    shown = await rowsShown(page, jids[at]);
    times.push(Date.now() - t);
    assert.deepEqual(shown, jids.slice(at, at + PAGE), `page starting at job #${at + 1}`);
  }
  assert.equal(shown[shown.length - 1], jids[jids.length - 1], 'reached the oldest job');
  console.log(`# ${times.length} Older clicks: ${times.join(', ')} ms`);
  assert.ok(Math.max(...times) < 10000, `every page within 10 s: ${times}`);
  // and back towards the present
  await page.getByRole('link', { name: 'Newer jobs' }).click();
  shown = await rowsShown(page, jids[at - PAGE]);
  assert.deepEqual(shown, jids.slice(at - PAGE, at));
  errors.assertNone();
});

test('high-risk only reads the audit trail on until it has a page of such lines, not one page of all lines', async () => {
  // The risk rules read the arguments as Salt joined them, in the app: a
  // page of 100 published jobs once showed its one or two risky lines (or
  // "Nothing matches.") while thousands more lay behind "Older".
  const { page, errors } = await b.newPage();
  await useIndexPrefix(page, PREFIX);
  // The searches in each request: the first page's three (publish events,
  // the job cache, the jobs that returned), then only the publish events.
  const searches = [];
  page.on('request', (r) => {
    if (r.url().includes('/_msearch')) searches.push((r.postData() || '').trim().split('\n').length / 2);
  });
  await page.goto(url('/audit?risky=1&time=all'));
  // "… among 2000 of the 11742 published jobs", or "… among the 1297
  // published jobs" once all are read.
  const count = page.getByText(/^\d+ high-risk among (\d+ of )?the \d+ published jobs/);
  await count.waitFor({ timeout: 60000 });
  const [, risky, partly, total] = (await count.textContent()).match(/^(\d+) high-risk among (?:(\d+) of )?the (\d+)/).map(Number);
  const read = Number.isNaN(partly) ? total : partly;
  const rows = page.getByRole('table', { name: 'Audit trail' }).getByRole('row').filter({ has: page.getByRole('cell') });
  assert.equal(await rows.count(), risky);
  for (const risk of await rows.evaluateAll((trs) => trs.map((tr) => tr.cells[tr.cells.length - 1].textContent))) {
    assert.notEqual(risk, '', 'only flagged lines');
  }
  assert.ok(risky > 0, `${risky} high-risk lines among ${read}`);
  const older = await page.getByRole('link', { name: 'Older' }).count();
  // A full page, the whole trail, or the most one view reads (20 pages).
  assert.ok(risky >= 100 || read === total || read >= 2000, `${risky} high-risk among ${read} of ${total}, Older: ${older}`);
  assert.ok(read > 100 || read === total, `read on past the first page: ${read} of ${total}`);
  const pages = Math.ceil(read / 100);
  assert.deepEqual(searches, [3, ...Array(pages - 1).fill(1)], 'a later page sends only the search it reads');
  errors.assertNone();
});

test('a state drifting on many minions lists every one of them on request, each a link to its run', { timeout: 120000 }, async () => {
  const { page, errors } = await generatedPage();
  await page.goto(url('/drift'));
  const table = page.getByRole('table', { name: 'Changing states' });
  await table.getByRole('cell').first().waitFor({ timeout: 100000 });
  // The most minions first: the first row is the widest.
  const row = table.getByRole('row').nth(1);
  const minions = Number(await row.getByRole('cell').nth(3).textContent());
  assert.ok(minions > 10, `the widest drifting state is on ${minions} minions`);
  await row.getByText(`and ${minions - 10} more`, { exact: true }).click();
  await eventually(async () => (await row.getByRole('link').count()) === minions, `${minions} links`);
  errors.assertNone();
});

test('a failure pattern seen in more jobs than it links says how many more', { timeout: 120000 }, async () => {
  const { page, errors } = await generatedPage();
  await page.goto(url('/failures?time=all'));
  const table = page.getByRole('table', { name: 'Failure patterns' });
  await table.getByRole('cell').first().waitFor({ timeout: 100000 });
  const jobs = table.getByRole('row').filter({ hasText: /and \d+ more jobs/ }).first().getByRole('cell').last();
  await jobs.waitFor();
  assert.equal(await jobs.getByRole('link').count(), 10, 'ten jobs linked');
  assert.match(await jobs.textContent(), /and [1-9]\d* more jobs$/);
  errors.assertNone();
});
