//! The big job shapes (`--states-per-return`, `--minions-per-job`,
//! `--output-bytes`) against the REAL returner documents in tests/fixtures/.

mod common;

use common::*;
use saltscope_gen::gen::{Config, Fun};
use serde_json::Value;
use std::collections::BTreeSet;

/// The one return of the special job `special`: its jid and document,
/// shaped field for field like the `real` ones and with a real envelope.
fn one_special_return(g: &Generated, special: &str, kind: &str, real: &[Value]) -> (String, Value) {
    let jid = g.special_jid(special);
    let (returns, _, _) = g.job(&jid);
    assert_eq!(returns.len(), 1, "{kind}: one return");
    assert_same_shape(kind, real, returns.as_slice());
    check_return_envelope(kind, &returns[0]);
    (jid, returns[0].clone())
}

/// The publish event and the job-cache document of a special job, against the real ones.
fn check_publish_docs(kind: &str, g: &Generated, jid: &str) -> Value {
    let (returns, events, cache) = g.job(jid);
    assert_eq!(events.len(), 1, "{kind}: one salt/job/<jid>/new event");
    assert_eq!(cache.len(), 1, "{kind}: one job-cache document");
    let e = &events[0];
    assert_eq!(
        e["tag"].as_str(),
        Some(format!("salt/job/{jid}/new").as_str())
    );
    assert_same_shape(
        "publish event",
        &fixture("publish_event.json"),
        std::slice::from_ref(e),
    );
    assert_same_shape(
        "publish event data",
        &fixture("publish_event.json")
            .iter()
            .map(|e| e["data"].clone())
            .collect::<Vec<_>>(),
        std::slice::from_ref(&e["data"]),
    );
    let (id, c) = &cache[0];
    assert_eq!(id.as_deref(), Some(jid), "job-cache id = jid");
    assert_eq!(c["load"]["cmd"], "publish");
    let real_cache = fixture("job_cache.json");
    let real_publish: Vec<Value> = real_cache
        .iter()
        .filter(|d| d["load"]["cmd"] == "publish")
        .cloned()
        .collect();
    assert_same_shape("job cache doc", &real_cache, std::slice::from_ref(c));
    assert_same_shape(
        "publish load",
        &real_publish
            .iter()
            .map(|d| d["load"].clone())
            .collect::<Vec<_>>(),
        std::slice::from_ref(&c["load"]),
    );
    assert_eq!(c["load"]["tgt"], e["data"]["tgt"]);
    assert_eq!(c["load"]["fun"], e["data"]["fun"]);
    // the returns come from targeted minions only
    let targeted: BTreeSet<&str> = e["data"]["minions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    for d in &returns {
        assert!(targeted.contains(d["minion"].as_str().unwrap()));
        assert_eq!(d["fun"], e["data"]["fun"]);
    }
    e.clone()
}

fn big_states(n: usize, states_count: bool) -> Generated {
    generate(Config {
        returns: 0,
        minions: 300,
        seed: 7,
        states_per_return: n,
        states_count,
        ..Config::default()
    })
}

