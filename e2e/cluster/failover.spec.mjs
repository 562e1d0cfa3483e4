// Several engines, on a real three-node OpenSearch cluster (ENGINE_NODES=3,
// one JVM per node): with the app open one node goes away, and the job
// list, a job page and a states export already under way keep working —
// the export's point in time is lost with the node and taken over by a new
// one, nothing lost and nothing written twice. And with a dead port first
// in config.json's engine_url list the app starts from the live node.
//
// The spec starts and stops its own cluster (ports CLUSTER_PORT..+2) and
// nginx, and loads generated returns (scripts/generate.sh) with one replica
// each, as a production cluster keeps them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openBrowser, useIndexPrefix, jobRows, eventually, REPO } from '../harness.mjs';
import { script, freePort } from '../servers.mjs';

const PORT = Number(process.env.CLUSTER_PORT || 9270);
const NODES = [0, 1, 2].map((i) => `http://127.0.0.1:${PORT + i}`);
const PREFIX = 'saltfo';
const RETURNS = Number(process.env.CLUSTER_RETURNS || 120000);
const cluster = { ENGINE: 'opensearch', ENGINE_PORT: String(PORT), ENGINE_NODES: '3', ENGINE_HEAP: '768m' };

let b;
let nginx; // the proxy, every node upstream
let direct; // a build whose config.json lists [a dead port, node 1]: direct to the engine (CORS)
const serve = (port, extra = {}) => {
  const env = { NGINX_PORT: String(port), ENGINE_URL: NODES.join(','), ...extra };
  return { url: `http://127.0.0.1:${port}`, start: () => script('nginx.sh', ['start'], env), stop: () => script('nginx.sh', ['stop'], env) };
};
before(async () => {
  nginx = serve(await freePort());
  // A port nothing listens on: an engine that is down.
  const dead = `http://127.0.0.1:${await freePort()}`;
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'saltscope-direct-'));
  fs.cpSync(path.join(REPO, 'dist'), dist, { recursive: true });
  fs.chmodSync(dist, 0o755);
  fs.writeFileSync(path.join(dist, 'config.json'), JSON.stringify({
    engine_url: [dead, NODES[0]],
    index_pattern: `${PREFIX}-*`,
    job_cache_index: `${PREFIX}-master-job-cache`,
    event_index_pattern: `${PREFIX}-master-event-cache*`,
  }));
  let port = await freePort();
  while (nginx.url.endsWith(`:${port}`) || dead.endsWith(`:${port}`)) port += 1;
  direct = serve(port, { DIST: dist });
  // The apps' origins, for the engines' CORS.
  await script('engine.sh', ['start'], { ...cluster, ENGINE_CORS_ORIGIN: `${nginx.url},${direct.url}` });
  await script('generate.sh', [], { ES_URL: NODES[0], RETURNS: String(RETURNS), PREFIX });
  const put = await fetch(`${NODES[0]}/${PREFIX}-*/_settings`, {
    method: 'PUT', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ index: { number_of_replicas: 1 } }),
  });
  assert.equal(put.status, 200, await put.text());
  const health = await (await fetch(`${NODES[0]}/_cluster/health?wait_for_status=green&timeout=120s`)).json();
  assert.equal(health.status, 'green', JSON.stringify(health));
  await nginx.start();
  await direct.start();
  b = await openBrowser();
});
after(async () => {
  await b?.close();
  await nginx?.stop().catch(() => {});
  await direct?.stop().catch(() => {});
  await script('engine.sh', ['stop'], cluster).catch(() => {});
});

async function generatedPage() {
  const { page, errors } = await b.newPage({ acceptDownloads: true });
  await useIndexPrefix(page, PREFIX);
  return { page, errors };
}

async function statesExport(page, whileRunning = async () => {}) {
  await page.goto(`${nginx.url}/?time=all&noisy=show&fun=state.apply`);
  await jobRows(page).first().waitFor();
  await page.getByText('Export CSV', { exact: true }).click();
  const panel = page.getByRole('group', { name: 'Export CSV' });
  await panel.getByLabel('Export', { exact: true }).selectOption('states');
  await panel.getByRole('button', { name: 'Start export' }).click();
  await whileRunning(panel);
  const link = panel.getByRole('link', { name: /^Download saltscope-states-/ });
  await link.waitFor({ timeout: 300000 }).catch(async (e) => {
    // What the panel said when the file never came: the reason, not just a timeout.
    throw new Error(`${e.message}\nthe export panel said: ${await panel.textContent().catch(() => '?')}`);
  });
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'saltscope-failover-')), download.suggestedFilename());
  await download.saveAs(file);
  const lines = fs.readFileSync(file, 'utf8').split('\r\n').filter((l) => /^[^,]*,\d{20},/.test(l));
  fs.rmSync(file);
  // (jid, minion, run order) of every state row
  const keys = lines.map((l) => l.split(',').slice(1, 3).concat(l.split(',')[5]).join(' '));
  return { keys, notes: await panel.textContent() };
}

test('one node of three goes away: the job list, a job page and an export under way keep working', { timeout: 900000 }, async () => {
  const { page, errors } = await generatedPage();
  const whole = await statesExport(page);
  assert.ok(whole.keys.length > 50000, `${whole.keys.length} state rows`);

  let stopped = false;
  const broken = await statesExport(page, async (panel) => {
    const bar = panel.getByRole('progressbar', { name: 'Export progress' });
    await eventually(async () => Number((await bar.getAttribute('value').catch(() => '0')) || 0) >= 0.2,
      'the export reaches 20 %', { timeout: 120000 });
    await script('engine.sh', ['stop-node', '2'], cluster);
    stopped = true;
  });
  assert.ok(stopped);
  assert.equal(new Set(broken.keys).size, broken.keys.length, 'no state row written twice');
  assert.equal(broken.keys.length, whole.keys.length, 'as many rows as the export with every node up');
  assert.match(broken.notes, /point in time was lost/, 'the file\'s notes say what happened');

  // With node 2 gone: the job list and a job page.
  await page.goto(`${nginx.url}/?time=all&noisy=show`);
  const first = jobRows(page).first();
  await first.waitFor();
  const jid = await first.getByRole('link').textContent();
  await first.getByRole('link').click();
  await page.getByRole('heading', { name: `Job ${jid}` }).waitFor();
  await page.getByRole('region', { name: 'Totals' }).waitFor();
  errors.assertNone({ consoleOk: true });
});

test('with a dead port first in engine_url the app starts from the live node and says which answers', async () => {
  const { page, errors } = await b.newPage();
  errors.ignore(/ERR_CONNECTION_REFUSED|Failed to fetch/);
  await page.goto(`${direct.url}/?time=all&noisy=show`);
  await jobRows(page).first().waitFor();
  await page.getByRole('contentinfo').getByText(`Engine at ${NODES[0]}`).waitFor();
  errors.assertNone({ consoleOk: true });
});
