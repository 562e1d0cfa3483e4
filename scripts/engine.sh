#!/usr/bin/env bash
# Run a REAL search engine (OpenSearch 3.x or 2.19, or Elasticsearch 7.10) in the background,
# in-process from Maven Central artifacts (engine/), one JVM per node, for Saltscope dev and tests.
#
#   scripts/engine.sh install [opensearch|opensearch2|elasticsearch|all]   resolve + build only (downloads)
#   scripts/engine.sh start          build if needed, start ENGINE_NODES node JVMs, wait for yellow
#   scripts/engine.sh stop           stop every node of the cluster started with this ENGINE/ENGINE_PORT
#   scripts/engine.sh status         running? health?  (exit 0 if a node runs, 3 if none)
#   scripts/engine.sh url [I]        print the base URL of node 1 (or of node I)
#   scripts/engine.sh stop-node I    stop node I (its HTTP port then refuses connections); the others serve on
#   scripts/engine.sh kill-node I    the same with SIGKILL: a crash, the node says no goodbye
#   scripts/engine.sh start-node I   start a stopped node I again on its data; waits until it has rejoined
#
# Environment:
#   ENGINE           opensearch (default, 3.x) | opensearch2 (2.19) | elasticsearch (7.10)
#   ENGINE_PORT      HTTP port of node 1 (default 9200); node i gets ENGINE_PORT+i-1
#   ENGINE_NODES     number of nodes, each in its own JVM (default 1)
#   ENGINE_TRANSPORT_PORT  transport port of node 1 (default ENGINE_PORT+100); node i gets +i-1
#   ENGINE_HEAP      heap of each node's JVM (default 512m)
#   ENGINE_CORS_ORIGIN  the origins CORS allows: a comma list, or /regex/ (default
#                    http://127.0.0.1:8080,http://localhost:8080: the demo's nginx)
#   ENGINE_TIMEOUT   seconds to wait for yellow (default 180)
#   ENGINE_KEEP_DATA=1  keep data from the previous run (default: wiped on start)
#   ENGINE_JAVA_HOME override the JDK (default: Temurin 25 / any JDK >= 21 for
#                    OpenSearch 3.x, JDK 17 for OpenSearch 2.19 and Elasticsearch 7.10)
#   SALTSCOPE_WORK   scratch root (default <repo>/.work); state lives in $SALTSCOPE_WORK/engine-$ENGINE-$ENGINE_PORT/
#                    {home/node_I, node-I.log, node-I.pid, cluster.env}
#   stop, status, url, stop-node, kill-node and start-node take the node count, heap, transport port and
#   CORS origin from cluster.env (written by start), so they need only ENGINE, ENGINE_PORT, SALTSCOPE_WORK.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENGINE="${ENGINE:-opensearch}"
ENGINE_PORT="${ENGINE_PORT:-9200}"
ENGINE_TIMEOUT="${ENGINE_TIMEOUT:-180}"
SALTSCOPE_WORK="${SALTSCOPE_WORK:-$REPO/.work}"
STATE="$SALTSCOPE_WORK/engine-$ENGINE-$ENGINE_PORT"
CLUSTER_ENV="$STATE/cluster.env"
CLUSTER="saltscope-$ENGINE-$ENGINE_PORT"

say() { printf 'engine: %s\n' "$*"; }
die() { printf 'engine: ERROR: %s\n' "$*" >&2; exit 1; }

