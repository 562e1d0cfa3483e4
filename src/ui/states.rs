use std::sync::Arc;

use leptos::prelude::*;
use saltscope_core::model::output::{describe_changes, terse_result, Change, StateOutput};
use saltscope_core::model::{
    DiffLine, DiffRun, DiffRuns, HighstateSummary, ReturnData, ReturnDoc, StateLine, StateResult,
    StateRun, StateTableLines,
};
use saltscope_core::parts::ListParts;
use saltscope_core::route::StateView;
use saltscope_core::text::salt_duration;

use super::value::value_tree;
use super::visible::{drawn_once_asked, line_view, pre_view, show_all, FrameParts};

/// States to a chunk of the table: what one animation frame draws as the
/// person scrolls on. A chunk of 100 states of full output took 50-100 ms
/// here, a dropped frame or more each time; 25 fit in a frame.
const CHUNK_STATES: usize = 25;

/// Chunks drawn at once: the first screen (100 states).
const FIRST_CHUNKS: usize = 4;

/// Chunks one "show more" asks for: 500 states, drawn a chunk a frame.
const CHUNKS_ASKED: usize = 20;

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

/// A minion's states in run order, as the view asks, drawn in chunks: one
/// `<tbody>` per chunk, added a frame at a time as the person scrolls near
/// the end, the chunks above left as they are. A new mode draws a new table
/// from the top.
#[component]
pub fn StateTable(ret: Arc<ReturnDoc>, view_as: Memo<StateView>) -> impl IntoView {
    move || {
        let view_as = view_as.get();
        let table = Arc::new(StateTableLines::of(runs_of(&ret), view_as, CHUNK_STATES));
        let parts = FrameParts::new(table.parts().first_drawn(FIRST_CHUNKS).asking(CHUNKS_ASKED));
        let hidden_note = (view_as.problems_only && table.states() == 0)
            .then(|| view! { <p class="notice">"No failures and no changes."</p> });
        let (ret, output) = (ret.clone(), view_as.output);
        let first = parts.view(Arc::new(move |i| chunk_rows(&ret, &table, output, i)));
        view! {
            {hidden_note}
            <table class="states" aria-label="States">
                <thead><tr>
                    <th>"#"</th><th>"Result"</th><th>"ID"</th><th>"Function"</th><th>"Name"</th>
                    <th>"Comment"</th><th>"Duration"</th><th>"Changes"</th>
                </tr></thead>
                {first}
            </table>
            {parts.show_more("states")}
        }
    }
}

/// Chunk `i` of the state table: its SLS headings and states.
fn chunk_rows(ret: &ReturnDoc, table: &StateTableLines, output: StateOutput, i: usize) -> AnyView {
    let runs = runs_of(ret);
    let rows = table
        .chunk(i)
        .iter()
        .map(|line| match line {
            StateLine::Sls(sls) => {
                let label = if sls.is_empty() {
                    "(no SLS)".to_string()
                } else {
                    format!("SLS {sls}")
                };
                view! { <tr class="sls-heading"><th colspan="8" scope="colgroup">{label}</th></tr> }
                    .into_any()
            }
            StateLine::State(at) => state_row(&runs[*at], output).into_any(),
        })
        .collect_view();
    view! { <tbody>{rows}</tbody> }.into_any()
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
                <td class="state-id">{line_view(&run.id)}</td>
                <td>{run.function.clone()}</td>
                <td class="state-name">{line_view(&run.name)}</td>
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
            <td class="state-id">{line_view(&run.id)}</td>
            <td>{run.function.clone()}</td>
            <td class="state-name">{line_view(&run.name)}</td>
            <td>{pre_view(&run.comment, "comment")}
                {(!run.warnings.is_empty()).then(|| pre_view(&run.warnings.join("\n"), "warnings"))}</td>
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
            Change::Value { name, value } if name.is_empty() => value_tree(Arc::new(value)),
            Change::Value { name, value } => view! {
                <div class="change"><span class="key">{format!("{name}: ")}</span>{value_tree(Arc::new(value))}</div>
            }
            .into_any(),
        })
        .collect_view()
        .into_any()
}

/// A diff as a diff, folded when long: its first 64 KB, coloured, and
/// "show all (5.0 MB)", which draws the rest a part at a time (a 5 MB diff
/// drawn at once held the page for 4 s).
#[component]
fn DiffView(diff: String) -> impl IntoView {
    let diff: Arc<str> = diff.into();
    let cut = Arc::new(DiffRuns::of(&diff));
    let whole = RwSignal::new(!cut.is_folded());
    let first = diff_runs(&diff, &cut.runs[..cut.folded]);
    let bytes = diff.len();
    // Only a folded diff has a rest to draw.
    let rest = cut.is_folded().then(|| {
        let list = ListParts::new(cut.runs.len() - cut.folded, DIFF_RUNS_PER_PART);
        drawn_once_asked(
            whole,
            list,
            Arc::new(move |k| {
                let part = list.range(k);
                diff_runs(
                    &diff,
                    &cut.runs[cut.folded + part.start..cut.folded + part.end],
                )
            }),
        )
    });
    view! {
        <pre class="diff">{first}{rest}</pre>
        {show_all(bytes, whole)}
    }
}

/// Runs of a diff drawn in a frame once "show all" is asked: about 70 KB,
/// 15-20 ms a frame here.
const DIFF_RUNS_PER_PART: usize = 500;

/// A part of a diff: a block of its own in the `<pre>`, so drawing the next
/// part lays out only that part, not the whole text again.
fn diff_runs(diff: &str, runs: &[DiffRun]) -> AnyView {
    let spans = runs
        .iter()
        .map(|run| {
            let class = match run.kind {
                DiffLine::Added => "diff-add",
                DiffLine::Removed => "diff-del",
                DiffLine::Hunk => "diff-hunk",
                DiffLine::Context => "diff-ctx",
            };
            view! { <span class=class>{diff[run.range.clone()].to_string()}</span> }
        })
        .collect_view();
    view! { <span class="diff-part">{spans}</span> }.into_any()
}
