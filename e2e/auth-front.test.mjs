// Credentials, against a real authenticating front (scripts/auth-front.sh:
// nginx with auth_basic and an API key check, answering like the engine's
// security layer) between Saltscope's proxy and the engine:
//   - the front itself: no credentials / wrong ones -> 401 security_exception
//     JSON; right Basic or ApiKey -> the engine's own answer;
//   - the proxy without SALTSCOPE_ENGINE_AUTH_FILE passes the browser's own
//     Authorization, and never hands the browser WWW-Authenticate (no native
//     prompt);
//   - with SALTSCOPE_ENGINE_AUTH_FILE (mode 0600) the proxy sends that
//     credential, whatever the browser sends, the app loads its jobs through
//     the front, and the secret appears in no log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { openBrowser, readManifest, SALTSCOPE_WORK, fixtureJobPath } from './harness.mjs';
import { ES_URL, startAuthFront, startNginx, request, script, assertWorkersNotRoot } from './servers.mjs';

const USER = 'reader-' + crypto.randomBytes(4).toString('hex');
const PASSWORD = crypto.randomBytes(12).toString('hex');
const basic = (u, p) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');
const dir = path.join(SALTSCOPE_WORK, 'auth-front-test');

let front;
let b;
let engineInfo;
const started = [];
before(async () => {
  fs.mkdirSync(dir, { recursive: true });
  front = await startAuthFront({ AUTH_FRONT_USER: USER, AUTH_FRONT_PASSWORD: PASSWORD });
  started.push(front);
  engineInfo = await (await fetch(`${ES_URL}/`)).json();
  b = await openBrowser();
});
after(async () => {
  await b?.close();
  for (const s of started.reverse()) await s.stop().catch(() => {});
});

function securityError(r, reason) {
  assert.equal(r.status, 401);
  const j = JSON.parse(r.body);
  assert.equal(j.status, 401);
  assert.equal(j.error.type, 'security_exception');
  assert.equal(j.error.reason, reason);
  assert.equal(j.error.root_cause[0].type, 'security_exception');
  return j;
}

test('the front: no credentials -> 401 security_exception JSON with WWW-Authenticate Basic', async () => {
  const r = await request(front.url + '/');
  securityError(r, 'missing authentication credentials for REST request [/]');
  assert.match(r.headers['www-authenticate'], /^Basic realm="security"/);
  assertWorkersNotRoot(front.pidfile, 'auth front');
});

test('the front: right Basic and right ApiKey -> the engine\'s answer', async () => {
  for (const authorization of [basic(USER, PASSWORD), `ApiKey ${front.apiKey()}`]) {
    const r = await request(front.url + '/', { headers: { authorization } });
    assert.equal(r.status, 200, `${authorization.split(' ')[0]}: ${r.body}`);
    assert.equal(JSON.parse(r.body).cluster_uuid, engineInfo.cluster_uuid);
  }
});

test('the front: wrong password, unknown user, wrong ApiKey -> 401', async () => {
  let r = await request(front.url + '/', { headers: { authorization: basic(USER, 'wrong') } });
  securityError(r, `unable to authenticate user [${USER}] for REST request [/]`);
  r = await request(front.url + '/salt-*/_search', { headers: { authorization: basic('x', PASSWORD) } });
  securityError(r, 'unable to authenticate user [x] for REST request [/salt-*/_search]');
  r = await request(front.url + '/', { headers: { authorization: `ApiKey ${front.apiKey().toLowerCase()}x` } });
  securityError(r, 'unable to authenticate with provided credentials and anonymous access is not allowed for this request');
});

