// Response headers, and a CSP that does not depend on the build: index.html
// has no inline script (js/loader.js starts the app), so the policy is a
// constant in deploy/nginx.conf.template. Proven by starting nginx on an
// empty directory, building into it with scripts/build.sh while nginx runs
// (no restart, no reload), and loading the app: no CSP violation.
//   E2E_SKIP_REBUILD=1 skips the rebuild test (a release build, ~1-2 min).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openBrowser, url, BASE_URL, SALTSCOPE_WORK, readManifest, fixtureJobPath } from './harness.mjs';
import { startNginx, script, request } from './servers.mjs';

// The exact policy for the default config.json (engine_url "/es").
export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; "
  + "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; "
  + "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

function assertSecurityHeaders(h, what) {
  assert.equal(h['content-security-policy'], CSP, `${what}: CSP`);
  const scriptSrc = /script-src ([^;]*)/.exec(h['content-security-policy'])[1];
  assert.doesNotMatch(scriptSrc, /'unsafe-inline'|'unsafe-eval'|'sha256-|'nonce-/, `${what}: script-src`);
  assert.equal(h['x-content-type-options'], 'nosniff', `${what}: nosniff`);
  assert.equal(h['referrer-policy'], 'no-referrer', `${what}: Referrer-Policy`);
  assert.equal(h['x-frame-options'], 'DENY', `${what}: X-Frame-Options`);
  assert.equal(h['strict-transport-security'], undefined, `${what}: no HSTS over plain http`);
}

const started = [];
after(async () => { for (const s of started) await s.stop().catch(() => {}); });

test('every kind of answer carries the exact CSP, nosniff, Referrer-Policy, frame-ancestors none', async () => {
  const home = await request(url('/'));
  assert.equal(home.status, 200);
  assertSecurityHeaders(home.headers, 'index.html');
  assert.equal(home.headers['cache-control'], 'no-cache');
  assertSecurityHeaders((await request(url('/job/1'))).headers, 'SPA route');
  assertSecurityHeaders((await request(url('/config.json'))).headers, 'config.json');
  assertSecurityHeaders((await request(url('/es/'))).headers, 'engine answer');
  const refused = await request(url('/es/_cluster/settings'), { method: 'PUT', body: '{}' });
  assert.equal(refused.status, 403);
  assertSecurityHeaders(refused.headers, 'proxy refusal');
});

