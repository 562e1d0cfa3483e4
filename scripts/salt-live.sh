#!/usr/bin/env bash
# A REAL Salt master + minions that stay up while tests run, writing jobs and
# events through the REAL elasticsearch returner into a running engine (the
# same indices as scripts/salt-data.sh: salt-<fun>, salt-master-job-cache,
# salt-master-event-cache), for tests of the live tail.
#
#   scripts/salt-live.sh start [--schedule SECONDS]  start master + minions; returns once every
#                                        minion answers test.ping (prints how long), then a JSON
#                                        line on stdout; reuses a running set (idempotent)
#   scripts/salt-live.sh stop            stop every process it started (process groups from its
#                                        pid files, and any left by a crash under its work dir)
#   scripts/salt-live.sh status          running? (exit 0 all up, 3 none, 1 part)
#   scripts/salt-live.sh salt ARGS...     salt against the live master, e.g.
#                                        salt 'live*' test.ping --show-jid --out json --out-indent -1
#                                        (a jid line, then a JSON line per minion as it returns).
#                                        Salt 3008's --static runs the job as a batch: a test.ping
#                                        to find the minions first, salt/batch/<jid>/* events, two jids
#   scripts/salt-live.sh salt-run ARGS... salt-run against it (salt-run --jid JID to know the jid)
#   scripts/salt-live.sh schedule SECONDS [FUN [ARG...]]   every minion runs FUN (default test.ping)
#                                        every SECONDS through Salt's scheduler, no CLI needed
#   scripts/salt-live.sh schedule off
#
# Env: ES_URL (default http://127.0.0.1:9200), SALTSCOPE_WORK (default <repo>/.work; state in
#      $SALTSCOPE_WORK/salt-live), SALTSCOPE_SALT_PORTS="24525 24526" (publish/ret ports, below
#      32768: not salt-data.sh's 24505/24506, so both can run), SALT_LIVE_MINIONS=2 (1-9:
#      live01.example.com ...), SALT_LIVE_TIMEOUT=120 (seconds for the minions to answer).
# The venv is salt-data.sh's ($SALTSCOPE_WORK/venv; built with salt-data.sh --venv-only if missing).
set -euo pipefail

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=salt_data/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/salt_data/common.sh"

