#!/usr/bin/env bash
# Serve a Saltscope build with the project's nginx config.
#
#   scripts/nginx.sh start     render deploy/nginx.conf.template, nginx -t, start
#   scripts/nginx.sh stop      stop the nginx started for NGINX_PORT
#   scripts/nginx.sh restart   stop + start (re-renders: do this after a rebuild,
#                              the CSP carries the hash of Trunk's inline loader)
#   scripts/nginx.sh status    exit 0 when running
#   scripts/nginx.sh render    only write the config (and print its path)
#
# Environment:
#   NGINX_PORT      listen port                     (default 8080)
#   NGINX_HOST      listen address                  (default 127.0.0.1)
#   ENGINE_URL      Elasticsearch/OpenSearch URL    (default http://127.0.0.1:9200)
#   DIST            the build to serve              (default <repo>/dist)
#   SALTSCOPE_WORK  runtime state                   (default <repo>/.work)
# Runtime files: $SALTSCOPE_WORK/nginx-$NGINX_PORT/{nginx.conf,nginx.pid,*.log}
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NGINX_BIN=${NGINX_BIN:-/usr/sbin/nginx}
NGINX_PORT=${NGINX_PORT:-8080}
NGINX_HOST=${NGINX_HOST:-127.0.0.1}
ENGINE_URL=${ENGINE_URL:-http://127.0.0.1:9200}
DIST=${DIST:-$SALTSCOPE_REPO/dist}
TEMPLATE=$SALTSCOPE_REPO/deploy/nginx.conf.template
RUNDIR=$SALTSCOPE_WORK/nginx-$NGINX_PORT
CONF=$RUNDIR/nginx.conf
PIDFILE=$RUNDIR/nginx.pid

[[ -x "$NGINX_BIN" ]] || die "nginx not found at $NGINX_BIN: run scripts/setup.sh (apt-get install nginx)"
have envsubst || die "envsubst not found: run scripts/setup.sh (apt-get install gettext-base)"

# nginx's master drops workers to 'nobody' when started as root; keep them as
# the invoking user so they can read a dist/ under a private home directory.
NGINX_ARGS=(-p "$RUNDIR/" -c "$CONF" -e "$RUNDIR/error.log")
if [[ $(id -u) -eq 0 ]]; then
  NGINX_ARGS+=(-g "user $(id -un) $(id -gn);")
fi

# Content-Security-Policy for the build in $DIST:
#  - script-src: 'self', 'wasm-unsafe-eval' (instantiate wasm) and the sha256
#    of each inline <script> in index.html (Trunk injects an inline module
#    script that imports the wasm-bindgen JS and calls init()).
#  - connect-src: 'self' plus the origin of config.json's engine_url when that
#    is an absolute URL (direct-to-engine with CORS).
#  - style-src allows inline style attributes, which the view code may set.
compute_csp() {
  local script_hashes="" engine_origin=""
  if [[ -f "$DIST/index.html" ]] && have node; then
    script_hashes=$(node -e '
      const fs = require("fs"), crypto = require("crypto");
      const html = fs.readFileSync(process.argv[1], "utf8");
      const out = [];
      for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
        if (/\bsrc\s*=/.test(m[1])) continue;
        out.push("'"'"'sha256-" + crypto.createHash("sha256").update(m[2], "utf8").digest("base64") + "'"'"'");
      }
      process.stdout.write(out.join(" "));
    ' "$DIST/index.html")
  elif [[ -f "$DIST/index.html" ]] && grep -qi '<script' "$DIST/index.html"; then
    warn "node not found: cannot hash index.html's inline scripts; CSP will block them"
  fi
  if [[ -f "$DIST/config.json" ]] && have node; then
    engine_origin=$(node -e '
      try {
        const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        const u = new URL(c.engine_url);           // throws for relative "/es"
        process.stdout.write(u.origin);
      } catch (e) {}
    ' "$DIST/config.json")
  fi
  local csp="default-src 'self'"
  csp+="; script-src 'self' 'wasm-unsafe-eval'${script_hashes:+ $script_hashes}"
  csp+="; worker-src 'self'"
  csp+="; style-src 'self' 'unsafe-inline'"
  csp+="; img-src 'self' data:"
  csp+="; font-src 'self'"
  csp+="; connect-src 'self'${engine_origin:+ $engine_origin}"
  csp+="; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
  printf '%s' "$csp"
}

render() {
  [[ -f "$TEMPLATE" ]] || die "missing $TEMPLATE"
  [[ -d "$DIST" ]] || die "no build at $DIST: run scripts/build.sh first (or set DIST=...)"
  [[ -f "$DIST/index.html" ]] || die "$DIST/index.html missing: run scripts/build.sh first"
  mkdir -p "$RUNDIR"
  SALTSCOPE_LISTEN="$NGINX_HOST:$NGINX_PORT" \
  SALTSCOPE_ROOT="$(cd "$DIST" && pwd)" \
  SALTSCOPE_ENGINE="${ENGINE_URL%/}" \
  SALTSCOPE_RUNTIME="$(cd "$RUNDIR" && pwd)" \
  SALTSCOPE_CSP="$(compute_csp)" \
    envsubst '${SALTSCOPE_LISTEN} ${SALTSCOPE_ROOT} ${SALTSCOPE_ENGINE} ${SALTSCOPE_RUNTIME} ${SALTSCOPE_CSP}' \
    <"$TEMPLATE" >"$CONF.tmp"
  mv "$CONF.tmp" "$CONF"
}

stop() {
  if ! pid_alive "$PIDFILE"; then
    rm -f "$PIDFILE"
    log "nginx on :$NGINX_PORT not running"
    return 0
  fi
  local pid i
  pid=$(tr -dc '0-9' <"$PIDFILE")
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    warn "nginx (pid $pid) did not stop in 5s; killing"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
  log "nginx on :$NGINX_PORT stopped (pid $pid)"
}

start() {
  if pid_alive "$PIDFILE"; then
    log "nginx on :$NGINX_PORT already running; restarting"
    stop
  fi
  if port_in_use "$NGINX_PORT"; then
    die "port $NGINX_PORT is already in use by another process (set NGINX_PORT)"
  fi
  render
  if ! "$NGINX_BIN" "${NGINX_ARGS[@]}" -t -q; then
    die "nginx -t failed for $CONF"
  fi
  "$NGINX_BIN" "${NGINX_ARGS[@]}"
  if ! wait_http "http://$NGINX_HOST:$NGINX_PORT/" 10; then
    tail -n 20 "$RUNDIR/error.log" >&2 || true
    die "nginx did not answer on $NGINX_HOST:$NGINX_PORT"
  fi
  log "nginx serving $DIST on http://$NGINX_HOST:$NGINX_PORT/ (/es/ -> ${ENGINE_URL%/}); conf $CONF"
}

case "${1:-}" in
  start)   start ;;
  stop)    stop ;;
  restart) stop; start ;;
  status)  if pid_alive "$PIDFILE"; then echo "running (pid $(cat "$PIDFILE"))"; else echo "stopped"; exit 1; fi ;;
  render)  render; echo "$CONF" ;;
  *) echo "usage: $0 start|stop|restart|status|render   (env NGINX_PORT ENGINE_URL DIST SALTSCOPE_WORK)" >&2; exit 2 ;;
esac
