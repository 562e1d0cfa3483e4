// CSV export at scale, against the 1,000,000 generated returns (prefix
// saltgen, OpenSearch): a states export of over a million rows finishes with
// the tab's JS heap sampled all along and bounded far below the file's
// size; and cancelling mid-way closes the point in time on the engine.
//
// The heap is sampled twice over: as the page sees it (performance.memory,
// garbage included: a sawtooth whose peaks follow V8's collection
// heuristics, higher the faster pages come) and live, after a forced
// collection (CDP HeapProfiler.collectGarbage + Runtime.getHeapUsage): what
// the export holds on to, which must stay small and not grow.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { openBrowser, url, CHROMIUM_ARGS, useIndexPrefix, jobRows, eventually } from '../harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const PREFIX = process.env.GEN_PREFIX || 'saltgen';
let b;
let completeRows; // the rows of the unbroken export, for the retry test
before(async () => {
  b = await openBrowser({ args: [...CHROMIUM_ARGS, '--enable-precise-memory-info'] });
});
after(async () => { await b?.close(); });

async function generatedPage() {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  await useIndexPrefix(page, PREFIX);
  await page.goto(url('/?time=all&noisy=show&fun=state.apply'));
  await jobRows(page).first().waitFor();
  await page.getByText('Export CSV', { exact: true }).click();
  const panel = page.getByRole('group', { name: 'Export CSV' });
  await panel.getByLabel('Export', { exact: true }).selectOption('states');
  return { page, errors, panel };
}

const downloadLink = (panel) => panel.getByRole('link', { name: /^Download saltscope-/ });
const rowsDone = async (panel) => Number((await panel.getByText(/^\d+ rows\./).textContent()).match(/(\d+) rows/)[1]);

async function openPits() {
  const r = await fetch(`${ES_URL}/_search/point_in_time/_all`);
  assert.equal(r.status, 200);
  return (await r.json()).pits || [];
}

/** Counts CSV records (RFC 4180: newlines inside quotes do not end one). */
async function countRecords(file) {
  let records = 0;
  let quoted = false;
  const stream = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 });
  for await (const chunk of stream) {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c === 34) quoted = !quoted; // "" toggles twice: still right
      else if (c === 10 && !quoted) records++;
    }
  }
  return records;
}

test('a states export of over a million generated rows finishes with a flat JS heap', { timeout: 900000 }, async () => {
  const { page, errors, panel } = await generatedPage();
  const heap = [];
  const live = [];
  const cdp = await page.context().newCDPSession(page);
  const t0 = Date.now();
  await panel.getByRole('button', { name: 'Start export' }).click();
  const done = downloadLink(panel);
  // A sample at least every half second until the file is offered.
  for (;;) {
    heap.push(await page.evaluate(() => performance.memory.usedJSHeapSize));
    await cdp.send('HeapProfiler.collectGarbage');
    live.push((await cdp.send('Runtime.getHeapUsage')).usedSize);
    if (await done.count()) break;
    assert.equal(await panel.getByText(/The export stopped/).count(), 0, await panel.textContent());
    await done.waitFor({ timeout: 500 }).catch(() => {});
    assert.ok(Date.now() - t0 < 840000, 'the export finishes');
  }
  const secs = (Date.now() - t0) / 1000;
  const rows = await rowsDone(panel);
  assert.ok(rows >= 1000000, `${rows} rows`);
  completeRows = rows;
  const [download] = await Promise.all([page.waitForEvent('download'), done.click()]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'saltscope-1m-')), download.suggestedFilename());
  await download.saveAs(file);
  const size = fs.statSync(file).size;
  const records = await countRecords(file);
  fs.rmSync(file);
  assert.equal(records, rows + 1, 'header + one record per row, none lost');
  const mb = (xs) => xs.map((h) => (h / 1e6).toFixed(0)).join(' ');
  const maxHeap = Math.max(...heap);
  const maxLive = Math.max(...live);
  console.log(`# ${rows} state rows, ${(size / 1e6).toFixed(0)} MB in ${secs.toFixed(1)} s (${(rows / secs).toFixed(0)} rows/s); JS heap max ${(maxHeap / 1e6).toFixed(1)} MB with garbage, ${(maxLive / 1e6).toFixed(1)} MB live, over ${heap.length} samples`);
  console.log(`# heap MB: ${mb(heap)}`);
  console.log(`# live MB: ${mb(live)}`);
  assert.ok(heap.length >= 6, `enough samples: ${heap.length}`);
  assert.ok(maxLive < 24e6, `the live JS heap stays under 24 MB: ${maxLive}`);
  const third = Math.floor(live.length / 3);
  const early = Math.max(...live.slice(0, third));
  const late = Math.max(...live.slice(-third));
  assert.ok(late < early + 4e6, `the live heap does not grow: ${early} early, ${late} late`);
  assert.ok(maxHeap < size / 2, `the JS heap, garbage included, ${maxHeap} stays far below the file's ${size} bytes`);
  errors.assertNone();
});

