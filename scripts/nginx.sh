#!/usr/bin/env bash
# Serve a Saltscope build with the project's nginx config.
#
#   scripts/nginx.sh start     render deploy/nginx.conf.template, nginx -t, start
#   scripts/nginx.sh stop      stop the nginx started for NGINX_PORT
#   scripts/nginx.sh restart   stop + start (after changing a setting or config.json's
#                              engine_url; a rebuild of dist/ needs nothing)
#   scripts/nginx.sh status    exit 0 when running
#   scripts/nginx.sh render    only write the config (and print its path)
#
# Environment (deploy/README.md, "Production", explains each):
#   NGINX_PORT      plain-HTTP listen port                    (default 8080)
#   NGINX_HOST      listen address                            (default 127.0.0.1)
#   ENGINE_URL      engine URL, or several separated by commas or spaces
#                   (same scheme and path; nginx fails over)  (default http://127.0.0.1:9200)
#   DIST            the build to serve                        (default <repo>/dist)
#   SALTSCOPE_WORK  runtime state                             (default <repo>/.work)
#   SALTSCOPE_PROXY_READ_ONLY   1 (default): /es/ passes only searches and metadata
#                   reads; 0: DANGEROUS, every engine API is open through /es/
#   SALTSCOPE_ENGINE_AUTH_FILE  file (mode 0600) holding the Authorization value
#                   nginx sends to the engine: "Basic <base64>", "ApiKey <base64>",
#                   "Bearer <token>" or "user:password"; replaces the browser's.
#                   Unset: the browser's own Authorization header passes.
#   SALTSCOPE_ENGINE_CA_FILE    CA bundle for an https engine
#                   (default /etc/ssl/certs/ca-certificates.crt)
#   SALTSCOPE_ENGINE_TLS_NAME   name the engine certificate must carry
#                   (default: the first engine's host)
#   SALTSCOPE_TLS_CERT, SALTSCOPE_TLS_KEY  serve HTTPS with this certificate chain
#                   and key; NGINX_TLS_PORT (default 8443), NGINX_TLS_HOST
#                   (default NGINX_HOST); plain HTTP then redirects to HTTPS
#   NGINX_WORKER_USER  user of the worker processes when started as root
#                   (default www-data, else nobody); never root
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
READ_ONLY=${SALTSCOPE_PROXY_READ_ONLY:-1}
AUTH_FILE=${SALTSCOPE_ENGINE_AUTH_FILE:-}
ENGINE_CA_FILE=${SALTSCOPE_ENGINE_CA_FILE:-/etc/ssl/certs/ca-certificates.crt}
TLS_CERT=${SALTSCOPE_TLS_CERT:-}
TLS_KEY=${SALTSCOPE_TLS_KEY:-}
NGINX_TLS_PORT=${NGINX_TLS_PORT:-8443}
NGINX_TLS_HOST=${NGINX_TLS_HOST:-$NGINX_HOST}

[[ -x "$NGINX_BIN" ]] || die "nginx not found at $NGINX_BIN: run scripts/setup.sh (apt-get install nginx)"
have envsubst || die "envsubst not found: run scripts/setup.sh (apt-get install gettext-base)"

NGINX_ARGS=(-p "$RUNDIR/" -c "$CONF" -e "$RUNDIR/error.log")
# Started as root (CI, a service): the master keeps root (ports < 1024, the
# key and the credentials file stay root-only); the workers, which talk to the
# network, run as NGINX_WORKER_USER (www-data). Never root (lib.sh).
WORKER_USER=$(nginx_worker_user)
WORKER_ARGS=$(nginx_worker_args)
[[ -z $WORKER_ARGS ]] || NGINX_ARGS+=(-g "$WORKER_ARGS")

# ---- settings -> template values -------------------------------------------------