# Cluster shape: from the environment for `start`, else from the running cluster's cluster.env.
cluster_shape() { # $1 = command
  if [[ "$1" != start && "$1" != restart && -f "$CLUSTER_ENV" ]]; then
    # shellcheck disable=SC1090
    . "$CLUSTER_ENV"
  fi
  ENGINE_NODES="${ENGINE_NODES:-1}"
  ENGINE_TRANSPORT_PORT="${ENGINE_TRANSPORT_PORT:-$((ENGINE_PORT + 100))}"
  ENGINE_HEAP="${ENGINE_HEAP:-512m}"
  ENGINE_CORS_ORIGIN="${ENGINE_CORS_ORIGIN:-http://127.0.0.1:8080,http://localhost:8080}"
  [[ "$ENGINE_NODES" =~ ^[1-9][0-9]*$ ]] || die "ENGINE_NODES must be a number >= 1 (got '$ENGINE_NODES')"
}

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
      MODULE=opensearch; MAIN=saltscope.engine.OpenSearchEngine
      # OpenSearch 3.x needs Java 21+.
      JDK=$(pick_jdk 21 99) || die "OpenSearch 3.x needs a JDK >= 21 (e.g. /usr/lib/jvm/temurin-25-jdk-amd64); set ENGINE_JAVA_HOME"
      ;;
    opensearch2)
      MODULE=opensearch2; MAIN=saltscope.engine.OpenSearchEngine
      # OpenSearch 2.19 runs on Java 11-21; take 17 like Elasticsearch.
      JDK=$(pick_jdk 17 21) || die "OpenSearch 2.19 needs JDK 17..21 (/usr/lib/jvm/java-17-openjdk-amd64); set ENGINE_JAVA_HOME"
      ;;
    elasticsearch)
      MODULE=elasticsearch; MAIN=saltscope.engine.ElasticsearchEngine
      # Elasticsearch 7.10 predates Java 18+; run it on 17.
      JDK=$(pick_jdk 17 17) || die "Elasticsearch 7.10 needs JDK 17 (/usr/lib/jvm/java-17-openjdk-amd64); set ENGINE_JAVA_HOME"
      ;;
    *) die "ENGINE must be opensearch, opensearch2 or elasticsearch (got '$1')" ;;
  esac
  MODULE_DIR="$REPO/engine/$MODULE"
}

# ---- build (idempotent) -----------------------------------------------------
# target/classpath.txt lists engine/common/target/classes and the jars in ~/.m2; it is the "built" stamp.
up_to_date() {
  local cp="$MODULE_DIR/target/classpath.txt" f
  [[ -s "$cp" && -d "$MODULE_DIR/target/classes/saltscope" ]] || return 1
  # Any engine source or pom (the common module, the parent, a shared source dir) makes it stale.
  while IFS= read -r f; do
    [[ "$cp" -nt "$f" ]] || return 1
  done < <(find "$REPO/engine" -path '*/target' -prune -o -type f \( -name pom.xml -o -path '*/src/*' \) -print)
  local IFS=:
  for f in $(cat "$cp"); do [[ -e "$f" ]] || return 1; done
  return 0
}

build() {
  up_to_date && return 0
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  local blog="$MODULE_DIR/target/build.log" t0=$SECONDS
  mkdir -p "$MODULE_DIR/target"
  say "building $MODULE launcher with $(basename "$JDK") (downloads from Maven Central if ~/.m2 lacks the jars)..."
  rm -f "$MODULE_DIR/target/classpath.txt"
  # The reactor builds engine/common too (-am) and puts its target/classes on the classpath.
  local goals=(-B -q -f "$REPO/engine/pom.xml" -pl "$MODULE" -am
               compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt)
  # Offline first (no network needed once ~/.m2 is warm), then online.
  if ! JAVA_HOME="$JDK" mvn -o "${goals[@]}" >"$blog" 2>&1; then
    if ! JAVA_HOME="$JDK" mvn "${goals[@]}" >"$blog" 2>&1; then
      tail -40 "$blog" >&2
      die "build failed (log: $blog)"
    fi
  fi
  [[ -s "$MODULE_DIR/target/classpath.txt" ]] || die "build produced no classpath (log: $blog)"
  say "built in $((SECONDS - t0)) s"
}

# ---- runtime helpers ----------------------------------------------------------
node_url() { echo "http://127.0.0.1:$((ENGINE_PORT + $1 - 1))"; }
URL="$(node_url 1)"

is_launcher() { # pid -> true if it is a live launcher JVM of this state dir
  local cmdline
  [[ "$1" =~ ^[0-9]+$ ]] && kill -0 "$1" 2>/dev/null || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 1
  [[ "$cmdline" == *" saltscope.engine."*" --base $STATE/home "* ]]
}

node_pid() { # i -> prints the pid if node i's pid file names a live launcher JVM
  local pid
  pid=$(cat "$STATE/node-$1.pid" 2>/dev/null) || return 1
  is_launcher "$pid" || return 1
  echo "$pid"
}

