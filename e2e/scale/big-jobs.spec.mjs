// Jobs of any shape, generated (scripts/generate.sh, prefix GEN_BIG_PREFIX,
// RETURNS=0, MINIONS=2100 with STATES_PER_RETURN=10000, MINIONS_PER_JOB=2000
// (a list target of 2,015 names), OUTPUT_BYTES=5000000, which also makes a
// cmd.run_all and a file.find of 5 MB; the 10,000-state return holds a 100 KB
// comment and a cmd.run named by its script): each job page opens, shows the right
// totals and Salt's summary lines, draws the first screen at once and the
// rest as the person scrolls or asks; no answer of the page is over 20 MB;
// the JS heap stays bounded. Correctness at size, not timings
// (scripts/bench.sh times).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, useIndexPrefix, CHROMIUM_ARGS, eventually } from '../harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const PREFIX = process.env.GEN_BIG_PREFIX || 'saltbig';
const MAX_ANSWER = 20 * 1024 * 1024;
let b;
let jobs;
before(async () => {
  const marker = await (await fetch(`${ES_URL}/saltscope-gen-meta/_doc/${PREFIX}`)).json();
  jobs = marker._source.special_jobs;
  assert.ok(jobs?.states && jobs?.wide_state_apply && jobs?.output_cmd_run && jobs?.output_file_find && jobs?.output_diff, JSON.stringify(marker._source));
  b = await openBrowser({ args: [...CHROMIUM_ARGS, '--enable-precise-memory-info'] });
});
after(async () => { await b?.close(); });

/** A page on the big set that records every engine answer's size. */
async function bigPage() {
  const { page, context, errors } = await b.newPage();
  await useIndexPrefix(page, PREFIX);
  const answers = [];
  page.on('response', async (r) => {
    if (r.url().includes('/es/')) answers.push({ url: r.url(), bytes: (await r.body().catch(() => Buffer.alloc(0))).length });
  });
  const cdp = await context.newCDPSession(page);
  const liveHeap = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    return (await cdp.send('Runtime.getHeapUsage')).usedSize;
  };
  return { page, errors, answers, liveHeap };
}

/** What every big page ends with: no answer over 20 MB, the live JS heap under 150 MB, no error. */
async function assertBounded(what, { answers, liveHeap, errors }) {
  assert.ok(answers.every((a) => a.bytes <= MAX_ANSWER), JSON.stringify(answers.map((a) => a.bytes)));
  const heap = await liveHeap();
  const largest = Math.max(0, ...answers.map((a) => a.bytes));
  console.log(`# ${what}: live JS heap ${(heap / 1e6).toFixed(1)} MB, ${answers.length} answers, largest ${(largest / 1e6).toFixed(2)} MB`);
  assert.ok(heap < 150e6, `live JS heap ${heap}`);
  errors.assertNone();
}

/** Opens a job page whose output is folded behind "show all (5.0 MB)": the button, once drawn. */
async function openFolded(page, jid) {
  await page.goto(url(`/job/${jid}`));
  const all = page.getByRole('button', { name: 'show all (5.0 MB)' });
  await all.waitFor({ timeout: 60000 });
  return all;
}

/** The folded text (`length()` of it) shows its first 64 KB; after "show all", at least `bytes`. */
async function assertShowsAll(all, length, bytes, what) {
  assert.ok((await length()) < 100000, 'folded: the first 64 KB');
  await all.click();
  await eventually(async () => (await length()) >= bytes, `the whole ${what} shown`);
}

const stateRows = (section) => section.getByRole('table', { name: 'States' }).getByRole('row').filter({ has: section.page().getByRole('cell') });

