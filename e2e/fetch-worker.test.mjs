// The export worker's two readers (js/fetch-worker.js), on the answers the
// app's own readers are tested on (core/src/export/page.rs): the total off
// an answer's first bytes, which decides whether a page is sent ahead, and
// the last hit's cursor off its end. Run in a bare context, as the worker's
// script runs, without a browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { REPO } from './harness.mjs';

const worker = vm.createContext({ TextDecoder, Uint8Array, Math, Number, String, Map, onmessage: null });
vm.runInContext(fs.readFileSync(path.join(REPO, 'js/fetch-worker.js'), 'utf8'), worker);
const bytes = (text) => new TextEncoder().encode(text).buffer;

test('the total is read off the head as the engine writes it, and only there', () => {
  const engine = '{"pit_id":"p1","took":2,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},'
    + '"hits":{"total":{"value":3,"relation":"eq"},"max_score":null,"hits":[{"_source":{"total":{"value":99}}}]}}';
  assert.equal(worker.headTotal(bytes(engine)), 3);
  assert.equal(worker.headTotal(bytes('{"hits":{"hits":[],"total":{"relation":"eq","value":2}}}')), 2, 'keys in any order');
  assert.equal(worker.headTotal(bytes('{"_shards":{"total":1},"hits":{"max_score":null,"hits":[]}}')), null, 'a later page');
  assert.equal(worker.headTotal(bytes(`${' '.repeat(65536)}"total":{"value":3}`)), null, 'past the head');
  assert.equal(worker.headTotal(bytes('"total":{"relation":"eq"},"x":{"total":{"value":5}}')), null, 'the first total only');
  // A page is sent ahead unless the total says no hit is left after it.
  assert.equal(worker.hitsLeft(bytes(engine), 2), true);
  assert.equal(worker.hitsLeft(bytes(engine), 3), false);
  assert.equal(worker.hitsLeft(bytes('{"hits":{"hits":[]}}'), 1000), true, 'no total: send');
});

test('the cursor is the last hit\'s sort, whatever the sources hold', () => {
  const answer = '{"hits":{"hits":[{"_source":{"comment":"\\"sort\\":[1]","sort":[9,9]},"sort":["i",1,"a\\"]b"]},'
    + '{"_source":{"data":{"sort":[7]}},"sort":["i",2,"c"]}]}}';
  assert.equal(worker.lastSort(bytes(answer)), '["i",2,"c"]');
  assert.equal(worker.lastSort(bytes('{"hits":{"hits":[]}}')), null);
});
