// TLS on both sides of the proxy, with a CA and certificates made here with
// openssl:
//   - an https engine (scripts/tls-front.sh: nginx with `ssl` in front of the
//     test engine): without SALTSCOPE_ENGINE_CA_FILE the proxy refuses its
//     certificate (502, "certificate verify" in its error log); with it, the
//     app loads its jobs; a wrong SALTSCOPE_ENGINE_TLS_NAME is refused too;
//   - the app over https (SALTSCOPE_TLS_CERT/KEY): TLS 1.2+, HSTS on https
//     answers only, plain HTTP redirected.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { openBrowser, readManifest, SALTSCOPE_WORK, CHROMIUM_ARGS, fixtureJobPath } from './harness.mjs';
import { makeCerts, startTlsFront, startNginx, request, freePort, assertWorkersNotRoot } from './servers.mjs';

let certs;
let front;
const started = [];
before(async () => {
  certs = makeCerts(path.join(SALTSCOPE_WORK, 'tls-test-certs'));
  front = await startTlsFront({ TLS_FRONT_CERT: certs.engine.cert, TLS_FRONT_KEY: certs.engine.key });
  started.push(front);
});
after(async () => {
  for (const s of started.reverse()) await s.stop().catch(() => {});
});

test('the TLS front is an https engine signed by the test CA', async () => {
  const r = await request(front.url + '/', { ca: fs.readFileSync(certs.ca) });
  assert.equal(r.status, 200, r.body);
  assert.ok(JSON.parse(r.body).version.number);
  await assert.rejects(request(front.url + '/'), /self[- ]signed|unable to verify|certificate/i,
    'not trusted without the CA');
});

test('without the CA file the proxy refuses the engine\'s certificate: 502, "certificate verify" in its error log', async () => {
  const proxy = await startNginx({ ENGINE_URL: front.url, SALTSCOPE_ENGINE_TLS_NAME: 'engine.saltscope.test' });
  started.push(proxy);
  const r = await request(proxy.url + '/es/');
  assert.equal(r.status, 502, r.body);
  assert.equal(JSON.parse(r.body).error.type, 'saltscope_proxy_error');
  assert.match(proxy.log('error.log'), /upstream SSL certificate verify error/);
  await proxy.stop();
});

test('with the CA file but a name the certificate lacks: 502 as well', async () => {
  const proxy = await startNginx({
    ENGINE_URL: front.url, SALTSCOPE_ENGINE_CA_FILE: certs.ca, SALTSCOPE_ENGINE_TLS_NAME: 'other.saltscope.test',
  });
  started.push(proxy);
  const r = await request(proxy.url + '/es/');
  assert.equal(r.status, 502, r.body);
  assert.match(proxy.log('error.log'), /upstream SSL certificate does not match "other\.saltscope\.test"/);
  await proxy.stop();
});

test('https engine with the CA, app over https: jobs load, HSTS, TLS 1.2+, HTTP redirects', async () => {
  const tlsPort = await freePort();
  const proxy = await startNginx({
    ENGINE_URL: front.url,
    SALTSCOPE_ENGINE_CA_FILE: certs.ca,
    SALTSCOPE_ENGINE_TLS_NAME: 'engine.saltscope.test',
    SALTSCOPE_TLS_CERT: certs.app.cert,
    SALTSCOPE_TLS_KEY: certs.app.key,
    NGINX_TLS_PORT: String(tlsPort),
  });
  started.push(proxy);
  assertWorkersNotRoot(proxy.pidfile, 'https proxy');
  const ca = fs.readFileSync(certs.ca);
  const app = `https://127.0.0.1:${tlsPort}`;

  // HTTPS answers carry HSTS; the engine is reached over verified TLS.
  const home = await request(app + '/', { ca });
  assert.equal(home.status, 200);
  assert.equal(home.headers['strict-transport-security'], 'max-age=31536000');
  assert.match(home.headers['content-security-policy'], /frame-ancestors 'none'/);
  const es = await request(app + '/es/', { ca });
  assert.equal(es.status, 200, es.body);
  assert.ok(JSON.parse(es.body).cluster_uuid);
  assert.equal(es.headers['strict-transport-security'], 'max-age=31536000');

  // Plain HTTP only redirects (no HSTS there: browsers ignore it on http).
  const plain = await request(proxy.url + '/job/1?x=2');
  assert.equal(plain.status, 308);
  assert.equal(plain.headers.location, `https://127.0.0.1:${tlsPort}/job/1?x=2`);
  assert.equal(plain.headers['strict-transport-security'], undefined);

  // TLS 1.2 and 1.3 are spoken, 1.1 is not (ssl_protocols; OpenSSL 3's default
  // security level refuses it as well, on both ends).
  const proto = (min, max) => new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port: tlsPort, ca, servername: 'localhost', minVersion: min, maxVersion: max }, () => {
      const p = s.getProtocol(); s.end(); resolve(p);
    });
    s.on('error', (e) => resolve('error: ' + e.code));
  });
  assert.equal(await proto('TLSv1.2', 'TLSv1.2'), 'TLSv1.2');
  assert.equal(await proto('TLSv1.3', 'TLSv1.3'), 'TLSv1.3');
  assert.match(await proto('TLSv1', 'TLSv1.1'), /^error/);

  // The app in chromium, trusting exactly the app certificate (SPKI pin).
  const b = await openBrowser({ args: [...CHROMIUM_ARGS, `--ignore-certificate-errors-spki-list=${certs.appSpki}`] });
  try {
    const { page, errors } = await b.newPage();
    await page.goto(app + fixtureJobPath());
    await page.getByRole('link', { name: readManifest().state_apply_multi.jid, exact: true }).waitFor();
    errors.assertNone();
  } finally {
    await b.close();
  }
  await proxy.stop();
});
