#!/usr/bin/env bash
# Run Saltscope locally with real Salt data:
#
#   scripts/demo.sh          setup, build, engine on :9200, Salt data, nginx on :8080
#   scripts/demo.sh stop     stop the demo's nginx and engine
#
# Env: ENGINE (opensearch|elasticsearch, default opensearch), ENGINE_PORT (9200),
#      NGINX_PORT (8080), SKIP_SETUP=1 / SKIP_BUILD=1 / SKIP_DATA=1 to skip steps.
# Engine and nginx keep running after the script exits.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SALTSCOPE_REPO"

export ENGINE=${ENGINE:-opensearch}
export ENGINE_PORT=${ENGINE_PORT:-9200}
export NGINX_PORT=${NGINX_PORT:-8080}
ES_URL=http://127.0.0.1:$ENGINE_PORT
STATE=$SALTSCOPE_WORK/demo.env

if [[ "${1:-}" == stop ]]; then
  # stop what the last demo started (its ports and product are recorded)
  if [[ -f "$STATE" ]]; then . "$STATE"; fi
  NGINX_PORT=$NGINX_PORT scripts/nginx.sh stop || true
  if [[ -x scripts/engine.sh ]]; then
    ENGINE=$ENGINE ENGINE_PORT=$ENGINE_PORT scripts/engine.sh stop || true
  fi
  rm -f "$STATE"
  exit 0
fi
[[ $# -eq 0 ]] || die "usage: $0 [stop]"

T0=$(now_s)
step() { log "== $* =="; }

if [[ "${SKIP_SETUP:-0}" != 1 ]]; then step setup; scripts/setup.sh; fi
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then step build; scripts/build.sh; fi
[[ -f dist/index.html ]] || die "no dist/index.html: scripts/build.sh failed or was skipped"

[[ -x scripts/engine.sh ]] || die "scripts/engine.sh is missing: cannot start the search engine"
mkdir -p "$SALTSCOPE_WORK"
printf 'ENGINE=%q\nENGINE_PORT=%q\nNGINX_PORT=%q\n' "$ENGINE" "$ENGINE_PORT" "$NGINX_PORT" >"$STATE"

step "engine $ENGINE on :$ENGINE_PORT"
if curl -sf --max-time 3 "$ES_URL/" >/dev/null 2>&1; then
  log "an engine already answers on $ES_URL; using it"
else
  ENGINE_CORS_ORIGIN=http://127.0.0.1:$NGINX_PORT,http://localhost:$NGINX_PORT scripts/engine.sh start </dev/null
fi

if [[ "${SKIP_DATA:-0}" != 1 ]]; then
  step "Salt data into $ES_URL"
  [[ -x scripts/salt-data.sh ]] || die "scripts/salt-data.sh is missing: cannot produce Salt data"
  ES_URL=$ES_URL scripts/salt-data.sh </dev/null
fi

step "nginx on :$NGINX_PORT"
NGINX_PORT=$NGINX_PORT ENGINE_URL=$ES_URL scripts/nginx.sh start

echo
echo "Saltscope demo ready in $(elapsed "$T0") ($ENGINE at $ES_URL, proxied as /es/)."
echo "Open http://127.0.0.1:$NGINX_PORT/"
echo "Stop with: scripts/demo.sh stop"
