#!/usr/bin/env bash
# A real authenticating front for the OSS test engines (which have no security
# plugin here), deployed the way their operators do it: a second nginx between
# Saltscope's proxy (or the browser) and the engine, with
#   - auth_basic against an htpasswd made with `openssl passwd`, and
#   - an API key check: `Authorization: ApiKey <key>` against a key file,
# answering 401 with the engine's own JSON
#   {"error":{"type":"security_exception","reason":"missing authentication
#    credentials for REST request [/]",...},"status":401}
# and `WWW-Authenticate: Basic realm="security"`, like Elasticsearch/OpenSearch
# security. The engine behind it sees no Authorization.
#
#   scripts/auth-front.sh start | stop | status | credentials
#
# Environment:
#   AUTH_FRONT_PORT      listen port                       (default 8120)
#   AUTH_FRONT_HOST      listen address                    (default 127.0.0.1)
#   ENGINE_URL           the engine                        (default http://127.0.0.1:9200)
#   AUTH_FRONT_USER      Basic user                        (default saltscope)
#   AUTH_FRONT_PASSWORD  its password (default: a random one, kept in <run dir>/password)
#   AUTH_FRONT_HTPASSWD  an htpasswd file to use instead of USER/PASSWORD
#   AUTH_FRONT_API_KEY_FILE  file holding the accepted API key, the part after
#                        "ApiKey " (default: a random one, kept in <run dir>/api-key)
#   AUTH_FRONT_REALM     realm of WWW-Authenticate         (default security)
# Run dir: $SALTSCOPE_WORK/auth-front-$AUTH_FRONT_PORT/ (password, api-key, htpasswd,
# logs; the secrets mode 0600). `credentials` prints where they are.
#
# For the app's sign-in tests:
#   ENGINE=opensearch ENGINE_PORT=9200 scripts/engine.sh start
#   AUTH_FRONT_PORT=8120 ENGINE_URL=http://127.0.0.1:9200 AUTH_FRONT_PASSWORD=s3cret scripts/auth-front.sh start
#   NGINX_PORT=8080 ENGINE_URL=http://127.0.0.1:8120 scripts/nginx.sh start
#   -> the app at :8080 gets 401 until it sends "Basic base64(saltscope:s3cret)"
#      or "ApiKey $(cat $SALTSCOPE_WORK/auth-front-8120/api-key)".
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NGINX_BIN=${NGINX_BIN:-/usr/sbin/nginx}
AUTH_FRONT_PORT=${AUTH_FRONT_PORT:-8120}
AUTH_FRONT_HOST=${AUTH_FRONT_HOST:-127.0.0.1}
ENGINE_URL=${ENGINE_URL:-http://127.0.0.1:9200}
AUTH_FRONT_USER=${AUTH_FRONT_USER:-saltscope}
AUTH_FRONT_REALM=${AUTH_FRONT_REALM:-security}
TEMPLATE=$SALTSCOPE_REPO/scripts/fronts/auth-front.conf.template
RUNDIR=$SALTSCOPE_WORK/auth-front-$AUTH_FRONT_PORT
CONF=$RUNDIR/nginx.conf
PIDFILE=$RUNDIR/nginx.pid
LABEL="auth front on :$AUTH_FRONT_PORT"

have openssl || die "openssl not found (apt-get install openssl)"
[[ -x "$NGINX_BIN" ]] || die "nginx not found at $NGINX_BIN: run scripts/setup.sh"

secret() { openssl rand -hex 16; }

render() {
  [[ $ENGINE_URL =~ ^(https?)://([A-Za-z0-9._-]+:[0-9]+)/?$ ]] \
    || die "ENGINE_URL must be http(s)://host:port (got '$ENGINE_URL')"
  local scheme=${BASH_REMATCH[1]} hostport=${BASH_REMATCH[2]} worker key
  [[ $AUTH_FRONT_REALM =~ ^[A-Za-z0-9\ ._-]+$ ]] || die "AUTH_FRONT_REALM: letters, digits, space . _ - only"
  mkdir -p "$RUNDIR"; chmod 0711 "$RUNDIR"
  worker=$(nginx_worker_user)
  (
    umask 077
    # Basic: an htpasswd made here with openssl passwd (SHA-512 crypt), unless given.
    if [[ -n ${AUTH_FRONT_HTPASSWD:-} ]]; then
      cp "$AUTH_FRONT_HTPASSWD" "$RUNDIR/htpasswd"
    else
      [[ $AUTH_FRONT_USER =~ ^[A-Za-z0-9@._-]+$ ]] || die "AUTH_FRONT_USER: letters, digits, @ . _ - only"
      if [[ -n ${AUTH_FRONT_PASSWORD:-} ]]; then
        printf '%s\n' "$AUTH_FRONT_PASSWORD" >"$RUNDIR/password"
      elif [[ ! -s $RUNDIR/password ]]; then
        secret >"$RUNDIR/password"
      fi
      printf '%s:%s\n' "$AUTH_FRONT_USER" "$(head -n1 "$RUNDIR/password" | openssl passwd -6 -stdin)" >"$RUNDIR/htpasswd"
    fi
    # API key: compared whole and case-sensitively (a regex of the escaped key).
    if [[ -n ${AUTH_FRONT_API_KEY_FILE:-} ]]; then
      key=$(head -n1 "$AUTH_FRONT_API_KEY_FILE" | tr -d '\r\n')
      printf '%s\n' "$key" >"$RUNDIR/api-key"
    elif [[ -s $RUNDIR/api-key ]]; then
      key=$(head -n1 "$RUNDIR/api-key")
    else
      key=$(printf '%s' "saltscope-test:$(secret)" | base64 -w0)
      printf '%s\n' "$key" >"$RUNDIR/api-key"
    fi
    [[ $key =~ ^[A-Za-z0-9+/=._~-]+$ ]] || die "the API key must be base64 or token characters"
    printf 'map $http_authorization $auth_front_realm {\n    default "%s";\n    "~^ApiKey %s$" off;\n}\n' \
      "$AUTH_FRONT_REALM" "$(printf '%s' "$key" | sed 's/[.+]/\\&/g')" >"$RUNDIR/api-key.conf"
  )
  # auth_basic reads the htpasswd in the worker, at each request.
  [[ $worker == "$(id -un)" ]] || chown "$worker" "$RUNDIR/htpasswd"
  AUTH_FRONT_RUNTIME="$(cd "$RUNDIR" && pwd)" \
  AUTH_FRONT_LISTEN="$AUTH_FRONT_HOST:$AUTH_FRONT_PORT" \
  AUTH_FRONT_ENGINE_SCHEME="$scheme" \
  AUTH_FRONT_ENGINE_HOSTPORT="$hostport" \
  AUTH_FRONT_REALM="$AUTH_FRONT_REALM" \
    envsubst '${AUTH_FRONT_RUNTIME} ${AUTH_FRONT_LISTEN} ${AUTH_FRONT_ENGINE_SCHEME} ${AUTH_FRONT_ENGINE_HOSTPORT} ${AUTH_FRONT_REALM}' \
    <"$TEMPLATE" >"$CONF"
}

start() {
  if pid_alive "$PIDFILE"; then nginx_stop "$PIDFILE" "$LABEL"; fi
  port_in_use "$AUTH_FRONT_PORT" && die "port $AUTH_FRONT_PORT is already in use (set AUTH_FRONT_PORT)"
  render
  local args=(-p "$RUNDIR/" -c "$CONF" -e "$RUNDIR/error.log") w
  w=$(nginx_worker_args); [[ -z $w ]] || args+=(-g "$w")
  "$NGINX_BIN" "${args[@]}" -t -q || die "nginx -t failed for $CONF"
  "$NGINX_BIN" "${args[@]}"
  wait_http "http://$AUTH_FRONT_HOST:$AUTH_FRONT_PORT/" 10 || { tail -n 20 "$RUNDIR/error.log" >&2; die "$LABEL did not answer"; }
  log "$LABEL -> $ENGINE_URL (Basic user ${AUTH_FRONT_HTPASSWD:+from $AUTH_FRONT_HTPASSWD}${AUTH_FRONT_HTPASSWD:-$AUTH_FRONT_USER, password in $RUNDIR/password}; ApiKey in $RUNDIR/api-key)"
}

case "${1:-}" in
  start)       start ;;
  stop)        nginx_stop "$PIDFILE" "$LABEL" ;;
  status)      if pid_alive "$PIDFILE"; then echo "running (pid $(cat "$PIDFILE"))"; else echo "stopped"; exit 1; fi ;;
  credentials) echo "user: $AUTH_FRONT_USER"; echo "password file: $RUNDIR/password"; echo "api key file: $RUNDIR/api-key" ;;
  *) echo "usage: $0 start|stop|status|credentials   (env AUTH_FRONT_PORT ENGINE_URL AUTH_FRONT_PASSWORD ...)" >&2; exit 2 ;;
esac