#[test]
fn a_return_with_ten_thousand_states_is_shaped_like_the_real_state_returns() {
    let n = 10_000;
    let g = big_states(n, true);
    let jid = g.special_jid("states");
    let (returns, _, _) = g.job(&jid);
    assert_eq!(returns.len(), 1, "one return, of one minion");
    let d = &returns[0];
    assert_eq!(
        g.docs("saltgen-state_apply").len(),
        1,
        "only it: --returns 0"
    );
    assert_same_shape("big state return", &real_state_docs(), returns.as_slice());
    check_return_envelope("big state return", d);
    check_keys("big state return", &d["data"]);
    check_orig_key_present("big state return", d);
    assert_eq!(d["minion"], g.specials["states"]["minion"]);

    let real = RealStates::new();
    let mut seen = BTreeSet::new();
    let sts = states(d);
    assert_eq!(sts.len(), n, "exactly --states-per-return states");
    let mut run_nums: Vec<i64> = Vec::new();
    let (mut modules, mut sls) = (BTreeSet::new(), BTreeSet::new());
    let (mut ok, mut failed, mut nulls) = (0i64, 0i64, 0i64);
    let (mut diffs, mut req_failed, mut not_run, mut changed) = (0, 0, 0, 0);
    for (key, st) in &sts {
        real.check("big state return", key, st, &mut seen);
        run_nums.push(st["__run_num__"].as_i64().unwrap());
        modules.insert(key.split("_|-").next().unwrap().to_string());
        sls.insert(st["__sls__"].as_str().unwrap().to_string());
        match &st["result"] {
            Value::Bool(true) => ok += 1,
            Value::Bool(false) => failed += 1,
            Value::Null => nulls += 1,
            other => panic!("result {other}"),
        }
        if let Some(diff) = st["changes"].get("diff").and_then(|x| x.as_str()) {
            assert!(
                diff.starts_with("--- \n+++ \n@@ "),
                "unified diff: {diff:?}"
            );
            diffs += 1;
        }
        if st["changes"].as_object().is_some_and(|c| !c.is_empty()) {
            changed += 1;
        }
        if st["__state_ran__"] == false {
            not_run += 1;
        }
        if st["comment"]
            .as_str()
            .unwrap()
            .starts_with("One or more requisite failed: ")
        {
            assert_eq!(st["result"], false);
            req_failed += 1;
        }
    }
    run_nums.sort();
    assert_eq!(
        run_nums,
        (0..n as i64).collect::<Vec<_>>(),
        "__run_num__ is 0..N-1 without gaps"
    );
    assert!(
        modules.len() >= 5
            && ["file", "pkg", "service", "cmd", "test"]
                .iter()
                .all(|m| modules.contains(*m)),
        "modules {modules:?}"
    );
    assert!((24..=48).contains(&sls.len()), "{} SLS", sls.len());
    assert!(ok > n as i64 * 9 / 10, "mostly true: {ok}");
    assert!(failed > 0 && nulls > 0 && req_failed > 0 && not_run > 0);
    assert!(diffs > 0 && changed > diffs);
    assert!(seen.contains("warnings") && seen.contains("skip_watch"));
    // states_count on: counts as the returner writes them; retcode 2 when any failed
    let counted: Vec<Value> = fixture("salt_call_state_layouts.json")
        .into_iter()
        .filter(|d| d["counts"].as_object().is_some_and(|c| !c.is_empty()))
        .collect();
    assert_eq!(
        shape([&d["counts"]]),
        shape(counted.iter().map(|d| &d["counts"]))
    );
    assert_eq!(d["counts"]["failed"].as_i64(), Some(failed));
    assert_eq!(
        d["counts"]["succeeded"].as_i64(),
        Some(ok + nulls),
        "null results count as succeeded"
    );
    assert_eq!(
        (d["retcode"].as_i64(), d["success"].as_bool()),
        (Some(2), Some(false))
    );
    // One pkg.installed fails quoting all dpkg printed: the marker names it.
    let long = &g.specials["states"]["long_comment"];
    let long_state = &d["data"][long["state"].as_str().unwrap()];
    let comment = long_state["comment"].as_str().unwrap();
    assert_eq!(comment.len() as u64, long["bytes"].as_u64().unwrap());
    assert!(comment.len() > 64 * 1024, "past the page's fold");
    assert!(comment.starts_with("An error was encountered while installing package(s)"));
    assert!(comment.ends_with("E: Sub-process /usr/bin/dpkg returned an error code (1)"));
    assert_eq!(
        (&long_state["result"], &long_state["__id__"]),
        (&Value::Bool(false), &long["id"])
    );
    let long_comments = sts
        .iter()
        .filter(|(_, st)| st["comment"].as_str().unwrap().len() > 1000)
        .count();
    assert_eq!(long_comments, 1, "the one long comment");
    // One cmd.run is named by its inline script, many lines long.
    let script = &g.specials["states"]["script"];
    let script_state = &d["data"][script["state"].as_str().unwrap()];
    let name = script_state["name"].as_str().unwrap();
    assert!(name.len() > 120 && name.lines().count() > 3, "{name:?}");
    assert_eq!(
        (&script_state["name"], &script_state["__id__"]),
        (&script["name"], &script["id"])
    );
    check_publish_docs("big state return", &g, &jid);
}

