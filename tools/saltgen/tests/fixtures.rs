//! The generator against the REAL returner documents in tests/fixtures/:
//! same fields, same JSON types, same formats. If the generator drifts from
//! what Salt writes, this fails.

use saltscope_gen::gen::{Config, Doc, Plan};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<Value> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let hits: Vec<Value> = serde_json::from_str(&text).unwrap();
    hits.into_iter().map(|h| h["_source"].clone()).collect()
}

fn ty(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// field -> set of JSON types seen
type Shape = BTreeMap<String, BTreeSet<&'static str>>;

fn shape<'a>(docs: impl IntoIterator<Item = &'a Value>) -> Shape {
    let mut s = Shape::new();
    for d in docs {
        for (k, v) in d.as_object().expect("an object") {
            s.entry(k.clone()).or_default().insert(ty(v));
        }
    }
    s
}

/// Generated docs have exactly the real top-level fields, with types the real ones have.
fn assert_same_shape(kind: &str, real: &[Value], generated: &[Value]) {
    assert!(!real.is_empty(), "{kind}: no real fixture docs");
    assert!(!generated.is_empty(), "{kind}: nothing generated");
    let want = shape(real);
    let want_keys: BTreeSet<&String> = want.keys().collect();
    for g in generated {
        let keys: BTreeSet<&String> = g.as_object().unwrap().keys().collect();
        assert_eq!(
            keys, want_keys,
            "{kind}: top-level fields differ from the real documents\n{g}"
        );
        for (k, v) in g.as_object().unwrap() {
            assert!(
                want[k].contains(ty(v)),
                "{kind}: {k} is {} but real documents have {:?}\n{g}",
                ty(v),
                want[k]
            );
        }
    }
}

// Regex-free format checks (the patterns are in the names).
fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}
/// ^\d\d:\d\d:\d\d(\.\d{6})?$
fn is_time_of_day(s: &str) -> bool {
    let b = s.as_bytes();
    (b.len() == 8 || (b.len() == 15 && b[8] == b'.' && is_digits(&s[9..])))
        && b[2] == b':'
        && b[5] == b':'
        && is_digits(&s[0..2])
        && is_digits(&s[3..5])
        && is_digits(&s[6..8])
}
/// ^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$
fn is_iso_utc(s: &str) -> bool {
    let Some(body) = s.strip_suffix("+00:00") else {
        return false;
    };
    body.len() >= 19
        && is_digits(&body[0..4])
        && &body[4..5] == "-"
        && is_digits(&body[5..7])
        && &body[7..8] == "-"
        && is_digits(&body[8..10])
        && &body[10..11] == "T"
        && is_time_of_day(&body[11..])
}
/// ^\d{20}$ and a plausible date
fn is_jid(s: &str) -> bool {
    s.len() == 20 && is_digits(s) && (&s[4..6] >= "01" && &s[4..6] <= "12") && &s[8..10] <= "23"
}

fn check_return_envelope(kind: &str, d: &Value) {
    let ts = d["@timestamp"].as_str().unwrap();
    let jid = d["jid"].as_str().unwrap();
    assert!(is_iso_utc(ts), "{kind}: @timestamp {ts}");
    assert!(is_jid(jid), "{kind}: jid {jid}");
    // the job starts (jid) before the returner runs (@timestamp)
    let ts_digits: String = ts[..26.min(ts.len() - 6)]
        .chars()
        .filter(|c| c.is_ascii_digit())
        .collect();
    assert!(
        jid[..14] <= ts_digits[..14],
        "{kind}: jid {jid} after @timestamp {ts}"
    );
    let retcode = d["retcode"].as_i64().unwrap();
    assert_eq!(
        d["success"].as_bool().unwrap(),
        retcode == 0,
        "{kind}: success must be retcode == 0\n{d}"
    );
}

