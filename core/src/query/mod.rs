//! One module per view: the requests it sends and the parsing of what comes
//! back into the view's model.

pub mod audit;
mod fields;
pub mod filter;
pub mod functions;
pub mod histogram;
pub mod job;
pub mod jobs;
pub mod minions;

pub use fields::FieldMap;

use serde_json::{json, Value};

use crate::config::AppConfig;

/// The filter every return query starts from: documents that are returns
/// (they have a minion; job-cache `{jid, load}` and event `{tag, data}`
/// documents do not), outside the job-cache and event indices that `salt-*`
/// also matches.
pub(crate) fn returns_filter(config: &AppConfig) -> (Vec<Value>, Vec<Value>) {
    let filter = vec![json!({"exists": {"field": "minion"}})];
    let must_not = config
        .non_return_indices()
        .iter()
        .map(|pattern| {
            // `_index` holds the concrete index (`…-v1` behind the alias).
            let p = pattern.trim_end_matches('*');
            json!({"prefix": {"_index": p}})
        })
        .collect();
    (filter, must_not)
}

pub(crate) fn hits(answer: &Value) -> &[Value] {
    answer
        .pointer("/hits/hits")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub(crate) fn total_hits(answer: &Value) -> Option<u64> {
    answer.pointer("/hits/total").and_then(total_value)
}

/// `hits.total` itself: a number (Elasticsearch 6) or `{value, relation}`.
pub(crate) fn total_value(total: &Value) -> Option<u64> {
    match total {
        Value::Number(n) => n.as_u64(),
        t => t.get("value").and_then(Value::as_u64),
    }
}
