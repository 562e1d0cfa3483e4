//! The job page (`get_jid`): every minion's return for one jid, the publish
//! data, and the targeted minions that never returned — all in one
//! `_msearch`.

use crate::json::At;
use serde_json::json;

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use super::filter::failed_clause;
use super::jobs::soft;
use super::scan::{Scan, ScanEnd};
use super::timeline::{JobTimeline, TimelineKind};
use super::{hits, returns_filter, template, total_hits, QueryContext};
use crate::engine::{EngineError, SearchRequest};
use crate::model::{EventDoc, HighstateSummary, Outcome, PublishInfo, ReturnData, ReturnDoc};
use crate::sort;
use crate::text::scalar_text;

/// Returns per page of the job page, read without their `data`: a job on
/// 2,000 minions pages by minion id, and each minion's data is fetched on
/// its own (see [`return_search`]), so no answer holds more than one
/// return's output.
pub const JOB_RETURNS_PAGE: usize = 500;
/// The most `ret` events and returned minions one request counts (the
/// engines' default `index.max_result_window`).
pub const MAX_RETURNS: usize = 10_000;

/// How long a jid with nothing in the engine is waited for.
pub const WAIT_FOR_NEW_MS: i64 = 30_000;
/// How far a fresh jid's time may lie from the browser's clock: a master
/// writes jids in its own time zone.
const JID_CLOCK_SLACK_MS: i64 = 26 * 3_600_000;

/// Why `jid` cannot be a Salt job id, for the page that finds nothing
/// under it: `None` for a jid (20 digits, the job's start time,
/// `YYYYMMDDhhmmssffffff`, with `_<pid>` under `unique_jid`).
pub fn not_a_jid(jid: &str) -> Option<String> {
    crate::time::jid_start_ms(jid).is_none().then(|| {
        let shown = crate::text::line_shown(jid);
        // Twenty digits that are no date (month 13) are told apart.
        let no_time = if super::filter::is_whole_jid(jid) {
            " its digits are no time:"
        } else {
            ""
        };
        format!(
            "“{shown}” is not a Salt job id:{no_time} a jid is 20 digits, the time the job started (YYYYMMDDhhmmssffffff)."
        )
    })
}

/// A minion the job should have heard from that has no return document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingMinion {
    pub minion: String,
    pub reason: MissingReason,
}

/// Why a minion has no return, as far as the master's events tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingReason {
    /// Targeted, and its `salt/job/<jid>/ret/<minion>` event exists: the
    /// minion answered but the returner lost its document.
    ReturnedToMaster,
    /// Targeted, and no return at all: it did not answer, or its return was
    /// never sent.
    NoReturn,
    /// A list target named it but the master did not know it when it
    /// published the job (the publish event's `missing`).
    UnknownToMaster,
}

impl MissingReason {
    pub fn explain(self) -> &'static str {
        match self {
            MissingReason::ReturnedToMaster => {
                "returned to the master, but its return document was not written (the returner lost it)"
            }
            MissingReason::NoReturn => {
                "no return: the minion did not answer, or its return was never sent"
            }
            MissingReason::UnknownToMaster => {
                "the master did not know this minion when it published the job (no accepted key: Salt's CLI reports it as not connected)"
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobDetail {
    pub jid: String,
    /// The first page of returns, sorted by minion id, without their data
    /// (`ReturnData::Unread`).
    pub returns: Vec<ReturnDoc>,
    /// Where the next page of returns starts, if there is one.
    pub more: Option<ReturnsCursor>,
    /// How many return documents the engine holds for this jid.
    pub total_returns: u64,
    /// How many of them failed (runner returns excluded), all pages.
    pub failed_returns: u64,
    pub publish: Option<PublishInfo>,
    pub missing: Vec<MissingMinion>,
    /// The job's events in time order.
    pub timeline: JobTimeline,
    pub notes: Vec<String>,
    /// The first return (by minion id) with its data, when asked for: the
    /// page's first output without a round trip of its own.
    pub first_output: Option<Arc<ReturnDoc>>,
}

/// Which of a job's returns the job page lists: on a job of 2,000 minions
/// the 136 that failed are found without paging through the rest. The
/// totals, the missing minions and the state totals count them all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MinionsShown {
    #[default]
    All,
    /// Only the returns [`failed_clause`] counts as failed.
    Failed,
}

impl MinionsShown {
    /// The other choice: what the page's switch between them links to.
    pub fn other(self) -> MinionsShown {
        match self {
            MinionsShown::All => MinionsShown::Failed,
            MinionsShown::Failed => MinionsShown::All,
        }
    }
}

/// The sort values of a page's last return (minion, index): the next page
/// starts after it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReturnsCursor(pub Vec<Value>);

/// A further page of a job's returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReturnsPage {
    pub returns: Vec<ReturnDoc>,
    pub more: Option<ReturnsCursor>,
}

/// How long after publishing a job the job page follows it while targeted
/// minions have not answered. Salt's CLI stops waiting far sooner (its
/// timeout and gather_job_timeout), but a highstate may run for many
/// minutes and its returns still come.
pub const FOLLOW_FOR_MS: i64 = 15 * 60_000;
/// How long a young job whose targets are not known yet is followed.
pub const TARGETS_WAIT_MS: i64 = 60_000;

impl JobDetail {
    /// When the master published the job: its publish event's `_stamp`;
    /// before that event is searchable (the job cache's load often comes
    /// first, and has no time), the jid itself, which is the master's clock
    /// at publish (UTC on a master in UTC; Salt's `utc_jid: False` means
    /// its local time).
    pub fn published_ms(&self) -> Option<i64> {
        let stamp = self.publish.as_ref().and_then(|p| p.stamp.as_deref());
        stamp
            .and_then(|s| crate::time::parse_utc(s).ok())
            .or_else(|| crate::time::jid_start_ms(&self.jid))
    }

