//! One function per view: it asks the core for the requests, sends them and
//! hands back the view's model. Pages never build JSON themselves.

use saltscope_core::engine::EngineError;
use saltscope_core::query::audit::{
    audit_searches, parse_audit, AuditCursor, AuditFilter, AuditPage,
};
use saltscope_core::query::filter::JobFilter;
use saltscope_core::query::functions::{functions_search, parse_functions, FunctionsPage};
use saltscope_core::query::job::{job_searches, parse_job, JobDetail};
use saltscope_core::query::jobs::{
    attach_details, job_details_searches, job_list_searches, parse_job_list, JobListPage,
    JobListRequest,
};
use saltscope_core::query::minions::{
    latest_by_minion_search, minion_search, parse_latest_by_minion, parse_minions, LatestPage,
    MinionPage,
};
use web_sys::AbortSignal;

use crate::engine::Engine;

/// The job list in two round trips: the page with its histogram, then the
/// page's statistics and publish data.
pub async fn job_list(
    engine: &Engine,
    request: &JobListRequest,
    signal: Option<&AbortSignal>,
) -> Result<JobListPage, EngineError> {
    let searches = job_list_searches(&engine.config, &engine.fields, request);
    let mut page = parse_job_list(request, engine.msearch(&searches, signal).await?)?;
    page.notes.splice(0..0, engine.mapping_notes());
    if page.jobs.is_empty() {
        return Ok(page);
    }
    let jids: Vec<String> = page.jobs.iter().map(|j| j.jid.clone()).collect();
    let details = job_details_searches(&engine.config, &engine.fields, &jids);
    match engine.msearch(&details, signal).await {
        Ok(answers) => attach_details(&mut page, answers),
        Err(e) => page.notes.push(format!("job statistics unavailable: {e}")),
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

pub async fn minions(
    engine: &Engine,
    filter: &JobFilter,
    after: Option<&str>,
    signal: Option<&AbortSignal>,
) -> Result<MinionPage, EngineError> {
    let search = minion_search(
        &engine.config,
        &engine.fields,
        filter,
        &engine.noisy(),
        crate::now_ms(),
        after,
    );
    let mut page = parse_minions(first(engine.msearch(&[search], signal).await?))?;
    page.notes.splice(0..0, engine.mapping_notes());
    Ok(page)
}

pub async fn functions(
    engine: &Engine,
    filter: &JobFilter,
    signal: Option<&AbortSignal>,
) -> Result<FunctionsPage, EngineError> {
    let search = functions_search(
        &engine.config,
        &engine.fields,
        filter,
        &engine.noisy(),
        crate::now_ms(),
    );
    parse_functions(first(engine.msearch(&[search], signal).await?))
}

pub async fn latest_by_minion(
    engine: &Engine,
    fun: &str,
    filter: &JobFilter,
    after: Option<&str>,
    signal: Option<&AbortSignal>,
) -> Result<LatestPage, EngineError> {
    let search = latest_by_minion_search(
        &engine.config,
        &engine.fields,
        fun,
        filter,
        crate::now_ms(),
        after,
    );
    parse_latest_by_minion(first(engine.msearch(&[search], signal).await?))
}

pub async fn audit(
    engine: &Engine,
    filter: &AuditFilter,
    cursor: Option<&AuditCursor>,
    signal: Option<&AbortSignal>,
) -> Result<AuditPage, EngineError> {
    let searches = audit_searches(
        &engine.config,
        &engine.fields,
        filter,
        crate::now_ms(),
        cursor,
    );
    parse_audit(
        &engine.config,
        filter,
        cursor,
        engine.msearch(&searches, signal).await?,
    )
}

fn first(
    mut answers: Vec<Result<serde_json::Value, EngineError>>,
) -> Result<serde_json::Value, EngineError> {
    if answers.is_empty() {
        return Err(EngineError::BadResponse {
            url: String::new(),
            detail: "_msearch answered no responses".into(),
        });
    }
    answers.swap_remove(0)
}