#[test]
fn any_number_of_states_is_honoured_exactly() {
    for n in [1, 2, 37, 1_000] {
        let g = big_states(n, false);
        let (returns, _, _) = g.job(&g.special_jid("states"));
        let sts = states(&returns[0]);
        assert_eq!(sts.len(), n);
        let mut run_nums: Vec<i64> = sts
            .iter()
            .map(|(_, st)| st["__run_num__"].as_i64().unwrap())
            .collect();
        run_nums.sort();
        assert_eq!(run_nums, (0..n as i64).collect::<Vec<_>>());
        assert_eq!(
            returns[0]["counts"],
            serde_json::json!({}),
            "states_count off"
        );
        let any_false = sts.iter().any(|(_, st)| st["result"] == false);
        assert_eq!(
            returns[0]["retcode"].as_i64(),
            Some(if any_false { 2 } else { 0 })
        );
        check_orig_key_present("small state return", &returns[0]);
    }
}

#[test]
fn a_job_on_n_minions_has_n_returns_one_publish_event_and_one_job_cache_document() {
    // a fleet smaller than the job: it grows, and the job targets '*'
    // a fleet bigger than the job: the job targets a list
    for (fleet, n, tgt_type) in [(300, 1_000, "glob"), (3_000, 500, "list")] {
        let g = generate(Config {
            returns: 2_000,
            minions: fleet,
            seed: 5,
            minions_per_job: n,
            ..Config::default()
        });
        for (name, real) in [
            ("wide_state_apply", real_state_docs()),
            ("wide_test_version", fixture("test_version.json")),
        ] {
            let jid = g.special_jid(name);
            let (returns, _, _) = g.job(&jid);
            assert_eq!(
                returns.len(),
                n,
                "{name}: exactly --minions-per-job returns"
            );
            let minions: BTreeSet<&str> = returns
                .iter()
                .map(|d| d["minion"].as_str().unwrap())
                .collect();
            assert_eq!(minions.len(), n, "{name}: one return per minion");
            assert_same_shape(name, &real, &returns);
            for d in &returns {
                check_return_envelope(name, d);
                check_keys(name, &d["data"]);
            }
            let e = check_publish_docs(name, &g, &jid);
            let targeted = e["data"]["minions"].as_array().unwrap().len();
            assert!(targeted > n, "{name}: some targeted minions never return");
            assert!(
                targeted - n <= n / 50 + 10,
                "{name}: only a few never return"
            );
            assert_eq!(e["data"]["tgt_type"], tgt_type);
            if tgt_type == "glob" {
                assert_eq!(e["data"]["tgt"], "*");
            } else {
                assert_eq!(e["data"]["tgt"], e["data"]["minions"]);
            }
            assert_eq!(g.specials[name]["returns"], n);
            assert_eq!(g.specials[name]["missing"], targeted - n);
        }
        // the state.apply job fails on some minions, as a real rollout does
        let (returns, _, _) = g.job(&g.special_jid("wide_state_apply"));
        assert!(returns.iter().any(|d| d["retcode"] == 2));
        assert!(returns.iter().any(|d| d["retcode"] == 0));
    }
}

