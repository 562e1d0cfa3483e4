//! State returns against the REAL state returns in tests/fixtures/: every
//! state's fields and types, keys, requisites, retcodes and counts.

mod common;

use common::*;
use saltscope_gen::gen::Config;
use serde_json::Value;
use std::collections::BTreeSet;

#[test]
fn state_results_match_the_real_states() {
    let g = sample();
    let real = RealStates::new();
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
                real.check(index, key, st, &mut seen_fields);
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
