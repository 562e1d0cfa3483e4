#!/usr/bin/env bash
# Load synthetic Salt returns (tools/saltgen, binary saltscope-gen) into a running
# engine, shaped field for field like the elasticsearch returner's documents.
# Idempotent: when the engine already holds exactly this set (marker doc
# saltscope-gen-meta/<prefix> with the same prefix/seed/returns/minions/days,
# big-job and event options, and that many return docs in <prefix>-* (and with
# EVENTS, that many event docs)), nothing is loaded;
# otherwise the <prefix>-* indices are deleted and loaded again.
#
#   scripts/generate.sh [extra saltscope-gen options, e.g. --states-count]
#
# Env: ES_URL (default http://127.0.0.1:$ENGINE_PORT, ENGINE_PORT default 9200),
#      RETURNS (1000000), PREFIX (saltgen), SEED (1), DAYS (30), MINIONS (2000),
#      THREADS (2), BATCH (5000)
# Big job shapes, on top of the RETURNS mix (RETURNS=0: only them; unset or 0: none):
#      STATES_PER_RETURN=N   one state.apply return of 1 minion holding N states (<= 100000);
#                            <PREFIX>-state_apply is then created with `data` unindexed
#                            (deploy/index-template/salt-returns-objects.json): past 1000
#                            fields the engine refuses such a return
#      MINIONS_PER_JOB=N     a job on N minions (N returns, a few targeted ones never return),
#      MINIONS_PER_JOB_FUN   of state.apply, test.version or both (default both)
#      OUTPUT_BYTES=N        a cmd.run return whose output is N bytes, and a state.apply
#                            return whose file state's changes.diff is N bytes (1024..50000000)
# The master's event bus (unset or 0: only each job's salt/job/<jid>/new event, as before):
#      EVENTS=N              at least N documents in <PREFIX>-master-event-cache: every job's
#                            new, publish and one ret per returning minion (failed ones too),
#                            runners' salt/run/<jid>/new and ret, then the fleet's noise up to N:
#                            salt/auth floods (accept, pend), minion_start and
#                            salt/minion/<id>/start, salt/key (accepted, delete). The index is
#                            created with deploy/index-template/salt-master-event-cache.json's
#                            mappings. Part of the loaded set: a prefix loaded without events is
#                            reloaded with them, and the other way round.
#   Each special job has a fixed jid YYYYMMDDhhmm00SSSSKK: 6 h before the end (--end, default
#   now) rounded down to the minute, +10 min per kind; SSSS = SEED mod 10000; KK = 01 states,
#   02 state.apply / 03 test.version on N minions, 04 cmd.run output, 05 diff. The jids are
#   printed at the end (last stdout line: JSON {"special_jobs": {<name>: {jid, fun, index, …}}},
#   also when the set was loaded already) and kept in the marker doc's `special_jobs`:
#     curl -s "$ES_URL/saltscope-gen-meta/_doc/$PREFIX" | jq ._source.special_jobs
# SUMMARY_PIPELINE=1: the return indices are created as the project's index template makes
#   them, through the ingest pipeline saltscope-return-summary (saltscope.* summary fields);
#   use a prefix of its own (not part of the marker's comparison).
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
big=()
[[ "${STATES_PER_RETURN:-0}" != 0 ]] && big+=(--states-per-return "$STATES_PER_RETURN")
[[ "${MINIONS_PER_JOB:-0}" != 0 ]] && big+=(--minions-per-job "$MINIONS_PER_JOB")
[[ -n "${MINIONS_PER_JOB_FUN:-}" ]] && big+=(--minions-per-job-fun "$MINIONS_PER_JOB_FUN")
[[ "${OUTPUT_BYTES:-0}" != 0 ]] && big+=(--output-bytes "$OUTPUT_BYTES")
[[ "${EVENTS:-0}" != 0 ]] && big+=(--events "$EVENTS")
[[ "${SUMMARY_PIPELINE:-0}" == 1 ]] && big+=(--summary-pipeline)

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
  --minions "$MINIONS" --threads "$THREADS" --batch "$BATCH" --replace --skip-if-loaded \
  ${big[@]+"${big[@]}"} "$@"
log "done in $(elapsed "$t1"): $PREFIX-* on $ES_URL"
