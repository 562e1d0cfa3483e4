// Moving around the app as a person does: the app's own links move the
// address without loading the page again, back and forward walk through
// the views, and a job page's minion links bring that minion's return into
// view (src/ui/location.rs, the app's one binding to the History API).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, readManifest } from './harness.mjs';

let b;
let manifest;
before(async () => {
  manifest = readManifest();
  b = await openBrowser();
});
after(async () => { await b?.close(); });

/** Whether the page still runs the document it was first given. */
const sameDocument = (page) => page.evaluate(() => window.saltscopeFirstDocument === true);

test('the views\' links move the address without a page load, and back and forward follow', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/'));
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  await page.evaluate(() => { window.saltscopeFirstDocument = true; });
  const views = page.getByRole('navigation', { name: 'Views' });

  await views.getByRole('link', { name: 'Fleet', exact: true }).click();
  await page.waitForURL(/\/fleet$/);
  await page.getByRole('heading', { name: /Fleet/ }).first().waitFor();
  await views.getByRole('link', { name: 'Audit', exact: true }).click();
  await page.waitForURL(/\/audit$/);
  await page.getByRole('heading', { name: /Audit/ }).first().waitFor();
  assert.ok(await sameDocument(page), 'a click on the app\'s own link loaded the page again');

  await page.goBack();
  await page.waitForURL(/\/fleet$/);
  await page.getByRole('heading', { name: /Fleet/ }).first().waitFor();
  await page.goBack();
  await page.waitForURL((u) => u.pathname === '/');
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  await page.goForward();
  await page.getByRole('heading', { name: /Fleet/ }).first().waitFor();
  assert.ok(await sameDocument(page), 'back and forward loaded the page again');
  errors.assertNone();
});

test('the first Tab reaches "Skip to content", which takes the keyboard past the top bar into the view', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/'));
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  assert.ok(await skip.evaluate((a) => a === document.activeElement), 'the first stop');
  const box = await skip.boundingBox();
  assert.ok(box && box.x >= 0 && box.y >= 0, `drawn on screen once focused: ${JSON.stringify(box)}`);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement?.tagName === 'MAIN');
  await page.keyboard.press('Tab');
  const stop = await page.evaluate(() => {
    const a = document.activeElement;
    return { inView: document.querySelector('main').contains(a), label: a.getAttribute('aria-label') || a.textContent };
  });
  assert.ok(stop.inView, `the next stop is the view's own, not ${stop.label}`);
  assert.equal(new URL(page.url()).hash, '', 'the address stays');
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  errors.assertNone();
});

test('each view names the tab: its title follows the view, back and forward included', async () => {
  const { page, errors } = await b.newPage();
  const { jid } = manifest.state_apply_multi;
  await page.goto(url('/'));
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  assert.equal(await page.title(), 'Jobs · Saltscope');
  const views = page.getByRole('navigation', { name: 'Views' });
  await views.getByRole('link', { name: 'Audit', exact: true }).click();
  await page.waitForFunction(() => document.title === 'Audit trail · Saltscope');
  // A page loaded at a view's address: titled once the app starts.
  const titled = (t) => page.waitForFunction((want) => document.title === want, t);
  await page.goto(url(`/job/${jid}`));
  await titled(`Job ${jid} · Saltscope`);
  await page.goto(url('/minion/db-02'));
  await titled('Minion db-02 · Saltscope');
  await page.goBack();
  await titled(`Job ${jid} · Saltscope`);
  errors.assertNone();
});

test('a minion\'s link on the job page brings its return into view', async () => {
  const { page, errors } = await b.newPage();
  await page.setViewportSize({ width: 1200, height: 500 });
  const { jid, minions } = manifest.state_apply_multi;
  const last = minions[minions.length - 1];
  await page.goto(url(`/job/${jid}`));
  await page.getByRole('table', { name: 'States' }).first().waitFor();
  await page.evaluate(() => { window.saltscopeFirstDocument = true; });
  assert.equal(await page.evaluate(() => window.scrollY), 0);

  await page.getByRole('link', { name: last, exact: true }).first().click();
  await page.waitForURL((u) => u.hash === `#minion-${last.replace(/[^A-Za-z0-9._-]/g, '_')}`);
  await page.waitForFunction((name) => {
    const section = document.querySelector(`section[aria-label="${name}"]`);
    const top = section?.getBoundingClientRect().top;
    return window.scrollY > 0 && top !== undefined && top >= -1 && top < window.innerHeight;
  }, last);
  assert.ok(await sameDocument(page));
  errors.assertNone();
});

test('back and forward set the Time list to the range in the address, and a range that does not read is said, not dropped', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/'));
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  const time = page.getByRole('search', { name: 'Filter' }).getByLabel('Time');
  await time.selectOption('1h');
  await page.waitForURL(/time=1h/);
  await time.selectOption('24h');
  await page.waitForURL(/time=24h/);
  // The browser keeps a list's choice once a person has made one: the
  // list must follow the address, or the next Apply writes the old range.
  await page.goBack();
  await page.waitForURL(/time=1h/);
  await page.waitForFunction(() => document.querySelector('select[name=time]')?.value === '1h');
  await page.goForward();
  await page.waitForURL(/time=24h/);
  await page.waitForFunction(() => document.querySelector('select[name=time]')?.value === '24h');

  await time.selectOption('custom');
  await page.getByRole('textbox', { name: 'From' }).fill('2026-12-06T11:21');
  await page.getByRole('textbox', { name: 'to', exact: true }).fill('2026-12-06T11:20');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('alert').filter({ hasText: /^Not applied: .*ends before it starts$/ }).waitFor();
  await page.getByRole('textbox', { name: 'From' }).fill('yesterday');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByRole('alert').filter({ hasText: /^Not applied: From: .*yesterday/ }).waitFor();
  assert.match(page.url(), /time=24h$/, 'the address keeps the range it had');
  errors.assertNone();
});

