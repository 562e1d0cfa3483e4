// The views laid out for a laptop's window, on the data real Salt wrote:
// at 1,280 px nothing scrolls sideways (the job list's twelve columns and
// the failure patterns' Jinja errors once pushed the last columns off
// screen), and a column header kept only for screen readers is not drawn.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, readManifest, eventually } from './harness.mjs';

let b;
before(async () => { b = await openBrowser(); });
after(async () => { await b?.close(); });

/** How far the page reaches past the window's right edge, in px. */
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

test('every view fits a 1,280-pixel window without scrolling sideways', async () => {
  const { page, errors } = await b.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(url('/'));
  const views = page.getByRole('navigation', { name: 'Views' });
  await views.getByRole('link').first().waitFor(); // the app started
  const names = await views.getByRole('link').allTextContents();
  assert.ok(names.length >= 9, `the views' links: ${names}`);
  for (const name of names) {
    await views.getByRole('link', { name, exact: true }).click();
    // A view is drawn once its table has rows; Drift has none on this data.
    const main = page.getByRole('main');
    await main.getByRole('cell').or(main.getByText('Every state is idempotent over these runs.')).first().waitFor();
    assert.equal(await overflow(page), 0, `the ${name} view scrolls sideways at 1,280 px`);
  }
  await page.goto(url(`/job/${readManifest().state_apply_multi.jid}`));
  await page.getByRole('table', { name: 'States' }).first().getByRole('cell').first().waitFor();
  assert.equal(await overflow(page), 0, 'the job page scrolls sideways at 1,280 px');
  assert.deepEqual(errors.page, []);
});

test('an address with a very long id wraps its heading and notice within the window', async () => {
  const { page, errors } = await b.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(url(`/job/${'9'.repeat(3000)}`));
  await page.getByText(/is not a Salt job id/).waitFor();
  assert.equal(await overflow(page), 0, 'the page scrolls sideways');
  // The heading names it as the notice does: its first 120 characters.
  await page.getByRole('heading', { name: `Job ${'9'.repeat(120)}…`, exact: true }).waitFor();
  assert.deepEqual(errors.page, []);
});

test('at 1,280 px the job list\'s Target column keeps room for a minion\'s name', async () => {
  // A list target has no space to wrap at: beside the runners' functions
  // and the states' counts, the column once shrank to 62 px, one
  // character a line for "db-02,offline-05 (list)".
  const { page } = await b.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(url('/?time=all'));
  const jobs = page.getByRole('table', { name: 'Jobs' });
  await jobs.getByRole('cell').first().waitFor();
  const { width } = await jobs.getByRole('columnheader', { name: 'Target' }).boundingBox();
  assert.ok(width >= 110, `the Target column is ${width} px wide`);
  assert.equal(await overflow(page), 0, 'the job list scrolls sideways at 1,280 px');
});

test('the job list\'s Details column is named for screen readers but not drawn', async () => {
  const { page } = await b.newPage();
  await page.goto(url('/'));
  const jobs = page.getByRole('table', { name: 'Jobs' });
  const header = jobs.getByRole('columnheader', { name: 'Details' });
  await header.waitFor();
  const text = await header.getByText('Details').boundingBox();
  assert.ok(text && text.width <= 1 && text.height <= 1, `"Details" is drawn: ${JSON.stringify(text)}`);
  // Each row's button still says what it opens.
  await jobs.getByRole('button', { name: /^Details of \d{20}$/ }).first().waitFor();
});

test('at 1,024 px the job list scrolls sideways within itself, and the page does not', async () => {
  const { page } = await b.newPage({ viewport: { width: 1024, height: 800 } });
  await page.goto(url('/'));
  const jobs = page.getByRole('table', { name: 'Jobs' });
  await jobs.getByRole('cell').first().waitFor();
  assert.equal(await overflow(page), 0, 'the page scrolls sideways at 1,024 px');
  // The last column is a scroll of the list away, not off the page.
  const states = jobs.getByRole('columnheader', { name: 'States' });
  assert.ok((await states.boundingBox()).x > 1024, 'the twelve columns fit 1,024 px: nothing to scroll');
  await states.scrollIntoViewIfNeeded();
  const box = await states.boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 1024, `"States" scrolled into view: ${JSON.stringify(box)}`);
  assert.equal(await overflow(page), 0, 'scrolling the list moved the page');
});

