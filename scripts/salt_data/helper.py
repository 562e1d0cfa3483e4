"""Helpers for scripts/salt-data.sh: build the manifest and dump test fixtures.

Stdlib only (runs under the salt venv's python or any python3).

  helper.py manifest --es URL --scenarios FILE.jsonl --out manifest.json [timings...]
  helper.py fixtures --es URL --manifest manifest.json --dir tests/fixtures
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import urllib.error
import urllib.request


def es(url, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return {"_http_error": e.code, "body": e.read().decode(errors="replace")}


def search(base, index, query, size=100, sort=True):
    body = {"query": query, "size": size}
    if sort:
        body["sort"] = [{"@timestamp": {"order": "asc", "unmapped_type": "date"}}]
    r = es(f"{base}/{index}/_search?ignore_unavailable=true&allow_no_indices=true", "POST", body)
    return r.get("hits", {}).get("hits", []) if isinstance(r, dict) else []


def jid_query(jid):
    return {"match_phrase": {"jid": jid}}


def return_hits(base, jid):
    """Return documents (salt-<fun> indices) for one jid, excluding job/event cache."""
    hits = search(base, "salt-*,-salt-master-*", jid_query(jid))
    return [h for h in hits if h["_source"].get("jid") == jid]


def event_hits(base, jid, suffix="new", kind="job"):
    tag = f"salt/{kind}/{jid}/{suffix}"
    hits = search(base, "salt-master-event-cache*", {"match_phrase": {"tag": tag}}, sort=False)
    return [h for h in hits if h["_source"].get("tag") == tag]


def versions(py_env=True):
    out = {"python": platform.python_version()}
    try:
        import salt.version  # noqa

        out["salt"] = salt.version.__version__
    except Exception:  # pragma: no cover
        pass
    for mod, key in (("saltext.elasticsearch", "saltext_elasticsearch"), ("elasticsearch", "elasticsearch_py")):
        try:
            m = __import__(mod, fromlist=["__version__"])
            v = getattr(m, "__version__", None)
            out[key] = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
        except Exception:
            pass
    try:
        from importlib.metadata import version

        out["saltext_elasticsearch"] = version("saltext.elasticsearch")
    except Exception:
        pass
    return out


def returner_errors(path):
    """Count the engine's rejections of the master's returner writes, by index and reason."""
    import collections
    import re

    out = collections.Counter()
    if not path or not os.path.exists(path):
        return {}
    pat = re.compile(r"Cannot create (?:document in index|index) (\S+), server returned code (\d+) with message (\S+)")
    detail = re.compile(r"RequestError\(400, '(\w+)', [\"'](.{0,200})")
    last = None
    for line in open(path, errors="replace"):
        m = detail.search(line)
        if m:
            last = m.group(2)
            last = last.split(" in document with id")[0].split(". Preview")[0]
            last = re.sub(r"\d{20}", "<jid>", last)
            last = re.sub(r"\[[^\]]*/[^\]]*\]", "[<index>]", last)
            continue
        m = pat.search(line)
        if m:
            out[f"{m.group(1)}: {m.group(2)} {m.group(3)}: {last or ''}"] += 1
            last = None
    return dict(out.most_common())


def cmd_manifest(a):
    base = a.es.rstrip("/")
    es(f"{base}/salt-*/_refresh", "POST")
    info = es(f"{base}/")
    scen = [json.loads(l) for l in open(a.scenarios) if l.strip()]
    man = {}
    for s in scen:
        key = s.pop("key")
        if s.get("jid"):
            hits = return_hits(base, s["jid"])
            s["returned"] = sorted({h["_source"].get("minion") for h in hits})
            s["return_docs"] = [{"_index": h["_index"], "_id": h["_id"], "minion": h["_source"].get("minion")} for h in hits]
            if key not in ("salt_call",):
                ev = event_hits(base, s["jid"])
                s["publish_event"] = bool(ev)
                if ev:
                    d = ev[0]["_source"].get("data", {})
                    s["publish_event_minions"] = d.get("minions")
                    s["publish_event_user"] = d.get("user")
                jc = es(f"{base}/salt-master-job-cache/_doc/{s['jid']}")
                s["job_cache_doc"] = bool(isinstance(jc, dict) and jc.get("found"))
        if key == "salt_call":
            man.setdefault("salt_call", {}).setdefault(s["variant"], {})[s["name"]] = s
        elif key == "sudo_user_jobs":
            man.setdefault(key, []).append(s)
        else:
            man[key] = s
    cat = es(f"{base}/_cat/indices/salt-*?format=json&h=index,docs.count&s=index")
    aliases = es(f"{base}/_cat/aliases/salt-*?format=json&h=alias,index&s=alias")
    man["_meta"] = {
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "es_url": base,
        "engine": {
            "distribution": info.get("version", {}).get("distribution", "elasticsearch"),
            "number": info.get("version", {}).get("number"),
        },
        "versions": versions(),
        "timings_seconds": {
            "venv": float(a.venv_seconds),
            "venv_action": a.venv_action,
            "source_a_master_minions": float(a.source_a_seconds),
            "source_b_salt_call": float(a.source_b_seconds),
            "total": float(a.total_seconds),
        },
        "indices": {r["index"]: int(r["docs.count"] or 0) for r in cat} if isinstance(cat, list) else cat,
        "aliases": {r["alias"]: r["index"] for r in aliases} if isinstance(aliases, list) else aliases,
    }
    man["_meta"]["master_returner_errors"] = returner_errors(a.master_log)
    with open(a.out, "w") as f:
        json.dump(man, f, indent=2, sort_keys=True)
    # short summary
    print("scenario                 jid                    returned/expected")
    for k, s in sorted(man.items()):
        if k in ("_meta", "salt_call"):
            continue
        for x in s if isinstance(s, list) else [s]:
            if "jid" in x:
                print(f"  {k:22} {x['jid']:22} {len(x.get('returned', []))}/{len(x.get('minions', []))}")
    for v, calls in sorted(man.get("salt_call", {}).items()):
        got = sum(1 for c in calls.values() if c.get("returned"))
        print(f"  salt_call/{v:18} {got}/{len(calls)} calls wrote a return document")
    if man["_meta"]["master_returner_errors"]:
        print("engine rejected master returner writes (from the salt-master log):")
        for k, n in man["_meta"]["master_returner_errors"].items():
            print(f"  {n:4} x {k}")
    print("indices:")
    for i, n in man["_meta"]["indices"].items():
        print(f"  {i:50} {n}")


def dump(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"  wrote {path}")


def cmd_fixtures(a):
    base = a.es.rstrip("/")
    man = json.load(open(a.manifest))
    os.makedirs(a.dir, exist_ok=True)

    def hits_for(jid):
        return return_hits(base, jid) if jid else []

    for key in ("state_apply_multi", "state_apply_test", "cmd_run", "grains_item", "missing_minion", "index_race", "glob_all_with_offline"):
        if key in man and man[key].get("jid"):
            dump(os.path.join(a.dir, f"{key}.json"), hits_for(man[key]["jid"]))
    sudo = []
    for s in man.get("sudo_user_jobs", []):
        sudo.extend(hits_for(s["jid"]))
    dump(os.path.join(a.dir, "sudo_user_jobs.json"), sudo)

    # job cache documents (as _search hits) for the master jobs
    jc = []
    for key in ("state_apply_multi", "missing_minion", "test_ping_blacklisted"):
        jid = man.get(key, {}).get("jid")
        if jid:
            jc.extend(search(base, "salt-master-job-cache", {"ids": {"values": [jid]}}, sort=False))
    for s in man.get("sudo_user_jobs", []):
        jc.extend(search(base, "salt-master-job-cache", {"ids": {"values": [s["jid"]]}}, sort=False))
    dump(os.path.join(a.dir, "job_cache.json"), jc)

    # publish events: multi state.apply, missing minion, sudo jobs, blacklisted ping
    keys = ("state_apply_multi", "grains_item", "missing_minion", "glob_all_with_offline", "test_ping_blacklisted")
    jids = [man[k]["jid"] for k in keys if man.get(k, {}).get("jid")] + [s["jid"] for s in man.get("sudo_user_jobs", [])]
    dump(os.path.join(a.dir, "publish_event.json"), [h for j in jids for h in event_hits(base, j)])
    # the CLI's batch bookkeeping events (salt/batch/<jid>/new|progress|complete)
    batch = []
    for j in jids[:3]:
        for suffix in ("new", "progress", "complete"):
            batch.extend(event_hits(base, j, suffix, kind="batch"))
    dump(os.path.join(a.dir, "batch_events.json"), batch)
    # every event of one job (missing minion: publish, find_job probes, returns)
    jid = man.get("missing_minion", {}).get("jid")
    if jid:
        allev = search(base, "salt-master-event-cache*", {"match_phrase": {"tag": jid}}, size=50, sort=False)
        dump(os.path.join(a.dir, "missing_minion_events.json"), allev)
    # one ret event (full minion return through the event bus)
    jid = man.get("cmd_run", {}).get("jid")
    if jid:
        ret_ev = search(base, "salt-master-event-cache*", {"match_phrase": {"tag": f"salt/job/{jid}/ret"}}, size=10, sort=False)
        dump(os.path.join(a.dir, "ret_event.json"), [h for h in ret_ev if h["_source"].get("tag", "").startswith(f"salt/job/{jid}/ret/")])

    runner = search(base, "salt-runner_*", {"match_all": {}}, size=3)
    if runner:
        dump(os.path.join(a.dir, "runner_return.json"), runner)

    calls = man.get("salt_call", {})

    def call_hits(variant, name):
        c = calls.get(variant, {}).get(name)
        return hits_for(c["jid"]) if c and c.get("jid") else []

    dump(os.path.join(a.dir, "state_single.json"), call_hits("plain", "state_single") + call_hits("all_on", "state_single"))
    dump(os.path.join(a.dir, "test_retcode.json"), call_hits("plain", "test_retcode"))
    dump(os.path.join(a.dir, "test_version.json"), call_hits("plain", "test_version"))
    dump(os.path.join(a.dir, "cmd_run_fail_salt_call.json"), call_hits("plain", "cmd_run_fail"))
    dump(os.path.join(a.dir, "grains_items.json"), call_hits("plain", "grains_items"))
    dump(os.path.join(a.dir, "ordered_demo_plain.json"), call_hits("plain", "state_sls_ordered_demo"))
    render = []
    for v in calls:
        render.extend(call_hits(v, "render_error"))
    dump(os.path.join(a.dir, "render_error.json"), render)
    # every state.apply document of every layout variant (index names differ)
    layouts = []
    for v in sorted(calls):
        layouts.extend(call_hits(v, "state_apply"))
        layouts.extend(call_hits(v, "state_sls"))
    dump(os.path.join(a.dir, "salt_call_state_layouts.json"), layouts)

    # ordered documents: pick ones where only some state keys carry the run-number prefix
    ordered = search(base, "salt-*-ordered", {"match_all": {}}, size=200)
    partial, full = [], []
    for h in ordered:
        keys = [k for k in h["_source"].get("data", {}) if k != "_orig_key"]
        pre = [k for k in keys if k[:1].isdigit()]
        (partial if 0 < len(pre) < len(keys) else full).append(h)
    dump(os.path.join(a.dir, "ordered_partial_prefix.json"), partial[:2])
    dump(os.path.join(a.dir, "ordered_full_prefix.json"), [h for h in full if h["_source"].get("data")][:1])

    mapping = es(f"{base}/salt-*/_mapping")
    dump(os.path.join(a.dir, "dynamic_mapping.json"), mapping)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("manifest")
    m.add_argument("--es", required=True)
    m.add_argument("--scenarios", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--master-log", default="")
    for k in ("venv-action", "venv-seconds", "source-a-seconds", "source-b-seconds", "total-seconds"):
        m.add_argument(f"--{k}", default="0")
    f = sub.add_parser("fixtures")
    f.add_argument("--es", required=True)
    f.add_argument("--manifest", required=True)
    f.add_argument("--dir", required=True)
    a = p.parse_args()
    {"manifest": cmd_manifest, "fixtures": cmd_fixtures}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
