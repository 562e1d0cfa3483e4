//! What the fleet and drift views need of one return, in one shape whichever
//! way it was computed: here from the return's `data`, or at index time by
//! the ingest pipeline `deploy/ingest/salt-return-summary.json` into the
//! document's `saltscope` field. The pipeline's painless script mirrors
//! [`RunSummary::of_return`]; the integration test `summary_pipeline` runs
//! the real Salt documents through it and proves the two agree.

use crate::sort;
use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{HighstateSummary, ReturnDoc, StateReturn};

/// The document field the pipeline writes.
pub const SUMMARY_FIELD: &str = "saltscope";
/// The field that marks a document the pipeline summarised.
pub const SUMMARY_VERSION_FIELD: &str = "saltscope.summary_version";
/// The version this core reads.
pub const SUMMARY_VERSION: u64 = 1;
/// The pipeline's name as `scripts/index-template.sh` installs it.
pub const SUMMARY_PIPELINE: &str = "saltscope-return-summary";

/// A return's state counts, SLS names, verdict and changed states.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSummary {
    /// Counts of the state results; `None` when `data` holds no states.
    pub states: Option<HighstateSummary>,
    /// The run failed as a whole: `success` false, a non-zero `retcode`, or
    /// a `data` that is not states (a render error).
    pub run_failed: bool,
    /// A runner's own verdict, `!data.success`: the returner writes
    /// `success: false` on every runner return, so only `data` tells.
    /// `None` for other functions and where `data.success` is no boolean.
    pub runner_failed: Option<bool>,
    /// The SLS files the states came from, sorted.
    pub sls: Vec<String>,
    /// The states that reported changes, keyed as in `data`, each with its
    /// `result`, `__sls__`, `__id__`, `name`, `_func`, `__run_num__` and its
    /// `changes` reduced to their keys (each `true`), or `true` when
    /// `changes` is not an object: enough for drift, none of the diff bodies.
    pub changed: Map<String, Value>,
}

impl RunSummary {
    /// Computed from the return as written (the streaming path).
    pub fn of_return(doc: &ReturnDoc, data: Option<&Value>) -> RunSummary {
        let states = data.and_then(Value::as_object).and_then(StateReturn::read);
        let mut summary = RunSummary {
            runner_failed: runner_failed(&doc.fun, data),
            run_failed: doc.success == Some(false)
                || doc.retcode.is_some_and(|c| c != 0)
                || (states.is_none() && data.is_some_and(|d| !d.is_null())),
            ..RunSummary::default()
        };
        let (Some(states), Some(data)) = (states, data.and_then(Value::as_object)) else {
            return summary;
        };
        summary.states = Some(HighstateSummary::of(&states.runs));
        let sls: BTreeSet<&String> =
            sort::collect_ordered(states.runs.iter().filter_map(|r| r.sls.as_ref()));
        summary.sls = sls.into_iter().cloned().collect();
        for run in states.runs.iter().filter(|r| r.changed()) {
            let Some(Value::Object(state)) = data.get(&run.key) else {
                continue;
            };
            summary
                .changed
                .insert(run.key.clone(), changed_state(state));
        }
        summary
    }

    /// The pipeline's fields of a hit's `_source`, when it has them in the
    /// version this core reads.
    pub fn from_pipeline(source: &Value) -> Option<RunSummary> {
        let fields = source.get(SUMMARY_FIELD)?;
        if fields.get("summary_version").and_then(Value::as_u64) != Some(SUMMARY_VERSION) {
            return None;
        }
        let count = |s: &Value, name: &str| s.get(name).and_then(Value::as_u64).unwrap_or(0);
        let states = fields.get("states").filter(|s| s.is_object()).map(|s| {
            HighstateSummary {
                total: count(s, "total"),
                succeeded: count(s, "succeeded"),
                unchanged: count(s, "unchanged"),
                changed: count(s, "changed"),
                failed: count(s, "failed"),
                // Durations are not summarised: the views that show them
                // read the states.
                total_ms: 0.0,
            }
        });
        let mut sls: Vec<String> = match fields.get("sls") {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            // A one-element array comes back from some clients as its element.
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        };
        sort::sort(&mut sls);
        sls.dedup();
        Some(RunSummary {
            states,
            run_failed: fields.get("run_failed").and_then(Value::as_bool) == Some(true),
            runner_failed: fields.get("runner_failed").and_then(Value::as_bool),
            sls,
            changed: fields
                .get("changed")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        })
    }

    /// The changed states as a state return, read by the same code that
    /// reads `data` (drift counts them).
    pub fn changed_states(&self) -> Option<StateReturn> {
        StateReturn::read(&self.changed)
    }
}

/// A runner's verdict from its `data.success` (see
/// [`RunSummary::runner_failed`]).
pub fn runner_failed(fun: &str, data: Option<&Value>) -> Option<bool> {
    if !fun.starts_with("runner.") {
        return None;
    }
    runner_verdict(data?)
}

