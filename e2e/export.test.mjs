// CSV export in the browser against the real engine and the data real Salt
// wrote: the file is downloaded, parsed back with an RFC 4180 parser and
// compared cell by cell (every default column of the states export: time,
// user from the publish data, run order, state function, name, SLS, result,
// changed, comment, duration) with the engine's documents; formula protection on
// and off.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openBrowser, url, jobRows, eventually } from './harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
let b;
let returns;
const users = new Map();
before(async () => {
  const body = {
    size: 10000,
    query: { bool: { filter: [{ exists: { field: 'minion' } }], must_not: [{ prefix: { _index: 'salt-master-' } }] } },
  };
  const r = await fetch(`${ES_URL}/salt-*/_search`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  returns = (await r.json()).hits.hits.map((h) => h._source);
  // Who ran each job, as the export must find it: the publish event, else
  // the job cache's load.
  const search = async (index, query) => {
    const a = await fetch(`${ES_URL}/${index}/_search?ignore_unavailable=true`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ size: 10000, query }),
    });
    return (await a.json()).hits?.hits?.map((h) => h._source) || [];
  };
  for (const j of await search('salt-master-job-cache*', { match_all: {} })) {
    if (j.jid && j.load?.user) users.set(String(j.jid), j.load.user);
  }
  for (const e of await search('salt-master-event-cache*', { match_all: {} })) {
    const m = /^salt\/job\/(\d+)\/new$/.exec(e.tag || '');
    if (m && e.data?.user) users.set(m[1], e.data.user);
  }
  b = await openBrowser();
});
after(async () => { await b?.close(); });

/** RFC 4180: quoted fields with "" escapes, commas and newlines inside. */
export function parseCsv(text) {
  const rows = [];
  let row = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\r' && text[i + 1] === '\n') { /* CRLF */ } else if (c === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; } else cell += c;
  }
  if (cell !== '' || row.length) { row.push(cell); rows.push(row); }
  return rows;
}

const unprotect = (cell) => (/^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell);

/** The export panel, opened. */
export async function openExport(page) {
  const panel = page.getByRole('group', { name: 'Export CSV' });
  if (!(await panel.isVisible())) await page.getByText('Export CSV', { exact: true }).click();
  return panel;
}

// Elasticsearch's OSS build has no point in time: the export asks once
// (POST /<index>/_pit answers 400), says so in a note and pages with
// search_after. That one 400 is expected.
const PIT_PROBE = /HTTP 400 POST \S+\/_pit\?/;

async function exportCsv(page, { kind, protect = true, bom = false, columns = [] }) {
  const panel = await openExport(page);
  await panel.getByLabel('Export', { exact: true }).selectOption(kind);
  for (const c of columns) await panel.getByRole('checkbox', { name: c, exact: true }).check();
  const protection = panel.getByLabel(/Protect against formulas/);
  if ((await protection.isChecked()) !== protect) await protection.click();
  if (bom) await panel.getByLabel('Byte order mark (for Excel)').check();
  await panel.getByRole('button', { name: 'Start export' }).click();
  const link = panel.getByRole('link', { name: /^Download saltscope-/ });
  await link.waitFor({ timeout: 120000 });
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'saltscope-export-')), download.suggestedFilename());
  await download.saveAs(file);
  return { name: download.suggestedFilename(), bytes: fs.readFileSync(file) };
}

// The export's own readings of a document, written again from the
// returner's description: ISO 8601 UTC to the millisecond, Salt's state key
// `[n_|-]module_|-id_|-name_|-function`, durations without float noise.
function isoMillis(ts) {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(?:Z|\+00:00)$/.exec(ts || '');
  if (m) return `${m[1]}.${(m[2] || '').padEnd(3, '0').slice(0, 3)}Z`;
  return ts ? new Date(ts).toISOString() : '';
}
function keyParts(key) {
  let parts = key.split('_|-');
  if (parts.length > 4 && /^\d+$/.test(parts[0])) parts = parts.slice(1);
  return { module: parts[0], id: parts[1], name: parts.slice(2, -1).join('_|-'), fun: parts[parts.length - 1] };
}
const msNumber = (x) => (typeof x === 'number'
  ? (Math.round(x * 1000) / 1000).toFixed(3).replace(/0+$/, '').replace(/\.$/, '')
  : '');

