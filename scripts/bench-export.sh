#!/usr/bin/env bash
# Benchmark (prints a table; not a test): rows per second of Saltscope's
# in-browser returns export against the script an auditor would write
# (elasticsearch-py helpers.scan + csv.writer, scripts/bench/scan_export.py),
# and against a bare fetch loop over the same pages (scripts/bench/fetch_loop.mjs),
# on the same generated data in the same run, at 100k and 1M returns, and
# at 1M returns indexed through the summary ingest pipeline (the export
# then reads doc values, not documents: core/src/export/summary.rs; the
# same set scripts/bench.sh loads for the fleet views, prefix saltb1mp).
#
#   ES_URL=http://127.0.0.1:9200 [EXPORT_RUNS=3] scripts/bench-export.sh
# Needs: a running engine (scripts/engine.sh start, ENGINE_HEAP=2g), a build in
# dist/ (scripts/build.sh) and the Salt venv (scripts/setup.sh). Loads the
# data with scripts/generate.sh (prefixes saltbench100k, saltgen) if missing,
# serves dist/ on BENCH_NGINX_PORT (8095) for the run.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SALTSCOPE_REPO"

ES_URL=${ES_URL:-http://127.0.0.1:9200}
PORT=${BENCH_NGINX_PORT:-8095}
PY=$SALTSCOPE_WORK/venv/bin/python
[[ -x $PY ]] || die "no Salt venv ($PY): run scripts/setup.sh"
[[ -f dist/index.html ]] || die "no build in dist/: run scripts/build.sh"

ES_URL=$ES_URL RETURNS=100000 PREFIX=saltbench100k scripts/generate.sh >&2
ES_URL=$ES_URL RETURNS=1000000 PREFIX=saltgen scripts/generate.sh >&2
ES_URL=$ES_URL RETURNS=1000000 PREFIX=saltb1mp SUMMARY_PIPELINE=1 scripts/generate.sh >&2
NGINX_PORT=$PORT ENGINE_URL=$ES_URL scripts/nginx.sh restart >&2
trap 'NGINX_PORT=$PORT scripts/nginx.sh stop >&2' EXIT

read_kv() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
# "median (min-max)" of the numbers given, and the median alone.
spread() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f (%.2f-%.2f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
median() { spread "$@" | cut -d' ' -f1; }

# Python's own time for the same pages has ranged from 14.75 s to 26.5 s on
# one machine in one day, so one run of each side says little: each round
# runs the three one after another, and the table compares medians.
RUNS=${EXPORT_RUNS:-3}
profiles=()
loops=()
times=()
printf '%-12s %9s %11s %11s %8s %11s %9s %8s\n' returns rows browser_r/s python_r/s vs_py fetch_r/s vs_fetch wire_mb
for p in saltbench100k:100k saltgen:1M saltb1mp:1M-summary; do
  prefix=${p%%:*} label=${p#*:}
  bs=() ps=() fs=() brows='' prows='' frows='' wire=''
  for ((run = 1; run <= RUNS; run++)); do
    out=$(BASE_URL=http://127.0.0.1:$PORT PREFIX=$prefix node scripts/bench/browser_export.mjs 2>&1)
    profiles+=("$label, run $run: $(sed -n 's/^browser ([^)]*): //p' <<<"$out")")
    brows=$(read_kv rows <<<"$out"); bs+=("$(read_kv seconds <<<"$out")")
    tmp=$(mktemp)
    out=$("$PY" scripts/bench/scan_export.py --es "$ES_URL" --index "$prefix-*" --out "$tmp")
    rm -f "$tmp"
    prows=$(read_kv rows <<<"$out"); ps+=("$(read_kv seconds <<<"$out")")
    # The floor: a bare fetch loop over the app's own pages (scripts/bench/fetch_loop.mjs).
    out=$(BASE_URL=http://127.0.0.1:$PORT PREFIX=$prefix node scripts/bench/fetch_loop.mjs)
    frows=$(read_kv rows <<<"$out"); fs+=("$(read_kv seconds <<<"$out")"); wire=$(read_kv wire_mb <<<"$out")
    loops+=("$label, run $run: $out")
  done
  [[ $brows == "$prows" && $brows == "$frows" ]] \
    || warn "$label: the browser wrote $brows rows, Python $prows, the fetch loop read $frows"
  times+=("$label: browser $(spread "${bs[@]}") s, Python $(spread "${ps[@]}") s, fetch loop $(spread "${fs[@]}") s")
  # What fetching pages side by side would gain: the same loop over two
  # slices of the point in time at once.
  if [[ $label == 1M* ]]; then
    loops+=("$label, 2 slices at once: $(BASE_URL=http://127.0.0.1:$PORT PREFIX=$prefix SLICES=2 node scripts/bench/fetch_loop.mjs)")
  fi
  awk -v l="$label" -v n="$brows" -v bs="$(median "${bs[@]}")" -v ps="$(median "${ps[@]}")" -v fs="$(median "${fs[@]}")" -v w="$wire" 'BEGIN {
    printf "%-12s %9d %11.0f %11.0f %7.2fx %11.0f %8.2fx %8d\n", l, n, n / bs, n / ps, ps / bs, n / fs, fs / bs, w }'
done
echo "(rows/s from the median of $RUNS runs of each, run in turn)"

echo
echo "seconds, median (min-max) of $RUNS:"
printf '  %s\n' "${times[@]}"
echo
# What bounds it: where the tab's time went (measured by the app itself),
# then one page of each kind read natively, JSON apart from CSV.
echo "where the browser's time went:"
printf '  %s\n' "${profiles[@]}"
echo "the bare fetch loop (same pages, same nginx, same browser):"
printf '  %s\n' "${loops[@]}"
echo
echo "one page of 5,000 returns, natively (core/examples/export_profile.rs):"
cargo build -q --release -p saltscope-core --example export_profile
for index in saltgen-state_apply-v1 saltgen-cmd_run-v1; do
  page=$(mktemp)
  curl -sf -XPOST "$ES_URL/$index/_search" -H 'Content-Type: application/json' \
    -d '{"size":5000,"sort":["_doc"]}' -o "$page"
  target/release/examples/export_profile "$page" | sed 's/^/  /; s|^  /tmp/[^:]*:|  '"$index"':|'
  rm -f "$page"
done
