#!/usr/bin/env bash
# Produce REAL Salt job data through the REAL elasticsearch returner
# (saltext-elasticsearch) into a running Elasticsearch/OpenSearch.
#
#   ES_URL=http://127.0.0.1:9200 scripts/salt-data.sh            # make data
#   ES_URL=... scripts/salt-data.sh --fixtures                   # ... and refresh tests/fixtures/
#   scripts/salt-data.sh --venv-only                             # only build the venv
#
# Env: ES_URL (default http://127.0.0.1:9200), SALTSCOPE_WORK (default <repo>/.work),
#      SALTSCOPE_SALT_PORTS="24505 24506" (master publish/ret ports; below Linux's
#      ephemeral range 32768-60999, where an outgoing connection of the
#      tests can hold the port and the master then fails to bind it).
# Writes $SALTSCOPE_WORK/salt-data/manifest.json (scenario -> jid(s), minions, versions,
# timings). Every salt process it starts is stopped on exit, by pid (process group).
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T_START=$(now_s)
REPO=$SALTSCOPE_REPO
ES_URL=${ES_URL:-http://127.0.0.1:9200}
ES_URL=${ES_URL%/}
read -r PUB_PORT RET_PORT <<<"${SALTSCOPE_SALT_PORTS:-24505 24506}"
VENV=$SALTSCOPE_WORK/venv
REQ=$REPO/salt/requirements.txt
STATES=$REPO/salt/states
DATA=$SALTSCOPE_WORK/salt-data
SM=$SALTSCOPE_WORK/salt-master
HELPER=$REPO/scripts/salt_data/helper.py
MASTER_ID=saltscope-master
MINIONS=(web01.prod.example.com web02.prod.example.com db-02 cache-03.example.org)
OFFLINE=offline-05
DO_FIXTURES=0
VENV_ONLY=0
for a in "$@"; do
  case $a in
    --fixtures) DO_FIXTURES=1 ;;
    --venv-only) VENV_ONLY=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) die "unknown argument: $a" ;;
  esac
done

# ---------------------------------------------------------------- venv ------
venv_ok() {
  [[ -x $VENV/bin/python && -x $VENV/bin/salt-call && -f $VENV/.saltscope-req ]] || return 1
  cmp -s "$VENV/.saltscope-req" "$REQ" || return 1
  "$VENV/bin/python" - <<'EOF' >/dev/null 2>&1 || return 1
import salt.version, saltext.elasticsearch, elasticsearch, zmq, tornado, msgpack, yaml, jinja2, Cryptodome, cryptography, aiohttp
EOF
}
T_VENV=$(now_s)
VENV_ACTION=skipped
if venv_ok; then
  log "venv present: $VENV"
else
  VENV_ACTION=created
  log "creating venv $VENV (salt + saltext-elasticsearch + elasticsearch==7.13.4)"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  # salt's own metadata pulls in optional extras (opentelemetry, libcloud, cherrypy...):
  # install --no-deps from the explicit, pinned list instead.
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps -r "$REQ"
  cp "$REQ" "$VENV/.saltscope-req"
  venv_ok || die "venv $VENV is incomplete after install"
