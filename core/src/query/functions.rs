//! The functions view (`get_fun`): every function in the time range with its
//! returns, jobs and failure rate.

use crate::json::At;
use serde_json::{json, Value};

use super::filter::{failed_clause, runner_clause, JobFilter};
use super::template::body;
use super::QueryContext;
use crate::engine::{EngineError, SearchAnswer, SearchRequest};
use crate::text::scalar_text;

/// More distinct functions than this in one range is unusual; the view says
/// so rather than cutting silently.
pub const MAX_FUNCTIONS: usize = 1000;

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionStats {
    pub fun: String,
    pub returns: u64,
    pub jobs: u64,
    pub failed: u64,
    pub runner: bool,
    pub last_return_ms: Option<i64>,
}

impl FunctionStats {
    /// Failed returns per return (a runner's by its own `data.success`).
    pub fn failure_rate(&self) -> Option<f64> {
        (self.returns > 0).then(|| self.failed as f64 / self.returns as f64)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionsPage {
    pub functions: Vec<FunctionStats>,
    pub notes: Vec<String>,
}

pub fn functions_search(ctx: &QueryContext, filter: &JobFilter) -> SearchRequest {
    let fields = &ctx.fields;
    SearchRequest::new(
        &ctx.config.index_pattern,
        body(
            r#"{"size":0,"query":$0,"aggs":{"functions":{"terms":{"field":$1,"size":$2},"aggs":{"jobs":{"cardinality":{"field":$3}},"failed":{"filter":$4},"runner":{"filter":$5},"last_return":{"max":{"field":"@timestamp"}}}}}}"#,
            &[
                filter.returns_query(ctx),
                json!(fields.fun),
                json!(MAX_FUNCTIONS),
                json!(fields.jid),
                failed_clause(fields),
                runner_clause(fields),
            ],
        ),
    )
}

pub fn parse_functions(answer: SearchAnswer) -> Result<FunctionsPage, EngineError> {
    let answer = answer?;
    let mut page = FunctionsPage::default();
    let agg = answer.at("/aggregations/functions");
    for bucket in agg
        .and_then(|a| a.get("buckets"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let count = |path: &str| bucket.at(path).and_then(Value::as_u64).unwrap_or(0);
        page.functions.push(FunctionStats {
            fun: bucket.get("key").map(scalar_text).unwrap_or_default(),
            returns: count("/doc_count"),
            jobs: count("/jobs/value"),
            failed: count("/failed/doc_count"),
            runner: count("/runner/doc_count") > 0,
            last_return_ms: bucket
                .at("/last_return/value")
                .and_then(Value::as_f64)
                .map(|v| v as i64),
        });
    }
    let others = agg
        .and_then(|a| a.get("sum_other_doc_count"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if others > 0 {
        page.notes.push(format!(
            "{others} returns of further functions are not listed (more than {MAX_FUNCTIONS} functions): narrow the time range"
        ));
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_read_with_their_failure_rates_runners_by_their_own_verdict() {
        let s = functions_search(&QueryContext::at(0), &JobFilter::default());
        assert_eq!(s.body["aggs"]["functions"]["terms"]["field"], "fun.keyword");
        let answer = json!({"aggregations": {"functions": {"sum_other_doc_count": 0, "buckets": [
            {"key": "state.apply", "doc_count": 40, "jobs": {"value": 10}, "failed": {"doc_count": 4},
             "runner": {"doc_count": 0}, "last_return": {"value": 1.7e12}},
            {"key": "runner.jobs.list_jobs", "doc_count": 2, "jobs": {"value": 2}, "failed": {"doc_count": 1},
             "runner": {"doc_count": 2}, "last_return": {"value": 1.7e12}}
        ]}}});
        let page = parse_functions(Ok(answer)).unwrap();
        assert_eq!(page.functions[0].failure_rate(), Some(0.1));
        assert_eq!(page.functions[0].jobs, 10);
        assert_eq!(page.functions[1].failure_rate(), Some(0.5));
        assert!(page.functions[1].runner);
        assert!(page.notes.is_empty());
    }

    #[test]
    fn functions_beyond_the_limit_are_announced() {
        let answer =
            json!({"aggregations": {"functions": {"sum_other_doc_count": 12, "buckets": []}}});
        assert!(parse_functions(Ok(answer)).unwrap().notes[0].contains("12 returns"));
    }
}