/// No '.' in any key of `data`, at any depth; every `_orig_key` names a dotted key
/// that was rewritten into a sibling.
fn check_keys(kind: &str, v: &Value) {
    match v {
        Value::Object(o) => {
            if let Some(orig) = o.get("_orig_key") {
                let orig = orig
                    .as_str()
                    .unwrap_or_else(|| panic!("{kind}: _orig_key not a string"));
                assert!(
                    orig.contains('.'),
                    "{kind}: _orig_key without a dot: {orig}"
                );
                assert!(
                    o.contains_key(&orig.replace('.', "_")),
                    "{kind}: _orig_key {orig} has no rewritten sibling"
                );
            }
            for (k, sub) in o {
                assert!(!k.contains('.'), "{kind}: dotted key {k:?} left in data");
                check_keys(kind, sub);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| check_keys(kind, x)),
        _ => {}
    }
}

/// The states of a state return, keyed, with their values.
fn states(d: &Value) -> Vec<(&String, &Value)> {
    d["data"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v.get("result").is_some())
        .collect()
}

/// Every state key is `<module>_|-<id>_|-<name>_|-<function>` with dots rewritten,
/// with `__id__` and `name` taken from the value.
fn check_state_key(kind: &str, key: &str, st: &Value) {
    let parts: Vec<&str> = key.split("_|-").collect();
    assert_eq!(
        parts.len(),
        4,
        "{kind}: state key {key:?} is not <module>_|-<id>_|-<name>_|-<fun>"
    );
    let id = st["__id__"].as_str().unwrap().replace('.', "_");
    let name = st["name"].as_str().unwrap().replace('.', "_");
    assert_eq!(
        format!("{}_|-{id}_|-{name}_|-{}", parts[0], parts[3]),
        key,
        "{kind}: key does not match __id__/name"
    );
    assert!(
        parts[0]
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_'),
        "{kind}: module {}",
        parts[0]
    );
}

/// Which top-level `data` objects need an `_orig_key`: any state whose key had a dot.
fn check_orig_key_present(kind: &str, d: &Value) {
    let needs = states(d).iter().any(|(_, st)| {
        st["__id__"].as_str().unwrap().contains('.') || st["name"].as_str().unwrap().contains('.')
    });
    assert_eq!(
        d["data"].get("_orig_key").is_some(),
        needs,
        "{kind}: _orig_key presence wrong\n{d}"
    );
    if let Some(orig) = d["data"].get("_orig_key").and_then(|v| v.as_str()) {
        assert!(
            orig.contains("_|-"),
            "{kind}: data._orig_key should be an original state key: {orig}"
        );
    }
}

fn real_state_docs() -> Vec<Value> {
    let mut v = Vec::new();
    for f in [
        "state_apply_multi.json",
        "state_apply_test.json",
        "salt_call_state_layouts.json",
        "state_single.json",
    ] {
        v.extend(fixture(f));
    }
    // render errors are state returns too, but not state-shaped
    v.into_iter()
        .filter(|d| d["data"].get("return").is_none())
        .collect()
}

struct Generated {
    by_index: BTreeMap<String, Vec<(Option<String>, Value)>>,
}

fn generate(cfg: Config) -> Generated {
    let plan = Plan::new(cfg);
    let mut by_index: BTreeMap<String, Vec<(Option<String>, Value)>> = BTreeMap::new();
    let mut docs: Vec<Doc> = Vec::new();
    for j in 0..plan.jobs.len() {
        docs.clear();
        plan.job_docs(j, &mut docs);
        for d in &docs {
            // what goes over the wire, parsed back like the engine does
            let v: Value = serde_json::from_str(&d.body.to_json()).expect("generated JSON parses");
            by_index
                .entry(d.index.clone())
                .or_default()
                .push((d.id.clone(), v));
        }
    }
    let returns: usize = by_index
        .iter()
        .filter(|(k, _)| !k.contains("-master-"))
        .map(|(_, v)| v.len())
        .sum();
    assert_eq!(
        returns as u64, plan.cfg.returns,
        "exactly --returns return documents"
    );
    Generated { by_index }
}

impl Generated {
    fn docs(&self, index: &str) -> Vec<Value> {
        self.by_index
            .get(index)
            .map(|v| v.iter().map(|(_, d)| d.clone()).collect())
            .unwrap_or_default()
    }
}

fn sample() -> Generated {
    generate(Config {
        returns: 30_000,
        minions: 400,
        seed: 7,
        ..Config::default()
    })
}

#[test]
fn the_checks_accept_the_real_documents() {
    for d in real_state_docs() {
        check_return_envelope("real state", &d);
        check_keys("real state", &d["data"]);
        check_orig_key_present("real state", &d);
        for (k, st) in states(&d) {
            check_state_key("real state", k, st);
            assert!(is_time_of_day(st["start_time"].as_str().unwrap()));
        }
    }
    for f in [
        "cmd_run.json",
        "test_version.json",
        "grains_item.json",
        "runner_return.json",
        "test_retcode.json",
    ] {
        for d in fixture(f) {
            check_return_envelope(f, &d);
            check_keys(f, &d["data"]);
        }
    }
}

#[test]
fn return_documents_match_the_real_ones() {
    let g = sample();
    let real_states = real_state_docs();
    let pairs = [
        ("saltgen-state_apply", real_states.clone()),
        ("saltgen-state_highstate", real_states.clone()),
        ("saltgen-cmd_run", fixture("cmd_run.json")),
        ("saltgen-test_version", fixture("test_version.json")),
        ("saltgen-grains_item", fixture("grains_item.json")),
        (
            "saltgen-runner_jobs_list_jobs",
            fixture("runner_return.json"),
        ),
        (
            "saltgen-runner_jobs_lookup_jid",
            fixture("runner_return.json"),
        ),
    ];
    for (index, real) in &pairs {
        let gen = g.docs(index);
        assert_same_shape(index, real, &gen);
        let real_fun = shape(real.iter().map(|d| &d["data"]).filter(|d| d.is_object()));
        for d in &gen {
            check_return_envelope(index, d);
            check_keys(index, &d["data"]);
            assert_eq!(
                d["counts"],
                serde_json::json!({}),
                "{index}: counts must be {{}} without states_count"
            );
            assert_eq!(ty(&d["data"]), ty(&real[0]["data"]), "{index}: data type");
            let fun = d["fun"].as_str().unwrap();
            assert_eq!(
                index.trim_start_matches("saltgen-"),
                fun.replace('.', "_"),
                "{index}: index is <prefix>-<fun_>"
            );
            if index.contains("runner_") {
                // runner data: the real fields, the real types; minion is the master
                assert!(d["minion"].as_str().unwrap().ends_with("_master"));
                assert_eq!(
                    (d["success"].as_bool(), d["retcode"].as_i64()),
                    (Some(false), Some(1))
                );
                for (k, v) in d["data"].as_object().unwrap() {
                    assert!(
                        real_fun.get(k).is_some_and(|t| t.contains(ty(v))),
                        "{index}: data.{k} ({}) not in the real runner data",
                        ty(v)
                    );
                }
                assert!(is_iso_utc(d["data"]["_stamp"].as_str().unwrap()));
                assert_eq!(d["data"]["jid"], d["jid"]);
            }
        }
        if index.ends_with("grains_item") {
            // the fixture's grains: os id saltversion, strings
            let real_keys: BTreeSet<String> = real[0]["data"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            assert!(gen.iter().any(|d| d["data"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect::<BTreeSet<_>>()
                == real_keys));
        }
    }
    // cmd.run: retcode is the exit status, success false when non-zero; both occur
    let cmd = g.docs("saltgen-cmd_run");
    assert!(cmd
        .iter()
        .any(|d| d["retcode"].as_i64() > Some(0) && d["success"] == false));
    assert!(cmd.iter().any(|d| d["data"] == "" && d["retcode"] == 0));
}

#[test]
fn state_results_match_the_real_states() {
    let g = sample();
    let real = real_state_docs();
    let mut real_fields: Shape = Shape::new();
    let mut always: Option<BTreeSet<String>> = None;
    for d in &real {
        for (_, st) in states(d) {
            for (k, v) in st.as_object().unwrap() {
                real_fields.entry(k.clone()).or_default().insert(ty(v));
            }
            let keys: BTreeSet<String> = st.as_object().unwrap().keys().cloned().collect();
            always = Some(match always {
                None => keys,
                Some(a) => a.intersection(&keys).cloned().collect(),
            });
        }
    }
    let always = always.unwrap();
    let mut seen_fields = BTreeSet::new();
    let (mut failed_docs, mut req_failed, mut nulls, mut diffs, mut pkg_changes, mut nested_orig) =
        (0, 0, 0, 0, 0, 0);
    for index in ["saltgen-state_apply", "saltgen-state_highstate"] {
        for d in g.docs(index) {
            if d["data"].get("return").is_some() {
                // render error, as in render_error.json
                assert_eq!(d["retcode"], 1);
                let r = &fixture("render_error.json")[0]["data"]["return"];
                assert_eq!(ty(&d["data"]["return"]), ty(r));
                assert!(d["data"]["return"][0]
                    .as_str()
                    .unwrap()
                    .starts_with("Rendering SLS 'base:"));
                continue;
            }
            check_orig_key_present(index, &d);
            let sts = states(&d);
            assert!(!sts.is_empty());
            let mut run_nums: Vec<i64> = Vec::new();
            let mut any_false = false;
            for (key, st) in &sts {
                check_state_key(index, key, st);
                let o = st.as_object().unwrap();
                for (k, v) in o {
                    seen_fields.insert(k.clone());
                    let t = real_fields.get(k).unwrap_or_else(|| {
                        panic!("{index}: state field {k} is not in any real state")
                    });
                    assert!(
                        t.contains(ty(v)),
                        "{index}: state field {k} is {} but real states have {t:?}",
                        ty(v)
                    );
                }
                for k in &always {
                    assert!(
                        o.contains_key(k),
                        "{index}: state {key} lacks {k}, which every real state has"
                    );
                }
                assert!(
                    is_time_of_day(st["start_time"].as_str().unwrap()),
                    "start_time {}",
                    st["start_time"]
                );
                assert!(st["duration"].is_f64());
                run_nums.push(st["__run_num__"].as_i64().unwrap());
                any_false |= st["result"] == false;
                if st["result"].is_null() {
                    nulls += 1;
                }
                if st["comment"]
                    .as_str()
                    .unwrap()
                    .starts_with("One or more requisite failed: ")
                {
                    assert_eq!(st["__state_ran__"], false);
                    assert_eq!(st["result"], false);
                    req_failed += 1;
                }
                let ch = &st["changes"];
                if let Some(diff) = ch.get("diff").and_then(|x| x.as_str()) {
                    assert!(
                        diff.starts_with("--- \n+++ \n@@ "),
                        "unified diff: {diff:?}"
                    );
                    diffs += 1;
                }
                if key.starts_with("cmd_|-")
                    && !ch.as_object().unwrap().is_empty()
                    && !st["result"].is_null()
                {
                    let keys: Vec<&String> = ch.as_object().unwrap().keys().collect();
                    assert_eq!(
                        keys,
                        ["pid", "retcode", "stderr", "stdout"],
                        "cmd.run changes"
                    );
                    assert_eq!(st["result"] == true, ch["retcode"] == 0);
                }
                if key.starts_with("pkg_|-") && !ch.as_object().unwrap().is_empty() {
                    pkg_changes += 1;
                    for (k, v) in ch.as_object().unwrap() {
                        if k == "_orig_key" {
                            nested_orig += 1;
                        } else {
                            let ks: Vec<&String> = v.as_object().unwrap().keys().collect();
                            assert_eq!(
                                ks,
                                ["new", "old"],
                                "pkg changes are {{name: {{old, new}}}}"
                            );
                        }
                    }
                }
            }
            run_nums.sort();
            assert_eq!(
                run_nums,
                (0..sts.len() as i64).collect::<Vec<_>>(),
                "__run_num__ is 0..n"
            );
            assert_eq!(
                d["retcode"].as_i64().unwrap(),
                if any_false { 2 } else { 0 },
                "retcode 2 exactly when a state failed"
            );
            if any_false {
                failed_docs += 1;
            }
        }
    }
    // the sample must exercise the interesting cases
    assert!(failed_docs > 0 && req_failed > 0 && nulls > 0 && diffs > 0 && pkg_changes > 0 && nested_orig > 0,
        "failed {failed_docs}, req failed {req_failed}, null {nulls}, diffs {diffs}, pkg {pkg_changes}, nested _orig_key {nested_orig}");
    for k in ["__state_ran__", "warnings"] {
        assert!(seen_fields.contains(k), "never generated {k}");
    }
}

#[test]
fn job_cache_and_publish_events_match_the_real_ones() {
    let g = sample();
    let real_cache = fixture("job_cache.json");
    let real_publish: Vec<Value> = real_cache
        .iter()
        .filter(|d| d["load"]["cmd"] == "publish")
        .cloned()
        .collect();
    let real_return: Vec<Value> = real_cache
        .iter()
        .filter(|d| d["load"]["cmd"] == "_return")
        .cloned()
        .collect();
    let cache = &g.by_index["saltgen-master-job-cache"];
    let mut publish = Vec::new();
    let mut ret = Vec::new();
    for (id, d) in cache {
        assert_eq!(id.as_deref(), d["jid"].as_str(), "job-cache id = jid");
        assert!(is_jid(d["jid"].as_str().unwrap()));
        assert_eq!(d["load"]["jid"], d["jid"]);
        match d["load"]["cmd"].as_str() {
            Some("publish") => publish.push(d["load"].clone()),
            Some("_return") => ret.push(d["load"].clone()),
            other => panic!("job cache load cmd {other:?}"),
        }
        assert_same_shape("job cache doc", &real_cache, std::slice::from_ref(d));
    }
    let loads = |v: &[Value]| v.iter().map(|d| d["load"].clone()).collect::<Vec<_>>();
    assert_same_shape("publish load", &loads(&real_publish), &publish);
    assert_same_shape("_return load", &loads(&real_return), &ret);
    for l in &publish {
        assert_eq!(l["kwargs"], real_publish[0]["load"]["kwargs"]);
        assert!(
            l["arg"].as_array().unwrap().iter().all(|a| a.is_string()),
            "a kwarg object in arg is rejected by the engine"
        );
        let user = l["user"].as_str().unwrap();
        assert!(user == "root" || user.starts_with("sudo_"));
    }

    let real_events = fixture("publish_event.json");
    let events = &g.by_index["saltgen-master-event-cache"];
    let datas: Vec<Value> = events.iter().map(|(_, e)| e["data"].clone()).collect();
    assert_same_shape(
        "publish event",
        &real_events,
        &events.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>(),
    );
    assert_same_shape(
        "publish event data",
        &real_events
            .iter()
            .map(|e| e["data"].clone())
            .collect::<Vec<_>>(),
        &datas,
    );
    // minions: targeted; returns only from targeted minions; some targeted never return
    let mut returned: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (k, docs) in &g.by_index {
        if !k.contains("-master-") && !k.contains("runner_") {
            for (_, d) in docs {
                returned
                    .entry(d["jid"].as_str().unwrap().into())
                    .or_default()
                    .insert(d["minion"].as_str().unwrap().into());
            }
        }
    }
    let mut missing = 0;
    for (id, e) in events {
        let uuid = id.as_deref().unwrap();
        assert_eq!(
            (uuid.len(), uuid.matches('-').count()),
            (36, 4),
            "event id is a uuid4"
        );
        let jid = e["data"]["jid"].as_str().unwrap();
        assert_eq!(e["tag"].as_str().unwrap(), format!("salt/job/{jid}/new"));
        assert!(is_iso_utc(e["data"]["_stamp"].as_str().unwrap()));
        let targeted: BTreeSet<String> = e["data"]["minions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        if let Some(r) = returned.get(jid) {
            assert!(
                r.is_subset(&targeted),
                "returns from minions that were not targeted"
            );
            missing += targeted.len() - r.len();
        }
        let tt = e["data"]["tgt_type"].as_str().unwrap();
        assert!(["glob", "list", "compound"].contains(&tt));
        assert_eq!(tt == "list", e["data"]["tgt"].is_array());
    }
    assert!(missing > 0, "some targeted minions never return");
    // risky jobs for the audit view
    assert!(datas
        .iter()
        .any(|d| d["fun"] == "cmd.run" && d["arg"][0] == "rm -rf /tmp/x"));
    assert!(datas
        .iter()
        .any(|d| d["fun"] == "state.apply" && d["tgt"] == "*"));
    assert!(datas
        .iter()
        .any(|d| d["user"].as_str().unwrap().starts_with("sudo_")));
}

#[test]
fn states_count_layout_matches_the_real_counted_documents() {
    let g = generate(Config {
        returns: 3_000,
        minions: 200,
        seed: 3,
        states_count: true,
        ..Config::default()
    });
    let real: Vec<Value> = fixture("salt_call_state_layouts.json")
        .into_iter()
        .filter(|d| d["counts"].as_object().is_some_and(|c| !c.is_empty()))
        .collect();
    let want = shape(real.iter().map(|d| &d["counts"]));
    for index in ["saltgen-state_apply", "saltgen-state_highstate"] {
        for d in g.docs(index) {
            assert!(
                d["data"].get("return").is_none(),
                "with states_count a render error writes no document"
            );
            assert_eq!(shape([&d["counts"]]), want);
            let n = states(&d).len() as i64;
            let failed = states(&d)
                .iter()
                .filter(|(_, s)| s["result"] == false)
                .count() as i64;
            assert_eq!(d["counts"]["failed"].as_i64(), Some(failed));
            assert_eq!(
                d["counts"]["succeeded"].as_i64(),
                Some(n - failed),
                "null results count as succeeded"
            );
        }
    }
}

/// Dynamic mappings make every state key a field (and strings two: text + keyword).
/// `index.mapping.total_fields.limit` is 1000: stay well under it, even with padding.
fn mapped_fields(v: &Value, path: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, sub) in o {
                let p = format!("{path}.{k}");
                out.insert(p.clone());
                mapped_fields(sub, &p, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| mapped_fields(x, path, out)),
        Value::String(_) => {
            out.insert(format!("{path}.keyword"));
        }
        _ => {}
    }
}

#[test]
fn state_indices_stay_well_under_the_field_limit() {
    for extra in [0, 12] {
        let g = generate(Config {
            returns: 20_000,
            minions: 600,
            seed: 11,
            extra_states: extra,
            ..Config::default()
        });
        for (index, docs) in &g.by_index {
            let mut fields = BTreeSet::new();
            for (_, d) in docs {
                mapped_fields(d, "", &mut fields);
            }
            assert!(
                fields.len() < 850,
                "{index} with --extra-states {extra}: {} mapped fields",
                fields.len()
            );
        }
    }
}

#[test]
fn same_seed_same_documents() {
    let a = generate(Config {
        returns: 2_000,
        minions: 100,
        seed: 5,
        ..Config::default()
    });
    let b = generate(Config {
        returns: 2_000,
        minions: 100,
        seed: 5,
        ..Config::default()
    });
    assert_eq!(a.by_index, b.by_index);
}
