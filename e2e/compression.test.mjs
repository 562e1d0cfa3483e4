// The app's files are served precompressed (scripts/build.sh writes .br and
// .gz copies; nginx's brotli_static and gzip_static send them): a browser
// gets the smallest form it takes, and nothing is compressed per request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { BASE_URL, REPO } from './harness.mjs';

const DIST = path.join(REPO, 'dist');

/** GET with these Accept-Encoding: status, headers and the raw body's length. */
function get(p, encoding) {
  return new Promise((resolve, reject) => {
    http.get(`${BASE_URL}${p}`, { headers: encoding ? { 'accept-encoding': encoding } : {} }, (res) => {
      let n = 0;
      res.on('data', (c) => { n += c.length; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, length: n }));
    }).on('error', reject);
  });
}

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
