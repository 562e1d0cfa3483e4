#!/usr/bin/env bash
# Saltscope's index templates for the indices Salt's elasticsearch returner writes.
#
#   scripts/index-template.sh install   [ES_URL]   PUT the templates (idempotent)
#   scripts/index-template.sh uninstall [ES_URL]   DELETE them (indices keep their mappings)
#   scripts/index-template.sh show      [ES_URL]   installed templates, variant, which salt-* indices use them
#   scripts/index-template.sh verify    [ES_URL]   install, then index the real documents of
#                                                  tests/fixtures into scratch indices and check
#                                                  the queries Saltscope makes; deletes them after
#
# ES_URL: argument, else $ES_URL, else http://127.0.0.1:9200.
# INDEX_TEMPLATE_DATA=disabled (default)|searchable|flat_object|flattened sets the mapping of `data` in
# the object-shaped return indices (searchable: the engine's type, detected, see below).
# VERIFY_KEEP=1 keeps verify's scratch indices (salt-*-ssverify-v1).
# INDEX_TEMPLATE_SUMMARY=on (default)|off: install the ingest pipeline
# saltscope-return-summary (deploy/ingest/salt-return-summary.json) and make it the
# return indices' default_pipeline; it adds saltscope.* (state counts, run_failed,
# SLS names, the changed states) that the fleet and drift views aggregate instead
# of reading each state run's data. An engine that refuses the pipeline (no
# painless) gets the templates without it, with a warning.
#
# Templates apply only to indices created after they are installed: existing
# salt-* indices keep their (dynamic) mappings until they are re-created
# (the returner re-creates `<name>-v1` when the index and alias are gone).
#
# Files: deploy/index-template/*.json (composable `_index_template` bodies;
# `_comment` is stripped before the PUT). Needs bash, curl and python3.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CMD="${1:-}"
ES_URL="${2:-${ES_URL:-http://127.0.0.1:9200}}"
ES_URL="${ES_URL%/}"
TPL_DIR="$SALTSCOPE_REPO/deploy/index-template"
PIPELINE_FILE="$SALTSCOPE_REPO/deploy/ingest/salt-return-summary.json"
PIPELINE=saltscope-return-summary
SUMMARY=${INDEX_TEMPLATE_SUMMARY:-on}
# file basename -> template name saltscope-<basename>; order: most specific last
TEMPLATES=(salt-returns salt-returns-objects salt-returns-text salt-master-job-cache salt-master-event-cache)
PY=python3
have "$PY" || die "python3 is needed (it handles the JSON)"
have curl || die "curl is needed"

# ---- HTTP -------------------------------------------------------------------------
# es METHOD PATH [BODY_FILE] -> prints the body; `http_code` then prints its HTTP status
# (kept in a file: es usually runs in a $(...) subshell)
CODE_FILE=$(mktemp)
trap 'rm -f "$CODE_FILE"' EXIT
http_code() { cat "$CODE_FILE"; }
es() {
  local method=$1 path=$2 body=${3:-} out
  out=$(mktemp)
  local args=(-s -o "$out" -w '%{http_code}' --max-time 60 -X "$method" "$ES_URL$path")
  if [[ -n "$body" ]]; then
    local ct=application/json
    [[ "$path" == *_bulk* ]] && ct=application/x-ndjson
    args+=(-H "content-type: $ct" --data-binary "@$body")
  fi
  curl "${args[@]}" >"$CODE_FILE" || echo 000 >"$CODE_FILE"
  cat "$out"
  rm -f "$out"
}

jget() { # jget PY_EXPR  (stdin JSON bound to `d`) -> prints the result
  "$PY" -c 'import json,sys
d=json.load(sys.stdin)
r=eval(sys.argv[1])
print(r if isinstance(r,str) else json.dumps(r))' "$1"
}

# ---- product, version, variant ----------------------------------------------------------
PRODUCT= VERSION= VARIANT= VARIANT_WHY=
ver_ge() { # ver_ge A B -> 0 when version A >= B (numeric, per component)
  "$PY" -c 'import sys,re
p=lambda v:[int(x) for x in re.findall(r"\d+",v)[:3]]+[0]*3
sys.exit(0 if p(sys.argv[1])[:3]>=p(sys.argv[2])[:3] else 1)' "$1" "$2"
}