ES_URL=${ES_URL:-http://127.0.0.1:9200}
ES_URL=${ES_URL%/}
read -r PUB_PORT RET_PORT <<<"${SALTSCOPE_SALT_PORTS:-24525 24526}"
N=${SALT_LIVE_MINIONS:-2}
[[ $N =~ ^[1-9]$ ]] || die "SALT_LIVE_MINIONS must be 1-9 (got '$N')"
TIMEOUT=${SALT_LIVE_TIMEOUT:-120}
LIVE=$SALTSCOPE_WORK/salt-live
CONF=$LIVE/etc
RUN=$LIVE/run
LOGS=$LIVE/logs
SALT_LOGS=$LOGS
MASTER_ID=saltscope-live-master
MINIONS=()
for ((i = 1; i <= N; i++)); do MINIONS+=("live0$i.example.com"); done
SCHEDULE_NAME=saltscope-live

usage() { sed -n '2,27p' "$0"; }

# ------------------------------------------------------------ processes -----
# The pgids this script started: run/<name>.pid (master, minion-1, ...).
pidfiles() { compgen -G "$RUN/*.pid" || true; }
# ours PGID: some process of group PGID runs with a config under $LIVE (so a
# pid reused by someone else's process after a crash is never signalled)
ours() {
  local p c
  for p in $(pgrep -g "$1" 2>/dev/null); do
    c=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
    [[ $c == *"$LIVE/"* ]] && return 0
  done
  return 1
}
alive() { # PIDFILE
  local pgid
  pgid=$(tr -dc '0-9' <"$1" 2>/dev/null)
  [[ -n $pgid ]] && ours "$pgid"
}
# Process groups of salt processes whose command line names a config under
# $LIVE but that no pid file knows (the script was killed between starting
# one and writing its pid file, or the pid files were removed).
stray_groups() {
  local p c pgid
  for p in /proc/[0-9]*; do
    c=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    [[ "$c " == *" -c $LIVE/etc "* || "$c " == *" -c $LIVE/m"[0-9]"/etc "* ]] || continue
    pgid=$(awk '{print $5}' "$p/stat" 2>/dev/null) || continue
    [[ -n $pgid ]] && echo "$pgid"
  done | sort -u
}
stop_all() {
  local f pgid groups=()
  for f in $(pidfiles); do
    pgid=$(tr -dc '0-9' <"$f" 2>/dev/null)
    if [[ -n $pgid ]] && ours "$pgid"; then groups+=("$pgid"); fi
    rm -f "$f"
  done
  for pgid in $(stray_groups); do [[ " ${groups[*]} " == *" $pgid "* ]] || groups+=("$pgid"); done
  if ((${#groups[@]})); then
    # A minion takes 10 s to leave on TERM (the master 2 s) and holds
    # nothing worth waiting for: KILL after 3 s.
    SALT_STOP_GRACE=${SALT_STOP_GRACE:-3} salt_stop_groups "${groups[@]}"
    log "stopped live salt (process groups ${groups[*]})"
  else
    log "live salt not running"
  fi
}
# counts: sets UP (live pid files) and TOTAL (expected: master + minions)
count_up() {
  local f
  UP=0
  TOTAL=$((1 + ${#MINIONS[@]}))
  for f in "$RUN/master.pid" $(for ((i = 1; i <= N; i++)); do echo "$RUN/minion-$i.pid"; done); do
    [[ -f $f ]] && alive "$f" && UP=$((UP + 1))
  done
  return 0
}
need_running() {
  alive "$RUN/master.pid" 2>/dev/null || die "live salt is not running (scripts/salt-live.sh start)"
}

# --------------------------------------------------------------- start ------
summary_json() { # seconds reused
  "$SALT_PY" - "$1" "$2" "$MASTER_ID" "$PUB_PORT" "$RET_PORT" "$CONF" "$ES_URL" "$LIVE" "${MINIONS[@]}" <<'EOF'
import json, sys
a = sys.argv[1:]
print(json.dumps({"seconds": float(a[0]), "reused": a[1] == "1", "master_id": a[2],
                  "ports": {"publish": int(a[3]), "ret": int(a[4])}, "conf_dir": a[5],
                  "es_url": a[6], "work_dir": a[7], "minions": a[8:]}))
EOF
}

# publish_connections: established TCP connections to the publish port
# (only minions connect there; the CLI talks to the master over IPC)
publish_connections() {
  ss -Htn state established "( sport = :$PUB_PORT )" 2>/dev/null | wc -l
}

start() {
  local schedule=""
  while (($#)); do
    case $1 in
      --schedule) schedule=${2:?--schedule needs SECONDS}; shift ;;
      --schedule=*) schedule=${1#*=} ;;
      *) die "start: unknown argument $1" ;;
    esac
    shift
  done
  salt_refuse_proxy_path
  local t0
  t0=$(now_s)
  if ! salt_venv_ok; then
    log "no salt venv at $SALT_VENV: building it (scripts/salt-data.sh --venv-only)"
    "$SALTSCOPE_REPO/scripts/salt-data.sh" --venv-only
  fi
  mkdir -p "$CONF" "$RUN" "$LOGS"

  count_up
  if ((UP == TOTAL)); then
    local was
    was=$(cat "$RUN/es_url" 2>/dev/null || true)
    [[ $was == "$ES_URL" ]] || die "live salt runs against ES_URL=$was, not $ES_URL: scripts/salt-live.sh stop first"
    SALT_WAIT_STATIC=0 salt_wait_minions "$CONF" "$TIMEOUT" "${MINIONS[@]}"
    [[ -n $schedule ]] && set_schedule "$schedule"
    log "live salt already running: ${#MINIONS[@]} minions answered in $(elapsed "$t0")"
    summary_json "$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')" 1
    return 0
  fi
  if ((UP > 0)) || [[ -n $(stray_groups) ]]; then
    warn "live salt half running ($UP/$TOTAL): stopping what is left first"
    stop_all
  fi

  curl -sf --max-time 5 "$ES_URL/" >/dev/null \
    || die "search engine not reachable at ES_URL=$ES_URL (start one, e.g. scripts/engine.sh start)"
  local p
  for p in "$PUB_PORT" "$RET_PORT"; do
    ((p < 32768)) || die "port $p is in Linux's ephemeral range (32768-60999): choose SALTSCOPE_SALT_PORTS below 32768"
    port_in_use "$p" && die "port $p already in use (another salt-master?); set SALTSCOPE_SALT_PORTS"
  done

  # A start that does not finish stops what it started.
  trap 'rc=$?; if ((rc != 0)); then warn "start failed: stopping what it started"; stop_all; fi' EXIT

  salt_write_master_conf "$CONF" "$LIVE/master" "$MASTER_ID" "$PUB_PORT" "$RET_PORT" "$ES_URL"
  # Minions see their scratch dir at salt-data.sh's $HOSTDIR path (each in a
  # private mount namespace, so the two never meet): a state.apply here then
  # names its states like salt-data.sh's and adds no field to salt-state_apply.
  salt_ns_init "$SALTSCOPE_WORK/salt-data/scratch/host" "$LIVE/scratch"
  local i
  for i in "${!MINIONS[@]}"; do
    salt_write_minion_conf "$LIVE/m$((i + 1))" "${MINIONS[$i]}" "$PUB_PORT" "$RET_PORT" "$(scratch_for "${MINIONS[$i]}")"
  done
  printf '%s\n' "$ES_URL" >"$RUN/es_url"

  local mlog=$LIVE/master/var/log/salt/master
  [[ -f $mlog ]] && mv -f "$mlog" "$mlog.prev"
  log "starting salt-master $MASTER_ID (ports $PUB_PORT/$RET_PORT) and ${#MINIONS[@]} minions (${MINIONS[*]}) -> $ES_URL"
  salt_start_bg "$LOGS/salt-master.console" "$SALT_BIN/salt-master" -c "$CONF" -l warning
  echo "$SALT_BG_PID" >"$RUN/master.pid"
  local mpid=$SALT_BG_PID t1
  t1=$(date +%s)
  until port_in_use "$RET_PORT" && port_in_use "$PUB_PORT"; do
    kill -0 "$mpid" 2>/dev/null || die "salt-master exited at start: $(tail -3 "$LOGS/salt-master.console")"
    (($(date +%s) - t1 > 60)) && die "salt-master did not listen on $PUB_PORT/$RET_PORT within 60s (log: $mlog)"
    sleep 0.2
  done
  log "master listening after $(elapsed "$t0")"
  for i in "${!MINIONS[@]}"; do
    host_cmd "${MINIONS[$i]}"
    salt_start_bg "$LOGS/minion-$((i + 1)).console" "${HOSTCMD[@]}" "$SALT_BIN/salt-minion" -c "$LIVE/m$((i + 1))/etc" -l warning
    echo "$SALT_BG_PID" >"$RUN/minion-$((i + 1)).pid"
  done
  # A job published before a minion has subscribed never reaches it (the CLI
  # then waits its whole timeout): wait until every minion holds a
  # connection to the publish port, then ping.
  t1=$(date +%s)
  while (($(publish_connections) < ${#MINIONS[@]})); do
    for i in "${!MINIONS[@]}"; do
      alive "$RUN/minion-$((i + 1)).pid" || die "minion ${MINIONS[$i]} exited at start: $(tail -3 "$LOGS/minion-$((i + 1)).console")"
    done
    (($(date +%s) - t1 > TIMEOUT)) && die "minions not connected after ${TIMEOUT}s (logs: $LOGS, $LIVE/m*/var/log/salt/minion)"
    sleep 0.2
  done
  log "minions connected after $(elapsed "$t0")"
  SALT_WAIT_STATIC=0 salt_wait_minions "$CONF" "$TIMEOUT" "${MINIONS[@]}"
  trap - EXIT
  [[ -n $schedule ]] && set_schedule "$schedule"
  log "live salt up: master + ${#MINIONS[@]} minions answered test.ping $(elapsed "$t0") after start"
  summary_json "$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')" 0
}

# ------------------------------------------------------------ schedule ------
# set_schedule SECONDS [FUN [ARG...]] | off : a job in every minion's own
# scheduler (not persisted: a restart drops it). Its returns go to the
# master like any job's: salt/job/<jid>/ret/<minion> events (no new event:
# nobody published it) and, unless the function is blacklisted (test.ping),
# a return document.
set_schedule() {
  local list
  list=$(IFS=,; echo "${MINIONS[*]}")
  "$SALT_BIN/salt" -c "$CONF" -L "$list" schedule.delete "$SCHEDULE_NAME" persist=False --out=quiet -t 30 >/dev/null 2>&1 || true
  if [[ $1 == off ]]; then
    log "schedule $SCHEDULE_NAME removed"
    return 0
  fi
  local secs=$1 fun=${2:-test.ping}
  [[ $secs =~ ^[1-9][0-9]*$ ]] || die "schedule: SECONDS must be a whole number >= 1 (got '$secs')"
  shift $(($# >= 2 ? 2 : 1))
  local args=()
  if (($#)); then
    args=("job_args=$("$SALT_PY" -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$@")")
  fi
  "$SALT_BIN/salt" -c "$CONF" -L "$list" schedule.add "$SCHEDULE_NAME" function="$fun" seconds="$secs" \
    persist=False "${args[@]}" --out=json --static -t 30 >"$LOGS/schedule.out" 2>&1 \
    || die "schedule.add failed: $(cat "$LOGS/schedule.out")"
  log "every minion runs $fun${args:+ ${args[*]}} every ${secs}s ($SCHEDULE_NAME)"
}

# ---------------------------------------------------------------- main ------
cmd=${1:-}
(($#)) && shift
# start and stop one at a time (two test files may start it at once: the
# second then finds it running and reuses it). flock -o: the lock's file
# descriptor is not handed down to the salt processes, which outlive the start.
locked() { mkdir -p "$RUN"; exec flock -o -w 300 "$RUN/lock" "$0" "$@"; }
case $cmd in
  start) locked _start "$@" ;;
  stop) locked _stop ;;
  _start) start "$@" ;;
  _stop) stop_all ;;
  status)
    count_up
    if ((UP == TOTAL)); then
      echo "live salt running: master $MASTER_ID (ports $PUB_PORT/$RET_PORT), ${MINIONS[*]} -> $(cat "$RUN/es_url" 2>/dev/null)"
    elif ((UP == 0)); then
      echo "live salt not running"
      [[ -z $(stray_groups) ]] || { echo "  but salt processes under $LIVE are (scripts/salt-live.sh stop)"; exit 1; }
      exit 3
    else
      echo "live salt half running: $UP/$TOTAL processes (scripts/salt-live.sh stop)"
      exit 1
    fi
    ;;
  salt) need_running; exec "$SALT_BIN/salt" -c "$CONF" "$@" ;;
  salt-run) need_running; exec "$SALT_BIN/salt-run" -c "$CONF" "$@" ;;
  schedule)
    need_running
    (($#)) || die "schedule SECONDS [FUN [ARG...]] | schedule off"
    set_schedule "$@"
    ;;
  -h|--help|help) usage ;;
  *) usage >&2; die "unknown command '${cmd}'" ;;
esac