legacy_pid() { # an engine started by the one-JVM engine.sh before nodes had their own JVMs
  local pid
  pid=$(cat "$STATE/engine.pid" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'saltscope\.engine\.' || return 1
  echo "$pid"
}

running_nodes() { # prints the numbers of the nodes whose JVM runs
  local i
  for ((i = 1; i <= ENGINE_NODES; i++)); do
    node_pid "$i" >/dev/null && echo "$i"
  done
  return 0
}

healthy() { # [node] -> the cluster, asked through that node (default 1), has all nodes and is yellow or green
  curl -sf --max-time 10 "$(node_url "${1:-1}")/_cluster/health?wait_for_status=yellow&wait_for_nodes=$ENGINE_NODES&timeout=2s" 2>/dev/null |
    grep -Eq '"status":"(yellow|green)"'
}

port_busy() { # true if something listens on 127.0.0.1:$1
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

describe() { # [url]
  local url="${1:-$URL}" root dist ver
  root=$(curl -sf --max-time 5 "$url/" 2>/dev/null || true)
  ver=$(sed -n 's/.*"number" *: *"\([^"]*\)".*/\1/p' <<<"$root" | head -1)
  dist=$(sed -n 's/.*"distribution" *: *"\([^"]*\)".*/\1/p' <<<"$root" | head -1)
  echo "${dist:-elasticsearch} ${ver:-?} at $url"
}

node_arg() { # validates a node number against the cluster
  [[ "${1:-}" =~ ^[1-9][0-9]*$ && "$1" -le "$ENGINE_NODES" ]] ||
    die "give a node number 1..$ENGINE_NODES (the cluster on port $ENGINE_PORT has $ENGINE_NODES node(s)); got '${1:-}'"
}

launch_node() { # i [append] -> starts node i's JVM in the background, writes node-i.pid
  local i="$1" cp jvm pid log="$STATE/node-$1.log"
  cp="$MODULE_DIR/target/classes:$(cat "$MODULE_DIR/target/classpath.txt")"
  mkdir -p "$STATE/tmp/node-$i"
  jvm=(-Xms"$ENGINE_HEAP" -Xmx"$ENGINE_HEAP" -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError
       -Djava.io.tmpdir="$STATE/tmp/node-$i" -Djava.awt.headless=true -Dfile.encoding=UTF-8
       -Dlog4j2.formatMsgNoLookups=true -Dlog4j.shutdownHookEnabled=false
       -Dopensearch.set.netty.runtime.available.processors=false
       -Des.set.netty.runtime.available.processors=false)
  # Java 22+: Lucene 10 / Netty call restricted FFM methods; allow them instead of warning.
  [[ $(java_major "$JDK") -ge 22 ]] && jvm+=(--enable-native-access=ALL-UNNAMED)
  if [[ -n "${2:-}" ]]; then
    printf '\n==== engine.sh start-node %s at %s ====\n' "$i" "$(date -Is)" >>"$log"
  else
    : >"$log"
  fi
  # setsid: the engine survives the calling shell / job-control group.
  local launcher=()
  command -v setsid >/dev/null && launcher=(setsid)
  nohup "${launcher[@]}" "$JDK/bin/java" "${jvm[@]}" -cp "$cp" "$MAIN" \
    --port "$ENGINE_PORT" --transport-port "$ENGINE_TRANSPORT_PORT" --nodes "$ENGINE_NODES" --node "$i" \
    --base "$STATE/home" --cluster "$CLUSTER" --cors-origin "$ENGINE_CORS_ORIGIN" \
    >>"$log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$STATE/node-$i.pid"
}

check_ports_free() { # node numbers...
  local i
  for i in "$@"; do
    port_busy $((ENGINE_PORT + i - 1)) &&
      die "port $((ENGINE_PORT + i - 1)) (node $i) is already in use by another process (not ours: no live pid in $STATE/node-$i.pid)"
    port_busy $((ENGINE_TRANSPORT_PORT + i - 1)) &&
      die "transport port $((ENGINE_TRANSPORT_PORT + i - 1)) (node $i) is already in use; set ENGINE_TRANSPORT_PORT"
  done
  return 0
}

stop_pids() { # signal pid... -> signals them, waits up to 30 s, then KILLs the rest
  local sig="$1" pid i alive
  shift
  for pid in "$@"; do kill "-$sig" "$pid" 2>/dev/null || true; done
  for ((i = 0; i < 60; i++)); do
    alive=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || return 0
    sleep 0.5
  done
  for pid in "$@"; do
    if kill -0 "$pid" 2>/dev/null; then
      say "pid $pid ignored $sig for 30 s; killing"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  sleep 1
}

fail_start() { # message log...
  local msg="$1" log
  shift
  for log in "$@"; do
    echo "engine: ---- last lines of $log ----" >&2
    tail -40 "$log" >&2 || true
  done
  die "$msg"
}

# ---- commands -------------------------------------------------------------------
cmd_install() {
  local what="${1:-$ENGINE}" p
  [[ "$what" == all ]] && what="opensearch opensearch2 elasticsearch"
  for p in $what; do
    product "$p"
    build
    say "$p launcher ready ($(tr ':' '\n' <"$MODULE_DIR/target/classpath.txt" | wc -l) classpath entries, JDK $(basename "$JDK"))"
  done
}

cmd_start() {
  product "$ENGINE"
  local up i pids=() t0 deadline
  local was
  # shellcheck disable=SC1090
  was=$( (. "$CLUSTER_ENV" 2>/dev/null && echo "${ENGINE_NODES:-1}") || echo 1)
  up=$(ENGINE_NODES=$was running_nodes | paste -sd' ')
  if [[ -n "$up" || -n "$(legacy_pid)" ]]; then
    if [[ "$was" == "$ENGINE_NODES" && "$up" == "$(seq -s ' ' 1 "$ENGINE_NODES")" ]] && { healthy || wait_healthy_any; }; then
      say "already running: $(describe) ($ENGINE_NODES node(s), pids $(for i in $up; do node_pid "$i"; done | paste -sd' '))"
      return 0
    fi
    die "$ENGINE on port $ENGINE_PORT already runs node(s) ${up:-(legacy engine.pid)} of a $was-node cluster; use start-node I, or stop it first"
  fi
  check_ports_free $(seq 1 "$ENGINE_NODES")

  build

  if [[ "${ENGINE_KEEP_DATA:-0}" != 1 ]]; then rm -rf "$STATE"; fi
  mkdir -p "$STATE/home"
  rm -f "$STATE"/node-*.pid "$STATE/engine.pid"
  printf 'ENGINE_NODES=%q\nENGINE_TRANSPORT_PORT=%q\nENGINE_HEAP=%q\nENGINE_CORS_ORIGIN=%q\n' \
    "$ENGINE_NODES" "$ENGINE_TRANSPORT_PORT" "$ENGINE_HEAP" "$ENGINE_CORS_ORIGIN" >"$CLUSTER_ENV"

  t0=$SECONDS
  for ((i = 1; i <= ENGINE_NODES; i++)); do
    launch_node "$i"
    pids+=("$(cat "$STATE/node-$i.pid")")
  done
  say "starting $ENGINE: $ENGINE_NODES node(s) on ports $ENGINE_PORT..$((ENGINE_PORT + ENGINE_NODES - 1)), heap $ENGINE_HEAP each, pids ${pids[*]}, logs $STATE/node-*.log..."
  deadline=$((SECONDS + ENGINE_TIMEOUT))
  while ! healthy; do
    for ((i = 1; i <= ENGINE_NODES; i++)); do
      if ! kill -0 "${pids[i - 1]}" 2>/dev/null; then
        stop_pids TERM "${pids[@]}"
        rm -f "$STATE"/node-*.pid
        fail_start "node $i (pid ${pids[i - 1]}) exited while starting" "$STATE/node-$i.log"
      fi
    done
    if ((SECONDS >= deadline)); then
      stop_pids TERM "${pids[@]}"
      rm -f "$STATE"/node-*.pid
      fail_start "$ENGINE did not reach yellow with $ENGINE_NODES node(s) within ${ENGINE_TIMEOUT}s" "$STATE"/node-*.log
    fi
    sleep 1
  done
  say "$(describe) (${ENGINE_NODES} node(s), yellow in $((SECONDS - t0)) s, pids ${pids[*]})"
}

wait_healthy_any() { # the already-running cluster answers healthy within ENGINE_TIMEOUT
  local deadline=$((SECONDS + ENGINE_TIMEOUT))
  while ((SECONDS < deadline)); do
    healthy && return 0
    [[ -n "$(running_nodes)" ]] || return 1
    sleep 1
  done
  return 1
}

cmd_stop() {
  local pids=() f pid
  for f in "$STATE"/node-*.pid; do
    [[ -f "$f" ]] || continue
    pid=$(cat "$f" 2>/dev/null) && is_launcher "$pid" && pids+=("$pid")
  done
  pid=$(legacy_pid) && pids+=("$pid")
  if ((${#pids[@]} == 0)); then
    rm -f "$STATE"/node-*.pid "$STATE/engine.pid"
    say "$ENGINE on port $ENGINE_PORT is not running"
    return 0
  fi
  local t0=$SECONDS
  stop_pids TERM "${pids[@]}"
  rm -f "$STATE"/node-*.pid "$STATE/engine.pid"
  say "stopped $ENGINE on port $ENGINE_PORT (pids ${pids[*]}, $((SECONDS - t0)) s)"
}

cmd_stop_node() { # i signal
  local i="$1" sig="$2" pid t0=$SECONDS port
  node_arg "$i"
  port=$((ENGINE_PORT + i - 1))
  pid=$(node_pid "$i") || die "node $i of $ENGINE on port $ENGINE_PORT is not running"
  stop_pids "$sig" "$pid"
  rm -f "$STATE/node-$i.pid"
  port_busy "$port" && die "node $i's JVM (pid $pid) is gone but port $port still answers"
  say "node $i ($ENGINE, port $port, pid $pid) stopped with SIG$sig in $((SECONDS - t0)) s; port $port refuses connections"
  local left
  left=$(running_nodes | paste -sd' ')
  [[ -n "$left" ]] && say "still running: node(s) $left"
  return 0
}

cmd_start_node() { # i
  local i="$1" pid t0=$SECONDS deadline
  node_arg "$i"
  [[ -f "$CLUSTER_ENV" && -d "$STATE/home" ]] || die "no cluster state in $STATE: use start first"
  pid=$(node_pid "$i") && die "node $i of $ENGINE on port $ENGINE_PORT is already running (pid $pid)"
  product "$ENGINE"
  check_ports_free "$i"
  build
  launch_node "$i" append
  pid=$(cat "$STATE/node-$i.pid")
  say "starting node $i of $ENGINE ($(node_url "$i"), heap $ENGINE_HEAP, pid $pid, log $STATE/node-$i.log)..."
  deadline=$((SECONDS + ENGINE_TIMEOUT))
  # Asked through node i itself: it answers, and sees all ENGINE_NODES nodes in a yellow/green cluster.
  until healthy "$i"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$STATE/node-$i.pid"
      fail_start "node $i (pid $pid) exited while starting" "$STATE/node-$i.log"
    fi
    if ((SECONDS >= deadline)); then
      stop_pids TERM "$pid"
      rm -f "$STATE/node-$i.pid"
      fail_start "node $i did not rejoin a yellow cluster of $ENGINE_NODES within ${ENGINE_TIMEOUT}s" "$STATE/node-$i.log"
    fi
    sleep 1
  done
  say "node $i rejoined: $(describe "$(node_url "$i")") ($ENGINE_NODES node(s), in $((SECONDS - t0)) s, pid $pid)"
}

cmd_status() {
  local i pid rss up=() first="" h
  for ((i = 1; i <= ENGINE_NODES; i++)); do
    if pid=$(node_pid "$i"); then
      rss=$(awk '/VmRSS/ {printf "%d MiB", $2/1024}' "/proc/$pid/status" 2>/dev/null || true)
      up+=("node $i: pid $pid, RSS ${rss:-?}, $(node_url "$i")")
      [[ -n "$first" ]] || first=$i
    fi
  done
  if ((${#up[@]} == 0)); then
    if pid=$(legacy_pid); then
      say "$ENGINE on port $ENGINE_PORT: running, pid $pid (started by an older engine.sh; stop and start it again)"
      return 0
    fi
    say "$ENGINE on port $ENGINE_PORT: not running"
    return 3
  fi
  say "$ENGINE on port $ENGINE_PORT: ${#up[@]} of $ENGINE_NODES node(s) running"
  for i in "${up[@]}"; do say "  $i"; done
  h=$(curl -sf --max-time 5 "$(node_url "$first")/_cluster/health" 2>/dev/null || true)
  if [[ -n "$h" ]]; then
    say "$(describe "$(node_url "$first")"): status $(sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' <<<"$h"), nodes $(sed -n 's/.*"number_of_nodes":\([0-9]*\).*/\1/p' <<<"$h")"
  else
    say "$(node_url "$first") not answering (yet?)"
  fi
}

cmd="${1:-}"
cluster_shape "$cmd"
case "$cmd" in
  install) shift; cmd_install "$@" ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  restart) cmd_stop; cmd_start ;;
  status) cmd_status ;;
  url) if [[ -n "${2:-}" ]]; then node_arg "$2"; node_url "$2"; else echo "$URL"; fi ;;
  stop-node) cmd_stop_node "${2:-}" TERM ;;
  kill-node) cmd_stop_node "${2:-}" KILL ;;
  start-node) cmd_start_node "${2:-}" ;;
  *) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
