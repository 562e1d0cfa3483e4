//! The job page read from its `_msearch` reply: one minion's odd return
//! never hides the others.

use proptest::collection::vec;
use proptest::prelude::*;
use saltscope_core::engine::{read_msearch, Reply};
use saltscope_core::model::{Outcome, ReturnData, ReturnDoc};
use saltscope_core::query::job::{
    job_searches, parse_job, parse_return, return_search, FirstOutput, MinionsShown,
};
use saltscope_core::query::QueryContext;
use serde_json::{json, Value};

use crate::gen::{nest, object, scalar};
use crate::msearch::{job_answers, reply_of, search_answer};

const JID: &str = "20261129170507123456";

fn ret(minion: &str, data: Value) -> Value {
    let mut hit = json!({"_index": "salt-state_apply-v1", "_id": format!("id-{minion}"), "_score": null,
           "_source": {"@timestamp": "2026-11-29T17:05:07.171524+00:00", "jid": JID, "minion": minion,
                       "fun": "state.apply", "success": true, "retcode": 0},
           "sort": [minion]});
    // Moved in: `json!` would copy it by serializing it, as deep as it is.
    hit["_source"]["data"] = data;
    hit
}

fn states() -> Value {
    json!({"test_|-a_|-a_|-nop": {"result": true, "changes": {}, "__run_num__": 0, "duration": 1.5}})
}

/// The job page's reply: its returns, the publish event naming every
/// minion, no return events, no job-cache load.
fn job_reply(returns: &[Value], minions: &[&str]) -> saltscope_core::engine::Reply {
    let none = json!({"hits": {"total": {"value": 0}, "hits": []}});
    reply_of(&[
        object([(
            "hits",
            object([
                ("total", json!({"value": returns.len(), "relation": "eq"})),
                ("hits", Value::Array(returns.to_vec())),
            ]),
        )]),
        json!({"hits": {"hits": [{"_source": {"tag": format!("salt/job/{JID}/new"),
            "data": {"fun": "state.apply", "minions": minions}}}]}}),
        none.clone(),
        none,
    ])
}

#[test]
fn a_minion_whose_return_is_nested_200_levels_deep_leaves_the_others_of_its_job_visible() {
    let minions = ["db-02", "deep-01", "web01.prod.example.com"];
    let returns = [
        ret(minions[0], states()),
        ret(minions[1], nest(200, json!("bottom"), true)),
        ret(minions[2], states()),
    ];
    let reply = job_reply(&returns, &minions);
    let answers = read_msearch(
        &job_searches(
            &QueryContext::at(0),
            JID,
            FirstOutput::First,
            MinionsShown::All,
        ),
        &reply,
    )
    .expect("the reply itself reads");
    let job = parse_job(JID, answers).expect("the job page shows");
    let shown: Vec<&str> = job.returns.iter().map(|r| r.minion.as_str()).collect();
    assert_eq!(shown, minions);
    assert!(job.missing.is_empty(), "{:?}", job.missing);
    // The page reads every minion without its data; the deep one's data
    // is read on its own, as raw text with a note, and the others' as states.
    assert!(job.returns.iter().all(|r| r.data == ReturnData::Unread));
    let data = |r: &Value, id: &str| {
        let one = return_search("salt-state_apply-v1", id);
        let reply = Reply {
            url: "http://h/es/_msearch".into(),
            body: format!(
                r#"{{"responses": [{{"hits": {{"hits": [{}]}}}}]}}"#,
                serde_json::to_string(r).unwrap()
            )
            .into_bytes(),
        };
        let answer = read_msearch(&one, &reply)
            .expect("the reply reads")
            .expect("the search answered");
        parse_return("salt-state_apply-v1", id, answer).expect("the return is there")
    };
    let read: Vec<ReturnDoc> = returns
        .iter()
        .zip(&job.returns)
        .map(|(r, s)| data(r, &s.id))
        .collect();
    let deep = &read[1];
    assert_eq!(deep.id, "id-deep-01");
    assert_eq!(deep.outcome(), Outcome::Succeeded);
    assert!(
        deep.notes
            .iter()
            .any(|n| n.contains("`data` is nested deeper than 128 levels: shown as raw text")),
        "{:?}",
        deep.notes
    );
    match &deep.data {
        ReturnData::Text(raw) => assert!(raw.starts_with(r#"{"k":{"k":"#), "{raw:.40}"),
        other => panic!("the deep data is not raw text: {other:?}"),
    }
    for other in [&read[0], &read[2]] {
        assert!(matches!(other.data, ReturnData::States(_)), "{other:?}");
        assert!(other.notes.is_empty(), "{:?}", other.notes);
    }
    assert_eq!(job.outcomes().0, 3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_return_nested_at_any_depth_leaves_every_minion_of_its_job_visible(
        depth in 0usize..400,
        objects in any::<bool>(),
        leaf in scalar(),
        which in 0usize..3,
    ) {
        let minions = ["a", "b", "c"];
        let returns: Vec<Value> = minions
            .iter()
            .enumerate()
            .map(|(i, m)| ret(m, if i == which { nest(depth, leaf.clone(), objects) } else { states() }))
            .collect();
        let reply = job_reply(&returns, &minions);
        let answers = read_msearch(&job_searches(&QueryContext::at(0), JID, FirstOutput::First, MinionsShown::All), &reply)
            .expect("the reply itself reads");
        let job = parse_job(JID, answers).expect("the job page shows");
        let shown: Vec<&str> = job.returns.iter().map(|r| r.minion.as_str()).collect();
        prop_assert_eq!(shown, minions);
        prop_assert!(job.missing.is_empty());
        for r in &job.returns {
            prop_assert_eq!(r.outcome(), Outcome::Succeeded);
            prop_assert_eq!(&r.data, &ReturnData::Unread);
        }
    }

    #[test]
    fn any_answers_make_a_job_page_or_its_error(items in vec(search_answer(), 0..5)) {
        let read = job_answers(&items);
        let returns_ok = read.returns.is_ok();
        let hits = read
            .returns
            .as_ref()
            .ok()
            .and_then(|a| a.pointer("/hits/hits"))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match parse_job(JID, read) {
            Ok(job) => {
                prop_assert_eq!(job.returns.len(), hits);
                prop_assert!(job.returns.windows(2).all(|w| w[0].minion <= w[1].minion));
                let _ = job.outcomes();
            }
            Err(_) => prop_assert!(!returns_ok),
        }
    }
}
