#!/usr/bin/env bash
# Install everything Saltscope's build, demo and tests need, skipping what is
# already there. Idempotent: a warm run takes a few seconds.
#
#   scripts/setup.sh            # everything
#   SETUP_SKIP=engine,salt scripts/setup.sh   # skip some steps (comma list of:
#                               # apt,rust,trunk,bindgen,npm,cargo,engine,salt)
#   SETUP_ENGINE=all scripts/setup.sh         # engine launchers to build: opensearch (3.x),
#                               # opensearch2 (2.19), elasticsearch (7.10), a space list
#                               # of them, or all (default: $ENGINE, else opensearch)
#
# Pinned versions: trunk 0.21.14; wasm-bindgen-cli = the wasm-bindgen version
# in Cargo.lock; playwright-core and binaryen (wasm-opt) exactly as in
# e2e/package.json / package-lock.json.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SALTSCOPE_REPO"

TRUNK_VERSION=0.21.14
SETUP_SKIP=",${SETUP_SKIP:-},"
T_ALL=$(now_s)
SUMMARY=()

skipped() { [[ "$SETUP_SKIP" == *",$1,"* ]]; }
step_done() { SUMMARY+=("$(printf '%-8s %-9s %s' "$1" "$2" "$3")"); log "$1: $2 ($3)"; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif have sudo; then sudo -n "$@"
  else die "need root (or sudo) to run: $*"
  fi
}

# Another process may already be running the same `cargo install` (e.g. an
# earlier setup.sh in another shell). Starting a second one would fight over
# ~/.cargo; wait for it instead, then re-check.
wait_other_cargo_install() {
  # Any concurrent `cargo install` holds cargo's package-cache lock, and one
  # may be installing exactly what we want: wait for all of them (plus a short
  # grace period in case a queued install starts right after).
  local what=$1 waited=0 quiet=0
  while (( quiet < 2 )); do
    if pgrep -f "cargo install " >/dev/null 2>&1; then
      quiet=0
      (( waited == 0 )) && log "a 'cargo install' is already running; waiting for it before installing ${what}"
      sleep 10; waited=$((waited + 10))
      (( waited % 120 == 0 )) && log "  still waiting (${waited}s)"
    else
      (( waited == 0 )) && return 0
      quiet=$((quiet + 1)); sleep 3
    fi
  done
  return 0
}

