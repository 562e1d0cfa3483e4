//! The minions view (`get_minions`): every minion that returned in the time
//! range, with its last return, job count, failures and the outcome of its
//! latest state run. Also the latest return of one function on every minion
//! (the functions view's "which are failing now"), which shares the shape.

use crate::json::At;
use serde_json::{json, Value};

use super::filter::{failed_clause, runner_clause, JobFilter};
use super::template::body;
use super::{FieldMap, QueryContext};
use crate::engine::{EngineError, SearchAnswer, SearchRequest};
use crate::model::{Outcome, ReturnDoc};
use crate::text::{json_text, scalar_text};

pub const MINION_PAGE_SIZE: usize = 200;

/// State functions whose latest run says whether a minion is in its state.
pub const STATE_RUN_FUNCTIONS: [&str; 3] = ["state.apply", "state.highstate", "state.sls"];

/// A return's own fields, which every per-run view reads.
pub const RUN_FIELDS: [&str; 6] = ["jid", "minion", "fun", "success", "retcode", "@timestamp"];

/// The part of a return the latest-run columns need: never `data` itself,
/// only each state's `result` (a state return can be megabytes).
pub fn latest_source() -> Vec<&'static str> {
    RUN_FIELDS
        .into_iter()
        .chain(["counts", "data.*.result"])
        .collect()
}

/// A page of minions by id after `after`.
fn minion_composite(fields: &FieldMap, after: Option<&str>) -> Value {
    super::minion_composite(&fields.minion, MINION_PAGE_SIZE, after)
}

/// The newest return of the bucket, with only [`latest_source`].
fn latest_hit_agg() -> Value {
    body(
        r#"{"top_hits":{"size":1,"sort":[{"@timestamp":{"order":"desc","unmapped_type":"date"}}],"_source":$0}}"#,
        &[json!(latest_source())],
    )
}

/// A minion's most recent return of some function.
#[derive(Clone, Debug, PartialEq)]
pub struct LatestReturn {
    pub minion: String,
    pub jid: String,
    pub fun: String,
    pub timestamp: Option<String>,
    pub outcome: Outcome,
    pub retcode: Option<i64>,
    /// (succeeded, failed) states, from the state results or `counts`.
    pub states: Option<(u64, u64)>,
}

impl LatestReturn {
    pub fn from_hit(hit: &Value) -> LatestReturn {
        let doc = ReturnDoc::read_hit(hit);
        // `data.*.result` brings back `{key: {result}}` per state.
        let from_results = hit
            .at("/_source/data")
            .and_then(Value::as_object)
            .map(|states| {
                let results: Vec<&Value> =
                    states.values().filter_map(|s| s.get("result")).collect();
                let failed = results
                    .iter()
                    .filter(|r| **r == &Value::Bool(false))
                    .count() as u64;
                (results.len() as u64 - failed, failed)
            })
            .filter(|(ok, bad)| ok + bad > 0);
        LatestReturn {
            outcome: doc.outcome(),
            states: from_results.or(doc.counts),
            minion: doc.minion,
            jid: doc.jid,
            fun: doc.fun,
            timestamp: doc.timestamp,
            retcode: doc.retcode,
        }
    }
}

