use std::collections::HashSet;
use std::time::Duration;

use leptos::prelude::*;
use leptos_router::hooks::{use_location, use_navigate, use_query_map};
use leptos_router::NavigateOptions;
use saltscope_core::query::filter::{encode_query, percent_encode, JobFilter, TimeRange};
use saltscope_core::query::jobs::{
    Cursor, JobListPage, JobListRequest, JobSummary, DEFAULT_PAGE_SIZE,
};
use saltscope_core::text::{jid_start_time, utc_millis};

use super::error::{ErrorPanel, Notes};
use super::export::ExportPanel;
use super::filter_bar::{use_job_filter, FilterBar, FilterFields, NoisyEditor};
use super::histogram::HistogramChart;
use super::use_connection;
use crate::engine::Aborter;
use saltscope_core::export::{ExportKind, ViewFilter};

/// Auto-refresh choices, as `refresh=` in the URL.
const REFRESH: [(&str, &str, u64); 4] = [
    ("", "Auto-refresh off", 0),
    ("5s", "every 5 s", 5),
    ("30s", "every 30 s", 30),
    ("1m", "every minute", 60),
];

/// The job list: one row per jid, newest first.
#[component]
pub fn JobListPage() -> impl IntoView {
    view! {
        <h1>"Jobs"</h1>
        <JobList fixed_minion=None/>
    }
}

