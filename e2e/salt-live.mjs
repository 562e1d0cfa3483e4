// A real Salt master and minions running WHILE a test runs (scripts/salt-live.sh),
// writing jobs and events through the real elasticsearch returner into ES_URL.
//
//   import { startSaltLive, salt, saltRun, haveSaltVenv } from './salt-live.mjs';
//   let live;
//   before(async () => { live = await startSaltLive(); });   // { minions, stop(), ... }
//   after(() => live?.stop());
//   const { jid, ret, code } = await salt(['live*', 'cmd.run', 'exit 3']);
//   const { jid: rjid, ret: out } = await saltRun(['manage.up']);
//
// startSaltLive() reuses a running set (the script's start is idempotent and
// locked). Each test process that calls it holds a lease
// ($SALTSCOPE_WORK/salt-live/leases/<pid>); stop() drops it and stops Salt
// only when no other live process holds one and Salt was not already running
// before any test took a lease (a developer's own `salt-live.sh start`).
//
// salt(): `salt --show-jid --out json --out-indent -1`: a "jid: N" line, then one
// JSON line per minion as it returns. A job whose job-cache load the engine
// rejected (on the returner's dynamic mappings, typically one with kwargs:
// `name=x`) prints no minion output ("jid does not exist"): ret is then {}.
// saltRun(): salt-run learns no jid from the CLI, so one is made here and
// passed with --jid (Salt's format, YYYYMMDDhhmmssffffff, master local time).

import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// As harness.mjs has them, without importing it: this module needs no browser
// (nor e2e/node_modules).
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SALTSCOPE_WORK = process.env.SALTSCOPE_WORK || path.join(REPO, '.work');

export const SALT_LIVE_SH = path.join(REPO, 'scripts', 'salt-live.sh');
export const SALT_LIVE_DIR = path.join(SALTSCOPE_WORK, 'salt-live');
const VENV = path.join(SALTSCOPE_WORK, 'venv');
const LEASES = path.join(SALT_LIVE_DIR, 'leases');

/** true when salt-data.sh's venv is there (scripts/setup.sh or salt-data.sh --venv-only builds it) */
export function haveSaltVenv() {
  return ['bin/salt-master', 'bin/salt-minion', 'bin/salt', '.saltscope-req'].every((f) => fs.existsSync(path.join(VENV, f)));
}
/** Why live Salt tests cannot run here (a skip message), or false. */
export function saltLiveUnavailable() {
  if (!haveSaltVenv()) return `no Salt venv at ${VENV}: run scripts/salt-data.sh --venv-only (scripts/setup.sh does)`;
  if (!process.env.ES_URL) return 'ES_URL is not set: live Salt writes into a running engine (e.g. ES_URL=http://127.0.0.1:9260)';
  return false;
}

