#!/usr/bin/env bash
# Smoke test against a running engine: scripts/engine.sh start && engine/smoke.sh [URL]
# Checks the APIs Saltscope relies on. Exits non-zero on the first failure.
set -euo pipefail
URL="${1:-http://127.0.0.1:${ENGINE_PORT:-9200}}"
IDX="smoke-$$"
fail() { echo "smoke: FAIL: $*" >&2; exit 1; }
req() { # method path [body] -> prints body, fails on HTTP >= 400
  local m="$1" p="$2" body="${3:-}" out code
  out=$(curl -sS -w '\n%{http_code}' -X "$m" ${body:+-H 'Content-Type: application/json' --data-binary "$body"} "$URL$p")
  code="${out##*$'\n'}"; out="${out%$'\n'*}"
  [[ "$code" -lt 400 ]] || fail "$m $p -> HTTP $code: $out"
  printf '%s' "$out"
}
jget() { [[ -n "${1:-}" ]] || return 1; python3 -c 'import json,sys; d=json.load(sys.stdin); exec("print("+sys.argv[1]+")")' "$1"; }

root=$(req GET /)
dist=$(jget 'd["version"].get("distribution","elasticsearch")' <<<"$root")
ver=$(jget 'd["version"]["number"]' <<<"$root")
echo "smoke: $dist $ver at $URL"
health=$(req GET '/_cluster/health?wait_for_status=yellow&timeout=30s')
echo "smoke: health $(jget 'd["status"], d["number_of_nodes"], "nodes"' <<<"$health")"

