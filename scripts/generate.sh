#!/usr/bin/env bash
# Load synthetic Salt returns (tools/saltgen, binary saltscope-gen) into a running
# engine, shaped field for field like the elasticsearch returner's documents.
# Idempotent: when the engine already holds exactly this set (marker doc
# saltscope-gen-meta/<prefix> with the same prefix/seed/returns/minions/days and
# that many return docs in <prefix>-*), nothing is loaded; otherwise the
# <prefix>-* indices are deleted and loaded again.
#
#   scripts/generate.sh [extra saltscope-gen options, e.g. --states-count]
#
# Env: ES_URL (default http://127.0.0.1:$ENGINE_PORT, ENGINE_PORT default 9200),
#      RETURNS (1000000), PREFIX (saltgen), SEED (1), DAYS (30), MINIONS (2000),
#      THREADS (2), BATCH (5000)
# Point the app at it with config.json: "index_pattern": "saltgen-*",
#   "job_cache_index": "saltgen-master-job-cache",
#   "event_index_pattern": "saltgen-master-event-cache*"
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$SALTSCOPE_REPO"

ES_URL=${ES_URL:-http://127.0.0.1:${ENGINE_PORT:-9200}}
RETURNS=${RETURNS:-1000000}
PREFIX=${PREFIX:-saltgen}
SEED=${SEED:-1}
DAYS=${DAYS:-30}
MINIONS=${MINIONS:-2000}
THREADS=${THREADS:-2}
BATCH=${BATCH:-5000}

have cargo || die "cargo not found (PATH=$PATH)"
curl -sf --max-time 5 "$ES_URL/" >/dev/null || die "no engine answers on $ES_URL (start one: ENGINE_PORT=9200 scripts/engine.sh start)"

t0=$(now_s)
log "building saltscope-gen (release)"
cargo build --release -q -p saltscope-gen
bin="${CARGO_TARGET_DIR:-$SALTSCOPE_REPO/target}/release/saltscope-gen"
[[ -x "$bin" ]] || die "$bin not built"
log "built in $(elapsed "$t0")"

t1=$(now_s)
"$bin" --url "$ES_URL" --returns "$RETURNS" --prefix "$PREFIX" --seed "$SEED" --days "$DAYS" \
  --minions "$MINIONS" --threads "$THREADS" --batch "$BATCH" --replace --skip-if-loaded "$@"
log "done in $(elapsed "$t1"): $PREFIX-* on $ES_URL"
