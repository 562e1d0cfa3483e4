#!/usr/bin/env bash
# Run a REAL search engine (OpenSearch, or Elasticsearch 7.10) in the background,
# in-process from Maven Central artifacts (engine/), for Saltscope dev and tests.
#
#   scripts/engine.sh install [opensearch|elasticsearch|all]   resolve + build only (downloads)
#   scripts/engine.sh start     build if needed, start in background, wait for yellow
#   scripts/engine.sh stop      stop the engine started from this pid file
#   scripts/engine.sh status    running? health?  (exit 0 running, 3 not running)
#   scripts/engine.sh url       print the base URL
#
# Environment:
#   ENGINE           opensearch (default) | elasticsearch
#   ENGINE_PORT      first HTTP port (default 9200); node i gets ENGINE_PORT+i-1
#   ENGINE_NODES     number of nodes in the one JVM (default 1)
#   ENGINE_TRANSPORT_PORT  first transport port (default ENGINE_PORT+100)
#   ENGINE_HEAP      JVM heap (default 512m for 1 node, 1g for more)
#   ENGINE_TIMEOUT   seconds to wait for yellow (default 180)
#   ENGINE_KEEP_DATA=1  keep data from the previous run (default: wiped on start)
#   ENGINE_JAVA_HOME override the JDK (default: Temurin 25 / any JDK >= 21 for
#                    OpenSearch 3.x, JDK 17 for Elasticsearch 7.10)
#   SALTSCOPE_WORK   scratch root (default <repo>/.work); state lives in
#                    $SALTSCOPE_WORK/engine-$ENGINE-$ENGINE_PORT/{home,engine.log,engine.pid}
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENGINE="${ENGINE:-opensearch}"
ENGINE_PORT="${ENGINE_PORT:-9200}"
ENGINE_NODES="${ENGINE_NODES:-1}"
ENGINE_TRANSPORT_PORT="${ENGINE_TRANSPORT_PORT:-$((ENGINE_PORT + 100))}"
ENGINE_TIMEOUT="${ENGINE_TIMEOUT:-180}"
SALTSCOPE_WORK="${SALTSCOPE_WORK:-$REPO/.work}"
if [[ -z "${ENGINE_HEAP:-}" ]]; then
  if [[ "$ENGINE_NODES" -gt 1 ]]; then ENGINE_HEAP=1g; else ENGINE_HEAP=512m; fi
fi

say() { printf 'engine: %s\n' "$*"; }
die() { printf 'engine: ERROR: %s\n' "$*" >&2; exit 1; }

