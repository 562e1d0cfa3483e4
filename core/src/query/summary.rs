//! Which way a fleet-wide view reads its state runs: the summary fields the
//! ingest pipeline wrote at index time (small, aggregatable), or the
//! documents' own `data` (any deployment, any age). The pipeline path is
//! taken only when every state run in the view's scope has the fields, so
//! no run is misread; the page says which path it took and why.

use serde_json::{json, Value};

use super::filter::{JobFilter, TimeRange};
use super::minions::STATE_RUN_FUNCTIONS;
use super::QueryContext;
use crate::engine::{EngineError, SearchAnswer, SearchRequest};
use crate::model::{SUMMARY_PIPELINE, SUMMARY_VERSION, SUMMARY_VERSION_FIELD};

/// Where a view's per-run facts came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ComputedFrom {
    /// The summary pipeline's fields: no state run's `data` was read.
    SummaryFields,
    /// Each state run's `data`, because (the reason) the fields are not
    /// there for every run.
    Documents(String),
}

impl ComputedFrom {
    /// One line for the page.
    pub fn describe(&self) -> String {
        match self {
            ComputedFrom::SummaryFields => format!(
                "Computed by the engine from the summary fields the `{SUMMARY_PIPELINE}` ingest pipeline wrote"
            ),
            ComputedFrom::Documents(why) => {
                format!("Computed from the state runs' documents: {why}")
            }
        }
    }

    pub fn uses_summary(&self) -> bool {
        *self == ComputedFrom::SummaryFields
    }
}

/// The state runs of `minions` (all without) that lack this version's
/// summary fields: none means the summary path sees every run.
pub fn unsummarised_search(ctx: &QueryContext, minions: &[String]) -> SearchRequest {
    let runs = JobFilter {
        minions: minions.to_vec(),
        functions: STATE_RUN_FUNCTIONS.iter().map(|f| f.to_string()).collect(),
        time: TimeRange::All,
        show_noisy: true,
        ..JobFilter::default()
    };
    SearchRequest::new(
        &ctx.config.index_pattern,
        super::template::body(
            r#"{"size":0,"track_total_hits":true,"query":{"bool":{"filter":[$0],"must_not":[{"term":{$1:$2}}]}}}"#,
            &[
                runs.returns_query(ctx),
                json!(SUMMARY_VERSION_FIELD),
                json!(SUMMARY_VERSION),
            ],
        ),
    )
}

/// The path, from [`unsummarised_search`]'s answer.
pub fn parse_unsummarised(answer: SearchAnswer) -> Result<ComputedFrom, EngineError> {
    let answer: Value = answer?;
    let missing = super::total_hits(&answer).unwrap_or(0);
    Ok(if missing == 0 {
        ComputedFrom::SummaryFields
    } else {
        ComputedFrom::Documents(format!(
            "{missing} state run(s) were indexed without the summary pipeline's fields (before it was installed, or into an index it does not apply to)"
        ))
    })
}

/// Without the fields in the mapping, no search is needed.
pub fn without_pipeline() -> ComputedFrom {
    ComputedFrom::Documents(format!(
        "the returns have no summary fields (`scripts/index-template.sh install` adds the `{SUMMARY_PIPELINE}` ingest pipeline for indices created after it)"
    ))
}
