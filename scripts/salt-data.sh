#!/usr/bin/env bash
# Produce REAL Salt job data through the REAL elasticsearch returner
# (saltext-elasticsearch) into a running Elasticsearch/OpenSearch.
#
#   ES_URL=http://127.0.0.1:9200 scripts/salt-data.sh            # make data
#   ES_URL=... scripts/salt-data.sh --fixtures                   # ... and refresh tests/fixtures/
#   scripts/salt-data.sh --venv-only                             # only build the venv
#
# Env: ES_URL (default http://127.0.0.1:9200), SALTSCOPE_WORK (default <repo>/.work),
#      SALT_DATA_SCOPE=full (default) | smoke: smoke runs only the jobs a smoke of
#      every view needs (a multi-minion state.apply, cmd.run, a missing minion,
#      sudo users, a risky command) and no salt-call variants: for a further
#      engine version, in about a third of the time.
#      SALTSCOPE_SALT_PORTS="24505 24506" (master publish/ret ports; below Linux's
#      ephemeral range 32768-60999, where an outgoing connection of the
#      tests can hold the port and the master then fails to bind it).
# Writes $SALTSCOPE_WORK/salt-data/manifest.json (scenario -> jid(s), minions, versions,
# timings). Every salt process it starts is stopped on exit, by pid (process group).
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=salt_data/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/salt_data/common.sh"

T_START=$(now_s)
REPO=$SALTSCOPE_REPO
ES_URL=${ES_URL:-http://127.0.0.1:9200}
ES_URL=${ES_URL%/}
read -r PUB_PORT RET_PORT <<<"${SALTSCOPE_SALT_PORTS:-24505 24506}"
STATES=$SALT_STATES
DATA=$SALTSCOPE_WORK/salt-data
SM=$SALTSCOPE_WORK/salt-master
HELPER=$REPO/scripts/salt_data/helper.py
MASTER_ID=saltscope-master
MINIONS=(web01.prod.example.com web02.prod.example.com db-02 cache-03.example.org)
OFFLINE=offline-05
DO_FIXTURES=0
VENV_ONLY=0
SCOPE=${SALT_DATA_SCOPE:-full}
[[ $SCOPE == full || $SCOPE == smoke ]] || die "SALT_DATA_SCOPE must be full or smoke (got '$SCOPE')"
full() { [[ $SCOPE == full ]]; }
salt_refuse_proxy_path
for a in "$@"; do
  case $a in
    --fixtures) DO_FIXTURES=1 ;;
    --venv-only) VENV_ONLY=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) die "unknown argument: $a" ;;
  esac
done

# ---------------------------------------------------------------- venv ------
T_VENV=$(now_s)
VENV_ACTION=skipped
if salt_venv_ok; then
  log "venv present: $SALT_VENV"
else
  VENV_ACTION=created
  salt_venv_create
