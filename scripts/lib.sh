# shellcheck shell=bash
# Shared shell helpers for Saltscope's scripts. Source it, don't run it:
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# Keep it dependency-free (bash, coreutils, curl) and side-effect-free on
# source: it only defines variables and functions.

[[ -n "${_SALTSCOPE_LIB_SH:-}" ]] && return 0
_SALTSCOPE_LIB_SH=1

# Repo root (scripts/..), whatever the caller's cwd.
SALTSCOPE_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Scratch space for runtime state (nginx confs, engine data, salt venv, logs).
: "${SALTSCOPE_WORK:=$SALTSCOPE_REPO/.work}"
export SALTSCOPE_WORK

# The toolchain lives in ~/.cargo/bin on these machines; scripts may be run
# from a shell whose PATH lacks it (CI, sudo, cron).
case ":$PATH:" in
  *":$HOME/.cargo/bin:"*) ;;
  *) PATH="$HOME/.cargo/bin:$PATH" ;;
esac
export PATH

# ---- logging ---------------------------------------------------------------
_ss_tag() { printf '[%s]' "$(basename "${0:-saltscope}" .sh)"; }
log()  { printf '%s %s\n' "$(_ss_tag)" "$*" >&2; }
warn() { printf '%s WARNING: %s\n' "$(_ss_tag)" "$*" >&2; }
die()  { printf '%s ERROR: %s\n' "$(_ss_tag)" "$*" >&2; exit 1; }

have() { command -v "$1" >/dev/null 2>&1; }

# Seconds since the epoch with millisecond-ish precision, for step timings.
now_s() { date +%s.%N; }
# elapsed START -> "12.3s"
elapsed() { awk -v a="$1" -v b="$(now_s)" 'BEGIN { printf "%.1fs", b - a }'; }

# ---- processes and ports ---------------------------------------------------
# port_in_use PORT -> 0 when something listens on 127.0.0.1:PORT
port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# wait_http URL [TIMEOUT_SECONDS] -> 0 once URL answers any HTTP status < 500
wait_http() {
  local url=$1 timeout=${2:-60} t0 code
  t0=$(date +%s)
  while :; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$url" 2>/dev/null || true)
    if [[ "$code" =~ ^[1-4][0-9][0-9]$ ]]; then return 0; fi
    if (( $(date +%s) - t0 >= timeout )); then return 1; fi
    sleep 0.5
  done
}

# pid_alive PIDFILE -> 0 when the pid in PIDFILE is a running process
pid_alive() {
  local pid
  [[ -s "$1" ]] || return 1
  pid=$(tr -dc '0-9' <"$1")
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}

# ---- project tools -----------------------------------------------------------
# Binaries installed by `npm ci` in e2e/ (playwright-core, binaryen's wasm-opt).
SALTSCOPE_NODE_BIN="$SALTSCOPE_REPO/e2e/node_modules/.bin"

# The wasm-bindgen version Trunk will demand: the one in Cargo.lock.
wasm_bindgen_lock_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' \
    "$SALTSCOPE_REPO/Cargo.lock"
}

# ---- nginx -------------------------------------------------------------------------
# nginx_worker_args: prints the -g directive that keeps nginx's workers off
# root. Started as root, nginx's master stays root (ports < 1024, keys and
# credential files readable by root only) and its workers run as
# NGINX_WORKER_USER (default www-data, else nobody); started as anyone else,
# nginx cannot switch users and everything runs as the caller. Prints nothing
# when not root. Dies when the user is root or does not exist.
nginx_worker_user() {
  if [[ $(id -u) -ne 0 ]]; then id -un; return; fi
  local u=${NGINX_WORKER_USER:-}
  if [[ -z $u ]]; then
    if id -u www-data >/dev/null 2>&1; then u=www-data; else u=nobody; fi
  fi
  id -u "$u" >/dev/null 2>&1 || die "NGINX_WORKER_USER=$u: no such user"
  [[ $(id -u "$u") -ne 0 ]] || die "NGINX_WORKER_USER=$u is root: nginx workers never run as root"
  printf '%s' "$u"
}
nginx_worker_args() {
  [[ $(id -u) -eq 0 ]] || return 0
  local u
  u=$(nginx_worker_user) || exit 1
  printf 'user %s %s;' "$u" "$(id -gn "$u")"
}

# nginx_stop PIDFILE LABEL: TERM, wait up to 5 s, then KILL.
nginx_stop() {
  local pidfile=$1 label=$2 pid i
  if ! pid_alive "$pidfile"; then
    rm -f "$pidfile"
    log "$label not running"
    return 0
  fi
  pid=$(tr -dc '0-9' <"$pidfile")
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    warn "$label (pid $pid) did not stop in 5s; killing"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  log "$label stopped (pid $pid)"
}
