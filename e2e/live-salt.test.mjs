// The live tail and the job page's live follow against a REAL Salt master:
// scripts/salt-live.sh keeps a master and two minions up while the browser
// follows the bus; CLI jobs run meanwhile, and their events must arrive in
// the order the master fired them, each once. Skips without the Salt venv.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openBrowser, url, eventually } from './harness.mjs';
import { startSaltLive, salt, saltLiveUnavailable } from './salt-live.mjs';

const unavailable = saltLiveUnavailable();
let live;
let b;

before(async () => {
  if (unavailable) return;
  live = await startSaltLive();
  b = await openBrowser();
});
after(async () => {
  await b?.close();
  await live?.stop();
});

const table = (page) => page.getByRole('table', { name: 'Events' });
const rows = (page) => table(page).getByRole('row').filter({ has: page.getByRole('cell') });
const tagsShown = (page) => table(page).locator('td.tag code').allTextContents();

test('while the master runs jobs, their new and ret events arrive in order, none twice', { skip: unavailable, timeout: 180000 }, async () => {
  const { page, errors } = await b.newPage();
  await page.goto(url(`/events?tag=${encodeURIComponent('salt/job/*/new,salt/job/*/ret/*')}&live=1`));
  await page.getByRole('status').filter({ hasText: /^Live/ }).waitFor();

  const jobs = [];
  for (const args of [['live*', 'test.ping'], ['live*', 'cmd.run', 'exit 3'], ['live*', 'test.ping']]) {
    const r = await salt(args);
    assert.ok(r.jid, `salt ${args.join(' ')} printed its jid`);
    jobs.push({ ...r, args });
  }
  const lags = [];
  for (const job of jobs) {
    const want = [`salt/job/${job.jid}/new`, ...live.minions.map((m) => `salt/job/${job.jid}/ret/${m}`)];
    await eventually(async () => {
      const shown = await tagsShown(page);
      return want.every((t) => shown.includes(t));
    }, `the events of ${job.args.join(' ')} (${job.jid})`, { timeout: 30000 });
    lags.push(Date.now() - job.startedAt);
  }
  console.log(`# ${jobs.length} CLI jobs: last event on screen ${lags.map((l) => `${(l / 1000).toFixed(1)} s`).join(', ')} after each CLI started (some waited for the jobs after it)`);

  // Two more polls: nothing twice, and each job's new below (before) its rets.
  await page.waitForResponse((r) => r.url().includes('/_msearch'));
  await page.waitForResponse((r) => r.url().includes('/_msearch'));
  const shown = await tagsShown(page);
  for (const job of jobs) {
    const mine = shown.filter((t) => t.includes(job.jid));
    assert.equal(new Set(mine).size, mine.length, `no event of ${job.jid} twice: ${mine}`);
    assert.equal(mine.length, 1 + live.minions.length);
    assert.equal(mine.at(-1), `salt/job/${job.jid}/new`, 'newest first: the publish event is the oldest of its job');
  }
  // exit 3: the minions' returns are marked failed.
  const failing = jobs[1].jid;
  for (const m of live.minions) {
    await rows(page).filter({ hasText: `salt/job/${failing}/ret/${m}` }).getByText('failed', { exact: true }).waitFor();
  }
  errors.assertNone();
});

test('a real job still running is followed on its job page until every minion answered', { skip: unavailable, timeout: 180000 }, async () => {
  const { page, errors } = await b.newPage();
  let opened;
  const done = salt(['live*', 'cmd.run', 'sleep 6'], {
    onJid: (jid) => { opened = page.goto(url(`/job/${jid}`)); },
  });
  await eventually(() => Boolean(opened), 'the CLI printed the jid', { timeout: 30000 });
  await opened;
  const following = page.getByRole('status').filter({ hasText: 'Following this job live' });
  await following.waitFor({ timeout: 15000 });
  const job = await done;
  for (const m of live.minions) await page.getByRole('region', { name: m }).waitFor({ timeout: 20000 });
  await following.waitFor({ state: 'detached', timeout: 10000 });
  await page.getByRole('region', { name: 'Totals' }).getByText(`Minions returned: ${live.minions.length}`).waitFor();
  assert.equal(job.code, 0);
  errors.assertNone();
});