fi
VENV_SECONDS=$(awk -v a="$T_VENV" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')
log "venv step: $VENV_ACTION in ${VENV_SECONDS}s"
[[ $VENV_ONLY == 1 ]] && exit 0

SALT_BIN=$VENV/bin
PY=$VENV/bin/python

# ------------------------------------------------------------ engine check --
curl -sf --max-time 5 "$ES_URL/" >/dev/null \
  || die "search engine not reachable at ES_URL=$ES_URL (start one, e.g. scripts/engine.sh start)"
log "engine at $ES_URL: $(curl -s "$ES_URL/" | "$PY" -c 'import json,sys; d=json.load(sys.stdin)["version"]; print(d.get("distribution","elasticsearch"), d["number"])')"

# -------------------------------------------------------------- processes --
PIDS=()
cleanup() {
  local rc=$? pid i
  for pid in "${PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  ((${#PIDS[@]})) && log "stopped salt processes (pgids ${PIDS[*]})"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_bg LOGFILE CMD... : run in its own session/process group; pid == pgid
start_bg() {
  local logf=$1; shift
  setsid "$@" >"$logf" 2>&1 </dev/null &
  PIDS+=("$!")
}

mkdir -p "$DATA" "$SM"

# Every "host" sees its scratch files at the same path ($HOSTDIR), like real fleets
# where /etc/app.conf is the same name everywhere: each salt-minion / salt-call runs
# in its own mount namespace with $DATA/scratch/<id> bind-mounted on $HOSTDIR.
# (Otherwise every minion's state keys embed a different path, and the dynamic
# mapping of salt-state_apply passes index.mapping.total_fields.limit=1000 after a
# few minions: 400 illegal_argument_exception, the return is lost.)
HOSTDIR=$DATA/scratch/host
mkdir -p "$HOSTDIR"
if unshare --mount --propagation private true 2>/dev/null; then
  USE_NS=1
else
  USE_NS=0
  warn "unshare --mount not permitted: scratch paths differ per minion (more mapping fields)"
fi
# host_cmd ID : sets HOSTCMD to a command prefix that runs the rest with
# $DATA/scratch/ID mounted on $HOSTDIR (unshare/bash exec: the pid stays the same)
host_cmd() {
  mkdir -p "$DATA/scratch/$1"
  HOSTCMD=()
  if [[ $USE_NS == 1 ]]; then
    HOSTCMD=(unshare --mount --propagation private bash -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' _
      "$DATA/scratch/$1" "$HOSTDIR")
  fi
}
scratch_for() { if [[ $USE_NS == 1 ]]; then echo "$HOSTDIR"; else echo "$DATA/scratch/$1"; fi; }
RUN_LOG=$DATA/logs
mkdir -p "$RUN_LOG"

# Common returner block. doc types must be _doc: the default 'default' sends typed
# requests that OpenSearch 2/3 and Elasticsearch 8 reject.
es_block() { # index_date states_count states_order_output states_single_index
  cat <<EOF
elasticsearch:
  hosts:
    - "$ES_URL"
  timeout: 30
  doc_type: _doc
  master_job_cache_doc_type: _doc
  master_event_doc_type: _doc
  number_of_shards: 1
  number_of_replicas: 0
  index_date: $1
  states_count: $2
  states_order_output: $3
  states_single_index: $4
  functions_blacklist:
    - test.ping
    - saltutil.find_job
    - saltutil.running
EOF
}

# -------------------------------------------------------- source a: master --
write_master_conf() {
  mkdir -p "$SM/etc" "$SM/master"
  {
    cat <<EOF
# generated by scripts/salt-data.sh
id: $MASTER_ID
user: root
root_dir: $SM/master
interface: 127.0.0.1
publish_port: $PUB_PORT
ret_port: $RET_PORT
auto_accept: True
worker_threads: 3
log_level_logfile: info
file_roots:
  base:
    - $STATES
master_job_cache: elasticsearch
event_return: elasticsearch
EOF
    es_block False False False False
  } >"$SM/etc/master"
}
write_minion_conf() { # idx id
  local d=$SM/m$1
  mkdir -p "$d/etc"
  cat >"$d/etc/minion" <<EOF
# generated by scripts/salt-data.sh
id: $2
user: root
root_dir: $d
master: 127.0.0.1
master_port: $RET_PORT
publish_port: $PUB_PORT
acceptance_wait_time: 2
random_reauth_delay: 0
saltscope_scratch: $(scratch_for "$2")
EOF
}

salt_cli() { "$SALT_BIN/salt" -c "$SM/etc" "$@"; }

# run_job NAME [env VAR=..] -- salt args... : runs salt with --show-jid, records jid
# output goes to $RUN_LOG/NAME.out ; jid echoed
run_job() {
  local name=$1; shift
  local out=$RUN_LOG/$name.out jid
  # (--static would hide the jid line)
  salt_cli --show-jid --out=json "$@" >"$out" 2>"$RUN_LOG/$name.err" || true
  jid=$(sed -n 's/^jid: \([0-9_]*\)$/\1/p' "$out" | head -1)
  [[ -n $jid ]] || { warn "$name: no jid (see $out / $RUN_LOG/$name.err)"; tail -5 "$RUN_LOG/$name.err" >&2; }
  printf '%s' "$jid"
}

SCEN=$DATA/scenarios.jsonl
: >"$SCEN"
record() { # json object line
  printf '%s\n' "$1" >>"$SCEN"
}
join_json() { "$PY" -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$@"; }

T_A=$(now_s)
write_master_conf
for i in "${!MINIONS[@]}"; do write_minion_conf $((i + 1)) "${MINIONS[$i]}"; done

for p in "$PUB_PORT" "$RET_PORT"; do
  port_in_use "$p" && die "port $p already in use (another salt-master?); set SALTSCOPE_SALT_PORTS"
done

# Pre-seed an accepted key for a minion that never runs.
MPKI=$SM/master/etc/salt/pki/master
mkdir -p "$MPKI/minions" "$SM/offline-keys"
if [[ ! -f $MPKI/minions/$OFFLINE ]]; then
  "$SALT_BIN/salt-key" -c "$SM/etc" --gen-keys="$OFFLINE" --gen-keys-dir="$SM/offline-keys" >/dev/null 2>&1
  cp "$SM/offline-keys/$OFFLINE.pub" "$MPKI/minions/$OFFLINE"
fi

# one master log per run (the manifest summarises the returner's rejections from it)
MLOG=$SM/master/var/log/salt/master
[[ -f $MLOG ]] && mv -f "$MLOG" "$MLOG.prev"
log "starting salt-master (ports $PUB_PORT/$RET_PORT) and ${#MINIONS[@]} minions"
start_bg "$RUN_LOG/salt-master.console" "$SALT_BIN/salt-master" -c "$SM/etc" -l warning
sleep 3
# A master that could not bind its ports exits at once: say so now, not
# after two minutes of minions waiting for it.
kill -0 "${PIDS[0]}" 2>/dev/null || die "salt-master exited at start: $(tail -3 "$RUN_LOG/salt-master.console")"
for i in "${!MINIONS[@]}"; do
  host_cmd "${MINIONS[$i]}"
  start_bg "$RUN_LOG/minion-$((i + 1)).console" "${HOSTCMD[@]}" "$SALT_BIN/salt-minion" -c "$SM/m$((i + 1))/etc" -l warning
done

LIST=$(IFS=,; echo "${MINIONS[*]}")
log "waiting for minions to connect"
t0=$(date +%s)
while :; do
  # `salt` exits 2 while minions are still connecting: that is a "not yet",
  # not a failure (pipefail would end the script here).
  n=$({ salt_cli -L "$LIST" test.ping --out=json --static -t 5 2>/dev/null || true; } | "$PY" -c 'import json,sys
try: print(sum(1 for v in json.load(sys.stdin).values() if v is True))
except Exception: print(0)')
  [[ $n == "${#MINIONS[@]}" ]] && break
  (($(date +%s) - t0 > 120)) && die "only $n/${#MINIONS[@]} minions answered after 120s (logs: $RUN_LOG)"
  sleep 2
done
log "all ${#MINIONS[@]} minions up after $(($(date +%s) - t0))s"

# The first multi-minion job into a new index races: several master workers try to
# create <index>-v1 at once, the losers get resource_already_exists_exception and
# that minion's return is lost. Keep one such job (index_race; only on an empty
# engine), then create the other indices with single-minion jobs first.
jid=$(run_job index_race -L "$LIST" test.version -t 60)
record "{\"key\":\"index_race\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"$LIST\",\"tgt_type\":\"list\",\"fun\":\"test.version\"}"
W1=${MINIONS[0]}
WARM=()
WARM+=("$(run_job warm_grains "$W1" grains.item os -t 60)")
WARM+=("$(run_job warm_state "$W1" state.apply saltscope.packages -t 60)")
WARM+=("$(run_job warm_cmd "$W1" cmd.run 'echo warm' -t 60)")
WARM+=("$(run_job warm_single "$W1" state.single test.nop name=warmup.index -t 60)")
record "{\"key\":\"index_warmup\",\"jids\":$(join_json "${WARM[@]}"),\"minions\":[\"$W1\"]}"

# blacklisted test.ping (no return document, job cache + events still see it)
jid=$(run_job test_ping -L "$LIST" test.ping -t 30)
record "{\"key\":\"test_ping_blacklisted\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"$LIST\",\"tgt_type\":\"list\",\"fun\":\"test.ping\"}"

jid=$(run_job grains_item '*.example.*' grains.item os id saltversion -t 60)
record "{\"key\":\"grains_item\",\"jid\":\"$jid\",\"minions\":$(join_json web01.prod.example.com web02.prod.example.com cache-03.example.org),\"tgt\":\"*.example.*\",\"tgt_type\":\"glob\",\"fun\":\"grains.item\"}"

jid=$(run_job state_apply_multi -L "$LIST" state.apply saltscope -t 120)
record "{\"key\":\"state_apply_multi\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"$LIST\",\"tgt_type\":\"list\",\"fun\":\"state.apply\"}"

jid=$(run_job state_apply_test -C 'web* or db-02 or cache-*' state.apply saltscope test=True -t 120)
record "{\"key\":\"state_apply_test\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"web* or db-02 or cache-*\",\"tgt_type\":\"compound\",\"fun\":\"state.apply\"}"

jid=$(run_job cmd_run -L "$LIST" cmd.run 'echo "hello from {{ grains.id }}"; [ "{{ grains.id }}" != db-02 ] || { echo "db-02 refuses" >&2; exit 7; }' template=jinja -t 60)
record "{\"key\":\"cmd_run\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"$LIST\",\"tgt_type\":\"list\",\"fun\":\"cmd.run\"}"

jid=$(run_job missing_minion -L "db-02,$OFFLINE" test.version -t 10)
record "{\"key\":\"missing_minion\",\"jid\":\"$jid\",\"minions\":[\"db-02\",\"$OFFLINE\"],\"tgt\":\"db-02,$OFFLINE\",\"tgt_type\":\"list\",\"fun\":\"test.version\",\"never_returns\":[\"$OFFLINE\"]}"

# glob '*' also matches the accepted-but-never-running offline-05
jid=$(run_job glob_all_with_offline '*' test.version -t 10)
record "{\"key\":\"glob_all_with_offline\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}" "$OFFLINE"),\"tgt\":\"*\",\"tgt_type\":\"glob\",\"fun\":\"test.version\",\"never_returns\":[\"$OFFLINE\"]}"

jid=$(SUDO_USER=alice run_job sudo_alice 'web0*' cmd.run 'id -un' -t 60)
record "{\"key\":\"sudo_user_jobs\",\"jid\":\"$jid\",\"minions\":$(join_json web01.prod.example.com web02.prod.example.com),\"tgt\":\"web0*\",\"tgt_type\":\"glob\",\"fun\":\"cmd.run\",\"user\":\"sudo_alice\"}"
jid=$(SUDO_USER=bob run_job sudo_bob db-02 state.single test.succeed_with_changes name=bob.was.here -t 60)
record "{\"key\":\"sudo_user_jobs\",\"jid\":\"$jid\",\"minions\":[\"db-02\"],\"tgt\":\"db-02\",\"tgt_type\":\"glob\",\"fun\":\"state.single\",\"user\":\"sudo_bob\"}"

# Commands an auditor must see flagged (config.json's risk rules): a forced
# recursive delete (of a scratch dir of the minion's own: harmless) and a
# state run on target '*' (which also targets the offline minion).
jid=$(SUDO_USER=carol run_job risky_rm 'web0*' cmd.run "mkdir -p $HOSTDIR/cleanup.d && rm -rf $HOSTDIR/cleanup.d" -t 60)
record "{\"key\":\"risky_rm\",\"jid\":\"$jid\",\"minions\":$(join_json web01.prod.example.com web02.prod.example.com),\"tgt\":\"web0*\",\"tgt_type\":\"glob\",\"fun\":\"cmd.run\",\"user\":\"sudo_carol\"}"
jid=$(run_job state_apply_all '*' state.apply saltscope.packages -t 120)
record "{\"key\":\"state_apply_all\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}" "$OFFLINE"),\"tgt\":\"*\",\"tgt_type\":\"glob\",\"fun\":\"state.apply\",\"never_returns\":[\"$OFFLINE\"]}"

# runners also go through the master job cache
"$SALT_BIN/salt-run" -c "$SM/etc" --out=json jobs.list_jobs >"$RUN_LOG/runner_list_jobs.out" 2>"$RUN_LOG/runner_list_jobs.err" || true
"$SALT_BIN/salt-run" -c "$SM/etc" --out=json jobs.lookup_jid "$(sed -n 's/.*"key":"state_apply_multi","jid":"\([0-9_]*\)".*/\1/p' "$SCEN")" \
  >"$RUN_LOG/runner_lookup_jid.out" 2>"$RUN_LOG/runner_lookup_jid.err" || true
record "{\"key\":\"runner\",\"fun\":\"runner.jobs.list_jobs\",\"out\":\"$RUN_LOG/runner_list_jobs.out\"}"
sleep 3 # let the master's event returner flush
T_A_SECONDS=$(awk -v a="$T_A" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')
log "source a (master + minions) done in ${T_A_SECONDS}s; stopping salt processes"
cleanup_pids_now() {
  local pid i
  for pid in "${PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  PIDS=()
}
cleanup_pids_now

# ------------------------------------------------- source b: salt-call -----
T_B=$(now_s)
# variant  index_date states_count states_order_output states_single_index  full?
VARIANTS=(
  "plain False False False False full"
  "all_on True True True True full"
  "index_date True False False False short"
  "states_count False True False False short"
  "states_order_output False False True False short"
  "states_single_index False False False True short"
)
call() { # variant name args...
  local v=$1 name=$2; shift 2
  local out=$RUN_LOG/call-$v-$name.out jid
  host_cmd saltcall
  "${HOSTCMD[@]}" "$SALT_BIN/salt-call" -c "$DATA/call/$v" --local --return elasticsearch --metadata --out=json "$@" \
    >"$out" 2>"$RUN_LOG/call-$v-$name.err" || true
  jid=$("$PY" -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["local"]["jid"])
except Exception: print("")' "$out")
  [[ -n $jid ]] || warn "salt-call $v $name: no jid (see $out)"
  record "{\"key\":\"salt_call\",\"variant\":\"$v\",\"name\":\"$name\",\"jid\":\"$jid\",\"minions\":[\"saltcall-$v.example.net\"],\"args\":$(join_json "$@")}"
}
for line in "${VARIANTS[@]}"; do
  read -r v idate scount sorder ssingle depth <<<"$line"
  d=$DATA/call/$v
  mkdir -p "$d"
  {
    cat <<EOF
# generated by scripts/salt-data.sh (masterless salt-call, variant $v)
id: saltcall-$v.example.net
user: root
root_dir: $d/root
file_client: local
file_roots:
  base:
    - $STATES
# one scratch dir for all variants (runs are sequential): state names, which embed
# paths, stay the same across variants and don't multiply the dynamic mapping's fields
saltscope_scratch: $(scratch_for saltcall)
EOF
    es_block "$idate" "$scount" "$sorder" "$ssingle"
  } >"$d/minion"
  log "salt-call variant $v"
  call "$v" state_apply state.apply saltscope
  call "$v" state_sls state.sls saltscope
  call "$v" render_error state.apply broken
  if [[ $sorder == True || $v == plain ]]; then
    # 11 and 13 states: sizes at which the -ordered renaming loop does not raise
    call "$v" state_sls_packages state.sls saltscope.packages
    call "$v" state_sls_ordered_demo state.sls ordered_demo
  fi
  if [[ $depth == full ]]; then
    call "$v" state_apply_test state.apply saltscope test=True
    call "$v" state_single state.single file.managed name="$(scratch_for saltcall)/single.conf.d/x.y.conf" contents="jid-less single state $(date +%s%N)" makedirs=True
    call "$v" cmd_run_fail cmd.run 'echo out; echo err >&2; exit 3'
    call "$v" test_version test.version
    call "$v" test_ping test.ping
    call "$v" test_retcode test.retcode 5
    call "$v" grains_items grains.items
  fi
done
T_B_SECONDS=$(awk -v a="$T_B" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')
log "source b (salt-call) done in ${T_B_SECONDS}s"

curl -s -XPOST "$ES_URL/salt-*/_refresh" >/dev/null || warn "refresh failed"

# --------------------------------------------------------------- manifest --
"$PY" "$HELPER" manifest --es "$ES_URL" --scenarios "$SCEN" --out "$DATA/manifest.json" \
  --venv-action "$VENV_ACTION" --venv-seconds "$VENV_SECONDS" \
  --source-a-seconds "$T_A_SECONDS" --source-b-seconds "$T_B_SECONDS" \
  --master-log "$MLOG" \
  --total-seconds "$(awk -v a="$T_START" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')"
if [[ $DO_FIXTURES == 1 ]]; then
  "$PY" "$HELPER" fixtures --es "$ES_URL" --manifest "$DATA/manifest.json" --dir "$REPO/tests/fixtures"
fi
log "manifest: $DATA/manifest.json"
log "done in $(elapsed "$T_START")"
