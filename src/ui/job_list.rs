use std::collections::HashSet;
use std::time::Duration;

use leptos::prelude::*;
use saltscope_core::export::{ExportKind, ViewFilter};
use saltscope_core::query::filter::{JobFilter, TimeRange};
use saltscope_core::query::jobs::{Cursor, JobListPage, JobListRequest, JobSummary};
use saltscope_core::route::{link, param, JobListUrl, Refresh};
use saltscope_core::text::counted;
use saltscope_core::time::{jid_start_ms, utc_clock, utc_millis};
use saltscope_core::views;

use super::error::{ErrorPanel, Notes};
use super::export::ExportPanel;
use super::filter_bar::{FilterBar, FilterFields, NoisyEditor};
use super::histogram::HistogramChart;
use super::location::{use_navigate, use_query_map, NavigateOptions};
use super::prefs::use_prefs;
use super::visible::{arguments_view, target_view};
use super::{use_session, use_view};

/// The job list: one row per jid, newest first.
#[component]
pub fn JobListPage() -> impl IntoView {
    view! {
        <h1>"Jobs"</h1>
        <JobList fixed_minion=None/>
    }
}

/// The job list's URL state, read once per change.
pub fn use_job_list_url() -> Memo<(JobListUrl, Vec<String>)> {
    let query = use_query_map();
    Memo::new(move |_| query.with(|q| JobListUrl::from_query(|k| q.get_str(k))))
}

/// The filtered, paged job list; `fixed_minion` narrows it to one minion's
/// history (the minion page).
#[component]
pub fn JobList(fixed_minion: Option<String>) -> impl IntoView {
    let url = use_job_list_url();
    let prefs = use_prefs();
    let navigate = use_navigate();
    let refresh = Memo::new(move |_| url.with(|(u, _)| u.refresh));
    let tick = RwSignal::new(0u64);
    let fixed = StoredValue::new(fixed_minion.clone());
    let filter = Memo::new(move |_| {
        let mut f = url.with(|(u, _)| u.filter.clone());
        if let Some(m) = fixed.get_value() {
            f.minions = vec![m];
        }
        f
    });
    let jobs = use_view(
        "job-list",
        move || {
            tick.track();
            let request = JobListRequest::new(filter.get(), url.with(|(u, _)| u.cursor.clone()));
            (request, prefs.noisy.get())
        },
        |engine, (request, noisy)| async move {
            let ctx = engine.context(noisy);
            views::job_list(&engine.transport, &ctx, &request).await
        },
    );
    // One interval at a time, cleared when the choice changes or the view
    // goes. A tick while the last query still runs is skipped, not aborted:
    // a query slower than the interval still finishes.
    let interval = StoredValue::new_local(None::<IntervalHandle>);
    let clear = move || {
        if let Some(h) = interval.try_update_value(Option::take).flatten() {
            h.clear();
        }
    };
    Effect::new(move |_| {
        clear();
        let secs = refresh.get().seconds();
        if secs > 0 {
            let handle = set_interval_with_handle(
                move || {
                    if jobs.loading.try_get_untracked() == Some(false) {
                        tick.try_update(|t| *t += 1);
                    }
                },
                Duration::from_secs(u64::from(secs)),
            )
            .ok();
            interval.set_value(handle);
        }
    });
    on_cleanup(clear);

    let rows = Memo::new(move |_| jobs.ok().map(|p| p.jobs.clone()).unwrap_or_default());
    let suggestions =
        Signal::derive(move || jobs.ok().map(|p| p.functions.clone()).unwrap_or_default());
    let expanded = RwSignal::new(HashSet::<String>::new());
    let session = use_session();
    let defaults = Signal::derive(move || {
        session
            .startup
            .get()
            .and_then(Result::ok)
            .map(|e| e.connection.config.noisy_functions.clone())
            .unwrap_or_default()
    });
    let page_link = move |cursor: Cursor| {
        let u = url.with(|(u, _)| u.at(cursor));
        match fixed.get_value() {
            Some(m) => link::minion_jobs(&m, &u),
            None => link::jobs(&u),
        }
    };
    let quietly = NavigateOptions {
        scroll: false,
        ..NavigateOptions::default()
    };
    let nav = navigate.clone();
    let zoom = Callback::new(move |(from_ms, to_ms): (i64, i64)| {
        let mut u = url.get_untracked().0.at(Cursor::Newest);
        u.filter = JobFilter {
            time: TimeRange::Absolute { from_ms, to_ms },
            ..u.filter
        };
        let href = match fixed.get_value() {
            Some(m) => link::minion_jobs(&m, &u),
            None => link::jobs(&u),
        };
        nav(&href, quietly);
    });
    let set_refresh = move |value: String| {
        let u = JobListUrl {
            refresh: Refresh::parse(&value),
            ..url.get_untracked().0
        };
        let href = match fixed.get_value() {
            Some(m) => link::minion_jobs(&m, &u),
            None => link::jobs(&u),
        };
        navigate(
            &href,
            NavigateOptions {
                replace: true,
                scroll: false,
            },
        );
    };
    let minion_fixed = fixed_minion.is_some();

    view! {
        <FilterBar suggestions=suggestions
            fields=FilterFields { jid: true, minion: !minion_fixed, function: true, outcome: true }
            keep=vec![param::REFRESH]/>
        // The filter bar explains the filter's own problems; the page's are here.
        {move || url.with(|(_, problems)| (!problems.is_empty()).then(|| view! {
            <ul class="notes" aria-label="Link problems">
                {problems.iter().map(|p| view! { <li>{format!("Ignored in the link: {p}")}</li> }).collect_view()}
            </ul>
        }))}
        <div class="list-tools">
            <span class="count" aria-live="polite">{move || jobs.ok().map(|p| count_line(&p)).unwrap_or_default()}</span>
            {move || jobs.loading.get().then(|| view! { <span class="loading">"Loading…"</span> })}
            <label>
                <select aria-label="Auto-refresh" on:change=move |ev| set_refresh(event_target_value(&ev))>
                    {Refresh::ALL.iter().map(|r| {
                        let r = *r;
                        view! { <option value=r.to_param() selected=move || refresh.get() == r>{r.label()}</option> }
                    }).collect_view()}
                </select>
            </label>
            <NoisyEditor defaults=defaults/>
        </div>
        <ExportPanel kinds=vec![ExportKind::Jobs, ExportKind::Returns, ExportKind::States]
            filter=Signal::derive(move || ViewFilter::Jobs(filter.get()))/>
        {move || jobs.error().map(|e| view! { <ErrorPanel error=e retry=jobs.retry()/> })}
        {move || jobs.ok().and_then(|p| p.histogram.clone()).map(|h| view! { <HistogramChart histogram=h on_zoom=zoom/> })}
        {move || jobs.ok().map(|p| view! { <Notes notes=p.notes.clone()/> })}
        {move || jobs.ok().is_some_and(|p| p.jobs.is_empty()).then(|| view! {
            // A minion may have been sent jobs and answered none.
            {match link::audit_of_minions(&filter.get()) {
                Some(href) => view! { <p class="notice">"No return from " {filter.get().minions.join(", ")} " matches. The jobs published to it, answered or not, are in the " <a href=href>"audit trail"</a>"."</p> }.into_any(),
                None => view! { <p class="notice">"No jobs match. Widen the time range or the filter, or check that the index pattern in config.json matches the returner's indices."</p> }.into_any(),
            }}
            // The list is made of returns: a job no minion answered is only
            // on its own page, from the master's publish record and events.
            {filter.get().jid.filter(|j| jid_start_ms(j).is_some()).map(|j| view! {
                <p class="notice">"No minion's return holds job " <a href=link::job(&j)>{j.clone()}</a>
                    ": its page shows what the master published and which minions did not answer."</p>
            })}
        })}
        <div class="jobs-scroll">
            <table class="jobs" aria-label="Jobs" aria-busy=move || jobs.loading.get().to_string()>
                <thead><tr>
                    <th><span class="visually-hidden">"Details"</span></th><th>"Job"</th><th>"Started (UTC)"</th><th>"Function"</th><th>"Arguments"</th><th>"Target"</th><th>"User"</th>
                    <th>"Returned"</th><th>"Succeeded"</th><th>"Failed"</th><th>"Missing"</th><th>"States"</th>
                </tr></thead>
                <tbody>
                    <For each=move || rows.get() key=JobSummary::version
                        children=move |job| job_row(job, expanded)/>
                </tbody>
            </table>
        </div>
        <nav class="pager" aria-label="Pages">
            {move || jobs.ok().and_then(|p| p.newer.clone()).map(|c| view! { <a href=page_link(Cursor::Newest)>"Newest"</a><a href=page_link(c)>"Newer jobs"</a> })}
            {move || jobs.ok().and_then(|p| p.older.clone()).map(|c| view! { <a href=page_link(c)>"Older jobs"</a> })}
        </nav>
    }
}

