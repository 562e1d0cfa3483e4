//! The master's event bus (`--events`) against REAL event documents: the
//! `new` and `publish` events of tests/fixtures (`publish_event.json`,
//! `missing_minion_events.json`), the job-cache `_return` load that is the very
//! dict the master fires as a `ret` event (`job_cache.json`), the runner's data
//! (`runner_return.json`), and, for the fleet's events, of which the fixture run
//! stored none, the fields and types the real event cache mapped
//! (`dynamic_mapping.json`). Field sets and JSON types are compared key by key,
//! down into `data`.

mod common;

use common::events::*;
use common::*;
use saltscope_gen::gen::{asctime, Config, Plan};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

const EVENTS: &str = "saltgen-master-event-cache";

fn events_config(events: u64) -> Config {
    Config {
        returns: 6_000,
        minions: 300,
        seed: 13,
        days: 7.0,
        events,
        // one job on 400 minions: its returns come within a second or two
        minions_per_job: 400,
        wide_funs: vec![saltscope_gen::gen::Fun::TestVersion],
        ..Config::default()
    }
}

/// The sample most tests look at, made once: 6,000 returns, at least 40,000 events.
fn event_sample() -> &'static Generated {
    static SAMPLE: OnceLock<Generated> = OnceLock::new();
    SAMPLE.get_or_init(|| generate(events_config(40_000)))
}