const STATE_HEADERS = ['Time (UTC)', 'JID', 'Minion', 'Function', 'User', 'Run order', 'State ID', 'State function',
  'Name', 'SLS', 'Result', 'Changed', 'Comment', 'Duration (ms)'];

/** Every default column of every state row, as the engine's documents say. */
function expectedStateRows(docs) {
  const rows = [];
  for (const d of docs) {
    const data = d.data && typeof d.data === 'object' && !Array.isArray(d.data) ? d.data : null;
    if (!data) continue;
    const job = [isoMillis(d['@timestamp']), d.jid, d.minion, d.fun, users.get(String(d.jid)) || ''];
    const runs = Object.entries(data).filter(([, v]) => v && typeof v === 'object' && 'result' in v)
      .sort(([, a], [, c]) => a.__run_num__ - c.__run_num__);
    const changed = (ch) => ch && typeof ch === 'object' && Object.keys(ch).some((k) => k !== '_orig_key');
    if (runs.length === 0 && Array.isArray(data.return)) {
      rows.push([...job, '', '', '', '', '', 'False', '', data.return.join('\n'), ''].join('\u0001'));
      continue;
    }
    for (const [key, r] of runs) {
      const k = keyParts(key);
      const comment = Array.isArray(r.comment) ? r.comment.join('\n') : String(r.comment ?? '');
      rows.push([...job, String(r.__run_num__ ?? ''), r.__id__ ?? k.id, r._func ?? `${k.module}.${k.fun}`,
        r.name ?? k.name, r.__sls__ ?? '', r.result === true ? 'True' : r.result === false ? 'False' : 'None',
        changed(r.changes) ? 'yes' : 'no', comment, msNumber(r.duration)].join('\u0001'));
    }
  }
  return rows;
}

test('a states export parses back to exactly the states of the engine\'s documents', async () => {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  errors.ignore(PIT_PROBE);
  await page.goto(url('/?fun=state.apply&noisy=show'));
  await jobRows(page).first().waitFor();
  const { name, bytes } = await exportCsv(page, { kind: 'states', protect: true });
  assert.match(name, /^saltscope-states-\d{4}-\d\d-\d\d_\d{4}-\d\d-\d\d\.csv$/);
  const rows = parseCsv(bytes.toString('utf8'));
  const header = rows.shift();
  assert.deepEqual(header, STATE_HEADERS, 'the default columns, in order');
  for (const r of rows) assert.equal(r.length, header.length, `row width: ${r.slice(0, 3)}`);
  // every cell of every row
  const got = rows.map((r) => r.map(unprotect).join('\u0001'));
  const want = expectedStateRows(returns.filter((d) => d.fun === 'state.apply'));
  assert.ok(want.length > 100, `${want.length} states`);
  assert.ok(got.some((g) => g.split('\u0001')[4] !== ''), 'users come from the publish data');
  assert.deepEqual([...got].sort(), [...want].sort());
  // a comment with a newline and quotes survived, and markup stayed text
  assert.ok(got.some((g) => g.includes('<script>')), 'the XSS comment is in the file as text');
  errors.assertNone();
});

test('formula protection prefixes diffs and minus signs with a quote, and off keeps them exact', async () => {
  for (const protect of [true, false]) {
    const { page, errors } = await b.newPage({ acceptDownloads: true });
  errors.ignore(PIT_PROBE);
    await page.goto(url('/?fun=state.apply&noisy=show'));
    await jobRows(page).first().waitFor();
    // the diff column is optional: choose it
    const { bytes } = await exportCsv(page, { kind: 'states', protect, bom: true, columns: ['Diff'] });
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'BOM first');
    const rows = parseCsv(bytes.subarray(3).toString('utf8'));
    const header = rows.shift();
    const diff = header.indexOf('Diff');
    assert.ok(diff >= 0, `${header}`);
    const diffs = rows.map((r) => r[diff]).filter((c) => c.includes('+++'));
    assert.ok(diffs.length > 0, 'the Salt runs changed files');
    for (const d of diffs) {
      if (protect) assert.ok(d.startsWith("'---"), `protected: ${d.slice(0, 12)}`);
      else assert.ok(d.startsWith('---') && d.includes('\n+'), `exact: ${d.slice(0, 12)}`);
      assert.equal(unprotect(d).split('\n')[0].trim(), '---');
    }
    errors.assertNone();
  }
});