fn count_line(page: &JobListPage) -> String {
    match (page.total_jobs, page.total_returns) {
        (Some(j), Some(r)) => format!("{}, {}", counted(j, "job"), counted(r, "return")),
        (Some(j), None) => counted(j, "job"),
        _ => String::new(),
    }
}

fn job_row(job: JobSummary, expanded: RwSignal<HashSet<String>>) -> impl IntoView {
    // A runner that failed by its own word is a failure like any other.
    let outcome = if job.failed > 0 {
        "failed"
    } else if job.runner {
        "runner"
    } else {
        "succeeded"
    };
    // To the second: the jid beside it has the microseconds, and the target
    // column the width.
    let started = jid_start_ms(&job.jid)
        .or(job.first_return_ms)
        .map(utc_clock)
        .unwrap_or_default();
    let function = if job.runner {
        format!("{} (runner)", job.functions.join(", "))
    } else {
        job.functions.join(", ")
    };
    let publish = job.publish.clone().unwrap_or_default();
    // A list of 2,000 minions or a pillar of megabytes would make the row a
    // screen tall: each is a short line that opens. `glob`, Salt's default,
    // goes unsaid.
    let target_type = publish.target_type.as_deref().filter(|tt| *tt != "glob");
    let target = target_view(publish.target.as_deref(), target_type);
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
    let args = arguments_view(&publish.args);
    let href = link::job(&job.jid);
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
                let targeted = publish
                    .minions
                    .as_ref()
                    .map(|m| format!("{}: {}", counted(m.len() as u64, "minion"), m.join(", ")))
                    .unwrap_or_else(|| "unknown (no publish event)".into());
                let unknown = (!publish.unknown_minions.is_empty()).then(|| {
                    format!(
                        "{} (not known to the master when published)",
                        publish.unknown_minions.join(", ")
                    )
                });
                view! {
                    <tr class="job-detail"><td></td><td colspan="11">
                        <dl class="publish">
                            <dt>"Arguments"</dt><dd>{publish.args.join(" ")}</dd>
                            <dt>"Targeted"</dt><dd>{targeted}</dd>
                            {unknown.map(|u| view! { <dt>"Unknown minions"</dt><dd>{u}</dd> })}
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
