// The app's files are served precompressed (scripts/build.sh writes .br and
// .gz copies; nginx's brotli_static and gzip_static send them): a browser
// gets the smallest form it takes, and nothing is compressed per request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { BASE_URL, REPO } from './harness.mjs';

const DIST = path.join(REPO, 'dist');

/**
 * A request with these Accept-Encoding: status, headers, the raw body and
 * its length.
 */
function send(p, encoding, { method = 'GET', body, type } = {}) {
  return new Promise((resolve, reject) => {
    const headers = { ...(encoding ? { 'accept-encoding': encoding } : {}), ...(type ? { 'content-type': type } : {}) };
    const req = http.request(`${BASE_URL}${p}`, { method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({ status: res.statusCode, headers: res.headers, raw, length: raw.length });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
const get = (p, encoding) => send(p, encoding);

test('the wasm, the JS and the CSS come as brotli to a browser that takes it, else gzip, else plain', async () => {
  const files = fs.readdirSync(DIST).filter((f) => /\.(wasm|js|css)$/.test(f) && !/fetch-worker/.test(f));
  assert.ok(files.some((f) => f.endsWith('.wasm')), `${files}`);
  for (const f of files) {
    const size = (ext) => fs.statSync(path.join(DIST, f + ext)).size;
    const br = await get(`/${f}`, 'gzip, deflate, br');
    assert.equal(br.status, 200, f);
    assert.equal(br.headers['content-encoding'], 'br', `${f}: brotli`);
    assert.equal(br.length, size('.br'), `${f}: the precompressed file as it is`);
    const gz = await get(`/${f}`, 'gzip');
    assert.equal(gz.headers['content-encoding'], 'gzip', `${f}: gzip`);
    assert.equal(gz.length, size('.gz'));
    const plain = await get(`/${f}`);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.length, size(''));
    assert.ok(size('.br') < size('.gz'), `${f}: brotli is the smaller`);
  }
  const wasm = files.find((f) => f.endsWith('.wasm'));
  assert.equal((await get(`/${wasm}`, 'br')).headers['content-type'], 'application/wasm');
});

test('config.json is never served from a stale precompressed copy', async () => {
  assert.ok(!fs.existsSync(path.join(DIST, 'config.json.gz')) && !fs.existsSync(path.join(DIST, 'config.json.br')));
});

test("the engine's answers come as brotli to a browser that takes it, else gzip, the same JSON either way", async () => {
  // Big enough to compress: a page of returns with their outputs.
  const search = (encoding) => send('/es/_msearch', encoding, {
    method: 'POST', type: 'application/x-ndjson', body: '{"index":"salt-*"}\n{"size":50}\n',
  });
  const br = await search('gzip, deflate, br');
  assert.equal(br.status, 200);
  assert.equal(br.headers['content-encoding'], 'br', 'brotli (scripts/nginx.sh loads the filter module)');
  assert.match(br.headers.vary ?? '', /Accept-Encoding/i);
  const gz = await search('gzip');
  assert.equal(gz.headers['content-encoding'], 'gzip');
  const plain = await search();
  assert.equal(plain.headers['content-encoding'], undefined);
  const fromBr = JSON.parse(zlib.brotliDecompressSync(br.raw));
  const fromGz = JSON.parse(zlib.gunzipSync(gz.raw));
  const fromPlain = JSON.parse(plain.raw);
  const hits = (a) => a.responses[0].hits.hits.map((h) => h._id);
  assert.ok(hits(fromPlain).length > 0, 'returns found');
  assert.deepEqual(hits(fromBr), hits(fromPlain));
  assert.deepEqual(hits(fromGz), hits(fromPlain));
  assert.ok(br.length < plain.length / 3 && gz.length < plain.length / 3, `${br.length} and ${gz.length} against ${plain.length}`);
});
