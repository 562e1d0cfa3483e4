//! What the views that read many state runs share: the time range and
//! minion filter, and the progress of the reading with a Cancel.

use super::filter_bar::TimeSelect;
use super::location::{use_navigate, NavigateOptions};
use leptos::html::{Input, Select};
use leptos::prelude::*;
use saltscope_core::query::failures::FailureFilter;
use saltscope_core::query::scan::ScanProgress;

/// The reading's progress, and the person's wish to stop it.
#[derive(Clone, Copy)]
pub struct ScanState {
    pub progress: RwSignal<Option<ScanProgress>>,
    pub cancel: RwSignal<bool>,
}

impl ScanState {
    pub fn new() -> ScanState {
        ScanState {
            progress: RwSignal::new(None),
            cancel: RwSignal::new(false),
        }
    }

    /// A new reading starts: no progress yet, not cancelled.
    pub fn start(self) {
        self.progress.set(None);
        self.cancel.set(false);
    }

    /// The callback the core's scan calls after each page: `false` stops it.
    pub fn report(self) -> impl Fn(ScanProgress) -> bool {
        move |p| {
            self.progress.set(Some(p));
            !self.cancel.get_untracked()
        }
    }
}

/// "Read 1,500 of 8,000 state runs…" and a Cancel that keeps what was read.
#[component]
pub fn ScanProgressLine(state: ScanState, what: &'static str) -> impl IntoView {
    view! {
        <div class="loading" role="status" aria-label="Progress">
            {move || state.progress.get().map(|p| p.line()).unwrap_or_else(|| format!("Reading {what}…"))}
            " "
            <button type="button" on:click=move |_| state.cancel.set(true) disabled=move || state.cancel.get()>"Cancel"</button>
        </div>
    }
}

/// Time range and minions, applied by navigating to `to(filter)`.
#[component]
pub fn ScanFilterBar(
    filter: Memo<(FailureFilter, Vec<String>)>,
    to: fn(&FailureFilter) -> String,
) -> impl IntoView {
    let navigate = use_navigate();
    let (minion, time) = (NodeRef::<Input>::new(), NodeRef::<Select>::new());
    let apply = UnsyncCallback::new(move |()| {
        let minion = minion
            .get_untracked()
            .map(|e| e.value())
            .unwrap_or_default();
        let time = time.get_untracked().map(|e| e.value()).unwrap_or_default();
        let (next, _) = FailureFilter::from_query(|k| match k {
            "minion" => Some(minion.as_str()),
            "time" => Some(time.as_str()),
            _ => None,
        });
        navigate(
            &to(&next),
            NavigateOptions {
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    });
    let current = move || filter.get().0;
    view! {
        <form class="filter-bar" role="search" aria-label="Filter" on:submit=move |ev| { ev.prevent_default(); apply.run(()); }>
            <label>"Minion " <input node_ref=minion name="minion" placeholder="web*, db-02" prop:value=move || current().minions.join(",")/></label>
            <TimeSelect select=time current=Signal::derive(move || current().time.to_param()) apply=apply/>
            <button type="submit">"Apply"</button>
        </form>
        {move || (!filter.get().1.is_empty()).then(|| view! { <super::error::Notes notes=filter.get().1/> })}
    }
}
