//! Jobs: one row per jid is an aggregation — a composite on jid paged by its
//! after key, as the job list pages — then one `_msearch` for the page's
//! jobs' statistics and publish data (the job list's round trip 2) and,
//! when a state column is chosen, the state results that give the changed
//! count (`counts` has none, and is absent without `states_count`).

use crate::json::At;
use serde_json::{json, Value};

use super::columns::id;
use super::hits::search_path;
use super::plan::{Commit, ExportSource, Pending, PendingWork, Position, Step};
use super::rows::{job_row, JobRow, Row};
use super::spec::{After, MAX_PAGE, STATE_FUNCTIONS};
use crate::engine::{
    lenient, msearch_request, read_msearch, Body, EngineError, HttpRequest, Reply, SearchRequest,
};
use crate::model::{HighstateSummary, ReturnData, ReturnDoc};
use crate::query::filter::{failed_clause, OutcomeFilter};
use crate::query::jobs::{attach_details, job_details_searches, JobDetailsSearches, JobListPage};
use crate::query::{hits, returns_filter, template, total_hits};
use crate::text::scalar_text;

pub(crate) struct JobsSource;

fn wants_job_states(at: &Position) -> bool {
    [id::STATES_SUCCEEDED, id::STATES_CHANGED, id::STATES_FAILED]
        .iter()
        .any(|c| at.spec.wants(c))
}

/// The page's lookup: the job list's details, and the jobs' state results
/// when a state column is chosen.
fn details(at: &Position, jids: &[String]) -> (JobDetailsSearches, Option<SearchRequest>) {
    let ctx = &at.spec.context;
    let states = wants_job_states(at).then(|| {
        let (mut filter, must_not) = returns_filter(&ctx.config);
        filter.push(json!({"terms": {ctx.fields.jid.clone(): jids}}));
        filter.push(json!({"terms": {ctx.fields.fun.clone(): STATE_FUNCTIONS}}));
        SearchRequest::new(
            &ctx.config.index_pattern,
            template::body(
                r#"{"size":$0,"track_total_hits":true,"query":{"bool":{"filter":$1,"must_not":$2}},"_source":["jid","fun","data.*.result","data.*.changes"]}"#,
                &[json!(MAX_PAGE), Value::Array(filter), Value::Array(must_not)],
            ),
        )
    });
    (job_details_searches(ctx, jids), states)
}

impl ExportSource for JobsSource {
    fn page_request(&self, at: &Position) -> HttpRequest {
        let ctx = &at.spec.context;
        let query = at.spec.job_filter().returns_query_with_outcome(ctx);
        let mut body = template::body(
            r#"{"size":0,"query":$0,"track_total_hits":false,"aggs":{"jobs":{"composite":{"size":$1,"sources":[{"jid":{"terms":{"field":$2,"order":"desc"}}}]},"aggs":{"failed":{"filter":$3}}}}}"#,
            &[
                query,
                json!(at.page_size()),
                json!(ctx.fields.jid),
                failed_clause(&ctx.fields),
            ],
        );
        if let After::Jid(jid) = &at.state.after {
            body["aggs"]["jobs"]["composite"]["after"] = json!({ "jid": jid });
        }
        if at.state.total.is_none() {
            body["aggs"]["job_count"] = template::body(
                r#"{"cardinality":{"field":$0,"precision_threshold":40000}}"#,
                &[json!(ctx.fields.jid)],
            );
        }
        HttpRequest::post(search_path(&ctx.config.index_pattern), Body::Json(body))
    }

    fn read_page(&self, at: &Position, reply: Reply) -> Result<Step, EngineError> {
        let a: Value = reply.json()?;
        if let Some(e) = EngineError::from_shard_failures(&reply.url, &a) {
            return Err(e);
        }
        let Some(buckets) = a.at("/aggregations/jobs/buckets").and_then(Value::as_array) else {
            return Err(EngineError::BadResponse {
                url: Some(reply.url),
                detail: "the engine answered without the job aggregation".into(),
            });
        };
        let total = a
            .at("/aggregations/job_count/value")
            .and_then(Value::as_u64);
        let skip_failed = at.spec.job_filter().outcome == OutcomeFilter::AllSucceeded;
        let mut jids = Vec::new();
        for b in buckets {
            let Some(jid) = b.at("/key/jid").map(scalar_text) else {
                continue;
            };
            let failed = b
                .at("/failed/doc_count")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if !(skip_failed && failed > 0) {
                jids.push(jid);
            }
        }
        let last = buckets.len() < at.page_size();
        let next = match buckets.last().and_then(|b| b.at("/key/jid")) {
            Some(jid) if !last => After::Jid(scalar_text(jid)),
            _ => at.state.after.clone(),
        };
        let looked_at = buckets.len() as u64;
        if jids.is_empty() {
            return Ok(Step::Commit(Commit {
                looked_at,
                next,
                last,
                total,
                ..Commit::default()
            }));
        }
        Ok(Step::Lookup(Pending {
            work: PendingWork::Details { jids },
            next,
            last,
            looked_at,
            total,
            pit_id: None,
            notes: Vec::new(),
            read: Vec::new(),
        }))
    }

