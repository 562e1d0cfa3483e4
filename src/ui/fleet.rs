//! Fleet status: every minion's standing from its latest state run, as a
//! bar of counts and the list, worst first.

use leptos::html::Input;
use leptos::prelude::*;
use std::sync::Arc;

use saltscope_core::query::fleet::{FleetFilter, FleetMinion, FleetReport, FleetStatus};
use saltscope_core::route::{link, param};
use saltscope_core::text::{counted, fixed};
use saltscope_core::time::{utc_millis, utc_timestamp};
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::location::{use_navigate, use_query_map, NavigateOptions};
use super::use_view;

#[component]
pub fn FleetPage() -> impl IntoView {
    let query = use_query_map();
    let navigate = use_navigate();
    let filter = Memo::new(move |_| query.with(|q| FleetFilter::from_query(|k| q.get_str(k))));
    // Only the minion globs go to the engine; SLS and standing are picked
    // from the same report in the tab.
    let minions = Memo::new(move |_| filter.get().0.minions);
    let report = use_view(
        "fleet",
        move || minions.get(),
        |engine, minions| async move {
            let ctx = engine.context(None);
            let asked = FleetFilter {
                minions,
                ..FleetFilter::default()
            };
            views::fleet(&engine.transport, &ctx, &asked).await
        },
    );
    let (minion, sls) = (NodeRef::<Input>::new(), NodeRef::<Input>::new());
    let apply = UnsyncCallback::new(move |()| {
        let v = |r: NodeRef<Input>| r.get_untracked().map(|e| e.value()).unwrap_or_default();
        let pairs = [(param::MINION, v(minion)), (param::SLS, v(sls))];
        let (mut next, _) = FleetFilter::from_query(|k| {
            pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str())
        });
        next.status = filter.get_untracked().0.status;
        navigate(
            &link::fleet(&next),
            NavigateOptions {
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    });
    let current = move || filter.get().0;
    view! {
        <h1>"Fleet"</h1>
        <form class="filter-bar" role="search" aria-label="Filter" on:submit=move |ev| { ev.prevent_default(); apply.run(()); }>
            <label>"Minion " <input node_ref=minion name="minion" placeholder="web*, db-02" prop:value=move || current().minions.join(",")/></label>
            <label>"SLS " <input node_ref=sls name="sls" placeholder="nginx*" prop:value=move || current().sls.unwrap_or_default()/></label>
            <button type="submit">"Apply"</button>
        </form>
        {move || (!filter.get().1.is_empty()).then(|| view! { <Notes notes=filter.get().1/> })}
        {move || match (report.error(), report.ok()) {
            (Some(e), _) => view! { <ErrorPanel error=e retry=report.retry()/> }.into_any(),
            (_, None) => view! { <p class="loading">"Reading every minion's latest state run…"</p> }.into_any(),
            (_, Some(r)) => view! { <FleetView report=r filter=current()/> }.into_any(),
        }}
    }
}

#[component]
fn FleetView(report: Arc<FleetReport>, filter: FleetFilter) -> impl IntoView {
    let picked = report.select(&filter);
    let total = picked.total();
    let chosen = filter.status;
    let segment = |(status, n): (FleetStatus, usize)| {
        let to = FleetFilter {
            status: (chosen != Some(status)).then_some(status),
            ..filter.clone()
        };
        let width = if total == 0 {
            0.0
        } else {
            n as f64 * 100.0 / total as f64
        };
        view! {
            <a href=link::fleet(&to) class=format!("fleet-segment fleet-{}", status.id())
                class:chosen=chosen == Some(status)
                style=format!("flex-grow: {}", fixed(width, 3))
                aria-current=(chosen == Some(status)).then_some("true")>
                {format!("{} {n}", status.label())}
            </a>
        }
    };
    let heading = match chosen {
        Some(s) => format!(
            "{} of {total} minions {}",
            picked.minions.len(),
            s.label().to_ascii_lowercase()
        ),
        None => counted(total as u64, "minion"),
    };
    let hours = report.unreported_hours;
    view! {
        <nav class="fleet-bar" aria-label="Fleet status">
            {picked.counts.iter().copied().filter(|(_, n)| *n > 0).map(segment).collect_view()}
        </nav>
        <p class="count">{heading}</p>
        <p class="hint">{format!("Unreported: no state run for {hours} h (unreported_hours in config.json).")}</p>
        {report.computed_from.as_ref().map(|c| view! { <p class="hint">{c.describe()}</p> })}
        <Notes notes=report.notes.clone()/>
        {picked.minions.is_empty().then(|| view! { <p class="notice">"No minion matches."</p> })}
        <table class="fleet" aria-label="Fleet">
            <thead><tr><th>"Minion"</th><th>"Status"</th><th>"Latest state run"</th><th>"States"</th><th>"SLS"</th><th>"Last return"</th></tr></thead>
            <tbody>{picked.minions.iter().map(fleet_row).collect_view()}</tbody>
        </table>
    }
}

fn fleet_row(m: &FleetMinion) -> impl IntoView {
    let run = m.latest_run.as_ref();
    let run_cell = match run {
        Some(r) => {
            let when = r
                .timestamp
                .as_deref()
                .map(utc_timestamp)
                .unwrap_or_default();
            view! { <a href=link::job_minion(&r.jid, &m.minion)>{format!("{} {when}", r.fun)}</a> }
                .into_any()
        }
        None => "no state run".into_any(),
    };
    let states = run.map(|r| {
        let s = &r.summary;
        if s.total == 0 {
            // A render error, a refused run: Salt ran no state.
            "no state ran".to_string()
        } else {
            format!(
                "{} failed, {} changed, {} total",
                s.failed, s.changed, s.total
            )
        }
    });
    let sls = run.map(|r| r.sls.join(", "));
    view! {
        <tr>
            <td><a href=link::minion(&m.minion)>{m.minion.clone()}</a></td>
            <td><span class=format!("fleet-status fleet-{}", m.status.id())>{m.status.label()}</span></td>
            <td>{run_cell}</td>
            <td>{states}</td>
            <td>{sls}</td>
            <td>{m.last_return_ms.map(utc_millis).unwrap_or_default()}</td>
        </tr>
    }
}