test('a returns export has one row per minion per job with its outcome and state counts', async () => {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  errors.ignore(PIT_PROBE);
  // Where every return has the summary pipeline's fields (the Elasticsearch
  // run installs the index templates), the pages are doc values, not
  // documents: the counts below then come from the engine's fields.
  const pages = [];
  page.on('request', (r) => {
    const body = r.method() === 'POST' && /\/_search/.test(r.url()) ? r.postData() : null;
    if (body && body.includes('"sort"')) pages.push(JSON.parse(body));
  });
  await page.goto(url('/?noisy=show'));
  await jobRows(page).first().waitFor();
  const { bytes } = await exportCsv(page, { kind: 'returns' });
  const rows = parseCsv(bytes.toString('utf8'));
  const header = rows.shift();
  const cols = ['JID', 'Minion', 'Success', 'States succeeded', 'States changed', 'States failed'].map((h) => header.indexOf(h));
  assert.ok(cols.every((i) => i >= 0), header.join());
  const got = rows.map((r) => cols.map((i) => r[i]).join(' ')).sort();
  const want = returns.map((d) => [d.jid, d.minion, d.success, ...stateCounts(d)].join(' ')).sort();
  assert.deepEqual(got, want);
  assert.ok(want.some((line) => / \d+ [1-9]\d* \d+$/.test(line)), 'some return changed a state');
  // The first page (up to 1,000) holds them all and gives the total: no
  // search is sent after it, ahead or not.
  assert.ok(returns.length < 1000, `${returns.length} returns`);
  assert.equal(pages.length, 1, 'one page for returns that fit it');
  const docValues = pages.filter((p) => p.docvalue_fields).length;
  if (process.env.ENGINE === 'elasticsearch') {
    assert.ok(docValues > 0 && pages.every((p) => p._source === false || !p.docvalue_fields), 'pages of doc values');
  } else {
    assert.equal(docValues, 0, 'no summary fields on this engine: documents');
  }
  errors.assertNone();
});

// A return's state counts as Salt's outputter counts them: succeeded,
// changed, failed ('' for a return that is not states); the returner's
// `counts` (states_count) where it has them.
function stateCounts(d) {
  const data = d.data;
  const states = data && typeof data === 'object' && !Array.isArray(data)
    ? Object.values(data).filter((v) => v && typeof v === 'object' && !Array.isArray(v) && 'result' in v)
    : [];
  const changed = (c) => (c == null ? false
    : Array.isArray(c) ? c.length > 0
      : typeof c === 'object' ? Object.keys(c).some((k) => k !== '_orig_key')
        : typeof c === 'string' ? c.length > 0 : true);
  const counted = Number.isInteger(d.counts?.succeeded) && Number.isInteger(d.counts?.failed);
  if (!states.length) return counted ? [d.counts.succeeded, '', d.counts.failed] : ['', '', ''];
  const failed = states.filter((s) => s.result === false).length;
  return counted
    ? [d.counts.succeeded, states.filter((s) => changed(s.changes)).length, d.counts.failed]
    : [states.length - failed, states.filter((s) => changed(s.changes)).length, failed];
}

test('a second export lets the first file go: its download URL is revoked', async () => {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  errors.ignore(PIT_PROBE);
  await page.goto(url('/?fun=cmd.run&noisy=show'));
  await jobRows(page).first().waitFor();
  const panel = await openExport(page);
  await panel.getByLabel('Export', { exact: true }).selectOption('returns');
  const start = panel.getByRole('button', { name: 'Start export' });
  const link = panel.getByRole('link', { name: /^Download saltscope-/ });
  // Downloads `href` as a person's click on a link to it would; the
  // download's failure, or null when the file came.
  const download = async (href) => {
    const [d] = await Promise.all([
      page.waitForEvent('download'),
      page.evaluate((u) => {
        const a = document.createElement('a');
        a.href = u;
        a.download = 'check.csv';
        document.body.append(a);
        a.click();
        a.remove();
      }, href),
    ]);
    return d.failure();
  };
  await start.click();
  await link.waitFor();
  const first = await link.getAttribute('href');
  assert.equal(await download(first), null, 'the first file can be downloaded');
  await start.click();
  await page.waitForFunction((old) => {
    const a = [...document.querySelectorAll('a[download]')][0];
    return a && a.getAttribute('href') !== old;
  }, first);
  const second = await link.getAttribute('href');
  assert.notEqual(second, first);
  assert.notEqual(await download(first), null, 'the first URL is revoked');
  assert.equal(await download(second), null);
  errors.assertNone();
});