# ---- apt: nginx, chromium and small tools ------------------------------------
apt_step() {
  local t0 missing=() pkg bin
  t0=$(now_s)
  # binary (or nginx module) -> Debian package
  for pair in nginx:nginx chromium:chromium envsubst:gettext-base curl:curl gzip:gzip \
              cc:gcc node:nodejs npm:npm pgrep:procps \
              ngx_http_brotli_static_module.so:libnginx-mod-http-brotli-static \
              ngx_http_brotli_filter_module.so:libnginx-mod-http-brotli-filter; do
    bin=${pair%%:*}; pkg=${pair#*:}
    if [[ $bin == nginx ]]; then [[ -x /usr/sbin/nginx ]] && continue
    elif [[ $bin == *.so ]]; then [[ -f /usr/lib/nginx/modules/$bin ]] && continue
    else have "$bin" && continue
    fi
    missing+=("$pkg")
  done
  if (( ${#missing[@]} == 0 )); then
    step_done apt skipped "nginx, chromium, node, curl, envsubst present"; return
  fi
  log "apt: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" ca-certificates >/dev/null
  # Debian's nginx package enables and starts a system nginx on :80; we never
  # use it (our nginx runs from its own config), so stop it when we just
  # installed it to keep the machine quiet.
  if [[ " ${missing[*]} " == *" nginx "* ]] && have systemctl; then
    as_root systemctl disable --now nginx >/dev/null 2>&1 || true
  fi
  if [[ " ${missing[*]} " == *" nginx "* ]] && [[ -s /run/nginx.pid ]]; then
    as_root /usr/sbin/nginx -s stop >/dev/null 2>&1 || true
  fi
  step_done apt installed "${missing[*]} in $(elapsed "$t0")"
}

# ---- rust toolchain + wasm target ---------------------------------------------
rust_step() {
  local t0; t0=$(now_s)
  have cargo || die "cargo not found: install Rust with rustup (https://rustup.rs) first"
  if rustup target list --installed 2>/dev/null | grep -x wasm32-unknown-unknown >/dev/null; then
    step_done rust skipped "wasm32-unknown-unknown target present"
  else
    rustup target add wasm32-unknown-unknown
    step_done rust installed "wasm32-unknown-unknown in $(elapsed "$t0")"
  fi
}

# ---- trunk --------------------------------------------------------------------
trunk_version() { trunk --version 2>/dev/null | awk '{print $2}'; }
trunk_step() {
  local t0 v; t0=$(now_s)
  v=$(trunk_version || true)
  if [[ "$v" != "$TRUNK_VERSION" ]]; then
    wait_other_cargo_install trunk
    v=$(trunk_version || true)
  fi
  if [[ "$v" == "$TRUNK_VERSION" ]]; then
    step_done trunk skipped "trunk $v present"; return
  fi
  log "trunk: ${v:-missing} -> installing $TRUNK_VERSION (cargo install, ~15-20 min on 2 cores)"
  cargo install --locked trunk --version "$TRUNK_VERSION"
  [[ "$(trunk_version)" == "$TRUNK_VERSION" ]] || die "trunk install did not yield $TRUNK_VERSION"
  step_done trunk installed "$TRUNK_VERSION in $(elapsed "$t0")"
}

# ---- wasm-bindgen-cli (must equal Cargo.lock's wasm-bindgen) ----------------------
bindgen_version() { wasm-bindgen --version 2>/dev/null | awk '{print $2}'; }
bindgen_step() {
  local t0 want v; t0=$(now_s)
  want=$(wasm_bindgen_lock_version)
  [[ -n "$want" ]] || die "no wasm-bindgen in Cargo.lock; run 'cargo generate-lockfile' (or cargo build) first"
  v=$(bindgen_version || true)
  if [[ "$v" != "$want" ]]; then
    wait_other_cargo_install wasm-bindgen-cli
    v=$(bindgen_version || true)
  fi
  if [[ "$v" == "$want" ]]; then
    step_done bindgen skipped "wasm-bindgen $v present (= Cargo.lock)"; return
  fi
  log "wasm-bindgen-cli: ${v:-missing} -> installing $want (~8 min)"
  # Not --locked: one of its locked dependencies is missing from the registry mirror.
  cargo install wasm-bindgen-cli --version "=$want" --force
  [[ "$(bindgen_version)" == "$want" ]] || die "wasm-bindgen-cli install did not yield $want"
  step_done bindgen installed "$want in $(elapsed "$t0")"
}

# ---- npm: playwright-core, binaryen (wasm-opt), esbuild in e2e/ ---------------------
npm_step() {
  local t0 stamp want; t0=$(now_s)
  have npm || die "npm not found"
  [[ -f e2e/package-lock.json ]] || die "e2e/package-lock.json missing (commit it; create with 'npm install' in e2e/)"
  stamp=e2e/node_modules/.saltscope-lock.sha256
  want=$(sha256sum e2e/package-lock.json e2e/package.json | sha256sum | cut -d' ' -f1)
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$SALTSCOPE_NODE_BIN/wasm-opt" && -x "$SALTSCOPE_NODE_BIN/esbuild" ]]; then
    step_done npm skipped "e2e/node_modules up to date"; return
  fi
  (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
  step_done npm installed "e2e/node_modules in $(elapsed "$t0")"
}

# ---- cargo: fetch crates so that later builds need no network -------------------
cargo_step() {
  local t0; t0=$(now_s)
  if cargo fetch --quiet 2>/dev/null; then
    step_done cargo ok "crates fetched in $(elapsed "$t0")"
  else
    cargo fetch   # show the error
  fi
}

# ---- engine (helper script owned by engine/) ----------------------------------------
engine_step() {
  local t0; t0=$(now_s)
  if [[ -x scripts/engine.sh ]]; then
    scripts/engine.sh install "${SETUP_ENGINE:-${ENGINE:-opensearch}}"
    step_done engine ok "scripts/engine.sh install ${SETUP_ENGINE:-${ENGINE:-opensearch}} in $(elapsed "$t0")"
  else
    warn "scripts/engine.sh not found: engine not installed"
    step_done engine MISSING "scripts/engine.sh absent"
  fi
}

# ---- salt venv (helper script owned by salt/) ----------------------------------------
salt_step() {
  local t0; t0=$(now_s)
  if [[ ! -x scripts/salt-data.sh ]]; then
    warn "scripts/salt-data.sh not found: salt venv not installed"
    step_done salt MISSING "scripts/salt-data.sh absent"; return
  fi
  local flag=""
  if grep -q -- '--venv-only' scripts/salt-data.sh; then flag=--venv-only
  elif grep -q -- '--install-only' scripts/salt-data.sh; then flag=--install-only
  fi
  if [[ -n "$flag" ]]; then
    scripts/salt-data.sh "$flag"
    step_done salt ok "scripts/salt-data.sh $flag in $(elapsed "$t0")"
  else
    # TODO(lead): salt-data.sh has no venv-only flag; set the right
    # invocation here to only create the Salt venv.
    warn "TODO: scripts/salt-data.sh has no --venv-only; venv is created on first data run"
    step_done salt TODO "no install-only mode in scripts/salt-data.sh"
  fi
}

for s in apt rust trunk bindgen npm cargo engine salt; do
  if skipped "$s"; then step_done "$s" skipped "SETUP_SKIP"; continue; fi
  "${s}_step"
done

echo "---- setup summary ($(elapsed "$T_ALL")) ----" >&2
printf '  %s\n' "${SUMMARY[@]}" >&2