# ENGINE_URL: one URL or several (comma or space separated), all with the same
# scheme and path. Sets ENGINE_SCHEME ENGINE_PATH ENGINE_HOST_HEADER
# ENGINE_FIRST_HOST UPSTREAM_SERVERS.
parse_engines() {
  local list=${ENGINE_URL//,/ } url scheme host port path n=0
  UPSTREAM_SERVERS=""
  for url in $list; do
    if [[ ! $url =~ ^(https?)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:([0-9]{1,5}))?(/[A-Za-z0-9._~/-]*)?$ ]]; then
      die "ENGINE_URL: '$url' is not an http(s)://host[:port][/path] URL"
    fi
    scheme=${BASH_REMATCH[1]}; host=${BASH_REMATCH[2]}; port=${BASH_REMATCH[4]}; path=${BASH_REMATCH[5]%/}
    if (( n == 0 )); then
      ENGINE_SCHEME=$scheme; ENGINE_PATH=$path; ENGINE_FIRST_HOST=${host#[}; ENGINE_FIRST_HOST=${ENGINE_FIRST_HOST%]}
      ENGINE_HOST_HEADER=$host${port:+:$port}
    elif [[ $scheme != "$ENGINE_SCHEME" || $path != "$ENGINE_PATH" ]]; then
      die "ENGINE_URL: every engine needs the same scheme and path ('$url' differs from the first)"
    fi
    [[ -n $port ]] || port=$([[ $scheme == https ]] && echo 443 || echo 80)
    UPSTREAM_SERVERS+="        server $host:$port max_fails=1 fail_timeout=10s;"$'\n'
    n=$((n + 1))
  done
  (( n > 0 )) || die "ENGINE_URL is empty"
  UPSTREAM_SERVERS=${UPSTREAM_SERVERS%$'\n'}
}

# The Authorization nginx sends to the engine, as an nginx include (mode 0600).
write_engine_auth() {
  local out=$RUNDIR/engine-auth.conf value mode
  if [[ -z "$AUTH_FILE" ]]; then
    printf '%s\n' '# No SALTSCOPE_ENGINE_AUTH_FILE: the browser'"'"'s own Authorization header passes.' \
      'map $http_authorization $saltscope_engine_authorization { default $http_authorization; }' >"$out"
    return
  fi
  [[ -f "$AUTH_FILE" && -r "$AUTH_FILE" ]] || die "SALTSCOPE_ENGINE_AUTH_FILE=$AUTH_FILE: not a readable file"
  mode=$(stat -L -c %a "$AUTH_FILE")
  (( (8#$mode & 8#077) == 0 )) \
    || die "SALTSCOPE_ENGINE_AUTH_FILE=$AUTH_FILE is readable by others (mode $mode; group or others have access): chmod 600 it"
  value=$(head -n 1 "$AUTH_FILE" | tr -d '\r')
  value=${value#"${value%%[![:space:]]*}"}; value=${value%"${value##*[![:space:]]}"}
  if [[ ! $value =~ ^(Basic|ApiKey|Bearer)\  && $value == *:* ]]; then
    value="Basic $(printf '%s' "$value" | base64 -w0)"     # user:password
  fi
  [[ $value =~ ^(Basic|ApiKey|Bearer)\ [A-Za-z0-9+/=._~-]+$ ]] \
    || die "SALTSCOPE_ENGINE_AUTH_FILE=$AUTH_FILE: first line must be 'Basic <base64>', 'ApiKey <base64>', 'Bearer <token>' or 'user:password'"
  rm -f "$out.tmp"
  ( umask 077
    printf '%s\n' "# From SALTSCOPE_ENGINE_AUTH_FILE ($AUTH_FILE); replaces the browser's Authorization." \
      "map \$scheme \$saltscope_engine_authorization { default \"$value\"; }" >"$out.tmp" )
  mv "$out.tmp" "$out"
}

# connect-src: the origins of config.json's engine_url when absolute
# (direct-to-engine with CORS; one URL or a list). Read at start: edit
# config.json, then restart.
connect_src() {
  local origins="" origin out=""
  if [[ -f "$DIST/config.json" ]] && have node; then
    origins=$(node -e '
      try {
        const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        for (const u of [].concat(c.engine_url)) {
          try { console.log(new URL(u).origin); } catch (e) { /* "/es": the proxy */ }
        }
      } catch (e) {}
    ' "$DIST/config.json")
  fi
  # A plain origin (IPv6 in brackets allowed): nothing that could end the header.
  local plain='^https?://[][A-Za-z0-9.:-]+$'
  for origin in $origins; do
    if [[ ! $origin =~ $plain ]]; then
      warn "config.json engine_url origin '$origin' ignored for the CSP"; continue
    fi
    out+=" $origin"
  done
  printf '%s' "$out"
}

render() {
  [[ -f "$TEMPLATE" ]] || die "missing $TEMPLATE"
  [[ -d "$DIST" ]] || die "no build at $DIST: run scripts/build.sh first (or set DIST=...)"
  [[ -f "$DIST/index.html" ]] || warn "$DIST/index.html missing: nginx serves the build once scripts/build.sh writes it (no reload needed)"
  case $READ_ONLY in
    1) ES_DEFAULT=refused ;;
    0) ES_DEFAULT=ok; warn "SALTSCOPE_PROXY_READ_ONLY=0: /es/ passes EVERY request to the engine (writes, deletes, cluster settings)" ;;
    *) die "SALTSCOPE_PROXY_READ_ONLY must be 1 (default) or 0, not '$READ_ONLY'" ;;
  esac
  parse_engines
  [[ -r "$ENGINE_CA_FILE" ]] || die "SALTSCOPE_ENGINE_CA_FILE=$ENGINE_CA_FILE: not readable"
  local tls_name=${SALTSCOPE_ENGINE_TLS_NAME:-$ENGINE_FIRST_HOST}
  [[ $tls_name =~ ^[A-Za-z0-9.:_-]+$ ]] || die "SALTSCOPE_ENGINE_TLS_NAME='$tls_name' is not a host name"
  local tls=0
  if [[ -n "$TLS_CERT$TLS_KEY" ]]; then
    [[ -n "$TLS_CERT" && -n "$TLS_KEY" ]] || die "HTTPS needs both SALTSCOPE_TLS_CERT and SALTSCOPE_TLS_KEY"
    [[ -r "$TLS_CERT" ]] || die "SALTSCOPE_TLS_CERT=$TLS_CERT: not readable"
    [[ -r "$TLS_KEY" ]] || die "SALTSCOPE_TLS_KEY=$TLS_KEY: not readable"
    tls=1
  fi
  mkdir -p "$RUNDIR"
  # Workers (another user when started as root) only need to get through to
  # their temp directories; the conf and the credentials include stay private.
  chmod 0711 "$RUNDIR"
  if [[ $WORKER_USER != "$(id -un)" ]]; then
    # A throw-away CI checkout may sit under a private home: there (CI=true
    # only) let the workers through its parents, search bit only, rather
    # than run them as root.
    if [[ ${CI:-} == true ]] && ! runuser -u "$WORKER_USER" -- test -x "$DIST/." -a -x "$RUNDIR/."; then
      local d
      for d in "$DIST" "$RUNDIR"; do
        d=$(cd "$d" && pwd)
        while [[ $d != / ]]; do chmod o+x "$d"; d=$(dirname "$d"); done
      done
      chmod -R o+rX "$DIST"
      warn "CI: gave o+x to the parents of $DIST and $RUNDIR so that $WORKER_USER can serve them"
    fi
    runuser -u "$WORKER_USER" -- test -r "$DIST/." -a -x "$DIST/." \
      || die "the nginx workers run as $WORKER_USER, who cannot read $DIST: make it and its parent directories readable (o+rx), or set NGINX_WORKER_USER"
    runuser -u "$WORKER_USER" -- test -x "$RUNDIR/." \
      || die "the nginx workers run as $WORKER_USER, who cannot reach $RUNDIR (temp files): give its parent directories o+x, or set SALTSCOPE_WORK elsewhere"
  fi
  write_engine_auth
  # Debian's brotli modules (libnginx-mod-http-brotli-static and -filter),
  # each loaded when installed; the template's lines marked "#<name> " are
  # switched on with it.
  local name module load_modules=() loaded=()
  local -A without=(
    [brotli_static]="only the .gz copies are served (apt-get install libnginx-mod-http-brotli-static)"
    [brotli_filter]="the engine's answers are gzipped (apt-get install libnginx-mod-http-brotli-filter)"
  )
  for name in brotli_static brotli_filter; do
    module=/usr/lib/nginx/modules/ngx_http_${name}_module.so
    if [[ -f $module ]]; then
      load_modules+=("load_module $module;")
      loaded+=("$name")
    else
      warn "no $name module ($module): ${without[$name]}"
    fi
  done
  SALTSCOPE_LOAD_MODULES="$(printf '%s\n' "${load_modules[@]}")" \
  SALTSCOPE_LISTEN="$NGINX_HOST:$NGINX_PORT" \
  SALTSCOPE_ROOT="$(cd "$DIST" && pwd)" \
  SALTSCOPE_RUNTIME="$(cd "$RUNDIR" && pwd)" \
  SALTSCOPE_UPSTREAM_SERVERS="$UPSTREAM_SERVERS" \
  SALTSCOPE_ENGINE_SCHEME="$ENGINE_SCHEME" \
  SALTSCOPE_ENGINE_PATH="$ENGINE_PATH" \
  SALTSCOPE_ENGINE_HOST="$ENGINE_HOST_HEADER" \
  SALTSCOPE_ENGINE_TLS_NAME="$tls_name" \
  SALTSCOPE_ENGINE_CA_FILE="$(realpath "$ENGINE_CA_FILE")" \
  SALTSCOPE_ES_DEFAULT="$ES_DEFAULT" \
  SALTSCOPE_CONNECT_SRC="$(connect_src)" \
  SALTSCOPE_TLS_LISTEN="$NGINX_TLS_HOST:$NGINX_TLS_PORT" \
  SALTSCOPE_TLS_CERT="${TLS_CERT:+$(realpath "$TLS_CERT")}" \
  SALTSCOPE_TLS_KEY="${TLS_KEY:+$(realpath "$TLS_KEY")}" \
  SALTSCOPE_TLS_PORT_SUFFIX="$([[ $NGINX_TLS_PORT == 443 ]] || echo ":$NGINX_TLS_PORT")" \
    envsubst '${SALTSCOPE_LOAD_MODULES} ${SALTSCOPE_LISTEN} ${SALTSCOPE_ROOT} ${SALTSCOPE_RUNTIME} ${SALTSCOPE_UPSTREAM_SERVERS}
              ${SALTSCOPE_ENGINE_SCHEME} ${SALTSCOPE_ENGINE_PATH} ${SALTSCOPE_ENGINE_HOST}
              ${SALTSCOPE_ENGINE_TLS_NAME} ${SALTSCOPE_ENGINE_CA_FILE} ${SALTSCOPE_ES_DEFAULT}
              ${SALTSCOPE_CONNECT_SRC} ${SALTSCOPE_TLS_LISTEN} ${SALTSCOPE_TLS_CERT}
              ${SALTSCOPE_TLS_KEY} ${SALTSCOPE_TLS_PORT_SUFFIX}' \
    <"$TEMPLATE" >"$CONF.tmp"
  if (( tls )); then
    sed -i 's/^\([[:space:]]*\)#tls /\1/' "$CONF.tmp"
  fi
  for name in "${loaded[@]}"; do
    sed -i "s/^\([[:space:]]*\)#$name /\1/" "$CONF.tmp"
  done
  mv "$CONF.tmp" "$CONF"
}

stop() {
  nginx_stop "$PIDFILE" "nginx on :$NGINX_PORT"
}

start() {
  if pid_alive "$PIDFILE"; then
    log "nginx on :$NGINX_PORT already running; restarting"
    stop
  fi
  if port_in_use "$NGINX_PORT"; then
    die "port $NGINX_PORT is already in use by another process (set NGINX_PORT)"
  fi
  if [[ -n "$TLS_CERT" ]] && port_in_use "$NGINX_TLS_PORT"; then
    die "port $NGINX_TLS_PORT is already in use by another process (set NGINX_TLS_PORT)"
  fi
  render
  if ! "$NGINX_BIN" "${NGINX_ARGS[@]}" -t -q; then
    die "nginx -t failed for $CONF"
  fi
  "$NGINX_BIN" "${NGINX_ARGS[@]}"
  # /favicon.ico answers (204) with or without a build in $DIST.
  if ! wait_http "http://$NGINX_HOST:$NGINX_PORT/favicon.ico" 10; then
    tail -n 20 "$RUNDIR/error.log" >&2 || true
    die "nginx did not answer on $NGINX_HOST:$NGINX_PORT"
  fi
  local what="read-only"
  [[ $READ_ONLY == 1 ]] || what="READ-WRITE"
  [[ -z "$AUTH_FILE" ]] || what+=", credentials from $AUTH_FILE"
  log "nginx serving $DIST on http://$NGINX_HOST:$NGINX_PORT/$([[ -n "$TLS_CERT" ]] && echo " and https://$NGINX_TLS_HOST:$NGINX_TLS_PORT/") (/es/ -> ${ENGINE_URL}, $what; workers as $WORKER_USER); conf $CONF"
}

case "${1:-}" in
  start)   start ;;
  stop)    stop ;;
  restart) stop; start ;;
  status)  if pid_alive "$PIDFILE"; then echo "running (pid $(cat "$PIDFILE"))"; else echo "stopped"; exit 1; fi ;;
  render)  render; echo "$CONF" ;;
  *) echo "usage: $0 start|stop|restart|status|render   (env NGINX_PORT ENGINE_URL DIST SALTSCOPE_WORK ...; see the header of $0)" >&2; exit 2 ;;
esac
