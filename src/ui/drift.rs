//! States that change every run: not idempotent, ranked by minions.

use std::sync::Arc;

use leptos::html::Input;
use leptos::prelude::*;
use saltscope_core::query::drift::{DriftFilter, DriftReport, DriftingState};
use saltscope_core::route::link;
use saltscope_core::text::counted;
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::location::{use_navigate, use_query_map, NavigateOptions};
use super::use_view;
use super::visible::line_view;

/// Runs linked per state: the rest are counted.
const RUN_LINKS: usize = 10;

#[component]
pub fn DriftPage() -> impl IntoView {
    let query = use_query_map();
    let navigate = use_navigate();
    let filter = Memo::new(move |_| query.with(|q| DriftFilter::from_query(|k| q.get_str(k))));
    let report = use_view(
        "drift",
        move || filter.get().0,
        |engine, filter| async move {
            let ctx = engine.context(None);
            views::drift(&engine.transport, &ctx, &filter).await
        },
    );
    let (runs, changed, minion) = (
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
    );
    let apply = UnsyncCallback::new(move |()| {
        let v = |r: NodeRef<Input>| r.get_untracked().map(|e| e.value()).unwrap_or_default();
        let (runs, changed, minion) = (v(runs), v(changed), v(minion));
        let (next, _) = DriftFilter::from_query(|k| match k {
            "runs" => Some(runs.as_str()),
            "changed" => Some(changed.as_str()),
            "minion" => Some(minion.as_str()),
            _ => None,
        });
        navigate(
            &link::drift(&next),
            NavigateOptions {
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    });
    let current = move || filter.get().0;
    view! {
        <h1>"States that change every run"</h1>
        <form class="filter-bar" role="search" aria-label="Filter" on:submit=move |ev| { ev.prevent_default(); apply.run(()); }>
            <label>"Last runs " <input node_ref=runs name="runs" type="number" min="1" max="20" prop:value=move || current().runs.to_string()/></label>
            <label>"Changed in at least " <input node_ref=changed name="changed" type="number" min="1" max="20" prop:value=move || current().changed_in.to_string()/></label>
            <label>"Minion " <input node_ref=minion name="minion" placeholder="web*, db-02" prop:value=move || current().minions.join(",")/></label>
            <button type="submit">"Apply"</button>
        </form>
        {move || (!filter.get().1.is_empty()).then(|| view! { <Notes notes=filter.get().1/> })}
        {move || match (report.error(), report.ok()) {
            (Some(e), _) => view! { <ErrorPanel error=e retry=report.retry()/> }.into_any(),
            (_, None) => view! { <p class="loading">"Reading each minion's last state runs…"</p> }.into_any(),
            (_, Some(r)) => view! { <Drifting report=r filter=current()/> }.into_any(),
        }}
    }
}

#[component]
fn Drifting(report: Arc<DriftReport>, filter: DriftFilter) -> impl IntoView {
    let count = format!(
        "{} changed in at least {} of the last {} (or in every one that ran it, where fewer did), over {} ({} with fewer runs than that)",
        counted(report.states.len() as u64, "state"),
        filter.changed_in,
        counted(u64::from(filter.runs), "state run"),
        counted(report.minions, "minion"),
        report.too_few_runs
    );
    view! {
        <p class="count">{count}</p>
        {report.computed_from.as_ref().map(|c| view! { <p class="hint">{c.describe()}</p> })}
        <Notes notes=report.notes.clone()/>
        {report.states.is_empty().then(|| view! { <p class="notice">"Every state is idempotent over these runs."</p> })}
        <table class="drift" aria-label="Changing states">
            <thead><tr><th>"State"</th><th>"Function"</th><th>"SLS"</th><th>"Minions"</th><th>"What changes"</th><th>"Latest runs"</th></tr></thead>
            <tbody>{report.states.iter().map(drift_row).collect_view()}</tbody>
        </table>
    }
}

/// Each minion's newest run that changed the state.
fn run_links(runs: &[(&String, &String)]) -> impl IntoView {
    runs.iter()
        .map(|(minion, jid)| view! { <a href=link::job_minion(jid, minion)>{(*minion).clone()}</a>" " })
        .collect_view()
}

fn drift_row(s: &DriftingState) -> impl IntoView {
    let runs: Vec<(&String, &String)> = s.minions.iter().collect();
    let shown = runs.len().min(RUN_LINKS);
    let more = runs.len() - shown;
    view! {
        <tr>
            <td>{s.state_id.clone()}<div class="comment">{line_view(&s.name)}</div></td>
            <td>{s.function.clone()}</td>
            <td>{s.sls.clone().unwrap_or_default()}</td>
            <td>{s.minions.len()}</td>
            <td>{s.change_keys.join(", ")}</td>
            <td>
                {run_links(&runs[..shown])}
                // The rest on request: a state can drift on the whole fleet.
                {(more > 0).then(|| view! {
                    <details class="more-runs"><summary>{format!("and {more} more")}</summary>{run_links(&runs[shown..])}</details>
                })}
            </td>
        </tr>
    }
}