#[test]
fn output_bytes_makes_a_command_output_a_diff_and_structured_returns_of_n_bytes() {
    for n in [1_024, 200_000] {
        let g = generate(Config {
            returns: 0,
            minions: 100,
            seed: 9,
            output_bytes: n,
            ..Config::default()
        });
        let (jid, d) = one_special_return(
            &g,
            "output_cmd_run",
            "big cmd.run",
            &fixture("cmd_run.json"),
        );
        let out = d["data"].as_str().unwrap();
        assert_eq!(out.len(), n, "output of exactly --output-bytes");
        assert!(out.lines().count() > n / 200, "multi-line");
        assert_eq!(
            (d["fun"].as_str(), d["retcode"].as_i64()),
            (Some("cmd.run"), Some(0))
        );
        let e = check_publish_docs("big cmd.run", &g, &jid);
        assert!(e["data"]["arg"][0]
            .as_str()
            .unwrap()
            .starts_with("journalctl "));

        let (jid, d) = one_special_return(&g, "output_diff", "big diff", &real_state_docs());
        check_orig_key_present("big diff", &d);
        let real = RealStates::new();
        let mut seen = BTreeSet::new();
        let key = g.specials["output_diff"]["state"].as_str().unwrap();
        for (k, st) in states(&d) {
            real.check("big diff", k, st, &mut seen);
            let diff = st["changes"].get("diff").and_then(|x| x.as_str());
            if k == key {
                let diff = diff.unwrap();
                assert_eq!(diff.len(), n, "a diff of exactly --output-bytes");
                assert!(diff.starts_with("--- \n+++ \n@@ -1,7 +1,7 @@\n"));
                assert_eq!(st["result"], true);
            } else {
                assert!(diff.is_none_or(|x| x.len() < 1_000));
            }
        }
        check_publish_docs("big diff", &g, &jid);

        // Structured returns, as real Salt writes them (tests/fixtures/structured_returns.json).
        let real = fixture("structured_returns.json");
        let real_of = |fun: &str| -> Vec<Value> {
            real.iter().filter(|d| d["fun"] == fun).cloned().collect()
        };
        let want = real_of("cmd.run_all");
        let (jid, d) = one_special_return(&g, "output_cmd_run_all", "big cmd.run_all", &want);
        let keys = |v: &Value| -> Vec<(String, &'static str)> {
            let o = v.as_object().unwrap();
            o.iter().map(|(k, v)| (k.clone(), ty(v))).collect()
        };
        assert_eq!(
            keys(&d["data"]),
            keys(&want[0]["data"]),
            "cmd.run_all's data as Salt's"
        );
        assert_eq!(d["data"]["stdout"].as_str().unwrap().len(), n);
        check_publish_docs("big cmd.run_all", &g, &jid);

        let (jid, d) = one_special_return(
            &g,
            "output_file_find",
            "big file.find",
            &real_of("file.find"),
        );
        let paths: Vec<&str> = d["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        let bytes: usize = paths.iter().map(|p| p.len()).sum();
        assert!(
            bytes <= n && bytes + 80 > n,
            "paths of about --output-bytes: {bytes}"
        );
        assert_eq!(
            paths.len() as u64,
            g.specials["output_file_find"]["entries"].as_u64().unwrap()
        );
        assert!(
            paths.iter().all(|p| p.starts_with("/srv/www"))
                && paths.windows(2).all(|w| w[0] < w[1])
        );
        check_publish_docs("big file.find", &g, &jid);
    }
}

#[test]
fn special_jobs_have_fixed_jids_six_hours_before_the_end() {
    let cfg = Config {
        returns: 5_000,
        minions: 200,
        seed: 42,
        states_per_return: 50,
        minions_per_job: 300,
        output_bytes: 2_000,
        // 2026-12-01T00:00:30.5: rounded down to the minute
        end_us: saltscope_core::time::parse_end("2026-12-01T00:00:30.500000").unwrap(),
        ..Config::default()
    };
    let g = generate(cfg.clone());
    let want = [
        ("states", "20261130180000004201"),
        ("wide_state_apply", "20261130181000004202"),
        ("wide_test_version", "20261130182000004203"),
        ("output_cmd_run", "20261130183000004204"),
        ("output_diff", "20261130184000004205"),
        ("output_cmd_run_all", "20261130185000004206"),
        ("output_file_find", "20261130190000004207"),
    ];
    assert_eq!(g.specials.as_object().unwrap().len(), want.len());
    for (name, jid) in want {
        assert_eq!(g.special_jid(name), jid, "{name}");
        let (returns, _, _) = g.job(jid);
        assert_eq!(
            returns.len() as u64,
            g.specials[name]["returns"].as_u64().unwrap(),
            "{name}: no normal job shares the jid"
        );
    }
    // same seed, same documents, special jobs included
    assert_eq!(generate(cfg).by_index, g.by_index);
    // only what is asked for
    let only = generate(Config {
        minions_per_job: 100,
        wide_funs: vec![Fun::TestVersion],
        returns: 0,
        ..Config::default()
    });
    assert_eq!(
        only.specials
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["wide_test_version"]
    );
    assert_eq!(only.docs("saltgen-test_version").len(), 100);
    assert!(only.docs("saltgen-state_apply").is_empty());
}