    fn lookup_request(&self, at: &Position, pending: &Pending) -> HttpRequest {
        msearch_request(&details(at, pending_jids(pending)))
    }

    fn read_lookup(
        &self,
        at: &Position,
        pending: &Pending,
        reply: Reply,
    ) -> Result<Commit, EngineError> {
        let jids = pending_jids(pending);
        let (details, states) = read_msearch(&details(at, jids), &reply)?;
        let mut page = JobListPage::of_jids(jids);
        attach_details(&mut page, details);
        let mut notes = std::mem::take(&mut page.notes);
        let mut sums: Vec<(String, HighstateSummary)> = Vec::new();
        let mut states_known = false;
        match states {
            Some(Ok(a)) => {
                let found = hits(&a);
                if total_hits(&a).is_some_and(|t| t > found.len() as u64) {
                    notes.push(format!(
                        "the jobs {} .. {} have more than {MAX_PAGE} state returns: their state counts come from `counts` only, and changed is left empty",
                        jids.last().map(String::as_str).unwrap_or(""),
                        jids.first().map(String::as_str).unwrap_or("")
                    ));
                } else {
                    states_known = true;
                    for hit in found {
                        // A return that could not be read whole is left
                        // out of its job's counts, and the file says so.
                        for unread in lenient::hit_notes(hit) {
                            notes.push(format!(
                                "the state counts of job {} leave out the return `{}`: {unread}",
                                hit.at("/_source/jid").map(scalar_text).unwrap_or_default(),
                                hit.get("_id").map(scalar_text).unwrap_or_default(),
                            ));
                        }
                        let doc = ReturnDoc::from_hit(hit);
                        if let ReturnData::States(s) = &doc.data {
                            let summary = HighstateSummary::of(&s.runs);
                            match sums.iter_mut().find(|(j, _)| *j == doc.jid) {
                                Some((_, sum)) => sum.add(&summary),
                                None => sums.push((doc.jid.clone(), summary)),
                            }
                        }
                    }
                }
            }
            Some(Err(e)) => notes.push(format!("state results unavailable: {e}")),
            None => {}
        }
        let rows: Vec<Row> = page
            .jobs
            .into_iter()
            .map(|job| {
                let summary = sums.iter().find(|(j, _)| *j == job.jid).map(|(_, s)| *s);
                let row = JobRow {
                    states: if states_known { summary } else { None },
                    job,
                };
                job_row(&row, &at.spec.columns)
            })
            .collect();
        Ok(Commit {
            rows,
            looked_at: pending.looked_at,
            next: pending.next.clone(),
            last: pending.last,
            total: pending.total,
            total_is_estimate: None,
            pit_id: None,
            notes,
            read: Vec::new(),
        })
    }
}