test('the next page is asked for while the tab is still busy, and no page is fetched twice', { timeout: 300000 }, async () => {
  const { page, errors, panel } = await generatedPage();
  await panel.getByLabel('Export', { exact: true }).selectOption('returns');
  const pages = [];
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route('**/es/_search', async (route) => {
    const body = route.request().postData() || '';
    if (body.includes('"sort"')) {
      pages.push(body);
      // The second page waits until the tab is stopped.
      if (pages.length === 2) await held;
    }
    await route.continue();
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Debugger.enable');
  const stopped = new Promise((resolve) => cdp.once('Debugger.paused', resolve));
  await panel.getByRole('button', { name: 'Start export' }).click();
  // The first page read: the tab has asked for the second.
  const progress = await panel.getByText(/^\d+ rows written \(\d+ documents read of \d+ documents\)/).textContent();
  const total = Number(progress.match(/of (\d+) documents/)[1]);
  assert.ok(total > 10000, `more than one full page: ${total}`);
  assert.equal(pages.length, 2);
  // The tab stops as the second page comes in, before it could ask for the
  // third: only the export's worker can still ask for it.
  await cdp.send('Debugger.pause');
  release();
  await stopped;
  await eventually(() => pages.length >= 3, 'the third page is asked for while the tab is stopped', { timeout: 20000 });
  await cdp.send('Debugger.resume');
  await downloadLink(panel).waitFor({ timeout: 240000 });
  assert.equal(await rowsDone(panel), total, 'one row per return counted on the first page');
  assert.equal(new Set(pages).size, pages.length, 'no page asked for twice');
  // A short first page, full ones, then the short (or empty) last one:
  // nothing sent ahead past the total.
  const [first, full] = pages.slice(0, 2).map((body) => JSON.parse(body).size);
  assert.equal(pages.length, 2 + Math.floor((total - first) / full), `pages of ${first}, then ${full}, for ${total} returns`);
  await eventually(async () => (await openPits()).length === 0, 'the point in time closed after the last page', { timeout: 10000 });
  errors.assertNone();
});

test('cancelling an export mid-way closes its point in time on the engine', async () => {
  assert.deepEqual(await openPits(), [], 'no point in time open before');
  const { errors, panel } = await generatedPage();
  await panel.getByRole('button', { name: 'Start export' }).click();
  await panel.getByText(/[1-9]\d* rows written/).waitFor();
  assert.equal((await openPits()).length, 1, 'the export reads through one point in time');
  await panel.getByRole('button', { name: 'Cancel' }).click();
  await panel.getByText(/^Cancelled after \d+ rows/).waitFor();
  await eventually(async () => (await openPits()).length === 0, 'the point in time closed on cancel', { timeout: 5000 });
  assert.equal(await downloadLink(panel).count(), 0, 'no file from a cancelled export');
  errors.assertNone();
});

test('leaving the page at about 30 % of an export cancels it, closes its point in time and breaks nothing', async () => {
  assert.deepEqual(await openPits(), [], 'no point in time open before');
  const { page, errors, panel } = await generatedPage();
  await panel.getByRole('button', { name: 'Start export' }).click();
  const bar = panel.getByRole('progressbar', { name: 'Export progress' });
  await eventually(async () => Number((await bar.getAttribute('value').catch(() => '0')) || 0) >= 0.3,
    'the export reaches 30 %', { timeout: 120000 });
  assert.equal((await openPits()).length, 1);
  // Asked first (e2e/export.test.mjs holds what staying does): leaving.
  const asked = new Promise((resolve) => page.once('dialog', (d) => { resolve(d.message()); d.accept(); }));
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Minions' }).click();
  assert.match(await asked, /^An export is running/);
  await page.getByRole('heading', { name: 'Minions' }).waitFor();
  await eventually(async () => (await openPits()).length === 0, 'the point in time closed when the panel went', { timeout: 10000 });
  // The app still works after the panel went away mid-export.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Jobs' }).click();
  await jobRows(page).first().waitFor();
  errors.assertNone();
});

test('a failure mid-way says how many rows were written, and Retry completes the file with nothing lost or repeated', { timeout: 900000 }, async () => {
  const { page, errors, panel } = await generatedPage();
  errors.ignore(/HTTP 503/);
  // The engine stays overloaded from the third page on for longer than the
  // client's retries (a first try and three retries), so the export stops.
  let pages = 0;
  let failures = 0;
  await page.route('**/es/_search', async (route) => {
    pages += 1;
    if (pages >= 3 && failures < 4) {
      failures += 1;
      await route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"type":"unavailable","reason":"node overloaded"},"status":503}' });
    } else {
      await route.continue();
    }
  });
  await panel.getByRole('button', { name: 'Start export' }).click();
  const stopped = panel.getByText(/The export stopped after \d+ rows/);
  await stopped.waitFor({ timeout: 120000 });
  const written = Number((await stopped.textContent()).match(/after (\d+) rows/)[1]);
  assert.ok(written > 0, 'two pages were written before the failure');
  assert.match(await panel.getByRole('alert').textContent(), /node overloaded/);
  assert.equal(await downloadLink(panel).count(), 0, 'no short file is offered');
  assert.equal(failures, 4, 'the busy page was tried four times before the export gave up');
  await panel.getByRole('button', { name: 'Retry from where it stopped' }).click();
  const done = downloadLink(panel);
  await done.waitFor({ timeout: 840000 });
  const rows = await rowsDone(panel);
  const [download] = await Promise.all([page.waitForEvent('download'), done.click()]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'saltscope-retry-')), download.suggestedFilename());
  await download.saveAs(file);
  const records = await countRecords(file);
  // every (jid, minion, run order) once: nothing repeated across the retry
  const seen = new Set();
  let repeated = 0;
  const rl = readline.createInterface({ input: fs.createReadStream(file) });
  for await (const line of rl) {
    const m = line.match(/^[^,]*,(\d{20}),([^,]+),[^,]*,[^,]*,(\d+),/);
    if (!m) continue;
    const key = `${m[1]} ${m[2]} ${m[3]}`;
    if (seen.has(key)) repeated += 1;
    seen.add(key);
  }
  fs.rmSync(file);
  assert.equal(records, rows + 1);
  assert.equal(repeated, 0, 'no row written twice');
  assert.equal(rows, completeRows, `the retried file has as many rows as an unbroken export (${completeRows})`);
  errors.assertNone();
});
