// Minifies the dist's JavaScript with esbuild (e2e/node_modules) and writes
// the new SRI hashes into index.html. Trunk 0.21's own JS minifier cannot
// read `export default`, so it leaves wasm-bindgen's JS, the loader and the
// export's worker as they were written: minified they are 9.2 → 7.0, 1.1 →
// 0.6 and 1.7 → 0.9 KB gzip. Run by scripts/build.sh before compressing.
//
//   node scripts/minify-dist.mjs <dist dir>
//
// Names stay: Trunk hashed them from the build's inputs, and the same build
// always minifies to the same bytes. Only `integrity` changes, for each
// <script src> and <link href> of index.html whose file was minified.
import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const esbuild = createRequire(path.join(repo, 'e2e', 'package.json'))('esbuild');

const dist = process.argv[2];
if (!dist) throw new Error('usage: node scripts/minify-dist.mjs <dist dir>');

const sri = (bytes) => 'sha384-' + crypto.createHash('sha384').update(bytes).digest('base64');

const changed = new Map(); // "/name.js" -> its new integrity
for (const name of fs.readdirSync(dist).filter((f) => f.endsWith('.js'))) {
  const file = path.join(dist, name);
  const source = fs.readFileSync(file, 'utf8');
  // The worker is a classic script; the rest are modules.
  const format = /^\s*(?:\/\/[^\n]*\n\s*)*'use strict';/.test(source) ? undefined : 'esm';
  const { code } = esbuild.transformSync(source, { minify: true, format, legalComments: 'none' });
  fs.writeFileSync(file, code);
  changed.set('/' + name, sri(code));
  console.log(`  ${name.padEnd(45)} ${String(source.length).padStart(7)} → ${String(code.length).padStart(7)} B`);
}

// Each tag naming a minified file gets that file's hash; index.html is
// minified too (Trunk.toml), so its attributes may be unquoted.
const index = path.join(dist, 'index.html');
let html = fs.readFileSync(index, 'utf8');
let rewritten = 0;
html = html.replace(/<(script|link)\b[^>]*>/gi, (tag) => {
  const target = /\b(?:src|href)=("([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
  const url = target && (target[2] ?? target[3] ?? target[4]);
  if (!url || !changed.has(url) || !/\bintegrity=/i.test(tag)) return tag;
  rewritten++;
  return tag.replace(/\bintegrity=("[^"]*"|'[^']*'|[^\s>]+)/i, `integrity="${changed.get(url)}"`);
});
fs.writeFileSync(index, html);
// wasm-bindgen's JS (its modulepreload) and the loader carry integrity.
if (rewritten < 2) throw new Error(`index.html: only ${rewritten} integrity attribute(s) rewritten, expected the loader's and the app's JS`);
