//! Each view's whole conversation with the engine: which searches, in how
//! many round trips, and what it makes of the answers — one async function
//! per view, generic over the [`Transport`]. The web app calls these; the
//! integration tests call the very same functions against the real engine
//! through the native transport.

use futures_util::future::join;
use serde_json::Value;

use crate::config::AppConfig;
use crate::engine::{
    encode_component, msearch, send_json, EngineError, HttpRequest, ProductInfo, Transport,
};
use crate::model::{EventDoc, HighstateSummary, ReturnData, ReturnDoc};
use crate::query::audit::{
    audit_searches, parse_audit, AuditCursor, AuditFilter, AuditPage, AUDIT_PAGE_SIZE,
};
use crate::query::compare::{
    compare_runs, parse_run, previous_run_search, run_search, CompareRequest, RunComparison,
};
use crate::query::drift::{drift_search, DriftCounter, DriftFilter, DriftReport};
use crate::query::events::{events_searches, parse_events, EventCursor, EventFilter, EventsPage};
use crate::query::failures::{FailureFilter, FailureGrouper, FailureReport};
use crate::query::filter::JobFilter;
use crate::query::fleet::{
    fleet_search, parse_fleet, parse_targeted, targeted_search, FleetFilter, FleetReport,
};
use crate::query::functions::{functions_search, parse_functions, FunctionsPage};
use crate::query::job::{
    job_searches, parse_job, parse_return, parse_returns, return_search, returns_search,
    states_scan, FirstOutput, JobDetail, JobStates, MinionsShown, ReturnsCursor, ReturnsPage,
};
use crate::query::jobs::{
    attach_details, job_details_searches, job_list_searches, parse_job_list, JobListPage,
    JobListRequest,
};
use crate::query::minions::{
    latest_by_minion_search, minion_search, parse_latest_by_minion, parse_minions, LatestOf,
    LatestPage, MinionPage,
};
use crate::query::scan::{scan, ScanProgress};
use crate::query::sls::{sls_scan, SlsReport, SlsRoller};
use crate::query::summary::{
    parse_unsummarised, unsummarised_search, without_pipeline, ComputedFrom,
};
use crate::query::tail::{parse_tail, tail_search, TailState};
use crate::query::{FieldMap, QueryContext};

/// What start-up learns: the operator's config, which engine answers, and
/// how it maps Salt's fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Connection {
    pub config: AppConfig,
    pub product: ProductInfo,
    pub fields: FieldMap,
}

impl Connection {
    /// The context of a view's searches, with this person's noise list and
    /// the time now.
    pub fn context(&self, noisy: Vec<String>, now_ms: i64) -> QueryContext {
        QueryContext {
            config: self.config.clone(),
            fields: self.fields.clone(),
            noisy,
            now_ms,
        }
    }
}

/// `GET /_field_caps` for every Salt field, over every Salt index.
pub fn field_caps_request(config: &AppConfig) -> HttpRequest {
    HttpRequest::get(format!(
        "/{},{},{}/_field_caps?fields={}&ignore_unavailable=true&allow_no_indices=true",
        segment_list(&config.index_pattern),
        segment_list(&config.event_index_pattern),
        segment_list(&config.job_cache_index),
        FieldMap::caps_fields()
    ))
}

/// An index pattern in a path: `*` and `,` keep their meaning.
fn segment_list(pattern: &str) -> String {
    encode_component(pattern)
}

/// Start-up, in one round trip: what the engine is (`GET /`) and how it maps
/// Salt's fields (`_field_caps`), asked together.
pub async fn connect<T: Transport>(t: &T, config: AppConfig) -> Result<Connection, EngineError> {
    let root_request = HttpRequest::get("/");
    let caps_request = field_caps_request(&config);
    let (root, caps): (Result<Value, _>, Result<Value, _>) =
        join(send_json(t, &root_request), send_json(t, &caps_request)).await;
    let product = ProductInfo::from_root(&t.url("/"), &root?)?;
    Ok(Connection {
        fields: FieldMap::from_field_caps(&caps?),
        product,
        config,
    })
}

