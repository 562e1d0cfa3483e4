//! Two state runs side by side: what differs, state by state.

use std::sync::Arc;

use leptos::html::Input;
use leptos::prelude::*;
use saltscope_core::engine::EngineError;
use saltscope_core::model::{ReturnDoc, StateRun};
use saltscope_core::parts::ListParts;
use saltscope_core::query::compare::{
    CompareRequest, Difference, RunComparison, RunRef, Side, StateComparison,
};
use saltscope_core::route::link;
use saltscope_core::text::fixed;
use saltscope_core::time::utc_timestamp;
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::location::{use_navigate, use_query_map, NavigateOptions};
use super::use_view;
use super::visible::{pre_view, FrameParts};

/// Rows of the comparison drawn in one part (a frame).
const ROWS_PER_PART: usize = 200;

#[component]
pub fn ComparePage() -> impl IntoView {
    let query = use_query_map();
    let navigate = use_navigate();
    let request = Memo::new(move |_| query.with(|q| CompareRequest::from_query(|k| q.get_str(k))));
    let asked = Memo::new(move |_| request.get().ok());
    let comparison = use_view(
        "compare",
        move || asked.get(),
        |engine, asked| async move {
            let ctx = engine.context(None);
            match asked {
                Some(r) => views::compare(&engine.transport, &ctx, &r).await.map(Some),
                None => Ok(None),
            }
        },
    );
    let (a, b) = (NodeRef::<Input>::new(), NodeRef::<Input>::new());
    let apply = UnsyncCallback::new(move |()| {
        let v = |r: NodeRef<Input>| r.get_untracked().map(|e| e.value()).unwrap_or_default();
        let (mut a, mut b) = (v(a), v(b));
        // B alone: B and the run before it, which the address names as `a`.
        if a.trim().is_empty() {
            std::mem::swap(&mut a, &mut b);
        }
        let read = CompareRequest::from_query(|k| match k {
            "a" => Some(a.as_str()),
            "b" => Some(b.as_str()),
            _ => None,
        });
        if let Ok(next) = read {
            navigate(&link::compare(&next), NavigateOptions::default());
        }
    });
    // The fields say what the comparison calls A and B: with one run named,
    // it is B and A the run before it, once read.
    let current = move |side: Side| {
        let r = request.get().ok()?;
        match (side, r.b) {
            (Side::A, Some(_)) => Some(r.a.to_param()),
            (Side::B, Some(b)) => Some(b.to_param()),
            (Side::A, None) => comparison
                .ok()
                .and_then(|c| c.as_ref().as_ref().map(|c| RunRef::of(&c.a).to_param())),
            (Side::B, None) => Some(r.a.to_param()),
        }
    };
    view! {
        <h1>"Compare state runs"</h1>
        <form class="filter-bar" role="search" aria-label="Runs" on:submit=move |ev| { ev.prevent_default(); apply.run(()); }>
            <label class="wide">"Run A " <input node_ref=a name="a" placeholder="empty: B's previous run" prop:value=move || current(Side::A).unwrap_or_default()/></label>
            <label class="wide">"Run B " <input node_ref=b name="b" placeholder="<jid>:<minion>" prop:value=move || current(Side::B).unwrap_or_default()/></label>
            <button type="submit">"Compare"</button>
        </form>
        {move || request.get().err().map(|e| view! { <p class="notice" role="alert">{e}</p> })}
        {move || match (comparison.error(), comparison.ok()) {
            // No such run, or none before it: said, nothing to retry.
            (Some(EngineError::NotFound { what }), _) => view! { <p class="notice" role="status">{what}</p> }.into_any(),
            (Some(e), _) => view! { <ErrorPanel error=e retry=comparison.retry()/> }.into_any(),
            (_, None) => view! { <p class="loading">"Reading both runs…"</p> }.into_any(),
            (_, Some(c)) => match &*c {
                Some(c) => view! { <Comparison c=c.clone() named_one=asked.get().is_some_and(|r| r.b.is_none())/> }.into_any(),
                None => ().into_any(),
            },
        }}
    }
}

fn run_line(label: &'static str, doc: &ReturnDoc) -> impl IntoView {
    let when = doc
        .timestamp
        .as_deref()
        .map(utc_timestamp)
        .unwrap_or_default();
    view! {
        <li>
            <strong>{label}</strong>" "
            <a href=link::job_minion(&doc.jid, &doc.minion)>{format!("{} {} on {}", doc.fun, doc.jid, doc.minion)}</a>
            {format!(" · {when}")}
        </li>
    }
}

