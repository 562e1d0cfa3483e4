// The /es/ proxy is read-only and same-origin by default (deploy/nginx.conf.template):
// writes, admin APIs, encoded or dot-segment paths, absolute-form request
// lines and cross-site form posts are refused with a JSON 403 the app can
// show, and the engine, read straight (not through nginx), is unchanged
// afterwards. What the app itself sends still passes, and nginx's workers
// are not root.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, BASE_URL, url } from './harness.mjs';
import {
  ES_URL, rawHttp, request, engineSnapshot, assertWorkersNotRoot, baseNginxPidfile, nginxUsers, startNginx,
} from './servers.mjs';

const PORT = Number(new URL(BASE_URL).port || 80);
const REFUSED_TYPE = 'saltscope_proxy_refused';
const bulk = '{"index":{"_index":"salt-proxy-test"}}\n{"jid":"1","minion":"x"}\n';

// [what, request line, body]: sent byte for byte (rawHttp), no browser or fetch normalizing.
const ATTEMPTS = [
  ['delete the Salt indices', 'DELETE /es/salt-* HTTP/1.1'],
  ['bulk index', 'POST /es/_bulk HTTP/1.1', bulk],
  ['update by query', 'POST /es/salt-*/_update_by_query HTTP/1.1',
    '{"script":{"source":"ctx._source.minion = \'pwned\'"},"query":{"match_all":{}}}'],
  ['delete by query', 'POST /es/salt-*/_delete_by_query HTTP/1.1', '{"query":{"match_all":{}}}'],
  ['close the indices', 'POST /es/salt-*/_close HTTP/1.1'],
  ['change index settings', 'PUT /es/salt-*/_settings HTTP/1.1', '{"index":{"number_of_replicas":3}}'],
  ['cluster settings', 'PUT /es/_cluster/settings HTTP/1.1', '{"persistent":{"cluster.routing.allocation.enable":"none"}}'],
  ['snapshot repository', 'PUT /es/_snapshot/x HTTP/1.1', '{"type":"fs","settings":{"location":"/tmp/x"}}'],
  ['stored script', 'POST /es/_scripts/x HTTP/1.1', '{"script":{"lang":"painless","source":"1"}}'],
  ['who am I (Elasticsearch security)', 'GET /es/_security/_authenticate HTTP/1.1'],
  ['roles (OpenSearch security)', 'GET /es/_plugins/_security/api/roles HTTP/1.1'],
  ['%2F hides a slash', 'POST /es/salt-x%2F_delete_by_query HTTP/1.1', '{"query":{"match_all":{}}}'],
  ['%2F hides a slash (GET)', 'GET /es/salt-x%2F_search HTTP/1.1'],
  ['%2e%2e climbs out of /es/', 'GET /es/%2e%2e/ HTTP/1.1'],
  ['double slash', 'POST /es//salt-*/_delete_by_query HTTP/1.1', '{"query":{"match_all":{}}}'],
  ['dot segment into /es/', 'PUT /x/../es/_cluster/settings HTTP/1.1', '{"persistent":{}}'],
  ['absolute URI to another host', 'GET http://evil.example/ HTTP/1.1'],
  ['absolute URI to another host, under /es/', 'POST http://evil.example/es/salt-*/_delete_by_query HTTP/1.1',
    '{"query":{"match_all":{}}}'],
  ['search from another site', 'POST /es/salt-*/_search HTTP/1.1\r\nOrigin: http://evil.example\r\nSec-Fetch-Site: cross-site', '{}'],
  ['close all points in time', 'DELETE /es/_search/point_in_time/_all HTTP/1.1'],
  ['scroll', 'POST /es/_search/scroll HTTP/1.1', '{"scroll_id":"x"}'],
  ['CORS preflight', 'OPTIONS /es/_search HTTP/1.1'],
];

let before_;
let b;
before(async () => {
  before_ = await engineSnapshot();
  b = await openBrowser();
});
after(async () => { await b?.close(); });