probe_type() { # probe_type TYPE -> 0 when a throwaway index with data:{type:TYPE} is accepted
  local idx="saltscope-template-probe-$$-$RANDOM" f ok=1
  f=$(mktemp)
  printf '{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":{"properties":{"data":{"type":"%s"}}}}' "$1" >"$f"
  es PUT "/$idx" "$f" >/dev/null
  [[ "$(http_code)" == 200 ]] && ok=0
  es DELETE "/$idx" >/dev/null || true
  rm -f "$f"
  return $ok
}

detect() {
  local root
  root=$(es GET /) || true
  [[ "$(http_code)" == 200 ]] || die "GET $ES_URL/ answered HTTP $(http_code): is the engine running?"
  PRODUCT=$(jget 'd.get("version",{}).get("distribution") or "elasticsearch"' <<<"$root")
  VERSION=$(jget 'd["version"]["number"]' <<<"$root")
  # Default: `data` of state and grains returns stored, not indexed. flat_object
  # rejects any document holding one string over 32766 bytes (a big diff or
  # stdout), and a template must never lose a return the returner sent; ask
  # for it with INDEX_TEMPLATE_DATA=searchable (or name the type).
  local want=${INDEX_TEMPLATE_DATA:-disabled}
  if [[ "$want" != searchable ]]; then
    VARIANT=$want VARIANT_WHY="INDEX_TEMPLATE_DATA=${INDEX_TEMPLATE_DATA:-disabled (the default: never rejects a return)}"
  elif [[ "$PRODUCT" == opensearch ]]; then
    if ver_ge "$VERSION" 2.7 && probe_type flat_object; then
      VARIANT=flat_object VARIANT_WHY="searchable asked; OpenSearch $VERSION >= 2.7 has flat_object"
    else
      VARIANT=disabled VARIANT_WHY="searchable asked, but OpenSearch $VERSION has no flat_object (needs >= 2.7)"
    fi
  else
    if ver_ge "$VERSION" 7.3 && probe_type flattened; then
      VARIANT=flattened VARIANT_WHY="searchable asked; Elasticsearch $VERSION has flattened"
    else
      VARIANT=disabled VARIANT_WHY="searchable asked, but Elasticsearch $VERSION has no flattened type (OSS build or < 7.3)"
    fi
  fi
  case "$VARIANT" in flat_object|flattened|disabled) ;; *) die "unknown data variant '$VARIANT'" ;; esac
  ver_ge "$VERSION" 1.0 || die "need OpenSearch >= 1 or Elasticsearch >= 7.8 (composable templates)"
  if [[ "$PRODUCT" != opensearch ]] && ! ver_ge "$VERSION" 7.8; then
    die "Elasticsearch $VERSION has no composable index templates (needs >= 7.8)"
  fi
}

render() { # render BASENAME -> the body to PUT (stdout)
  "$PY" - "$TPL_DIR/$1.json" "$VARIANT" "$SUMMARY" <<'EOF'
import json, sys
path, variant, summary = sys.argv[1], sys.argv[2], sys.argv[3]
t = json.load(open(path))
t.pop("_comment", None)
if summary != "on":   # no pipeline: an index naming a missing default_pipeline refuses every document
    t["template"].get("settings", {}).get("index", {}).pop("default_pipeline", None)
m = t["template"]["mappings"]
data = m["properties"].get("data")
if data is not None and data.get("type") == "flat_object":   # the object-shaped returns
    m["properties"]["data"] = {"flat_object": {"type": "flat_object"},
                               "flattened": {"type": "flattened"},
                               "disabled": {"type": "object", "enabled": False}}[variant]
m.setdefault("_meta", {})["saltscope_data_variant"] = variant
print(json.dumps(t))
EOF
}

