//! The filter bar over the job list, a minion's jobs and the other views:
//! it reads the filter from the URL and, on Apply, writes it back there, so
//! every view is a link and back/forward walk through the filters.

use leptos::callback::UnsyncCallback;
use leptos::html::{Input, Select};
use leptos::prelude::*;
use saltscope_core::query::filter::{JobFilter, OutcomeFilter, TimeRange, TIME_PRESETS};
use saltscope_core::route::{param, query_string};
use saltscope_core::time::iso_millis;

use super::choice::SettledChoice;
use super::location::{use_location, use_navigate, use_query_map, NavigateOptions};
use super::prefs::use_prefs;

/// The filter in the URL, with what did not read (shown, not swallowed).
pub fn use_job_filter() -> Memo<(JobFilter, Vec<String>)> {
    let query = use_query_map();
    Memo::new(move |_| query.with(|q| JobFilter::from_query(|k| q.get_str(k))))
}

/// Which fields the bar shows.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FilterFields {
    pub jid: bool,
    pub minion: bool,
    /// Off where the address names the function (`/function/<fun>`).
    pub function: bool,
    pub outcome: bool,
}

#[component]
pub fn FilterBar(
    /// Function names for the function field's suggestions.
    #[prop(into)]
    suggestions: Signal<Vec<(String, u64)>>,
    fields: FilterFields,
    /// Query pairs to keep when the filter changes (`refresh`, `output`).
    #[prop(optional)]
    keep: Vec<&'static str>,
) -> impl IntoView {
    let current = use_job_filter();
    let query = use_query_map();
    let navigate = use_navigate();
    let location = use_location();
    let (jid, minion, fun, text, from, to) = (
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
        NodeRef::<Input>::new(),
    );
    let (outcome, time, noisy) = (
        NodeRef::<Select>::new(),
        NodeRef::<Select>::new(),
        NodeRef::<Input>::new(),
    );
    let filter = move || current.get().0;
    let custom_time = RwSignal::new(false);
    Effect::new(move |_| custom_time.set(matches!(filter().time, TimeRange::Absolute { .. })));
    // Why the form's last Apply went nowhere (a custom range that does not
    // read); cleared by the next one that does.
    let not_applied = RwSignal::new(None::<String>);

    let apply = UnsyncCallback::new(move |()| {
        let value = |r: NodeRef<Input>| r.get_untracked().map(|e| e.value()).unwrap_or_default();
        let pairs = |name: &'static str, v: String| (name, v);
        let time_choice = time.get_untracked().map(|s| s.value()).unwrap_or_default();
        let time_param = if time_choice == "custom" {
            match TimeRange::custom(&value(from), &value(to)) {
                Ok(range) => range.to_param(),
                Err(e) => return not_applied.set(Some(e)),
            }
        } else {
            time_choice
        };
        let mut list = vec![
            pairs(param::JID, value(jid)),
            pairs(param::MINION, value(minion)),
            pairs(param::FUN, value(fun)),
            pairs(param::TEXT, value(text)),
            pairs(
                param::OUTCOME,
                outcome
                    .get_untracked()
                    .map(|s| s.value())
                    .unwrap_or_default(),
            ),
            pairs(param::TIME, time_param),
        ];
        if noisy.get_untracked().is_some_and(|e| e.checked()) {
            list.push(pairs(param::NOISY, "show".into()));
        }
        let (mut next, problems) =
            JobFilter::from_query(|k| list.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str()));
        if !problems.is_empty() {
            return not_applied.set(Some(problems.join("; ")));
        }
        not_applied.set(None);
        if !fields.minion {
            next.minions = filter().minions;
        }
        if !fields.function {
            next.functions = filter().functions;
        }
        let mut out = next.to_query();
        query.with_untracked(|q| {
            for k in &keep {
                if let Some(v) = q.get(k) {
                    out.push((k, v));
                }
            }
        });
        navigate(
            &format!(
                "{}{}",
                location.pathname.get_untracked(),
                query_string(&out)
            ),
            NavigateOptions {
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    });

    let outcome_choice = SettledChoice::new(apply, None);
    let time_choice = SettledChoice::new(apply, Some(custom_time));
    let prefs = use_prefs();
    let noisy_list = move || {
        prefs
            .noisy
            .get()
            .map(|l| l.join(", "))
            .unwrap_or_else(|| "(config.json's list)".into())
    };

    view! {
        <form class="filter-bar" role="search" aria-label="Filter"
            on:submit=move |ev| { ev.prevent_default(); apply.run(()); }>
            {fields.jid.then(|| view! {
                <label>"Job " <input node_ref=jid name="jid" placeholder="jid or its start" size="22"
                    prop:value=move || filter().jid.unwrap_or_default()/></label>
            })}
            {fields.minion.then(|| view! {
                <label>"Minion " <input node_ref=minion name="minion" placeholder="web*, db-02" size="18"
                    prop:value=move || filter().minions.join(", ")/></label>
            })}
            {fields.function.then(|| view! {
                <label>"Function " <input node_ref=fun name="fun" list="function-suggestions" placeholder="state.apply" size="16"
                    prop:value=move || filter().functions.join(", ")/></label>
            })}
            <datalist id="function-suggestions">
                {move || suggestions.get().into_iter().map(|(f, n)| view! {
                    <option value=f.clone()>{format!("{f} ({n})")}</option>
                }).collect_view()}
            </datalist>
            {fields.outcome.then(|| view! {
                <label>"Outcome "
                    <select node_ref=outcome name="outcome"
                        on:keydown=outcome_choice.on_key() on:change=outcome_choice.on_change() on:blur=outcome_choice.on_blur()
                        prop:value=move || filter().outcome.to_param()>
                        <option value="all" selected=move || filter().outcome == OutcomeFilter::All>"all"</option>
                        <option value="failed" selected=move || filter().outcome == OutcomeFilter::AnyFailed>"any minion failed"</option>
                        <option value="succeeded" selected=move || filter().outcome == OutcomeFilter::AllSucceeded>"all succeeded"</option>
                    </select>
                </label>
            })}
            <label>"Time "
                <select node_ref=time name="time"
                    prop:value=move || if custom_time.get() { "custom".to_string() } else { filter().time.to_param() }
                    on:keydown=time_choice.on_key() on:change=time_choice.on_change() on:blur=time_choice.on_blur()>
                    {TIME_PRESETS.iter().map(|(key, label, _)| {
                        let key = *key;
                        view! { <option value=key selected=move || filter().time.to_param() == key && !custom_time.get()>{*label}</option> }
                    }).collect_view()}
                    <option value="custom" selected=move || custom_time.get()>"Custom range…"</option>
                </select>
            </label>
            <span class="custom-range" class:hidden=move || !custom_time.get()>
                <label>"From " <input node_ref=from type="text" name="from" placeholder="2026-12-01T00:00" size="20"
                    prop:value=move || filter().time.bounds(crate::transport::now_ms()).map(|(a, _)| iso_millis(a)).unwrap_or_default()/></label>
                <label>"to " <input node_ref=to type="text" name="to" placeholder="2026-12-02T00:00" size="20"
                    prop:value=move || filter().time.bounds(crate::transport::now_ms()).map(|(_, b)| iso_millis(b)).unwrap_or_default()/></label>
            </span>
            <label class="wide">"Search " <input node_ref=text name="q" type="search" size="30"
                placeholder="Lucene: \"rm -rf\" AND minion:web*"
                prop:value=move || filter().text.unwrap_or_default()/></label>
            <label title=move || format!("Hidden: {}", noisy_list())>
                <input node_ref=noisy type="checkbox" name="noisy" on:change=move |_| apply.run(())
                    prop:checked=move || filter().show_noisy/>
                " Show noisy functions"
            </label>
            <button type="submit">"Apply"</button>
        </form>
        {move || not_applied.get().map(|p| view! {
            <p class="notice" role="alert">{format!("Not applied: {p}")}</p>
        })}
        {move || {
            let problems = current.get().1;
            (!problems.is_empty()).then(|| view! {
                <ul class="notes" aria-label="Link problems">
                    {problems.into_iter().map(|p| view! { <li>{format!("Ignored in the link: {p}")}</li> }).collect_view()}
                </ul>
            })
        }}
    }
}

/// Edits this browser's list of noisy functions; the views that hide them
/// ask again at once.
#[component]
pub fn NoisyEditor(#[prop(into)] defaults: Signal<Vec<String>>) -> impl IntoView {
    let input = NodeRef::<Input>::new();
    let saved = use_prefs().noisy;
    let shown = move || saved.get().unwrap_or_else(|| defaults.get()).join(", ");
    view! {
        <details class="noisy-editor">
            <summary>"Noisy functions"</summary>
            <form on:submit=move |ev| {
                ev.prevent_default();
                let text = input.get_untracked().map(|e| e.value()).unwrap_or_default();
                let list: Vec<String> = text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
                saved.set(Some(list));
            }>
                <label>"Hidden unless shown (globs, comma-separated): "
                    <input node_ref=input name="noisy-functions" size="50" prop:value=shown/></label>
                <button type="submit">"Save"</button>
                <button type="button" on:click=move |_| saved.set(None)>"Reset"</button>
            </form>
        </details>
    }
}

/// "Time" with its presets (the last 15 minutes … all time); choosing one
/// applies the filter at once.
#[component]
pub fn TimeSelect(
    select: NodeRef<Select>,
    /// The range shown, as its URL spelling (`24h`).
    #[prop(into)]
    current: Signal<String>,
    apply: UnsyncCallback<()>,
) -> impl IntoView {
    let choice = SettledChoice::new(apply, None);
    view! {
        <label>"Time "
            <select node_ref=select name="time"
                on:keydown=choice.on_key() on:change=choice.on_change() on:blur=choice.on_blur()
                prop:value=move || current.get()>
                {TIME_PRESETS.iter().map(|(key, label, _)| {
                    let key = *key;
                    view! { <option value=key selected=move || current.get() == key>{*label}</option> }
                }).collect_view()}
                // A range from a link or the histogram: shown, and kept by
                // the next Apply.
                {move || {
                    let now = current.get();
                    (!TIME_PRESETS.iter().any(|(key, _, _)| *key == now)).then(|| {
                        let label = now.clone();
                        view! { <option value=now selected=true>{label}</option> }
                    })
                }}
            </select>
        </label>
    }
}
