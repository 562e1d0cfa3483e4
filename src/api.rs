//! One function per view: it asks the core for the requests, sends them and
//! hands back the view's model. Pages never build JSON themselves.

use saltscope_core::engine::EngineError;
use saltscope_core::query::job::{job_searches, parse_job, JobDetail};
use saltscope_core::query::jobs::{
    attach_publish, job_list_search, parse_job_list, publish_searches, JobListPage, JobListRequest,
};
use web_sys::AbortSignal;

use crate::engine::Engine;

/// The job list in two round trips: the page of jobs, then their publish data.
pub async fn job_list(
    engine: &Engine,
    request: &JobListRequest,
    signal: Option<&AbortSignal>,
) -> Result<JobListPage, EngineError> {
    let search = job_list_search(&engine.config, &engine.fields, request);
    let answer = engine.msearch(&[search], signal).await?.remove(0)?;
    let mut page = parse_job_list(&answer, request.page_size);
    if page.jobs.is_empty() {
        return Ok(page);
    }
    let jids: Vec<String> = page.jobs.iter().map(|j| j.jid.clone()).collect();
    match engine
        .msearch(
            &publish_searches(&engine.config, &engine.fields, &jids),
            signal,
        )
        .await
    {
        Ok(parts) => {
            for part in parts.iter().filter_map(|p| p.as_ref().err()) {
                page.notes.push(format!("publish data unavailable: {part}"));
            }
            attach_publish(&mut page, parts[0].as_ref().ok(), parts[1].as_ref().ok());
        }
        Err(e) => page.notes.push(format!("publish data unavailable: {e}")),
    }
    Ok(page)
}

/// The job page in one round trip.
pub async fn job(
    engine: &Engine,
    jid: &str,
    signal: Option<&AbortSignal>,
) -> Result<JobDetail, EngineError> {
    let answers = engine
        .msearch(&job_searches(&engine.config, &engine.fields, jid), signal)
        .await?;
    parse_job(jid, answers)
}