test('stepping through the Time list with the arrow keys applies the range settled on, once', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/'));
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  const time = page.getByRole('search', { name: 'Filter' }).getByLabel('Time');
  await time.focus();
  const before = await page.evaluate(() => history.length);
  // 7d, then 30d, then all: each step a change event in Chromium.
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForURL(/time=all/);
  await page.getByRole('table', { name: 'Jobs' }).and(page.locator('[aria-busy=false]')).waitFor();
  assert.equal(await page.evaluate(() => history.length), before + 1, 'one history entry for the range settled on');
  // Left alone, a step is applied once it stands.
  await page.keyboard.press('ArrowUp');
  await page.waitForURL(/time=30d/);
  assert.equal(await page.evaluate(() => history.length), before + 2);
  errors.assertNone();
});

test('a custom range typed in the form takes in its end date\'s whole day, as the same range in a link does', async () => {
  const { page, errors } = await b.newPage();
  // The day the real Salt data was written, from one of its jids.
  const jid = manifest.state_apply_multi.jid;
  const day = `${jid.slice(0, 4)}-${jid.slice(4, 6)}-${jid.slice(6, 8)}`;
  const counts = page.getByText(/^\d+ jobs?, \d+ returns?/).first();
  await page.goto(url(`/?time=${day}..${day}`));
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  const fromLink = await counts.textContent();
  assert.doesNotMatch(fromLink, /^0 jobs/, 'the data\'s own day holds jobs');

  await page.goto(url('/'));
  await page.getByRole('table', { name: 'Jobs' }).waitFor();
  await page.getByRole('search', { name: 'Filter' }).getByLabel('Time').selectOption('custom');
  await page.getByRole('textbox', { name: 'From' }).fill(day);
  await page.getByRole('textbox', { name: 'to', exact: true }).fill(day);
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL((u) => u.searchParams.get('time') === `${day}T00:00:00.000Z..${day}T23:59:59.999Z`);
  await page.getByText(fromLink).first().waitFor();
  assert.equal(await page.getByRole('textbox', { name: 'to', exact: true }).inputValue(), `${day}T23:59:59.999Z`);
  errors.assertNone();
});

test('a link from another view to one minion\'s return shows that return first, and it stays in view while the others load', async () => {
  const { page, errors } = await b.newPage();
  await page.setViewportSize({ width: 1200, height: 500 });
  const { minions } = manifest.state_apply_multi;
  const last = [...minions].sort().at(-1);
  // The returns' outputs (one search by id each) are held back until the
  // page has drawn the job, as a slow engine would.
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  const asked = [];
  await page.route('**/_msearch*', async (route) => {
    const search = (route.request().postData() ?? '').split('\n')[1] ?? '';
    if (search.startsWith('{"query":{"ids"')) {
      asked.push(search);
      await held;
    }
    await route.continue();
  });
  await page.goto(url('/fleet'));
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: last, exact: true }) });
  await row.getByRole('link', { name: /^state\./ }).click();
  await page.getByRole('heading', { name: /^Job \d{20}$/ }).waitFor();
  const firstSectionInView = (name) => {
    const first = document.querySelector('section.minion');
    const top = first?.getBoundingClientRect().top;
    return first?.getAttribute('aria-label') === name && top >= -1 && top < window.innerHeight;
  };
  await page.waitForFunction(firstSectionInView, last);
  release();
  await page.getByRole('region', { name: 'Totals' }).getByText(/Total states run: \d+/).waitFor();
  assert.ok(await page.evaluate(firstSectionInView, last), `${last}'s return left the screen as the others loaded`);
  const chips = await page.getByRole('navigation', { name: 'Minions' }).getByRole('link').allTextContents();
  assert.equal(chips[0], last, 'the minions\' list starts with the one the link named');
  assert.deepEqual([...chips].sort(), [...minions].sort());
  // The job brought the first return's output; each other one is asked once.
  assert.equal(new Set(asked).size, asked.length, `an output was asked for twice: ${asked.join(' ')}`);
  assert.equal(asked.length, minions.length - 1);
  errors.assertNone();
});

test('a range of whole days takes in its last day, and one day is a range', async () => {
  const { jid } = manifest.state_apply_multi;
  const day = `${jid.slice(0, 4)}-${jid.slice(4, 6)}-${jid.slice(6, 8)}`;
  const { page, errors } = await b.newPage();
  const job = page.getByRole('table', { name: 'Jobs' }).getByRole('link', { name: jid, exact: true });
  // Narrowed to the job: on an engine that has run the suite before, more
  // than a page of later jobs would push it off the first page.
  await page.goto(url(`/?time=2020-01-01..${day}&noisy=show&jid=${jid}`));
  await job.waitFor();
  await page.goto(url(`/?time=${day}..${day}&noisy=show&jid=${jid}`));
  await job.waitFor();
  assert.equal(await page.getByRole('list', { name: 'Notes' }).count(), 0, 'the one-day range is read, not refused');
  errors.assertNone();
});

test('at 400 pixels wide every view\'s link in the top bar is on the screen', async () => {
  const { page, errors } = await b.newPage();
  await page.setViewportSize({ width: 400, height: 800 });
  await page.goto(url('/fleet'));
  const links = page.getByRole('navigation', { name: 'Views' }).getByRole('link');
  await links.first().waitFor();
  for (const link of await links.all()) {
    const box = await link.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 400, `${await link.textContent()} at ${JSON.stringify(box)}`);
  }
  errors.assertNone();
});
