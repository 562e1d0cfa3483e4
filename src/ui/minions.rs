use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};
use saltscope_core::model::Outcome;
use saltscope_core::query::filter::{encode_query, percent_encode};
use saltscope_core::query::minions::{LatestReturn, MinionSummary};
use saltscope_core::text::{utc_millis, utc_timestamp};

use super::error::{ErrorPanel, Notes};
use super::filter_bar::{use_job_filter, FilterBar, FilterFields};
use super::job_list::JobList;
use super::use_connection;
use crate::engine::Aborter;

/// Every minion that returned in the time range (`get_minions`).
#[component]
pub fn MinionsPage() -> impl IntoView {
    let connection = use_connection();
    let filter = use_job_filter();
    let query = use_query_map();
    let after = Memo::new(move |_| query.with(|q| q.get("after")));
    let aborter = StoredValue::new_local(Aborter::default());
    let page = LocalResource::new(move || {
        let f = filter.get().0;
        let after = after.get();
        let signal = aborter.try_update_value(Aborter::renew).flatten();
        async move {
            let engine = connection.await?;
            crate::api::minions(&engine, &f, after.as_deref(), signal.as_ref()).await
        }
    });
    let next_link = move |next: String| {
        let mut pairs = filter.get().0.to_query();
        pairs.push(("after", next));
        format!("/minions{}", encode_query(&pairs))
    };
    view! {
        <h1>"Minions"</h1>
        <FilterBar suggestions=Signal::derive(Vec::new) fields=FilterFields { jid: false, minion: true, outcome: true }/>
        {move || match page.get() {
            None => view! { <p class="loading">"Loading minions…"</p> }.into_any(),
            Some(Err(e)) => view! { <ErrorPanel error=e/> }.into_any(),
            Some(Ok(p)) => {
                let count = p.total_minions.map(|n| format!("{n} minions")).unwrap_or_default();
                let empty = p.minions.is_empty();
                view! {
                    <p class="count">{count}</p>
                    <Notes notes=p.notes/>
                    {empty.then(|| view! { <p class="notice">"No minion returned in this range."</p> })}
                    <table class="minions">
                        <thead><tr><th>"Minion"</th><th>"Last return"</th><th>"Jobs"</th><th>"Returns"</th><th>"Failed"</th><th>"Latest state run"</th></tr></thead>
                        <tbody>{p.minions.into_iter().map(minion_row).collect_view()}</tbody>
                    </table>
                    <nav class="pager">{p.next_after.map(|n| view! { <a href=next_link(n)>"More minions"</a> })}</nav>
                }.into_any()
            }
        }}
    }
}

fn minion_row(m: MinionSummary) -> impl IntoView {
    let href = format!("/minion/{}", percent_encode(&m.minion));
    view! {
        <tr>
            <td><a href=href>{m.minion.clone()}</a></td>
            <td>{m.last_return_ms.map(utc_millis).unwrap_or_default()}</td>
            <td>{m.jobs}</td>
            <td>{m.returns}</td>
            <td class:bad={m.failed > 0}>{m.failed}</td>
            <td>{m.latest_state_run.map(latest_cell)}</td>
        </tr>
    }
}

/// A latest return: its outcome, when, its state counts, and a link to it.
pub fn latest_cell(l: LatestReturn) -> impl IntoView {
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
        <a href=format!("/job/{}#minion-{}", percent_encode(&l.jid), percent_encode(&l.minion))>{format!("{} {when}", l.fun)}</a>
        {states}
    }
}

/// One minion's job history, with the job list's filters.
#[component]
pub fn MinionPage() -> impl IntoView {
    let params = use_params_map();
    let id = Memo::new(move |_| params.read().get("id").unwrap_or_default());
    view! {
        <h1>"Minion " <span class="minion-id">{move || id.get()}</span></h1>
        {move || view! { <JobList fixed_minion=Some(id.get())/> }}
    }
}