test('proxy without an auth file: the browser\'s Authorization passes; no WWW-Authenticate reaches the browser', async () => {
  const proxy = await startNginx({ ENGINE_URL: front.url });
  started.push(proxy);
  let r = await request(proxy.url + '/es/');
  securityError(r, 'missing authentication credentials for REST request [/]');
  assert.equal(r.headers['www-authenticate'], undefined, 'WWW-Authenticate is not passed to the browser');
  r = await request(proxy.url + '/es/', { headers: { authorization: basic(USER, PASSWORD) } });
  assert.equal(r.status, 200, r.body);
  r = await request(proxy.url + '/es/', { headers: { authorization: `ApiKey ${front.apiKey()}` } });
  assert.equal(r.status, 200, r.body);

  // The app without credentials: the engine's reason on the page, and no
  // answer that would make chromium prompt.
  const { page, errors } = await b.newPage();
  errors.ignore(/HTTP 401/);
  const challenges = [];
  page.on('response', (resp) => { if (resp.headers()['www-authenticate']) challenges.push(resp.url()); });
  await page.goto(proxy.url + '/');
  await page.getByText(/missing authentication credentials|sign in/i).first().waitFor();
  assert.deepEqual(challenges, [], 'no response carried WWW-Authenticate');
  errors.assertNone({ consoleOk: true });
  await proxy.stop();

  // The browser's own credentials went through this proxy: its access log
  // (log_format saltscope: no $remote_user, no Authorization) holds none of them.
  const access = proxy.log('access.log');
  assert.ok(access.includes('"GET /es/ HTTP/1.1" 200'), 'the signed-in requests are logged');
  for (const s of [USER, PASSWORD, Buffer.from(`${USER}:${PASSWORD}`).toString('base64'), front.apiKey()]) {
    assert.ok(!access.includes(s), 'a credential of the browser is in the proxy access log');
  }
});

test('an auth file readable by others is refused with a clear message', async () => {
  const file = path.join(dir, 'loose');
  fs.writeFileSync(file, `${USER}:${PASSWORD}\n`, { mode: 0o644 });
  fs.chmodSync(file, 0o644);
  await assert.rejects(startNginx({ ENGINE_URL: front.url, SALTSCOPE_ENGINE_AUTH_FILE: file }), /readable by others.*chmod 600/s);
});

test('proxy with SALTSCOPE_ENGINE_AUTH_FILE: the app loads jobs through the front; the secret is in no log', async () => {
  const manifest = readManifest();
  const key = front.apiKey();
  const cases = [
    ['user:password', `${USER}:${PASSWORD}`],
    ['Basic', basic(USER, PASSWORD)],
    ['ApiKey', `ApiKey ${key}`],
  ];
  for (const [kind, value] of cases) {
    const file = path.join(dir, `engine-auth-${kind.replace(/\W/g, '')}`);
    fs.writeFileSync(file, value + '\n', { mode: 0o600 });
    fs.chmodSync(file, 0o600);
    const proxy = await startNginx({ ENGINE_URL: front.url, SALTSCOPE_ENGINE_AUTH_FILE: file });
    started.push(proxy);
    // The server's credential replaces whatever the browser sends.
    const r = await request(proxy.url + '/es/', { headers: { authorization: basic('mallory', 'nope') } });
    assert.equal(r.status, 200, `${kind}: ${r.body}`);
    assert.equal(JSON.parse(r.body).cluster_uuid, engineInfo.cluster_uuid);

    const { page, errors } = await b.newPage();
    await page.goto(proxy.url + fixtureJobPath());
    await page.getByRole('link', { name: manifest.state_apply_multi.jid, exact: true }).waitFor();
    errors.assertNone();
    await page.context().close();
    assertWorkersNotRoot(proxy.pidfile, `proxy with ${kind}`);
    await proxy.stop();

    const secrets = [PASSWORD, Buffer.from(`${USER}:${PASSWORD}`).toString('base64'), key];
    const logs = {
      'proxy access.log': proxy.log('access.log'),
      'proxy error.log': proxy.log('error.log'),
      'front access.log': front.log('access.log'),
      'front error.log': front.log('error.log'),
    };
    assert.ok(logs['proxy access.log'].includes('"POST /es/_msearch'), 'the access log has the app\'s requests');
    for (const [name, text] of Object.entries(logs)) {
      for (const s of secrets) assert.ok(!text.includes(s), `${kind}: a secret is in the ${name}`);
      // The front, like the engine, logs the user of a failed Basic login
      // (the wrong-password test above); the proxy never logs a user name.
      if (name.startsWith('proxy')) assert.ok(!text.includes(USER), `${kind}: the user name is in the ${name}`);
    }
    // The rendered conf names the file, never the secret.
    const conf = proxy.log('nginx.conf');
    for (const s of secrets) assert.ok(!conf.includes(s), 'a secret is in nginx.conf');
    const mode = fs.statSync(path.join(proxy.rundir, 'engine-auth.conf')).mode & 0o777;
    assert.equal(mode, 0o600, 'the credentials include is 0600');
  }
});

test('scripts/auth-front.sh stop stops it', async () => {
  await script('auth-front.sh', ['stop'], { AUTH_FRONT_PORT: String(front.port) });
  await assert.rejects(request(front.url + '/'));
  started.splice(started.indexOf(front), 1);
});
