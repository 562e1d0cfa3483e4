use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::state::StateReturn;
use crate::text::json_text;

/// The `_source` fields a return is read from, as the engine gave them:
/// `Some(Value::Null)` for a null, `None` for a field that is absent (the
/// notes tell the two apart). `data` in whatever form the reader wants:
/// a `Value`, or only its state totals ([`StateTally`](super::StateTally)).
/// Any other field is skipped unread.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "D: Deserialize<'de>"))]
pub struct ReturnFields<D = Value> {
    #[serde(rename = "@timestamp", default, deserialize_with = "present")]
    pub timestamp: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub jid: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub minion: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub fun: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub success: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub retcode: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub counts: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub data: Option<D>,
}

impl<D> Default for ReturnFields<D> {
    fn default() -> Self {
        ReturnFields {
            timestamp: None,
            jid: None,
            minion: None,
            fun: None,
            success: None,
            retcode: None,
            counts: None,
            data: None,
        }
    }
}

impl ReturnFields<Value> {
    /// The fields of a `_source` already read as a `Value` (the job page's
    /// hits): what serde gives for an object, without a parser of the
    /// fields for `Value`s beside the one for bytes in the wasm. A source
    /// that is no object has none of them (serde would read an array's
    /// items as the fields in order).
    pub fn of_source(source: &Value) -> ReturnFields<Value> {
        let field = |name: &str| source.get(name).cloned();
        ReturnFields {
            timestamp: field("@timestamp"),
            jid: field("jid"),
            minion: field("minion"),
            fun: field("fun"),
            success: field("success"),
            retcode: field("retcode"),
            counts: field("counts"),
            data: field("data"),
        }
    }
}

/// A field that is there, null included (serde reads a null `Option` as
/// `None`, which would say "missing").
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// One minion's return for one job, as the returner indexed it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReturnDoc {
    pub index: String,
    pub id: String,
    pub jid: String,
    pub minion: String,
    pub fun: String,
    /// `@timestamp`: when the returner ran, ISO 8601 (UTC).
    pub timestamp: Option<String>,
    pub success: Option<bool>,
    pub retcode: Option<i64>,
    /// `counts` with `states_count` on: (succeeded, failed).
    pub counts: Option<(u64, u64)>,
    pub data: ReturnData,
    /// What was missing or oddly shaped in the document, for the reader.
    pub notes: Vec<String>,
    /// The document as stored, for the raw view.
    pub source: Value,
}

/// The `data` of a return, by shape.
#[derive(Clone, Debug, PartialEq)]
pub enum ReturnData {
    States(StateReturn),
    /// A state function whose return was not a dict, wrapped by the returner
    /// as `{"return": …}` — a render error is a list of messages.
    StateError(Vec<String>),
    Text(String),
    /// Shared: the job page draws it a part at a time ([`super::TreeNode`]).
    Structured(std::sync::Arc<Value>),
    Missing,
    /// Not fetched yet: the job page reads returns without their `data`
    /// first (a return can be megabytes) and each minion's data on its own.
    Unread,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed,
    /// A runner's return (`salt-runner_*`, minion `<master>_master`): the
    /// returner records `success: false` even when the runner worked.
    Runner,
}

impl ReturnDoc {
    /// Reads a hit fetched without its `data` (the job page's summaries):
    /// everything but the data, which stays [`ReturnData::Unread`].
    pub fn summary_from_hit(hit: &Value) -> ReturnDoc {
        let mut doc = ReturnDoc::from_hit(hit);
        doc.notes.retain(|n| n != "field `data` is missing");
        doc.data = ReturnData::Unread;
        doc
    }

    /// This return as a page of the job's returns holds it: read again
    /// without its data (one that came whole, to stand among them).
    pub fn summary(&self) -> ReturnDoc {
        let source = match &self.source {
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .filter(|(k, _)| *k != "data")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            other => other.clone(),
        };
        let hit = serde_json::json!({"_index": self.index, "_id": self.id, "_source": source});
        ReturnDoc::summary_from_hit(&hit)
    }

    /// Reads one search hit (`_index`, `_id`, `_source`), keeping the
    /// document for the raw view. A field the engine's answer held too deep
    /// to read is its raw JSON text, with a note.
    pub fn from_hit(hit: &Value) -> ReturnDoc {
        let mut doc = ReturnDoc::read_hit(hit);
        doc.source = hit.get("_source").cloned().unwrap_or(Value::Null);
        doc
    }

