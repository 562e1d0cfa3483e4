//! One module per view: the searches it sends and the parsing of what comes
//! back into the view's model. The conversations themselves — which
//! searches, in how many round trips — are in [`crate::views`].

pub mod audit;
pub mod compare;
pub mod drift;
pub mod events;
pub mod failures;
mod fields;
pub mod filter;
pub mod fleet;
pub mod functions;
pub mod histogram;
pub mod job;
pub mod jobs;
pub mod minions;
pub mod named;
pub mod scan;
pub mod sls;
pub mod summary;
pub mod tail;
pub(crate) mod template;
pub mod timeline;

pub use fields::FieldMap;

use crate::json::At;
use serde_json::{json, Value};

use crate::config::AppConfig;

/// What every view's searches are built from: the operator's config, how the
/// engine maps Salt's fields, the functions this person hides as noise, and
/// "now" for relative time ranges.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryContext {
    pub config: AppConfig,
    pub fields: FieldMap,
    /// Function globs hidden unless a filter shows noise.
    pub noisy: Vec<String>,
    /// Epoch milliseconds.
    pub now_ms: i64,
}

impl QueryContext {
    /// The defaults (dynamic mappings, config.json's defaults) at `now_ms`:
    /// for tests and tools.
    pub fn at(now_ms: i64) -> QueryContext {
        let config = AppConfig::default();
        QueryContext {
            noisy: config.noisy_functions.clone(),
            config,
            fields: FieldMap::default(),
            now_ms,
        }
    }

    /// Why a view may find nothing: Salt's fields are not in the mapping.
    pub fn mapping_notes(&self) -> Vec<String> {
        let missing = self.fields.returns_unmapped();
        if missing.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "the indices matching `{}` have no field {}: no Salt return has been indexed there yet",
            self.config.index_pattern,
            missing
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )]
    }
}

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

/// A composite aggregation's page of minions by id, after `after`: one
/// more than `page` asked, which tells whether another page exists.
pub(crate) fn minion_composite(field: &str, page: usize, after: Option<&str>) -> Value {
    let mut composite = json!({
        "size": page + 1,
        "sources": [{"minion": {"terms": {"field": field}}}]
    });
    if let Some(after) = after {
        composite["after"] = json!({ "minion": after });
    }
    composite
}

/// The buckets of the aggregation `name`.
pub(crate) fn buckets<'a>(answer: &'a Value, name: &str) -> &'a [Value] {
    answer
        .get("aggregations")
        .and_then(|a| a.get(name))
        .and_then(|a| a.get("buckets"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

pub(crate) fn hits(answer: &Value) -> &[Value] {
    answer
        .at("/hits/hits")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The first hit, taken out of the answer rather than copied (a return
/// can be megabytes).
pub(crate) fn first_hit(mut answer: Value) -> Option<Value> {
    answer.pointer_mut("/hits/hits/0").map(Value::take)
}

pub(crate) fn total_hits(answer: &Value) -> Option<u64> {
    answer.at("/hits/total").and_then(total_value)
}

/// `hits.total` itself: a number (Elasticsearch 6) or `{value, relation}`.
pub(crate) fn total_value(total: &Value) -> Option<u64> {
    match total {
        Value::Number(n) => n.as_u64(),
        t => t.get("value").and_then(Value::as_u64),
    }
}