/** A tag's attributes, quoted or not (release builds minify index.html). */
function attributes(source) {
  const attrs = {};
  for (const [, name, , dq, sq, bare] of source.matchAll(/([^\s"'=<>\/]+)(\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
    attrs[name.toLowerCase()] = dq ?? sq ?? bare ?? '';
  }
  return attrs;
}
/** Each `<tag ...>` of the page, by its attributes. */
const tags = (html, tag) => [...html.matchAll(new RegExp(`<${tag}\\b([^>]*)>`, 'gi'))].map((m) => attributes(m[1]));

test('index.html has no inline script; its scripts are files with integrity', async () => {
  const html = (await request(url('/'))).body;
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  assert.ok(scripts.length >= 1, 'the loader script');
  for (const [, source, body] of scripts) {
    const attrs = attributes(source);
    assert.match(attrs.src ?? '', /^\/loader-[0-9a-f]+\.js$/, `a loader file: <script${source}>`);
    assert.match(attrs.integrity ?? '', /^sha384-/, 'with SRI');
    assert.equal(attrs.type, 'module');
    assert.equal(body.trim(), '', 'no inline code');
  }
  const app = tags(html, 'meta').filter((m) => m.name === 'saltscope-app');
  assert.equal(app.length, 1, 'one <meta name="saltscope-app">');
  assert.match(app[0]['data-js'], /^\/saltscope-[0-9a-f]+\.js$/);
  assert.match(app[0]['data-wasm'], /^\/saltscope-[0-9a-f]+_bg\.wasm$/);
  const preload = tags(html, 'link').filter((l) => l.rel === 'modulepreload');
  assert.equal(preload.length, 1, 'the app\'s JS preloaded');
  assert.equal(preload[0].href, app[0]['data-js']);
  assert.match(preload[0].integrity ?? '', /^sha384-/);
  const loader = attributes(scripts[0][1]).src;
  const l = await request(url(loader));
  assert.equal(l.status, 200);
  assert.match(l.headers['content-type'], /javascript/);
  assert.match(l.headers['cache-control'], /immutable/);
});

test('a rebuild under a running nginx: the app loads, no CSP violation, no restart', {
  skip: process.env.E2E_SKIP_REBUILD === '1' && 'E2E_SKIP_REBUILD=1',
  timeout: 15 * 60 * 1000,
}, async (t) => {
  const dist = path.join(SALTSCOPE_WORK, 'rebuild-dist');
  fs.rmSync(dist, { recursive: true, force: true });
  fs.mkdirSync(dist, { recursive: true });
  // nginx first, on an empty directory: the config cannot know the build.
  const proxy = await startNginx({ DIST: dist });
  started.push(proxy);
  const pid = fs.readFileSync(proxy.pidfile, 'utf8').trim();
  const before = await request(proxy.url + '/');
  assert.equal(before.status, 404, 'nothing built yet');
  assert.equal(before.headers['content-security-policy'], CSP);

  const t0 = Date.now();
  await script('build.sh', [], { DIST: dist });
  t.diagnostic(`scripts/build.sh into ${dist}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  assert.equal(fs.readFileSync(proxy.pidfile, 'utf8').trim(), pid, 'the same nginx, not restarted');
  const b = await openBrowser();
  try {
    const { page, errors } = await b.newPage();
    const violations = [];
    await page.exposeFunction('__cspViolation', (v) => violations.push(v));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => window.__cspViolation(`${e.violatedDirective} ${e.blockedURI}`));
    });
    const resp = await page.goto(proxy.url + fixtureJobPath());
    assert.equal(resp.headers()['content-security-policy'], CSP);
    await page.getByRole('banner').getByRole('link', { name: 'Saltscope' }).waitFor();
    await page.getByRole('heading', { name: 'Jobs', level: 1 }).waitFor();
    await page.getByRole('link', { name: readManifest().state_apply_multi.jid, exact: true }).waitFor();
    assert.deepEqual(violations, [], 'no CSP violation');
    errors.assertNone();
  } finally {
    await b.close();
  }
  await proxy.stop();
  fs.rmSync(dist, { recursive: true, force: true });
});

test('an app that cannot start says so instead of a blank page', async () => {
  const b = await openBrowser();
  try {
    // The wasm not served (a build copied without it).
    const { page, errors } = await b.newPage();
    errors.ignore(/404|could not start|Failed to fetch|WebAssembly/i);
    await page.route('**/*_bg.wasm', (route) => route.fulfill({ status: 404, body: 'not found' }));
    await page.goto(url('/'));
    const alert = page.getByRole('alert');
    await alert.getByText(/^Saltscope could not start: .*Reload the page/).waitFor();

    // A browser without WebAssembly SIMD (the wasm is built with simd128):
    // its compile fails, and the loader's own probe says why.
    const old = await b.newPage();
    old.errors.ignore(/could not start|SIMD|CompileError/i);
    await old.page.addInitScript(() => {
      const refuse = () => Promise.reject(new WebAssembly.CompileError('invalid opcode 0xfd'));
      WebAssembly.instantiateStreaming = refuse;
      WebAssembly.instantiate = refuse;
      WebAssembly.validate = () => false;
    });
    await old.page.goto(url('/'));
    await old.page.getByRole('alert').getByText(/lacks WebAssembly SIMD.*Safari 16\.4/).waitFor();
    assert.equal(await old.page.getByRole('heading', { name: 'Jobs' }).count(), 0);
  } finally {
    await b.close();
  }
});

test('BASE_URL is served by the same constant policy', async () => {
  const r = await request(BASE_URL + '/');
  assert.equal(r.headers['content-security-policy'], CSP);
});

test('a path nginx cannot take (a %00) is the app with its 400, not nginx\'s bare page', async () => {
  const raw = await request(`${BASE_URL}/minion/%00`);
  assert.equal(raw.status, 400);
  assert.equal(raw.headers['content-security-policy'], CSP);
  const b = await openBrowser();
  try {
    const { page, errors } = await b.newPage();
    errors.ignore(/400/);
    const r = await page.goto(url('/minion/%00'));
    assert.equal(r.status(), 400);
    await page.getByRole('banner').getByRole('link', { name: 'Saltscope' }).waitFor();
    await page.getByRole('heading', { name: /^Minion/, level: 1 }).waitFor();
    errors.assertNone();
  } finally {
    await b.close();
  }
});