test('leaving the page while an export runs asks first, and staying keeps the export', async () => {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  errors.ignore(PIT_PROBE);
  const views = page.getByRole('navigation', { name: 'Views' });
  // Minions first: Back has a view to go to.
  await page.goto(url('/minions'));
  await page.getByRole('heading', { name: 'Minions' }).waitFor();
  await views.getByRole('link', { name: 'Jobs' }).click();
  await jobRows(page).first().waitFor();
  // The export's pages wait until released: it runs while the person clicks.
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route((u) => /\/_search$/.test(u.pathname), async (route) => { await held; await route.continue(); });
  const panel = await openExport(page);
  await panel.getByLabel('Export', { exact: true }).selectOption('returns');
  await panel.getByRole('button', { name: 'Start export' }).click();
  await panel.getByRole('button', { name: 'Cancel' }).waitFor();
  const asked = [];
  page.on('dialog', (d) => { asked.push(d.message()); d.dismiss(); });
  await views.getByRole('link', { name: 'Minions' }).click();
  await eventually(() => asked.length === 1, 'asked before following a link');
  assert.equal(asked[0], 'An export is running: leaving this page cancels it, and its file is lost.');
  assert.equal(new URL(page.url()).pathname, '/', 'stayed');
  // Back is asked about too; staying puts the address back.
  await page.evaluate(() => history.back());
  await eventually(() => asked.length === 2, 'asked before going back');
  await page.waitForURL((u) => u.pathname === '/');
  await panel.getByRole('button', { name: 'Cancel' }).waitFor();
  // A new filter within the view keeps the panel and its export: nothing
  // asked, and the file says it holds what the filter matched before.
  const form = page.getByRole('search', { name: 'Filter' });
  await form.getByLabel('Function', { exact: true }).fill('test.version');
  await form.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/fun=test\.version/);
  await panel.getByRole('button', { name: 'Cancel' }).waitFor();
  release();
  await panel.getByRole('link', { name: /^Download saltscope-/ }).waitFor();
  const moved = panel.getByText("The view's filter changed after this export started");
  await moved.waitFor();
  // Again, for the view as it is: the file is of this filter.
  await panel.getByRole('button', { name: 'Start export' }).click();
  await moved.waitFor({ state: 'detached' });
  await panel.getByRole('link', { name: /^Download saltscope-/ }).waitFor();
  // Done: nothing to lose, nothing asked.
  await views.getByRole('link', { name: 'Minions' }).click();
  await page.getByRole('heading', { name: 'Minions' }).waitFor();
  assert.equal(asked.length, 2);
  errors.assertNone();
});

test('formula protection is on before anyone touches the panel', async () => {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  errors.ignore(PIT_PROBE);
  await page.goto(url('/?fun=state.apply&noisy=show'));
  await jobRows(page).first().waitFor();
  const panel = await openExport(page);
  assert.equal(await panel.getByLabel(/Protect against formulas/).isChecked(), true);
  await panel.getByLabel('Export', { exact: true }).selectOption('states');
  await panel.getByRole('checkbox', { name: 'Diff', exact: true }).check();
  await panel.getByRole('button', { name: 'Start export' }).click();
  const link = panel.getByRole('link', { name: /^Download saltscope-/ });
  await link.waitFor({ timeout: 120000 });
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'saltscope-export-')), download.suggestedFilename());
  await download.saveAs(file);
  const rows = parseCsv(fs.readFileSync(file, 'utf8'));
  const diff = rows[0].indexOf('Diff');
  const diffs = rows.slice(1).map((r) => r[diff]).filter((c) => c.includes('+++'));
  assert.ok(diffs.length > 0);
  assert.ok(diffs.every((d) => d.startsWith("'---")), 'every diff protected by default');
  errors.assertNone();
});
