//! The master's event bus as the event cache kept it: filtered, paged back
//! through time, and followed live ([`super::live_tail`]).

use super::filter_bar::TimeSelect;
use leptos::callback::UnsyncCallback;
use leptos::html::{Input, Select};
use leptos::prelude::*;
use saltscope_core::export::{ExportKind, ViewFilter};
use saltscope_core::model::EventDoc;
use saltscope_core::query::events::{EventCursor, EventFilter, EventsPage};
use saltscope_core::query::filter::TimeRange;
use saltscope_core::route::{link, param};
use saltscope_core::text::counted;
use saltscope_core::time::utc_timestamp;
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::export::ExportPanel;
use super::live_tail::LiveTail;
use super::location::{use_navigate, use_query_map, NavigateOptions};
use super::use_view;
use super::value::value_tree;

#[component]
pub fn EventsPage() -> impl IntoView {
    let query = use_query_map();
    let filter = Memo::new(move |_| query.with(|q| EventFilter::from_query(|k| q.get_str(k))));
    let cursor = Memo::new(move |_| {
        query.with(|q| q.get(param::AFTER).and_then(|a| EventCursor::parse(&a)))
    });
    let live = Memo::new(move |_| query.with(|q| q.get_str(param::LIVE) == Some("1")));
    let page = use_view(
        "events",
        move || (filter.get().0, cursor.get()),
        |engine, (filter, cursor)| async move {
            let ctx = engine.context(None);
            views::events(&engine.transport, &ctx, &filter, cursor.as_ref()).await
        },
    );
    let current = move || filter.get().0;
    view! {
        <h1>"Events"</h1>
        <EventFilterBar filter=Signal::derive(current)/>
        {move || {
            let ignored = filter.get().1.iter().map(|p| format!("Ignored in the link: {p}")).collect();
            view! { <Notes notes=ignored/> }
        }}
        <ExportPanel kinds=vec![ExportKind::Events] filter=Signal::derive(move || ViewFilter::Events(current()))/>
        {move || match (page.error(), page.ok()) {
            (Some(e), _) => view! { <ErrorPanel error=e retry=page.retry()/> }.into_any(),
            (_, None) => view! { <p class="loading">"Loading events…"</p> }.into_any(),
            (_, Some(p)) => view! {
                <div class="events-layout">
                    <Families page=p.clone() filter=current()/>
                    <section class="events-main" aria-label="Event list" aria-busy=move || page.loading.get().to_string()>
                        {if cursor.get().is_none() {
                            view! { <LiveTail page=p.clone() filter=current() live=live/> }.into_any()
                        } else {
                            view! { <PagedEvents page=p.clone() filter=current() cursor=cursor.get()/> }.into_any()
                        }}
                    </section>
                </div>
            }.into_any(),
        }}
    }
}

#[component]
fn EventFilterBar(#[prop(into)] filter: Signal<EventFilter>) -> impl IntoView {
    let navigate = use_navigate();
    let query = use_query_map();
    let (tag, minion, jid, text) = (
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
    );
    let (time, failed) = (NodeRef::<Select>::new(), NodeRef::<Input>::new());
    let apply = UnsyncCallback::new(move |()| {
        let v = |r: NodeRef<Input>| r.get_untracked().map(|e| e.value()).unwrap_or_default();
        let pairs = [
            (param::TAG, v(tag)),
            (param::MINION, v(minion)),
            (param::JID, v(jid)),
            (param::TEXT, v(text)),
            (
                param::TIME,
                time.get_untracked().map(|s| s.value()).unwrap_or_default(),
            ),
            (
                param::FAILED,
                if failed.get_untracked().is_some_and(|e| e.checked()) {
                    "1".into()
                } else {
                    String::new()
                },
            ),
        ];
        let (next, _) = EventFilter::from_query(|k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.as_str())
                .filter(|v| !v.is_empty())
        });
        let live = query.with_untracked(|q| q.get_str(param::LIVE) == Some("1"));
        navigate(
            &link::events(&next, None, live),
            NavigateOptions {
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    });
    view! {
        <form class="filter-bar" role="search" aria-label="Filter" on:submit=move |ev| { ev.prevent_default(); apply.run(()); }>
            <label>"Tag " <input node_ref=tag name="tag" placeholder="salt/job/*/ret/*, salt/auth" prop:value=move || filter.get().tags.join(",")/></label>
            <label>"Minion " <input node_ref=minion name="minion" placeholder="web*" prop:value=move || filter.get().minions.join(",")/></label>
            <label>"Jid " <input node_ref=jid name="jid" prop:value=move || filter.get().jid.unwrap_or_default()/></label>
            <label>"Search " <input node_ref=text type="search" name="q" placeholder="Lucene: data.fun:state.apply" prop:value=move || filter.get().text.unwrap_or_default()/></label>
            <TimeSelect select=time current=Signal::derive(move || filter.get().time.to_param()) apply=apply/>
            <label><input node_ref=failed type="checkbox" name="failed" on:change=move |_| apply.run(()) prop:checked=move || filter.get().failed_only/>" Failed returns only"</label>
            <button type="submit">"Apply"</button>
        </form>
    }
}

