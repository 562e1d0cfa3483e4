"""The export an auditor would script: helpers.scan over the returns and
csv.writer, one row per minion per job with the columns of Saltscope's
returns export (state counts computed from `data` as Salt's outputter does).

  python scan_export.py --es URL --index 'saltgen-*' --out FILE.csv
Prints: rows=<n> seconds=<s>
"""
import argparse
import csv
import time

from elasticsearch import Elasticsearch, helpers


def counts(data):
    if not isinstance(data, dict):
        return "", "", ""
    ok = changed = failed = 0
    seen = False
    for v in data.values():
        if isinstance(v, dict) and "result" in v:
            seen = True
            if v["result"] is False:
                failed += 1
            else:
                ok += 1
            ch = v.get("changes")
            if ch and (not isinstance(ch, dict) or any(k != "_orig_key" for k in ch)):
                changed += 1
    return (ok, changed, failed) if seen else ("", "", "")


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--es", required=True)
    a.add_argument("--index", required=True)
    a.add_argument("--out", required=True)
    args = a.parse_args()
    es = Elasticsearch([args.es], timeout=120)
    prefix = args.index.rstrip("*")
    query = {"query": {"bool": {"filter": [{"exists": {"field": "minion"}}],
                                "must_not": [{"prefix": {"_index": prefix + "master-"}}]}}}
    t0 = time.monotonic()
    rows = 0
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["Time (UTC)", "JID", "Minion", "Function", "Success", "Retcode",
                    "States succeeded", "States changed", "States failed"])
        for hit in helpers.scan(es, index=args.index, query=query, size=1000, preserve_order=False):
            s = hit["_source"]
            w.writerow([s.get("@timestamp"), s.get("jid"), s.get("minion"), s.get("fun"),
                        s.get("success"), s.get("retcode"), *counts(s.get("data"))])
            rows += 1
    print(f"rows={rows} seconds={time.monotonic() - t0:.2f}")


if __name__ == "__main__":
    main()