# ---- commands -------------------------------------------------------------------------------
install_pipeline() { # PUT the summary pipeline; SUMMARY=off when the engine refuses it
  [[ "$SUMMARY" == on ]] || { log "summary pipeline: not installed (INDEX_TEMPLATE_SUMMARY=$SUMMARY)"; return 0; }
  local f out ingest
  # An index with a default pipeline refuses every document when no node can
  # run it: a cluster without ingest nodes gets the templates without it.
  out=$(es GET "/_nodes?filter_path=nodes.*.roles")
  ingest=$(jget 'sum("ingest" in n.get("roles", []) for n in d.get("nodes", {}).values())' <<<"$out" 2>/dev/null || echo 0)
  if [[ "$ingest" == 0 ]]; then
    warn "no ingest node in this cluster (GET /_nodes: ${out:0:200}): installing the templates without the summary pipeline"
    SUMMARY=off
    return 0
  fi
  f=$(mktemp)
  "$PY" -c 'import json,sys; b=json.load(open(sys.argv[1])); b.pop("_comment",None); print(json.dumps(b))' "$PIPELINE_FILE" >"$f"
  out=$(es PUT "/_ingest/pipeline/$PIPELINE" "$f")
  rm -f "$f"
  if [[ "$(http_code)" == 200 ]]; then
    log "installed _ingest/pipeline/$PIPELINE"
  else
    warn "PUT _ingest/pipeline/$PIPELINE: HTTP $(http_code): ${out:0:300}"
    warn "installing the templates without the summary pipeline: the fleet and drift views read the documents"
    SUMMARY=off
  fi
}

cmd_install() {
  detect
  log "$PRODUCT $VERSION at $ES_URL; data variant: $VARIANT ($VARIANT_WHY)"
  install_pipeline
  local b f out
  for b in "${TEMPLATES[@]}"; do
    f=$(mktemp)
    render "$b" >"$f"
    out=$(es PUT "/_index_template/saltscope-$b" "$f")
    rm -f "$f"
    [[ "$(http_code)" == 200 ]] || die "PUT _index_template/saltscope-$b: HTTP $(http_code): $out"
    log "installed _index_template/saltscope-$b"
  done
  echo "installed 5 templates (saltscope-salt-*) on $PRODUCT $VERSION, data variant: $VARIANT"
  echo "  salt-* returns: jid/minion/fun keyword, success, retcode, @timestamp, counts.*; data stored, not indexed"
  case "$VARIANT" in
    flat_object|flattened) echo "  state.apply/sls/highstate, grains.items/item returns: data as $VARIANT (searchable)" ;;
    disabled) echo "  state.apply/sls/highstate, grains.items/item returns: data stored, not indexed (no $([[ $PRODUCT == opensearch ]] && echo flat_object || echo flattened) here)" ;;
  esac
  echo "  cmd.run/cmd.shell/cmd.run_stdout/cmd.run_stderr/test.version returns: data as text (searchable)"
  echo "  salt-master-job-cache*, salt-master-event-cache*: keys keyword, _stamp date, arg/return kept unindexed"
  if [[ "$SUMMARY" == on ]]; then
    echo "  returns (not cmd.run/test.version text): ingest pipeline $PIPELINE adds saltscope.* summary fields"
  else
    echo "  no summary pipeline: the fleet and drift views read each state run's data"
  fi
  echo "NOTE: templates apply only to indices created from now on; existing salt-* indices keep their"
  echo "      mappings (see: scripts/index-template.sh show $ES_URL)."
}

cmd_uninstall() {
  local b out
  for b in "${TEMPLATES[@]}"; do
    out=$(es DELETE "/_index_template/saltscope-$b")
    case "$(http_code)" in
      200) log "deleted _index_template/saltscope-$b" ;;
      404) log "_index_template/saltscope-$b was not installed" ;;
      *) die "DELETE _index_template/saltscope-$b: HTTP $(http_code): $out" ;;
    esac
  done
  echo "uninstalled; existing indices keep the mappings they were created with"
  echo "  the ingest pipeline $PIPELINE stays: indices created with the templates name it as their"
  echo "  default_pipeline, and without it they would refuse every return (DELETE /_ingest/pipeline/$PIPELINE"
  echo "  once no index names it)"
}