fn pending_jids(pending: &Pending) -> &[String] {
    match &pending.work {
        PendingWork::Details { jids } | PendingWork::Users { jids, .. } => jids,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::plan::ExportPlan;
    use super::super::spec::{After, ViewFilter};
    use super::super::testing::*;
    use super::super::ExportKind;
    use crate::engine::Product;
    use crate::query::filter::{JobFilter, OutcomeFilter};

    fn bucket(jid: &str, failed: u64) -> Value {
        json!({"key": {"jid": jid}, "doc_count": 2, "failed": {"doc_count": failed}})
    }

    #[test]
    fn jobs_page_by_composite_after_key_then_fetch_their_details() {
        let mut s = spec(
            ExportKind::Jobs,
            product(Product::OpenSearch, (2, 19, 0)),
            2,
        );
        s.filter = ViewFilter::Jobs(JobFilter {
            outcome: OutcomeFilter::AllSucceeded,
            ..JobFilter::default()
        });
        let mut plan = ExportPlan::new(s).unwrap();
        assert!(plan.close_request().is_none());
        let req = plan.next_request().unwrap();
        assert_eq!(
            req.path,
            "/salt-*/_search?ignore_unavailable=true&allow_no_indices=true"
        );
        let b = body(&req);
        assert_eq!(b["size"], 0, "an aggregation, not hits");
        assert_eq!(b["aggs"]["jobs"]["composite"]["size"], 2);
        assert_eq!(
            b["aggs"]["jobs"]["composite"]["sources"][0]["jid"]["terms"]["field"],
            "jid.keyword"
        );
        assert!(b["aggs"]["job_count"]["cardinality"].is_object());
        let first = json!({"_shards": {"failed": 0}, "aggregations": {
            "jobs": {"after_key": {"jid": "8"}, "buckets": [bucket("9", 0), bucket("8", 1)]},
            "job_count": {"value": 3}}});
        assert_eq!(plan.handle(ok(first)).unwrap(), b"");
        assert_eq!(plan.state().total, Some(3));
        assert!(plan.state().total_is_estimate);
        let details = plan.next_request().unwrap();
        let lines: Vec<Value> = details
            .body
            .text()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines.len(),
            8,
            "statistics, events, job cache and state results"
        );
        assert_eq!(
            lines[1]["query"]["bool"]["filter"][1]["terms"]["jid.keyword"],
            json!(["9"]),
            "8 had a failure"
        );
        assert_eq!(
            lines[7]["_source"],
            json!(["jid", "fun", "data.*.result", "data.*.changes"])
        );
        let stats = json!({"key": "9", "doc_count": 2, "functions": {"buckets": [{"key": "state.apply"}]},
            "first_return": {"value": 1000.0}, "last_return": {"value": 2000.0}, "minions": {"value": 2},
            "failed": {"doc_count": 0, "minions": {"buckets": []}}, "runner": {"doc_count": 0},
            "counted": {"value": 0}, "states_succeeded": {"value": 0}, "states_failed": {"value": 0}});
        let answer = json!({"responses": [
            {"aggregations": {"jobs": {"buckets": [stats]}}},
            {"hits": {"hits": [{"_source": {"tag": "salt/job/9/new", "data": {"fun": "state.apply", "arg": ["web"], "tgt": "*", "tgt_type": "glob", "user": "root", "_stamp": "1970-01-01T00:00:00.500000"}}}]}},
            {"hits": {"hits": []}},
            {"hits": {"total": {"value": 2}, "hits": [hit("9", "a", 1, None), hit("9", "b", 2, None)]}}
        ]});
        let rows = read_csv(&plan.handle(ok(answer)).unwrap());
        assert_eq!(
            rows[1],
            [
                "1970-01-01T00:00:00.500Z",
                "9",
                "state.apply",
                "web",
                "*",
                "glob",
                "root",
                "2",
                "0",
                "4",
                "2",
                "0"
            ]
        );
        assert_eq!(plan.state().after, After::Jid("8".into()));
        assert_eq!(
            plan.state().docs_read,
            2,
            "jobs looked at, the skipped one too"
        );
        let b = body(&plan.next_request().unwrap());
        assert_eq!(b["aggs"]["jobs"]["composite"]["after"], json!({"jid": "8"}));
        assert!(b["aggs"].get("job_count").is_none());
        let rest = plan
            .handle(ok(
                json!({"aggregations": {"jobs": {"buckets": [bucket("7", 1)]}}}),
            ))
            .unwrap();
        assert!(rest.is_empty(), "every job of the last page failed");
        assert!(plan.is_done());
        assert_eq!(plan.state().rows_written, 1);
    }

    #[test]
    fn a_state_return_nested_too_deep_is_left_out_of_its_jobs_counts_with_a_note() {
        let mut plan = ExportPlan::new(spec(
            ExportKind::Jobs,
            product(Product::OpenSearch, (2, 19, 0)),
            5,
        ))
        .unwrap();
        plan.handle(ok(
            json!({"aggregations": {"jobs": {"buckets": [bucket("9", 0)]}, "job_count": {"value": 1}}}),
        ))
        .unwrap();
        let mut deep = hit("9", "b", 2, None);
        deep["_source"]["data"] = json!("DEEP");
        let answer = json!({"responses": [
            {"aggregations": {"jobs": {"buckets": []}}}, {"hits": {"hits": []}}, {"hits": {"hits": []}},
            {"hits": {"total": {"value": 2}, "hits": [hit("9", "a", 1, None), deep]}}
        ]});
        let levels = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let body = serde_json::to_string(&answer)
            .unwrap()
            .replace(r#""DEEP""#, &levels);
        let rows = read_csv(&plan.handle(bytes(body.into_bytes())).unwrap());
        assert_eq!(rows[1][1], "9");
        assert_eq!(rows[1][9..12], ["2", "1", "0"], "minion a's states only");
        let note = "the state counts of job 9 leave out the return `9b`: field `data` is nested deeper than 128 levels";
        assert!(plan.notes().iter().any(|n| n == note), "{:?}", plan.notes());
    }
}
