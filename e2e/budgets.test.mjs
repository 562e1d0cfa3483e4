// Round-trip budgets, as the browser sees the requests go out and come
// back: config.json is read while the app downloads, start-up asks the
// engine at most 2 round trips after it (GET / and _field_caps go
// together), a page of the job list takes at most 2 round trips whatever
// the size (the page, then its details), and the job page's first output
// comes with the job.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, jobRows, readManifest } from './harness.mjs';

let b;
before(async () => { b = await openBrowser(); });
after(async () => { await b?.close(); });

/**
 * Records, in the page, each engine request the app makes: when the app
 * called fetch and when fetch handed it the answer. `waves()` counts round
 * trips: a request the app sent after another's answer was in its hands is
 * a further round trip. (The network's own times cannot tell: a fast
 * answer can end, by the network's clock, before the app has even called
 * fetch for the request it sends beside it in the same task.)
 */
async function recordEngineRequests(page) {
  await page.addInitScript(() => {
    const fetch = window.fetch;
    window.__engineRequests = [];
    window.fetch = function (input, init) {
      const url = new URL(typeof input === 'string' ? input : input.url, location.href).href;
      const answer = fetch.call(this, input, init);
      if (url.includes('/es/')) {
        const e = { url, sent: performance.now(), done: Infinity };
        window.__engineRequests.push(e);
        const done = () => { e.done = performance.now(); };
        answer.then(done, done);
      }
      return answer;
    };
  });
}

async function engineRequests(page, since = 0) {
  const list = await page.evaluate((since) => window.__engineRequests.filter((e) => e.sent >= since), since);
  return {
    requests: list,
    waves(of = list) {
      // Longest chain of requests each sent after the previous one's answer.
      const depth = of.map(() => 1);
      of.forEach((x, i) => {
        for (let j = 0; j < i; j++) if (of[j].done <= x.sent) depth[i] = Math.max(depth[i], depth[j] + 1);
      });
      return Math.max(0, ...depth);
    },
  };
}

test('start-up takes one round trip to the engine, and the job list two', async () => {
  const { page, errors } = await b.newPage();
  await recordEngineRequests(page);
  await page.goto(url('/?noisy=show'));
  await jobRows(page).first().waitFor();
  await page.getByRole('table', { name: 'Jobs' }).and(page.locator('[aria-busy=false]')).waitFor();
  const rec = await engineRequests(page);
  const startup = rec.requests.filter((x) => !x.url.endsWith('/_msearch'));
  assert.deepEqual(startup.map((x) => new URL(x.url).pathname.replace(/^\/es/, '').split('?')[0].replace(/^\/[^_]+\/_field_caps$/, '/_field_caps')).sort(), ['/', '/_field_caps']);
  assert.equal(rec.waves(startup), 1, 'GET / and _field_caps go together');
  const list = rec.requests.filter((x) => x.url.endsWith('/_msearch'));
  assert.equal(list.length, 2, 'the page and its details');
  assert.ok(rec.waves() <= 3, `1 start-up + 2 job list round trips, not ${rec.waves()}`);
  errors.assertNone();
});

test('config.json is read once, while the app downloads, and the engine is asked before the page is drawn', async () => {
  const { page, errors } = await b.newPage();
  await recordEngineRequests(page);
  // When the app first puts something of its own into <body> (index.html's
  // own noscript and skip link are parsed into it too).
  await page.addInitScript(() => {
    new MutationObserver((mutations, observer) => {
      const drawn = mutations.some((m) => m.target === document.body
        && [...m.addedNodes].some((n) => n.nodeType === Node.ELEMENT_NODE && n.tagName !== 'NOSCRIPT' && !n.matches('a.skip')));
      if (drawn) {
        window.__drawnAt = performance.now();
        observer.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(url('/?noisy=show'));
  await jobRows(page).first().waitFor();
  const { configs, wasmEnd, drawn } = await page.evaluate(() => {
    const entries = performance.getEntriesByType('resource');
    return {
      configs: entries.filter((e) => new URL(e.name).pathname === '/config.json').map((e) => e.startTime),
      wasmEnd: entries.find((e) => e.name.endsWith('.wasm')).responseEnd,
      drawn: window.__drawnAt,
    };
  });
  const engine = (await engineRequests(page)).requests[0]?.sent;
  // index.html's preload asks for it; the app's own fetch takes that answer.
  assert.equal(configs.length, 1, `config.json asked for ${configs.length} times`);
  assert.ok(configs[0] < wasmEnd, `config.json asked at ${configs[0]} ms, after the app arrived (${wasmEnd} ms)`);
  // The page is drawn once start-up's requests are on their way, not before.
  assert.ok(engine !== undefined && drawn !== undefined, `engine request at ${engine} ms, page drawn at ${drawn} ms`);
  assert.ok(engine < drawn, `the engine's first request left at ${engine} ms, after the page was drawn at ${drawn} ms`);
  errors.assertNone();
});

test('a config.json slow to answer does not hold the page back: it says it is connecting', async () => {
  const { page, errors } = await b.newPage();
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route('**/config.json', async (route) => { await held; await route.continue(); });
  await page.goto(url('/?noisy=show'));
  // Drawn while config.json is still unanswered.
  await page.getByText('connecting…').waitFor();
  await page.getByRole('search').getByLabel('Minion', { exact: true }).waitFor();
  release();
  await jobRows(page).first().waitFor();
  errors.assertNone();
});

test('the job page brings its first output with the job: a 4-minion job then asks for the other 3', async () => {
  const { jid, minions } = readManifest().state_apply_multi;
  const { page, errors } = await b.newPage();
  await recordEngineRequests(page);
  await page.goto(url(`/job/${jid}`));
  for (const minion of minions) {
    await page.getByRole('region', { name: minion, exact: true }).getByRole('table', { name: 'States' }).waitFor();
  }
  const rec = await engineRequests(page);
  const searches = rec.requests.filter((x) => x.url.endsWith('/_msearch'));
  assert.equal(searches.length, minions.length, `the job and the other minions' outputs, not ${searches.length} searches`);
  assert.equal(rec.waves(searches), 2);
  errors.assertNone();
});

test('the next page of the job list is two round trips too', async () => {
  const { page, errors } = await b.newPage();
  await recordEngineRequests(page);
  await page.goto(url('/?noisy=show&time=all'));
  await jobRows(page).first().waitFor();
  const older = page.getByRole('link', { name: 'Older jobs' });
  if (!(await older.count())) return; // one page of jobs only
  const since = await page.evaluate(() => performance.now());
  await older.click();
  await page.waitForURL(/after=/);
  await page.getByRole('table', { name: 'Jobs' }).and(page.locator('[aria-busy=false]')).waitFor();
  await jobRows(page).first().waitFor();
  const rec = await engineRequests(page, since);
  assert.equal(rec.requests.length, 2, rec.requests.map((x) => x.url).join(', '));
  assert.equal(rec.waves(), 2);
  errors.assertNone();
});
