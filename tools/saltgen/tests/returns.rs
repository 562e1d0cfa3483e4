//! Return documents, job-cache loads and publish events against the REAL
//! returner documents in tests/fixtures/: same fields, same JSON types, same
//! formats. If the generator drifts from what Salt writes, this fails.

mod common;

use common::*;
use saltscope_gen::gen::Config;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

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
