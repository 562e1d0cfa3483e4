#!/usr/bin/env bash
# THE test command (CI runs it through .ci/run):
#
#   scripts/test.sh [--engine opensearch|opensearch2|elasticsearch|both|all] [--skip-setup] [--no-e2e] [--no-scale]
#
#  1. setup        scripts/setup.sh (installs what is missing; fast when warm)
#  2. unit         cargo test -p saltscope-core -p saltscope-gen   (no engine; fails fast)
#  3. build        scripts/build.sh                         (trunk --release --offline)
#  per engine product (ENGINE env or --engine; default both: OpenSearch, then Elasticsearch):
#  4. engine       ENGINE=<p> ENGINE_PORT=9250 scripts/engine.sh start
#     template     (Elasticsearch only) scripts/index-template.sh install: OpenSearch
#                  runs on the returner's dynamic mappings, Elasticsearch on the
#                  project's index template, so the views are tested on both
#  5. salt-data    ES_URL=http://127.0.0.1:9250 scripts/salt-data.sh (real Salt runs)
#  6. integration  ES_URL=... cargo test -p saltscope --tests
#  7. nginx        NGINX_PORT=8090 ENGINE_URL=http://127.0.0.1:9250 scripts/nginx.sh start
#  8. e2e          BASE_URL=http://127.0.0.1:8090 node --test e2e/ (the deployment tests,
#                  e2e/{proxy,auth-front,tls,failover,headers}.test.mjs, start their own
#                  nginx and fronts on ports 8110-8147 (E2E_PORTS) and stop them;
#                  e2e/salt-live*.test.mjs start a real master + 2 minions
#                  (scripts/salt-live.sh, ports 24525/24526))
#  9. scale        (OpenSearch only) scripts/generate.sh loads 1,000,000 generated
#                  returns (prefix saltgen), jobs of every shape (saltbig) and
#                  1,000,000 events (saltev, EVENTS=1000000), then
#                  e2e/scale/*.spec.mjs page deep into them (--no-scale skips both)
# 10. templates    scripts/index-template.sh verify (real documents, scratch indices)
#  then nginx and the engine are stopped (also on failure or Ctrl-C).
# Prints a summary with step timings; last line "all: N passed, N failed".
# Exit status is non-zero when any step fails.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SALTSCOPE_REPO"

ENGINES=${ENGINE:-all}
SKIP_SETUP=0
RUN_E2E=1
RUN_SCALE=1
while (( $# )); do
  case $1 in
    --engine) ENGINES=${2:?--engine needs opensearch|elasticsearch|both}; shift ;;
    --engine=*) ENGINES=${1#*=} ;;
    --skip-setup) SKIP_SETUP=1 ;;
    --no-e2e) RUN_E2E=0 ;;
    --no-scale) RUN_SCALE=0 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
case $ENGINES in
  opensearch|opensearch2|elasticsearch) ;;
  both) ENGINES="opensearch elasticsearch" ;;
  all) ENGINES="opensearch elasticsearch opensearch2" ;;
  *) die "--engine must be opensearch, opensearch2, elasticsearch, both or all (got '$ENGINES')" ;;
esac

TEST_ENGINE_PORT=${TEST_ENGINE_PORT:-9250}
TEST_NGINX_PORT=${TEST_NGINX_PORT:-8090}
ES_URL_TEST=http://127.0.0.1:$TEST_ENGINE_PORT
LOGDIR=$SALTSCOPE_WORK/test-logs
mkdir -p "$LOGDIR"

T_ALL=$(now_s)
STEPS=()            # "name|status|seconds|detail"
PASSED=0
FAILED=0
FAILED_STEPS=0
ENGINE_UP=""        # product of the engine we started
NGINX_UP=0