test('one return of 10,000 states: the summary at once, the first rows, the rest as the person scrolls', async () => {
  const big = await bigPage();
  const { page } = big;
  const { jid } = jobs.states;
  await page.goto(url(`/job/${jid}`));
  const section = page.getByRole('region').filter({ has: page.getByRole('table', { name: 'States' }) }).first();
  const summary = section.getByLabel('Summary');
  await summary.waitFor({ timeout: 60000 });
  assert.match(await summary.textContent(), /Total states run: 10000/);
  const first = await stateRows(section).count();
  assert.ok(first > 0 && first < 1000, `the first screen draws ${first} rows, not 10,000`);
  // The first state's row, to check below that drawing more never redraws
  // what is already drawn (each step would cost more than the one before).
  const firstRow = await section.getByRole('cell', { name: '0', exact: true }).first().elementHandle();
  // Scrolling to the end of the page draws more, until none is left. (Not
  // polling for the last cell: naming 80,000 cells each time is Playwright's
  // slowest query.)
  const more = section.getByRole('button', { name: /^Show \d+ more states$/ });
  await eventually(async () => {
    await page.keyboard.press('End');
    return (await more.count()) === 0;
  }, 'every state drawn by scrolling', { timeout: 120000, every: 200 });
  // The last asks' parts are drawn a frame each after the button goes, and
  // rows far below the screen are not laid out (content-visibility): the
  // person scrolls on to the end until the last state shows.
  const last = section.getByRole('cell', { name: '9999', exact: true });
  await eventually(async () => {
    await page.keyboard.press('End');
    return last.isVisible();
  }, 'the last state shown at the end', { timeout: 30000, every: 200 });
  assert.equal(await stateRows(section).count(), 10000);
  assert.ok(await firstRow.evaluate((cell) => cell.isConnected), 'the first state\'s row was drawn again');
  await assertBounded(`10,000 states drawn`, big);
});

test('a state whose comment quotes 100 KB of dpkg output: folded in its row, "show all (100 KB)" shows all of it', async () => {
  const big = await bigPage();
  const { page } = big;
  const { jid, long_comment: long } = jobs.states;
  await page.goto(url(`/job/${jid}`));
  const row = page.getByRole('table', { name: 'States' }).getByRole('row')
    .filter({ has: page.getByRole('cell', { name: long.id, exact: true }) });
  const all = row.getByRole('button', { name: `show all (${Math.ceil(long.bytes / 1000)} KB)` });
  await all.waitFor({ timeout: 60000 });
  const comment = () => row.locator('pre.comment').evaluate((e) => e.textContent.length);
  await assertShowsAll(all, comment, long.bytes, 'comment');
  assert.match(await row.locator('pre.comment').textContent(), /E: Sub-process \/usr\/bin\/dpkg returned an error code \(1\)$/);
  await assertBounded('10,000 states, the long comment shown whole', big);
});

test('a cmd.run named by its inline script: its first line in the row, the whole script when opened', async () => {
  const big = await bigPage();
  const { page } = big;
  const { jid, script } = jobs.states;
  await page.goto(url(`/job/${jid}`));
  const row = page.getByRole('table', { name: 'States' }).getByRole('row')
    .filter({ has: page.getByRole('cell', { name: script.id, exact: true }) });
  const name = row.getByRole('group');
  await name.waitFor({ timeout: 60000 });
  const short = `${[...script.name].slice(0, 120).join('')}…`;
  assert.equal(await name.locator('summary').textContent(), short);
  // Its last line is past the short line: hidden until opened.
  const lastLine = name.getByText(script.name.trim().split('\n').at(-1));
  assert.equal(await lastLine.isVisible(), false, 'closed: the rest of the script hidden');
  await name.locator('summary').click();
  await lastLine.waitFor();
  assert.equal(await name.locator('span').textContent(), script.name);
  await assertBounded('10,000 states, the script opened', big);
});

test('a job on 2,000 minions: the totals of all, the minions in pages, no answer over 20 MB', async () => {
  const big = await bigPage();
  const { page } = big;
  const job = jobs.wide_state_apply;
  await page.goto(url(`/job/${job.jid}`));
  const totals = page.getByRole('region', { name: 'Totals' });
  await totals.getByText(`Minions returned: ${job.returns}`).waitFor({ timeout: 60000 });
  if (job.missing) await totals.getByText(`Missing: ${job.missing}`).waitFor();
  if (job.tgt_type === 'list') {
    // A list target of 2,000 names: one line, the whole list when opened.
    const short = `${job.tgt.slice(0, 3).join(',')} … and ${job.tgt.length - 3} more (list)`;
    const target = page.getByRole('group').filter({ hasText: short });
    await target.getByText(short).click();
    await target.getByText(job.tgt.join(','), { exact: true }).waitFor();
  }
  const sections = () => page.locator('main').getByRole('region').filter({ has: page.getByRole('heading', { level: 2 }) });
  const shown = await sections().count();
  assert.ok(shown < 200, `${shown} minion sections drawn at first, not 2,000`);
  // The chips stop where the sections do, and say so.
  const chips = page.getByRole('navigation', { name: 'Minions' });
  const drawn = await chips.getByRole('link').count();
  assert.ok(drawn > 0 && drawn < 200, `${drawn} chips`);
  await chips.getByText(`and ${job.returns - drawn} more that returned`, { exact: true }).waitFor();
  // More as the person asks: the next minions, and the next page from the engine.
  const more = page.getByRole('button', { name: /^Show \d+ more minions$/ });
  await more.click();
  await eventually(async () => (await sections().count()) > shown, 'more minions drawn');
  await assertBounded(`2,000 minions: ${await sections().count()} sections drawn`, big);
});

