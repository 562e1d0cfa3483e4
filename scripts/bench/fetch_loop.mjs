// The floor under the browser export: a bare fetch loop over the very same
// pages through the same nginx, in the same browser, doing nothing with an
// answer but find its last `sort` (as the app does, from the end of the
// bytes). The app's own first two page requests are captured and their
// bodies reused, so the query, sort, page sizes (a short first page, then
// full ones) and point in time are the app's.
// SLICES=n fetches n slices of the point in time at once instead (what the
// export would gain from fetching pages side by side).
// Prints: rows=<n> seconds=<s> pages=<n> mb=<MB of JSON> wire_mb=<MB as
// transferred, compressed: the pages' Resource Timing encodedBodySize>
//   BASE_URL=… PREFIX=saltgen [SLICES=2] node scripts/bench/fetch_loop.mjs
import { openBrowser, prefixConfig, serveConfigFor, url } from '../../e2e/harness.mjs';

const PREFIX = process.env.PREFIX || 'saltgen';
const SLICES = Math.max(1, Number(process.env.SLICES || 1));
const b = await openBrowser();
const { page } = await b.newPage();
// Not useIndexPrefix: its page.route would hold up every page fetch.
await serveConfigFor(page, prefixConfig(PREFIX));
await page.goto(url('/?time=all&noisy=show'));
await page.getByText('Export CSV', { exact: true }).click();
const panel = page.getByRole('group', { name: 'Export CSV' });
await panel.getByLabel('Export', { exact: true }).selectOption('returns');

// The app's point-in-time open and first two pages, then Cancel.
let pitOpen = null;
const pages = [];
const captured = new Promise((resolve) => {
  page.on('request', (r) => {
    const u = r.url();
    if (r.method() === 'POST' && /point_in_time|_pit\b/.test(u) && !pitOpen) pitOpen = { url: u.replace(/^https?:\/\/[^/]+/, ''), body: r.postData() };
    // A page has a sort; the probe before it (under the same PIT) has none.
    const body = r.postData() || '';
    if (r.method() === 'POST' && /\/_search$/.test(u) && body.includes('"pit"') && body.includes('"sort"') && pages.length < 2) {
      pages.push(JSON.parse(body));
      if (pages.length === 2) resolve();
    }
  });
});
await panel.getByRole('button', { name: 'Start export' }).click();
await captured;
await panel.getByRole('button', { name: 'Cancel' }).click();
if (!pitOpen) throw new Error('the app opened no point in time: is this OpenSearch or Elasticsearch ≥ 7.10?');
const [firstPage, { size }] = pages;

const result = await page.evaluate(async ({ pitOpen, firstPage, size, slices }) => {
  performance.setResourceTimingBufferSize(1e6);
  performance.clearResourceTimings();
  const t0 = performance.now();
  const opened = await (await fetch(pitOpen.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: pitOpen.body })).json();
  const id = opened.pit_id || opened.id;
  let rows = 0; let pages = 0; let bytes = 0;
  // Only a page's ends are decoded, as the app reads its cursor from the
  // end of the bytes: decoding every page whole into a string cost this
  // loop itself 1-2 s over 1M documents (medians of 3: 10.43 against
  // 8.95 s), which made the floor too high.
  const decoder = new TextDecoder();
  const decode = (part) => decoder.decode(part);
  // One loop per slice of the point in time, all at once (slices = 1: the
  // app's own pages, one after another).
  async function loop(slice) {
    let after = null;
    let total = null;
    let read = 0;
    for (;;) {
      // The total is asked for on the first page, as the app does; a full
      // page holds `size` hits, and only a short one is counted hit by hit.
      const first = total === null;
      const body = { ...firstPage, pit: { ...firstPage.pit, id }, track_total_hits: first, size: first ? firstPage.size : size };
      if (slices > 1) body.slice = { id: slice, max: slices };
      if (after) body.search_after = after; else delete body.search_after;
      const answer = new Uint8Array(await (await fetch('/es/_search', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).arrayBuffer());
      pages += 1; bytes += answer.length;
      if (total === null) {
        const m = /"total":\{"value":(\d+)/.exec(decode(answer.subarray(0, 65536)));
        if (!m) throw new Error('the first page has no hits.total');
        total = Number(m[1]);
      }
      const tail = decode(answer.subarray(Math.max(0, answer.length - 4096)));
      const at = tail.lastIndexOf('"sort":[');
      if (at < 0) break;
      after = JSON.parse(tail.slice(at + 7, tail.indexOf(']', at) + 1));
      const want = body.size;
      const n = total - read >= want ? want : decode(answer).split('"sort":[').length - 1;
      read += n;
      if (n < want) break;
    }
    rows += read;
  }
  await Promise.all([...Array(slices).keys()].map(loop));
  const seconds = (performance.now() - t0) / 1000;
  const close = pitOpen.url.includes('_pit')
    ? fetch('/es/_pit', { method: 'DELETE', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ id }) })
    : fetch('/es/_search/point_in_time', { method: 'DELETE', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ pit_id: [id] }) });
  await close.catch(() => {});
  const wire = performance.getEntriesByType('resource')
    .filter((e) => e.name.endsWith('/es/_search'))
    .reduce((n, e) => n + e.encodedBodySize, 0);
  return { rows, seconds, pages, mb: bytes / 1e6, wireMb: wire / 1e6 };
}, { pitOpen, firstPage, size, slices: SLICES });
console.log(`rows=${result.rows} seconds=${result.seconds.toFixed(2)} pages=${result.pages} mb=${result.mb.toFixed(0)} wire_mb=${result.wireMb.toFixed(0)}`);
await b.close();