# ---- cleanup: never leave processes behind ---------------------------------------
stop_nginx() {
  if (( NGINX_UP )); then
    NGINX_PORT=$TEST_NGINX_PORT scripts/nginx.sh stop || warn "nginx stop failed"
    NGINX_UP=0
  fi
}
stop_engine() {
  if [[ -n "$ENGINE_UP" ]]; then
    # e2e/salt-live.test.mjs stops live Salt in after(); a test process that
    # died leaves it running, pointed at this engine.
    scripts/salt-live.sh stop >/dev/null 2>&1 || warn "salt-live stop failed"
    ENGINE=$ENGINE_UP ENGINE_PORT=$TEST_ENGINE_PORT scripts/engine.sh stop || warn "engine stop failed"
    ENGINE_UP=""
  fi
}
summary() {
  local rc=$1 s name status secs detail
  echo
  echo "==================== scripts/test.sh summary ===================="
  for s in "${STEPS[@]}"; do
    IFS='|' read -r name status secs detail <<<"$s"
    printf '  %-26s %-5s %7ss  %s\n' "$name" "$status" "$secs" "$detail"
  done
  printf '  %-26s %-5s %7ss\n' "total" "$( ((rc == 0)) && echo ok || echo FAIL)" \
    "$(awk -v a="$T_ALL" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')"
  echo "  logs: $LOGDIR"
  echo "================================================================="
  echo "all: $PASSED passed, $((FAILED + FAILED_STEPS)) failed"
}
on_exit() {
  local rc=$?
  trap - EXIT INT TERM
  stop_nginx
  stop_engine
  if (( FAILED_STEPS + FAILED > 0 && rc == 0 )); then rc=1; fi
  # a failure outside run_step (die, set -e) still counts as one
  if (( rc != 0 && FAILED_STEPS + FAILED == 0 )); then FAILED_STEPS=1; fi
  summary "$rc"
  exit "$rc"
}
trap on_exit EXIT
trap 'warn "interrupted"; exit 130' INT TERM