test('a function run on 2,000 minions: failing now counted over all of them, the failing ones listed together', async () => {
  // Each minion's newest state.apply, straight from the engine.
  const r = await fetch(`${ES_URL}/${PREFIX}-*/_search`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ size: 10000, _source: ['minion', 'success', '@timestamp'],
      query: { bool: { filter: [{ term: { 'fun.keyword': 'state.apply' } }, { range: { '@timestamp': { gte: 'now-7d' } } }] } } }),
  });
  const newest = new Map();
  for (const { _source: d } of (await r.json()).hits.hits) {
    const prev = newest.get(d.minion);
    if (!prev || prev['@timestamp'] < d['@timestamp']) newest.set(d.minion, d);
  }
  const failing = [...newest.values()].filter((d) => d.success === false).map((d) => d.minion).sort();
  assert.ok(newest.size > 1000 && failing.length > 0, `${newest.size} minions, ${failing.length} failing`);

  const { page, errors } = await bigPage();
  await page.goto(url('/function/state.apply'));
  await page.getByText(`${newest.size} minions, ${failing.length} failing now`).waitFor({ timeout: 60000 });
  // The address names the function: no field to type another into.
  assert.equal(await page.getByRole('search', { name: 'Filter' }).getByLabel('Function', { exact: true }).count(), 0);
  await page.getByRole('link', { name: 'show failing only' }).click();
  await page.waitForURL(/failing=1/);
  // The page of every minion stays until the failing ones are drawn.
  const table = page.getByRole('table', { name: 'Latest returns' });
  const listed = () => table.locator('tbody tr td:first-child').allTextContents();
  await eventually(async () => JSON.stringify(await listed()) === JSON.stringify(failing), 'the failing minions listed');
  assert.equal(await page.getByRole('link', { name: 'More minions' }).count(), 0);
  errors.assertNone();
});

/** The job's returns straight from the engine: `body` merged into a search of them. */
async function jobReturns(jid, body) {
  const r = await fetch(`${ES_URL}/${PREFIX}-*/_search`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: { bool: { filter: [{ term: { 'jid.keyword': jid } }, { exists: { field: 'minion' } }] } }, ...body }),
  });
  assert.equal(r.status, 200);
  return (await r.json()).hits.hits;
}

test('a job on 2,000 minions: its failed minions listed alone, the totals still the whole job\'s', async () => {
  const big = await bigPage();
  const { page } = big;
  const job = jobs.wide_state_apply;
  const failed = (await jobReturns(job.jid, { size: 10000, _source: ['minion'], query: { bool: { filter: [
    { term: { 'jid.keyword': job.jid } }, { exists: { field: 'minion' } }, { term: { success: false } }] } } }))
    .map((h) => h._source.minion).sort();
  assert.ok(failed.length > 0 && failed.length < job.returns, `${failed.length} failed`);
  await page.goto(url(`/job/${job.jid}`));
  const totals = page.getByRole('region', { name: 'Totals' });
  await totals.getByText(`Failed: ${failed.length}`, { exact: true }).waitFor({ timeout: 60000 });
  await page.getByRole('navigation', { name: 'State output' }).getByRole('switch', { name: 'failed minions only', checked: false }).click();
  await page.waitForURL(/outcome=failed/);
  await page.getByRole('status').getByText(`Listing the ${failed.length} failed of ${job.returns} minions that returned.`).waitFor({ timeout: 60000 });
  await totals.getByText(`Minions returned: ${job.returns}`).waitFor();
  // The chips name the failed minions, in order, and say how many more failed.
  const chips = page.getByRole('navigation', { name: 'Minions' });
  const named = await chips.getByRole('link').allTextContents();
  assert.deepEqual(named, failed.slice(0, named.length));
  if (named.length < failed.length) {
    await chips.getByText(`and ${failed.length - named.length} more that failed`, { exact: true }).waitFor();
  }
  await page.getByRole('switch', { name: 'failed minions only', checked: true }).waitFor();
  await assertBounded(`2,000 minions, ${failed.length} failed listed`, big);
});