#[test]
fn every_kind_of_event_matches_the_real_documents() {
    let g = event_sample();
    let evs: Vec<&Value> = g.by_index[EVENTS].iter().map(|(_, d)| d).collect();
    let mut by_kind: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for e in &evs {
        by_kind
            .entry(kind(e["tag"].as_str().unwrap()))
            .or_default()
            .push(e);
    }
    let kinds: Vec<&str> = by_kind.keys().copied().collect();
    assert_eq!(
        kinds,
        [
            "minion_start",
            "salt/auth",
            "salt/job/*/new",
            "salt/job/*/publish",
            "salt/job/*/ret/*",
            "salt/key",
            "salt/minion/*/start",
            "salt/run/*/new",
            "salt/run/*/ret"
        ],
        "every kind, and no other"
    );
    let stop = ["data.return", "data.arg", "data.fun_args", "data.tgt"];

    // salt/job/<jid>/new and /publish: the fixture run's events
    let real_events: Vec<Value> = fixture("publish_event.json")
        .into_iter()
        .chain(fixture("missing_minion_events.json"))
        .collect();
    let real = |suffix: &str| -> Vec<Value> {
        real_events
            .iter()
            .filter(|e| e["tag"].as_str().unwrap().ends_with(suffix))
            .cloned()
            .collect()
    };
    assert_same_deep("new", &real("/new"), &by_kind["salt/job/*/new"], &stop, &[]);
    // one real publish event (a list target): its tgt is the new event's, string or list
    assert_same_deep(
        "publish",
        &real("/publish"),
        &by_kind["salt/job/*/publish"],
        &stop,
        &["data.tgt"],
    );

    // ret: the master fires the minion's return load, then saves that same dict
    // as the job cache's `_return` load (salt.utils.job.store_job)
    let real_ret: Vec<Value> = fixture("job_cache.json")
        .into_iter()
        .filter(|d| d["load"]["cmd"] == "_return")
        .map(|d| serde_json::json!({"tag": "salt/job/x/ret/y", "data": d["load"]}))
        .collect();
    let rets = &by_kind["salt/job/*/ret/*"];
    // the real ones are test.ping's (`return: true`): a return is of any type
    assert_same_deep("ret", &real_ret, rets, &stop, &["data.out", "data.return"]);
    for e in rets {
        let d = &e["data"];
        let tag = e["tag"].as_str().unwrap();
        assert_eq!(
            tag,
            format!(
                "salt/job/{}/ret/{}",
                d["jid"].as_str().unwrap(),
                d["id"].as_str().unwrap()
            )
        );
        assert_eq!(
            d["success"] == true,
            d["retcode"] == 0,
            "success is retcode == 0\n{e}"
        );
        if let Some(out) = d.get("out") {
            let fun = d["fun"].as_str().unwrap();
            assert_eq!(
                out,
                if fun.starts_with("state.") {
                    "highstate"
                } else {
                    "nested"
                }
            );
        }
    }

    // runners: {fun, jid, user, fun_args, _stamp} fired as new, then with the return as ret
    let real_runner: Vec<Value> = fixture("runner_return.json");
    for (k, fun) in [
        ("salt/run/*/ret", "runner.jobs.list_jobs"),
        ("salt/run/*/ret", "runner.jobs.lookup_jid"),
    ] {
        let real: Vec<Value> = real_runner
            .iter()
            .filter(|d| d["fun"] == fun)
            .map(|d| serde_json::json!({"tag": "salt/run/x/ret", "data": d["data"]}))
            .collect();
        let gen: Vec<&Value> = by_kind[k]
            .iter()
            .copied()
            .filter(|e| e["data"]["fun"] == fun)
            .collect();
        assert_same_deep(fun, &real, &gen, &stop, &[]);
    }
    let real_new: Vec<Value> = real_runner
        .iter()
        .map(|d| {
            let mut data = d["data"].clone();
            for k in ["return", "success", "retcode"] {
                data.as_object_mut().unwrap().remove(k);
            }
            serde_json::json!({"tag": "salt/run/x/new", "data": data})
        })
        .collect();
    assert_same_deep(
        "runner new",
        &real_new,
        &by_kind["salt/run/*/new"],
        &stop,
        &[],
    );

    // the fleet's events: Salt 3008.5's fields, each one a field the real
    // event cache mapped, with the type it mapped it as
    let mapping = real_event_mapping();
    let fleet_fields: [(&str, &[&str]); 4] = [
        ("salt/auth", &["result", "act", "id", "pub", "_stamp"]),
        (
            "minion_start",
            &["id", "cmd", "pretag", "data", "tag", "_stamp", "ts"],
        ),
        (
            "salt/minion/*/start",
            &["id", "cmd", "pretag", "data", "tag", "_stamp", "ts"],
        ),
        ("salt/key", &["result", "act", "id", "pub", "_stamp"]),
    ];
    for (k, fields) in fleet_fields {
        let mut acts = BTreeSet::new();
        for e in &by_kind[k] {
            let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["data", "tag"], "{k}: {{tag, data}}");
            let d = e["data"].as_object().unwrap();
            let got: BTreeSet<&str> = d.keys().map(|k| k.as_str()).collect();
            let want: BTreeSet<&str> = fields
                .iter()
                .copied()
                .filter(|f| !(k == "salt/key" && *f == "pub" && e["data"]["act"] == "delete"))
                .collect();
            assert_eq!(got, want, "{k}: the fields Salt writes\n{e}");
            for (f, v) in d {
                if v.is_null() {
                    continue; // `pretag: None`: a dynamic mapping maps no field for null
                }
                let engine = mapping
                    .get(&format!("data.{f}"))
                    .unwrap_or_else(|| panic!("{k}: data.{f} is no field of the real event cache"));
                assert!(fits(engine, ty(v), v), "{k}: data.{f} = {v} is no {engine}");
            }
            if let Some(a) = d.get("act") {
                acts.insert(a.as_str().unwrap().to_string());
            }
            if let Some(p) = d.get("pub") {
                let p = p.as_str().unwrap();
                assert!(p.starts_with(
                    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"
                ));
                assert!(p.ends_with("IDAQAB\n-----END PUBLIC KEY-----\n"));
            }
            if k.contains("start") {
                let id = d["id"].as_str().unwrap();
                assert_eq!(d["tag"], e["tag"]);
                if k != "minion_start" {
                    assert_eq!(
                        e["tag"].as_str().unwrap(),
                        format!("salt/minion/{id}/start")
                    );
                }
                let text = d["data"].as_str().unwrap();
                let at = text
                    .strip_prefix(&format!("Minion {id} started at "))
                    .unwrap_or_else(|| panic!("{k}: data {text:?}"));
                let stamp = stamp_us(d["_stamp"].as_str().unwrap());
                let sent_s = d["ts"].as_i64().unwrap();
                assert!(
                    (0..=1).contains(&(stamp / 1_000_000 - sent_s)),
                    "ts is when it was sent"
                );
                assert_eq!(
                    at,
                    asctime(sent_s * 1_000_000),
                    "time.asctime() when it started"
                );
            }
        }
        match k {
            "salt/auth" => assert_eq!(acts, BTreeSet::from(["accept".into(), "pend".into()])),
            "salt/key" => assert_eq!(acts, BTreeSet::from(["accepted".into(), "delete".into()])),
            _ => {}
        }
    }
    // the tag is mapped too, and every _stamp is Python's isoformat() in UTC
    assert_eq!(mapping["tag"], "text");
    for e in &evs {
        let s = e["data"]["_stamp"].as_str().unwrap();
        assert!(is_iso_utc(s), "_stamp {s}");
    }
}