/** Run scripts/salt-live.sh ARGS; resolves {code, stdout, stderr, ms}, never rejects on a non-zero exit. */
export function runSaltLive(args, { timeout = 180_000, env = {} } = {}) {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    execFile(SALT_LIVE_SH, args, {
      cwd: REPO,
      env: { ...process.env, ...env },
      timeout,
      maxBuffer: 64 * 1024 * 1024,
    }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') {
        reject(new Error(`salt-live.sh ${args.join(' ')}: ${err.message}\n${stderr}`));
        return;
      }
      resolve({ code: err ? err.code : 0, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

function pidAlive(pid) {
  try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
}
/** Leases of live processes other than this one: [{pid, owned}] (dead ones are removed). */
function otherLeases() {
  let names = [];
  try { names = fs.readdirSync(LEASES); } catch { return []; }
  const out = [];
  for (const n of names) {
    const pid = Number(n);
    const file = path.join(LEASES, n);
    if (!Number.isInteger(pid) || !pidAlive(pid)) { fs.rmSync(file, { force: true }); continue; }
    if (pid === process.pid) continue;
    let owned = true;
    try { owned = JSON.parse(fs.readFileSync(file, 'utf8')).owned !== false; } catch { /* being written: counts as owned */ }
    out.push({ pid, owned });
  }
  return out;
}
function writeLease(owned) {
  fs.mkdirSync(LEASES, { recursive: true });
  fs.writeFileSync(path.join(LEASES, String(process.pid)), JSON.stringify({ owned, at: new Date().toISOString() }));
}

let current = null; // this process's handle (a promise), shared by every caller in it

/**
 * Start live Salt (or reuse it). Resolves {minions, masterId, ports, startSeconds,
 * reused, owned, stop()}. `schedule`: seconds between a test.ping each minion
 * runs by itself (events without CLI jobs).
 */
export function startSaltLive({ esUrl = process.env.ES_URL, schedule, timeout = 240_000 } = {}) {
  if (current) return current;
  current = (async () => {
    if (!esUrl) throw new Error('startSaltLive: no ES_URL');
    const before = otherLeases();
    writeLease(null); // pending: others starting meanwhile count it as owned
    const args = ['start'];
    if (schedule) args.push('--schedule', String(schedule));
    const r = await runSaltLive(args, { timeout, env: { ES_URL: esUrl } });
    const line = r.stdout.trim().split('\n').pop();
    if (r.code !== 0 || !line) {
      fs.rmSync(path.join(LEASES, String(process.pid)), { force: true });
      current = null;
      throw new Error(`salt-live.sh start failed (exit ${r.code}):\n${r.stderr}`);
    }
    const info = JSON.parse(line);
    // Running already with no test holding it: someone started it by hand; leave it running.
    const owned = info.reused ? before.length > 0 && before.every((l) => l.owned) : true;
    writeLease(owned);
    let stopped = null;
    return {
      minions: info.minions,
      masterId: info.master_id,
      ports: info.ports,
      startSeconds: info.seconds,
      reused: info.reused,
      owned,
      log: r.stderr,
      /** Drop this process's lease; stop Salt if nobody else holds one and we own it. */
      stop() {
        stopped ??= (async () => {
          fs.rmSync(path.join(LEASES, String(process.pid)), { force: true });
          current = null;
          if (!owned || otherLeases().length > 0) return { stopped: false };
          const s = await runSaltLive(['stop'], { timeout: 60_000 });
          if (s.code !== 0) throw new Error(`salt-live.sh stop failed (exit ${s.code}):\n${s.stderr}`);
          return { stopped: true, ms: s.ms };
        })();
        return stopped;
      },
    };
  })();
  current.catch(() => { current = null; });
  return current;
}

/**
 * A CLI job: salt ARGS against the live master. Resolves {jid, ret: {minion: output},
 * code (salt's exit status: 1 when a minion failed), stderr, startedAt, jidAt,
 * endedAt (ms)}. onJid(jid) is called as soon as the CLI prints the jid (the job
 * is published, minions are still running it): watch the engine from there.
 * Rejects when no jid was printed (the job was not published).
 */
export function salt(args, { timeout = 120_000, onJid } = {}) {
  const startedAt = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(SALT_LIVE_SH, ['salt', '--show-jid', '--out', 'json', '--out-indent', '-1', ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let jid = null;
    let jidAt = null;
    const timer = setTimeout(() => child.kill('SIGTERM'), timeout);
    child.stdout.on('data', (b) => {
      stdout += b;
      if (jid) return;
      const m = /^jid: (\d+)$/m.exec(stdout);
      if (m) {
        jid = m[1];
        jidAt = Date.now();
        try { onJid?.(jid); } catch (e) { reject(e); }
      }
    });
    child.stderr.on('data', (b) => { stderr += b; });
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const endedAt = Date.now();
      const ret = {};
      for (const line of stdout.split('\n')) {
        if (!line.trim().startsWith('{')) continue;
        try { Object.assign(ret, JSON.parse(line)); } catch { /* not JSON: ignore */ }
      }
      if (!jid) {
        reject(new Error(`salt ${args.join(' ')}: no jid (exit ${code ?? signal})\n${stdout}\n${stderr}`));
        return;
      }
      resolve({ jid, ret, code: code ?? 128, stderr, startedAt, jidAt, endedAt });
    });
  });
}

let lastJid = '';
/** A fresh jid in Salt's format (local time, microseconds), unique in this process. */
export function makeJid(d = new Date()) {
  const p = (n, w = 2) => String(n).padStart(w, '0');
  const micro = Number(process.hrtime.bigint() / 1000n % 1000n);
  let jid = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}${p(d.getMilliseconds(), 3)}${p(micro, 3)}`;
  if (jid <= lastJid) jid = String(BigInt(lastJid) + 1n);
  lastJid = jid;
  return jid;
}

/**
 * A runner job: salt-run ARGS with a jid made here. Resolves {jid, ret (the runner's
 * JSON output, or null), code, stdout, stderr, startedAt, endedAt}.
 */
export async function saltRun(args, { jid = makeJid(), timeout = 120_000 } = {}) {
  const startedAt = Date.now();
  const r = await runSaltLive(['salt-run', '--jid', jid, '--out', 'json', ...args], { timeout });
  const endedAt = Date.now();
  let ret = null;
  try { ret = JSON.parse(r.stdout); } catch { /* no JSON output */ }
  return { jid, ret, code: r.code, stdout: r.stdout, stderr: r.stderr, startedAt, endedAt };
}
