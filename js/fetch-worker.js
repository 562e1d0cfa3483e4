// The CSV export's fetches, off the page's main thread (src/worker.rs): the
// next page arrives here while the app turns this one into CSV.
//
// A page may name the next (`next`: its URL, its body with `cursor` where
// the last hit's `sort` goes, and, when this page asks for the total (the
// first), `from`, how many hits come before the next; core's NextPage). It
// is sent as soon as this answer is in, not once the app gets to ask,
// unless `from` is given and the answer's total says no hit is left; when
// the app asks for that very request, byte for byte, it gets this one. One
// page at most ahead.
//
// In:  {id, url, method, headers, body, next?} | {abort: id}
// Out: {id, status, ok, retryAfter, buffer (transferred)} | {id, error}
'use strict';

const running = new Map();
// The page sent ahead: {url, body, controller, answer}.
let ahead = null;

function send(url, method, headers, body) {
  const controller = new AbortController();
  const answer = fetch(url, { method, headers, body: body ?? undefined, signal: controller.signal, cache: 'no-store' })
    .then(async (response) => ({
      status: response.status,
      ok: response.ok,
      retryAfter: response.headers.get('Retry-After'),
      buffer: await response.arrayBuffer(),
    }))
    .catch((e) => ({ error: String((e && e.message) || e) }));
  return { url, body, controller, answer };
}

const decoder = new TextDecoder();

// The text of the answer's last `"sort":[…]` array, as the engine wrote it
// (the app reads its own cursor the same way: core/src/export/page.rs).
function lastSort(buffer) {
  const bytes = new Uint8Array(buffer);
  for (const from of [Math.max(0, bytes.length - 65536), 0]) {
    const text = decoder.decode(bytes.subarray(from));
    const at = text.lastIndexOf('"sort":[');
    if (at >= 0) return arrayAt(text, at + 7);
    if (from === 0) break;
  }
  return null;
}

// The total the answer gives (the first page's `hits.total`), read off its
// first bytes: the engine writes it before any hit, and `_shards.total` is
// a bare number, so the first `"total":{` is it (the app reads it the same
// way: core/src/export/page.rs, head_total).
function headTotal(buffer) {
  const head = decoder.decode(new Uint8Array(buffer, 0, Math.min(buffer.byteLength, 65536)));
  const at = head.indexOf('"total":{');
  const m = at < 0 ? null : /^"total":\{[^}]*?"value":(\d+)/.exec(head.slice(at));
  return m ? Number(m[1]) : null;
}

// Whether hits may come after the first `from`: unless the total says not.
function hitsLeft(buffer, from) {
  const total = headTotal(buffer);
  return total === null || total > from;
}

function arrayAt(text, start) {
  let depth = 0;
  let quoted = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}

onmessage = async ({ data }) => {
  if (data.abort !== undefined) {
    running.get(data.abort)?.abort();
    running.delete(data.abort);
    return;
  }
  let request;
  if (ahead && ahead.url === data.url && ahead.body === data.body) {
    request = ahead;
    ahead = null;
  } else {
    request = send(data.url, data.method, data.headers, data.body);
  }
  running.set(data.id, request.controller);
  const answer = await request.answer;
  running.delete(data.id);
  // Only the first page's answer gives a total: later ones are not read for it.
  if (data.next && answer.ok && !request.controller.signal.aborted
    && (data.next.from === undefined || hitsLeft(answer.buffer, data.next.from))) {
    const sort = lastSort(answer.buffer);
    if (sort) {
      ahead?.controller.abort();
      ahead = send(data.next.url, data.method, data.headers, data.next.body.replace(data.next.cursor, () => sort));
    }
  }
  if (answer.error !== undefined) {
    postMessage({ id: data.id, error: answer.error });
  } else {
    postMessage({ id: data.id, ...answer }, [answer.buffer]);
  }
};
