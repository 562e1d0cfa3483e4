// The events view on the real Salt data: the master's bus as its
// `event_return: elasticsearch` kept it, filtered, counted by tag family,
// paged to the end, its data as a tree and as CSV.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { openBrowser, url, readManifest } from './harness.mjs';

const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const EVENTS = 'salt-master-event-cache*';
let b;
let manifest;

before(async () => {
  manifest = readManifest();
  b = await openBrowser();
});
after(async () => { await b?.close(); });

async function engine(body) {
  const res = await fetch(`${ES_URL}/${EVENTS}/_search?ignore_unavailable=true&allow_no_indices=true`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json();
}
const count = async (query) => (await engine({ size: 0, track_total_hits: true, query })).hits.total.value;
const TAG = 'tag.keyword';

const table = (page) => page.getByRole('table', { name: 'Events' });
/** The list once the answer to the current URL is drawn (not the one before). */
const settled = (page) => page.getByRole('region', { name: 'Event list' }).and(page.locator('[aria-busy=false]')).waitFor();
const rows = (page) => table(page).getByRole('row').filter({ has: page.getByRole('cell') });
/** Each shown row as {tag, minion, job}. */
async function shown(page) {
  return rows(page).evaluateAll((trs) => trs.map((tr) => {
    const td = tr.querySelectorAll('td');
    return { tag: td[1].querySelector('code').textContent, minion: td[2].textContent, job: td[3].textContent, failed: !!td[1].querySelector('.badge') };
  }));
}

test('the bus newest first, with what floods it counted by tag family', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/events?time=all'));
  await table(page).waitFor();
  const total = await count({ exists: { field: 'tag' } });
  assert.ok(total > 0, 'the real master wrote events');
  await page.getByText(`${total} events match`).waitFor();
  const families = page.getByRole('navigation', { name: 'Tag families' });
  const published = await count({ wildcard: { [TAG]: { value: 'salt/job/*/new' } } });
  await families.getByRole('listitem').filter({ hasText: 'job published' }).getByText(String(published), { exact: true }).waitFor();
  // Newest first: the times never go up down the list.
  const times = await table(page).locator('td.when').allTextContents();
  assert.deepEqual(times, [...times].sort().reverse());
  // A family is a filter, kept in the URL.
  await families.getByRole('link', { name: /job published/ }).click();
  await page.waitForURL(/tag=salt%2Fjob%2F\*%2Fnew/);
  await settled(page);
  await page.getByText(`${published} events match`).waitFor();
  for (const r of await shown(page)) assert.match(r.tag, /^salt\/job\/\d{20}\/new$/);
  assert.equal(await families.getByRole('link', { name: /job published/ }).getAttribute('aria-current'), 'true');
  // The other families stay counted, and "All tags" counts every tag.
  const auths = await count({ term: { [TAG]: 'salt/auth' } });
  assert.ok(auths > 0, 'minions authenticated');
  await families.getByRole('listitem').filter({ has: page.getByRole('link', { name: /All tags/ }) }).getByText(String(total), { exact: true }).waitFor();
  await families.getByRole('listitem').filter({ hasText: 'salt/auth' }).getByText(String(auths), { exact: true }).waitFor();
  await families.getByRole('link', { name: /All tags/ }).click();
  await page.getByText(`${total} events match`).waitFor();
  errors.assertNone();
});

test('filters by minion, by jid and by failed returns, all in the URL', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/events?time=all'));
  const bar = page.getByRole('search', { name: 'Filter' });
  await bar.getByLabel('Minion').fill('db-02');
  await bar.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/minion=db-02/);
  await settled(page);
  const byMinion = await shown(page);
  assert.ok(byMinion.length > 0, 'db-02 authenticated, started and answered jobs');
  for (const r of byMinion) assert.equal(r.minion, 'db-02', r.tag);

  const jid = manifest.state_apply_all.jid;
  await page.goto(url(`/events?time=all&jid=${jid}`));
  await settled(page);
  const ofJob = await shown(page);
  const expected = await count({ prefix: { [TAG]: `salt/job/${jid}/` } });
  assert.equal(ofJob.length, expected);
  assert.ok(ofJob.some((r) => r.tag === `salt/job/${jid}/new`), 'its publish event');
  for (const r of ofJob) assert.equal(r.job, jid);
  // The beginning of a jid, as the job list takes it: every job it begins.
  const start = jid.slice(0, 12);
  await page.goto(url(`/events?time=all&jid=${start}`));
  await settled(page);
  const begun = await count({ bool: { should: [
    { prefix: { 'data.jid.keyword': start } },
    { prefix: { [TAG]: `salt/job/${start}` } },
    { prefix: { [TAG]: `salt/run/${start}` } },
  ], minimum_should_match: 1 } });
  assert.ok(begun >= expected, `${begun} events of jobs begun ${start}`);
  await page.getByText(`${begun} events match`).waitFor();
  await page.goto(url(`/events?time=all&jid=${jid}`));
  await settled(page);
  await rows(page).filter({ hasText: `salt/job/${jid}/new` }).getByRole('link', { name: `Job ${jid}` }).click();
  await page.getByRole('heading', { name: `Job ${jid}` }).waitFor();

  // Failed returns: success false or a retcode other than 0 in a ret event.
  const failed = await count({ bool: { filter: [{ wildcard: { [TAG]: { value: 'salt/job/*/ret/*' } } }], should: [
    { term: { 'data.success': false } },
    { bool: { filter: [{ exists: { field: 'data.retcode' } }], must_not: [{ term: { 'data.retcode': 0 } }] } },
  ], minimum_should_match: 1 } });
  await page.goto(url('/events?time=all'));
  await page.getByRole('search', { name: 'Filter' }).getByLabel('Failed returns only').check();
  await page.waitForURL(/failed=1/);
  await settled(page);
  if (failed === 0) {
    await page.getByText('No events match.').waitFor();
  } else {
    await page.getByText(`${failed} events match`).waitFor();
    for (const r of await shown(page)) {
      assert.match(r.tag, /^salt\/job\/\d{20}\/ret\//);
      assert.ok(r.failed, `${r.tag} is marked failed`);
    }
  }
  errors.assertNone();
});