cmd_show() {
  local out maps
  out=$(es GET "/_index_template/saltscope-*")
  if [[ "$(http_code)" == 404 ]]; then out='{"index_templates":[]}'; fi
  maps=$(es GET "/salt-*/_mapping")
  [[ "$(http_code)" == 200 ]] || maps='{}'
  "$PY" - "$out" "$maps" <<'EOF'
import json, sys
t = json.loads(sys.argv[1]).get("index_templates", [])
if not t:
    print("no saltscope-* index templates installed")
for x in sorted(t, key=lambda x: x["name"]):
    it = x["index_template"]
    meta = it.get("template", {}).get("mappings", {}).get("_meta", {})
    data = it.get("template", {}).get("mappings", {}).get("properties", {}).get("data", {})
    print(f'{x["name"]:34} priority {it.get("priority")}  data={json.dumps(data, separators=(",",":"))[:60]}  variant={meta.get("saltscope_data_variant")}')
    print(f'{"":34} patterns {", ".join(it["index_patterns"])}')
maps = json.loads(sys.argv[2])
if maps:
    print("salt-* indices:")
    for name in sorted(maps):
        meta = maps[name].get("mappings", {}).get("_meta", {})
        how = f'template {meta["saltscope_template"]} (installed as variant {meta.get("saltscope_data_variant")})' if "saltscope_template" in meta \
              else "dynamic mapping (created before the templates, or not matched)"
        print(f"  {name:48} {how}")
EOF
}