# ---- per-product settings ---------------------------------------------------
java_major() { # JAVA_HOME -> major version number (or 0)
  local v
  v=$("$1/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1) || true
  echo "${v:-0}"
}

pick_jdk() { # min max -> a JAVA_HOME with min <= major <= max
  local min="$1" max="$2" d m
  for d in "${ENGINE_JAVA_HOME:-}" /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/java-17-openjdk-amd64 \
           "${JAVA_HOME:-}" /usr/lib/jvm/*; do
    [[ -n "$d" && -x "$d/bin/java" && -x "$d/bin/javac" ]] || continue
    m=$(java_major "$d")
    if [[ -n "${ENGINE_JAVA_HOME:-}" && "$d" == "$ENGINE_JAVA_HOME" ]]; then echo "$d"; return; fi
    if [[ "$m" -ge "$min" && "$m" -le "$max" ]]; then echo "$d"; return; fi
  done
  return 1
}

product() { # sets MODULE MAIN JDK for $1
  case "$1" in
    opensearch)
      MODULE="$REPO/engine/opensearch"; MAIN=saltscope.engine.OpenSearchEngine
      # OpenSearch 3.x needs Java 21+.
      JDK=$(pick_jdk 21 99) || die "OpenSearch 3.x needs a JDK >= 21 (e.g. /usr/lib/jvm/temurin-25-jdk-amd64); set ENGINE_JAVA_HOME"
      ;;
    elasticsearch)
      MODULE="$REPO/engine/elasticsearch"; MAIN=saltscope.engine.ElasticsearchEngine
      # Elasticsearch 7.10 predates Java 18+; run it on 17.
      JDK=$(pick_jdk 17 17) || die "Elasticsearch 7.10 needs JDK 17 (/usr/lib/jvm/java-17-openjdk-amd64); set ENGINE_JAVA_HOME"
      ;;
    *) die "ENGINE must be opensearch or elasticsearch (got '$1')" ;;
  esac
}

# ---- build (idempotent) -----------------------------------------------------
# target/classpath.txt lists the jars in ~/.m2; it is the "built" stamp.
up_to_date() {
  local cp="$MODULE/target/classpath.txt" f
  [[ -s "$cp" && -d "$MODULE/target/classes/saltscope" ]] || return 1
  [[ "$cp" -nt "$MODULE/pom.xml" ]] || return 1
  while IFS= read -r f; do
    [[ "$cp" -nt "$f" ]] || return 1
  done < <(find "$MODULE/src" -type f)
  local IFS=:
  for f in $(cat "$cp"); do [[ -f "$f" ]] || return 1; done
  return 0
}

build() {
  up_to_date && return 0
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  local blog="$MODULE/target/build.log" t0=$SECONDS
  mkdir -p "$MODULE/target"
  say "building $(basename "$MODULE") launcher with $(basename "$JDK") (downloads from Maven Central if ~/.m2 lacks the jars)..."
  rm -f "$MODULE/target/classpath.txt"
  local goals=(-B -q -f "$MODULE/pom.xml" compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt)
  # Offline first (no network needed once ~/.m2 is warm), then online.
  if ! JAVA_HOME="$JDK" mvn -o "${goals[@]}" >"$blog" 2>&1; then
    if ! JAVA_HOME="$JDK" mvn "${goals[@]}" >"$blog" 2>&1; then
      tail -40 "$blog" >&2
      die "build failed (log: $blog)"
    fi
  fi
  [[ -s "$MODULE/target/classpath.txt" ]] || die "build produced no classpath (log: $blog)"
  say "built in $((SECONDS - t0)) s"
}

# ---- runtime helpers ----------------------------------------------------------
STATE="$SALTSCOPE_WORK/engine-$ENGINE-$ENGINE_PORT"
PIDFILE="$STATE/engine.pid"
LOG="$STATE/engine.log"
URL="http://127.0.0.1:$ENGINE_PORT"

our_pid() { # prints the pid if the pid file names a live launcher JVM
  local pid
  [[ -f "$PIDFILE" ]] || return 1
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'saltscope\.engine\.' || return 1
  echo "$pid"
}

healthy() {
  curl -sf --max-time 10 "$URL/_cluster/health?wait_for_status=yellow&wait_for_nodes=$ENGINE_NODES&timeout=2s" 2>/dev/null |
    grep -Eq '"status":"(yellow|green)"'
}

port_busy() { # true if something listens on 127.0.0.1:$1
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

describe() {
  local root dist ver
  root=$(curl -sf --max-time 5 "$URL/" 2>/dev/null || true)
  ver=$(sed -n 's/.*"number" *: *"\([^"]*\)".*/\1/p' <<<"$root" | head -1)
  dist=$(sed -n 's/.*"distribution" *: *"\([^"]*\)".*/\1/p' <<<"$root" | head -1)
  echo "${dist:-elasticsearch} ${ver:-?} at $URL"
}

wait_healthy() { # pid
  local pid="$1" deadline=$((SECONDS + ENGINE_TIMEOUT))
  while ((SECONDS < deadline)); do
    healthy && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 1
  done
  return 1
}

fail_start() {
  echo "engine: ---- last lines of $LOG ----" >&2
  tail -40 "$LOG" >&2 || true
  die "$1"
}

# ---- commands -------------------------------------------------------------------
cmd_install() {
  local what="${1:-$ENGINE}" p
  [[ "$what" == all ]] && what="opensearch elasticsearch"
  for p in $what; do
    product "$p"
    build
    say "$p launcher ready ($(tr ':' '\n' <"$MODULE/target/classpath.txt" | wc -l) jars, JDK $(basename "$JDK"))"
  done
}

cmd_start() {
  product "$ENGINE"
  local pid
  if pid=$(our_pid); then
    if healthy || wait_healthy "$pid"; then
      say "already running: $(describe) (pid $pid)"
      return 0
    fi
    fail_start "pid $pid is running but the cluster did not become healthy"
  fi
  local p
  for ((p = ENGINE_PORT; p < ENGINE_PORT + ENGINE_NODES; p++)); do
    port_busy "$p" && die "port $p is already in use by another process (not ours: no live pid in $PIDFILE)"
  done
  for ((p = ENGINE_TRANSPORT_PORT; p < ENGINE_TRANSPORT_PORT + ENGINE_NODES; p++)); do
    port_busy "$p" && die "transport port $p is already in use; set ENGINE_TRANSPORT_PORT"
  done

  build

  if [[ "${ENGINE_KEEP_DATA:-0}" != 1 ]]; then rm -rf "$STATE"; fi
  mkdir -p "$STATE/home" "$STATE/tmp"
  rm -f "$PIDFILE"

  local cp jvm
  cp="$MODULE/target/classes:$(cat "$MODULE/target/classpath.txt")"
  jvm=(-Xms"$ENGINE_HEAP" -Xmx"$ENGINE_HEAP" -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError
       -Djava.io.tmpdir="$STATE/tmp" -Djava.awt.headless=true -Dfile.encoding=UTF-8
       -Dlog4j2.formatMsgNoLookups=true -Dlog4j.shutdownHookEnabled=false
       -Dopensearch.set.netty.runtime.available.processors=false
       -Des.set.netty.runtime.available.processors=false)
  # Java 22+: Lucene 10 / Netty call restricted FFM methods; allow them instead of warning.
  [[ $(java_major "$JDK") -ge 22 ]] && jvm+=(--enable-native-access=ALL-UNNAMED)
  local t0=$SECONDS
  # setsid: the engine survives the calling shell / job-control group.
  local launcher=()
  command -v setsid >/dev/null && launcher=(setsid)
  nohup "${launcher[@]}" "$JDK/bin/java" "${jvm[@]}" -cp "$cp" "$MAIN" \
    --port "$ENGINE_PORT" --transport-port "$ENGINE_TRANSPORT_PORT" --nodes "$ENGINE_NODES" \
    --base "$STATE/home" --cluster "saltscope-$ENGINE-$ENGINE_PORT" \
    >"$LOG" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PIDFILE"
  say "starting $ENGINE ($ENGINE_NODES node(s), heap $ENGINE_HEAP, pid $pid, log $LOG)..."
  if ! wait_healthy "$pid"; then
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      sleep 5
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$PIDFILE"
    fail_start "$ENGINE did not reach yellow within ${ENGINE_TIMEOUT}s"
  fi
  say "$(describe) (${ENGINE_NODES} node(s), yellow in $((SECONDS - t0)) s, pid $pid)"
}

cmd_stop() {
  local pid i
  if ! pid=$(our_pid); then
    rm -f "$PIDFILE"
    say "$ENGINE on port $ENGINE_PORT is not running"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 60; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "pid $pid ignored TERM for 30 s; killing"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 1
  fi
  rm -f "$PIDFILE"
  say "stopped $ENGINE on port $ENGINE_PORT (pid $pid)"
}

cmd_status() {
  local pid
  if ! pid=$(our_pid); then
    say "$ENGINE on port $ENGINE_PORT: not running"
    return 3
  fi
  local h rss
  h=$(curl -sf --max-time 5 "$URL/_cluster/health" 2>/dev/null || true)
  rss=$(awk '/VmRSS/ {printf "%d MiB", $2/1024}' "/proc/$pid/status" 2>/dev/null || true)
  say "$ENGINE on port $ENGINE_PORT: running, pid $pid, RSS ${rss:-?}"
  if [[ -n "$h" ]]; then
    say "$(describe): status $(sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' <<<"$h"), nodes $(sed -n 's/.*"number_of_nodes":\([0-9]*\).*/\1/p' <<<"$h")"
  else
    say "$URL not answering (yet?)"
  fi
}

case "${1:-}" in
  install) shift; cmd_install "$@" ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  restart) cmd_stop; cmd_start ;;
  status) cmd_status ;;
  url) echo "$URL" ;;
  *) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
