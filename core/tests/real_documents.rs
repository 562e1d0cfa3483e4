//! The core against documents real Salt wrote through the real returner
//! (`tests/fixtures/`, made by `scripts/salt-data.sh --fixtures`; its README
//! says how). Where these disagree with the returner's description, these win.

use saltscope_core::model::{
    HighstateSummary, Outcome, PublishInfo, ReturnData, ReturnDoc, StateResult, StateTally,
};
use serde_json::Value;

fn fixture(name: &str) -> Vec<Value> {
    let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn returns(name: &str) -> Vec<ReturnDoc> {
    fixture(name).iter().map(ReturnDoc::from_hit).collect()
}

fn states(doc: &ReturnDoc) -> &[saltscope_core::model::StateRun] {
    match &doc.data {
        ReturnData::States(s) => &s.runs,
        other => panic!("{} has no states: {other:?}", doc.minion),
    }
}

#[test]
fn a_multi_minion_state_apply_reads_every_state_in_run_order_without_notes() {
    let docs = returns("state_apply_multi.json");
    assert_eq!(docs.len(), 4);
    for doc in &docs {
        assert!(doc.notes.is_empty(), "{}: {:?}", doc.minion, doc.notes);
        let runs = states(doc);
        let nums: Vec<u64> = runs.iter().map(|r| r.run_num.unwrap()).collect();
        assert!(
            nums.windows(2).all(|w| w[0] < w[1]),
            "{}: {nums:?}",
            doc.minion
        );
        // Every entry of `data` with a result is a state; `_orig_key` is not.
        let in_doc = doc.source["data"]
            .as_object()
            .unwrap()
            .values()
            .filter(|v| v.get("result").is_some())
            .count();
        assert_eq!(runs.len(), in_doc);
        let failed = HighstateSummary::of(runs).failed;
        assert_eq!(
            failed > 0,
            doc.outcome() == Outcome::Failed,
            "{}",
            doc.minion
        );
    }
}

#[test]
fn dotted_state_ids_and_file_paths_come_back_from_the_state_fields() {
    let doc = &returns("state_apply_multi.json")[0];
    let runs = states(doc);
    let conf = runs
        .iter()
        .find(|r| r.id == "/tmp/saltscope/app.conf")
        .expect("the dotted file state");
    assert_eq!(conf.function, "file.managed");
    assert!(
        conf.key.contains("/tmp/saltscope/app_conf"),
        "the key itself lost the dot: {}",
        conf.key
    );
    assert!(runs.iter().any(|r| r.id == "pkg.check.openssl.libs"));
}

#[test]
fn comments_keep_markup_tabs_and_newlines_as_text() {
    let docs = returns("state_apply_multi.json");
    let runs = states(&docs[0]);
    let xss = runs.iter().find(|r| r.id == "xss.comment.script").unwrap();
    assert!(xss
        .comment
        .starts_with("Checked <script>alert(1)</script> and <img src=x onerror=alert(1)> on "));
    let multi = runs.iter().find(|r| r.id == "multiline.comment").unwrap();
    assert!(multi.comment.contains("\n\tsecond line"));
}

#[test]
fn the_failed_minion_has_a_failed_requisite_that_did_not_run() {
    let docs = returns("state_apply_multi.json");
    let db = docs.iter().find(|d| d.minion == "db-02").unwrap();
    assert_eq!(db.outcome(), Outcome::Failed);
    let runs = states(db);
    assert!(runs
        .iter()
        .any(|r| r.result == StateResult::False && r.comment.contains("requisite")));
}

#[test]
fn test_mode_results_are_none_and_summarised_as_unchanged() {
    for doc in returns("state_apply_test.json") {
        let summary = HighstateSummary::of(states(&doc));
        assert!(summary.unchanged > 0, "{}", doc.minion);
        assert!(
            summary.succeeded_line().contains("unchanged="),
            "{}",
            summary.succeeded_line()
        );
    }
}

#[test]
fn a_partial_order_prefix_does_not_change_the_run_order() {
    let docs = returns("ordered_partial_prefix.json");
    assert!(!docs.is_empty());
    for doc in &docs {
        let runs = states(doc);
        let prefixed = runs
            .iter()
            .filter(|r| {
                saltscope_core::model::decode_state_key(&r.key)
                    .unwrap()
                    .order_prefix
                    .is_some()
            })
            .count();
        assert!(
            prefixed > 0 && prefixed < runs.len(),
            "this fixture mixes prefixed and plain keys"
        );
        let nums: Vec<u64> = runs.iter().map(|r| r.run_num.unwrap()).collect();
        assert_eq!(nums, (0..runs.len() as u64).collect::<Vec<_>>());
        assert!(runs
            .iter()
            .all(|r| !r.id.is_empty() && r.function.contains('.')));
    }
}

#[test]
fn the_returners_own_counts_agree_with_the_summary() {
    let mut checked = 0;
    for doc in returns("salt_call_state_layouts.json")
        .iter()
        .chain(returns("ordered_partial_prefix.json").iter())
    {
        if let (Some((succeeded, failed)), ReturnData::States(s)) = (doc.counts, &doc.data) {
            let summary = HighstateSummary::of(&s.runs);
            assert_eq!(
                (summary.succeeded, summary.failed),
                (succeeded, failed),
                "{} {}",
                doc.index,
                doc.jid
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no document with counts");
}

#[test]
fn a_render_error_is_shown_as_the_rendering_message() {
    for doc in returns("render_error.json") {
        let ReturnData::StateError(lines) = &doc.data else {
            panic!("{:?}", doc.data)
        };
        assert!(
            lines[0].starts_with("Rendering SLS 'base:broken' failed"),
            "{lines:?}"
        );
        assert_eq!(doc.outcome(), Outcome::Failed);
    }
}

#[test]
fn non_state_returns_keep_their_shape() {
    let cmd = returns("cmd_run.json");
    let db = cmd.iter().find(|d| d.minion == "db-02").unwrap();
    assert_eq!((db.retcode, db.outcome()), (Some(7), Outcome::Failed));
    assert!(matches!(db.data, ReturnData::Text(_)));
    let retcode = &returns("test_retcode.json")[0];
    assert_eq!(
        (retcode.outcome(), &retcode.data),
        (Outcome::Failed, &ReturnData::Text("true".into()))
    );
    assert!(returns("grains_item.json")
        .iter()
        .all(|d| matches!(d.data, ReturnData::Structured(_))));
    assert!(returns("state_single.json")
        .iter()
        .all(|d| matches!(d.data, ReturnData::States(_))));
}

#[test]
fn runners_fail_by_their_own_data_success_not_the_returners_field() {
    let docs = returns("runner_return.json");
    let outcomes: Vec<(&str, Outcome)> =
        docs.iter().map(|d| (d.fun.as_str(), d.outcome())).collect();
    // jobs.list_jobs raised (the returner has no get_jids); jobs.lookup_jid
    // ran. The returner wrote success: false on both.
    assert_eq!(
        outcomes,
        [
            ("runner.jobs.list_jobs", Outcome::Failed),
            ("runner.jobs.lookup_jid", Outcome::Runner)
        ]
    );
    assert!(docs.iter().all(|d| d.success == Some(false)));
}

#[test]
fn the_publish_event_and_job_cache_load_give_target_user_and_minions() {
    let events: Vec<PublishInfo> = fixture("publish_event.json")
        .iter()
        .filter_map(|h| PublishInfo::from_event(&h["_source"]))
        .collect();
    assert!(!events.is_empty());
    let multi = &events[0];
    assert_eq!(multi.fun.as_deref(), Some("state.apply"));
    assert_eq!(multi.args, ["saltscope"]);
    assert_eq!(
        multi.target.as_deref(),
        Some("web01.prod.example.com,web02.prod.example.com,db-02,cache-03.example.org")
    );
    assert_eq!(multi.minions.as_ref().map(Vec::len), Some(4));
    assert!(events.iter().all(|e| e.user.is_some()));
    let cached: Vec<PublishInfo> = fixture("job_cache.json")
        .iter()
        .filter_map(|h| PublishInfo::from_job_cache(&h["_source"]))
        .collect();
    assert!(!cached.is_empty());
    assert!(cached.iter().all(|c| c.fun.is_some()));
}

#[test]
fn the_exports_state_tally_counts_every_real_return_as_the_model_does() {
    let mut tallied = 0;
    let names = std::fs::read_dir(format!("{}/../tests/fixtures", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json"));
    for name in names {
        let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        let Ok(Value::Array(hits)) = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        else {
            continue;
        };
        for hit in hits.iter().filter(|h| h.pointer("/_source/data").is_some()) {
            let doc = ReturnDoc::from_hit(hit);
            let model = match &doc.data {
                ReturnData::States(s) => Some(HighstateSummary::of(&s.runs)),
                _ => None,
            };
            let text = serde_json::to_string(&hit["_source"]["data"]).unwrap();
            let tally: StateTally = serde_json::from_str(&text).unwrap();
            // Sums of durations in another order differ in the last bits.
            let round = |s: Option<HighstateSummary>| {
                s.map(|s| HighstateSummary {
                    total_ms: (s.total_ms * 1e6).round(),
                    ..s
                })
            };
            assert_eq!(round(tally.0), round(model), "{name} {}", hit["_id"]);
            tallied += usize::from(model.is_some());
        }
    }
    assert!(
        tallied >= 10,
        "only {tallied} state returns among the fixtures"
    );
}
