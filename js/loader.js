// Starts the app. Trunk's own loader is an inline <script type="module">,
// which a CSP without 'unsafe-inline' (or a hash that changes with every
// build) blocks; this file replaces it. Trunk.toml's `pattern_script` turns
// index.html's <link data-trunk rel="rust"> into
//   <meta name="saltscope-app" data-js="/saltscope-<hash>.js" data-wasm="/saltscope-<hash>_bg.wasm">
// and Trunk's JS pipeline gives this file a hashed name and an `integrity`
// attribute. Trunk still adds its <link rel="modulepreload"> and
// <link rel="preload" as="fetch"> with `integrity` for both files, so the
// import below is checked against the modulepreload's hash as before.
//
// If the app cannot start, the page says why instead of staying blank.
const app = document.querySelector('meta[name="saltscope-app"]');

// index.html's skip link: the keyboard's next stop is the view's first
// control, not the top bar's links. A fragment link alone does not move the
// focus, and the app's own link handling (src/ui/location.rs) would push
// "#main" into the address; a handled click is one it leaves alone.
document.querySelector('a.skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  const main = document.querySelector('main');
  if (main) {
    main.tabIndex = -1;
    main.focus();
  }
});
try {
  if (!app) throw new Error('index.html lacks <meta name="saltscope-app">: build it with scripts/build.sh');
  const { default: init } = await import(app.dataset.js);
  const wasm = await init({ module_or_path: app.dataset.wasm });
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
} catch (e) {
  const alert = document.createElement('p');
  alert.setAttribute('role', 'alert');
  alert.textContent = `Saltscope could not start: ${(e && e.message) || e}. ${
    hasSimd()
      ? 'Reload the page; if this stays, the server may be serving an incomplete build.'
      : 'This browser lacks WebAssembly SIMD, which Saltscope is built with: use Chrome or Edge 91, Firefox 89, Safari 16.4 or later.'}`;
  document.body.append(alert);
  throw e;
}

// WebAssembly SIMD (the wasm is built with simd128: .cargo/config.toml): a
// function that splats and counts bits in a v128, as wasm-feature-detect
// checks it.
function hasSimd() {
  return WebAssembly.validate(new Uint8Array([
    0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
  ]));
}
