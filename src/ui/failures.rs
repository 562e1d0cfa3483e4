//! Failure patterns: the same failure on many minions is one line.

use std::sync::Arc;

use leptos::prelude::*;
use saltscope_core::query::failures::{FailureFilter, FailurePattern, FailureReport};
use saltscope_core::route::link;
use saltscope_core::time::utc_millis;
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::location::use_query_map;
use super::scan::{ScanFilterBar, ScanProgressLine, ScanState};
use super::use_view;
use super::visible::pre_view;

#[component]
pub fn FailuresPage() -> impl IntoView {
    let query = use_query_map();
    let filter = Memo::new(move |_| query.with(|q| FailureFilter::from_query(|k| q.get_str(k))));
    let scan = ScanState::new();
    let report = use_view(
        "failures",
        move || filter.get().0,
        move |engine, filter| async move {
            scan.start();
            let ctx = engine.context(None);
            views::failures(&engine.transport, &ctx, &filter, &scan.report()).await
        },
    );
    view! {
        <h1>"Failure patterns"</h1>
        <ScanFilterBar filter=filter to=link::failures/>
        {move || match (report.error(), report.ok()) {
            (Some(e), _) => view! { <ErrorPanel error=e retry=report.retry()/> }.into_any(),
            (_, None) => view! { <ScanProgressLine state=scan what="failed state runs"/> }.into_any(),
            (_, Some(r)) => view! { <Patterns report=r/> }.into_any(),
        }}
    }
}

#[component]
fn Patterns(report: Arc<FailureReport>) -> impl IntoView {
    let count = format!(
        "{} patterns in {} failed state runs",
        report.patterns.len(),
        report.runs_read
    );
    view! {
        <p class="count">{count}</p>
        <Notes notes=report.notes.clone()/>
        {report.patterns.is_empty().then(|| view! { <p class="notice">"No state failed in this range."</p> })}
        <table class="failures" aria-label="Failure patterns">
            <thead><tr><th>"Minions"</th><th>"Function"</th><th>"Failure"</th><th>"Seen"</th><th>"First"</th><th>"Last"</th><th>"Example"</th><th>"Jobs"</th></tr></thead>
            <tbody>{report.patterns.iter().map(pattern_row).collect_view()}</tbody>
        </table>
    }
}

fn pattern_row(p: &FailurePattern) -> impl IntoView {
    let minions = p.minions.iter().cloned().collect::<Vec<_>>().join(", ");
    let example = &p.example;
    view! {
        <tr>
            <td>{p.minions.len()}<div class="minion-list">{minions}</div></td>
            <td>{p.function.clone()}</td>
            <td><code class="pattern">{p.pattern.clone()}</code></td>
            <td>{p.occurrences}</td>
            <td>{p.first_ms.map(utc_millis).unwrap_or_default()}</td>
            <td>{p.last_ms.map(utc_millis).unwrap_or_default()}</td>
            <td>
                <a href=link::job_minion(&example.jid, &example.minion)>{format!("{} on {}", example.state_id, example.minion)}</a>
                {pre_view(&example.comment, "comment")}
            </td>
            <td>
                {p.jids.iter().map(|j| view! { <a href=link::job(j)>{j.clone()}</a>" " }).collect_view()}
                {(p.jobs.len() > p.jids.len()).then(|| format!("and {} more jobs", p.jobs.len() - p.jids.len()))}
            </td>
        </tr>
    }
}