# CORS, least privilege: the app's origin may read (OPTIONS, HEAD, GET, POST), nothing else may.
# SMOKE_ORIGIN: an origin the engine allows (default: the first of ENGINE_CORS_ORIGIN, else the demo's nginx).
ok_origin="${SMOKE_ORIGIN:-${ENGINE_CORS_ORIGIN:-http://127.0.0.1:8080}}"
ok_origin="${ok_origin%%,*}"
[[ "$ok_origin" != /* ]] || fail "ENGINE_CORS_ORIGIN is a /regex/: set SMOKE_ORIGIN to an origin it matches"
bad_origin="http://evil.example:8080"
preflight() { # origin method -> response headers, CR-free
  curl -sS -i -X OPTIONS -H "Origin: $1" -H "Access-Control-Request-Method: $2" \
    -H 'Access-Control-Request-Headers: authorization,content-type' "$URL/" | tr -d '\r'
}
pre=$(preflight "$ok_origin" POST)
grep -qix "access-control-allow-origin: $ok_origin" <<<"$pre" || fail "CORS preflight from $ok_origin: allow-origin is not $ok_origin: $pre"
grep -qi '^access-control-allow-headers:.*authorization' <<<"$pre" || fail "CORS preflight: no allow-headers: $pre"
grep -qi '^access-control-allow-methods:.*POST' <<<"$pre" || fail "CORS preflight: no allow-methods POST: $pre"
methods=$(grep -i '^access-control-allow-methods:' <<<"$pre" | cut -d: -f2- | tr -d ' ' | paste -sd,)
! grep -Eqi '^access-control-allow-methods:.*(PUT|DELETE|PATCH)' <<<"$pre" || fail "CORS allows more than reading: methods $methods"
pre_del=$(preflight "$ok_origin" DELETE)
! grep -Eqi '^access-control-allow-methods:.*DELETE' <<<"$pre_del" || fail "CORS preflight for DELETE allows it: $pre_del"
echo "smoke: CORS preflight from $ok_origin ok (allow-methods: $methods; allow-headers: $(grep -i "^access-control-allow-headers" <<<"$pre" | cut -d: -f2- | tr -d " " | paste -sd,))"
pre_bad=$(preflight "$bad_origin" POST)
! grep -qi '^access-control-allow-origin:' <<<"$pre_bad" || fail "CORS preflight from $bad_origin got an allow-origin: $pre_bad"
get_bad=$(curl -sS -i -H "Origin: $bad_origin" "$URL/" | tr -d '\r')
! grep -qi '^access-control-allow-origin:' <<<"$get_bad" || fail "GET from $bad_origin got an allow-origin: $get_bad"
echo "smoke: CORS from $bad_origin: no allow-origin (preflight $(head -1 <<<"$pre_bad" | cut -d' ' -f2), GET $(head -1 <<<"$get_bad" | cut -d' ' -f2))"

# versioned index + alias + typeless writes through the alias
req PUT "/$IDX-v1" '{"settings":{"number_of_shards":2,"number_of_replicas":0},"mappings":{"properties":{"jid":{"type":"keyword"},"minion":{"type":"keyword"},"fun":{"type":"keyword"},"ts":{"type":"date"},"ok":{"type":"boolean"}}}}' >/dev/null
req POST /_aliases "{\"actions\":[{\"add\":{\"index\":\"$IDX-v1\",\"alias\":\"$IDX\",\"is_write_index\":true}}]}" >/dev/null
for i in 1 2 3 4 5 6; do
  req PUT "/$IDX/_doc/$i" "{\"jid\":\"2026120218000000000$i\",\"minion\":\"m$((i % 3))\",\"fun\":\"state.apply\",\"ts\":\"2026-12-02T18:0$i:00Z\",\"ok\":$([[ $((i % 2)) == 0 ]] && echo true || echo false)}" >/dev/null
done
req POST "/$IDX/_refresh" >/dev/null
n=$(req POST "/$IDX/_search" '{"query":{"term":{"fun":"state.apply"}}}' | jget 'd["hits"]["total"]["value"]')
[[ "$n" == 6 ]] || fail "search hits $n != 6"
echo "smoke: index+alias+typeless doc+search ok ($n hits)"

ms=$(printf '{"index":"%s"}\n{"size":0,"query":{"match_all":{}}}\n{"index":"%s"}\n{"size":1,"query":{"term":{"minion":"m1"}}}\n' "$IDX" "$IDX" |
  curl -sS -X POST -H 'Content-Type: application/x-ndjson' --data-binary @- "$URL/_msearch")
[[ $(jget 'len(d["responses"]), [r["hits"]["total"]["value"] for r in d["responses"]]' <<<"$ms") == "2 [6, 2]" ]] || fail "_msearch: $ms"
echo "smoke: _msearch ok"

fc=$(req GET "/$IDX/_field_caps?fields=*")
[[ $(jget 'd["fields"]["minion"]["keyword"]["aggregatable"]' <<<"$fc") == True ]] || fail "_field_caps: $fc"
echo "smoke: _field_caps ok"

comp='{"size":0,"aggs":{"c":{"composite":{"size":2,"sources":[{"minion":{"terms":{"field":"minion"}}}]}}}}'
c1=$(req POST "/$IDX/_search" "$comp")
after=$(jget 'json.dumps(d["aggregations"]["c"]["after_key"])' <<<"$c1")
c2=$(req POST "/$IDX/_search" "{\"size\":0,\"aggs\":{\"c\":{\"composite\":{\"size\":2,\"after\":$after,\"sources\":[{\"minion\":{\"terms\":{\"field\":\"minion\"}}}]}}}}")
[[ $(jget 'len(d["aggregations"]["c"]["buckets"])' <<<"$c2") == 1 ]] || fail "composite page 2: $c2"
echo "smoke: composite aggregation paging ok"

if [[ "$dist" == opensearch ]]; then
  pit=$(req POST "/$IDX/_search/point_in_time?keep_alive=1m" | jget 'd["pit_id"]')
  s=$(req POST /_search "{\"size\":10,\"pit\":{\"id\":\"$pit\",\"keep_alive\":\"1m\"},\"sort\":[{\"ts\":\"asc\"}]}")
  [[ $(jget 'len(d["hits"]["hits"])' <<<"$s") == 6 ]] || fail "PIT search: $s"
  req DELETE /_search/point_in_time "{\"pit_id\":[\"$pit\"]}" >/dev/null
elif [[ "$ver" == 7.* ]]; then
  # The OSS Elasticsearch 7.10 server has no PIT (it was an x-pack feature until 8.x);
  # POST /idx/_pit is parsed as "index a doc of type _pit" there. Saltscope must fall back to scroll/search_after.
  echo "smoke: SKIP point-in-time: not available in Elasticsearch $ver OSS (x-pack only)"
  skip_pit=1
else
  pit=$(req POST "/$IDX/_pit?keep_alive=1m" | jget 'd["id"]')
  s=$(req POST /_search "{\"size\":10,\"pit\":{\"id\":\"$pit\",\"keep_alive\":\"1m\"},\"sort\":[{\"ts\":\"asc\"}]}")
  [[ $(jget 'len(d["hits"]["hits"])' <<<"$s") == 6 ]] || fail "PIT search: $s"
  req DELETE /_pit "{\"id\":\"$pit\"}" >/dev/null
fi
[[ -n "${skip_pit:-}" ]] || echo "smoke: point-in-time ok"

# auto-created index on first write
req PUT "/$IDX-auto/_doc/x?refresh=true" '{"a":1}' >/dev/null
req DELETE "/$IDX-v1,$IDX-auto" >/dev/null
echo "smoke: all ok ($dist $ver)"
