use leptos::prelude::*;
use saltscope_core::model::Outcome;
use saltscope_core::query::filter::JobFilter;
use saltscope_core::query::minions::{LatestReturn, MinionSummary};
use saltscope_core::route::{link, param};
use saltscope_core::text::{counted, line_shown};
use saltscope_core::time::{utc_millis, utc_timestamp};
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::filter_bar::{use_job_filter, FilterBar, FilterFields};
use super::job_list::JobList;
use super::location::use_query_map;
use super::prefs::use_prefs;
use super::use_view;

/// Every minion that returned in the time range (`get_minions`).
#[component]
pub fn MinionsPage() -> impl IntoView {
    let filter = use_job_filter();
    let query = use_query_map();
    let prefs = use_prefs();
    let after = Memo::new(move |_| query.with(|q| q.get(param::AFTER)));
    let page = use_view(
        "minions",
        move || (filter.get().0, after.get(), prefs.noisy.get()),
        |engine, (filter, after, noisy)| async move {
            let ctx = engine.context(noisy);
            views::minions(&engine.transport, &ctx, &filter, after.as_deref()).await
        },
    );
    let next_link = move |next: String| link::minions(&filter.get().0, Some(&next));
    view! {
        <h1>"Minions"</h1>
        <FilterBar suggestions=Signal::derive(Vec::new) fields=FilterFields { jid: false, minion: true, function: true, outcome: true }/>
        {move || match (page.error(), page.ok()) {
            (Some(e), _) => view! { <ErrorPanel error=e retry=page.retry()/> }.into_any(),
            (_, None) => view! { <p class="loading">"Loading minions…"</p> }.into_any(),
            (_, Some(p)) => {
                let count = p.total_minions.map(|n| counted(n, "minion")).unwrap_or_default();
                let next = p.next_after.clone();
                view! {
                    <p class="count">{count}</p>
                    <Notes notes=p.notes.clone()/>
                    {p.minions.is_empty().then(|| view! { <p class="notice">"No minion returned in this range."</p> })}
                    <table class="minions" aria-label="Minions">
                        <thead><tr><th>"Minion"</th><th>"Last return"</th><th>"Jobs"</th><th>"Returns"</th><th>"Failed"</th><th>"Latest state run"</th></tr></thead>
                        <tbody>{p.minions.iter().map(|m| minion_row(m, &filter.get_untracked().0)).collect_view()}</tbody>
                    </table>
                    <nav class="pager" aria-label="Pages">{next.map(|n| view! { <a href=next_link(n)>"More minions"</a> })}</nav>
                }.into_any()
            }
        }}
    }
}

fn minion_row(m: &MinionSummary, filter: &JobFilter) -> impl IntoView {
    view! {
        <tr>
            <td><a href=link::minion_in(&m.minion, filter)>{m.minion.clone()}</a></td>
            <td>{m.last_return_ms.map(utc_millis).unwrap_or_default()}</td>
            <td>{m.jobs}</td>
            <td>{m.returns}</td>
            <td class:bad={m.failed > 0}>{m.failed}</td>
            <td>{m.latest_state_run.as_ref().map(latest_cell)}</td>
        </tr>
    }
}

/// A latest return: its outcome, when, its state counts, and a link to it.
pub fn latest_cell(l: &LatestReturn) -> impl IntoView {
    let (class, word) = match l.outcome {
        Outcome::Succeeded => ("outcome outcome-succeeded", "Succeeded"),
        Outcome::Failed => ("outcome outcome-failed", "Failed"),
        Outcome::Runner => ("outcome outcome-runner", "Runner"),
    };
    let states = l
        .states
        .map(|(ok, bad)| format!(" · {ok} succeeded, {bad} failed"))
        .unwrap_or_default();
    let when = l
        .timestamp
        .as_deref()
        .map(utc_timestamp)
        .unwrap_or_default();
    view! {
        <span class=class>{word}</span>
        " "
        <a href=link::job_minion(&l.jid, &l.minion)>{format!("{} {when}", l.fun)}</a>
        {states}
    }
}

/// One minion's job history, with the job list's filters.
#[component]
pub fn MinionPage(id: String) -> impl IntoView {
    view! {
        <h1>"Minion " <span class="minion-id">{line_shown(&id)}</span></h1>
        <JobList fixed_minion=Some(id)/>
    }
}