test('a job on 2,000 minions: Salt\'s summary lines for the whole job, counted over every minion', async () => {
  const big = await bigPage();
  const { page } = big;
  const job = jobs.wide_state_apply;
  // The expected totals, as Salt's outputter counts them, from every return.
  let succeeded = 0, failed = 0, changed = 0, total = 0;
  const hits = await jobReturns(job.jid, { size: 10000, _source: ['data.*.result', 'data.*.changes'] });
  assert.equal(hits.length, job.returns);
  for (const h of hits) {
    for (const s of Object.values(h._source.data || {})) {
      if (!s || typeof s !== 'object' || !('result' in s)) continue;
      total++;
      if (s.result === false) failed++; else succeeded++;
      const c = s.changes;
      if (c && (typeof c !== 'object' || Object.keys(c).some((k) => k !== '_orig_key'))) changed++;
    }
  }
  assert.ok(total > job.returns && failed > 0 && changed > 0, `${total} ${failed} ${changed}`);
  await page.goto(url(`/job/${job.jid}`));
  const totals = page.getByRole('region', { name: 'Totals' });
  await totals.getByText(`Succeeded: ${succeeded} (changed=${changed}) · Failed: ${failed} · Total states run: ${total}`).waitFor({ timeout: 60000 });
  await assertBounded('2,000 minions, the job\'s state totals', big);
});

test('a link to a minion far down a 2,000-minion job opens on that minion\'s output', async () => {
  const big = await bigPage();
  const { page } = big;
  const job = jobs.wide_state_apply;
  // The last minion by id: beyond the page's first 500 returns.
  const [last] = await jobReturns(job.jid, { size: 1, _source: ['minion'], sort: [{ 'minion.keyword': 'desc' }] });
  const minion = last._source.minion;
  await page.goto(url(`/job/${job.jid}#minion-${minion}`));
  const section = page.getByRole('region', { name: minion, exact: true });
  await section.getByRole('table', { name: 'States' }).waitFor({ timeout: 60000 });
  await eventually(async () => {
    const top = await section.evaluate((el) => el.getBoundingClientRect().top);
    return top >= -5 && top < 200;
  }, `${minion}'s return at the top of the screen`);
  // Listed once, however far the person pages.
  assert.equal(await page.getByRole('region', { name: minion, exact: true }).count(), 1);
  await assertBounded('2,000 minions, a link to the last', big);
});

for (const [table, path] of [['Jobs', (jid) => `/?jid=${jid}`], ['Audit trail', () => '/audit']]) {
  test(`the ${table} table shows a 2,000-name list target on one line, every name when opened`, async () => {
    const big = await bigPage();
    const { page } = big;
    const job = jobs.wide_state_apply;
    assert.equal(job.tgt_type, 'list', 'the big set is loaded with MINIONS=2100');
    await page.goto(url(path(job.jid)));
    const row = page.getByRole('table', { name: table }).getByRole('row')
      .filter({ has: page.getByRole('link', { name: job.jid, exact: true }) });
    const short = `${job.tgt.slice(0, 3).join(',')} … and ${job.tgt.length - 3} more (list)`;
    await row.getByText(short).waitFor({ timeout: 60000 });
    // Closed, the row is a line or two, not a screen of names.
    const height = await row.evaluate((tr) => tr.getBoundingClientRect().height);
    assert.ok(height < 200, `the row is ${height} px tall`);
    await row.getByText(short).click();
    await row.getByText(job.tgt.join(','), { exact: true }).waitFor();
    await assertBounded(`${table} table`, big);
  });
}

test('a 5 MB cmd.run output is shown folded, and "show all (5.0 MB)" shows all of it, byte for byte', async () => {
  const big = await bigPage();
  const { page } = big;
  const job = jobs.output_cmd_run;
  const all = await openFolded(page, job.jid);
  const output = page.locator('main pre').first();
  const text = () => output.evaluate((e) => e.textContent.length);
  await assertShowsAll(all, text, 5000000, 'output');
  // Drawn a part a frame: every part once, in order, the fold's "…" gone.
  const hit = await (await fetch(`${ES_URL}/${job.index}/_search?q=jid:${job.jid}&size=1`)).json();
  const returned = hit.hits.hits[0]._source.data;
  assert.equal(typeof returned, 'string');
  assert.ok((await output.textContent()) === returned, 'the output on the page is the return as the engine holds it');
  await assertBounded(`5 MB output shown whole`, big);
});

