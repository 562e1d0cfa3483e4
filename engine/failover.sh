#!/usr/bin/env bash
# Failover check on a running cluster of 3+ nodes started by scripts/engine.sh (same env):
#
#   ENGINE_NODES=3 scripts/engine.sh start && engine/failover.sh [NODE [stop|kill]]   (default: 2 stop)
#
# Creates an index with DEFAULT settings (so it gets the engine's default number_of_replicas, 1),
# indexes a few docs, stops node NODE with `scripts/engine.sh stop-node NODE` (SIGTERM: a clean shutdown)
# or `kill-node NODE` (SIGKILL: a crash), checks that NODE's HTTP port
# refuses connections and that every other node still returns all docs from _search while the cluster
# is yellow or green; then `start-node NODE` and checks that NODE serves them again. Deletes its index.
# Leaves the cluster running. Exits non-zero on the first failure.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENGINE_SH="$REPO/scripts/engine.sh"
NODE="${1:-2}"
MODE="${2:-stop}"
[[ "$MODE" == stop || "$MODE" == kill ]] || { echo "failover: MODE must be stop or kill" >&2; exit 2; }
IDX="failover-$$"
DOCS=12
fail() { echo "failover: FAIL: $*" >&2; exit 1; }
say() { echo "failover: $*"; }
jget() { python3 -c 'import json,sys; d=json.load(sys.stdin); exec("print("+sys.argv[1]+")")' "$1"; }
ms() { date +%s%3N; }

base=$("$ENGINE_SH" url)
health=$(curl -sf "$base/_cluster/health") || fail "no cluster answers on $base (start one: ENGINE_NODES=3 scripts/engine.sh start)"
nodes=$(jget 'd["number_of_nodes"]' <<<"$health")
[[ "$nodes" -ge 3 ]] || fail "the cluster on $base has $nodes node(s); failover needs 3 (ENGINE_NODES=3) to keep a quorum"
[[ "$NODE" =~ ^[0-9]+$ && "$NODE" -ge 1 && "$NODE" -le "$nodes" ]] || fail "NODE must be 1..$nodes"
urls=()
for ((i = 1; i <= nodes; i++)); do urls+=("$("$ENGINE_SH" url "$i")"); done
down="${urls[NODE - 1]}"
say "$nodes nodes ${urls[*]}; will $MODE node $NODE ($down)"

# An index with default settings: 3 shards so that node NODE surely holds some copies; replicas not set.
curl -sf -X PUT -H 'Content-Type: application/json' "$base/$IDX" -d '{"settings":{"number_of_shards":3}}' >/dev/null ||
  fail "create $IDX"
rep=$(curl -sf "$base/$IDX/_settings?include_defaults=true" | jget "d['$IDX']['settings']['index'].get('number_of_replicas') or d['$IDX']['defaults']['index']['number_of_replicas']")
[[ "$rep" -ge 1 ]] || fail "$IDX got number_of_replicas $rep by default; reads would not survive a node"
body=""
for ((i = 1; i <= DOCS; i++)); do
  body+="{\"index\":{\"_id\":\"$i\"}}"$'\n'"{\"jid\":\"2026120218000000$i\",\"minion\":\"m$((i % 4))\"}"$'\n'
done
r=$(curl -sf -X POST -H 'Content-Type: application/x-ndjson' "$base/$IDX/_bulk?refresh=true" --data-binary "$body") || fail "bulk"
[[ $(jget 'd["errors"]' <<<"$r") == False ]] || fail "bulk errors: $r"
curl -sf "$base/_cluster/health/$IDX?wait_for_status=green&timeout=60s" | grep -q '"status":"green"' ||
  fail "$IDX not green before the stop (replicas not allocated)"
copies=$(curl -sf "$base/_cat/shards/$IDX?h=node" | grep -c "node-$NODE\$" || true)
say "$IDX: $DOCS docs, number_of_replicas $rep (default), green; node-$NODE holds $copies of its 6 shard copies"

t0=$(ms)
"$ENGINE_SH" "$MODE-node" "$NODE"
t_stop=$(($(ms) - t0))
code=0; curl -s --max-time 5 -o /dev/null "$down/" || code=$?
[[ "$code" == 7 ]] || fail "$down after $MODE-node $NODE: curl exit $code, expected 7 (connection refused)"
say "node $NODE: $MODE-node took ${t_stop} ms; $down: connection refused"

search_all() { # url -> prints "hits failed_shards" of a match_all search
  curl -sf --max-time 30 -H 'Content-Type: application/json' "$1/$IDX/_search" -d '{"size":100,"query":{"match_all":{}}}' |
    jget 'd["hits"]["total"]["value"], d["_shards"]["failed"]'
}
for ((i = 1; i <= nodes; i++)); do
  [[ "$i" == "$NODE" ]] && continue
  u="${urls[i - 1]}"
  t0=$(ms)
  got=$(search_all "$u") || fail "_search on node $i ($u) failed"
  [[ "$got" == "$DOCS 0" ]] || fail "_search on node $i ($u): hits, failed shards = $got; want $DOCS 0"
  say "node $i ($u): _search returns all $DOCS docs, 0 failed shards ($(($(ms) - t0)) ms)"
done
other=$((NODE == 1 ? 2 : 1))
t0=$(ms)
h=$(curl -sf --max-time 40 "${urls[other - 1]}/_cluster/health?wait_for_status=yellow&timeout=30s") ||
  fail "cluster health through node $other: no answer"
st=$(jget 'd["status"], d["number_of_nodes"]' <<<"$h")
[[ "$st" == "yellow $((nodes - 1))" || "$st" == "green $((nodes - 1))" ]] || fail "cluster health through node $other: $h"
say "cluster health through node $other: ${st% *} with ${st#* } nodes ($(($(ms) - t0)) ms)"

t0=$(ms)
"$ENGINE_SH" start-node "$NODE"
got=$(search_all "$down") || fail "_search on restarted node $NODE failed"
[[ "$got" == "$DOCS 0" ]] || fail "_search on restarted node $NODE: $got"
say "node $NODE back in $(($(ms) - t0)) ms; _search on it returns all $DOCS docs"
curl -sf -X DELETE "$base/$IDX" >/dev/null || fail "delete $IDX"
say "all ok"
