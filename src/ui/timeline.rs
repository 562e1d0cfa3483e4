//! A job's events in time order: publish, each minion's return with its
//! time after publish, progress events; the slowest minions marked.

use leptos::prelude::*;
use saltscope_core::query::timeline::{JobTimeline, TimelineEntry, TimelineKind};
use saltscope_core::route::link;
use saltscope_core::text::{counted, fixed};

use super::visible::ShowMore;

/// Rows drawn at first and per step (a job on 2,000 minions has 2,000).
const STEP: usize = 200;
/// Open at first when the job is this small.
const OPEN_UP_TO: usize = 50;

#[component]
pub fn Timeline(#[prop(into)] timeline: Signal<JobTimeline>) -> impl IntoView {
    let shown = RwSignal::new(STEP);
    let open = timeline.with_untracked(|t| t.entries.len() <= OPEN_UP_TO);
    let seconds = |ms: i64| format!("{} s", fixed(ms as f64 / 1000.0, 3));
    let summary = move || {
        timeline.with(|t| {
            let mut parts = vec![counted(t.returned as u64, "return")];
            if let Some(m) = t.median_ms {
                parts.push(format!("median {}", seconds(m)));
            }
            if let Some(s) = t.slowest_ms {
                parts.push(format!("slowest {}", seconds(s)));
            }
            format!("Timeline: {}", parts.join(", "))
        })
    };
    move || {
        if timeline.with(JobTimeline::is_empty) {
            return view! {
                <p class="notice timeline-none">"No events for this job: with "<code>"event_return: elasticsearch"</code>" on the master, the timeline shows when each minion answered."</p>
            }
            .into_any();
        }
        let rows = move || {
            timeline.with(|t| {
                t.entries
                    .iter()
                    .take(shown.get())
                    .map(entry_row)
                    .collect_view()
            })
        };
        let unshown = move || {
            timeline
                .with(|t| t.entries.len())
                .saturating_sub(shown.get())
        };
        view! {
            <details class="timeline" open=open>
                <summary>{summary}</summary>
                <table aria-label="Timeline">
                    <thead><tr><th>"After publish"</th><th>"Event"</th><th>"Minion"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                {move || (unshown() > 0).then(|| view! {
                    <ShowMore label=Signal::derive(move || format!("Show {} more events", unshown().min(STEP)))
                        more=Callback::new(move |()| shown.update(|n| *n += STEP))/>
                })}
            </details>
        }
        .into_any()
    }
}

fn entry_row(e: &TimelineEntry) -> impl IntoView {
    let what = match e.kind {
        TimelineKind::Published => "published",
        TimelineKind::Sent => "sent to minions",
        TimelineKind::Returned { failed: false } => "returned",
        TimelineKind::Returned { failed: true } => "returned, failed",
        TimelineKind::Progress => "progress",
        TimelineKind::Other => "event",
    };
    let after = e
        .after_ms
        .map(|ms| format!("+{} s", fixed(ms as f64 / 1000.0, 3)))
        .unwrap_or_default();
    let failed = matches!(e.kind, TimelineKind::Returned { failed: true });
    let minion = e.minion.clone().map(|m| {
        view! { <a href=format!("#{}", link::minion_anchor(&m))>{m.clone()}</a> }
    });
    view! {
        <tr class:slowest=e.slowest class:failed=failed title=e.tag.clone()>
            <td class="after">{after}</td>
            <td>{what}</td>
            <td>{minion}{e.slowest.then(|| view! { <span class="badge slow">"slowest"</span> })}</td>
        </tr>
    }
}
