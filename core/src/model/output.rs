//! How a state run is shown, in Salt's own terms: the `state_output` modes
//! (`full`, `terse`, `mixed`, `changes`), `state_verbose: False` ("failures
//! and changes only"), grouping by SLS, and changes read the way a person
//! reads them (a file diff as a diff, a package as old → new).

use std::collections::HashMap;

use serde_json::Value;

use super::state::{StateResult, StateRun};
use crate::text::scalar_text;

/// Salt's `state_output`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StateOutput {
    /// Every state in full.
    #[default]
    Full,
    /// One line per state.
    Terse,
    /// Failures in full, the rest terse.
    Mixed,
    /// Failures and changes in full, the rest terse.
    Changes,
}

impl StateOutput {
    pub const ALL: [StateOutput; 4] = [
        StateOutput::Full,
        StateOutput::Terse,
        StateOutput::Mixed,
        StateOutput::Changes,
    ];

    pub fn parse(text: &str) -> StateOutput {
        match text {
            "terse" => StateOutput::Terse,
            "mixed" => StateOutput::Mixed,
            "changes" => StateOutput::Changes,
            _ => StateOutput::Full,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StateOutput::Full => "full",
            StateOutput::Terse => "terse",
            StateOutput::Mixed => "mixed",
            StateOutput::Changes => "changes",
        }
    }

    /// Whether `run` is shown in full under this mode.
    pub fn shows_full(self, run: &StateRun) -> bool {
        let failed = run.result == StateResult::False;
        match self {
            StateOutput::Full => true,
            StateOutput::Terse => false,
            StateOutput::Mixed => failed,
            StateOutput::Changes => failed || run.changed(),
        }
    }
}

/// `state_verbose: False`: only what failed, would change, or changed.
pub fn is_problem_or_change(run: &StateRun) -> bool {
    run.result != StateResult::True || run.changed()
}

/// The terse line's result word, as Salt's terse output prints it.
pub fn terse_result(run: &StateRun) -> &'static str {
    match (run.result, run.changed()) {
        (StateResult::False, _) => "Failed",
        (StateResult::None, _) => "Differs",
        (StateResult::True, true) => "Changed",
        (StateResult::True, false) => "Clean",
    }
}

/// The `shown` states (indices into `runs`) grouped by SLS, groups in the
/// order their first state ran, each keeping run order. States without
/// `__sls__` group under "".
pub fn group_by_sls(
    runs: &[StateRun],
    shown: impl IntoIterator<Item = usize>,
) -> Vec<(&str, Vec<usize>)> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    // A return of 10,000 states may name hundreds of SLS: look groups up by
    // name, not by scanning them.
    let mut group_of: HashMap<&str, usize> = HashMap::new();
    for at in shown {
        let sls = runs[at].sls.as_deref().unwrap_or_default();
        let group = *group_of.entry(sls).or_insert_with(|| {
            groups.push((sls, Vec::new()));
            groups.len() - 1
        });
        groups[group].1.push(at);
    }
    groups
}

/// One readable piece of a state's `changes`.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// A unified diff (file.managed), line by line.
    Diff(String),
    /// `name: old → new` (pkg.installed, file modes, service states …).
    OldNew {
        name: String,
        old: String,
        new: String,
    },
    /// Anything else, as a value.
    Value { name: String, value: Value },
}

