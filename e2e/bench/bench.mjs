// The benchmark behind scripts/bench.sh: each case's time as the app itself
// marks it (performance.mark("saltscope:painted:<view>"), from navigation
// start or from the action), against the floor measured in the same run —
// the engine's own `took` for the very requests the case sent, plus one
// round trip of a bare GET / through the same nginx — and the bytes the
// browser actually received. Prints a table; asserts nothing.
//
// Env: BASE_URL (nginx), ES_URL (the engine), BENCH_SETS (comma list of
// index prefixes with their size, e.g. "salt:real,saltb10k:10k,…"),
// BENCH_RUNS (median of, default 3), BENCH_BIG (prefix holding the big
// shapes), BENCH_JOBS (JSON: name -> jid of the job pages to open).
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, prefixConfig, serveConfigFor } from '../harness.mjs';

const BASE = (process.env.BASE_URL || 'http://127.0.0.1:8096').replace(/\/+$/, '');
const SETS = (process.env.BENCH_SETS || 'salt:real').split(',').map((s) => {
  const [prefix, label] = s.split(':');
  return { prefix, label: label || prefix };
});
const RUNS = Number(process.env.BENCH_RUNS || 3);
const JOBS = JSON.parse(process.env.BENCH_JOBS || '{}');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

/** One bare round trip through nginx: the network's share of the floor. */
async function roundTrip() {
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await (await fetch(`${BASE}/es/`)).arrayBuffer();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/**
 * A page that records the engine's `took` of every answer it gets and the
 * bytes it receives; `since(mark)` resets the books.
 */
async function instrumented(browser, prefix) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  // Not page.route: it would hold up every request (harness.mjs).
  if (prefix !== 'salt') await serveConfigFor(page, prefixConfig(prefix));
  // searches: each answer's searches' own `took`, in the order received.
  const books = { took: 0, requests: 0, bytes: 0, searches: [] };
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  cdp.on('Network.loadingFinished', (e) => { books.bytes += e.encodedDataLength; });
  page.on('response', async (r) => {
    if (!r.url().includes('/es/')) return;
    books.requests += 1;
    try {
      const body = await r.json();
      if (typeof body.took === 'number') books.took += body.took;
      books.searches.push(Array.isArray(body.responses) ? body.responses.map((x) => x.took) : [body.took]);
    } catch { /* not JSON: no took */ }
  });
  return {
    page,
    context,
    books,
    reset() { books.took = 0; books.requests = 0; books.bytes = 0; books.searches = []; },
    async close() { await context.close(); },
  };
}

/** Time from `from` (a mark, or navigation start) to the next painted mark of `view`. */
async function painted(page, view, from, timeout = 120000) {
  const name = `saltscope:painted:${view}`;
  await page.waitForFunction(([n, f]) => {
    const from = f ? performance.getEntriesByName(f).at(-1) : { startTime: 0 };
    return !!from && performance.getEntriesByName(n).some((m) => m.startTime >= from.startTime);
  }, [name, from], { timeout });
  return page.evaluate(([n, f]) => {
    const start = f ? performance.getEntriesByName(f).at(-1).startTime : 0;
    const m = performance.getEntriesByName(n).find((x) => x.startTime >= start);
    return m.startTime - start;
  }, [name, from]);
}

/**
 * Runs `run` (Playwright acting as the person) and marks `bench:action` in
 * the page when the page receives `event`: the time counts from the
 * person's action, not from the driver's own round trips before it.
 */
async function action(page, event, run) {
  await page.evaluate((type) => {
    performance.clearMarks('bench:action');
    addEventListener(type, () => performance.mark('bench:action'), { capture: true, once: true });
  }, event);
  await run();
}

const rows = [];
const profiles = [];
const scrolls = [];
const wholeTexts = [];

/**
 * Scrolls a job page with the mouse wheel, a screen a step, until its
 * states table draws no more ("Show N more states" gone and the page's end
 * reached): the frames' lengths while it scrolls, and the time it took.
 */
