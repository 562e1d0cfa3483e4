use leptos::prelude::*;
use saltscope_core::model::{HighstateSummary, StateResult, StateRun};
use saltscope_core::text::salt_duration;
use serde_json::Value;

use super::value::value_tree;

/// The highstate outputter's summary under a minion's states.
#[component]
pub fn SummaryLines(runs: Vec<StateRun>) -> impl IntoView {
    let summary = HighstateSummary::of(&runs);
    let [succeeded, failed, total, time] = summary.lines();
    view! {
        <div class="summary" aria-label="Summary">
            <span class="result-true">{succeeded}</span>
            <span class:result-false={summary.failed > 0}>{failed}</span>
            <span>{total}</span>
            <span>{time}</span>
        </div>
    }
}

/// A minion's states in run order.
#[component]
pub fn StateTable(runs: Vec<StateRun>) -> impl IntoView {
    view! {
        <table class="states">
            <thead><tr>
                <th>"#"</th><th>"Result"</th><th>"ID"</th><th>"Function"</th><th>"Name"</th>
                <th>"Comment"</th><th>"Duration"</th><th>"Changes"</th>
            </tr></thead>
            <tbody>{runs.into_iter().map(state_row).collect_view()}</tbody>
        </table>
    }
}

fn state_row(run: StateRun) -> impl IntoView {
    let class = match run.result {
        StateResult::True => "state state-true",
        StateResult::False => "state state-false",
        StateResult::None => "state state-none",
    };
    let not_ran = run.state_ran == Some(false);
    let changes = run.changed().then(|| changes_view(&run.changes));
    view! {
        <tr class=class>
            <td class="run-num">{run.run_num.map(|n| n.to_string()).unwrap_or_default()}</td>
            <td class="result">{run.result.label()}{not_ran.then_some(" (did not run)")}</td>
            <td class="state-id">{run.id}</td>
            <td>{run.function}</td>
            <td class="state-name">{run.name}</td>
            <td><pre class="comment">{run.comment}</pre></td>
            <td class="duration">{run.duration_ms.map(salt_duration).unwrap_or_default()}</td>
            <td class="changes">{changes}</td>
        </tr>
    }
}

/// Changes read as Salt prints them: a file diff as a diff, the rest as a tree.
fn changes_view(changes: &Value) -> AnyView {
    if let Some(diff) = changes.get("diff").and_then(Value::as_str) {
        if diff.contains('\n') {
            let lines = diff
                .lines()
                .map(|line| {
                    let class = match line.chars().next() {
                        Some('+') if !line.starts_with("+++") => "diff-add",
                        Some('-') if !line.starts_with("---") => "diff-del",
                        Some('@') => "diff-hunk",
                        _ => "diff-ctx",
                    };
                    view! { <span class=class>{format!("{line}\n")}</span> }
                })
                .collect_view();
            let rest: serde_json::Map<String, Value> = changes
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| *k != "diff")
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default();
            return view! {
                <pre class="diff">{lines}</pre>
                {(!rest.is_empty()).then(|| value_tree(&Value::Object(rest)))}
            }
            .into_any();
        }
    }
    value_tree(changes)
}