#[component]
fn Comparison(
    c: RunComparison,
    /// The address named one run: it is B, the run before it A.
    named_one: bool,
) -> impl IntoView {
    let c = Arc::new(c);
    let differ = c.count(|s| matches!(s, StateComparison::Differs { .. }));
    let only =
        |side| c.count(|s| matches!(s, StateComparison::OnlyIn { side: x, .. } if *x == side));
    let summary = format!(
        "{differ} differ · {} only in A · {} only in B · {} identical (folded)",
        only(Side::A),
        only(Side::B),
        c.identical
    );
    // One step back in the minion's history: from the run before the one
    // named (comparing the named one again would be this page).
    let (back_label, from) = match named_one {
        true => ("Compare A with its previous run", &c.a),
        false => ("Compare B with its previous run", &c.b),
    };
    let back = CompareRequest {
        a: RunRef::of(from),
        b: None,
    };
    // Two runs of 10,000 states can differ in all of them: drawn in parts,
    // as the states table is.
    let cut = ListParts::new(c.states.len(), ROWS_PER_PART);
    let parts = FrameParts::new(cut);
    let rows = parts.view({
        let c = c.clone();
        Arc::new(move |k| {
            let part = c.states[cut.range(k)].iter();
            view! { <tbody>{part.map(comparison_row).collect_view()}</tbody> }.into_any()
        })
    });
    view! {
        <ul class="compare-runs" aria-label="Runs compared">
            {run_line("A", &c.a)}
            {run_line("B", &c.b)}
        </ul>
        {named_one.then(|| view! { <p class="hint">"B is the run asked for, A the state run before it on that minion."</p> })}
        <p class="count">{summary}</p>
        <p><a href=link::compare(&back)>{back_label}</a></p>
        <Notes notes=c.notes.clone()/>
        {c.states.is_empty().then(|| view! { <p class="notice">"The two runs did the same."</p> })}
        <table class="compare" aria-label="Differences">
            <thead><tr><th>"State"</th><th>"What differs"</th><th>"A"</th><th>"B"</th></tr></thead>
            {rows}
        </table>
        {parts.show_more("states")}
    }
}

fn state_name(run: &StateRun) -> String {
    format!("{} ({})", run.id, run.function)
}

fn state_cell(run: &StateRun) -> impl IntoView {
    let changes = if run.changed() { " · changed" } else { "" };
    view! {
        <td>
            <span class=format!("result-{}", run.result.label().to_ascii_lowercase())>{run.result.label()}</span>
            {changes}
            {pre_view(&run.comment, "comment")}
        </td>
    }
}

fn difference_text(d: &Difference) -> String {
    match d {
        Difference::Function(a, b) => format!("{a} → {b}"),
        Difference::Result(a, b) => format!("result {} → {}", a.label(), b.label()),
        Difference::ChangesAppeared => "changes appeared".into(),
        Difference::ChangesGone => "no changes any more".into(),
        Difference::ChangesDiffer => "other changes".into(),
        Difference::Comment => "comment".into(),
        Difference::Duration(a, b) => format!("took {} ms → {} ms", fixed(*a, 0), fixed(*b, 0)),
    }
}

fn comparison_row(s: &StateComparison) -> impl IntoView {
    match s {
        StateComparison::OnlyIn { side, run } => {
            let (word, a, b) = match side {
                Side::A => ("only in A", Some(state_cell(run)), None),
                Side::B => ("only in B", None, Some(state_cell(run))),
            };
            view! {
                <tr class="compare-only">
                    <td>{state_name(run)}</td><td>{word}</td>
                    {a.map(IntoAny::into_any).unwrap_or_else(|| view! { <td></td> }.into_any())}
                    {b.map(IntoAny::into_any).unwrap_or_else(|| view! { <td></td> }.into_any())}
                </tr>
            }
            .into_any()
        }
        StateComparison::Differs { a, b, differences } => {
            let what = differences
                .iter()
                .map(difference_text)
                .collect::<Vec<_>>()
                .join(", ");
            view! {
                <tr class="compare-differs">
                    <td>{state_name(b)}</td><td>{what}</td>{state_cell(a)}{state_cell(b)}
                </tr>
            }
            .into_any()
        }
    }
}