test('writes, admin APIs and disguised paths get a JSON 403 from the proxy', async (t) => {
  for (const [what, head, body] of ATTEMPTS) {
    const r = await rawHttp(PORT, head, body);
    const line = head.split('\r\n')[0];
    assert.equal(r.status, 403, `${what}: ${line} -> ${r.status} ${r.body.slice(0, 200)}`);
    assert.match(r.headers['content-type'] || '', /^application\/json/, `${what}: JSON`);
    const j = JSON.parse(r.body);
    assert.equal(j.status, 403);
    assert.equal(j.error.type, REFUSED_TYPE, what);
    assert.ok(j.error.reason.length > 10, `${what}: a reason`);
    t.diagnostic(`${line} -> 403 ${j.error.reason}`);
  }
});

test('a cross-site form post (data: page) cannot close an index or search', async () => {
  for (const target of ['/es/salt-*/_close', '/es/salt-*/_search']) {
    const { page, errors } = await b.newPage();
    errors.ignore(/HTTP 403/);
    const html = `<!doctype html><title>elsewhere</title>
      <form method="post" enctype="text/plain" action="${url(target)}">
        <input name="x" value="1"><button>Send</button></form>`;
    await page.goto('data:text/html,' + encodeURIComponent(html));
    const [resp] = await Promise.all([
      page.waitForResponse((r) => r.url().startsWith(BASE_URL)),
      page.getByRole('button', { name: 'Send' }).click(),
    ]);
    assert.equal(resp.status(), 403, target);
    const req = resp.request();
    assert.equal(req.headers()['origin'], 'null', 'a data: page posts with Origin: null');
    const j = JSON.parse(await resp.text());
    assert.equal(j.error.type, REFUSED_TYPE);
    assert.match(j.error.reason, /cross-site/, `${target}: refused as cross-site first`);
    await page.getByText('saltscope_proxy_refused').waitFor();
  }
});

test('afterwards the engine, read straight, is unchanged: indices, doc counts, open, settings', async () => {
  const now = await engineSnapshot();
  assert.ok(before_.indices.some((i) => i.index.startsWith('salt-')), 'there are Salt indices to protect');
  assert.deepEqual(now.indices, before_.indices, 'indices, status (open) and doc counts');
  for (const i of now.indices) assert.equal(i.status, 'open', i.index);
  assert.deepEqual(now.settings, before_.settings, 'index settings');
  assert.deepEqual(now.cluster, before_.cluster, 'cluster settings');
  assert.deepEqual(now.repos, before_.repos, 'snapshot repositories');
  assert.equal(now.script_x, 404, 'no stored script x');
  assert.ok(!now.indices.some((i) => i.index === 'salt-proxy-test'), 'the bulk request created nothing');
});

test('what the app sends passes: info, field caps, _msearch, _count, metadata reads, PIT open and close', async () => {
  const base = `http://127.0.0.1:${PORT}/es`;
  const same = { Origin: `http://127.0.0.1:${PORT}`, 'Sec-Fetch-Site': 'same-origin', 'Content-Type': 'application/json' };
  const ok = async (method, p, body, headers = same) => {
    const r = await request(base + p, { method, headers, body });
    assert.ok(r.status < 300, `${method} /es${p} -> ${r.status} ${r.body.slice(0, 300)}`);
    return r.body ? JSON.parse(r.body) : null;
  };
  const info = await ok('GET', '/', undefined, {});
  assert.ok(info.version?.number, 'GET / is the engine');
  await ok('GET', '/salt-*/_field_caps?fields=jid&ignore_unavailable=true&allow_no_indices=true', undefined, {});
  await ok('HEAD', '/salt-*', undefined, {});
  await ok('GET', '/salt-*/_mapping', undefined, {});
  await ok('GET', '/salt-*/_settings', undefined, {});
  await ok('POST', '/salt-*/_count', { query: { match_all: {} } });
  await ok('GET', '/salt-*/_search?size=0', undefined, {});
  const ms = await request(base + '/_msearch', {
    method: 'POST', headers: { ...same, 'Content-Type': 'application/x-ndjson' },
    body: '{"index":"salt-*"}\n{"size":0}\n',
  });
  assert.equal(ms.status, 200, ms.body);
  if (info.version.distribution === 'opensearch') {
    const pit = await ok('POST', '/salt-*/_search/point_in_time?keep_alive=1m');
    await ok('DELETE', '/_search/point_in_time', { pit_id: [pit.pit_id] });
  } else {
    const [major, minor] = info.version.number.split('.').map(Number);
    if (major > 7 || (major === 7 && minor >= 10)) {
      const pit = await request(base + '/salt-*/_pit?keep_alive=1m', { method: 'POST', headers: same });
      // The OSS distribution has no PIT (x-pack): the engine's own answer, not the proxy's.
      if (pit.status === 200) await ok('DELETE', '/_pit', { id: JSON.parse(pit.body).id });
      else assert.notEqual(JSON.parse(pit.body).error?.type, REFUSED_TYPE, 'PIT open passes the proxy');
    }
  }
});