    /// The job may still be running: minions it targeted have not
    /// answered, and it was published less than [`FOLLOW_FOR_MS`] ago.
    pub fn still_running(&self, now_ms: i64) -> bool {
        let waiting = self.missing.iter().any(|m| {
            matches!(
                m.reason,
                MissingReason::NoReturn | MissingReason::ReturnedToMaster
            )
        });
        // Which minions it targeted is not known yet (the job cache's load
        // came before the publish event): worth a minute's wait. Nothing
        // of it at all is [`Self::worth_following`]'s own question.
        let targets_unknown =
            !self.is_empty() && self.publish.as_ref().is_none_or(|p| p.minions.is_none());
        // A jid far ahead of the clock is no young job: it never ages.
        let age = self
            .published_ms()
            .map(|p| now_ms - p)
            .filter(|a| *a > -JID_CLOCK_SLACK_MS);
        age.is_some_and(|a| {
            (waiting && a < FOLLOW_FOR_MS) || (targets_unknown && a < TARGETS_WAIT_MS)
        })
    }

    /// Worth asking for again, `now_ms`, on a page opened at `opened_ms`:
    /// still running, or nothing of it in the engine yet though its jid is
    /// fresh (a jid from the CLI is searchable a second or two after
    /// publish) and the page has waited less than [`WAIT_FOR_NEW_MS`]. A
    /// jid that is no jid, or is days old, is not waited for; no page
    /// follows for longer than [`FOLLOW_FOR_MS`] (a jid in a master's
    /// local time ahead of UTC looks young for hours).
    pub fn worth_following(&self, now_ms: i64, opened_ms: i64) -> bool {
        // A master's jid is its local time (`utc_jid: False`): a day either way.
        let fresh = crate::time::jid_start_ms(&self.jid)
            .is_some_and(|t| (now_ms - t).abs() < JID_CLOCK_SLACK_MS);
        let waited = now_ms - opened_ms;
        (self.still_running(now_ms) && waited < FOLLOW_FOR_MS)
            || (self.is_empty() && fresh && waited < WAIT_FOR_NEW_MS)
    }

    /// Nothing of the job is in the engine yet: no return, no publish data
    /// (a job just published is searchable a second or two later).
    pub fn is_empty(&self) -> bool {
        self.total_returns == 0 && self.publish.is_none()
    }