    /// [`Self::from_hit`] taking the hit: `data` is set aside while the rest
    /// is read, read where it is and put back, and the document moves into
    /// `source`: a return of megabytes is never copied whole.
    pub fn from_owned_hit(mut hit: Value) -> ReturnDoc {
        let data = hit.pointer_mut("/_source/data").map(Value::take);
        let mut doc = ReturnDoc::read_hit_with(&hit, data.as_ref());
        if let (Some(data), Some(at)) = (data, hit.pointer_mut("/_source/data")) {
            *at = data;
        }
        doc.source = hit.get_mut("_source").map_or(Value::Null, Value::take);
        doc
    }

    /// [`Self::from_hit`] without keeping a copy of the document (`source`
    /// stays null): for the views that read thousands of returns and show
    /// none of them raw.
    pub fn read_hit(hit: &Value) -> ReturnDoc {
        ReturnDoc::read_hit_with(hit, None)
    }

    /// [`Self::read_hit`], `data` read from `set_aside` when the hit's own
    /// was taken out (a null left in its place).
    fn read_hit_with(hit: &Value, set_aside: Option<&Value>) -> ReturnDoc {
        let text = |name: &str| {
            hit.get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let source = hit.get("_source").unwrap_or(&Value::Null);
        let fields = ReturnFields::of_source(source);
        let (mut doc, data) = ReturnDoc::from_fields(text("_index"), text("_id"), fields);
        if !source.is_object() {
            doc.notes
                .insert(0, "the hit has no _source object".to_string());
        }
        // What the reader could not read of the hit (a `data` nested too
        // deep, see `engine::lenient`) comes first.
        let unread =
            crate::engine::lenient::hit_notes(hit).map(|n| format!("{n}: shown as raw text"));
        doc.notes.splice(0..0, unread);
        doc.data = ReturnData::read(&doc.fun, set_aside.or(data.as_ref()), &mut doc.notes);
        doc
    }

    /// A return from its fields, with `data` handed back as read for the
    /// caller to take apart (the doc's `data` is `Missing` until then) and
    /// no `source` kept: the export reads pages this way, straight from the
    /// engine's bytes.
    pub fn from_fields<D>(
        index: String,
        id: String,
        fields: ReturnFields<D>,
    ) -> (ReturnDoc, Option<D>) {
        let mut notes = Vec::new();
        let mut text_field = |name: &str, value: Option<Value>| match value {
            Some(Value::String(s)) => s,
            Some(Value::Number(n)) => n.to_string(),
            Some(other) => {
                let text = json_text(&other);
                notes.push(format!("field `{name}` is not a string: {text}"));
                text
            }
            None => {
                notes.push(format!("field `{name}` is missing"));
                String::new()
            }
        };
        let jid = text_field("jid", fields.jid);
        let minion = text_field("minion", fields.minion);
        let fun = text_field("fun", fields.fun);
        let timestamp = match fields.timestamp {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        let success = match fields.success {
            Some(Value::Bool(b)) => Some(b),
            Some(Value::String(s)) if s == "true" || s == "false" => Some(s == "true"),
            Some(other) => {
                notes.push(format!(
                    "field `success` is not a boolean: {}",
                    json_text(&other)
                ));
                None
            }
            None => None,
        };
        let retcode = match fields.retcode {
            Some(Value::Number(n)) => n.as_i64(),
            Some(Value::String(s)) => s.trim().parse().ok(),
            Some(Value::Bool(b)) => Some(i64::from(b)),
            _ => None,
        };
        if success.is_none() && retcode.is_none() {
            notes.push("neither `success` nor `retcode` is present".to_string());
        }
        let counts = fields.counts.as_ref().and_then(|c| {
            let succeeded = c.get("succeeded")?.as_u64()?;
            let failed = c.get("failed")?.as_u64()?;
            Some((succeeded, failed))
        });
        let doc = ReturnDoc {
            index,
            id,
            jid,
            minion,
            fun,
            timestamp,
            success,
            retcode,
            counts,
            data: ReturnData::Missing,
            notes,
            source: Value::Null,
        };
        (doc, fields.data)
    }

    pub fn is_runner(&self) -> bool {
        // Whatever the index prefix (`salt-`, or another returner's).
        self.fun.starts_with("runner.") || self.index.contains("-runner_")
    }

    /// The returner's own rule: success exactly when retcode is 0, a missing
    /// retcode counting as 1. A runner's return says `success: false`
    /// whatever happened: it failed when its `data.success` is false, and
    /// is a runner's return otherwise (or while its data is unread).
    pub fn outcome(&self) -> Outcome {
        if self.is_runner() {
            let failed = match &self.data {
                ReturnData::Structured(data) => {
                    super::run_summary::runner_verdict(data) == Some(true)
                }
                _ => false,
            };
            return if failed {
                Outcome::Failed
            } else {
                Outcome::Runner
            };
        }
        let ok = self.success.unwrap_or(self.retcode == Some(0));
        if ok {
            Outcome::Succeeded
        } else {
            Outcome::Failed
        }
    }
}

impl ReturnData {
    /// `data` by shape; `None` when the document has none.
    pub fn read(fun: &str, data: Option<&Value>, notes: &mut Vec<String>) -> ReturnData {
        let Some(data) = data else {
            notes.push("field `data` is missing".to_string());
            return ReturnData::Missing;
        };
        if let Value::Object(map) = data {
            if let Some(states) = StateReturn::read(map) {
                notes.extend(states.notes.iter().cloned());
                return ReturnData::States(states);
            }
            if super::is_state_function(fun) {
                if let (1, Some(inner)) = (map.len(), map.get("return")) {
                    return ReturnData::StateError(match inner {
                        Value::Array(items) => items.iter().map(crate::text::scalar_text).collect(),
                        other => vec![crate::text::scalar_text(other)],
                    });
                }
                if !map.is_empty() {
                    notes.push(format!(
                        "`{fun}` returned an object without any state results"
                    ));
                }
            }
        }
        match data {
            Value::String(s) => ReturnData::Text(s.clone()),
            Value::Number(_) | Value::Bool(_) | Value::Null => {
                ReturnData::Text(crate::text::scalar_text(data))
            }
            other => ReturnData::Structured(std::sync::Arc::new(other.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_sources_fields_are_what_serde_reads_from_it() {
        let sources = [
            json!({"@timestamp": "2026-12-05T10:00:00Z", "jid": "1", "minion": "m", "fun": "test.ping",
                   "success": true, "retcode": 0, "counts": {"succeeded": 1}, "data": {"x": [1]}, "extra": 5}),
            json!({"jid": null, "data": null, "success": "yes"}),
            json!({}),
            json!("not an object"),
        ];
        let fmt = |f: &ReturnFields<Value>| format!("{f:?}");
        for source in sources {
            let serde = ReturnFields::<Value>::deserialize(&source).unwrap_or_default();
            assert_eq!(
                fmt(&ReturnFields::of_source(&source)),
                fmt(&serde),
                "{source}"
            );
        }
        // serde would read an array as the fields in order (`@timestamp`
        // 1, `jid` 2); a source that is no object has no fields.
        assert_eq!(
            fmt(&ReturnFields::of_source(&json!([1, 2]))),
            fmt(&ReturnFields::default())
        );
    }

    fn hit(source: Value) -> Value {
        json!({"_index": "salt-cmd_run-v1", "_id": "x", "_source": source})
    }

    #[test]
    fn a_cmd_run_return_is_text_with_its_retcode() {
        let doc = ReturnDoc::from_hit(&hit(json!({
            "@timestamp": "2026-11-29T17:05:07+00:00", "success": false, "retcode": 3,
            "minion": "db-02", "fun": "cmd.run", "jid": "20261129170507123456",
            "counts": {}, "data": "boom"
        })));
        assert_eq!(doc.data, ReturnData::Text("boom".into()));
        assert_eq!(doc.outcome(), Outcome::Failed);
        assert_eq!(doc.retcode, Some(3));
        assert!(doc.notes.is_empty(), "{:?}", doc.notes);
    }

    #[test]
    fn taking_a_hit_reads_the_same_return_and_keeps_the_whole_document() {
        let sources = [
            json!({"minion": "m", "fun": "state.apply", "jid": "1", "success": true,
                   "data": {"test_|-a_|-a_|-nop": {"result": true, "__run_num__": 0}}}),
            json!({"minion": "m", "fun": "cmd.run", "jid": "1", "retcode": 0, "data": null}),
            json!({"minion": "m", "fun": "cmd.run", "jid": "1", "retcode": 0}),
            json!("not an object"),
        ];
        for source in sources {
            let h = hit(source);
            assert_eq!(
                ReturnDoc::from_owned_hit(h.clone()),
                ReturnDoc::from_hit(&h)
            );
        }
    }

    #[test]
    fn reading_a_hit_without_keeping_it_reads_the_same_return() {
        let h = hit(json!({
            "minion": "db-02", "fun": "state.apply", "jid": "1", "success": true,
            "data": {"test_|-a_|-a_|-nop": {"result": true, "__run_num__": 0}}
        }));
        let kept = ReturnDoc::from_hit(&h);
        let read = ReturnDoc::read_hit(&h);
        assert_eq!(read.source, Value::Null);
        assert_eq!(kept.source, h["_source"]);
        assert_eq!(
            ReturnDoc {
                source: Value::Null,
                ..kept
            },
            read
        );
    }

    #[test]
    fn a_document_missing_fields_is_kept_with_notes() {
        let doc = ReturnDoc::from_hit(&hit(json!({"jid": "1"})));
        assert_eq!(doc.data, ReturnData::Missing);
        assert!(doc.notes.iter().any(|n| n.contains("`minion` is missing")));
        assert!(doc.notes.iter().any(|n| n.contains("`data` is missing")));
        assert_eq!(doc.outcome(), Outcome::Failed);
    }

    #[test]
    fn a_hit_without_source_does_not_panic() {
        let doc = ReturnDoc::from_hit(&json!({"_id": "q"}));
        assert_eq!(doc.id, "q");
        assert!(doc.notes.iter().any(|n| n.contains("no _source")));
    }

    #[test]
    fn a_render_error_is_a_state_error_not_a_structure() {
        let doc = ReturnDoc::from_hit(&hit(json!({
            "success": false, "retcode": 1, "minion": "m", "fun": "state.apply", "jid": "1",
            "data": {"return": ["Rendering SLS 'base:broken' failed: mapping values"]}
        })));
        assert_eq!(
            doc.data,
            ReturnData::StateError(vec![
                "Rendering SLS 'base:broken' failed: mapping values".into()
            ])
        );
    }

    #[test]
    fn a_runner_fails_by_its_own_data_success_not_the_returners_field() {
        // The returner writes `success: false, retcode: 1` on every runner
        // return (real documents: tests/fixtures).
        let runner = |data: Value| {
            ReturnDoc::from_hit(
                &json!({"_index": "salt-runner_jobs_list_jobs-v1", "_id": "r",
                "_source": {"success": false, "retcode": 1, "minion": "master_master",
                            "fun": "runner.jobs.list_jobs", "jid": "1", "data": data}}),
            )
        };
        assert_eq!(runner(json!({})).outcome(), Outcome::Runner);
        assert_eq!(
            runner(json!({"success": true, "return": []})).outcome(),
            Outcome::Runner
        );
        let raised = json!({"success": false, "return": "Exception occurred in runner jobs.list_jobs: Traceback"});
        assert_eq!(runner(raised).outcome(), Outcome::Failed);
    }

    #[test]
    fn test_retcode_true_with_success_false_is_failed() {
        let doc = ReturnDoc::from_hit(&hit(json!({
            "success": false, "minion": "m", "fun": "test.retcode", "jid": "1", "data": true
        })));
        assert_eq!(doc.outcome(), Outcome::Failed);
        assert_eq!(doc.data, ReturnData::Text("true".into()));
    }

    #[test]
    fn missing_success_falls_back_to_retcode() {
        let ok = ReturnDoc::from_hit(&hit(
            json!({"retcode": 0, "minion": "m", "fun": "f", "jid": "1", "data": ""}),
        ));
        assert_eq!(ok.outcome(), Outcome::Succeeded);
        let bad = ReturnDoc::from_hit(&hit(
            json!({"minion": "m", "fun": "f", "jid": "1", "data": ""}),
        ));
        assert_eq!(bad.outcome(), Outcome::Failed);
    }
}
