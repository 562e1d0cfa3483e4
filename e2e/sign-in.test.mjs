// Per-person sign-in, through a real authenticating front (scripts/auth-front.sh:
// nginx with auth_basic and an API-key check, answering 401 as Elasticsearch
// security does) between the project's proxy and the engine: no credentials
// -> the app's own sign-in form (never a blank page or the browser's
// prompt); a wrong password -> the engine's refusal with its reason; the
// right password or API key -> jobs; an export works signed in; Sign out
// forgets. And the secret is nowhere: not in dist/, the nginx logs,
// localStorage, the URL history or the exported CSV.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openBrowser, REPO, jobRows } from './harness.mjs';
import { startAuthFront, startNginx } from './servers.mjs';

const USER = 'auditor';
const PASSWORD = `pw-${process.pid}-correct-horse`;
let front;
let proxy;
let b;
before(async () => {
  front = await startAuthFront({ AUTH_FRONT_USER: USER, AUTH_FRONT_PASSWORD: PASSWORD });
  proxy = await startNginx({ ENGINE_URL: front.url });
  b = await openBrowser();
});
after(async () => {
  await b?.close();
  await proxy?.stop().catch(() => {});
  await front?.stop().catch(() => {});
});

const form = (page) => page.getByRole('form', { name: 'Sign in to the engine' });

async function signIn(page, { user, password, apiKey, remember = false }) {
  const f = form(page);
  await f.waitFor();
  if (apiKey) {
    await f.getByLabel('an API key').check();
    await f.getByLabel('API key', { exact: true }).fill(apiKey);
  } else {
    await f.getByLabel('User', { exact: true }).fill(user);
    await f.getByLabel('Password', { exact: true }).fill(password);
  }
  if (remember) await f.getByLabel('Remember for this tab').check();
  await f.getByRole('button', { name: 'Sign in' }).click();
}

test('no credentials: the sign-in form; a wrong password: the refusal; the right one: the jobs', async () => {
  const { page, errors } = await b.newPage();
  errors.ignore(/HTTP 401/);
  await page.goto(`${proxy.url}/?noisy=show`);
  await form(page).waitFor();
  assert.match(await form(page).textContent(), /missing authentication credentials/);
  await signIn(page, { user: USER, password: 'wrong' });
  await form(page).getByText(/did not accept these credentials: unable to authenticate user \[auditor\]/).waitFor();
  await signIn(page, { user: USER, password: PASSWORD });
  await jobRows(page).first().waitFor();
  await page.getByRole('banner').getByText(`Signed in: ${USER}`).waitFor();
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await form(page).waitFor();
  errors.assertNone({ consoleOk: true });
});

test('an API key signs in too, and an export works signed in (its worker sends the key)', async () => {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  errors.ignore(/HTTP 401/);
  errors.ignore(/HTTP 400 POST \S+\/_pit\?/);
  await page.goto(`${proxy.url}/?noisy=show`);
  await signIn(page, { apiKey: front.apiKey() });
  await jobRows(page).first().waitFor();
  await page.getByText('Export CSV', { exact: true }).click();
  const panel = page.getByRole('group', { name: 'Export CSV' });
  await panel.getByLabel('Export', { exact: true }).selectOption('returns');
  await panel.getByRole('button', { name: 'Start export' }).click();
  const link = panel.getByRole('link', { name: /^Download saltscope-returns-/ });
  await link.waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'saltscope-signed-')), download.suggestedFilename());
  await download.saveAs(file);
  const csv = fs.readFileSync(file, 'utf8');
  assert.ok(csv.split('\r\n').length > 10, 'rows came');
  assert.ok(!csv.includes(front.apiKey()), 'the key is not in the CSV');
  errors.assertNone({ consoleOk: true });
});

test('the password is nowhere: dist/, logs, localStorage, URL history, CSV; "remember" uses the tab\'s session only', async () => {
  const { page, context, errors } = await b.newPage({ acceptDownloads: true });
  errors.ignore(/HTTP 401/);
  errors.ignore(/HTTP 400 POST \S+\/_pit\?/);
  await page.goto(`${proxy.url}/?noisy=show`);
  await signIn(page, { user: USER, password: PASSWORD, remember: true });
  await jobRows(page).first().waitFor();
  // Another view and back: the URL history.
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Minions' }).click();
  await page.goBack();
  await jobRows(page).first().waitFor();
  const base64 = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
  const secrets = [PASSWORD, base64];
  const found = (text, where) => {
    for (const s of secrets) assert.ok(!text.includes(s), `the secret is in ${where}`);
  };
  found(await page.evaluate(() => JSON.stringify({ ...localStorage })), 'localStorage');
  found(await page.evaluate(() => location.href + document.referrer), 'the URL');
  found(page.url(), 'the URL');
  const history = await page.evaluate(() => history.length);
  assert.ok(history >= 2);
  // sessionStorage holds it (remember for this tab), and a new tab signs in again.
  assert.ok((await page.evaluate(() => JSON.stringify({ ...sessionStorage }))).includes(PASSWORD));
  const other = await context.newPage();
  await other.goto(`${proxy.url}/`);
  await form(other).waitFor();
  await other.close();
  // dist/ and every log of the proxy and of the front.
  const walk = (dir) => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (
    e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
  for (const f of walk(path.join(REPO, 'dist'))) found(fs.readFileSync(f, 'latin1'), f);
  for (const dir of [proxy.rundir, front.rundir]) {
    for (const f of walk(dir).filter((f) => f.endsWith('.log'))) found(fs.readFileSync(f, 'latin1'), f);
  }
  // Sign out forgets it, in the tab's session too.
  await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
  await form(page).waitFor();
  assert.ok(!(await page.evaluate(() => JSON.stringify({ ...sessionStorage }))).includes(PASSWORD));
  errors.assertNone({ consoleOk: true });
});

test('config.json with user:password in engine_url is refused at start, the secret not repeated', async () => {
  const { page, errors } = await b.newPage();
  await page.route('**/config.json', (route) => route.fulfill({
    contentType: 'application/json',
    body: JSON.stringify({ engine_url: `http://${USER}:${PASSWORD}@127.0.0.1:${front.port}` }),
  }));
  await page.goto(`${proxy.url}/`);
  const alert = page.getByRole('alert');
  await alert.getByText('config.json is not valid').waitFor();
  const text = await alert.textContent();
  assert.match(text, /must not hold credentials/);
  assert.ok(!text.includes(PASSWORD), 'the password is not shown');
  errors.assertNone({ consoleOk: true });
});
