// Helpers for the deployment tests (proxy, auth front, TLS, several engines,
// headers): they start their own nginx instances with the project's scripts
// (scripts/nginx.sh, scripts/auth-front.sh, scripts/tls-front.sh) on ports
// picked from a range nobody else uses, talk raw HTTP where a browser cannot,
// and read the engine straight (ES_URL), never through nginx.
//
//   E2E_PORTS   port range for the servers these tests start (default 8110-8147)
//   ES_URL      the engine (default http://127.0.0.1:9250)

import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO, SALTSCOPE_WORK, BASE_URL } from './harness.mjs';

export const ES_URL = (process.env.ES_URL || 'http://127.0.0.1:9250').replace(/\/+$/, '');
const execFileP = promisify(execFile);

// ---- ports ------------------------------------------------------------------------
const [PORT_LO, PORT_HI] = (process.env.E2E_PORTS || '8110-8147').split('-').map(Number);
const taken = new Set();

function canListen(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A free port of E2E_PORTS (start picked by pid, so parallel test files rarely race). */
export async function freePort() {
  const span = PORT_HI - PORT_LO + 1;
  const start = process.pid % span;
  for (let i = 0; i < span; i++) {
    const port = PORT_LO + ((start + i) % span);
    if (taken.has(port)) continue;
    if (await canListen(port)) { taken.add(port); return port; }
  }
  throw new Error(`no free port in ${PORT_LO}-${PORT_HI} (E2E_PORTS)`);
}

// ---- logs -------------------------------------------------------------------------
// A run dir is per port and ports are reused: read only what this run wrote.
function logReader(rundir) {
  const start = {};
  for (const name of ['access.log', 'error.log']) {
    try { start[name] = fs.statSync(path.join(rundir, name)).size; } catch { start[name] = 0; }
  }
  return (name) => fs.readFileSync(path.join(rundir, name)).subarray(start[name] || 0).toString('utf8');
}

/**
 * The first line of log `name` that satisfies `wanted`, waiting for it: nginx writes
 * the access log after the answer has gone, so a client can read the answer first.
 */
export async function logLine(log, name, wanted, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = log(name).split('\n').find(wanted);
    if (line || Date.now() > deadline) return line;
    await new Promise((r) => setImmediate(r));
  }
}

// ---- scripts ----------------------------------------------------------------------
/** Runs scripts/<name> with env added; throws with its output on failure. */
export async function script(name, args, env = {}) {
  try {
    const { stdout, stderr } = await execFileP(path.join(REPO, 'scripts', name), args, {
      env: { ...process.env, SALTSCOPE_WORK, ...env },
      maxBuffer: 64 << 20,
    });
    return stdout + stderr;
  } catch (e) {
    throw new Error(`scripts/${name} ${args.join(' ')} failed:\n${e.stdout || ''}${e.stderr || ''}`);
  }
}

/**
 * Starts scripts/nginx.sh on a free port. Returns { port, url, rundir, log(name), stop() }.
 * `env` takes the script's settings (ENGINE_URL, SALTSCOPE_ENGINE_AUTH_FILE, ...).
 */
export async function startNginx(env = {}) {
  const port = await freePort();
  const all = { NGINX_PORT: String(port), ENGINE_URL: ES_URL, ...env };
  const rundir = path.join(SALTSCOPE_WORK, `nginx-${port}`);
  const log = logReader(rundir);
  await script('nginx.sh', ['start'], all);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    rundir,
    pidfile: path.join(rundir, 'nginx.pid'),
    log,
    stop: () => script('nginx.sh', ['stop'], all),
  };
}

/** scripts/auth-front.sh on a free port in front of ES_URL. */
export async function startAuthFront(env = {}) {
  const port = await freePort();
  const all = { AUTH_FRONT_PORT: String(port), ENGINE_URL: ES_URL, ...env };
  const rundir = path.join(SALTSCOPE_WORK, `auth-front-${port}`);
  const log = logReader(rundir);
  await script('auth-front.sh', ['start'], all);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    rundir,
    pidfile: path.join(rundir, 'nginx.pid'),
    apiKey: () => fs.readFileSync(path.join(rundir, 'api-key'), 'utf8').trim(),
    log,
    stop: () => script('auth-front.sh', ['stop'], all),
  };
}

/** scripts/tls-front.sh on a free port in front of ES_URL, with the given cert/key. */
export async function startTlsFront(env) {
  const port = await freePort();
  const all = { TLS_FRONT_PORT: String(port), ENGINE_URL: ES_URL, ...env };
  await script('tls-front.sh', ['start'], all);
  return {
    port,
    url: `https://127.0.0.1:${port}`,
    pidfile: path.join(SALTSCOPE_WORK, `tls-front-${port}`, 'nginx.pid'),
    stop: () => script('tls-front.sh', ['stop'], all),
  };
}

// ---- processes --------------------------------------------------------------------
/** { master, workers: [user...] } of the nginx whose pid file this is. */
export function nginxUsers(pidfile) {
  const pid = fs.readFileSync(pidfile, 'utf8').trim();
  const ps = (args) => execFileSync('ps', args, { encoding: 'utf8' }).split('\n').map((s) => s.trim()).filter(Boolean);
  return { pid, master: ps(['-o', 'user=', '-p', pid])[0], workers: ps(['-o', 'user=', '--ppid', pid]) };
}

/** Asserts that no worker of this nginx runs as root (and that it has workers). */
export function assertWorkersNotRoot(pidfile, what) {
  const u = nginxUsers(pidfile);
  assert.ok(u.workers.length > 0, `${what}: nginx ${u.pid} has worker processes`);
  for (const w of u.workers) assert.notEqual(w, 'root', `${what}: a worker of nginx ${u.pid} runs as root`);
  return u;
}

