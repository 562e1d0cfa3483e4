use leptos::prelude::*;
use saltscope_core::query::filter::{JobFilter, TimeRange};
use saltscope_core::query::functions::FunctionStats;
use saltscope_core::query::minions::LatestOf;
use saltscope_core::route::{link, param};
use saltscope_core::text::{counted, fixed, line_shown};
use saltscope_core::time::utc_millis;
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::filter_bar::{use_job_filter, FilterBar, FilterFields};
use super::location::use_query_map;
use super::minions::latest_cell;
use super::prefs::use_prefs;
use super::use_view;

/// Every function in the time range with its failure rate (`get_fun`).
#[component]
pub fn FunctionsPage() -> impl IntoView {
    let filter = use_job_filter();
    let prefs = use_prefs();
    let page = use_view(
        "functions",
        move || (filter.get().0, prefs.noisy.get()),
        |engine, (filter, noisy)| async move {
            let ctx = engine.context(noisy);
            views::functions(&engine.transport, &ctx, &filter).await
        },
    );
    view! {
        <h1>"Functions"</h1>
        <FilterBar suggestions=Signal::derive(Vec::new) fields=FilterFields { jid: false, minion: true, function: true, outcome: false }/>
        {move || match (page.error(), page.ok()) {
            (Some(e), _) => view! { <ErrorPanel error=e retry=page.retry()/> }.into_any(),
            (_, None) => view! { <p class="loading">"Loading functions…"</p> }.into_any(),
            (_, Some(p)) => {
                let current = filter.get().0;
                view! {
                    <Notes notes=p.notes.clone()/>
                    {p.functions.is_empty().then(|| view! { <p class="notice">"No returns in this range."</p> })}
                    <table class="functions" aria-label="Functions">
                        <thead><tr><th>"Function"</th><th>"Returns"</th><th>"Jobs"</th><th>"Failed"</th><th>"Failure rate"</th><th>"Last return"</th><th><span class="visually-hidden">"Jobs of this function"</span></th></tr></thead>
                        <tbody>{p.functions.iter().map(|f| function_row(f, &current)).collect_view()}</tbody>
                    </table>
                }.into_any()
            }
        }}
    }
}

fn function_row(f: &FunctionStats, filter: &JobFilter) -> impl IntoView {
    let rate = f
        .failure_rate()
        .map(|r| format!("{} %", fixed(r * 100.0, 1)))
        .unwrap_or_default();
    view! {
        <tr>
            <td><a href=link::function(&f.fun, filter, false, None)>{f.fun.clone()}</a></td>
            <td>{f.returns}</td>
            <td>{f.jobs}</td>
            <td class:bad={f.failed > 0}>{f.failed}</td>
            <td>{rate}</td>
            <td>{f.last_return_ms.map(utc_millis).unwrap_or_default()}</td>
            <td><a href=link::function_jobs(&f.fun, filter) aria-label=format!("jobs of {}", f.fun)>"jobs"</a></td>
        </tr>
    }
}

/// One function's latest return on every minion: which are failing now.
#[component]
pub fn FunctionPage(fun: String) -> impl IntoView {
    let query = use_query_map();
    // A new path draws a new page: the function is fixed for this one.
    let fun = Signal::stored(fun);
    let filter = use_job_filter();
    let after = Memo::new(move |_| query.with(|q| q.get(param::AFTER)));
    let failing_only =
        Memo::new(move |_| query.with(|q| q.get(param::FAILING).as_deref() == Some("1")));
    let page = use_view(
        "function",
        move || (fun.get(), filter.get().0, failing_only.get(), after.get()),
        |engine, (fun, filter, failing, after)| async move {
            let ctx = engine.context(None);
            let which = if failing {
                LatestOf::Failing
            } else {
                LatestOf::Every
            };
            views::latest_by_minion(
                &engine.transport,
                &ctx,
                &fun,
                &filter,
                which,
                after.as_deref(),
            )
            .await
        },
    );
    let href = move |failing: bool, after: Option<String>| {
        link::function(&fun.get(), &filter.get().0, failing, after.as_deref())
    };
    view! {
        <h1>"Latest " <span class="fun">{move || line_shown(&fun.get())}</span> " on every minion"</h1>
        <FilterBar suggestions=Signal::derive(Vec::new) fields=FilterFields { jid: false, minion: true, function: false, outcome: false }/>
        {move || match (page.error(), page.ok()) {
            (Some(e), _) => view! { <ErrorPanel error=e retry=page.retry()/> }.into_any(),
            (_, None) => view! { <p class="loading">"Loading…"</p> }.into_any(),
            // A name no minion ran (a typo, or outside the time range).
            (_, Some(p)) if p.latest.is_empty() && !failing_only.get() => view! {
                <p class="notice">"No minion returned " {fun.get()}
                    {if filter.get().0.time == TimeRange::All { ". Find the function among " } else { " in this time range. Widen it, or find the function among " }}
                    <a href=link::functions(&filter.get().0)>"every function"</a>"."</p>
            }.into_any(),
            (_, Some(p)) => {
                let summary = format!("{}, {} failing now", counted(p.minions.unwrap_or(p.latest.len() as u64), "minion"), p.failing_now);
                let only = failing_only.get();
                let rows = p.latest.iter().map(|l| {
                    view! { <tr><td><a href=link::minion(&l.minion)>{l.minion.clone()}</a></td><td>{latest_cell(l)}</td></tr> }
                }).collect_view();
                let next = p.next_after.clone();
                view! {
                    <p class="count">{summary}
                        {(only || p.failing_now > 0).then(|| view! {
                            " · " <a href=href(!only, None)>{if only { "show all minions" } else { "show failing only" }}</a>
                        })}</p>
                    <Notes notes=p.notes.clone()/>
                    <table class="latest" aria-label="Latest returns">
                        <thead><tr><th>"Minion"</th><th>"Latest return"</th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                    <nav class="pager" aria-label="Pages">{next.map(|n| view! { <a href=href(only, Some(n))>"More minions"</a> })}</nav>
                }.into_any()
            }
        }}
    }
}