async function scrollToEnd(page, url) {
  await page.goto(url);
  await painted(page, 'job-return');
  await page.mouse.move(640, 450);
  await recordFrames(page);
  const more = page.getByRole('button', { name: /^Show \d+ more states$/ });
  const t0 = Date.now();
  let steps = 0;
  for (;;) {
    await page.mouse.wheel(0, 900);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    steps += 1;
    if (steps % 50 === 0) {
      // Finding the button by its role walks the whole page, 10,000 rows
      // at the end: a frame of 100-400 ms that is the driver's, not the
      // app's. Those frames are left out.
      await page.evaluate(() => { window.__pausedFrames = true; });
      const end = !(await more.count())
        && await page.evaluate(() => innerHeight + scrollY >= document.documentElement.scrollHeight - 2);
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => {
        window.__pausedFrames = false;
        r();
      }))));
      if (end) break;
    }
    if (Date.now() - t0 > 300000) throw new Error('the states table did not reach its end in 5 min');
  }
  return { ms: Date.now() - t0, steps, ...(await frameStats(page)) };
}

/**
 * Clicks a job page's "show all (5.0 MB)" under a folded text (the `<pre>`
 * that `selector` finds: a state's diff, a minion's output) and waits until
 * all of its `bytes` are drawn: the frames' lengths meanwhile.
 */