#[test]
fn every_job_has_its_events_and_every_return_its_ret_event() {
    let cfg = events_config(40_000);
    let plan = Plan::new(cfg.clone());
    let g = event_sample();
    let evs: Vec<&Value> = g.by_index[EVENTS].iter().map(|(_, d)| d).collect();
    assert!(evs.len() as u64 >= cfg.events, "at least --events");
    assert_eq!(evs.len() as u64, plan.event_docs(), "as planned");
    let first = cfg.end_us - (cfg.days * 86_400e6) as i64;
    for e in &evs {
        let t = stamp_us(e["data"]["_stamp"].as_str().unwrap());
        assert!(first <= t && t <= cfg.end_us, "{e} outside the span");
    }
    // per jid: tags
    let mut by_jid: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for e in &evs {
        let p: Vec<&str> = e["tag"].as_str().unwrap().split('/').collect();
        if p.len() >= 4 && (p[1] == "job" || p[1] == "run") {
            by_jid.entry(p[2].to_string()).or_default().push(e);
        }
    }
    // return documents by (jid, minion)
    let mut returns: BTreeMap<(String, String), Value> = BTreeMap::new();
    for (index, docs) in &g.by_index {
        if !index.contains("-master-") && !index.contains("runner_") {
            for (_, d) in docs {
                let key = (
                    d["jid"].as_str().unwrap().to_string(),
                    d["minion"].as_str().unwrap().to_string(),
                );
                returns.insert(key, d.clone());
            }
        }
    }
    let (mut failed, mut pings, mut compared) = (0, 0, 0);
    for job in plan.jobs.iter().chain(&plan.specials) {
        let jid = saltscope_core::time::jid(job.start_us);
        let tags: Vec<&str> = by_jid[&jid]
            .iter()
            .map(|e| e["tag"].as_str().unwrap())
            .collect();
        if job.fun.is_runner() {
            assert_eq!(tags.len(), 2, "{jid}: new and ret");
            continue;
        }
        let count = |suffix: &str| tags.iter().filter(|t| t.ends_with(suffix)).count();
        assert_eq!(
            (count("/new"), count("/publish")),
            (1, 1),
            "{jid}: one new, one publish"
        );
        let rets: Vec<&&Value> = by_jid[&jid]
            .iter()
            .filter(|e| e["tag"].as_str().unwrap().contains("/ret/"))
            .collect();
        assert_eq!(
            rets.len(),
            job.returning.len(),
            "{jid}: one ret per returning minion"
        );
        let new_stamp = stamp_us(
            by_jid[&jid]
                .iter()
                .find(|e| e["tag"].as_str().unwrap().ends_with("/new"))
                .unwrap()["data"]["_stamp"]
                .as_str()
                .unwrap(),
        );
        for e in rets {
            let d = &e["data"];
            let stamp = stamp_us(d["_stamp"].as_str().unwrap());
            assert!(
                stamp > new_stamp && stamp > jid_us(&jid),
                "{jid}: a return after the publish"
            );
            if d["success"] == false {
                failed += 1;
            }
            if d["fun"] == "test.ping" {
                assert_eq!(d["return"], true);
                pings += 1;
            }
            let key = (jid.clone(), d["id"].as_str().unwrap().to_string());
            if let Some(doc) = returns.get(&key) {
                // the same return: the document's data is the event's with dots rewritten
                assert_eq!(
                    mark_orig_keys(&doc["data"]),
                    convert_keys(&d["return"]),
                    "{jid} {}: data",
                    key.1
                );
                assert_eq!(
                    (&doc["retcode"], &doc["success"]),
                    (&d["retcode"], &d["success"])
                );
                let written = stamp_us(doc["@timestamp"].as_str().unwrap());
                assert!(
                    (1_000..=30_000).contains(&(written - stamp)),
                    "{jid}: the event is fired a few ms before the returner writes ({stamp} vs {written})"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(
        compared,
        returns.len(),
        "every return document has its ret event"
    );
    assert!(failed > 50, "failed returns are on the bus too: {failed}");
    assert!(
        pings > 0,
        "test.ping (blacklisted: no return document) has ret events"
    );
}

#[test]
fn many_events_share_a_millisecond_and_some_their_tag_too() {
    let g = event_sample();
    let mut by_ms: BTreeMap<i64, u64> = BTreeMap::new();
    let mut by_ms_tag: BTreeMap<(i64, String), u64> = BTreeMap::new();
    let evs = &g.by_index[EVENTS];
    for (_, e) in evs {
        let ms = stamp_us(e["data"]["_stamp"].as_str().unwrap()).div_euclid(1000);
        *by_ms.entry(ms).or_default() += 1;
        *by_ms_tag
            .entry((ms, e["tag"].as_str().unwrap().to_string()))
            .or_default() += 1;
    }
    let tied = |groups: &mut dyn Iterator<Item = &u64>| {
        groups.filter(|n| **n > 1).sum::<u64>() as f64 / evs.len() as f64
    };
    let ms_tied = tied(&mut by_ms.values());
    let tag_tied = tied(&mut by_ms_tag.values());
    let tied_tags: BTreeSet<&str> = by_ms_tag
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|((_, t), _)| kind(t))
        .collect();
    assert!(
        ms_tied > 0.10,
        "events sharing their ms with another: {ms_tied:.3}"
    );
    assert!(tag_tied > 0.05, "events sharing ms and tag: {tag_tied:.3}");
    assert!(tied_tags.contains("salt/auth"), "{tied_tags:?}");
    // microseconds differ: a sort on the full _stamp still orders them
    let mut stamps = BTreeSet::new();
    let dup = evs
        .iter()
        .filter(|(_, e)| {
            !stamps.insert((
                e["tag"].as_str().unwrap().to_string(),
                e["data"]["_stamp"].as_str().unwrap().to_string(),
            ))
        })
        .count();
    assert!(
        dup * 1000 < evs.len(),
        "(tag, µs stamp) is nearly unique: {dup}"
    );
}

#[test]
fn events_change_no_return_and_the_same_seed_makes_the_same_events() {
    let small = |events| Config {
        returns: 2_000,
        minions: 200,
        events,
        ..events_config(0)
    };
    let without = generate(small(0));
    let with = generate(small(8_000));
    for (index, docs) in &without.by_index {
        if index == EVENTS {
            // the `new` events are the same documents under the same ids
            let have: BTreeSet<String> = with.by_index[EVENTS]
                .iter()
                .map(|(id, d)| format!("{id:?} {d}"))
                .collect();
            for (id, d) in docs {
                assert!(
                    have.contains(&format!("{id:?} {d}")),
                    "new event changed: {d}"
                );
            }
        } else {
            assert_eq!(
                Some(docs),
                with.by_index.get(index),
                "{index} changed with --events"
            );
        }
    }
    let again = generate(small(8_000));
    assert_eq!(with.by_index[EVENTS], again.by_index[EVENTS]);
    // the event ids are uuid4s, unique
    let ids: BTreeSet<&str> = with.by_index[EVENTS]
        .iter()
        .map(|(id, _)| id.as_deref().unwrap())
        .collect();
    assert_eq!(ids.len(), with.by_index[EVENTS].len());
}

#[test]
fn a_few_events_asked_for_still_bring_every_kind_of_noise() {
    let cfg = Config {
        returns: 300,
        minions: 50,
        seed: 2,
        events: 1,
        ..Config::default()
    };
    let plan = Plan::new(cfg.clone());
    let g = generate(cfg);
    let kinds: BTreeSet<&str> = g.by_index[EVENTS]
        .iter()
        .map(|(_, e)| kind(e["tag"].as_str().unwrap()))
        .collect();
    for k in [
        "salt/auth",
        "minion_start",
        "salt/minion/*/start",
        "salt/key",
        "salt/job/*/ret/*",
    ] {
        assert!(kinds.contains(k), "{k} missing: {kinds:?}");
    }
    assert_eq!(g.by_index[EVENTS].len() as u64, plan.event_docs());
}