/// The filtered, paged job list; `fixed_minion` narrows it to one minion's
/// history (the minion page).
#[component]
pub fn JobList(fixed_minion: Option<String>) -> impl IntoView {
    let connection = use_connection();
    let query = use_query_map();
    let filter = use_job_filter();
    let navigate = use_navigate();
    let location = use_location();
    let cursor = Memo::new(move |_| query.with(|q| Cursor::from_query(|k| q.get_str(k))));
    let refresh = Memo::new(move |_| query.with(|q| q.get("refresh").unwrap_or_default()));
    let tick = RwSignal::new(0u64);
    // One interval at a time, cleared when the choice changes or the view goes.
    let interval = StoredValue::new_local(None::<IntervalHandle>);
    let clear = move || {
        if let Some(h) = interval.try_update_value(Option::take).flatten() {
            h.clear();
        }
    };
    Effect::new(move |_| {
        clear();
        let secs = REFRESH
            .iter()
            .find(|(k, _, _)| *k == refresh.get())
            .map(|r| r.2)
            .unwrap_or(0);
        if secs > 0 {
            let handle = set_interval_with_handle(
                move || {
                    tick.try_update(|t| *t += 1);
                },
                Duration::from_secs(secs),
            )
            .ok();
            interval.set_value(handle);
        }
    });
    on_cleanup(clear);

    let fixed = fixed_minion.clone();
    let fixed_export = fixed_minion.clone();
    let export_filter = Memo::new(move |_| {
        let (mut f, _) = filter.get();
        if let Some(m) = &fixed_export {
            f.minions = vec![m.clone()];
        }
        f
    });
    let aborter = StoredValue::new_local(Aborter::default());
    let jobs = LocalResource::new(move || {
        tick.track();
        let (mut f, _) = filter.get();
        if let Some(m) = &fixed {
            f.minions = vec![m.clone()];
        }
        let mut request = JobListRequest::new(f, crate::now_ms());
        request.page_size = DEFAULT_PAGE_SIZE;
        request.cursor = cursor.get();
        let signal = aborter.try_update_value(Aborter::renew).flatten();
        async move {
            let engine = connection.await?;
            request.noisy = engine.noisy();
            crate::api::job_list(&engine, &request, signal.as_ref()).await
        }
    });
    // The last answer stays on screen while the next one loads: an
    // auto-refresh never blanks the list or loses the scroll position.
    let page = Memo::new(move |previous: Option<&Option<Result<JobListPage, _>>>| {
        jobs.get().or_else(|| previous.cloned().flatten())
    });
    let loaded = move || page.get().and_then(Result::ok);
    let rows = Memo::new(move |_| loaded().map(|p| p.jobs).unwrap_or_default());
    let suggestions = Signal::derive(move || loaded().map(|p| p.functions).unwrap_or_default());
    let expanded = RwSignal::new(HashSet::<String>::new());
    let defaults = Signal::derive(move || {
        connection
            .get()
            .and_then(Result::ok)
            .map(|e| e.config.noisy_functions)
            .unwrap_or_default()
    });

    // A link to this view with another cursor, keeping filter and refresh.
    let minion_fixed = fixed_minion.is_some();
    let link = move |c: Cursor| {
        let mut pairs = filter.get().0.to_query();
        if minion_fixed {
            pairs.retain(|(k, _)| *k != "minion");
        }
        pairs.extend(c.to_query());
        let r = refresh.get();
        if !r.is_empty() {
            pairs.push(("refresh", r));
        }
        format!("{}{}", location.pathname.get(), encode_query(&pairs))
    };
    let nav = navigate.clone();
    let zoom = Callback::new(move |(from_ms, to_ms): (i64, i64)| {
        let zoomed = JobFilter {
            time: TimeRange::Absolute { from_ms, to_ms },
            ..filter.get_untracked().0
        };
        let mut pairs = zoomed.to_query();
        let r = refresh.get_untracked();
        if !r.is_empty() {
            pairs.push(("refresh", r));
        }
        nav(
            &format!(
                "{}{}",
                location.pathname.get_untracked(),
                encode_query(&pairs)
            ),
            NavigateOptions {
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    });
    let set_refresh = move |value: String| {
        let mut q = query.get_untracked();
        q.remove("refresh");
        if !value.is_empty() {
            q.insert("refresh", value);
        }
        navigate(
            &format!(
                "{}{}",
                location.pathname.get_untracked(),
                q.to_query_string()
            ),
            NavigateOptions {
                replace: true,
                scroll: false,
                ..NavigateOptions::default()
            },
        );
    };

    view! {
        <FilterBar suggestions=suggestions
            fields=FilterFields { jid: true, minion: !minion_fixed, outcome: true }
            keep=vec!["refresh"]/>
        <div class="list-tools">
            <span class="count" aria-live="polite">{move || loaded().map(|p| count_line(&p)).unwrap_or_default()}</span>
            {move || jobs.get().is_none().then(|| view! { <span class="loading">"Loading…"</span> })}
            <label>
                <select aria-label="Auto-refresh" on:change=move |ev| set_refresh(event_target_value(&ev))>
                    {REFRESH.iter().map(|(key, label, _)| {
                        let key = *key;
                        view! { <option value=key selected=move || refresh.get() == key>{*label}</option> }
                    }).collect_view()}
                </select>
            </label>
            <NoisyEditor defaults=defaults/>
        </div>
        <ExportPanel kinds=vec![ExportKind::Jobs, ExportKind::Returns, ExportKind::States]
            filter=Signal::derive(move || ViewFilter::Jobs(export_filter.get()))/>
        {move || match page.get() {
            Some(Err(e)) => Some(view! { <ErrorPanel error=e/> }),
            _ => None,
        }}
        {move || loaded().and_then(|p| p.histogram).map(|h| view! { <HistogramChart histogram=h on_zoom=zoom/> })}
        {move || loaded().map(|p| view! { <Notes notes=p.notes/> })}
        {move || loaded().is_some_and(|p| p.jobs.is_empty()).then(|| view! {
            <p class="notice">"No jobs match. Widen the time range or the filter, or check that the index pattern in config.json matches the returner's indices."</p>
        })}
        <table class="jobs">
            <thead><tr>
                <th></th><th>"Job"</th><th>"Started"</th><th>"Function"</th><th>"Arguments"</th><th>"Target"</th><th>"User"</th>
                <th>"Returned"</th><th>"Succeeded"</th><th>"Failed"</th><th>"Missing"</th><th>"States"</th>
            </tr></thead>
            <tbody>
                <For each=move || rows.get() key=JobSummary::version
                    children=move |job| job_row(job, expanded)/>
            </tbody>
        </table>
        <nav class="pager" aria-label="Pages">
            {move || loaded().and_then(|p| p.newer).map(|c| view! { <a href=link(Cursor::Newest)>"Newest"</a><a href=link(c)>"Newer jobs"</a> })}
            {move || loaded().and_then(|p| p.older).map(|c| view! { <a href=link(c)>"Older jobs"</a> })}
        </nav>
    }
}

fn count_line(page: &JobListPage) -> String {
    match (page.total_jobs, page.total_returns) {
        (Some(j), Some(r)) => format!("{j} jobs, {r} returns"),
        (Some(j), None) => format!("{j} jobs"),
        _ => String::new(),
    }
}

fn job_row(job: JobSummary, expanded: RwSignal<HashSet<String>>) -> impl IntoView {
    let outcome = if job.runner {
        "runner"
    } else if job.failed > 0 {
        "failed"
    } else {
        "succeeded"
    };
    let started = jid_start_time(&job.jid)
        .or_else(|| job.first_return_ms.map(utc_millis))
        .unwrap_or_default();
    let function = if job.runner {
        format!("{} (runner)", job.functions.join(", "))
    } else {
        job.functions.join(", ")
    };
    let publish = job.publish.clone().unwrap_or_default();
    let target = match (&publish.target, &publish.target_type) {
        (Some(t), Some(tt)) if tt != "glob" => format!("{t} ({tt})"),
        (Some(t), _) => t.clone(),
        _ => String::new(),
    };
    let missing = job
        .missing()
        .filter(|m| *m > 0)
        .map(|m| m.to_string())
        .unwrap_or_default();
    let states = job
        .state_counts
        .map(|(ok, bad)| format!("{ok} succeeded, {bad} failed"))
        .unwrap_or_default();
    let succeeded = if job.runner {
        String::new()
    } else {
        job.succeeded().to_string()
    };
    let args = publish.args.join(" ");
    let href = format!("/job/{}", percent_encode(&job.jid));
    let any_missing = !missing.is_empty();
    let jid = job.jid.clone();
    let is_open = {
        let jid = jid.clone();
        move || expanded.with(|e| e.contains(&jid))
    };
    let toggle = {
        let jid = jid.clone();
        move |_| {
            expanded.update(|e| {
                if !e.remove(&jid) {
                    e.insert(jid.clone());
                }
            })
        }
    };
    let detail = {
        let is_open = is_open.clone();
        move || {
            is_open().then(|| {
                let failed = job.failed_minions.clone();
                let minions = publish.minions.clone();
                view! {
                    <tr class="job-detail"><td></td><td colspan="11">
                        <dl class="publish">
                            <dt>"Arguments"</dt><dd>{publish.args.join(" ")}</dd>
                            <dt>"Targeted"</dt><dd>{minions.map(|m| format!("{} minions: {}", m.len(), m.join(", "))).unwrap_or_else(|| "unknown (no publish event)".into())}</dd>
                            <dt>"Failed minions"</dt><dd>{if failed.is_empty() { "none".to_string() } else { failed.join(", ") }}</dd>
                            <dt>"Returns"</dt><dd>{format!("{} to {}",
                                job.first_return_ms.map(utc_millis).unwrap_or_default(),
                                job.last_return_ms.map(utc_millis).unwrap_or_default())}</dd>
                        </dl>
                    </td></tr>
                }
            })
        }
    };
    view! {
        <tr class=format!("job job-{outcome}")>
            <td><button class="expand" aria-label=format!("Details of {jid}") aria-expanded=move || is_open().to_string() on:click=toggle>
                {let is_open = is_open.clone(); move || if is_open() { "▾" } else { "▸" }}</button></td>
            <td><a href=href>{job.jid.clone()}</a></td>
            <td>{started}</td>
            <td>{function}</td>
            <td class="args">{args}</td>
            <td class="target">{target}</td>
            <td>{publish.user.clone().unwrap_or_default()}</td>
            <td class="num">{job.returned}</td>
            <td class="num">{succeeded}</td>
            <td class="num" class:bad={job.failed > 0}>{job.failed}</td>
            <td class="num" class:bad=any_missing>{missing}</td>
            <td>{states}</td>
        </tr>
        {detail}
    }
}
