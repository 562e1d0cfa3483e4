use leptos::prelude::*;
use saltscope_core::model::output::{
    describe_changes, diff_line_kind, group_by_sls, is_problem_or_change, terse_result, Change,
    DiffLine, StateOutput,
};
use saltscope_core::model::{HighstateSummary, StateResult, StateRun};
use saltscope_core::text::salt_duration;

use super::value::value_tree;

/// How the job page shows states: Salt's `state_output`, `state_verbose`
/// and grouping by SLS, all from the URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateView {
    pub output: StateOutput,
    pub problems_only: bool,
    pub by_sls: bool,
}

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

/// A minion's states in run order, as the view asks.
#[component]
pub fn StateTable(runs: Vec<StateRun>, view_as: StateView) -> impl IntoView {
    let shown: Vec<StateRun> = runs
        .into_iter()
        .filter(|r| !view_as.problems_only || is_problem_or_change(r))
        .collect();
    let hidden_note = (view_as.problems_only && shown.is_empty())
        .then(|| view! { <p class="notice">"No failures and no changes."</p> });
    let body = if view_as.by_sls {
        group_by_sls(&shown)
            .into_iter()
            .map(|(sls, runs)| {
                let label = if sls.is_empty() { "(no SLS)".to_string() } else { format!("SLS {sls}") };
                let heading = label.clone();
                view! {
                    <tbody class="sls-group" aria-label=label>
                        <tr class="sls-heading"><th colspan="8">{heading}</th></tr>
                        {runs.into_iter().map(|r| state_row(r.clone(), view_as.output)).collect_view()}
                    </tbody>
                }
            })
            .collect_view()
            .into_any()
    } else {
        view! { <tbody>{shown.into_iter().map(|r| state_row(r, view_as.output)).collect_view()}</tbody> }.into_any()
    };
    view! {
        {hidden_note}
        <table class="states">
            <thead><tr>
                <th>"#"</th><th>"Result"</th><th>"ID"</th><th>"Function"</th><th>"Name"</th>
                <th>"Comment"</th><th>"Duration"</th><th>"Changes"</th>
            </tr></thead>
            {body}
        </table>
    }
}

fn state_row(run: StateRun, output: StateOutput) -> impl IntoView {
    let class = match run.result {
        StateResult::True => "state state-true",
        StateResult::False => "state state-false",
        StateResult::None => "state state-none",
    };
    let not_ran = run.state_ran == Some(false);
    let full = output.shows_full(&run);
    let run_num = run.run_num.map(|n| n.to_string()).unwrap_or_default();
    let duration = run.duration_ms.map(salt_duration).unwrap_or_default();
    if !full {
        // Salt's terse line: result word, ID, function, name, duration.
        return view! {
            <tr class=format!("{class} terse")>
                <td class="run-num">{run_num}</td>
                <td class="result">{run.result.label()}</td>
                <td class="state-id">{run.id.clone()}</td>
                <td>{run.function.clone()}</td>
                <td class="state-name">{run.name.clone()}</td>
                <td class="terse-result">{terse_result(&run)}</td>
                <td class="duration">{duration}</td>
                <td></td>
            </tr>
        }
        .into_any();
    }
    let changes = run.changed().then(|| changes_view(&run.changes));
    view! {
        <tr class=class>
            <td class="run-num">{run_num}</td>
            <td class="result">{run.result.label()}{not_ran.then_some(" (did not run)")}</td>
            <td class="state-id">{run.id}</td>
            <td>{run.function}</td>
            <td class="state-name">{run.name}</td>
            <td><pre class="comment">{run.comment}</pre>
                {(!run.warnings.is_empty()).then(|| view! { <pre class="warnings">{run.warnings.join("\n")}</pre> })}</td>
            <td class="duration">{duration}</td>
            <td class="changes">{changes}</td>
        </tr>
    }
    .into_any()
}

/// Changes read as a person reads them: a diff as a diff, old → new.
fn changes_view(changes: &serde_json::Value) -> AnyView {
    describe_changes(changes)
        .into_iter()
        .map(|change| match change {
            Change::Diff(diff) => {
                let lines = diff
                    .lines()
                    .map(|line| {
                        let class = match diff_line_kind(line) {
                            DiffLine::Added => "diff-add",
                            DiffLine::Removed => "diff-del",
                            DiffLine::Hunk => "diff-hunk",
                            DiffLine::Context => "diff-ctx",
                        };
                        view! { <span class=class>{format!("{line}\n")}</span> }
                    })
                    .collect_view();
                view! { <pre class="diff">{lines}</pre> }.into_any()
            }
            Change::OldNew { name, old, new } => view! {
                <div class="old-new">
                    {(!name.is_empty()).then(|| view! { <span class="key">{format!("{name}: ")}</span> })}
                    <span class="old">{if old.is_empty() { "(none)".to_string() } else { old }}</span>
                    " → "
                    <span class="new">{if new.is_empty() { "(none)".to_string() } else { new }}</span>
                </div>
            }
            .into_any(),
            Change::Value { name, value } if name.is_empty() => value_tree(&value),
            Change::Value { name, value } => view! {
                <div class="change"><span class="key">{format!("{name}: ")}</span>{value_tree(&value)}</div>
            }
            .into_any(),
        })
        .collect_view()
        .into_any()
}
