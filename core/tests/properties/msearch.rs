//! `_msearch` replies: the whole body, and each search's answer on its own.

use proptest::collection::vec;
use proptest::prelude::*;
use saltscope_core::engine::{read_msearch, Reply, SearchAnswer};
use saltscope_core::query::job::{job_searches, FirstOutput, JobAnswers, MinionsShown};
use saltscope_core::query::QueryContext;
use serde_json::{json, Value};

use crate::gen::{
    data, deep, hit_around, json, mutate, object, odd, return_hit, return_source, text,
};

pub fn reply(body: Vec<u8>) -> Reply {
    Reply {
        url: "http://h/es/_msearch".into(),
        body,
    }
}

pub fn reply_of(responses: &[Value]) -> Reply {
    let body = object([("responses", Value::Array(responses.to_vec()))]);
    reply(serde_json::to_vec(&body).expect("a Value serializes"))
}

/// The job page's answers to `responses`.
pub fn job_answers(responses: &[Value]) -> JobAnswers {
    read_msearch(
        &job_searches(
            &QueryContext::at(0),
            "1",
            FirstOutput::First,
            MinionsShown::All,
        ),
        &reply_of(responses),
    )
    .expect("a responses array is an _msearch reply")
}

/// A search's answer as the engine may give it: hits (some odd, some
/// nested past the JSON reader's limit), an item error, failed shards, or
/// anything.
pub fn search_answer() -> BoxedStrategy<Value> {
    answer_around(return_hit().boxed(), odd().boxed())
}

/// The same, nested no deeper than the JSON reader reads.
pub fn shallow_search_answer() -> BoxedStrategy<Value> {
    answer_around(hit_around(return_source(data())).boxed(), json().boxed())
}

fn answer_around(hit: BoxedStrategy<Value>, any: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    let hits = vec(prop_oneof![4 => hit, 1 => any.clone()], 0..5);
    prop_oneof![
        4 => (hits, prop_oneof![json(), (0u64..20).prop_map(|n| json!({"value": n, "relation": "eq"}))])
            .prop_map(|(hits, total)| object([("hits", object([("total", total), ("hits", Value::Array(hits))]))])),
        1 => (text(), 0u64..1000).prop_map(|(reason, status)| json!({"error": {"type": "x", "reason": reason}, "status": status})),
        1 => (0u64..5, text()).prop_map(|(failed, reason)| json!({"_shards": {"total": 5, "failed": failed,
            "failures": [{"reason": {"type": "query_shard_exception", "reason": reason}}]}, "hits": {"hits": []}})),
        1 => any,
    ]
    .boxed()
}

fn answers(a: &JobAnswers) -> [&SearchAnswer; 4] {
    [&a.returns, &a.publish_event, &a.job_events, &a.job_cache]
}

/// Whether the engine's answer `item` is a search's own error.
fn is_error(item: &Value) -> bool {
    item.get("error").is_some()
        || item
            .pointer("/_shards/failed")
            .and_then(Value::as_u64)
            .is_some_and(|f| f > 0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_bytes_are_an_msearch_reply_or_an_error(body in prop_oneof![
        vec(any::<u8>(), 0..200),
        json().prop_map(|v| serde_json::to_vec(&v).expect("serializes")),
    ]) {
        let _ = read_msearch(&job_searches(&QueryContext::at(0), "1", FirstOutput::First, MinionsShown::All), &reply(body));
    }

    #[test]
    fn a_nearly_valid_reply_is_read_or_refused_without_panicking(
        body in vec(search_answer(), 0..5)
            .prop_map(|r| serde_json::to_vec(&object([("responses", Value::Array(r))])).expect("serializes"))
            .prop_flat_map(mutate),
    ) {
        let _ = read_msearch(&job_searches(&QueryContext::at(0), "1", FirstOutput::First, MinionsShown::All), &reply(body));
    }

    #[test]
    fn each_search_gets_its_own_answer_or_its_own_error(items in vec(shallow_search_answer(), 0..6)) {
        let read = job_answers(&items);
        // What the engine said, as read back from the same bytes.
        let items: Vec<Value> = serde_json::from_slice::<Value>(&reply_of(&items).body)
            .expect("it was JSON")["responses"]
            .as_array()
            .expect("responses")
            .clone();
        for (i, answer) in answers(&read).into_iter().enumerate() {
            match items.get(i) {
                None => prop_assert!(answer.is_err(), "answer {i} has no item"),
                Some(item) if is_error(item) => prop_assert!(answer.is_err(), "item {i}: {item}"),
                Some(item) => prop_assert_eq!(answer.as_ref().ok(), Some(item), "item {}", i),
            }
        }
    }

    #[test]
    fn one_answer_nested_too_deep_to_read_leaves_the_others_as_they_were(
        items in vec(shallow_search_answer(), 4..5),
        which in 0usize..4,
        deep_one in deep(),
    ) {
        let mut items = items;
        items[which] = deep_one;
        let read = job_answers(&items);
        for (i, answer) in answers(&read).into_iter().enumerate() {
            if i != which && !is_error(&items[i]) {
                prop_assert!(answer.is_ok(), "item {i}: {:?}", answer);
            }
        }
    }
}