/// The job list (`get_jids`) in two round trips: the page with its
/// histogram and suggestions, then the page's statistics and publish data.
/// The second failing leaves the rows with a note.
pub async fn job_list<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    request: &JobListRequest,
) -> Result<JobListPage, EngineError> {
    let answers = msearch(t, &job_list_searches(ctx, request)).await?;
    let mut page = parse_job_list(ctx, request, answers)?;
    page.notes.splice(0..0, ctx.mapping_notes());
    if page.jobs.is_empty() {
        return Ok(page);
    }
    let jids: Vec<String> = page.jobs.iter().map(|j| j.jid.clone()).collect();
    match msearch(t, &job_details_searches(ctx, &jids)).await {
        Ok(answers) => attach_details(&mut page, answers),
        Err(e) => page.notes.push(format!("job statistics unavailable: {e}")),
    }
    Ok(page)
}

/// The job page (`get_jid`) in one round trip, listing the returns
/// `shown`, with one return's data: the first, or the one an address names
/// (see [`FirstOutput`]).
pub async fn job<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    jid: &str,
    output: FirstOutput<'_>,
    shown: MinionsShown,
) -> Result<JobDetail, EngineError> {
    parse_job(
        jid,
        msearch(t, &job_searches(ctx, jid, output, shown)).await?,
    )
}

/// The job page's further returns `shown`, from `after` (a job on
/// thousands of minions), still without their data.
pub async fn job_returns<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    jid: &str,
    after: &ReturnsCursor,
    shown: MinionsShown,
) -> Result<ReturnsPage, EngineError> {
    Ok(parse_returns(
        &msearch(t, &returns_search(ctx, jid, Some(after), shown)).await??,
    ))
}

/// A job's state totals across all its minions (Salt's summary lines for
/// the whole job), its state runs read a page at a time with only what the
/// totals need: for a job of more minions than the page reads outputs of.
pub async fn job_states<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    jid: &str,
    progress: &dyn Fn(ScanProgress) -> bool,
) -> Result<JobStates, EngineError> {
    let mut summary: Option<HighstateSummary> = None;
    let mut add = |hit: &Value| {
        if let ReturnData::States(s) = ReturnDoc::read_hit(hit).data {
            let runs = HighstateSummary::of(&s.runs);
            summary
                .get_or_insert_with(HighstateSummary::default)
                .add(&runs);
        }
    };
    let end = scan(t, ctx, &states_scan(ctx, jid), &mut add, progress).await?;
    Ok(JobStates { summary, end })
}

/// One minion's return with its data (`_index`, `_id` as the job page read
/// them): an answer holds one return's output, however large.
pub async fn job_return<T: Transport>(
    t: &T,
    index: &str,
    id: &str,
) -> Result<ReturnDoc, EngineError> {
    parse_return(index, id, msearch(t, &return_search(index, id)).await??)
}

/// The events view: a page of the bus, newest first, and what floods it
/// (events per tag family), in one round trip.
pub async fn events<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    filter: &EventFilter,
    cursor: Option<&EventCursor>,
) -> Result<EventsPage, EngineError> {
    let answers = msearch(t, &events_searches(ctx, filter, cursor)).await?;
    parse_events(ctx, cursor, answers)
}

/// One poll of the live tail: the events matching `filter` not shown yet,
/// oldest first (`state` remembers them), and whether more are waiting.
pub async fn tail<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    filter: &EventFilter,
    state: &mut TailState,
) -> Result<(Vec<EventDoc>, bool), EngineError> {
    let (events, more) = parse_tail(msearch(t, &tail_search(ctx, filter, state)).await?)?;
    Ok((state.take(events), more))
}

