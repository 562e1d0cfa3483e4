use std::sync::Arc;

use leptos::prelude::*;
use saltscope_core::model::output::{
    describe_changes, diff_line_kind, group_by_sls, is_problem_or_change, terse_result, Change,
    DiffLine, StateOutput,
};
use saltscope_core::model::{HighstateSummary, ReturnData, ReturnDoc, StateResult, StateRun};
use saltscope_core::route::StateView;
use saltscope_core::text::salt_duration;

use super::value::value_tree;
use super::visible::{human_bytes, ShowMore, FOLD_BYTES};

/// Rows drawn at first, and per step when scrolling on: a return of 10,000
/// states opens at once.
const ROWS_STEP: usize = 300;

/// A return's states (none if it holds no states).
fn runs_of(ret: &ReturnDoc) -> &[StateRun] {
    match &ret.data {
        ReturnData::States(s) => &s.runs,
        _ => &[],
    }
}

/// The highstate outputter's summary under a minion's states.
#[component]
pub fn SummaryLines(ret: Arc<ReturnDoc>) -> impl IntoView {
    let summary = HighstateSummary::of(runs_of(&ret));
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

/// A minion's states in run order, as the view asks: redrawn when the
/// output mode changes, from the return's one copy of them, and drawn in
/// slices — more as the person scrolls on.
#[component]
pub fn StateTable(ret: Arc<ReturnDoc>, view_as: Memo<StateView>) -> impl IntoView {
    let limit = RwSignal::new(ROWS_STEP);
    // A new mode starts from the top again.
    Effect::new(move |_| {
        view_as.track();
        limit.set(ROWS_STEP);
    });
    let runs = ret.clone();
    let left = Memo::new(move |_| {
        shown_runs(runs_of(&runs), view_as.get())
            .len()
            .saturating_sub(limit.get())
    });
    view! {
        {move || state_table(runs_of(&ret), view_as.get(), limit.get())}
        {move || (left.get() > 0).then(|| view! {
            <ShowMore label=Signal::derive(move || format!("Show {} more states", left.get().min(ROWS_STEP * 3)))
                more=Callback::new(move |()| limit.update(|n| *n += ROWS_STEP * 3))/>
        })}
    }
}

fn shown_runs(runs: &[StateRun], view_as: StateView) -> Vec<&StateRun> {
    runs.iter()
        .filter(|r| !view_as.problems_only || is_problem_or_change(r))
        .collect()
}

/// One line of the table: an SLS heading or a state.
enum Line<'a> {
    Sls(String),
    State(&'a StateRun),
}

fn state_table(runs: &[StateRun], view_as: StateView, limit: usize) -> impl IntoView {
    let shown = shown_runs(runs, view_as);
    let hidden_note = (view_as.problems_only && shown.is_empty())
        .then(|| view! { <p class="notice">"No failures and no changes."</p> });
    let lines: Vec<Line> = if view_as.by_sls {
        group_by_sls(shown.iter().copied())
            .into_iter()
            .flat_map(|(sls, runs)| {
                let label = if sls.is_empty() {
                    "(no SLS)".to_string()
                } else {
                    format!("SLS {sls}")
                };
                std::iter::once(Line::Sls(label)).chain(runs.into_iter().map(Line::State))
            })
            .collect()
    } else {
        shown.into_iter().map(Line::State).collect()
    };
    let mut states = 0;
    let body = lines
        .into_iter()
        .take_while(|l| {
            if matches!(l, Line::State(_)) {
                states += 1;
            }
            states <= limit
        })
        .map(|l| match l {
            Line::Sls(label) => view! {
                <tr class="sls-heading"><th colspan="8" scope="colgroup">{label}</th></tr>
            }
            .into_any(),
            Line::State(r) => state_row(r, view_as.output).into_any(),
        })
        .collect_view();
    view! {
        {hidden_note}
        <table class="states" aria-label="States">
            <thead><tr>
                <th>"#"</th><th>"Result"</th><th>"ID"</th><th>"Function"</th><th>"Name"</th>
                <th>"Comment"</th><th>"Duration"</th><th>"Changes"</th>
            </tr></thead>
            <tbody>{body}</tbody>
        </table>
    }
}

fn state_row(run: &StateRun, output: StateOutput) -> impl IntoView {
    let class = match run.result {
        StateResult::True => "state state-true",
        StateResult::False => "state state-false",
        StateResult::None => "state state-none",
    };
    let not_ran = run.state_ran == Some(false);
    let full = output.shows_full(run);
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
                <td class="terse-result">{terse_result(run)}</td>
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
            <td class="state-id">{run.id.clone()}</td>
            <td>{run.function.clone()}</td>
            <td class="state-name">{run.name.clone()}</td>
            <td><pre class="comment">{run.comment.clone()}</pre>
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
            Change::Diff(diff) => view! { <DiffView diff=diff/> }.into_any(),
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

/// A diff as a diff, folded when long: its first 64 KB of lines, coloured,
/// and "show all (5.0 MB)".
#[component]
fn DiffView(diff: String) -> impl IntoView {
    let size = diff.len();
    let whole = RwSignal::new(size <= FOLD_BYTES);
    let label = format!("show all ({})", human_bytes(size));
    let lines = move || {
        let mut budget = if whole.get() { usize::MAX } else { FOLD_BYTES };
        diff.lines()
            .take_while(|line| {
                let fits = budget > 0;
                budget = budget.saturating_sub(line.len() + 1);
                fits
            })
            .map(|line| {
                let class = match diff_line_kind(line) {
                    DiffLine::Added => "diff-add",
                    DiffLine::Removed => "diff-del",
                    DiffLine::Hunk => "diff-hunk",
                    DiffLine::Context => "diff-ctx",
                };
                view! { <span class=class>{format!("{line}\n")}</span> }
            })
            .collect_view()
    };
    view! {
        <pre class="diff">{lines}</pre>
        {move || (!whole.get()).then(|| {
            let label = label.clone();
            view! { <button type="button" class="show-all" on:click=move |_| whole.set(true)>{label}</button> }
        })}
    }
}
