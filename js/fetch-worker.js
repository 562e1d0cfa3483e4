// The CSV export's fetches, off the page's main thread. Reading a large
// answer's body on the main thread (Chromium does it there for fetch())
// waits while the previous page is being turned into CSV; here the next page
// arrives while the app reads this one. See src/worker.rs.
//
// In:  {id, url, method, headers, body}  — start a request
//      {abort: id}                        — stop one
// Out: {id, status, ok, retryAfter, buffer} — the body, transferred, not copied
//      {id, error}                        — the network failed (or aborted)
'use strict';

const running = new Map();

onmessage = async ({ data }) => {
  if (data.abort !== undefined) {
    running.get(data.abort)?.abort();
    return;
  }
  const controller = new AbortController();
  running.set(data.id, controller);
  try {
    const response = await fetch(data.url, {
      method: data.method,
      headers: data.headers,
      body: data.body ?? undefined,
      signal: controller.signal,
      cache: 'no-store',
    });
    const buffer = await response.arrayBuffer();
    const retryAfter = response.headers.get('Retry-After');
    postMessage({ id: data.id, status: response.status, ok: response.ok, retryAfter, buffer }, [buffer]);
  } catch (e) {
    postMessage({ id: data.id, error: String((e && e.message) || e) });
  } finally {
    running.delete(data.id);
  }
};