/// Every minion that returned in the range (`get_minions`), paged by id.
pub async fn minions<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    filter: &JobFilter,
    after: Option<&str>,
) -> Result<MinionPage, EngineError> {
    let answer = msearch(t, &minion_search(ctx, filter, after)).await?;
    let mut page = parse_minions(answer)?;
    page.notes.splice(0..0, ctx.mapping_notes());
    Ok(page)
}

/// Every function in the range with its failure rate (`get_fun`).
pub async fn functions<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    filter: &JobFilter,
) -> Result<FunctionsPage, EngineError> {
    parse_functions(msearch(t, &functions_search(ctx, filter)).await?)
}

/// One function's latest return on every minion: which are failing now.
pub async fn latest_by_minion<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    fun: &str,
    filter: &JobFilter,
    which: LatestOf,
    after: Option<&str>,
) -> Result<LatestPage, EngineError> {
    let search = latest_by_minion_search(ctx, fun, filter, which, after);
    parse_latest_by_minion(msearch(t, &search).await?, which)
}

/// Who ran what, on which target, when.
pub async fn audit<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    filter: &AuditFilter,
    cursor: Option<&AuditCursor>,
) -> Result<AuditPage, EngineError> {
    let answers = msearch(t, &audit_searches(ctx, filter, cursor)).await?;
    let mut page = parse_audit(&ctx.config, filter, cursor, answers)?;
    // The risk rules read the arguments as Salt joined them, which no
    // engine query can: high-risk only reads on, page after page, until it
    // has a page of such lines, the trail ends, or it has read
    // AUDIT_SCAN_PAGES pages (then "Older" reads on from there).
    let mut pages = 1;
    while filter.risky_only && page.entries.len() < AUDIT_PAGE_SIZE && pages < AUDIT_SCAN_PAGES {
        let Some(next) = page.next.clone() else { break };
        let answers = msearch(t, &audit_searches(ctx, filter, Some(&next))).await?;
        page.extend(parse_audit(&ctx.config, filter, Some(&next), answers)?);
        pages += 1;
    }
    Ok(page)
}

/// Pages of the audit trail one view of high-risk lines reads at most.
pub const AUDIT_SCAN_PAGES: usize = 20;

/// Every minion's standing from its latest state run (the minions of
/// `filter.minions`; its SLS and standing are [`FleetReport::select`]'s): the whole fleet,
/// page after page of minions (those that returned and those jobs were
/// published to, side by side in one `_msearch` a round), counted.
pub async fn fleet<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    filter: &FleetFilter,
) -> Result<FleetReport, EngineError> {
    let hours = ctx.config.unreported_hours;
    let from = computed_from(t, ctx, &filter.minions).await?;
    let mut pages = Vec::new();
    let mut targeted = Vec::new();
    let mut notes = ctx.mapping_notes();
    // `Some(after)` while a side has pages left; `Some(None)` is its first.
    let (mut returned_after, mut targeted_after) = (Some(None::<String>), Some(None::<String>));
    while returned_after.is_some() || targeted_after.is_some() {
        let searches = (
            returned_after
                .as_ref()
                .map(|a| fleet_search(ctx, filter, a.as_deref(), &from)),
            targeted_after
                .as_ref()
                .map(|a| targeted_search(ctx, filter, a.as_deref())),
        );
        let (returned, published) = msearch(t, &searches).await?;
        if let Some(answer) = returned {
            let page = parse_fleet(answer, ctx.now_ms, hours)?;
            returned_after = page.next_after.clone().map(Some);
            pages.push(page);
        }
        if let Some(answer) = published {
            // No event index is no error: the fleet is then the minions
            // that returned.
            targeted_after = match parse_targeted(answer, filter) {
                Ok((ids, next)) => {
                    targeted.extend(ids);
                    next.map(Some)
                }
                Err(e) => {
                    notes.push(format!(
                        "minions targeted by jobs unknown ({e}): minions that never returned are not counted"
                    ));
                    None
                }
            };
        }
    }
    let mut report = FleetReport::of(pages, targeted, hours);
    report.notes.splice(0..0, notes);
    report.computed_from = Some(from);
    Ok(report)
}

