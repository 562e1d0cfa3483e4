// Starts the app. Trunk's own loader is an inline <script type="module">,
// which a CSP without 'unsafe-inline' (or a hash that changes with every
// build) blocks; this file replaces it. Trunk.toml's `pattern_script` turns
// index.html's <link data-trunk rel="rust"> into
//   <meta name="saltscope-app" data-js="/saltscope-<hash>.js" data-wasm="/saltscope-<hash>_bg.wasm">
// and Trunk's JS pipeline gives this file a hashed name and an `integrity`
// attribute. Trunk still adds its <link rel="modulepreload"> and
// <link rel="preload" as="fetch"> with `integrity` for both files, so the
// import below is checked against the modulepreload's hash as before.
const app = document.querySelector('meta[name="saltscope-app"]');
if (!app) throw new Error('index.html lacks <meta name="saltscope-app">: build it with scripts/build.sh');
const { default: init } = await import(app.dataset.js);
const wasm = await init({ module_or_path: app.dataset.wasm });
dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
