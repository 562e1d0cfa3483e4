//! SLS rollups and the slowest states of the fleet.

use std::sync::Arc;

use leptos::prelude::*;
use saltscope_core::query::failures::FailureFilter;
use saltscope_core::query::sls::{SlowState, SlsReport, SlsRollup};
use saltscope_core::route::link;
use saltscope_core::text::{fixed, percent};
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::location::use_query_map;
use super::scan::{ScanFilterBar, ScanProgressLine, ScanState};
use super::use_view;

#[component]
pub fn SlsPage() -> impl IntoView {
    let query = use_query_map();
    let filter = Memo::new(move |_| query.with(|q| FailureFilter::from_query(|k| q.get_str(k))));
    let scan = ScanState::new();
    let report = use_view(
        "sls",
        move || filter.get().0,
        move |engine, filter| async move {
            scan.start();
            let ctx = engine.context(None);
            views::sls(&engine.transport, &ctx, &filter, &scan.report()).await
        },
    );
    view! {
        <h1>"SLS"</h1>
        <ScanFilterBar filter=filter to=link::sls/>
        {move || match (report.error(), report.ok()) {
            (Some(e), _) => view! { <ErrorPanel error=e retry=report.retry()/> }.into_any(),
            (_, None) => view! { <ScanProgressLine state=scan what="state runs"/> }.into_any(),
            (_, Some(r)) => view! { <Rollups report=r/> }.into_any(),
        }}
    }
}

fn seconds(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{} s", fixed(ms / 1000.0, 1))
    } else {
        format!("{} ms", fixed(ms, 0))
    }
}

#[component]
fn Rollups(report: Arc<SlsReport>) -> impl IntoView {
    view! {
        <p class="count">{format!("{} SLS in {} state runs", report.rollups.len(), report.runs_read)}</p>
        <Notes notes=report.notes.clone()/>
        <table class="sls" aria-label="SLS">
            <thead><tr><th>"SLS"</th><th>"Runs"</th><th>"Failed"</th><th>"Changed"</th><th>"States"</th><th>"p50"</th><th>"p95"</th></tr></thead>
            <tbody>{report.rollups.iter().map(rollup_row).collect_view()}</tbody>
        </table>
        <h2>"Slowest states"</h2>
        <table class="slowest" aria-label="Slowest states">
            <thead><tr><th>"Took"</th><th>"State"</th><th>"SLS"</th><th>"Minion"</th><th>"Job"</th></tr></thead>
            <tbody>{report.slowest.iter().map(slow_row).collect_view()}</tbody>
        </table>
    }
}

fn rollup_row(r: &SlsRollup) -> impl IntoView {
    view! {
        <tr>
            <td>{r.sls.clone()}</td>
            <td>{r.runs}</td>
            <td class:bad={r.failed_runs > 0}>{format!("{} ({})", percent(r.failure_rate()), r.failed_runs)}</td>
            <td>{format!("{} ({})", percent(r.change_rate()), r.changed_runs)}</td>
            <td>{r.states}</td>
            <td>{seconds(r.p50_ms)}</td>
            <td>{seconds(r.p95_ms)}</td>
        </tr>
    }
}

fn slow_row(s: &SlowState) -> impl IntoView {
    view! {
        <tr>
            <td>{seconds(s.duration_ms)}</td>
            <td>{format!("{} ({})", s.state_id, s.function)}</td>
            <td>{s.sls.clone().unwrap_or_default()}</td>
            <td><a href=link::minion(&s.minion)>{s.minion.clone()}</a></td>
            <td><a href=link::job_minion(&s.jid, &s.minion)>{s.jid.clone()}</a></td>
        </tr>
    }
}