# ---- counting -----------------------------------------------------------------------
# Sum cargo's "test result: ok. N passed; M failed" lines and node's
# "# pass N" / "# fail N" (tap) or "ℹ pass N" (spec) lines of a log.
count_tests() {
  local log=$1
  awk '
    /^test result: / {
      if (match($0, /[0-9]+ passed/)) p += substr($0, RSTART, RLENGTH) + 0
      if (match($0, /[0-9]+ failed/)) f += substr($0, RSTART, RLENGTH) + 0
    }
    /^(# |ℹ )pass [0-9]+$/ { p += $NF }
    /^(# |ℹ )fail [0-9]+$/ { f += $NF }
    END { print p + 0, f + 0 }
  ' "$log"
}

# run_step [--daemon] NAME CMD... : run, tee to $LOGDIR/NAME.log, record
# timing and counts; on failure the script exits (the EXIT trap cleans up).
# --daemon: the command leaves a server running whose inherited stdout would
# keep a tee pipe open forever, so write to the log file and print it after.
run_step() {
  local daemon=0
  if [[ $1 == --daemon ]]; then daemon=1; shift; fi
  local name=$1; shift
  local log="$LOGDIR/${name//[^A-Za-z0-9_.-]/_}.log" t0 rc p f detail
  echo
  echo "---- [$name] $* ----"
  t0=$(now_s)
  set +e
  if (( daemon )); then
    "$@" >"$log" 2>&1 </dev/null
    rc=$?
    cat "$log"
  else
    "$@" 2>&1 </dev/null | tee "$log"
    rc=${PIPESTATUS[0]}
  fi
  set -e
  read -r p f < <(count_tests "$log")
  PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
  detail=""
  (( p + f > 0 )) && detail="$p passed, $f failed"
  if (( rc != 0 )); then
    (( f == 0 )) && FAILED_STEPS=$((FAILED_STEPS + 1))
    STEPS+=("$name|FAIL|$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')|exit $rc${detail:+; $detail}; log $log")
    echo "---- [$name] FAILED (exit $rc) ----" >&2
    exit "$rc"
  fi
  STEPS+=("$name|ok|$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN{printf "%.1f", b-a}')|$detail")
}
skip_step() { STEPS+=("$1|skip|0.0|$2"); log "skipping $1: $2"; }

require_script() {
  [[ -x "$1" ]] || die "$1 is missing (or not executable): $2"
}

# ---- steps ----------------------------------------------------------------------------
if (( SKIP_SETUP )); then skip_step setup "--skip-setup"; else run_step setup env SETUP_ENGINE="$([[ $ENGINES == *" "* ]] && echo all || echo "$ENGINES")" scripts/setup.sh; fi

# Unit tests: the core, on its own code and the real documents in tests/fixtures.
run_step unit env -u ES_URL cargo test -p saltscope-core -p saltscope-gen

run_step build scripts/build.sh

for product in $ENGINES; do
  require_script scripts/engine.sh "the test engine cannot start"
  require_script scripts/salt-data.sh "no Salt data can be produced"
  if port_in_use "$TEST_ENGINE_PORT"; then
    die "port $TEST_ENGINE_PORT is in use: stop whatever runs there (a previous test engine? ENGINE_PORT=$TEST_ENGINE_PORT scripts/engine.sh stop)"
  fi
  ENGINE_UP=$product   # set before start so that a half-started engine is stopped too
  # 2 GB: the scale step aggregates a million returns.
  run_step --daemon "engine[$product]" env ENGINE="$product" ENGINE_PORT="$TEST_ENGINE_PORT" ENGINE_HEAP=2g \
    ENGINE_CORS_ORIGIN="http://127.0.0.1:$TEST_NGINX_PORT" scripts/engine.sh start
  if [[ $product == elasticsearch ]]; then
    run_step "template[$product]" env ES_URL="$ES_URL_TEST" scripts/index-template.sh install
  fi
  # OpenSearch 2.19 gets a smoke of every view: less Salt data, no
  # integration tests, one browser spec (the full suites run on the others).
  smoke=0
  [[ $product == opensearch2 ]] && smoke=1
  run_step "salt-data[$product]" env ES_URL="$ES_URL_TEST" SALT_DATA_SCOPE="$( ((smoke)) && echo smoke || echo full)" \
    scripts/salt-data.sh

  # SALTSCOPE_REQUIRE_ENGINE: the integration tests fail, not skip, without ES_URL.
  if ((smoke)); then
    skip_step "integration[$product]" "smoke of the views only"
  else
    run_step "integration[$product]" env ES_URL="$ES_URL_TEST" ENGINE="$product" SALTSCOPE_REQUIRE_ENGINE=1 \
      cargo test -p saltscope --tests
  fi

  if (( RUN_E2E )); then
    NGINX_UP=1
    run_step --daemon "nginx[$product]" env NGINX_PORT="$TEST_NGINX_PORT" ENGINE_URL="$ES_URL_TEST" scripts/nginx.sh start
    specs=(e2e/)
    ((smoke)) && specs=(e2e/smoke.test.mjs e2e/smoke/views.spec.mjs)
    run_step "e2e[$product]" env BASE_URL="http://127.0.0.1:$TEST_NGINX_PORT" ES_URL="$ES_URL_TEST" \
      ENGINE="$product" node --test "${specs[@]}"
    if [[ $product == opensearch ]]; then
      # A three-node cluster of its own: a node goes away under the app.
      run_step "cluster[$product]" env BASE_URL="http://127.0.0.1:$TEST_NGINX_PORT" ES_URL="$ES_URL_TEST" \
        node --test e2e/cluster/failover.spec.mjs
    fi
    if (( RUN_SCALE )) && [[ $product == opensearch ]]; then
      run_step "generate[$product]" env ES_URL="$ES_URL_TEST" RETURNS=1000000 PREFIX=saltgen scripts/generate.sh
      # Jobs of any shape: 10,000 states, 2,000 minions (of 2,100: a list
      # target of 2,000 names), 5 MB outputs.
      run_step "generate-big[$product]" env ES_URL="$ES_URL_TEST" RETURNS=0 PREFIX=saltbig MINIONS=2100 \
        STATES_PER_RETURN=10000 MINIONS_PER_JOB=2000 MINIONS_PER_JOB_FUN=state.apply OUTPUT_BYTES=5000000 \
        scripts/generate.sh
      # The master's event bus: every job's events, then fleet noise up to a million.
      run_step "generate-events[$product]" env ES_URL="$ES_URL_TEST" RETURNS=100000 EVENTS=1000000 PREFIX=saltev \
        scripts/generate.sh
      run_step "scale[$product]" env BASE_URL="http://127.0.0.1:$TEST_NGINX_PORT" ES_URL="$ES_URL_TEST" \
        GEN_PREFIX=saltgen GEN_RETURNS=1000000 GEN_BIG_PREFIX=saltbig GEN_EVENTS_PREFIX=saltev GEN_EVENTS=1000000 \
        node --test e2e/scale/jobs-1m.spec.mjs e2e/scale/export-1m.spec.mjs e2e/scale/big-jobs.spec.mjs e2e/scale/events-1m.spec.mjs
    fi
    stop_nginx
  else
    skip_step "e2e[$product]" "--no-e2e"
  fi
  # Last: verify installs the templates, which would shape later indices.
  if ((smoke)); then
    skip_step "templates[$product]" "smoke"
  else
    run_step "templates[$product]" env ES_URL="$ES_URL_TEST" scripts/index-template.sh verify
  fi
  stop_engine
done