# ---- verify ---------------------------------------------------------------------------------
cmd_verify() {
  local t0 fails=0
  t0=$(now_s)
  cmd_install >/dev/null
  log "verify on $PRODUCT $VERSION ($VARIANT) at $ES_URL"
  local work
  work=$(mktemp -d)
  # scratch copies of the fixtures' indices: <index without -v1>-ssverify-v1 (matches the same templates)
  es DELETE "/salt-*-ssverify-v1?ignore_unavailable=true" >/dev/null || true
  "$PY" - "$SALTSCOPE_REPO/tests/fixtures" "$TPL_DIR/samples" "$work" <<'EOF'
import json, sys, glob, os
fx, samples, work = sys.argv[1:4]
files = sorted(glob.glob(f"{fx}/*.json")) + sorted(glob.glob(f"{samples}/*.json"))
indices, lines = {}, []
for f in files:
    if os.path.basename(f) in ("manifest.json", "dynamic_mapping.json"):
        continue
    hits = json.load(open(f))
    if not isinstance(hits, list):
        continue
    for h in hits:
        real = h["_index"]
        base = real[:-3] if real.endswith("-v1") else real
        name = f"{base}-ssverify-v1"
        indices.setdefault(name, real)
        lines.append(json.dumps({"index": {"_index": name, "_id": h["_id"]}}))
        lines.append(json.dumps(h["_source"]))
    print(f"{os.path.basename(f)}\t{len(hits)}", file=open(f"{work}/files.tsv", "a"))
open(f"{work}/bulk.ndjson", "w").write("\n".join(lines) + "\n")
with open(f"{work}/indices.tsv", "w") as o:
    for n, real in sorted(indices.items()):
        o.write(f"{n}\t{real}\t{n[:-3]}\n")
EOF
  local n_docs idx real alias body
  n_docs=$(( $(wc -l <"$work/bulk.ndjson") / 2 ))
  # create each index the way the returner does (1 shard, 0 replicas, alias <name>)
  while IFS=$'\t' read -r idx real alias; do
    printf '{"settings":{"index":{"number_of_shards":1,"number_of_replicas":0}},"aliases":{"%s":{}}}' "$alias" >"$work/create.json"
    body=$(es PUT "/$idx" "$work/create.json")
    [[ "$(http_code)" == 200 ]] || { warn "create $idx: HTTP $(http_code) $body"; fails=$((fails + 1)); }
  done <"$work/indices.tsv"
  body=$(es POST "/_bulk?refresh=true" "$work/bulk.ndjson")
  echo "$body" >"$work/bulk.out"
  local report
  report=$("$PY" - "$work/bulk.out" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
bad = [i for i in r.get("items", []) if list(i.values())[0].get("error")]
ok = len(r.get("items", [])) - len(bad)
print(f"bulk: {ok} accepted, {len(bad)} rejected")
for i in bad:
    v = list(i.values())[0]
    print(f"  REJECTED {v['_index']}/{v['_id']}: {v['error'].get('type')}: {v['error'].get('reason')}"[:400])
sys.exit(1 if bad or not ok else 0)
EOF
  ) && echo "ok   $report ($n_docs documents from tests/fixtures and deploy/index-template/samples)" \
    || { echo "FAIL $report"; fails=$((fails + 1)); }

  # The limit of flat_object: one value longer than 32766 bytes rejects the document.
  "$PY" -c 'import json
print(json.dumps({"@timestamp":"2026-12-02T19:14:19.408230+00:00","success":True,"retcode":0,"minion":"big.example.com","fun":"state.apply","jid":"20261202191413295886","counts":{},
 "data":{"cmd_|-big_|-big_|-run":{"result":True,"comment":"Command run","name":"big","__id__":"big","__run_num__":0,"changes":{"stdout":"x"*40000}}}}))' >"$work/big.json"
  body=$(es PUT "/salt-state_apply-ssverify/_doc/big-stdout?refresh=true" "$work/big.json")
  if [[ "$(http_code)" == 20? ]]; then
    echo "ok   a state return with a 40000-byte stdout is accepted ($VARIANT)"
  elif [[ "$VARIANT" == flat_object ]]; then
    echo "LIMIT a state return with a 40000-byte stdout is REJECTED by flat_object: $(jget 'd["error"]["reason"][:160]' <<<"$body")"
  else
    echo "FAIL a state return with a 40000-byte stdout is rejected: $body"; fails=$((fails + 1))
  fi

  # ---- queries -----------------------------------------------------------------------------
  RET='salt-*-ssverify-v1,-salt-master-*'
  EV='salt-master-event-cache*-ssverify-v1'
  JC='salt-master-job-cache-ssverify-v1'
  check() { # check LABEL PATH BODY PY_CONDITION(d)  [expected: pass|info]
    local label=$1 path=$2 q=$3 cond=$4 kind=${5:-pass} out res
    printf '%s' "$q" >"$work/q.json"
    out=$(es POST "$path" "$work/q.json")
    # the answer on stdin: a page of big returns passes the kernel's 128 KB limit of one argument
    res=$(printf '%s' "$out" | "$PY" -c 'import json,sys
d=json.load(sys.stdin)
if "error" in d: print("ERROR " + json.dumps(d["error"].get("root_cause",[d["error"]])[0].get("reason"))[:200]); sys.exit(2)
t=d.get("hits",{}).get("total",{}); n=t.get("value",t) if isinstance(t,dict) else t
ok=eval(sys.argv[1]); print(("hits=%s " % n) + ("yes" if ok else "no")); sys.exit(0 if ok else 1)' "$cond") && {
      echo "ok   $label: $res"; return 0; }
    if [[ "$kind" == info ]]; then echo "info $label: $res"; else echo "FAIL $label: $res"; fails=$((fails + 1)); fi
  }
  n() { echo 'n>0'; }

  # field_caps: the names Saltscope's FieldMap picks
  local caps
  caps=$(es GET "/salt-*-ssverify-v1/_field_caps?fields=jid,jid.keyword,minion,minion.keyword,fun,fun.keyword,tag,tag.keyword,data.user,data.user.keyword,data.fun,data.fun.keyword,data.tgt,data.tgt.keyword,load.user,load.user.keyword,load.fun,load.fun.keyword,load.tgt,load.tgt.keyword,data._stamp,load._stamp,data")
  "$PY" - "$caps" <<'EOF' || fails=$((fails + 1))
import json, sys
f = json.loads(sys.argv[1])["fields"]
bad = 0
for name in ["jid", "minion", "fun", "tag", "data.user", "data.fun", "data.tgt", "load.user", "load.fun", "load.tgt"]:
    types = sorted(f.get(name, {}))
    sub = sorted(f.get(name + ".keyword", {}))
    picked = name if types == ["keyword"] else name + ".keyword"
    # flat_object/flattened: the returns' `data` answers for every data.* path; the
    # event cache's own data.* then still has the keyword compat subfield FieldMap falls back to
    good = types == ["keyword"] or (set(types) - {"flat_object", "flattened"} == {"keyword"} and set(sub) - {"flat_object", "flattened"} == {"keyword"})
    bad += not good
    note = "" if types == ["keyword"] else (f" ({name}.keyword: {sub}: works)" if good else " (expected keyword)")
    print(f"{'ok  ' if good else 'FAIL'} field_caps {name}: {types} -> FieldMap uses {picked}{note}")
print(f"info field_caps data: {sorted(f.get('data', {}))}; data._stamp: {sorted(f.get('data._stamp', {}))}; load._stamp: {sorted(f.get('load._stamp', {}))}")
sys.exit(1 if bad else 0)
EOF

  check "composite aggregation on jid" "/$RET/_search" \
    '{"size":0,"aggs":{"jobs":{"composite":{"size":100,"sources":[{"jid":{"terms":{"field":"jid","order":"desc"}}}]}}}}' \
    'len(d["aggregations"]["jobs"]["buckets"])>5'
  check "terms aggregation on fun" "/$RET/_search" \
    '{"size":0,"aggs":{"f":{"terms":{"field":"fun","size":50}}}}' \
    '"state.apply" in [b["key"] for b in d["aggregations"]["f"]["buckets"]]'
  check "term minion=db-02" "/$RET/_search" '{"query":{"term":{"minion":"db-02"}}}' 'n>0'
  check "compat subfield: term jid.keyword (old dynamic name)" "/$RET/_search" \
    '{"query":{"prefix":{"jid.keyword":"2026"}}}' 'n>0'
  check "range on @timestamp + term success=false" "/$RET/_search" \
    '{"query":{"bool":{"filter":[{"range":{"@timestamp":{"gte":"2026-12-01"}}},{"term":{"success":false}}]}}}' 'n>0'
  check "counts.failed range (states_count docs)" "/$RET/_search" '{"query":{"range":{"counts.failed":{"gte":0}}}}' 'n>0'
  if [[ "$SUMMARY" == on ]]; then
    # the ingest pipeline ran on every state run, and its fields aggregate
    check "summary: every state run has saltscope.summary_version" "/$RET/_search" \
      '{"query":{"bool":{"filter":[{"terms":{"fun":["state.apply","state.sls","state.highstate"]}}],"must_not":[{"term":{"saltscope.summary_version":1}}]}}}' 'n==0'
    check "summary: state runs with saltscope.states.total" "/$RET/_search" \
      '{"query":{"range":{"saltscope.states.total":{"gte":1}}}}' 'n>0'
    check "summary: terms aggregation on saltscope.sls" "/$RET/_search" \
      '{"size":0,"aggs":{"s":{"terms":{"field":"saltscope.sls","size":50}}}}' 'len(d["aggregations"]["s"]["buckets"])>0'
    check "summary: run_failed on state runs that failed" "/$RET/_search" \
      '{"query":{"bool":{"filter":[{"term":{"saltscope.run_failed":true}},{"prefix":{"fun":"state."}}]}}}' 'n>0'
    check "summary: no document failed the pipeline" "/$RET/_search" \
      '{"query":{"exists":{"field":"saltscope_summary_failed"}}}' 'n==0'
  fi
  check "sort on retcode" "/$RET/_search" '{"size":1,"sort":[{"retcode":"desc"}]}' 'd["hits"]["hits"][0]["_source"]["retcode"]>=2'

  # free text as Saltscope sends it (core/src/query/filter.rs: query_string, AND, lenient)
  qs() { printf '{"query":{"query_string":{"query":%s,"default_operator":"AND","analyze_wildcard":true,"lenient":true}}}' "$("$PY" -c 'import json,sys;print(json.dumps(sys.argv[1]))' "$1")"; }
  check "query_string fun:state.apply" "/$RET/_search" "$(qs 'fun:state.apply')" 'n>0'
  check "query_string fun:state.*" "/$RET/_search" "$(qs 'fun:state.*')" 'n>0'
  check "query_string minion:db-02" "/$RET/_search" "$(qs 'minion:db-02')" 'n>0'
  check "query_string db-02 (bare word, keyword field)" "/$RET/_search" "$(qs 'db-02')" 'n>0'
  check "query_string hello (cmd.run output, data as text)" "/$RET/_search" "$(qs 'hello')" 'n>0'
  check "query_string \"hello from\" (phrase in cmd.run output)" "/$RET/_search" "$(qs '"hello from"')" 'n>0'
  # words inside state comments: text would find them; flat_object indexes each leaf value whole
  # (keyword-like: exact value, prefix, wildcard); enabled:false indexes nothing
  local obj_whole=pass obj_words=info
  [[ "$VARIANT" == disabled ]] && obj_whole=info
  check "query_string Migration (word in a state comment)" "/$RET/_search" "$(qs 'Migration')" 'n>0' "$obj_words"
  check "query_string \"already exists\" (phrase in a state comment)" "/$RET/_search" "$(qs '"already exists"')" 'n>0' "$obj_words"
  check "query_string Migration AND minion:db-02" "/$RET/_search" "$(qs 'Migration minion:db-02')" 'n>0' "$obj_words"
  check "query_string Migr* (prefix of a whole state comment)" "/$RET/_search" "$(qs 'Migr*')" 'n>0' "$obj_whole"
  check "query_string *already* (wildcard inside a state comment)" "/$RET/_search" "$(qs '*already*')" 'n>0' info
  check "query_string \"Migration 0042_add.index failed: relation \\\"jobs.minion\\\" already exists\" (whole comment)" "/$RET/_search" \
    "$(qs '"Migration 0042_add.index failed: relation \"jobs.minion\" already exists"')" 'n>0' "$obj_whole"
  check "query_string saltscope.packages (a whole __sls__ value)" "/$RET/_search" "$(qs 'saltscope.packages')" 'n>0' "$obj_whole"
  check "query_string Debian (a whole grains value)" "/$RET/_search" "$(qs 'Debian')" 'n>0' "$obj_whole"
  check "query_string data.os:Debian (fielded grains path)" "/$RET/_search" "$(qs 'data.os:Debian')" 'n>0' "$obj_whole"
  check "term data.os=Debian (grains path)" "/$RET/_search" '{"query":{"term":{"data.os":"Debian"}}}' 'n>0' "$obj_whole"
  check "_source filter data.*.result" "/salt-state_apply-ssverify-v1/_search" \
    '{"size":10,"_source":["jid","minion","data.*.result"],"query":{"term":{"fun":"state.apply"}}}' \
    'sum(any(isinstance(v,dict) and "result" in v for v in h["_source"].get("data",{}).values()) for h in d["hits"]["hits"])>=3'

  # event cache
  check "event cache: prefix tag salt/job/" "/$EV/_search" '{"query":{"prefix":{"tag":"salt/job/"}}}' 'n>0'
  local a_tag
  a_tag=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["_source"]["tag"])' "$SALTSCOPE_REPO/tests/fixtures/publish_event.json")
  check "event cache: terms tag=[$a_tag]" "/$EV/_search" "{\"query\":{\"terms\":{\"tag\":[\"$a_tag\"]}}}" 'n>0'
  check "event cache: sort on data._stamp desc" "/$EV/_search" \
    '{"size":3,"sort":[{"data._stamp":{"order":"desc"}}],"query":{"wildcard":{"tag":"salt/job/*/new"}}}' \
    'n>0 and [h["sort"][0] for h in d["hits"]["hits"]]==sorted([h["sort"][0] for h in d["hits"]["hits"]],reverse=True)'
  check "event cache: term data.user=root, data.minions" "/$EV/_search" \
    '{"query":{"bool":{"filter":[{"term":{"data.user":"root"}},{"exists":{"field":"data.minions"}}]}}}' 'n>0'
  check "event cache: term data.user.keyword=root (FieldMap's fallback name)" "/$EV/_search" '{"query":{"term":{"data.user.keyword":"root"}}}' 'n>0'
  check "event cache: _source keeps data.arg" "/$EV/_search" \
    '{"size":50,"_source":["tag","data.arg","data.minions","data._stamp"],"query":{"match_all":{}}}' \
    'any("arg" in h["_source"].get("data",{}) for h in d["hits"]["hits"])'
  # job cache
  check "job cache: term load.fun + load.user" "/$JC/_search" \
    '{"query":{"bool":{"filter":[{"term":{"load.user":"root"}},{"exists":{"field":"load.fun"}}]}}}' 'n>0'
  check "job cache: publish load with a kwargs arg kept in _source" "/$JC/_search" \
    '{"query":{"term":{"load.tgt_type":"compound"}}}' 'n>0 and any(isinstance(a,dict) for a in d["hits"]["hits"][0]["_source"]["load"]["arg"])'
  check "job cache: return load with a state dict return kept in _source" "/$JC/_search" \
    '{"query":{"bool":{"filter":[{"term":{"load.id":"db-02"}},{"term":{"load.fun":"state.apply"}}]}}}' 'n>0 and isinstance(d["hits"]["hits"][0]["_source"]["load"]["return"],dict)'
  check "event cache: ret events with dict and string returns" "/$EV/_search" '{"query":{"wildcard":{"tag":"salt/job/*/ret/*"}}}' 'n>=2'
  # what the events view's "failed returns only" sends (core/src/query/events.rs)
  check "event cache: failed ret events (term data.success=false or data.retcode != 0)" "/$EV/_search" \
    '{"query":{"bool":{"filter":[{"wildcard":{"tag":"salt/job/*/ret/*"}},{"bool":{"should":[{"term":{"data.success":false}},{"bool":{"filter":[{"exists":{"field":"data.retcode"}}],"must_not":[{"term":{"data.retcode":0}}]}}],"minimum_should_match":1}}]}}}' 'n>=2'
  check "event cache: range data.retcode >= 2, term data.id, term data.fun" "/$EV/_search" \
    '{"query":{"bool":{"filter":[{"range":{"data.retcode":{"gte":2}}},{"term":{"data.id":"db-02"}},{"terms":{"data.fun":["cmd.run","state.apply"]}}]}}}' 'n>=2'
  check "event cache: range on data._stamp (isoformat, µs, +00:00) to the millisecond" "/$EV/_search" \
    '{"size":0,"query":{"range":{"data._stamp":{"gte":"2026-12-02T19:14:35.000","lte":"2026-12-02T19:14:35.001","format":"strict_date_optional_time"}}}}' 'n>=2'
  check "job cache: terms agg on load.tgt" "/$JC/_search" '{"size":0,"aggs":{"t":{"terms":{"field":"load.tgt"}}}}' \
    'len(d["aggregations"]["t"]["buckets"])>0'
  check "job cache: sort on load._stamp" "/$JC/_search" '{"size":1,"sort":[{"load._stamp":{"order":"desc","unmapped_type":"date"}}]}' 'n>0'

  # the real index names pick the right template
  local real tpl
  for real in salt-state_apply-v1 salt-state_apply-2026.12.02-ordered-v1 salt-state_sls-v1 salt-grains_items-v1 \
              salt-cmd_run-v1 salt-cmd_run_all-v1 salt-test_retcode-v1 salt-state_single-v1 \
              salt-master-job-cache-v1 salt-master-event-cache-v1 salt-master-event-cache-2026.12.02-v1; do
    tpl=$(es POST "/_index_template/_simulate_index/$real" | jget 'd["template"]["mappings"].get("_meta",{}).get("saltscope_template","none")' 2>/dev/null || echo '?')
    echo "ok   $real -> template $tpl"
  done

  if [[ "${VERIFY_KEEP:-0}" != 1 ]]; then
    es DELETE "/salt-*-ssverify-v1" >/dev/null || true
    es DELETE "/salt-state_apply-ssverify?ignore_unavailable=true" >/dev/null || true
  fi
  rm -rf "$work"
  echo "verify on $PRODUCT $VERSION ($VARIANT): $fails failure(s) in $(elapsed "$t0")"
  [[ $fails -eq 0 ]]
}

case "$CMD" in
  install) cmd_install ;;
  uninstall) cmd_uninstall ;;
  show) cmd_show ;;
  verify) cmd_verify ;;
  *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