async function showWhole(page, url, bytes, selector) {
  await page.goto(url);
  const all = page.getByRole('button', { name: /^show all \(/ });
  await all.waitFor({ timeout: 120000 });
  await recordFrames(page);
  const t0 = Date.now();
  await all.click();
  await page.waitForFunction(([sel, n]) => document.querySelector(sel)?.textContent.length >= n, [selector, bytes], { timeout: 120000, polling: 250 });
  return { ms: Date.now() - t0, ...(await frameStats(page)) };
}

/** Starts recording every frame's length (requestAnimationFrame). */
async function recordFrames(page) {
  await page.evaluate(() => {
    window.__frames = [];
    let last = performance.now();
    // Paused, the frames are not counted (the driver's own checks).
    const tick = (t) => {
      if (!window.__pausedFrames) window.__frames.push(t - last);
      last = t;
      if (!window.__stopFrames) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

/** The frames recorded since `recordFrames`: how many, 95th percentile, longest, over 50 ms. */
async function frameStats(page) {
  const frames = await page.evaluate(() => { window.__stopFrames = true; return window.__frames.slice(1); });
  const sorted = [...frames].sort((a, b) => a - b);
  return {
    frames: frames.length,
    p95: sorted[Math.floor(sorted.length * 0.95)],
    max: sorted.at(-1),
    over50: frames.filter((f) => f > 50).length,
  };
}

/**
 * Where a view's time went after the person's action, from the page's own
 * Resource Timing: the app before its first request, each request to the
 * engine (sent -> answer read), the app between them, the app after the
 * last answer until the core's answer is in (saltscope:answered: reading the
 * answers into the view's model), and from there to the painted mark
 * (Leptos drawing it, then the next frame).
 */
async function phases(page, view) {
  return page.evaluate((v) => {
    const a = performance.getEntriesByName('bench:action').at(-1).startTime;
    const painted = performance.getEntriesByName(`saltscope:painted:${v}`).find((m) => m.startTime >= a).startTime;
    const answered = performance.getEntriesByName(`saltscope:answered:${v}`).filter((m) => m.startTime >= a && m.startTime <= painted).at(-1)?.startTime ?? painted;
    const reqs = performance.getEntriesByType('resource')
      .filter((r) => r.name.includes('/es/') && r.startTime >= a && r.responseEnd <= painted)
      .sort((x, y) => x.startTime - y.startTime);
    let at = 0;
    const out = [];
    for (const r of reqs) {
      out.push({ app: r.startTime - a - at, request: r.responseEnd - r.startTime, kb: r.encodedBodySize / 1024 });
      at = r.responseEnd - a;
    }
    return { steps: out, read: answered - a - at, draw: painted - answered };
  }, view);
}
function report(set, name, samples, floors, bytes, requests) {
  if (!samples.length) return;
  const app = median(samples);
  const floor = median(floors);
  // The goal's own measure, run by run: medians of app and floor taken apart
  // pair a fast app with a slow engine of another run.
  const over = median(samples.map((ms, i) => ms - floors[i]));
  rows.push({ set, name, app, floor, over, ratio: app / floor, bytes: median(bytes), requests: median(requests) });
}

async function measure(browser, set, name, run) {
  const samples = []; const floors = []; const bytes = []; const requests = [];
  for (let i = 0; i < RUNS; i++) {
    const p = await instrumented(browser, set.prefix);
    try {
      const { ms, phases } = await run(p);
      if (!Number.isFinite(ms)) continue;
      if (phases) profiles.push({ set: set.label, name, phases, searches: p.books.searches });
      samples.push(ms);
      floors.push(p.books.took + rtt);
      bytes.push(p.books.bytes);
      requests.push(p.books.requests);
    } finally {
      await p.close();
    }
  }
  report(set.label, name, samples, floors, bytes, requests);
}

let rtt = 0;
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
try {
  rtt = await roundTrip();
  for (const set of SETS) {
    const list = `${BASE}/?time=all&noisy=show`;
    await measure(browser, set, 'job list, cold', async (p) => {
      await p.page.goto(list);
      return { ms: await painted(p.page, 'job-list') };
    });
    // A filter change, made the moment the list painted or after a
    // person's pause: made at once, it pays for whatever the browser still
    // does after loading the app (measured: about twice the app's own time).
    // The breakdown below is of the first.
    const filterChange = (pauseMs) => async (p) => {
      await p.page.goto(list);
      await painted(p.page, 'job-list');
      if (pauseMs) await p.page.waitForTimeout(pauseMs);
      p.reset();
      await action(p.page, 'change', () => p.page.getByRole('search').getByLabel('Outcome').selectOption('failed'));
      const ms = await painted(p.page, 'job-list', 'bench:action');
      return pauseMs ? { ms } : { ms, phases: await phases(p.page, 'job-list') };
    };
    await measure(browser, set, 'job list, warm (filter)', filterChange(0));
    await measure(browser, set, 'job list, warm (filter, 1.5 s after)', filterChange(1500));
    await measure(browser, set, 'job list, next page (Older jobs)', async (p) => {
      await p.page.goto(list);
      await painted(p.page, 'job-list');
      const older = p.page.getByRole('link', { name: 'Older jobs' });
      // Fewer jobs than a page: nothing to time.
      if (!(await older.count())) return { ms: NaN };
      p.reset();
      await action(p.page, 'click', () => older.click());
      return { ms: await painted(p.page, 'job-list', 'bench:action') };
    });
    await measure(browser, set, 'histogram zoom', async (p) => {
      await p.page.goto(list);
      await painted(p.page, 'job-list');
      const svg = p.page.getByRole('figure', { name: 'Returns over time' }).getByRole('img');
      const box = await svg.boundingBox();
      p.reset();
      await action(p.page, 'pointerup', async () => {
        await p.page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
        await p.page.mouse.down();
        await p.page.mouse.move(box.x + box.width - 2, box.y + box.height / 2, { steps: 4 });
        await p.page.mouse.up();
      });
      return { ms: await painted(p.page, 'job-list', 'bench:action') };
    });
    for (const [view, path, name] of [['minions', '/minions', 'minions'], ['functions', '/functions', 'functions'], ['audit', '/audit', 'audit']]) {
      await measure(browser, set, name, async (p) => {
        await p.page.goto(list);
        await painted(p.page, 'job-list');
        p.reset();
        await action(p.page, 'click', () => p.page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: name[0].toUpperCase() + name.slice(1) }).click());
        return { ms: await painted(p.page, view, 'bench:action') };
      });
    }
  }
  for (const [name, { prefix, jid }] of Object.entries(JOBS)) {
    const set = { prefix, label: prefix };
    await measure(browser, set, `job page: ${name}`, async (p) => {
      await p.page.goto(`${BASE}/job/${jid}`);
      await painted(p.page, 'job');
      // The first screen: the first minion's output drawn.
      return { ms: await painted(p.page, 'job-return') };
    });
  }
  // The run comparison of the 10,000-state return with one minion's run of
  // the 2,000-minion job: up to 10,000 rows, the first screen timed.
  const [states, wide] = [JOBS['1 minion x 10,000 states'], JOBS['2,000 minions']];
  if (states?.minion && wide) {
    const found = await (await fetch(`${BASE}/es/${wide.prefix}-state_apply*/_search?size=1&q=jid:${wide.jid}&_source=minion`)).json();
    const other = found.hits?.hits?.[0]?._source?.minion;
    await measure(browser, { prefix: states.prefix, label: states.prefix }, 'run comparison: 10,000 states', async (p) => {
      await p.page.goto(`${BASE}/compare?a=${states.jid}:${states.minion}&b=${wide.jid}:${other}`);
      return { ms: await painted(p.page, 'compare') };
    });
  }
  // Scrolling the 10,000-state page to its last state as a person does,
  // with the wheel: every frame's length (requestAnimationFrame), once the
  // first screen is in.
  const big = JOBS['1 minion x 10,000 states'];
  if (big) {
    for (let i = 0; i < RUNS; i++) {
      const p = await instrumented(browser, big.prefix);
      try {
        scrolls.push(await scrollToEnd(p.page, `${BASE}/job/${big.jid}`));
      } finally {
        await p.close();
      }
    }
  }
  for (const [name, selector] of [['5 MB diff in a state', 'pre.diff'], ['5 MB cmd.run output', 'pre.return-text']]) {
    const job = JOBS[name];
    if (!job) continue;
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      const p = await instrumented(browser, job.prefix);
      try {
        runs.push(await showWhole(p.page, `${BASE}/job/${job.jid}`, job.bytes, selector));
      } finally {
        await p.close();
      }
    }
    wholeTexts.push({ name, runs });
  }
} finally {
  await browser.close();
}

const pad = (s, n) => String(s).padEnd(n);
const num = (x) => (Number.isFinite(x) ? x.toFixed(0) : '-');
console.log(`\nround trip GET /es/ through nginx: ${rtt.toFixed(1)} ms; median of ${RUNS} runs per case\n`);
console.log(`${pad('data', 10)} ${pad('case', 40)} ${'app ms'.padStart(8)} ${'floor ms'.padStart(9)} ${'app/floor'.padStart(9)} ${'app-floor'.padStart(9)} ${'requests'.padStart(8)} ${'received KB'.padStart(11)}`);
for (const r of rows) {
  console.log(`${pad(r.set, 10)} ${pad(r.name, 40)} ${num(r.app).padStart(8)} ${num(r.floor).padStart(9)} ${(Number.isFinite(r.ratio) ? r.ratio.toFixed(1) : '-').padStart(9)} ${num(r.over).padStart(9)} ${num(r.requests).padStart(8)} ${(r.bytes / 1024).toFixed(0).padStart(11)}`);
}
console.log('\ncold and job page rows count from navigation start and include the app\'s own download;');
console.log('the others count from the person\'s action. floor = Σ engine took + one round trip;');
console.log('app-floor = the median over runs of each run\'s app time less its own floor.');

// The warm job list, taken apart (the median run by time of each set).
console.log('\njob list, warm (filter), where the time went (ms; engine = each search\'s own took inside the answer):');
const bySet = new Map();
for (const pr of profiles) (bySet.get(pr.set) ?? bySet.set(pr.set, []).get(pr.set)).push(pr);
for (const [set, list] of bySet) {
  const total = (x) => x.phases.steps.reduce((t, st) => t + st.app + st.request, 0) + x.phases.read + x.phases.draw;
  const pr = [...list].sort((x, y) => total(x) - total(y))[Math.floor(list.length / 2)];
  const parts = pr.phases.steps.map((st, i) => {
    const engine = (pr.searches[i] ?? []).filter(Number.isFinite);
    return `app ${st.app.toFixed(0)} | request ${i + 1} ${st.request.toFixed(0)} (${st.kb.toFixed(0)} KB; engine ${engine.join('+') || '-'})`;
  });
  console.log(`  ${pad(set, 8)} ${parts.join(' | ')} | read ${pr.phases.read.toFixed(0)} | draw ${pr.phases.draw.toFixed(0)} = ${total(pr).toFixed(0)}`);
}

if (scrolls.length) {
  const m = (k) => median(scrolls.map((x) => x[k]));
  console.log('\njob page: 1 minion x 10,000 states, scrolled with the wheel (900 px a step) to its last state (median of runs):');
  console.log(`  ${m('steps')} steps in ${(m('ms') / 1000).toFixed(1)} s; ${m('frames')} frames: 95th percentile ${m('p95').toFixed(0)} ms, longest ${m('max').toFixed(0)} ms, ${m('over50')} over 50 ms`);
}
for (const { name, runs } of wholeTexts) {
  const m = (k) => median(runs.map((x) => x[k]));
  console.log(`\njob page: ${name}, "show all" until every byte is drawn (median of runs):`);
  console.log(`  ${(m('ms') / 1000).toFixed(1)} s; ${m('frames')} frames: 95th percentile ${m('p95').toFixed(0)} ms, longest ${m('max').toFixed(0)} ms, ${m('over50')} over 50 ms`);
}
