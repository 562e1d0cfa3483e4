#!/usr/bin/env bash
# Release build of the web app into dist/ with Trunk, fully offline:
#   - trunk 0.21.14 and wasm-bindgen-cli (= Cargo.lock's wasm-bindgen) come
#     from ~/.cargo/bin (scripts/setup.sh installs them);
#   - wasm-opt comes from npm's `binaryen` package in e2e/node_modules (Debian's
#     binaryen is too old for current Rust's wasm features).
# Trunk looks both up on PATH (`which`), checks `--version`, and with
# --offline never downloads: wasm-bindgen must match Cargo.lock exactly;
# wasm-opt is unpinned (no [tools] wasm_opt in Trunk.toml), so any version works.
#
#   scripts/build.sh [extra trunk build args]
# Prints the size of dist/ and its gzip -9 size at the end.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SALTSCOPE_REPO"

T0=$(now_s)
DIST_DIR=$SALTSCOPE_REPO/dist

have trunk || die "trunk not found: run scripts/setup.sh"
[[ "$(trunk --version | awk '{print $2}')" == 0.21.14 ]] \
  || warn "trunk $(trunk --version | awk '{print $2}') is not the pinned 0.21.14 (scripts/setup.sh installs it)"
want_bg=$(wasm_bindgen_lock_version)
have_bg=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
[[ -n "$have_bg" ]] || die "wasm-bindgen not found: run scripts/setup.sh"
[[ "$have_bg" == "$want_bg" ]] \
  || die "wasm-bindgen $have_bg on PATH but Cargo.lock wants $want_bg (Trunk --offline cannot download it): run scripts/setup.sh"
[[ -x "$SALTSCOPE_NODE_BIN/wasm-opt" ]] \
  || die "wasm-opt not found in e2e/node_modules (npm binaryen): run scripts/setup.sh"
rustup target list --installed 2>/dev/null | grep -x wasm32-unknown-unknown >/dev/null \
  || die "rust target wasm32-unknown-unknown missing: run scripts/setup.sh"

export PATH="$SALTSCOPE_NODE_BIN:$PATH"
export TRUNK_SKIP_VERSION_CHECK=true
log "trunk $(trunk --version | awk '{print $2}'), wasm-bindgen $have_bg, $(wasm-opt --version)"

trunk build --release --offline "$@"

[[ -f "$DIST_DIR/index.html" ]] || die "trunk finished but $DIST_DIR/index.html is missing"

# ---- sizes -------------------------------------------------------------------
total=0; gz=0
while IFS= read -r -d '' f; do
  s=$(stat -c %s "$f"); g=$(gzip -9c "$f" | wc -c)
  total=$((total + s)); gz=$((gz + g))
  printf '  %-50s %9d B  gzip %9d B\n' "${f#"$DIST_DIR"/}" "$s" "$g"
done < <(find "$DIST_DIR" -type f -print0 | sort -z)
human() { awk -v b="$1" 'BEGIN { if (b >= 1048576) printf "%.2f MiB", b/1048576; else printf "%.1f KiB", b/1024 }'; }
echo "dist: $(human "$total") ($total B), gzip -9: $(human "$gz") ($gz B) — built in $(elapsed "$T0")"