test('search bodies fit, bulk-sized bodies do not (413 JSON)', async () => {
  const big = JSON.stringify({ query: { match_all: {} }, _name: 'x'.repeat(3 << 20) });
  const r = await request(`http://127.0.0.1:${PORT}/es/salt-*/_search`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: big,
  });
  assert.equal(r.status, 413);
  assert.equal(JSON.parse(r.body).error.type, REFUSED_TYPE);
});

test('nginx workers never run as root', { skip: !baseNginxPidfile() && 'BASE_URL was not started by scripts/nginx.sh here' }, () => {
  const u = assertWorkersNotRoot(baseNginxPidfile(), BASE_URL);
  if (process.getuid() === 0) assert.equal(u.master, 'root', 'started as root: the master is root, the workers are not');
  assert.deepEqual(nginxUsers(baseNginxPidfile()).workers.filter((w) => w === 'root'), []);
});

test('the engine URL behind the proxy is the one given (ES_URL)', async () => {
  // Sanity: the snapshot above reads the same engine the proxy serves.
  const direct = await (await fetch(`${ES_URL}/`)).json();
  const proxied = await (await fetch(`${BASE_URL}/es/`)).json();
  assert.equal(proxied.cluster_uuid, direct.cluster_uuid);
});

test('SALTSCOPE_PROXY_READ_ONLY=0 opens the engine (on a scratch index); the URI and cross-site checks stay', async () => {
  await assert.rejects(startNginx({ SALTSCOPE_PROXY_READ_ONLY: 'no' }), /must be 1 \(default\) or 0/);
  const scratch = 'saltscope-optout-test';
  await fetch(`${ES_URL}/${scratch}`, { method: 'DELETE' });
  const made = await fetch(`${ES_URL}/${scratch}`, {
    method: 'PUT', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ settings: { number_of_shards: 1, number_of_replicas: 0 } }),
  });
  assert.equal(made.status, 200);
  const open = await startNginx({ SALTSCOPE_PROXY_READ_ONLY: '0' });
  try {
    const port = open.port;
    let r = await rawHttp(port, `POST /es/${scratch}%2F_close HTTP/1.1`);
    assert.equal(r.status, 403, 'still refused: encoded slash');
    r = await rawHttp(port, `POST /es/${scratch}/_close HTTP/1.1\r\nOrigin: http://evil.example`);
    assert.equal(r.status, 403, 'still refused: cross-site');
    r = await rawHttp(port, `POST /es/${scratch}/_close HTTP/1.1`);
    assert.equal(r.status, 200, `passes with the allowlist off: ${r.body}`);
    const cat = await (await fetch(`${ES_URL}/_cat/indices/${scratch}?format=json&h=status&expand_wildcards=all`)).json();
    assert.equal(cat[0].status, 'close', 'the engine closed it: the opt-out really opens writes');
  } finally {
    await open.stop();
    await fetch(`${ES_URL}/${scratch}`, { method: 'DELETE' });
  }
});

test('the app shows a refusal as it shows an engine error: status and reason', async () => {
  const { page, errors } = await b.newPage();
  errors.ignore(/HTTP 403/);
  // An operator pointing engine_url at an admin API: the app's first request is refused.
  await page.route('**/config.json', (route) => route.fulfill({
    contentType: 'application/json',
    body: JSON.stringify({ engine_url: '/es/_nodes' }),
  }));
  await page.goto(url('/'));
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const text = await alert.textContent();
  assert.match(text, /answered 403/);
  assert.match(text, /this proxy is read-only/);
  errors.assertNone({ consoleOk: true });
});