/// One row of the minions view.
#[derive(Clone, Debug, PartialEq)]
pub struct MinionSummary {
    pub minion: String,
    pub last_return_ms: Option<i64>,
    pub jobs: u64,
    pub returns: u64,
    pub failed: u64,
    pub latest_state_run: Option<LatestReturn>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MinionPage {
    pub minions: Vec<MinionSummary>,
    pub total_minions: Option<u64>,
    /// The minion to continue after; `None` on the last page.
    pub next_after: Option<String>,
    pub notes: Vec<String>,
}

/// The returns `filter` selects (by return: see
/// [`JobFilter::returns_query_by_return`]) that are a minion's: a runner's
/// return carries the master's id, which names no minion. Asked for by
/// name, as noise is, a runner is kept. The minions view and the fleet
/// list minions from it.
pub(crate) fn minion_returns_query(ctx: &QueryContext, filter: &JobFilter) -> Value {
    let mut query = filter.returns_query_by_return(ctx);
    if filter.functions.is_empty() {
        if let Some(must_not) = query
            .pointer_mut("/bool/must_not")
            .and_then(Value::as_array_mut)
        {
            must_not.push(runner_clause(&ctx.fields));
        }
    }
    query
}

/// The minions view's one search: a composite on minion id, so a fleet of
/// any size pages by name.
pub fn minion_search(ctx: &QueryContext, filter: &JobFilter, after: Option<&str>) -> SearchRequest {
    let fields = &ctx.fields;
    let query = minion_returns_query(ctx, filter);
    let body = body(
        r#"{"size":0,"query":$0,"aggs":{"minions":{"composite":$1,"aggs":{"last_return":{"max":{"field":"@timestamp"}},"jobs":{"cardinality":{"field":$2}},"failed":{"filter":$3},"state_runs":{"filter":{"terms":{$4:$5}},"aggs":{"latest":$6}}}},"minion_count":{"cardinality":{"field":$7,"precision_threshold":40000}}}}"#,
        &[
            query,
            minion_composite(fields, after),
            json!(fields.jid),
            failed_clause(fields),
            json!(fields.fun),
            json!(STATE_RUN_FUNCTIONS),
            latest_hit_agg(),
            json!(fields.minion),
        ],
    );
    SearchRequest::new(&ctx.config.index_pattern, body)
}

pub fn parse_minions(answer: SearchAnswer) -> Result<MinionPage, EngineError> {
    let answer = answer?;
    let mut page = MinionPage {
        total_minions: answer
            .at("/aggregations/minion_count/value")
            .and_then(Value::as_u64),
        ..MinionPage::default()
    };
    let buckets = super::buckets(&answer, "minions");
    for bucket in buckets.iter().take(MINION_PAGE_SIZE) {
        let Some(minion) = bucket.at("/key/minion").map(scalar_text) else {
            page.notes.push(format!(
                "a minion bucket without a key: {}",
                json_text(bucket)
            ));
            continue;
        };
        let count = |path: &str| bucket.at(path).and_then(Value::as_u64).unwrap_or(0);
        page.minions.push(MinionSummary {
            last_return_ms: bucket
                .at("/last_return/value")
                .and_then(Value::as_f64)
                .map(|v| v as i64),
            jobs: count("/jobs/value"),
            returns: count("/doc_count"),
            failed: count("/failed/doc_count"),
            latest_state_run: bucket
                .at("/state_runs/latest/hits/hits/0")
                .map(LatestReturn::from_hit),
            minion,
        });
    }
    if buckets.len() > MINION_PAGE_SIZE {
        page.next_after = page.minions.last().map(|m| m.minion.clone());
    }
    Ok(page)
}

/// The most minions "failing now" is counted over: the engine's terms
/// buckets, one per minion, before it keeps only the failing ones.
pub const FAILING_NOW_LIMIT: usize = 10_000;

/// Which minions a function's page lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatestOf {
    /// Every minion, a page of [`MINION_PAGE_SIZE`] by id after the one given.
    Every,
    /// Only those whose latest return failed, all of them at once.
    Failing,
}

/// One search for a function's page: each minion's latest return (a
/// composite on minion with a `top_hits` of one, paged by minion id; or the
/// failing ones), how many minions ran it, and how many of them failed in
/// their latest run — counted by the engine over the whole fleet (a
/// minion's newest failed return as new as its newest return), not over
/// the page.
pub fn latest_by_minion_search(
    ctx: &QueryContext,
    fun: &str,
    filter: &JobFilter,
    which: LatestOf,
    after: Option<&str>,
) -> SearchRequest {
    // The function is asked for by name: noise never hides it.
    let filter = JobFilter {
        functions: vec![fun.to_string()],
        outcome: super::filter::OutcomeFilter::All,
        ..filter.clone()
    };
    let fields = &ctx.fields;
    let tail = match which {
        LatestOf::Every => r#"}},"minions":{"composite":$4,"aggs":{"latest":$5}}}}"#,
        LatestOf::Failing => r#","latest":$5}}}}"#,
    };
    SearchRequest::new(
        &ctx.config.index_pattern,
        body(
            &[LATEST_BY_MINION_HEAD, tail].concat(),
            &[
                filter.returns_query(ctx),
                json!(fields.minion),
                json!(FAILING_NOW_LIMIT),
                failed_clause(fields),
                minion_composite(fields, after),
                latest_hit_agg(),
            ],
        ),
    )
}