    /// Minions that returned: (succeeded, failed), all pages.
    pub fn outcomes(&self) -> (u64, u64) {
        (
            self.total_returns.saturating_sub(self.failed_returns),
            self.failed_returns,
        )
    }
}

/// The return whose data came with the job first among `returns`, the
/// others keeping their order; read without its data and put there when
/// it lies beyond this page (a minion an address names).
fn output_first(returns: &mut Vec<ReturnDoc>, doc: &ReturnDoc) {
    match returns
        .iter()
        .position(|r| r.index == doc.index && r.id == doc.id)
    {
        Some(at) => returns[..=at].rotate_right(1),
        None => returns.insert(0, doc.summary()),
    }
}

/// `page` after `returns`, but for the one already there: the return an
/// address named, read ahead of its page and put first.
pub fn add_page(returns: &mut Vec<ReturnDoc>, mut page: Vec<ReturnDoc>) {
    if let Some(first) = returns.first() {
        page.retain(|r| r.index != first.index || r.id != first.id);
    }
    returns.extend(page);
}

/// The summed state summary of the state returns among `returns` whose
/// data is read; `None` while any is unread or none holds states.
pub fn states_total<'a>(
    returns: impl IntoIterator<Item = &'a ReturnDoc>,
) -> Option<HighstateSummary> {
    let mut states: Option<HighstateSummary> = None;
    for r in returns {
        match &r.data {
            ReturnData::Unread => return None,
            ReturnData::States(s) => states
                .get_or_insert_with(HighstateSummary::default)
                .add(&HighstateSummary::of(&s.runs)),
            _ => {}
        }
    }
    states
}

/// Every state run of a job, for its totals when there are too many
/// minions to read each one's output: only the fields the totals count.
pub fn states_scan(ctx: &QueryContext, jid: &str) -> Scan {
    let SearchRequest { mut body, .. } = returns_search(ctx, jid, None, MinionsShown::All);
    Scan {
        query: body["query"].take(),
        source: vec!["data.*.result", "data.*.changes", "data.*.duration"],
        limit: MAX_RETURNS as u64,
    }
}

/// A job's state totals across all its minions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobStates {
    /// `None` when no return holds states.
    pub summary: Option<HighstateSummary>,
    /// How many returns were read, and why it stopped short if it did.
    pub end: ScanEnd,
}

impl JobStates {
    /// Salt's summary lines, and what they cover when short of the job.
    pub fn lines(&self) -> Option<Vec<String>> {
        let mut lines = self.summary.as_ref()?.lines().to_vec();
        lines.extend(self.end.stopped_short.clone());
        Some(lines)
    }
}

crate::search_bundle! {
    /// The job page's one round trip: its returns, its publish event, its
    /// events (who answered the master, and when), its job-cache load, and
    /// the first return's data.
    pub struct JobSearches => JobAnswers { returns, publish_event, job_events, job_cache, first_output }
}

/// A page of the job's returns without their data, from `after`; the first
/// page also counts them: every returned minion (to tell the missing ones)
/// and the failed ones. Those `shown` are a filter after the counts
/// (`post_filter`) on the first page, and the query's on the next.
pub fn returns_search(
    ctx: &QueryContext,
    jid: &str,
    after: Option<&ReturnsCursor>,
    shown: MinionsShown,
) -> SearchRequest {
    let (config, fields) = (&ctx.config, &ctx.fields);
    let (mut filter, must_not) = returns_filter(config);
    filter.push(json!({"term": {fields.jid.clone(): jid}}));
    let failed_only = shown == MinionsShown::Failed;
    if failed_only && after.is_some() {
        filter.push(failed_clause(fields));
    }
    let mut body = template::body(
        r#"{"size":$0,"track_total_hits":true,"query":{"bool":{"filter":$1,"must_not":$2}},"_source":{"excludes":["data"]},"sort":[{$3:{"order":"asc","unmapped_type":"keyword"}},{"_index":{"order":"asc","unmapped_type":"keyword"}}]}"#,
        &[
            json!(JOB_RETURNS_PAGE),
            Value::Array(filter),
            Value::Array(must_not),
            json!(fields.minion),
        ],
    );
    match after {
        Some(ReturnsCursor(values)) => body["search_after"] = Value::Array(values.clone()),
        None => {
            body["aggs"] = template::body(
                r#"{"returned":{"terms":{"field":$0,"size":$1}},"failed":{"filter":$2}}"#,
                &[
                    json!(fields.minion),
                    json!(MAX_RETURNS),
                    failed_clause(fields),
                ],
            );
            if failed_only {
                // The hits' total then counts the failed: the job's own.
                body["aggs"]["all"] = json!({"filter": {"match_all": {}}});
                body["post_filter"] = failed_clause(fields);
            }
        }
    }
    SearchRequest::new(&config.index_pattern, body)
}

/// Which return's data comes with the job page's one round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstOutput<'a> {
    /// None: the live follow, whose outputs are on screen.
    Nothing,
    /// The first return by minion id.
    First,
    /// The return of the minion an address names (`#minion-…`, a link from
    /// another view), however far down the job's pages it is; the first
    /// when the anchor names nobody.
    Named(&'a str),
}

