#!/usr/bin/env bash
# An https engine for tests: a second nginx terminating TLS in front of the
# plain-http test engine, with a certificate you give it (tests make a CA and
# the certificate with openssl; see e2e/tls.test.mjs).
#
#   scripts/tls-front.sh start | stop | status
#
# Environment:
#   TLS_FRONT_PORT   listen port (https)          (default 8130)
#   TLS_FRONT_HOST   listen address               (default 127.0.0.1)
#   ENGINE_URL       the plain-http engine        (default http://127.0.0.1:9200)
#   TLS_FRONT_CERT   certificate chain (PEM)      (required)
#   TLS_FRONT_KEY    its private key (PEM)        (required)
# Run dir: $SALTSCOPE_WORK/tls-front-$TLS_FRONT_PORT/ (conf, logs).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NGINX_BIN=${NGINX_BIN:-/usr/sbin/nginx}
TLS_FRONT_PORT=${TLS_FRONT_PORT:-8130}
TLS_FRONT_HOST=${TLS_FRONT_HOST:-127.0.0.1}
ENGINE_URL=${ENGINE_URL:-http://127.0.0.1:9200}
TEMPLATE=$SALTSCOPE_REPO/scripts/fronts/tls-front.conf.template
RUNDIR=$SALTSCOPE_WORK/tls-front-$TLS_FRONT_PORT
CONF=$RUNDIR/nginx.conf
PIDFILE=$RUNDIR/nginx.pid
LABEL="TLS front on :$TLS_FRONT_PORT"

[[ -x "$NGINX_BIN" ]] || die "nginx not found at $NGINX_BIN: run scripts/setup.sh"

render() {
  [[ $ENGINE_URL =~ ^http://([A-Za-z0-9._-]+:[0-9]+)/?$ ]] || die "ENGINE_URL must be http://host:port (got '$ENGINE_URL')"
  local hostport=${BASH_REMATCH[1]}
  [[ -n ${TLS_FRONT_CERT:-} && -r $TLS_FRONT_CERT ]] || die "TLS_FRONT_CERT: a readable certificate file is required"
  [[ -n ${TLS_FRONT_KEY:-} && -r $TLS_FRONT_KEY ]] || die "TLS_FRONT_KEY: a readable key file is required"
  mkdir -p "$RUNDIR"; chmod 0711 "$RUNDIR"
  TLS_FRONT_RUNTIME="$(cd "$RUNDIR" && pwd)" \
  TLS_FRONT_LISTEN="$TLS_FRONT_HOST:$TLS_FRONT_PORT" \
  TLS_FRONT_ENGINE_HOSTPORT="$hostport" \
  TLS_FRONT_CERT="$(realpath "$TLS_FRONT_CERT")" \
  TLS_FRONT_KEY="$(realpath "$TLS_FRONT_KEY")" \
    envsubst '${TLS_FRONT_RUNTIME} ${TLS_FRONT_LISTEN} ${TLS_FRONT_ENGINE_HOSTPORT} ${TLS_FRONT_CERT} ${TLS_FRONT_KEY}' \
    <"$TEMPLATE" >"$CONF"
}

start() {
  if pid_alive "$PIDFILE"; then nginx_stop "$PIDFILE" "$LABEL"; fi
  port_in_use "$TLS_FRONT_PORT" && die "port $TLS_FRONT_PORT is already in use (set TLS_FRONT_PORT)"
  render
  local args=(-p "$RUNDIR/" -c "$CONF" -e "$RUNDIR/error.log") w
  w=$(nginx_worker_args); [[ -z $w ]] || args+=(-g "$w")
  "$NGINX_BIN" "${args[@]}" -t -q || die "nginx -t failed for $CONF"
  "$NGINX_BIN" "${args[@]}"
  local i
  for i in $(seq 1 50); do port_in_use "$TLS_FRONT_PORT" && break; sleep 0.1; done
  port_in_use "$TLS_FRONT_PORT" || { tail -n 20 "$RUNDIR/error.log" >&2; die "$LABEL did not start"; }
  log "$LABEL: https://$TLS_FRONT_HOST:$TLS_FRONT_PORT/ -> $ENGINE_URL"
}

case "${1:-}" in
  start)  start ;;
  stop)   nginx_stop "$PIDFILE" "$LABEL" ;;
  status) if pid_alive "$PIDFILE"; then echo "running (pid $(cat "$PIDFILE"))"; else echo "stopped"; exit 1; fi ;;
  *) echo "usage: $0 start|stop|status   (env TLS_FRONT_PORT ENGINE_URL TLS_FRONT_CERT TLS_FRONT_KEY)" >&2; exit 2 ;;
esac
