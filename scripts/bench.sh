#!/usr/bin/env bash
# THE benchmark (prints a table; not a test): each view's time in Chromium as
# the app marks it (performance marks "saltscope:painted:<view>"), against the
# floor measured in the same run (the engine's own `took` for the very same
# requests, plus one round trip of a bare GET / through the same nginx), with
# the requests and bytes each case cost. On the real Salt data and on
# generated returns at 10k, 100k and 1M; the job pages of a 4-minion
# state.apply (real), of 1 minion x 10,000 states, of 2,000 minions, of a
# 5 MB cmd.run output, of a cmd.run_all with 5 MB of stdout, of a file.find
# listing 5 MB of paths and of a state with a 5 MB diff (generated); the
# frames while scrolling the 10,000 states and while "show all" draws the
# diff; the run comparison of the 10,000-state return with a run of the
# 2,000-minion job; the fleet-wide views (fleet status, drift,
# failure patterns, SLS rollups) natively through the core, on the largest set
# as loaded (documents) and loaded again through the summary ingest pipeline
# (prefix <set>p, SUMMARY_PIPELINE=1); then the export comparison
# (scripts/bench-export.sh).
#
#   scripts/bench.sh
#
# Env: ES_URL (an engine to use; else one is started on BENCH_ENGINE_PORT,
# default 9240, heap 2g, and stopped after), BENCH_NGINX_PORT (8096),
# BENCH_RUNS (3), BENCH_SIZES ("10000 100000 1000000"), SKIP_SALT_DATA=1
# (reuse the engine's real Salt data and its manifest), SKIP_EXPORT=1,
# SKIP_INSIGHTS=1, SKIP_VIEWS=1.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SALTSCOPE_REPO"

PORT=${BENCH_NGINX_PORT:-8096}
ENGINE_PORT=${BENCH_ENGINE_PORT:-9240}
STARTED=""
cleanup() {
  NGINX_PORT=$PORT scripts/nginx.sh stop >&2 || true
  if [[ -n $STARTED ]]; then ENGINE=opensearch ENGINE_PORT=$ENGINE_PORT scripts/engine.sh stop >&2 || true; fi
}
trap cleanup EXIT

[[ -f dist/index.html ]] || scripts/build.sh >&2
if [[ -z ${ES_URL:-} ]]; then
  ES_URL=http://127.0.0.1:$ENGINE_PORT
  STARTED=1
  ENGINE=opensearch ENGINE_PORT=$ENGINE_PORT ENGINE_HEAP=2g ENGINE_KEEP_DATA=1 \
    ENGINE_CORS_ORIGIN=http://127.0.0.1:$PORT scripts/engine.sh start >&2
fi
export ES_URL
MANIFEST=$SALTSCOPE_WORK/salt-data/manifest.json
if [[ ${SKIP_SALT_DATA:-0} != 1 || ! -f $MANIFEST ]]; then
  scripts/salt-data.sh >&2
fi

# Generated returns at each size; the big shapes ride on the smallest set.
sets="salt:real"
jobs_json="{\"4-minion state.apply (real)\": {\"prefix\": \"salt\", \"jid\": \"$(node -e 'console.log(require(process.argv[1]).state_apply_multi.jid)' "$MANIFEST")\"}"
first=1
for n in ${BENCH_SIZES:-10000 100000 1000000}; do
  label=$(( n >= 1000000 ? n / 1000000 : n / 1000 ))$( (( n >= 1000000 )) && echo M || echo k)
  prefix=saltb$label
  prefix=${prefix,,}
  big=()
  if (( first )); then big=(STATES_PER_RETURN=10000 MINIONS_PER_JOB=2000 MINIONS_PER_JOB_FUN=state.apply OUTPUT_BYTES=5000000); fi
  summary=$(env "${big[@]}" RETURNS=$n PREFIX=$prefix scripts/generate.sh | tail -1)
  sets+=",$prefix:$label"
  if (( first )); then
    jobs_json+=$(node -e '
      const s = JSON.parse(process.argv[1]).special_jobs, p = process.argv[2];
      const j = (k) => JSON.stringify({ prefix: p, jid: s[k].jid, minion: s[k].minion, bytes: s[k].bytes });
      process.stdout.write(`, "1 minion x 10,000 states": ${j("states")}, "2,000 minions": ${j("wide_state_apply")}, "5 MB cmd.run output": ${j("output_cmd_run")}, "cmd.run_all, 5 MB stdout": ${j("output_cmd_run_all")}, "file.find, 5 MB of paths": ${j("output_file_find")}, "5 MB diff in a state": ${j("output_diff")}`);
    ' "$summary" "$prefix")
    first=0
  fi
done
jobs_json+="}"

# An engine that has just been loaded merges segments for minutes, and its
# own times, the floor, run up to 9x its settled ones (2026-12-06): wait
# until no merge runs, so that the floor is the engine's, not its loading's.
settle() {
  local merging
  curl -fsS -XPOST "$ES_URL/_refresh" > /dev/null
  for _ in $(seq 1 300); do
    merging=$(curl -fsS "$ES_URL/_nodes/stats/indices/merge" \
      | node -e 'let s = "";
        process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(
          Object.values(JSON.parse(s).nodes).reduce((n, x) => n + x.indices.merges.current, 0)));')
    if [[ $merging == 0 ]]; then return; fi
    sleep 1
  done
  echo "bench: the engine still merges after 300 s ($merging running): its floors may be high" >&2
}
settle

if [[ ${SKIP_VIEWS:-0} != 1 ]]; then
  NGINX_PORT=$PORT ENGINE_URL=$ES_URL scripts/nginx.sh restart >&2
  echo "== views (app's own marks vs the engine's floor) =="
  BASE_URL=http://127.0.0.1:$PORT BENCH_SETS=$sets BENCH_JOBS=$jobs_json BENCH_RUNS=${BENCH_RUNS:-3} \
    node e2e/bench/bench.mjs
  echo
fi
if [[ ${SKIP_INSIGHTS:-0} != 1 ]]; then
  # The largest set again, through the summary pipeline.
  largest=${sets##*,}; largest=${largest%%:*}
  SUMMARY_PIPELINE=1 RETURNS=$n PREFIX=${largest}p scripts/generate.sh >&2
  echo "== fleet-wide views (core, native transport; budgets at 1M: fleet <= 1 s with the pipeline,"
  echo "   drift over the last 5 runs <= 30 s streaming, <= 2 s with the pipeline) =="
  cargo build --release -q -p saltscope-core --features native --example insights_bench
  BENCH_RUNS=${BENCH_RUNS:-3} "${CARGO_TARGET_DIR:-$SALTSCOPE_REPO/target}/release/examples/insights_bench" \
    salt "$largest" "${largest}p"
  echo
fi
echo "== dist =="
# What the browser downloads, from the precompressed files build.sh wrote.
for enc in gz br; do
  total=0
  for f in dist/*.wasm dist/*.js dist/*.css; do
    total=$(( total + $(stat -c %s "$f.$enc") ))
  done
  echo "wasm + js + css, $enc: $total B (budget 300000 B gzip)"
done
if [[ ${SKIP_EXPORT:-0} != 1 ]]; then
  echo
  echo "== export (scripts/bench-export.sh) =="
  BENCH_NGINX_PORT=$((PORT - 1)) scripts/bench-export.sh
fi