test('at 1,024 px the job list\'s header stays on screen as the list scrolls down', async () => {
  const { page } = await b.newPage({ viewport: { width: 1024, height: 800 } });
  await page.goto(url('/'));
  const jobs = page.getByRole('table', { name: 'Jobs' });
  const rows = jobs.getByRole('row');
  await rows.nth(1).getByRole('cell').first().waitFor();
  assert.ok(await rows.count() > 30, 'enough jobs to scroll past a window');
  const header = jobs.getByRole('columnheader', { name: 'Job', exact: true });
  const firstJob = rows.nth(1);
  // The wheel over the list, as a person scrolls it: far past the first row.
  const start = await firstJob.boundingBox();
  await page.mouse.move(300, Math.min(start.y + 20, 780));
  await eventually(async () => {
    await page.mouse.wheel(0, 100);
    return (await firstJob.boundingBox()).y < (await header.boundingBox()).y - 20;
  }, 'the first job scrolled up past the header', { every: 50 });
  const box = await header.boundingBox();
  assert.ok(box.y >= 0 && box.y + box.height <= 800, `the "Job" header is off screen: ${JSON.stringify(box)}`);
  assert.equal(await overflow(page), 0, 'the page scrolls sideways at 1,024 px');
});

/** How many lines each cell's text takes, the cells a locator names. */
const linesOf = (cells) => cells.evaluateAll((tds) => tds.map((td) => {
  const range = document.createRange();
  range.selectNodeContents(td);
  const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
  return { text: td.innerText, lines: tops.size };
}));

test('at 1,024 px the failure patterns break no function name or time mid-word', async () => {
  const { page } = await b.newPage({ viewport: { width: 1024, height: 800 } });
  await page.goto(url('/failures?time=all'));
  const table = page.getByRole('table', { name: 'Failure patterns' });
  await table.getByRole('cell').first().waitFor({ timeout: 30000 });
  // Function (2nd column) is one word; First and Last (5th, 6th) a date and
  // a time on one line.
  for (const [col, most] of [[2, 1], [5, 1], [6, 1]]) {
    for (const { text, lines } of await linesOf(table.locator(`tbody tr td:nth-child(${col})`))) {
      assert.ok(lines <= most, `column ${col}: "${text}" takes ${lines} lines`);
    }
  }
});

test('at 1,024 px a state\'s function takes one line in the states table', async () => {
  const manifest = readManifest();
  const { page } = await b.newPage({ viewport: { width: 1024, height: 800 } });
  await page.goto(url(`/job/${manifest.state_apply_multi.jid}`));
  const states = page.getByRole('table', { name: 'States' }).first();
  await states.getByRole('cell').first().waitFor();
  // The common ones, up to "service.running" and "file.directory"; a name
  // as long as "test.succeed_without_changes" may take two.
  const cells = (await linesOf(states.locator('tbody tr td:nth-child(4)'))).filter((c) => c.text && c.text.length <= 16);
  assert.ok(cells.some((c) => c.text.length >= 12), JSON.stringify(cells.map((c) => c.text)));
  for (const { text, lines } of cells) assert.equal(lines, 1, `"${text}" takes ${lines} lines`);
});

test('at 1,024 px an event\'s tag keeps its column when an event\'s data is open beside it', async () => {
  const { page } = await b.newPage({ viewport: { width: 1024, height: 800 } });
  await page.goto(url('/events?tag=salt/auth&time=all'));
  const table = page.getByRole('table', { name: 'Events' });
  await table.getByRole('cell', { name: 'salt/auth', exact: true }).first().waitFor();
  // A minion's public key, a long line, opened beside the tags.
  await table.getByText('data', { exact: true }).first().click();
  await table.getByText(/BEGIN PUBLIC KEY/).first().waitFor();
  for (const { text, lines } of await linesOf(table.locator('tbody tr td:nth-child(2)'))) {
    assert.equal(lines, 1, `"${text}" takes ${lines} lines`);
  }
});
