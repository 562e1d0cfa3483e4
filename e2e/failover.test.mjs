// Several engines: ENGINE_URL is a list, the proxy fails over. The first
// engine is a port nobody listens on; the app still loads its jobs, and a
// search POST (non-idempotent to nginx) is retried on the live engine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, readManifest, fixtureJobPath } from './harness.mjs';
import { ES_URL, freePort, startNginx, request, assertWorkersNotRoot, logLine } from './servers.mjs';

let proxy;
let dead;
let b;
before(async () => {
  dead = await freePort();   // free: nothing listens there
  proxy = await startNginx({ ENGINE_URL: `http://127.0.0.1:${dead}, ${ES_URL}` });
  b = await openBrowser();
});
after(async () => {
  await b?.close();
  await proxy?.stop();
});

test('the rendered upstream has every engine, in order', () => {
  const conf = proxy.log('nginx.conf');
  const live = new URL(ES_URL).host;
  assert.match(conf, new RegExp(`upstream saltscope_engine \\{\\s*server 127\\.0\\.0\\.1:${dead} [^;]*;\\s*server ${live.replace(/\./g, '\\.')} [^;]*;`));
  assert.match(conf, /proxy_next_upstream error timeout http_502 http_503 http_504 non_idempotent;/);
  assertWorkersNotRoot(proxy.pidfile, 'failover proxy');
});

test('a search POST goes to the live engine after the dead one refuses', async () => {
  const r = await request(`${proxy.url}/es/_msearch`, {
    method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: '{"index":"salt-*"}\n{"size":0}\n',
  });
  assert.equal(r.status, 200, r.body);
  assert.ok(JSON.parse(r.body).responses[0].hits, 'an _msearch answer');
  const live = new URL(ES_URL).host;
  const line = await logLine(proxy.log, 'access.log', (l) => l.includes('"POST /es/_msearch'));
  assert.ok(line, 'the POST is logged');
  assert.match(line, new RegExp(`upstream=127\\.0\\.0\\.1:${dead}, ${live.replace(/\./g, '\\.')} upstream_status=502, 200`),
    `tried the dead engine, then the live one: ${line}`);
  assert.match(proxy.log('error.log'), new RegExp(`connect\\(\\) failed \\(111: Connection refused\\) while connecting to upstream.*127\\.0\\.0\\.1:${dead}`));
});

test('the app loads its jobs with the first engine down', async () => {
  const { page, errors } = await b.newPage();
  await page.goto(proxy.url + fixtureJobPath());
  await page.getByRole('link', { name: readManifest().state_apply_multi.jid, exact: true }).waitFor();
  await page.getByRole('heading', { name: 'Jobs', level: 1 }).waitFor();
  errors.assertNone();
});