/// Reads `changes` into readable pieces, skipping the returner's
/// `_orig_key`. A string `changes` (some modules) is one value.
pub fn describe_changes(changes: &Value) -> Vec<Change> {
    let Value::Object(map) = changes else {
        return match changes {
            Value::Null => Vec::new(),
            Value::String(s) if s.is_empty() => Vec::new(),
            other => vec![Change::Value {
                name: String::new(),
                value: other.clone(),
            }],
        };
    };
    // `{old, new}` at the top: the state's own before/after.
    if let (Some(old), Some(new)) = (map.get("old"), map.get("new")) {
        if map
            .keys()
            .all(|k| k == "old" || k == "new" || k == "_orig_key")
        {
            return vec![Change::OldNew {
                name: String::new(),
                old: scalar_text(old),
                new: scalar_text(new),
            }];
        }
    }
    map.iter()
        .filter(|(k, _)| k.as_str() != "_orig_key")
        .map(|(name, value)| match value {
            Value::String(diff) if name == "diff" && diff.contains('\n') => {
                Change::Diff(diff.clone())
            }
            Value::Object(inner)
                if inner.contains_key("old")
                    && inner.contains_key("new")
                    && inner
                        .keys()
                        .all(|k| k == "old" || k == "new" || k == "_orig_key") =>
            {
                Change::OldNew {
                    name: name.clone(),
                    old: scalar_text(&inner["old"]),
                    new: scalar_text(&inner["new"]),
                }
            }
            other => Change::Value {
                name: name.clone(),
                value: other.clone(),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StateReturn;
    use serde_json::json;

    fn runs() -> Vec<StateRun> {
        StateReturn::read(
            json!({
                "a_|-ok_|-ok_|-x": {"result": true, "changes": {}, "__run_num__": 0, "__sls__": "web"},
                "a_|-chg_|-chg_|-x": {"result": true, "changes": {"diff": "New file"}, "__run_num__": 1, "__sls__": "db"},
                "a_|-bad_|-bad_|-x": {"result": false, "changes": {}, "__run_num__": 2, "__sls__": "web"},
                "a_|-test_|-test_|-x": {"result": null, "changes": {}, "__run_num__": 3}
            })
            .as_object()
            .unwrap(),
        )
        .unwrap()
        .runs
    }

    #[test]
    fn each_state_output_mode_shows_what_salt_shows_in_full() {
        let runs = runs();
        let full = |mode: StateOutput| -> Vec<&str> {
            runs.iter()
                .filter(|r| mode.shows_full(r))
                .map(|r| r.id.as_str())
                .collect()
        };
        assert_eq!(full(StateOutput::Full), ["ok", "chg", "bad", "test"]);
        assert!(full(StateOutput::Terse).is_empty());
        assert_eq!(full(StateOutput::Mixed), ["bad"]);
        assert_eq!(full(StateOutput::Changes), ["chg", "bad"]);
        assert_eq!(StateOutput::parse("changes"), StateOutput::Changes);
        assert_eq!(StateOutput::parse("nonsense"), StateOutput::Full);
    }

    #[test]
    fn failures_and_changes_only_hides_clean_successes() {
        let shown: Vec<String> = runs()
            .into_iter()
            .filter(is_problem_or_change)
            .map(|r| r.id)
            .collect();
        assert_eq!(shown, ["chg", "bad", "test"]);
        let words: Vec<&str> = runs().iter().map(terse_result).collect();
        assert_eq!(words, ["Clean", "Changed", "Failed", "Differs"]);
    }

    #[test]
    fn grouping_by_sls_keeps_run_order_within_and_between_groups() {
        let runs = runs();
        let groups = group_by_sls(&runs, 0..runs.len());
        let names: Vec<&str> = groups.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["web", "db", ""]);
        let web: Vec<&str> = groups[0].1.iter().map(|&i| runs[i].id.as_str()).collect();
        assert_eq!(web, ["ok", "bad"]);
        // Only the states shown are grouped.
        let shown = group_by_sls(&runs, [1, 3]);
        assert_eq!(shown, [("db", vec![1]), ("", vec![3])]);
    }

    #[test]
    fn package_changes_read_as_old_to_new_and_diffs_as_diffs() {
        let changes = json!({
            "nginx": {"old": "1.22.0", "new": "1.24.0"},
            "libssl3": {"old": "", "new": "3.0.11"},
            "_orig_key": "x.y"
        });
        assert_eq!(
            describe_changes(&changes),
            [
                Change::OldNew {
                    name: "libssl3".into(),
                    old: "".into(),
                    new: "3.0.11".into()
                },
                Change::OldNew {
                    name: "nginx".into(),
                    old: "1.22.0".into(),
                    new: "1.24.0".into()
                },
            ]
        );
        let file = json!({"diff": "--- \n+++ \n@@ -1 +1 @@\n-a\n+b\n", "mode": "0644"});
        let described = describe_changes(&file);
        assert!(matches!(&described[0], Change::Diff(d) if d.starts_with("--- ")));
        assert!(matches!(&described[1], Change::Value { name, .. } if name == "mode"));
        assert_eq!(
            describe_changes(&json!({"old": "dead", "new": "running"})),
            [Change::OldNew {
                name: "".into(),
                old: "dead".into(),
                new: "running".into()
            }]
        );
        assert_eq!(
            describe_changes(&json!("a string")).len(),
            1,
            "a string change is kept"
        );
        assert!(describe_changes(&json!({})).is_empty());
    }
}