/// What floods the bus: events per tag family, each a filter.
#[component]
fn Families(page: std::sync::Arc<EventsPage>, filter: EventFilter) -> impl IntoView {
    let all = EventFilter {
        tags: Vec::new(),
        ..filter.clone()
    };
    let all_current = filter.tags.is_empty();
    view! {
        <nav class="families" aria-label="Tag families">
            <ul>
                <li><a href=link::events(&all, None, false) aria-current=all_current.then_some("true")>"All tags"</a>
                    {page.all_tags.map(|t| view! { <span class="count">{t}</span> })}</li>
                {page.families.iter().map(|(glob, label, n)| {
                    let only = EventFilter { tags: vec![glob.clone()], ..filter.clone() };
                    let current = filter.tags == [glob.clone()];
                    let name = view! { <span class="family-name">{label.clone()}</span><code class="family-glob">{glob.clone()}</code> };
                    view! {
                        <li>
                            {if glob == "other" {
                                view! { <span>{name}</span> }.into_any()
                            } else {
                                view! { <a href=link::events(&only, None, false) aria-current=current.then_some("true")>{name}</a> }.into_any()
                            }}
                            <span class="count">{*n}</span>
                        </li>
                    }
                }).collect_view()}
            </ul>
        </nav>
    }
}

/// An older page of events (no live tail there).
#[component]
fn PagedEvents(
    page: std::sync::Arc<EventsPage>,
    filter: EventFilter,
    cursor: Option<EventCursor>,
) -> impl IntoView {
    let newest = link::events(&filter, None, false);
    let older = page
        .next
        .as_ref()
        .map(|c| link::events(&filter, Some(c), false));
    view! {
        <p class="count">{page.total.map(|t| counted(t, "event")).unwrap_or_default()}
            {cursor.map(|c| format!(" · older than {}", saltscope_core::time::iso_millis(c.stamp_ms)))}</p>
        <Notes notes=page.notes.clone()/>
        <EventTable events=page.events.clone()/>
        <nav class="pager" aria-label="Pages">
            <a href=newest>"Newest events"</a>
            {older.map(|href| view! { <a href=href>"Older events"</a> })}
        </nav>
    }
}

/// Events, newest first; `<For>` keeps rows already drawn when new ones
/// come in above them.
#[component]
pub fn EventTable(#[prop(into)] events: Signal<Vec<EventDoc>>) -> impl IntoView {
    view! {
        {move || events.with(Vec::is_empty).then(|| view! { <p class="notice">"No events match."</p> })}
        <table class="events" aria-label="Events">
            <thead><tr><th>"Time"</th><th>"Tag"</th><th>"Minion"</th><th>"Job"</th><th>"Data"</th></tr></thead>
            <tbody>
                <For each=move || events.get() key=|e| e.id.clone() let(e)>
                    <EventRow event=e/>
                </For>
            </tbody>
        </table>
    }
}

#[component]
fn EventRow(event: EventDoc) -> impl IntoView {
    let when = event
        .stamp
        .as_deref()
        .map(utc_timestamp)
        .unwrap_or_default();
    let minion = event
        .minion
        .clone()
        .map(|m| view! { <a href=link::minion(&m)>{m.clone()}</a> });
    // A runner's jid has its page too (its publish data and return).
    let job = event.jid.clone().map(|j| {
        let runner = if event.tag.starts_with("salt/run/") { " (runner)" } else { "" };
        view! { <a href=link::job(&j) aria-label=format!("Job {j}{runner}")>{format!("{j}{runner}")}</a> }
    });
    let open = RwSignal::new(false);
    let data = std::sync::Arc::new(event.data);
    // The tree is drawn when opened: a job return's data can be a whole highstate.
    let tree = move || open.get().then(|| value_tree(data.clone()));
    view! {
        <tr class="event" class:failed=event.failed data-family=event.family>
            <td class="when">{when}</td>
            <td class="tag"><code>{event.tag.clone()}</code>{event.failed.then(|| view! { <span class="badge bad">"failed"</span> })}</td>
            <td>{minion}</td>
            <td>{job}</td>
            <td>
                <details class="event-data" on:toggle=move |ev| open.set(event_target::<web_sys::HtmlDetailsElement>(&ev).open())>
                    <summary>"data"</summary>
                    {tree}
                </details>
            </td>
        </tr>
    }
}

/// Whether a live tail makes sense for this filter: not over a fixed past.
pub fn can_follow(filter: &EventFilter) -> bool {
    !matches!(filter.time, TimeRange::Absolute { .. })
}