/** The pid file of the nginx behind BASE_URL, when scripts/nginx.sh started it here. */
export function baseNginxPidfile() {
  const port = new URL(BASE_URL).port || '80';
  const f = path.join(SALTSCOPE_WORK, `nginx-${port}`, 'nginx.pid');
  return fs.existsSync(f) ? f : null;
}

// ---- raw HTTP ---------------------------------------------------------------------
/**
 * Sends exactly `head` (request line + headers, CRLF-separated, without the
 * final blank line) and `body` over a TCP connection; resolves
 * { status, headers, body } (body as text). For what a browser or
 * fetch would normalize away: %2F, dot segments, absolute-form request lines.
 */
export function rawHttp(port, head, body = '') {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    sock.setTimeout(15000, () => { sock.destroy(); reject(new Error(`no answer to: ${head.split('\r\n')[0]}`)); });
    sock.on('data', (c) => { data = Buffer.concat([data, c]); });
    sock.on('error', reject);
    sock.on('end', () => {
      const text = data.toString('utf8');
      const i = text.indexOf('\r\n\r\n');
      const lines = text.slice(0, i).split('\r\n');
      const status = Number(lines[0].split(' ')[1]);
      const headers = {};
      for (const l of lines.slice(1)) {
        const k = l.slice(0, l.indexOf(':')).toLowerCase();
        headers[k] = l.slice(l.indexOf(':') + 1).trim();
      }
      let rest = text.slice(i + 4);
      if (/chunked/i.test(headers['transfer-encoding'] || '')) {
        let out = '';
        while (rest.length) {
          const n = parseInt(rest, 16);
          if (!n) break;
          const s = rest.indexOf('\r\n') + 2;
          out += rest.slice(s, s + n);
          rest = rest.slice(s + n + 2);
        }
        rest = out;
      }
      resolve({ status, headers, body: rest });
    });
    const b = Buffer.from(body);
    sock.write(`${head}\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n` +
      (body ? `Content-Type: application/json\r\nContent-Length: ${b.length}\r\n` : '') + '\r\n');
    if (body) sock.write(b);
  });
}

/** Plain request with node's http module (no browser). Resolves { status, headers, body }. */
export function request(urlString, { method = 'GET', headers = {}, body, ca } = {}) {
  const u = new URL(urlString);
  const mod = u.protocol === 'https:' ? import('node:https') : Promise.resolve({ default: http });
  // Always a Content-Length: node sends a DELETE body neither chunked nor sized.
  const data = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  if (data) headers = { 'content-length': String(data.length), ...headers };
  return mod.then(({ default: m }) => new Promise((resolve, reject) => {
    const req = m.request(u, { method, headers, ca, timeout: 30000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${urlString}`)));
    if (data) req.write(data);
    req.end();
  }));
}

// ---- the engine, straight ---------------------------------------------------------
async function engineJson(p, init = {}) {
  const r = await fetch(ES_URL + p, init);
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

/**
 * What a write through the proxy would change, read from the engine itself:
 * every index with its status (open/close), health-free doc count and
 * settings (minus the volatile ones), the persistent/transient cluster
 * settings, snapshot repositories and the stored script "x".
 */
export async function engineSnapshot() {
  await fetch(`${ES_URL}/_refresh`, { method: 'POST' });
  const cat = await engineJson('/_cat/indices?format=json&h=index,status,docs.count&expand_wildcards=all&s=index');
  const indices = cat.json.filter((i) => !i.index.startsWith('.'));
  const settings = await engineJson('/_all/_settings?flat_settings=true&expand_wildcards=all');
  const flat = {};
  for (const [index, v] of Object.entries(settings.json)) {
    if (index.startsWith('.')) continue;
    flat[index] = v.settings;
  }
  const cluster = await engineJson('/_cluster/settings?flat_settings=true');
  const repos = await engineJson('/_snapshot');
  const script_ = await engineJson('/_scripts/x');
  return { indices, settings: flat, cluster: cluster.json, repos: repos.json, script_x: script_.status };
}

// ---- certificates -----------------------------------------------------------------
/**
 * A CA and two server certificates for 127.0.0.1/localhost signed by it
 * (`engine` for the TLS front, `app` for the https app block), made with
 * openssl in `dir`. Returns the file paths.
 */
export function makeCerts(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const f = (n) => path.join(dir, n);
  const ossl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  ossl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=Saltscope test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
    '-keyout', f('ca.key'), '-out', f('ca.pem'));
  for (const name of ['engine', 'app']) {
    ossl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}.saltscope.test`,
      '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`));
    fs.writeFileSync(f(`${name}.ext`),
      `subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:${name}.saltscope.test\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`);
    ossl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
      '-days', '2', '-extfile', f(`${name}.ext`), '-out', f(`${name}.pem`));
    fs.chmodSync(f(`${name}.key`), 0o600);
  }
  // SPKI pin of the app certificate, for chromium's --ignore-certificate-errors-spki-list.
  const pub = execFileSync('openssl', ['x509', '-in', f('app.pem'), '-pubkey', '-noout']);
  const der = execFileSync('openssl', ['pkey', '-pubin', '-outform', 'der'], { input: pub });
  const spki = createHash('sha256').update(der).digest('base64');
  return {
    ca: f('ca.pem'),
    appSpki: spki,
    engine: { cert: f('engine.pem'), key: f('engine.key') },
    app: { cert: f('app.pem'), key: f('app.key') },
  };
}