test('a 5 MB diff in a state\'s changes is shown folded, and "show all (5.0 MB)" shows all of it', async () => {
  const big = await bigPage();
  const { page } = big;
  const job = jobs.output_diff;
  const all = await openFolded(page, job.jid);
  const diff = page.getByRole('table', { name: 'States' }).locator('pre.diff');
  // Added and removed lines coloured as a diff.
  await diff.locator('.diff-add').first().waitFor();
  await diff.locator('.diff-del').first().waitFor();
  const started = Date.now();
  await assertShowsAll(all, () => diff.evaluate((e) => e.textContent.length), job.bytes, 'diff');
  console.log(`# 5 MB diff shown whole in ${Date.now() - started} ms`);
  await assertBounded('5 MB diff shown whole', big);
});

test('a cmd.run_all with 5 MB of stdout: its keys at once, the stdout folded, "show all (5.0 MB)" shows all of it', async () => {
  const big = await bigPage();
  const { page } = big;
  const all = await openFolded(page, jobs.output_cmd_run_all.jid);
  const tree = page.getByRole('listitem');
  for (const key of ['pid', 'retcode', 'stderr', 'stdout']) {
    await tree.filter({ hasText: new RegExp(`^${key}: `) }).first().waitFor();
  }
  const stdout = () => tree.filter({ hasText: /^stdout: / }).locator('pre').evaluate((e) => e.textContent.length);
  await assertShowsAll(all, stdout, 5000000, 'stdout');
  await assertBounded(`cmd.run_all, 5 MB stdout shown whole`, big);
});

test('a file.find of 80,000 paths: the first entries at once, the rest as the person scrolls, to the last', async () => {
  const big = await bigPage();
  const { page } = big;
  const job = jobs.output_file_find;
  await page.goto(url(`/job/${job.jid}`));
  const section = page.getByRole('region').filter({ has: page.getByRole('heading', { name: job.minion }) });
  const entries = section.getByRole('listitem');
  await entries.filter({ hasText: /^\[0\]: \/srv\/www$/ }).waitFor({ timeout: 60000 });
  const first = await entries.count();
  assert.ok(first > 0 && first <= 1000, `the first screen draws ${first} entries, not ${job.entries}`);
  const more = section.getByRole('button', { name: /^Show \d+ more entries$/ });
  await more.waitFor();
  await eventually(async () => {
    await page.keyboard.press('End');
    return (await more.count()) === 0;
  }, 'every entry drawn by scrolling', { timeout: 120000, every: 200 });
  const last = `[${job.entries - 1}]`;
  await entries.filter({ hasText: new RegExp(`^\\[${job.entries - 1}\\]: /srv/www/`) }).waitFor();
  assert.equal(await entries.count(), job.entries, `entries up to ${last}`);
  await assertBounded(`file.find, ${job.entries} paths drawn`, big);
});

test('comparing the 10,000-state run with another: the first rows at once, the rest as the person scrolls', async () => {
  const big = await bigPage();
  const { page } = big;
  const { states, wide_state_apply: wide } = jobs;
  const found = await (await fetch(`${ES_URL}/${PREFIX}-state_apply*/_search?size=1&q=jid:${wide.jid}&_source=minion`)).json();
  const other = found.hits.hits[0]._source.minion;
  await page.goto(url(`/compare?a=${states.jid}:${states.minion}&b=${wide.jid}:${other}`));
  const summary = page.getByText(/^\d+ differ · \d+ only in A · \d+ only in B · \d+ identical/);
  await summary.waitFor({ timeout: 60000 });
  const [differ, onlyA, onlyB, same] = (await summary.textContent()).match(/\d+/g).map(Number);
  assert.equal(differ + onlyA + same, 10000, `every state of A accounted for: ${await summary.textContent()}`);
  const rows = page.getByRole('table', { name: 'Differences' }).getByRole('row');
  const first = await rows.count();
  assert.ok(first > 1 && first <= 1001, `the first screen draws ${first} rows, not ${differ + onlyA + onlyB}`);
  const more = page.getByRole('button', { name: /^Show \d+ more states$/ });
  await eventually(async () => {
    await page.keyboard.press('End');
    return (await more.count()) === 0;
  }, 'every state drawn by scrolling', { timeout: 120000, every: 200 });
  assert.equal(await rows.count(), differ + onlyA + onlyB + 1, 'every state and the heading row');
  await assertBounded('comparison of 10,000 states drawn', big);
});
