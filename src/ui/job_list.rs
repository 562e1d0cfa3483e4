use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_query_map;
use saltscope_core::query::jobs::{JobListRequest, JobSummary, DEFAULT_PAGE_SIZE};
use saltscope_core::text::{jid_start_time, utc_timestamp};

use super::error::{ErrorPanel, Notes};
use super::use_connection;
use crate::engine::Aborter;

/// The job list: one row per jid, newest first.
#[component]
pub fn JobListPage() -> impl IntoView {
    let connection = use_connection();
    let query = use_query_map();
    let after = Memo::new(move |_| query.read().get("after"));
    let aborter = StoredValue::new_local(Aborter::default());
    let jobs = LocalResource::new(move || {
        let request = JobListRequest {
            page_size: DEFAULT_PAGE_SIZE,
            after: after.get(),
        };
        let signal = aborter.try_update_value(Aborter::renew);
        async move {
            let engine = connection.await?;
            crate::api::job_list(&engine, &request, signal.flatten().as_ref()).await
        }
    });

    view! {
        <h1>"Jobs"</h1>
        {move || match jobs.get() {
            None => view! { <p class="loading">"Loading jobs…"</p> }.into_any(),
            Some(Err(e)) => view! { <ErrorPanel error=e/> }.into_any(),
            Some(Ok(page)) => {
                let count = page.total_jobs.map(|n| format!("{n} jobs")).unwrap_or_default();
                let next = page.next_after.clone();
                let empty = page.jobs.is_empty();
                view! {
                    <p class="count">{count}</p>
                    <Notes notes=page.notes/>
                    {empty.then(|| view! {
                        <p class="notice">"No returns match. Is the returner writing to an index that the index pattern in config.json matches?"</p>
                    })}
                    <table class="jobs">
                        <thead><tr>
                            <th>"Job"</th><th>"Started"</th><th>"Function"</th><th>"Target"</th><th>"User"</th>
                            <th>"Returned"</th><th>"Succeeded"</th><th>"Failed"</th><th>"Missing"</th><th>"States"</th>
                        </tr></thead>
                        <tbody>{page.jobs.into_iter().map(job_row).collect_view()}</tbody>
                    </table>
                    <nav class="pager">
                        {after.get().is_some().then(|| view! { <A href="/">"Newest"</A> })}
                        {next.map(|n| view! { <A href=format!("/?after={n}")>"Older jobs"</A> })}
                    </nav>
                }
                .into_any()
            }
        }}
    }
}

fn job_row(job: JobSummary) -> impl IntoView {
    let outcome = if job.runner {
        "runner"
    } else if job.failed > 0 {
        "failed"
    } else {
        "succeeded"
    };
    let started = jid_start_time(&job.jid)
        .or_else(|| job.first_return.as_deref().map(utc_timestamp))
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
    let href = format!("/job/{}", job.jid);
    let any_missing = !missing.is_empty();
    view! {
        <tr class=format!("job job-{outcome}")>
            <td><A href=href>{job.jid.clone()}</A></td>
            <td>{started}</td>
            <td>{function}</td>
            <td>{target}</td>
            <td>{publish.user.unwrap_or_default()}</td>
            <td>{job.returned}</td>
            <td>{succeeded}</td>
            <td class:bad={job.failed > 0}>{job.failed}</td>
            <td class:bad=any_missing>{missing}</td>
            <td>{states}</td>
        </tr>
    }
}