/// The function page's search up to the failing minions' own aggregations,
/// which [`latest_by_minion_search`] closes: a minion fails now when its
/// newest failed return is as new as its newest return.
const LATEST_BY_MINION_HEAD: &str = r#"{"size":0,"query":$0,"aggs":{"minion_count":{"cardinality":{"field":$1,"precision_threshold":40000}},"failing_now":{"terms":{"field":$1,"size":$2,"order":{"_key":"asc"}},"aggs":{"last":{"max":{"field":"@timestamp"}},"last_failed":{"filter":$3,"aggs":{"at":{"max":{"field":"@timestamp"}}}},"failing":{"bucket_selector":{"buckets_path":{"last":"last","failed":"last_failed>at"},"script":"params.failed >= params.last"}}"#;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LatestPage {
    pub latest: Vec<LatestReturn>,
    pub next_after: Option<String>,
    pub notes: Vec<String>,
    /// Minions that ran the function in the range (the engine's count).
    pub minions: Option<u64>,
    /// Of them, those whose latest return failed.
    pub failing_now: u64,
}

pub fn parse_latest_by_minion(
    answer: SearchAnswer,
    which: LatestOf,
) -> Result<LatestPage, EngineError> {
    let answer = answer?;
    let mut page = LatestPage {
        minions: answer
            .at("/aggregations/minion_count/value")
            .and_then(Value::as_u64),
        ..LatestPage::default()
    };
    let failing = super::buckets(&answer, "failing_now");
    page.failing_now = failing.len() as u64;
    if page.minions.is_some_and(|n| n > FAILING_NOW_LIMIT as u64) {
        page.notes.push(format!(
            "failing now counted over the first {FAILING_NOW_LIMIT} minions by id"
        ));
    }
    let (buckets, limit) = match which {
        LatestOf::Every => (super::buckets(&answer, "minions"), MINION_PAGE_SIZE),
        LatestOf::Failing => (failing, FAILING_NOW_LIMIT),
    };
    for bucket in buckets.iter().take(limit) {
        match bucket.at("/latest/hits/hits/0") {
            Some(hit) => page.latest.push(LatestReturn::from_hit(hit)),
            None => page.notes.push(format!(
                "no latest return for {}",
                bucket
                    .at("/key/minion")
                    .or_else(|| bucket.get("key"))
                    .map(scalar_text)
                    .unwrap_or_default()
            )),
        }
    }
    if which == LatestOf::Every && buckets.len() > MINION_PAGE_SIZE {
        page.next_after = page.latest.last().map(|l| l.minion.clone());
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latest_hit(minion: &str, success: bool, results: &[Value]) -> Value {
        let data: serde_json::Map<String, Value> = results
            .iter()
            .enumerate()
            .map(|(i, r)| (format!("test_|-s{i}_|-s{i}_|-nop"), json!({"result": r})))
            .collect();
        json!({"_index": "salt-state_apply-v1", "_id": minion, "_source": {
            "jid": "20261202191413295885", "minion": minion, "fun": "state.apply",
            "success": success, "retcode": if success { 0 } else { 2 },
            "@timestamp": "2026-12-02T19:14:20+00:00", "counts": {}, "data": data
        }})
    }

    #[test]
    fn the_minion_search_pages_by_id_and_never_fetches_whole_state_returns() {
        let s = minion_search(&QueryContext::at(0), &JobFilter::default(), Some("db-02"));
        let aggs = &s.body["aggs"]["minions"];
        assert_eq!(aggs["composite"]["after"]["minion"], "db-02");
        assert_eq!(aggs["composite"]["size"], MINION_PAGE_SIZE + 1);
        let source = &aggs["aggs"]["state_runs"]["aggs"]["latest"]["top_hits"]["_source"];
        assert!(source
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "data.*.result"));
        assert!(!source.as_array().unwrap().iter().any(|f| f == "data"));
    }

    #[test]
    fn the_masters_runners_are_no_minions_unless_asked_for() {
        let ctx = QueryContext::at(0);
        let leaves_out_runners = |filter: &JobFilter| {
            let s = minion_search(&ctx, filter, None);
            s.body["query"]["bool"]["must_not"]
                .as_array()
                .unwrap()
                .contains(&runner_clause(&ctx.fields))
        };
        assert!(leaves_out_runners(&JobFilter::default()));
        let asked = JobFilter {
            functions: vec!["runner.manage.up".into()],
            ..JobFilter::default()
        };
        assert!(!leaves_out_runners(&asked));
    }

    #[test]
    fn minion_buckets_read_counts_and_the_latest_state_run() {
        let answer = json!({"aggregations": {
            "minion_count": {"value": 2},
            "minions": {"buckets": [
                {"key": {"minion": "db-02"}, "doc_count": 7, "last_return": {"value": 1.7e12},
                 "jobs": {"value": 6}, "failed": {"doc_count": 2},
                 "state_runs": {"doc_count": 1, "latest": {"hits": {"hits": [
                    latest_hit("db-02", false, &[json!(true), json!(false), json!(null)])]}}}},
                {"key": {"minion": "web01.prod.example.com"}, "doc_count": 1, "last_return": {"value": 1.6e12},
                 "jobs": {"value": 1}, "failed": {"doc_count": 0},
                 "state_runs": {"doc_count": 0, "latest": {"hits": {"hits": []}}}}
            ]}
        }});
        let page = parse_minions(Ok(answer)).unwrap();
        assert_eq!(page.total_minions, Some(2));
        assert_eq!(page.next_after, None);
        let db = &page.minions[0];
        assert_eq!((db.returns, db.jobs, db.failed), (7, 6, 2));
        let latest = db.latest_state_run.as_ref().unwrap();
        assert_eq!(latest.outcome, Outcome::Failed);
        assert_eq!(
            latest.states,
            Some((2, 1)),
            "None results count as succeeded"
        );
        assert!(page.minions[1].latest_state_run.is_none());
    }

    #[test]
    fn the_latest_return_of_a_function_on_every_minion_counts_who_fails_now() {
        let ctx = QueryContext::at(0);
        let s = latest_by_minion_search(
            &ctx,
            "state.apply",
            &JobFilter::default(),
            LatestOf::Every,
            None,
        );
        assert!(s.body["query"]
            .to_string()
            .contains(r#"{"term":{"fun.keyword":"state.apply"}}"#));
        // The engine counts the failing minions over the whole fleet.
        let failing = &s.body["aggs"]["failing_now"];
        assert_eq!(failing["terms"]["size"], FAILING_NOW_LIMIT);
        assert!(failing["aggs"]["failing"]["bucket_selector"].is_object());
        assert!(
            failing["aggs"].get("latest").is_none(),
            "no hits for the count alone"
        );
        assert_eq!(
            s.body["aggs"]["minions"]["composite"]["size"],
            MINION_PAGE_SIZE + 1
        );
        let answer = json!({"aggregations": {
        "minion_count": {"value": 300},
        "failing_now": {"buckets": [{"key": "b"}, {"key": "z"}]},
        "minions": {"buckets": [
            {"key": {"minion": "a"}, "latest": {"hits": {"hits": [latest_hit("a", true, &[json!(true)])]}}},
            {"key": {"minion": "b"}, "latest": {"hits": {"hits": [latest_hit("b", false, &[json!(false)])]}}}
        ]}}});
        let page = parse_latest_by_minion(Ok(answer), LatestOf::Every).unwrap();
        assert_eq!(page.latest.len(), 2);
        assert_eq!((page.minions, page.failing_now), (Some(300), 2));

        // Failing only: the failing minions' own newest returns, no paging.
        let s = latest_by_minion_search(
            &ctx,
            "state.apply",
            &JobFilter::default(),
            LatestOf::Failing,
            Some("b"),
        );
        assert!(s.body["aggs"].get("minions").is_none());
        assert!(s.body["aggs"]["failing_now"]["aggs"]["latest"]["top_hits"].is_object());
        let answer = json!({"aggregations": {
        "minion_count": {"value": 300},
        "failing_now": {"buckets": [
            {"key": "b", "latest": {"hits": {"hits": [latest_hit("b", false, &[json!(false)])]}}}
        ]}}});
        let page = parse_latest_by_minion(Ok(answer), LatestOf::Failing).unwrap();
        let listed: Vec<&str> = page.latest.iter().map(|l| l.minion.as_str()).collect();
        assert_eq!(
            (listed, page.failing_now, page.next_after),
            (vec!["b"], 1, None)
        );
    }
}