/// One return of [`returns_search`]'s order, with its data (see
/// [`FirstOutput`]): one return's output, as large as [`return_search`]
/// would fetch it.
fn first_output_search(
    ctx: &QueryContext,
    jid: &str,
    output: FirstOutput,
    shown: MinionsShown,
) -> SearchRequest {
    let SearchRequest { index, mut body } = returns_search(ctx, jid, None, shown);
    let mut query = body["query"].take();
    if let Some(filter) = query
        .pointer_mut("/bool/filter")
        .and_then(Value::as_array_mut)
    {
        if let FirstOutput::Named(anchor) = output {
            filter.extend(anchor_clause(&ctx.fields.minion, anchor));
        }
        filter.extend(body.get_mut("post_filter").map(Value::take));
    }
    let body = json!({
        "size": u8::from(output != FirstOutput::Nothing),
        "query": query,
        "sort": body["sort"].take()
    });
    SearchRequest { index, body }
}

/// The minions whose [`link::minion_anchor`](crate::route::link::minion_anchor)
/// is `anchor`: the anchor keeps a minion id's letters, digits, `-`, `.`
/// and `_` and writes `_` for the rest, so each `_` may stand for any one
/// character. `None` for an anchor that names no minion.
fn anchor_clause(minion_field: &str, anchor: &str) -> Option<Value> {
    let id = anchor.strip_prefix("minion-").filter(|id| !id.is_empty())?;
    Some(if id.contains('_') {
        json!({"wildcard": {minion_field: {"value": id.replace('_', "?")}}})
    } else {
        json!({"term": {minion_field: id}})
    })
}

/// One return with its data, by where it is (`_index`, `_id`).
pub fn return_search(index: &str, id: &str) -> SearchRequest {
    SearchRequest::new(
        index,
        json!({"size": 1, "query": {"ids": {"values": [id]}}}),
    )
}

/// Reads [`return_search`]'s answer: the return, with its data.
pub fn parse_return(index: &str, id: &str, answer: Value) -> Result<ReturnDoc, EngineError> {
    super::first_hit(answer)
        .map(ReturnDoc::from_owned_hit)
        .ok_or_else(|| EngineError::BadResponse {
            url: None,
            detail: format!("the return {index}/{id} is gone from the engine"),
        })
}

/// A page of returns read from [`returns_search`]'s answer.
pub fn parse_returns(answer: &Value) -> ReturnsPage {
    let found = hits(answer);
    let more = (found.len() >= JOB_RETURNS_PAGE)
        .then(|| found.last()?.get("sort")?.as_array().cloned())
        .flatten()
        .map(ReturnsCursor);
    let mut returns: Vec<ReturnDoc> = found.iter().map(ReturnDoc::summary_from_hit).collect();
    // The engine sorts them so; an odd answer does not change the order shown.
    sort::sort_by(&mut returns, |a, b| {
        a.minion.cmp(&b.minion).then(a.index.cmp(&b.index))
    });
    ReturnsPage { returns, more }
}

/// The job page's searches, with one return's data (see [`FirstOutput`]),
/// listing the returns `shown`.
pub fn job_searches(
    ctx: &QueryContext,
    jid: &str,
    output: FirstOutput,
    shown: MinionsShown,
) -> JobSearches {
    let (config, fields) = (&ctx.config, &ctx.fields);
    JobSearches {
        returns: returns_search(ctx, jid, None, shown),
        first_output: first_output_search(ctx, jid, output, shown),
        // A runner's jid is published as `salt/run/<jid>/new`.
        publish_event: SearchRequest::new(
            &config.event_index_pattern,
            json!({"size": 1, "query": {"terms": {fields.tag.clone(): [format!("salt/job/{jid}/new"), format!("salt/run/{jid}/new")]}}}),
        ),
        job_events: SearchRequest::new(
            &config.event_index_pattern,
            // What the timeline needs, not the returns they carry.
            template::body(
                r#"{"size":$0,"query":{"bool":{"should":[{"prefix":{$1:$2}},{"prefix":{$1:$3}},{"prefix":{$1:$4}}]}},"_source":["tag","data._stamp","data.success","data.retcode","data.id"],"sort":[{"data._stamp":{"order":"asc","unmapped_type":"date"}}]}"#,
                &[
                    json!(MAX_RETURNS),
                    json!(fields.tag),
                    json!(format!("salt/job/{jid}/")),
                    json!(format!("salt/run/{jid}/")),
                    // `salt -b`: the batch's start, progress and end.
                    json!(format!("salt/batch/{jid}/")),
                ],
            ),
        ),
        job_cache: SearchRequest::new(
            &config.job_cache_index,
            json!({"size": 1, "query": {"ids": {"values": [jid]}}}),
        ),
    }
}

