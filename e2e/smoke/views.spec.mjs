// A smoke of every view, for a further engine version (OpenSearch 2.19 in
// the test command), on the smaller Salt data of SALT_DATA_SCOPE=smoke:
// each view opens, shows what real Salt wrote, and the browser reports no
// error. The full suites run on the other engines.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, readManifest, jobRows } from '../harness.mjs';

let b;
let manifest;
before(async () => {
  manifest = readManifest();
  b = await openBrowser({});
});
after(async () => { await b?.close(); });

test('the job list, a job page, minions, functions, audit and an export work on this engine', async () => {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  errors.ignore(/HTTP 400 POST \S+\/_pit\?/);
  const { jid } = manifest.state_apply_multi;

  await page.goto(url('/?noisy=show'));
  await page.getByRole('table', { name: 'Jobs' }).getByRole('link', { name: jid, exact: true }).waitFor();

  await page.goto(url(`/job/${jid}`));
  await page.getByRole('region', { name: 'db-02', exact: true }).getByRole('table', { name: 'States' }).waitFor();

  await page.goto(url('/minions?noisy=show'));
  await page.getByRole('table', { name: 'Minions' }).getByRole('link', { name: 'db-02', exact: true }).waitFor();

  await page.goto(url('/functions?noisy=show'));
  await page.getByRole('table', { name: 'Functions' }).getByRole('link', { name: 'state.apply', exact: true }).waitFor();

  await page.goto(url('/audit'));
  const rm = manifest.risky_rm.jid;
  const line = page.getByRole('table', { name: 'Audit trail' }).getByRole('row').filter({ has: page.getByRole('link', { name: rm }) });
  await line.waitFor();
  assert.match(await line.textContent(), /recursive forced delete/);

  await page.goto(url('/?noisy=show'));
  await jobRows(page).first().waitFor();
  await page.getByText('Export CSV', { exact: true }).click();
  const panel = page.getByRole('group', { name: 'Export CSV' });
  await panel.getByLabel('Export', { exact: true }).selectOption('returns');
  await panel.getByRole('button', { name: 'Start export' }).click();
  await panel.getByRole('link', { name: /^Download saltscope-returns-/ }).waitFor();
  assert.match(await panel.getByText(/^\d+ rows\./).textContent(), /^[1-9]\d* rows/);
  errors.assertNone();
});
