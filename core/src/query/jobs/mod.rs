//! The job list (`get_jids`): one row per jid, newest first, filtered.
//!
//! Round trip 1 is one `_msearch` of three searches: the page of jids (a
//! composite aggregation on jid — jids are start times, so it pages in time
//! order at any depth without `from`/`size`), the histogram with the totals,
//! and the function suggestions. Round trip 2 is one `_msearch` with every
//! return's statistics for the page's jids, their publish events and their
//! job-cache loads.

use crate::json::At;
use serde_json::{json, Value};

use super::filter::{failed_clause, JobFilter, OutcomeFilter};
use super::histogram::{histogram_agg, parse_histogram, Histogram};
use super::template::body;
use super::QueryContext;
use crate::engine::{EngineError, SearchRequest};
use crate::model::PublishInfo;
use crate::route::param;
use crate::text::{json_text, scalar_text};

mod details;

pub use details::{
    attach_details, attach_publish, job_details_searches, publish_searches, soft,
    JobDetailsAnswers, JobDetailsSearches, PublishAnswers, PublishSearches,
};

pub const DEFAULT_PAGE_SIZE: usize = 50;
/// "All succeeded" is decided per job after the fact: look at this many
/// times a page's jids to fill a page.
const SUCCEEDED_OVERFETCH: usize = 4;
/// Failed minions named in a job's row, at most.
pub const FAILED_MINIONS_SHOWN: usize = 10;

/// Where a page of the job list starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Cursor {
    /// The newest jobs.
    #[default]
    Newest,
    /// Jobs older than this jid (the "Older" link).
    After(String),
    /// Jobs newer than this jid (the "Newer" link).
    Before(String),
}

impl Cursor {
    /// The page a link names; a cursor that is no jid (digits, with `_<pid>`
    /// under `unique_jid`) is explained and the newest page shown.
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (Cursor, Option<String>) {
        let (name, jid, cursor): (_, _, fn(String) -> Cursor) =
            match (get(param::AFTER), get(param::BEFORE)) {
                (Some(a), _) if !a.is_empty() => (param::AFTER, a, Cursor::After),
                (_, Some(b)) if !b.is_empty() => (param::BEFORE, b, Cursor::Before),
                _ => return (Cursor::Newest, None),
            };
        if !super::filter::is_jid_text(jid) {
            let shown = crate::text::line_shown(jid);
            return (
                Cursor::Newest,
                Some(format!(
                    "{name}={shown}: no jid to page from; the newest jobs are shown"
                )),
            );
        }
        (cursor(jid.to_string()), None)
    }

    pub fn to_query(&self) -> Option<(&'static str, String)> {
        match self {
            Cursor::Newest => None,
            Cursor::After(j) => Some((param::AFTER, j.clone())),
            Cursor::Before(j) => Some((param::BEFORE, j.clone())),
        }
    }
}

/// Which page of which jobs to fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobListRequest {
    pub filter: JobFilter,
    pub page_size: usize,
    pub cursor: Cursor,
}

impl JobListRequest {
    pub fn new(filter: JobFilter, cursor: Cursor) -> JobListRequest {
        JobListRequest {
            filter,
            page_size: DEFAULT_PAGE_SIZE,
            cursor,
        }
    }

    fn size(&self) -> usize {
        if self.page_size == 0 {
            DEFAULT_PAGE_SIZE
        } else {
            self.page_size
        }
    }
}

/// One job in the list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobSummary {
    pub jid: String,
    /// The job's function; several only if returns disagree.
    pub functions: Vec<String>,
    /// Earliest and latest `@timestamp` among the returns (epoch ms).
    pub first_return_ms: Option<i64>,
    pub last_return_ms: Option<i64>,
    /// Minions with a return document.
    pub returned: u64,
    /// Minions whose return failed (runner returns excluded).
    pub failed: u64,
    /// Some of the failed minions, for the expanded row.
    pub failed_minions: Vec<String>,
    /// A runner job (`runner.*`): its `success: false` means nothing.
    pub runner: bool,
    /// Summed `counts` (succeeded, failed) where `states_count` wrote them.
    pub state_counts: Option<(u64, u64)>,
    pub publish: Option<PublishInfo>,
}

impl JobSummary {
    pub fn succeeded(&self) -> u64 {
        if self.runner {
            0
        } else {
            self.returned.saturating_sub(self.failed)
        }
    }