fi
VENV_SECONDS=$(awk -v a="$T_VENV" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')
log "venv step: $VENV_ACTION in ${VENV_SECONDS}s"
[[ $VENV_ONLY == 1 ]] && exit 0

PY=$SALT_PY

# ------------------------------------------------------------ engine check --
curl -sf --max-time 5 "$ES_URL/" >/dev/null \
  || die "search engine not reachable at ES_URL=$ES_URL (start one, e.g. scripts/engine.sh start)"
log "engine at $ES_URL: $(curl -s "$ES_URL/" | "$PY" -c 'import json,sys; d=json.load(sys.stdin)["version"]; print(d.get("distribution","elasticsearch"), d["number"])')"

# -------------------------------------------------------------- processes --
# every salt process runs in a process group of its own (salt_start_bg): its
# pgid is in PIDS until it is stopped
cleanup() {
  local rc=$?
  salt_stop_groups "${PIDS[@]}"
  ((${#PIDS[@]})) && log "stopped salt processes (pgids ${PIDS[*]})"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start_bg() { salt_start_bg "$@"; }

mkdir -p "$DATA" "$SM"

# Every "host" sees its scratch files at $HOSTDIR (see salt_ns_init in
# salt_data/common.sh): host_cmd ID mounts $DATA/scratch/ID there.
HOSTDIR=$DATA/scratch/host
salt_ns_init "$HOSTDIR" "$DATA/scratch"
RUN_LOG=$DATA/logs
SALT_LOGS=$RUN_LOG
mkdir -p "$RUN_LOG"

# Common returner block (salt_es_block in salt_data/common.sh).
es_block() { salt_es_block "$ES_URL" "$@"; } # index_date states_count states_order_output states_single_index

# -------------------------------------------------------- source a: master --
write_master_conf() { salt_write_master_conf "$SM/etc" "$SM/master" "$MASTER_ID" "$PUB_PORT" "$RET_PORT" "$ES_URL"; }
write_minion_conf() { # idx id
  salt_write_minion_conf "$SM/m$1" "$2" "$PUB_PORT" "$RET_PORT" "$(scratch_for "$2")"
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
salt_wait_minions "$SM/etc" 120 "${MINIONS[@]}"
log "all ${#MINIONS[@]} minions up after ${SALT_WAIT_SECONDS}s"

if full; then
# The first multi-minion job into a new index races: several master workers try to
# create <index>-v1 at once, the losers get resource_already_exists_exception and
# that minion's return is lost. Keep one such job (index_race; only on an empty
# engine), then create the other indices with single-minion jobs first.
jid=$(run_job index_race -L "$LIST" test.version -t 60)
record "{\"key\":\"index_race\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"$LIST\",\"tgt_type\":\"list\",\"fun\":\"test.version\"}"
fi

W1=${MINIONS[0]}
WARM=()
WARM+=("$(run_job warm_grains "$W1" grains.item os -t 60)")
WARM+=("$(run_job warm_state "$W1" state.apply saltscope.packages -t 60)")
WARM+=("$(run_job warm_cmd "$W1" cmd.run 'echo warm' -t 60)")
WARM+=("$(run_job warm_single "$W1" state.single test.nop name=warmup.index -t 60)")
record "{\"key\":\"index_warmup\",\"jids\":$(join_json "${WARM[@]}"),\"minions\":[\"$W1\"]}"

if full; then
# blacklisted test.ping (no return document, job cache + events still see it)
jid=$(run_job test_ping -L "$LIST" test.ping -t 30)
record "{\"key\":\"test_ping_blacklisted\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"$LIST\",\"tgt_type\":\"list\",\"fun\":\"test.ping\"}"

jid=$(run_job grains_item '*.example.*' grains.item os id saltversion -t 60)
record "{\"key\":\"grains_item\",\"jid\":\"$jid\",\"minions\":$(join_json web01.prod.example.com web02.prod.example.com cache-03.example.org),\"tgt\":\"*.example.*\",\"tgt_type\":\"glob\",\"fun\":\"grains.item\"}"

fi

jid=$(run_job state_apply_multi -L "$LIST" state.apply saltscope -t 120)
record "{\"key\":\"state_apply_multi\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"$LIST\",\"tgt_type\":\"list\",\"fun\":\"state.apply\"}"

if full; then
jid=$(run_job state_apply_test -C 'web* or db-02 or cache-*' state.apply saltscope test=True -t 120)
record "{\"key\":\"state_apply_test\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"web* or db-02 or cache-*\",\"tgt_type\":\"compound\",\"fun\":\"state.apply\"}"

fi

jid=$(run_job cmd_run -L "$LIST" cmd.run 'echo "hello from {{ grains.id }}"; [ "{{ grains.id }}" != db-02 ] || { echo "db-02 refuses" >&2; exit 7; }' template=jinja -t 60)
record "{\"key\":\"cmd_run\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}"),\"tgt\":\"$LIST\",\"tgt_type\":\"list\",\"fun\":\"cmd.run\"}"

jid=$(run_job missing_minion -L "db-02,$OFFLINE" test.version -t 10)
record "{\"key\":\"missing_minion\",\"jid\":\"$jid\",\"minions\":[\"db-02\",\"$OFFLINE\"],\"tgt\":\"db-02,$OFFLINE\",\"tgt_type\":\"list\",\"fun\":\"test.version\",\"never_returns\":[\"$OFFLINE\"]}"

if full; then
# A list target naming a minion the master has no key for: Salt's CLI says
# "Minion did not return. [Not connected]" and the publish event lists it in
# `missing`, not in `minions`.
jid=$(run_job unknown_minion -L "web01.prod.example.com,ghost01" state.apply saltscope.packages -t 60)
record "{\"key\":\"unknown_minion\",\"jid\":\"$jid\",\"minions\":[\"web01.prod.example.com\"],\"tgt\":\"web01.prod.example.com,ghost01\",\"tgt_type\":\"list\",\"fun\":\"state.apply\",\"unknown\":[\"ghost01\"]}"

# glob '*' also matches the accepted-but-never-running offline-05
jid=$(run_job glob_all_with_offline '*' test.version -t 10)
record "{\"key\":\"glob_all_with_offline\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}" "$OFFLINE"),\"tgt\":\"*\",\"tgt_type\":\"glob\",\"fun\":\"test.version\",\"never_returns\":[\"$OFFLINE\"]}"

fi

jid=$(SUDO_USER=alice run_job sudo_alice 'web0*' cmd.run 'id -un' -t 60)
record "{\"key\":\"sudo_user_jobs\",\"jid\":\"$jid\",\"minions\":$(join_json web01.prod.example.com web02.prod.example.com),\"tgt\":\"web0*\",\"tgt_type\":\"glob\",\"fun\":\"cmd.run\",\"user\":\"sudo_alice\"}"
if full; then
jid=$(SUDO_USER=bob run_job sudo_bob db-02 state.single test.succeed_with_changes name=bob.was.here -t 60)
record "{\"key\":\"sudo_user_jobs\",\"jid\":\"$jid\",\"minions\":[\"db-02\"],\"tgt\":\"db-02\",\"tgt_type\":\"glob\",\"fun\":\"state.single\",\"user\":\"sudo_bob\"}"
fi

# Commands an auditor must see flagged (config.json's risk rules): a forced
# recursive delete (of a scratch dir of the minion's own: harmless) and a
# state run on target '*' (which also targets the offline minion).
jid=$(SUDO_USER=carol run_job risky_rm 'web0*' cmd.run "mkdir -p $HOSTDIR/cleanup.d && rm -rf $HOSTDIR/cleanup.d" -t 60)
record "{\"key\":\"risky_rm\",\"jid\":\"$jid\",\"minions\":$(join_json web01.prod.example.com web02.prod.example.com),\"tgt\":\"web0*\",\"tgt_type\":\"glob\",\"fun\":\"cmd.run\",\"user\":\"sudo_carol\"}"
if full; then
jid=$(run_job state_apply_all '*' state.apply saltscope.packages -t 120)
record "{\"key\":\"state_apply_all\",\"jid\":\"$jid\",\"minions\":$(join_json "${MINIONS[@]}" "$OFFLINE"),\"tgt\":\"*\",\"tgt_type\":\"glob\",\"fun\":\"state.apply\",\"never_returns\":[\"$OFFLINE\"]}"
fi

# runners also go through the master job cache
"$SALT_BIN/salt-run" -c "$SM/etc" --out=json jobs.list_jobs >"$RUN_LOG/runner_list_jobs.out" 2>"$RUN_LOG/runner_list_jobs.err" || true
"$SALT_BIN/salt-run" -c "$SM/etc" --out=json jobs.lookup_jid "$(sed -n 's/.*"key":"state_apply_multi","jid":"\([0-9_]*\)".*/\1/p' "$SCEN")" \
  >"$RUN_LOG/runner_lookup_jid.out" 2>"$RUN_LOG/runner_lookup_jid.err" || true
record "{\"key\":\"runner\",\"fun\":\"runner.jobs.list_jobs\",\"out\":\"$RUN_LOG/runner_list_jobs.out\"}"
sleep 3 # let the master's event returner flush
T_A_SECONDS=$(awk -v a="$T_A" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')
log "source a (master + minions) done in ${T_A_SECONDS}s; stopping salt processes"
salt_stop_groups "${PIDS[@]}"
PIDS=()

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
full || VARIANTS=()
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
  if [[ $v == plain ]]; then
    # History for the fleet views: the same SLS three times; its health check
    # starts failing on the third run.
    call "$v" drift_run_1 state.sls drift
    call "$v" drift_run_2 state.sls drift
    call "$v" drift_run_3 state.sls drift pillar='{"drift_break": true}'
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
