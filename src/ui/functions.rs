use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};
use saltscope_core::model::Outcome;
use saltscope_core::query::filter::{encode_query, percent_encode};
use saltscope_core::query::functions::FunctionStats;
use saltscope_core::text::utc_millis;

use super::error::{ErrorPanel, Notes};
use super::filter_bar::{use_job_filter, FilterBar, FilterFields};
use super::minions::latest_cell;
use super::use_connection;
use crate::engine::Aborter;

/// Every function in the time range with its failure rate (`get_fun`).
#[component]
pub fn FunctionsPage() -> impl IntoView {
    let connection = use_connection();
    let filter = use_job_filter();
    let aborter = StoredValue::new_local(Aborter::default());
    let page = LocalResource::new(move || {
        let f = filter.get().0;
        let signal = aborter.try_update_value(Aborter::renew).flatten();
        async move {
            let engine = connection.await?;
            crate::api::functions(&engine, &f, signal.as_ref()).await
        }
    });
    let query_tail = move || encode_query(&filter.get().0.to_query());
    view! {
        <h1>"Functions"</h1>
        <FilterBar suggestions=Signal::derive(Vec::new) fields=FilterFields { jid: false, minion: true, outcome: false }/>
        {move || match page.get() {
            None => view! { <p class="loading">"Loading functions…"</p> }.into_any(),
            Some(Err(e)) => view! { <ErrorPanel error=e/> }.into_any(),
            Some(Ok(p)) => {
                let tail = query_tail();
                view! {
                    <Notes notes=p.notes/>
                    {p.functions.is_empty().then(|| view! { <p class="notice">"No returns in this range."</p> })}
                    <table class="functions">
                        <thead><tr><th>"Function"</th><th>"Returns"</th><th>"Jobs"</th><th>"Failed"</th><th>"Failure rate"</th><th>"Last return"</th><th></th></tr></thead>
                        <tbody>{p.functions.into_iter().map(|f| function_row(f, &tail)).collect_view()}</tbody>
                    </table>
                }.into_any()
            }
        }}
    }
}

fn function_row(f: FunctionStats, tail: &str) -> impl IntoView {
    let rate = match f.failure_rate() {
        Some(r) => format!("{:.1} %", r * 100.0),
        None => "runner".into(),
    };
    let jobs_href = format!("/?fun={}", percent_encode(&f.fun));
    view! {
        <tr>
            <td><a href=format!("/function/{}{tail}", percent_encode(&f.fun))>{f.fun.clone()}</a></td>
            <td>{f.returns}</td>
            <td>{f.jobs}</td>
            <td class:bad={f.failed > 0 && !f.runner}>{if f.runner { String::new() } else { f.failed.to_string() }}</td>
            <td>{rate}</td>
            <td>{f.last_return_ms.map(utc_millis).unwrap_or_default()}</td>
            <td><a href=jobs_href>"jobs"</a></td>
        </tr>
    }
}

/// One function's latest return on every minion: which are failing now.
#[component]
pub fn FunctionPage() -> impl IntoView {
    let connection = use_connection();
    let params = use_params_map();
    let query = use_query_map();
    let fun = Memo::new(move |_| params.read().get("fun").unwrap_or_default());
    let filter = use_job_filter();
    let after = Memo::new(move |_| query.with(|q| q.get("after")));
    let failing_only = Memo::new(move |_| query.with(|q| q.get("failing").as_deref() == Some("1")));
    let aborter = StoredValue::new_local(Aborter::default());
    let page = LocalResource::new(move || {
        let (fun, f, after) = (fun.get(), filter.get().0, after.get());
        let signal = aborter.try_update_value(Aborter::renew).flatten();
        async move {
            let engine = connection.await?;
            crate::api::latest_by_minion(&engine, &fun, &f, after.as_deref(), signal.as_ref()).await
        }
    });
    let link = move |failing: bool, after: Option<String>| {
        let mut pairs = filter.get().0.to_query();
        pairs.retain(|(k, _)| *k != "fun");
        if failing {
            pairs.push(("failing", "1".into()));
        }
        pairs.extend(after.map(|a| ("after", a)));
        format!(
            "/function/{}{}",
            percent_encode(&fun.get()),
            encode_query(&pairs)
        )
    };
    view! {
        <h1>"Latest " <span class="fun">{move || fun.get()}</span> " on every minion"</h1>
        <FilterBar suggestions=Signal::derive(Vec::new) fields=FilterFields { jid: false, minion: true, outcome: false }/>
        {move || match page.get() {
            None => view! { <p class="loading">"Loading…"</p> }.into_any(),
            Some(Err(e)) => view! { <ErrorPanel error=e/> }.into_any(),
            Some(Ok(p)) => {
                let summary = format!("{} minions, {} failing now", p.latest.len(), p.failing_now());
                let only = failing_only.get();
                let rows = p.latest.into_iter().filter(|l| !only || l.outcome == Outcome::Failed).map(|l| {
                    let minion = l.minion.clone();
                    view! { <tr><td><a href=format!("/minion/{}", percent_encode(&minion))>{minion.clone()}</a></td><td>{latest_cell(l)}</td></tr> }
                }).collect_view();
                view! {
                    <p class="count">{summary}
                        " · " <a href=link(!only, None)>{if only { "show all minions" } else { "show failing only" }}</a></p>
                    <Notes notes=p.notes/>
                    <table class="latest">
                        <thead><tr><th>"Minion"</th><th>"Latest return"</th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                    <nav class="pager">{p.next_after.map(|n| view! { <a href=link(only, Some(n))>"More minions"</a> })}</nav>
                }.into_any()
            }
        }}
    }
}
