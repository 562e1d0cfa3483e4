//! The newest page of events, followed live: new events matching the
//! filter come in at the top as they are written (polled every 2 s, each
//! once: see `saltscope_core::query::tail`), with pause and resume, the
//! rate, a cap on the rows kept, and "N new events" while the person reads
//! further down.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use saltscope_core::engine::EngineError;
use saltscope_core::model::EventDoc;
use saltscope_core::query::events::{EventFilter, EventsPage};
use saltscope_core::query::tail::{
    arrived, match_count, EventRate, LiveList, TailState, LIVE_KEEP, LIVE_KEEP_CHOICES,
    TAIL_POLL_MS,
};
use saltscope_core::route::link;
use saltscope_core::text::{counted, fixed};
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::events::{can_follow, EventTable};
use super::use_session;
use crate::transport::{now_ms, sleep};

#[component]
pub fn LiveTail(page: Arc<EventsPage>, filter: EventFilter, live: Memo<bool>) -> impl IntoView {
    let session = use_session();
    let list = RwSignal::new(LiveList::new(page.events.clone(), LIVE_KEEP));
    let pending = RwSignal::new(Vec::<EventDoc>::new());
    let paused = RwSignal::new(false);
    let rate = RwSignal::new(EventRate::default());
    let failure = RwSignal::new(None::<EngineError>);
    let tail = TailState::after_shown(&page.events, now_ms());
    // What came after this instant is new; the page's count has the rest.
    let opened_ms = tail.newest_ms.unwrap_or_default();
    let tail = StoredValue::new(tail);
    // Each start of the loop gets a number; a loop whose number is no
    // longer current (paused, stopped, page gone) ends at its next step.
    let generation = StoredValue::new(0u32);
    let head = NodeRef::<leptos::html::Div>::new();
    // The head of the list is on screen: new rows may go in above.
    let at_top = move || {
        head.get_untracked()
            .is_none_or(|h| h.get_bounding_client_rect().bottom() >= 0.0)
    };
    let show_pending = move || {
        let fresh = pending.try_update(std::mem::take).unwrap_or_default();
        if !fresh.is_empty() {
            list.update(|l| l.add(fresh));
        }
    };
    let poll_filter = filter.clone();
    let start = move || {
        let Some(run) = generation.try_update_value(|g| {
            *g += 1;
            *g
        }) else {
            return;
        };
        let filter = poll_filter.clone();
        spawn_local(async move {
            let current = move || generation.try_get_value() == Some(run);
            while current() {
                let Some(Ok(engine)) = session.startup.get_untracked() else {
                    return;
                };
                let ctx = engine.context(None);
                let Some(mut state) = tail.try_get_value() else {
                    return;
                };
                let answer = views::tail(&engine.transport, &ctx, &filter, &mut state).await;
                if !current() {
                    return;
                }
                match answer {
                    Ok((fresh, more)) => {
                        tail.set_value(state);
                        rate.update(|r| r.record(now_ms(), arrived(&fresh, opened_ms)));
                        if at_top() {
                            pending.update(|p| p.extend(fresh));
                            show_pending();
                        } else {
                            pending.update(|p| p.extend(fresh));
                        }
                        if !more {
                            sleep(u64::from(TAIL_POLL_MS)).await;
                        }
                    }
                    Err(e) => {
                        failure.set(Some(e));
                        return;
                    }
                }
            }
        });
    };
    let stop = move || {
        generation.try_update_value(|g| *g += 1);
    };
    Effect::new(move |_| {
        if live.get() && !paused.get() && failure.with(Option::is_none) {
            start();
        } else {
            stop();
        }
    });
    on_cleanup(stop);

    let follow = can_follow(&filter);
    let (follow_link, stop_link) = (
        link::events(&filter, None, true),
        link::events(&filter, None, false),
    );
    let total = page.total;
    let older = page
        .next
        .as_ref()
        .map(|c| link::events(&filter, Some(c), false));
    let status = move || {
        let l = list.get();
        let shown = format!(
            "{} shown{}",
            l.rows.len(),
            if l.let_go > 0 {
                format!(", {} older let go (page back with Older events)", l.let_go)
            } else {
                String::new()
            }
        );
        if paused.get() {
            format!("Paused · {shown}")
        } else {
            format!(
                "Live · {} events/s · {shown}",
                fixed(rate.get().per_second(now_ms()), 1)
            )
        }
    };
    let rows = Signal::derive(move || list.with(|l| l.rows.clone()));
    view! {
        <div class="live-head" node_ref=head>
            <p class="count">{move || total.map(|t| match_count(t, rate.with(EventRate::received)))}</p>
            {move || match (live.get(), follow) {
                (false, true) => view! { <a class="button" href=follow_link.clone()>"Follow live"</a> }.into_any(),
                (false, false) => view! { <span class="notice">"A fixed time range: choose a relative one to follow live."</span> }.into_any(),
                (true, _) => view! {
                    <a class="button" href=stop_link.clone()>"Stop following"</a>
                    <button type="button" on:click=move |_| paused.update(|p| *p = !*p)>
                        {move || if paused.get() { "Resume" } else { "Pause" }}
                    </button>
                    <label>"Keep the newest "
                        <select on:change=move |ev| {
                            let keep = event_target_value(&ev).parse().unwrap_or(LIVE_KEEP);
                            list.update(|l| l.set_keep(keep));
                        }>
                            {LIVE_KEEP_CHOICES.iter().map(|n| view! { <option value=n.to_string() selected={*n == LIVE_KEEP}>{format!("{n} events")}</option> }).collect_view()}
                        </select>
                    </label>
                    <span class="live-status" role="status">{status}</span>
                }.into_any(),
            }}
        </div>
        {move || failure.get().map(|e| view! {
            <ErrorPanel error=e retry=Callback::new(move |()| failure.set(None))/>
        })}
        <Notes notes=page.notes.clone()/>
        {move || {
            let n = pending.with(Vec::len);
            (n > 0).then(|| view! {
                <button type="button" class="new-events" on:click=move |_| {
                    show_pending();
                    if let Some(h) = head.get_untracked() { h.scroll_into_view(); }
                }>{counted(n as u64, "new event")}</button>
            })
        }}
        <EventTable events=rows/>
        <nav class="pager" aria-label="Pages">
            {older.map(|href| view! { <a href=href>"Older events"</a> })}
        </nav>
    }
}
