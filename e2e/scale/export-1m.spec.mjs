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
import { openBrowser, url, CHROMIUM_ARGS, useIndexPrefix } from '../harness.mjs';

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
  await page.locator('table.jobs tbody tr.job').first().waitFor();
  await page.getByText('Export CSV').click();
  await page.locator('select[name=export-kind]').selectOption('states');
  return { page, errors };
}

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
  const { page, errors } = await generatedPage();
  const heap = [];
  const live = [];
  const cdp = await page.context().newCDPSession(page);
  const t0 = Date.now();
  await page.getByRole('button', { name: 'Start export' }).click();
  const done = page.locator('a.download');
  for (;;) {
    heap.push(await page.evaluate(() => performance.memory.usedJSHeapSize));
    await cdp.send('HeapProfiler.collectGarbage');
    live.push((await cdp.send('Runtime.getHeapUsage')).usedSize);
    if (await done.count()) break;
    assert.equal(await page.locator('.export-failed').count(), 0, await page.locator('.export').textContent());
    await page.waitForTimeout(500);
    assert.ok(Date.now() - t0 < 840000, 'the export finishes');
  }
  const secs = (Date.now() - t0) / 1000;
  const rowsText = await page.locator('.export-done').textContent();
  const rows = Number(rowsText.match(/(\d+) rows/)[1]);
  assert.ok(rows >= 1000000, rowsText);
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

test('cancelling an export mid-way closes its point in time on the engine', async () => {
  assert.deepEqual(await openPits(), [], 'no point in time open before');
  const { page, errors } = await generatedPage();
  await page.getByRole('button', { name: 'Start export' }).click();
  await page.locator('.export-progress').filter({ hasText: /[1-9]\d* rows written/ }).waitFor();
  assert.equal((await openPits()).length, 1, 'the export reads through one point in time');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.locator('.export-cancelled').waitFor();
  for (let i = 0; i < 20 && (await openPits()).length; i++) await page.waitForTimeout(250);
  assert.deepEqual(await openPits(), [], 'closed on cancel');
  assert.equal(await page.locator('a.download').count(), 0, 'no file from a cancelled export');
  errors.assertNone();
});

test('a failure mid-way says how many rows were written, and Retry completes the file with nothing lost or repeated', { timeout: 900000 }, async () => {
  const { page, errors } = await generatedPage();
  errors.ignore(/HTTP 503/);
  // The engine fails the third page once, as an overloaded node would.
  let pages = 0;
  let failed = false;
  await page.route('**/es/_search', async (route) => {
    pages += 1;
    if (pages === 3 && !failed) {
      failed = true;
      await route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"type":"unavailable","reason":"node overloaded"},"status":503}' });
    } else {
      await route.continue();
    }
  });
  await page.getByRole('button', { name: 'Start export' }).click();
  const stopped = page.locator('.export-failed');
  await stopped.waitFor({ timeout: 120000 });
  const written = Number((await stopped.textContent()).match(/after (\d+) rows/)[1]);
  assert.ok(written > 0, 'two pages were written before the failure');
  assert.match(await page.locator('.export').textContent(), /node overloaded/);
  assert.equal(await page.locator('a.download').count(), 0, 'no short file is offered');
  await page.getByRole('button', { name: 'Retry from where it stopped' }).click();
  const done = page.locator('a.download');
  await done.waitFor({ timeout: 840000 });
  const rows = Number((await page.locator('.export-done').textContent()).match(/(\d+) rows/)[1]);
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