/// Whether a runner's `data` says it failed: the returner writes
/// `success: false` on every runner return, so only `data.success` tells.
/// `None` when the data has no such flag. The summary pipeline and
/// [`super::ReturnDoc::outcome`] both read it here.
pub fn runner_verdict(data: &Value) -> Option<bool> {
    data.get("success")?.as_bool().map(|ok| !ok)
}

/// The pipeline's copy of a changed state: its identity fields and the
/// keys of its `changes`.
fn changed_state(state: &Map<String, Value>) -> Value {
    let mut kept = Map::new();
    for field in [
        "result",
        "__sls__",
        "__id__",
        "name",
        "_func",
        "__run_num__",
    ] {
        if let Some(v) = state.get(field) {
            kept.insert(field.to_string(), v.clone());
        }
    }
    let changes = match state.get("changes") {
        Some(Value::Object(changes)) => Value::Object(sort::collect_ordered(
            changes.keys().map(|k| (k.clone(), Value::Bool(true))),
        )),
        _ => Value::Bool(true),
    };
    kept.insert("changes".to_string(), changes);
    Value::Object(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(source: Value) -> (ReturnDoc, Value) {
        let hit = json!({"_index": "salt-state_apply-v1", "_id": "1", "_source": source});
        let data = hit["_source"].get("data").cloned().unwrap_or(Value::Null);
        (ReturnDoc::read_hit(&hit), data)
    }

    #[test]
    fn a_state_run_is_counted_with_its_sls_and_changed_states_reduced_to_keys() {
        let (d, data) = doc(json!({"jid": "1", "minion": "m", "fun": "state.apply",
            "success": true, "retcode": 0, "data": {
            "file_|-motd_|-/etc/motd_|-managed": {"result": true, "__sls__": "base",
                "__id__": "motd", "name": "/etc/motd", "__run_num__": 0,
                "changes": {"diff": "--- a\n+++ b\n+hello"}, "comment": "updated"},
            "cmd_|-drift_|-date_|-run": {"result": null, "__sls__": "drift",
                "changes": {}, "__run_num__": 1},
            "pkg_|-vim_|-vim_|-installed": {"result": false, "__sls__": "base",
                "changes": {"_orig_key": "x"}, "__run_num__": 2}
        }}));
        let s = RunSummary::of_return(&d, Some(&data));
        let states = s.states.unwrap();
        assert_eq!(
            (
                states.total,
                states.succeeded,
                states.unchanged,
                states.changed,
                states.failed
            ),
            (3, 2, 1, 1, 1)
        );
        assert_eq!(s.sls, ["base", "drift"]);
        assert!(!s.run_failed, "a failed state is not a failed run");
        assert_eq!(
            s.changed,
            *json!({"file_|-motd_|-/etc/motd_|-managed": {"result": true, "__sls__": "base",
                "__id__": "motd", "name": "/etc/motd", "__run_num__": 0,
                "changes": {"diff": true}}})
            .as_object()
            .unwrap()
        );
        // The pipeline writes the same fields: read back, they are equal.
        let mut pipeline = json!({"summary_version": 1, "run_failed": false,
            "states": {"total": 3, "succeeded": 2, "unchanged": 1, "changed": 1, "failed": 1},
            "sls": ["drift", "base"]});
        pipeline["changed"] = Value::Object(s.changed.clone());
        let back = RunSummary::from_pipeline(&json!({ "saltscope": pipeline })).unwrap();
        assert_eq!(
            back,
            RunSummary {
                states: Some(HighstateSummary {
                    total_ms: 0.0,
                    ..states
                }),
                ..s.clone()
            }
        );
        let changed = back.changed_states().unwrap();
        assert_eq!(changed.runs[0].identity().1, "motd");
        assert!(changed.runs[0].changed());
    }

    #[test]
    fn a_render_error_or_a_refused_run_is_a_failed_run_without_states() {
        let (d, data) = doc(json!({"jid": "1", "minion": "m", "fun": "state.apply",
            "success": false, "retcode": 1,
            "data": ["Rendering SLS 'base:web' failed: mapping values are not allowed here"]}));
        let s = RunSummary::of_return(&d, Some(&data));
        assert!(s.run_failed && s.states.is_none() && s.sls.is_empty());
        let (d, data) = doc(json!({"jid": "1", "minion": "m", "fun": "state.apply",
            "retcode": "0", "data": "no top file"}));
        assert!(RunSummary::of_return(&d, Some(&data)).run_failed);
    }

    #[test]
    fn another_version_or_no_summary_is_not_read() {
        assert_eq!(RunSummary::from_pipeline(&json!({"jid": "1"})), None);
        assert_eq!(
            RunSummary::from_pipeline(&json!({"saltscope": {"summary_version": 2}})),
            None
        );
    }
}