/// Reads the job page's answers. Only the returns search failing is an
/// error; the publish lookups failing leave a note.
pub fn parse_job(jid: &str, answers: JobAnswers) -> Result<JobDetail, EngineError> {
    let returns_answer = answers.returns?;
    // Not there (or not asked for): the page fetches it as any other.
    let first_output = answers
        .first_output
        .ok()
        .and_then(super::first_hit)
        .map(|hit| Arc::new(ReturnDoc::from_owned_hit(hit)));
    let mut notes = Vec::new();
    let publish_answer = soft(answers.publish_event, "publish event", &mut notes);
    let events_answer = soft(answers.job_events, "job events", &mut notes);
    let job_cache_answer = soft(answers.job_cache, "job cache", &mut notes);

    let ReturnsPage { mut returns, more } = parse_returns(&returns_answer);
    if let Some(doc) = &first_output {
        output_first(&mut returns, doc);
    }
    // Listing only the failed, the hits' total counts those.
    let total_returns = returns_answer
        .at("/aggregations/all/doc_count")
        .and_then(Value::as_u64)
        .or_else(|| total_hits(&returns_answer))
        .unwrap_or(returns.len() as u64);
    let failed_returns = returns_answer
        .at("/aggregations/failed/doc_count")
        .and_then(Value::as_u64)
        .unwrap_or_else(|| {
            returns
                .iter()
                .filter(|r| r.outcome() == Outcome::Failed)
                .count() as u64
        });
    // Every minion that returned, all pages (an aggregation: a page holds
    // only some of them).
    let mut returned: HashSet<String> = returns_answer
        .at("/aggregations/returned/buckets")
        .and_then(Value::as_array)
        .map(|b| {
            b.iter()
                .filter_map(|b| b.get("key").map(scalar_text))
                .collect()
        })
        .unwrap_or_default();
    returned.extend(returns.iter().map(|r| r.minion.clone()));

    let event = publish_answer.as_ref().and_then(|a| {
        hits(a)
            .iter()
            .find_map(|h| PublishInfo::from_event(h.get("_source")?))
    });
    let cached = job_cache_answer.as_ref().and_then(|a| {
        hits(a)
            .iter()
            .find_map(|h| PublishInfo::from_job_cache(h.get("_source")?))
    });
    let publish = PublishInfo::merge(event, cached);

    let events: Vec<EventDoc> = events_answer
        .as_ref()
        .map(|a| hits(a).iter().map(EventDoc::from_hit).collect())
        .unwrap_or_default();
    if events.len() >= MAX_RETURNS {
        notes.push(format!(
            "the timeline shows the first {MAX_RETURNS} events of this job"
        ));
    }
    let ret_events: HashSet<String> = events
        .iter()
        .filter(|e| e.family == "salt/job/*/ret/*")
        .filter_map(|e| e.minion.clone())
        .collect();
    let timeline = JobTimeline::of(events);
    let published_event = timeline
        .entries
        .iter()
        .any(|e| e.kind == TimelineKind::Published);
    if published_event && timeline.returned == 0 && total_returns > 0 {
        notes.push(format!(
            "the event cache holds no return event of this job, though {total_returns} minion(s) returned: with dynamic mappings the engine rejects return events whose `return` differs in type from the first one it indexed (true, a string, a dict of states); install the index template (scripts/index-template.sh) to keep them"
        ));
    }
    let mut missing: Vec<MissingMinion> = publish
        .as_ref()
        .and_then(|p| p.minions.as_ref())
        .map(|targeted| {
            targeted
                .iter()
                .filter(|m| !returned.contains(*m))
                .map(|m| MissingMinion {
                    minion: m.clone(),
                    reason: if ret_events.contains(m) {
                        MissingReason::ReturnedToMaster
                    } else {
                        MissingReason::NoReturn
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    if let Some(p) = &publish {
        missing.extend(
            p.unknown_minions
                .iter()
                .filter(|m| !returned.contains(*m))
                .map(|m| MissingMinion {
                    minion: m.clone(),
                    reason: MissingReason::UnknownToMaster,
                }),
        );
    }

    Ok(JobDetail {
        jid: jid.to_string(),
        returns,
        more,
        total_returns,
        failed_returns,
        publish,
        missing,
        timeline,
        notes,
        first_output,
    })
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