/// Whether a fleet-wide view can read the summary pipeline's fields: they
/// are mapped, and no state run of `minions` (all without) lacks them.
pub async fn computed_from<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    minions: &[String],
) -> Result<ComputedFrom, EngineError> {
    if !ctx.fields.summary {
        return Ok(without_pipeline());
    }
    parse_unsummarised(msearch(t, &unsummarised_search(ctx, minions)).await?)
}

/// Two state runs side by side: `a` and `b`, or `a` and the state run of
/// its minion just before it (a second round trip, once `a`'s time is known).
pub async fn compare<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    request: &CompareRequest,
) -> Result<RunComparison, EngineError> {
    let not_found = |r: &crate::query::compare::RunRef| {
        let r = r.clone();
        move || format!("No return of job {} from minion {}.", r.jid, r.minion)
    };
    let (a, b) = msearch(
        t,
        &(
            run_search(ctx, &request.a),
            request.b.as_ref().map(|b| run_search(ctx, b)),
        ),
    )
    .await?;
    let a = parse_run(a, not_found(&request.a))?;
    let b = match (b, &request.b) {
        (Some(b), Some(asked)) => parse_run(b, not_found(asked))?,
        _ => {
            let before = a.timestamp.clone().unwrap_or_default();
            let answer = msearch(t, &previous_run_search(ctx, &a.minion, &before)).await?;
            parse_run(answer, || {
                format!(
                    "This is the first state run of {} in the engine (job {}): there is no earlier run to compare it with.",
                    a.minion, a.jid
                )
            })?
        }
    };
    // The older run on the left, as a diff reads.
    Ok(if request.b.is_none() {
        compare_runs(b, a)
    } else {
        compare_runs(a, b)
    })
}

/// Failed states across the fleet, grouped into patterns: the failed state
/// runs of the range read newest first (`progress` answers `false` to stop).
pub async fn failures<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    filter: &FailureFilter,
    progress: &dyn Fn(ScanProgress) -> bool,
) -> Result<FailureReport, EngineError> {
    let mut grouper = FailureGrouper::default();
    let end = scan(
        t,
        ctx,
        &filter.scan(ctx),
        &mut |hit| grouper.add(hit),
        progress,
    )
    .await?;
    let mut report = grouper.report(end);
    report.notes.splice(0..0, ctx.mapping_notes());
    Ok(report)
}

/// Per-SLS runs, failure and change rates, durations; the slowest states.
pub async fn sls<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    filter: &FailureFilter,
    progress: &dyn Fn(ScanProgress) -> bool,
) -> Result<SlsReport, EngineError> {
    let mut roller = SlsRoller::default();
    let end = scan(
        t,
        ctx,
        &sls_scan(ctx, filter),
        &mut |hit| roller.add(hit),
        progress,
    )
    .await?;
    let mut report = roller.report(end);
    report.notes.splice(0..0, ctx.mapping_notes());
    Ok(report)
}

/// States that changed in at least k of each minion's last N state runs,
/// a page of minions at a time.
pub async fn drift<T: Transport>(
    t: &T,
    ctx: &QueryContext,
    filter: &DriftFilter,
) -> Result<DriftReport, EngineError> {
    let from = computed_from(t, ctx, &filter.minions).await?;
    let mut counter = DriftCounter::default();
    let mut after: Option<String> = None;
    loop {
        let answer = msearch(t, &drift_search(ctx, filter, after.as_deref(), &from)).await?;
        after = counter.add_page(answer, filter)?;
        if after.is_none() {
            break;
        }
    }
    let mut report = counter.report();
    report.notes.splice(0..0, ctx.mapping_notes());
    report.computed_from = Some(from);
    Ok(report)
}