test('a runner\'s events link to its job page, as the audit trail does', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/events?time=all&tag=salt/run/*/new'));
  const link = rows(page).first().getByRole('link', { name: /^Job \d{20} \(runner\)$/ });
  await link.waitFor();
  const jid = (await link.textContent()).slice(0, 20);
  await link.click();
  await page.getByRole('heading', { name: `Job ${jid}` }).waitFor();
  errors.assertNone();
});

test('a link whose jid, failed flag or cursor does not read says so and shows the newest events', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/events?time=all&jid=abc&failed=yes&after=garbage'));
  for (const line of [
    'Ignored in the link: failed=yes: not 1 (failed returns only) or 0; every event is shown',
    "Ignored in the link: jid=abc: no Salt job id (20 digits, or their beginning); every job's events are shown",
    'Ignored in the link: after=garbage: no event to page from; the newest events are shown',
  ]) await page.getByText(line, { exact: true }).waitFor();
  await settled(page);
  assert.ok((await shown(page)).length > 0, 'the newest events, not "No events match"');
  errors.assertNone();
});

test('the minion filter finds every event whose Minion column names that minion', async () => {
  // minion/refresh/<id> and resource/refresh/<id> carry the minion in the
  // tag only (no data.id): the column reads it there, so must the filter.
  const refreshes = await count({ terms: { [TAG]: ['minion/refresh/db-02', 'resource/refresh/db-02'] } });
  assert.ok(refreshes > 0, 'db-02 refreshed its minion data');
  const { page, errors } = await b.newPage();
  await page.goto(url('/events?time=all&tag=minion/refresh/*,resource/refresh/*&minion=db-02'));
  await settled(page);
  await page.getByText(`${refreshes} events match`).waitFor();
  for (const r of await shown(page)) assert.equal(r.minion, 'db-02', r.tag);
  errors.assertNone();
});

test('an event\'s data opens as a tree of text', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/events?time=all&tag=salt/auth'));
  const row = rows(page).first();
  await row.waitFor();
  await row.getByText('data', { exact: true }).click();
  // salt/auth carries the minion's public key: shown as text.
  await row.getByText('act', { exact: true }).waitFor();
  await row.getByText(/BEGIN PUBLIC KEY/).waitFor();
  errors.assertNone();
});

test('Older events pages to the very first event, each event once', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url('/events?time=all'));
  await table(page).waitFor();
  const all = await engine({ size: 10000, _source: ['tag'], query: { exists: { field: 'tag' } } });
  const want = all.hits.hits.map((h) => h._source.tag).sort();
  const got = [];
  for (let n = 0; n < 200; n++) {
    await rows(page).first().waitFor();
    got.push(...(await shown(page)).map((r) => r.tag));
    const older = page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Older events' });
    if (!(await older.count())) break;
    const before = page.url();
    await older.click();
    await page.waitForURL((u) => u.toString() !== before);
    await settled(page);
  }
  assert.deepEqual(got.sort(), want, 'every event once over all pages');
  errors.assertNone();
});

test('a page past the engine\'s result window says where to start again', async () => {
  const { page, errors } = await b.newPage();
  // No link writes such a cursor: an address edited by hand.
  await page.goto(url('/events?time=all&tag=salt/auth&after=1796593907693:999999:salt/auth'));
  const alert = page.getByRole('alert');
  await alert.getByText(/Result window is too large/).waitFor();
  await alert.getByText(/Start from the first page, or narrow the time range or the filter/).waitFor();
  errors.assertNone();
});

test('the filtered events export as CSV, every one', async () => {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  await page.goto(url('/events?time=all&tag=salt/job/*/ret/*'));
  await table(page).waitFor();
  const total = await count({ wildcard: { [TAG]: { value: 'salt/job/*/ret/*' } } });
  await page.getByText('Export CSV', { exact: true }).click();
  const panel = page.getByRole('group', { name: 'Export CSV' });
  await panel.getByRole('button', { name: 'Start export' }).click();
  const link = panel.getByRole('link', { name: /^Download saltscope-events-/ });
  await link.waitFor({ timeout: 60000 });
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const file = await download.path();
  const text = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  const lines = text.trimEnd().split('\r\n');
  assert.match(lines[0], /^Time \(UTC\),Tag,Minion,JID,Failed return,Data \(JSON\)$/);
  const records = lines.slice(1).filter((l) => /^\d{4}-\d\d-\d\dT/.test(l));
  assert.equal(records.length, total);
  for (const r of records) assert.match(r, /,salt\/job\/\d{20}\/ret\/[^,]+,/);
  errors.assertNone();
});

test('without event_return the view says what to turn on', async () => {
  const { page, errors } = await b.newPage();
  await page.route('**/config.json', (route) => route.fulfill({
    contentType: 'application/json',
    body: JSON.stringify({ engine_url: '/es', event_index_pattern: 'saltscope-no-events-*' }),
  }));
  await page.goto(url('/events'));
  await page.getByText(/turn on `event_return: elasticsearch` on the master/).waitFor();
  await page.getByText('No events match.').waitFor();
  errors.assertNone();
});