    /// Minions the job should have heard from but did not: those the
    /// publish event targeted that have no return document, and those a
    /// list target named that the master did not know (the event's
    /// `missing`, which Salt's CLI reports as not connected).
    pub fn missing(&self) -> Option<u64> {
        let publish = self.publish.as_ref()?;
        let targeted = publish.minions.as_ref()?.len() as u64;
        Some(targeted.saturating_sub(self.returned) + publish.unknown_minions.len() as u64)
    }

    /// Changes whenever anything shown in the row changes: the key of a
    /// keyed list, so an auto-refresh redraws exactly the rows that moved.
    pub fn version(&self) -> String {
        format!(
            "{}:{}:{}:{}:{:?}:{}",
            self.jid,
            self.returned,
            self.failed,
            self.last_return_ms.unwrap_or(0),
            self.state_counts,
            self.publish.is_some()
        )
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobListPage {
    pub jobs: Vec<JobSummary>,
    /// Approximate number of jobs (cardinality) that match, all pages.
    pub total_jobs: Option<u64>,
    /// Returns that match, all pages.
    pub total_returns: Option<u64>,
    /// The "Older" link; `None` on the last page.
    pub older: Option<Cursor>,
    /// The "Newer" link; `None` on the newest page.
    pub newer: Option<Cursor>,
    pub histogram: Option<Histogram>,
    /// Functions seen in the time range, most frequent first, for the
    /// function filter's suggestions.
    pub functions: Vec<(String, u64)>,
    pub notes: Vec<String>,
}

crate::search_bundle! {
    /// Round trip 1 of the job list: the page of jids, the histogram with
    /// the totals, and the function suggestions.
    pub struct JobListSearches => JobListAnswers { page, overview, suggestions }
}

impl JobListPage {
    /// A page of these jobs, known by their jids only (before their
    /// details are attached).
    pub fn of_jids(jids: &[String]) -> JobListPage {
        JobListPage {
            jobs: jids
                .iter()
                .map(|jid| JobSummary {
                    jid: jid.clone(),
                    ..JobSummary::default()
                })
                .collect(),
            ..JobListPage::default()
        }
    }
}

/// Round trip 1 (see [`JobListSearches`]).
pub fn job_list_searches(ctx: &QueryContext, request: &JobListRequest) -> JobListSearches {
    let (config, fields) = (&ctx.config, &ctx.fields);
    let filter = &request.filter;
    let query = filter.returns_query_with_outcome(ctx);
    let size = request.size();
    let fetch = match filter.outcome {
        OutcomeFilter::AllSucceeded => (size * SUCCEEDED_OVERFETCH).min(1000),
        // One more than shown tells whether an older page exists.
        _ => size + 1,
    };
    let (order, after) = match &request.cursor {
        Cursor::Newest => ("desc", None),
        Cursor::After(jid) => ("desc", Some(jid)),
        Cursor::Before(jid) => ("asc", Some(jid)),
    };
    let mut page = body(
        r#"{"size":0,"query":$0,"aggs":{"jobs":{"composite":{"size":$1,"sources":[{"jid":{"terms":{"field":$2,"order":$3}}}]},"aggs":{"failed":{"filter":$4}}}}}"#,
        &[
            query.clone(),
            json!(fetch),
            json!(fields.jid),
            json!(order),
            failed_clause(fields),
        ],
    );
    if let Some(after) = after {
        page["aggs"]["jobs"]["composite"]["after"] = json!({"jid": after});
    }
    let bounds = filter.time.bounds(ctx.now_ms);
    // HyperLogLog++ at the engines' highest precision: near exact below
    // 40,000 jobs, not exact (11,739 for the 1M set's 11,742 jobs, OpenSearch
    // 3.8); beyond, within ~1 %. An exact count would page every jid.
    let job_count = body(
        r#"{"cardinality":{"field":$0,"precision_threshold":40000}}"#,
        &[json!(fields.jid)],
    );
    let mut overview = body(
        r#"{"size":0,"track_total_hits":true,"query":$0,"aggs":{"histogram":$1,"job_count":$2}}"#,
        &[query, histogram_agg(fields, bounds), job_count.clone()],
    );
    if filter.outcome == OutcomeFilter::AllSucceeded {
        // The jobs with no failure are all jobs less those with one; the
        // bars are of the returns that did not fail.
        let (aggs, failed) = (&mut overview["aggs"], failed_clause(fields));
        let bars = aggs["histogram"].take();
        aggs["histogram"] = body(
            r#"{"filter":{"bool":{"must_not":[$0]}},"aggs":{"histogram":$1}}"#,
            &[failed.clone(), bars],
        );
        aggs["failed_jobs"] = body(r#"{"filter":$0,"aggs":{"jobs":$1}}"#, &[failed, job_count]);
    }
    // Suggestions: every function in the range, whatever function is asked.
    let unfiltered = JobFilter {
        functions: Vec::new(),
        jid: None,
        text: None,
        outcome: OutcomeFilter::All,
        show_noisy: true,
        ..filter.clone()
    };
    let every_function = QueryContext {
        noisy: Vec::new(),
        ..ctx.clone()
    };
    let suggestions = body(
        r#"{"size":0,"query":$0,"aggs":{"functions":{"terms":{"field":$1,"size":200}}}}"#,
        &[unfiltered.returns_query(&every_function), json!(fields.fun)],
    );
    JobListSearches {
        page: SearchRequest::new(&config.index_pattern, page),
        overview: SearchRequest::new(&config.index_pattern, overview),
        suggestions: SearchRequest::new(&config.index_pattern, suggestions),
    }
}

/// Reads round trip 1. The page search failing (a query syntax error, a
/// missing index pattern) is the view's error; the histogram or the
/// suggestions failing leave a note.
pub fn parse_job_list(
    ctx: &QueryContext,
    request: &JobListRequest,
    answers: JobListAnswers,
) -> Result<JobListPage, EngineError> {
    let page_answer = answers.page?;
    let mut page = JobListPage::default();

    let buckets = page_answer
        .at("/aggregations/jobs/buckets")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if page_answer.at("/aggregations/jobs").is_none() {
        page.notes
            .push("the engine answered without the job aggregation".to_string());
    }
    let size = request.size();
    let backwards = matches!(request.cursor, Cursor::Before(_));
    let mut jids: Vec<String> = Vec::new();
    let mut skipped_failed = 0;
    for bucket in buckets {
        let Some(jid) = bucket.at("/key/jid").map(scalar_text) else {
            page.notes
                .push(format!("a job bucket without a jid: {}", json_text(bucket)));
            continue;
        };
        if request.filter.outcome == OutcomeFilter::AllSucceeded
            && bucket
                .at("/failed/doc_count")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                > 0
        {
            skipped_failed += 1;
            continue;
        }
        jids.push(jid);
    }
    let composite_full = buckets.len()
        >= match request.filter.outcome {
            OutcomeFilter::AllSucceeded => (size * SUCCEEDED_OVERFETCH).min(1000),
            _ => size + 1,
        };
    let more_beyond = jids.len() > size || composite_full;
    jids.truncate(size);
    // Where the scan stopped when a page could not be filled: the next page
    // continues from the last jid looked at, not the last one shown.
    let scanned_to = buckets
        .last()
        .and_then(|b| b.at("/key/jid"))
        .map(scalar_text);
    let edge = |shown: Option<&String>| -> Option<String> {
        if jids.len() == size {
            shown.cloned()
        } else {
            scanned_to.clone()
        }
    };
    if backwards {
        // Fetched oldest-first from the cursor: the page reads newest first.
        let newer_edge = edge(jids.last());
        jids.reverse();
        page.newer = more_beyond
            .then_some(newer_edge)
            .flatten()
            .map(Cursor::Before);
        page.older = jids.last().cloned().map(Cursor::After);
    } else {
        page.older = more_beyond
            .then_some(edge(jids.last()))
            .flatten()
            .map(Cursor::After);
        page.newer = match request.cursor {
            Cursor::Newest => None,
            _ => jids.first().cloned().map(Cursor::Before),
        };
    }
    if skipped_failed > 0 && jids.len() < size && more_beyond {
        page.notes.push(format!(
            "{skipped_failed} jobs with failures were skipped while looking for jobs that all succeeded; older pages may hold more"
        ));
    }
    page.jobs = jids
        .into_iter()
        .map(|jid| JobSummary {
            jid,
            ..JobSummary::default()
        })
        .collect();

    match answers.overview {
        Ok(overview) => {
            let count = |at: &str| overview.at(at).and_then(Value::as_u64);
            page.total_returns = super::total_hits(&overview);
            page.total_jobs = count("/aggregations/job_count/value");
            let mut histogram = "/aggregations/histogram";
            if request.filter.outcome == OutcomeFilter::AllSucceeded {
                // The returns of those jobs are not counted by one search.
                page.total_returns = None;
                let failed = count("/aggregations/failed_jobs/jobs/value").unwrap_or(0);
                page.total_jobs = page.total_jobs.map(|all| all.saturating_sub(failed));
                histogram = "/aggregations/histogram/histogram";
            }
            let bounds = request.filter.time.bounds(ctx.now_ms);
            page.histogram = overview
                .at(histogram)
                .and_then(|h| parse_histogram(h, bounds));
        }
        Err(e) => page.notes.push(format!("histogram unavailable: {e}")),
    }
    match answers.suggestions {
        Ok(s) => {
            page.functions = s
                .at("/aggregations/functions/buckets")
                .and_then(Value::as_array)
                .map(|b| {
                    b.iter()
                        .filter_map(|f| {
                            Some((scalar_text(f.get("key")?), f.get("doc_count")?.as_u64()?))
                        })
                        .collect()
                })
                .unwrap_or_default();
        }
        Err(e) => page
            .notes
            .push(format!("function suggestions unavailable: {e}")),
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SearchAnswer;
    use crate::query::filter::TimeRange;

    const NOW: i64 = 1_764_700_000_000;

    fn ctx() -> QueryContext {
        QueryContext {
            noisy: vec!["saltutil.*".into()],
            ..QueryContext::at(NOW)
        }
    }

    fn request(cursor: Cursor, outcome: OutcomeFilter, size: usize) -> JobListRequest {
        JobListRequest {
            filter: JobFilter {
                outcome,
                ..JobFilter::default()
            },
            page_size: size,
            cursor,
        }
    }

    fn page_answer(jids: &[&str], failed: &[&str]) -> Result<Value, EngineError> {
        let buckets: Vec<Value> = jids
            .iter()
            .map(|j| {
                json!({"key": {"jid": j}, "doc_count": 2,
                       "failed": {"doc_count": if failed.contains(j) { 1 } else { 0 }}})
            })
            .collect();
        Ok(json!({"aggregations": {"jobs": {"buckets": buckets}}}))
    }

    fn answers(page: SearchAnswer) -> JobListAnswers {
        JobListAnswers {
            page,
            overview: Ok(json!({"hits": {"total": {"value": 40}}, "aggregations": {
                "job_count": {"value": 9},
                "histogram": {"buckets": [{"key": NOW - 1000, "doc_count": 4, "failed": {"doc_count": 1}, "runner": {"doc_count": 0}}]}
            }})),
            suggestions: Ok(json!({"aggregations": {"functions": {"buckets": [
                {"key": "state.apply", "doc_count": 30}, {"key": "cmd.run", "doc_count": 10}]}}})),
        }
    }

    fn parse(req: &JobListRequest, page: SearchAnswer) -> JobListPage {
        parse_job_list(&ctx(), req, answers(page)).unwrap()
    }

    fn jids(page: &JobListPage) -> Vec<&str> {
        page.jobs.iter().map(|j| j.jid.as_str()).collect()
    }

    #[test]
    fn the_page_search_pages_by_jid_without_from_and_excludes_cache_indices() {
        let req = request(
            Cursor::After("20261129170507123456".into()),
            OutcomeFilter::All,
            20,
        );
        let s = job_list_searches(&ctx(), &req);
        let b = &s.page.body;
        let composite = &b["aggs"]["jobs"]["composite"];
        assert_eq!(composite["size"], 21, "one more than shown");
        assert_eq!(composite["after"]["jid"], "20261129170507123456");
        assert_eq!(composite["sources"][0]["jid"]["terms"]["order"], "desc");
        assert!(b.get("from").is_none(), "never from/size paging");
        let excluded = b["query"]["bool"]["must_not"].to_string();
        assert!(excluded.contains("salt-master-job-cache"));
        assert!(excluded.contains("salt-master-event-cache"));
        assert!(s.overview.body["aggs"]["histogram"]["date_histogram"].is_object());
        assert_eq!(s.overview.body["track_total_hits"], true);
    }

    #[test]
    fn all_succeeded_counts_the_jobs_without_a_failure_and_draws_the_returns_that_did_not_fail() {
        let req = request(Cursor::Newest, OutcomeFilter::AllSucceeded, 20);
        let s = job_list_searches(&ctx(), &req);
        let aggs = &s.overview.body["aggs"];
        assert!(aggs["histogram"]["aggs"]["histogram"]["date_histogram"].is_object());
        assert_eq!(
            aggs["histogram"]["filter"]["bool"]["must_not"][0],
            failed_clause(&ctx().fields)
        );
        assert_eq!(aggs["failed_jobs"]["filter"], failed_clause(&ctx().fields));
        let mut answers = answers(page_answer(&["5", "4"], &["4"]));
        answers.overview = Ok(json!({"hits": {"total": {"value": 40}}, "aggregations": {
            "job_count": {"value": 9},
            "failed_jobs": {"doc_count": 5, "jobs": {"value": 3}},
            "histogram": {"doc_count": 35, "histogram": {"buckets": [
                {"key": NOW - 1000, "doc_count": 4, "failed": {"doc_count": 0}, "runner": {"doc_count": 1}}]}}
        }}));
        let page = parse_job_list(&ctx(), &req, answers).unwrap();
        assert_eq!(jids(&page), ["5"]);
        assert_eq!(page.total_jobs, Some(6), "9 jobs, 3 of them with a failure");
        assert_eq!(
            page.total_returns, None,
            "no one search counts those jobs' returns"
        );
        assert_eq!(page.histogram.as_ref().unwrap().buckets[0].runner, 1);
    }

    #[test]
    fn suggestions_ignore_the_function_filter_but_keep_the_time_range() {
        let mut req = request(Cursor::Newest, OutcomeFilter::All, 20);
        req.filter.functions = vec!["cmd.run".into()];
        req.filter.time = TimeRange::parse("1h").unwrap();
        let s = job_list_searches(&ctx(), &req);
        let text = s.suggestions.body["query"].to_string();
        assert!(!text.contains("cmd.run"));
        assert!(text.contains("@timestamp"));
        assert!(s.page.body["query"].to_string().contains("cmd.run"));
    }

    #[test]
    fn one_extra_bucket_says_an_older_page_exists() {
        let req = request(Cursor::Newest, OutcomeFilter::All, 2);
        let page = parse(&req, page_answer(&["5", "4", "3"], &[]));
        assert_eq!(jids(&page), ["5", "4"]);
        assert_eq!(page.older, Some(Cursor::After("4".into())));
        assert_eq!(page.newer, None);
        let last = parse(&req, page_answer(&["2", "1"], &[]));
        assert_eq!(last.older, None, "a page that is not over-full is the last");
        assert_eq!(page.total_returns, Some(40));
        assert_eq!(page.total_jobs, Some(9));
        assert_eq!(page.functions[0], ("state.apply".to_string(), 30));
        assert_eq!(page.histogram.as_ref().unwrap().buckets[0].failed, 1);
    }

    #[test]
    fn a_newer_page_is_fetched_oldest_first_and_shown_newest_first() {
        let req = request(Cursor::Before("4".into()), OutcomeFilter::All, 2);
        let s = job_list_searches(&ctx(), &req);
        assert_eq!(
            s.page.body["aggs"]["jobs"]["composite"]["sources"][0]["jid"]["terms"]["order"],
            "asc"
        );
        let page = parse(&req, page_answer(&["5", "6", "7"], &[]));
        assert_eq!(jids(&page), ["6", "5"]);
        assert_eq!(page.newer, Some(Cursor::Before("6".into())));
        assert_eq!(page.older, Some(Cursor::After("5".into())));
    }

    #[test]
    fn all_succeeded_skips_jobs_with_a_failure_and_continues_where_it_looked() {
        let req = request(Cursor::Newest, OutcomeFilter::AllSucceeded, 2);
        let s = job_list_searches(&ctx(), &req);
        assert_eq!(s.page.body["aggs"]["jobs"]["composite"]["size"], 8);
        let page = parse(
            &req,
            page_answer(&["9", "8", "7", "6", "5", "4", "3", "2"], &["9", "7"]),
        );
        assert_eq!(jids(&page), ["8", "6"]);
        assert_eq!(page.older, Some(Cursor::After("6".into())));
        let sparse = parse(
            &req,
            page_answer(
                &["9", "8", "7", "6", "5", "4", "3", "2"],
                &["9", "8", "7", "6", "5", "4", "3"],
            ),
        );
        assert_eq!(jids(&sparse), ["2"]);
        assert_eq!(
            sparse.older,
            Some(Cursor::After("2".into())),
            "continues after the last jid looked at"
        );
        assert!(sparse.notes[0].contains("7 jobs with failures were skipped"));
    }

    #[test]
    fn a_failed_page_search_is_the_views_error_and_the_rest_are_notes() {
        let req = request(Cursor::Newest, OutcomeFilter::All, 2);
        let err = EngineError::Status {
            url: "u".into(),
            status: 400,
            kind: None,
            reason: "Cannot parse".into(),
        };
        assert_eq!(
            parse_job_list(&ctx(), &req, answers(Err(err.clone()))).unwrap_err(),
            err
        );
        let page = parse_job_list(
            &ctx(),
            &req,
            JobListAnswers {
                page: page_answer(&["1"], &[]),
                overview: Err(err.clone()),
                suggestions: Err(err),
            },
        )
        .unwrap();
        assert_eq!(jids(&page), ["1"]);
        assert_eq!(page.notes.len(), 2);
    }
}
