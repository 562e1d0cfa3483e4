//! The export as a sequence of HTTP requests, pure: the browser sends what
//! [`ExportPlan::next_request`] gives, hands the answer to
//! [`ExportPlan::handle`] and appends the bytes it returns to the file, until
//! there is no next request; then (and on cancel) it sends
//! [`ExportPlan::close_request`] if there is one.
//!
//! How each kind pages:
//! - Returns and states: hits, newest first. With a point in time where the
//!   engine has one — Elasticsearch ≥ 7.10 (`POST /<index>/_pit`, default
//!   distribution: the OSS build has no PIT and answers an error, which
//!   [`pit_unavailable`] recognises, and the export falls back), OpenSearch
//!   ≥ 2.4 (`POST /<index>/_search/point_in_time`) — else plain
//!   `search_after` over the index pattern. The sort is always
//!   `[@timestamp desc, jid desc, minion asc, _index asc]`, unique per return
//!   (one return per minion per job per index), so `search_after` neither
//!   skips nor repeats without a PIT, and a retry that has to open a new PIT
//!   continues exactly. `_shard_doc` is appended where the engine has it
//!   under a PIT (Elasticsearch ≥ 7.12, OpenSearch ≥ 3.3): a last tiebreaker
//!   for documents identical in all four. `_id` is never sorted on: it needs
//!   fielddata Elasticsearch 8 disables.
//! - Jobs: one row per jid is an aggregation — a composite on jid paged by
//!   its after key, as the job list pages — then one `_msearch` for the page's
//!   jobs' statistics, publish data and (when a state column is chosen) the
//!   state results that give the changed count.
//! - Audit: the audit view's own paging (publish events by
//!   `[data._stamp, tag]`, else the job cache by jid), both unique sorts.
//!
//! Everything needed to retry from where it stopped is [`ResumeState`], a
//! plain value: [`ExportPlan::resume`] takes it with the plan's own
//! [`ExportSpec`].

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::columns::{id, Column};
use super::encode::{CsvEncoder, CsvOptions};
use super::page::{last_sort_values, read_hits_page, Hit};
use super::rows::{audit_row, job_row, return_row, state_rows, tallied_return_row, JobRow, Row};
use super::ExportKind;
use crate::config::AppConfig;
use crate::engine::{
    msearch_body, split_msearch, EngineError, Product, ProductInfo, SearchRequest,
};
use crate::model::{HighstateSummary, ReturnData, ReturnDoc, ReturnFields, StateTally};
use crate::query::audit::{audit_searches, parse_audit, AuditCursor, AuditFilter};
use crate::query::filter::{failed_clause, percent_encode, JobFilter, OutcomeFilter, TimeRange};
use crate::query::jobs::{attach_details, attach_publish, job_details_searches, publish_searches};
use crate::query::jobs::{JobListPage, JobSummary};
use crate::query::{hits, returns_filter, total_hits, FieldMap};
use crate::text::scalar_text;

/// Returns per page. Each page costs the engine little beyond its bytes (a
/// page of one: 6-7 ms, OpenSearch 3.8, 1M returns) but costs a round trip
/// through nginx and the browser's network stack that only one page at a
/// time can overlap (the next cursor comes from this page): 10,000 a page
/// exported 1M returns in 10.2-11.1 s against 13.4-14.4 s at 5,000.
/// 10,000 is also the most an engine gives by default (`MAX_PAGE`).
/// State returns are larger documents (each gives ~7 rows): at 2,000 a
/// page the tab's JS heap reached 65 MB when answers were JS strings, at
/// 500 it stays near 30 MB.
pub const DEFAULT_HITS_PAGE: usize = 10000;
pub const DEFAULT_STATES_PAGE: usize = 500;
pub const DEFAULT_JOBS_PAGE: usize = 100;
/// The engines' default `index.max_result_window`: no page may be larger.
pub const MAX_PAGE: usize = 10_000;
pub const DEFAULT_KEEP_ALIVE: &str = "2m";

/// The functions whose returns hold states (see `model::is_state_function`).
pub const STATE_FUNCTIONS: [&str; 11] = [
    "state.apply",
    "state.sls",
    "state.highstate",
    "state.single",
    "state.sls_id",
    "state.top",
    "state.template",
    "state.template_str",
    "state.low",
    "state.high",
    "state.orchestrate",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Delete => "DELETE",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    Empty,
    Json(Value),
    /// `_msearch`'s newline-delimited JSON.
    NdJson(String),
}

impl Body {
    pub fn text(&self) -> String {
        match self {
            Body::Empty => String::new(),
            Body::Json(v) => v.to_string(),
            Body::NdJson(s) => s.clone(),
        }
    }

    pub fn content_type(&self) -> Option<&'static str> {
        match self {
            Body::Empty => None,
            Body::Json(_) => Some("application/json"),
            Body::NdJson(_) => Some("application/x-ndjson"),
        }
    }
}

/// One request, its path relative to the engine URL (`config.engine_url`).
#[derive(Clone, Debug, PartialEq)]
pub struct HttpRequest {
    pub method: Method,
    pub path: String,
    pub body: Body,
}

/// How the pages are fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Paging {
    /// Elasticsearch's `_pit`, with `_shard_doc` from 7.12.
    ElasticsearchPit { shard_doc: bool },
    /// OpenSearch's `_search/point_in_time`, with `_shard_doc` from 3.3.
    OpenSearchPit { shard_doc: bool },
    /// `search_after` over the index pattern, no point in time.
    SearchAfter,
    /// Composite aggregation on jid, by its after key (jobs).
    Composite,
    /// The audit view's cursor.
    AuditCursor,
}

impl Paging {
    /// The paging of returns and states on this engine, before asking it.
    pub fn for_hits(product: &ProductInfo) -> Paging {
        let v = product.version_parts;
        match product.product {
            Product::Elasticsearch if v >= (7, 10, 0) => Paging::ElasticsearchPit {
                shard_doc: v >= (7, 12, 0),
            },
            Product::OpenSearch if v >= (2, 4, 0) => Paging::OpenSearchPit {
                shard_doc: v >= (3, 3, 0),
            },
            _ => Paging::SearchAfter,
        }
    }

    pub fn is_pit(self) -> bool {
        matches!(
            self,
            Paging::ElasticsearchPit { .. } | Paging::OpenSearchPit { .. }
        )
    }

    fn shard_doc(self) -> bool {
        matches!(
            self,
            Paging::ElasticsearchPit { shard_doc: true }
                | Paging::OpenSearchPit { shard_doc: true }
        )
    }
}

/// `POST /<index>/_pit` (Elasticsearch) or `POST /<index>/_search/point_in_time`
/// (OpenSearch, refusing a PIT over only some shards: that would be a short
/// file). `None` for pagings without a PIT.
pub fn open_pit_request(paging: Paging, index: &str, keep_alive: &str) -> Option<HttpRequest> {
    let index = percent_encode(index);
    let ka = percent_encode(keep_alive);
    let path = match paging {
        Paging::ElasticsearchPit { .. } => format!("/{index}/_pit?keep_alive={ka}"),
        Paging::OpenSearchPit { .. } => format!(
            "/{index}/_search/point_in_time?keep_alive={ka}&allow_partial_pit_creation=false"
        ),
        _ => return None,
    };
    Some(HttpRequest {
        method: Method::Post,
        path,
        body: Body::Empty,
    })
}

/// The PIT id from the open answer: `{"id": …}` (Elasticsearch) or
/// `{"pit_id": …}` (OpenSearch).
pub fn parse_open_pit(paging: Paging, answer: &Value) -> Result<String, EngineError> {
    if let Some(e) = EngineError::from_shard_failures("point in time", answer) {
        return Err(e);
    }
    let field = match paging {
        Paging::OpenSearchPit { .. } => "pit_id",
        _ => "id",
    };
    answer
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| EngineError::BadResponse {
            url: "point in time".into(),
            detail: format!("the answer has no `{field}`: {answer}"),
        })
}

/// `DELETE /_pit {"id"}` or `DELETE /_search/point_in_time {"pit_id": [..]}`.
pub fn close_pit_request(paging: Paging, pit_id: &str) -> Option<HttpRequest> {
    let (path, body) = match paging {
        Paging::ElasticsearchPit { .. } => ("/_pit", json!({ "id": pit_id })),
        Paging::OpenSearchPit { .. } => ("/_search/point_in_time", json!({ "pit_id": [pit_id] })),
        _ => return None,
    };
    Some(HttpRequest {
        method: Method::Delete,
        path: path.into(),
        body: Body::Json(body),
    })
}

/// Whether opening a PIT failed because the engine has none (Elasticsearch's
/// OSS build, OpenSearch before 2.4, a proxy that does not pass the route):
/// any 4xx but 401 (credentials), 408 and 429 (try again later). The
/// fallback search then says for itself if the index cannot be read at all.
pub fn pit_unavailable(error: &EngineError) -> bool {
    matches!(error, EngineError::Status { status, .. }
        if (400..500).contains(status) && ![401, 408, 429].contains(status))
}

/// Whether a page failed because its PIT expired (or the node holding it
/// restarted): open a new one and ask again.
pub fn pit_expired(error: &EngineError) -> bool {
    match error {
        EngineError::Status {
            kind,
            reason,
            status,
            ..
        } => {
            kind.as_deref() == Some("search_context_missing_exception")
                || (*status == 404
                    && (reason.contains("No search context found")
                        || reason.contains("search_context_missing")))
        }
        _ => false,
    }
}

/// The sort of returns and states (see the module's docs).
/// The sort of a hits export: unique, so search_after never skips or
/// repeats a return.
///
/// Under a PIT with `_shard_doc`: `_index`, then `_shard_doc`, then jid and
/// minion. The engine then reads each shard in document order instead of
/// ranking every match again for each page (OpenSearch 3.8, 1M returns:
/// 12-150 ms a page of 5,000 with `_source`, against 290-380 ms with the
/// field sort below). `_shard_doc` alone is not enough there: on OpenSearch
/// 3.8 it is the bare Lucene doc id, equal across shards, and search_after
/// on it alone skipped 172 of 1,000,000 returns (measured); `_index` tells
/// single-shard indices (the returner's) apart, jid and minion the shards of
/// any other. The file is then in index order, as helpers.scan's is.
///
/// Otherwise the field sort, newest first.
pub fn hits_sort(paging: Paging, fields: &FieldMap) -> Value {
    if paging.shard_doc() {
        return json!([
            {"_index": {"order": "asc", "unmapped_type": "keyword"}},
            {"_shard_doc": "asc"},
            {fields.jid.clone(): {"order": "asc", "unmapped_type": "keyword"}},
            {fields.minion.clone(): {"order": "asc", "unmapped_type": "keyword"}}
        ]);
    }
    json!([
        {"@timestamp": {"order": "desc", "unmapped_type": "date"}},
        {fields.jid.clone(): {"order": "desc", "unmapped_type": "keyword"}},
        {fields.minion.clone(): {"order": "asc", "unmapped_type": "keyword"}},
        // unmapped_type: an index that has no mapping yet (created, every
        // document rejected: salt-grains_items with dynamic mappings) fails
        // a `_index` sort without it.
        {"_index": {"order": "asc", "unmapped_type": "keyword"}}
    ])
}

/// An engine's answer as it came: the body's bytes (a page of hits is
/// read from them in place, see [`super::page`]), or the error its status
/// or the network made of it (`EngineError::from_status`).
pub type Answer = Result<Vec<u8>, EngineError>;

/// A page's hits, read as the chosen columns need them.
enum Hits {
    /// State totals only: the returns export without the output column.
    Tallied(Vec<Hit<ReturnFields<StateTally>>>),
    Whole(Vec<Hit<ReturnFields<Value>>>),
}

/// Where the export stands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum After {
    #[default]
    Start,
    /// The last written hit's sort values.
    Sort(Vec<Value>),
    /// The last jid looked at (jobs).
    Jid(String),
    /// The audit cursor, as [`AuditCursor::to_param`] spells it.
    Audit(String),
}

/// Everything needed to retry from where it stopped: a plain value the UI
/// can keep (or store as JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResumeState {
    pub after: After,
    pub rows_written: u64,
    /// Documents (returns, jobs, audit lines) read so far.
    pub docs_read: u64,
    /// Documents to read in all (returns, jobs or audit lines).
    pub total: Option<u64>,
    /// The total is approximate (jobs: a cardinality; audit with
    /// risky-only filtering).
    pub total_is_estimate: bool,
    pub paging: Paging,
    pub pit_id: Option<String>,
    /// BOM and header are in the file.
    pub header_written: bool,
    pub done: bool,
}

/// The view's filter the export starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewFilter {
    Jobs(JobFilter),
    Audit(AuditFilter),
}

impl ViewFilter {
    pub fn time(&self) -> &TimeRange {
        match self {
            ViewFilter::Jobs(f) => &f.time,
            ViewFilter::Audit(f) => &f.time,
        }
    }

    fn time_mut(&mut self) -> &mut TimeRange {
        match self {
            ViewFilter::Jobs(f) => &mut f.time,
            ViewFilter::Audit(f) => &mut f.time,
        }
    }
}

/// What to export, from where, how.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportSpec {
    pub kind: ExportKind,
    pub columns: Vec<Column>,
    pub product: ProductInfo,
    pub config: AppConfig,
    pub fields: FieldMap,
    /// Jobs, returns and states take the job filter; audit the audit filter.
    pub filter: ViewFilter,
    /// Function patterns the job filter hides unless it shows noise.
    pub noisy: Vec<String>,
    /// "Now" for a relative time range: fixed once, so pages and retries
    /// cover the same range.
    pub now_ms: i64,
    pub csv: CsvOptions,
    /// Documents (hits or jids) per page; `None`: the kind's default.
    pub page_size: Option<usize>,
    pub keep_alive: String,
}

enum Phase {
    Open,
    Page,
    /// States with a user column: the page's returns wait for their jobs'
    /// publish data.
    Publish(Pending),
    /// Jobs: the page's jids wait for their statistics.
    Details(Pending),
    Done,
}

struct Pending {
    docs: Vec<ReturnDoc>,
    jids: Vec<String>,
    next: After,
    last: bool,
    looked_at: u64,
}

pub struct ExportPlan {
    spec: ExportSpec,
    /// The spec's filter, by kind (the other one at its default).
    job_filter: JobFilter,
    audit_filter: AuditFilter,
    state: ResumeState,
    phase: Phase,
    encoder: CsvEncoder,
    reopened: bool,
    notes: Vec<String>,
}

impl ExportPlan {
    /// A new export. A relative time range is fixed against `now_ms` here,
    /// so [`Self::spec`] describes the same rows however late a retry comes.
    pub fn new(spec: ExportSpec) -> Result<ExportPlan, String> {
        let paging = match spec.kind {
            ExportKind::Jobs => Paging::Composite,
            ExportKind::Audit => Paging::AuditCursor,
            _ => Paging::for_hits(&spec.product),
        };
        let state = ResumeState {
            after: After::Start,
            rows_written: 0,
            docs_read: 0,
            total: None,
            total_is_estimate: matches!(spec.kind, ExportKind::Jobs),
            paging,
            pit_id: None,
            header_written: false,
            done: false,
        };
        ExportPlan::resume(spec, state)
    }

    /// Continues an export from `state` (the file so far keeps its header).
    pub fn resume(mut spec: ExportSpec, state: ResumeState) -> Result<ExportPlan, String> {
        match (&spec.filter, spec.kind) {
            (ViewFilter::Audit(_), ExportKind::Audit) => {}
            (ViewFilter::Jobs(_), ExportKind::Jobs | ExportKind::Returns | ExportKind::States) => {}
            (_, kind) => {
                return Err(format!(
                    "the {} export takes the {} filter",
                    kind.id(),
                    if kind == ExportKind::Audit {
                        "audit"
                    } else {
                        "job"
                    }
                ))
            }
        }
        if spec.columns.is_empty() {
            spec.columns = spec.kind.default_columns();
        }
        if let Some((from_ms, to_ms)) = spec.filter.time().bounds(spec.now_ms) {
            *spec.filter.time_mut() = TimeRange::Absolute { from_ms, to_ms };
        }
        let encoder = if state.header_written {
            CsvEncoder::continuing(spec.columns.clone(), spec.csv)
        } else {
            CsvEncoder::new(spec.columns.clone(), spec.csv)
        };
        let phase = if state.done {
            Phase::Done
        } else if state.paging.is_pit() && state.pit_id.is_none() {
            Phase::Open
        } else {
            Phase::Page
        };
        let (job_filter, audit_filter) = match &spec.filter {
            ViewFilter::Jobs(f) => (f.clone(), AuditFilter::default()),
            ViewFilter::Audit(f) => (JobFilter::default(), f.clone()),
        };
        Ok(ExportPlan {
            spec,
            job_filter,
            audit_filter,
            state,
            phase,
            encoder,
            reopened: false,
            notes: Vec::new(),
        })
    }

    pub fn spec(&self) -> &ExportSpec {
        &self.spec
    }

    /// Rows written, documents read, the total, the cursor: progress for
    /// the bar, and what a retry starts from.
    pub fn state(&self) -> &ResumeState {
        &self.state
    }

    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// What the reader should know about the file (fallbacks, columns left
    /// empty and why, a short read).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Documents the engine counted but the export did not read, once done
    /// (`Some(missing)` only when the total is exact): with a PIT this is an
    /// error, without one documents may have been deleted meanwhile.
    pub fn shortfall(&self) -> Option<u64> {
        let total = self.state.total?;
        (self.is_done() && !self.state.total_is_estimate && self.state.docs_read < total)
            .then(|| total - self.state.docs_read)
    }

    pub fn page_size(&self) -> usize {
        let default = match self.spec.kind {
            ExportKind::Jobs => DEFAULT_JOBS_PAGE,
            ExportKind::Audit => crate::query::audit::AUDIT_PAGE_SIZE,
            ExportKind::States => DEFAULT_STATES_PAGE,
            _ => DEFAULT_HITS_PAGE,
        };
        match self.spec.kind {
            ExportKind::Audit => default,
            _ => self.spec.page_size.unwrap_or(default).clamp(1, MAX_PAGE),
        }
    }

    fn wants(&self, column: &str) -> bool {
        self.spec.columns.iter().any(|c| c.id == column)
    }

    fn job_filter(&self) -> &JobFilter {
        &self.job_filter
    }

    /// The query of returns and states: the view's filter, its outcome
    /// taken per return (failed returns, or successful ones), states
    /// restricted to the state functions.
    pub fn hits_query(&self) -> Value {
        let s = &self.spec;
        let filter = self.job_filter();
        let mut query = filter.returns_query_with_outcome(&s.config, &s.fields, &s.noisy, s.now_ms);
        if let Some(clauses) = query
            .pointer_mut("/bool/filter")
            .and_then(Value::as_array_mut)
        {
            if filter.outcome == OutcomeFilter::AllSucceeded {
                clauses.push(json!({"term": {"success": true}}));
            }
            if s.kind == ExportKind::States {
                clauses.push(json!({"terms": {s.fields.fun.clone(): STATE_FUNCTIONS}}));
            }
        }
        query
    }

    /// Whether the next request is a page (not opening the PIT or a
    /// lookup for the page just read).
    pub fn awaits_page(&self) -> bool {
        matches!(self.phase, Phase::Page)
    }

    /// The next request to send; `None` once done.
    pub fn next_request(&self) -> Option<HttpRequest> {
        let s = &self.spec;
        match &self.phase {
            Phase::Done => None,
            Phase::Open => {
                open_pit_request(self.state.paging, &s.config.index_pattern, &s.keep_alive)
            }
            Phase::Page => Some(match s.kind {
                ExportKind::Jobs => self.jobs_page_request(),
                ExportKind::Audit => self.audit_page_request(),
                _ => self.hits_page_request(),
            }),
            Phase::Publish(p) => {
                let searches = publish_searches(&s.config, &s.fields, &p.jids);
                Some(msearch(&searches))
            }
            Phase::Details(p) => Some(msearch(&self.details_searches(&p.jids))),
        }
    }

    /// The request that frees the PIT: after the last page, on cancel, or
    /// when giving up after a failure. Its answer needs no reading (a PIT
    /// already gone answers 404).
    pub fn close_request(&self) -> Option<HttpRequest> {
        close_pit_request(self.state.paging, self.state.pit_id.as_deref()?)
    }

    fn search_path(&self, index: &str) -> String {
        format!(
            "/{}/_search?ignore_unavailable=true&allow_no_indices=true",
            percent_encode(index)
        )
    }

    /// The request for the page after the current cursor.
    pub fn hits_page_request(&self) -> HttpRequest {
        self.hits_page_request_at(
            &self.state.after,
            self.state.pit_id.as_deref(),
            self.state.total.is_none(),
        )
    }

    fn hits_page_request_at(
        &self,
        after: &After,
        pit_id: Option<&str>,
        count: bool,
    ) -> HttpRequest {
        let s = &self.spec;
        let paging = self.state.paging;
        // The whole `_source`: filtering it makes the engine parse every
        // document again (OpenSearch 3.8, 5,000 state returns: 180-290 ms a
        // page with a field list against 43-60 ms without); the typed reader
        // skips what no column needs.
        let mut body = json!({
            "size": self.page_size(),
            "query": self.hits_query(),
            "sort": hits_sort(paging, &s.fields),
            "track_total_hits": count,
        });
        if let After::Sort(values) = after {
            body["search_after"] = Value::Array(values.clone());
        }
        let path = match (pit_id, paging.is_pit()) {
            (Some(id), true) => {
                body["pit"] = json!({"id": id, "keep_alive": s.keep_alive});
                "/_search".to_string()
            }
            _ => self.search_path(&s.config.index_pattern),
        };
        HttpRequest {
            method: Method::Post,
            path,
            body: Body::Json(body),
        }
    }

    /// The page request that will follow `answer` (to the current page
    /// request) if it is a full page: its cursor read off the end of the
    /// bytes ([`last_sort_values`]), before the page is parsed. Sent at
    /// once, the engine works on the next page while this one becomes CSV.
    /// A guess: after [`Self::handle`], use the early answer only if
    /// [`Self::next_request`] equals this request (else drop it).
    pub fn request_after(&self, answer: &[u8]) -> Option<HttpRequest> {
        let hits = matches!(self.spec.kind, ExportKind::Returns | ExportKind::States);
        if !hits || !matches!(self.phase, Phase::Page) {
            return None;
        }
        let after = After::Sort(last_sort_values(answer)?);
        Some(self.hits_page_request_at(&after, self.state.pit_id.as_deref(), false))
    }

    pub fn jobs_page_request(&self) -> HttpRequest {
        let s = &self.spec;
        let filter = self.job_filter();
        let query = filter.returns_query_with_outcome(&s.config, &s.fields, &s.noisy, s.now_ms);
        let mut composite = json!({
            "size": self.page_size(),
            "sources": [{"jid": {"terms": {"field": s.fields.jid, "order": "desc"}}}]
        });
        if let After::Jid(jid) = &self.state.after {
            composite["after"] = json!({ "jid": jid });
        }
        let mut body = json!({
            "size": 0,
            "query": query,
            "track_total_hits": false,
            "aggs": {"jobs": {
                "composite": composite,
                "aggs": {"failed": {"filter": failed_clause(&s.fields)}}
            }}
        });
        if self.state.total.is_none() {
            body["aggs"]["job_count"] =
                json!({"cardinality": {"field": s.fields.jid, "precision_threshold": 40000}});
        }
        HttpRequest {
            method: Method::Post,
            path: self.search_path(&s.config.index_pattern),
            body: Body::Json(body),
        }
    }

    fn wants_job_states(&self) -> bool {
        [id::STATES_SUCCEEDED, id::STATES_CHANGED, id::STATES_FAILED]
            .iter()
            .any(|c| self.wants(c))
    }

    /// The jobs' statistics, publish events and job-cache loads (the job
    /// list's round trip 2), and their state results when a state column is
    /// chosen: `counts` has no changed count, and is absent without
    /// `states_count`.
    fn details_searches(&self, jids: &[String]) -> Vec<SearchRequest> {
        let s = &self.spec;
        let mut searches = job_details_searches(&s.config, &s.fields, jids);
        if self.wants_job_states() {
            let (mut filter, must_not) = returns_filter(&s.config);
            filter.push(json!({"terms": {s.fields.jid.clone(): jids}}));
            filter.push(json!({"terms": {s.fields.fun.clone(): STATE_FUNCTIONS}}));
            searches.push(SearchRequest::new(
                &s.config.index_pattern,
                json!({
                    "size": MAX_PAGE,
                    "track_total_hits": true,
                    "query": {"bool": {"filter": filter, "must_not": must_not}},
                    "_source": ["jid", "fun", "data.*.result", "data.*.changes"]
                }),
            ));
        }
        searches
    }

    pub fn audit_page_request(&self) -> HttpRequest {
        let s = &self.spec;
        let filter = &self.audit_filter;
        let cursor = self.audit_cursor();
        msearch(&audit_searches(
            &s.config,
            &s.fields,
            filter,
            s.now_ms,
            cursor.as_ref(),
        ))
    }

    fn audit_cursor(&self) -> Option<AuditCursor> {
        match &self.state.after {
            After::Audit(text) => AuditCursor::parse(text),
            _ => None,
        }
    }

    /// Reads the answer to [`Self::next_request`] (an HTTP error as the
    /// engine's error, see `EngineError::from_status`) and returns the bytes
    /// to append to the file (possibly none). On an error the state stays
    /// where it was: send [`Self::next_request`] again to retry, or keep
    /// [`Self::state`] to resume later.
    pub fn handle(&mut self, answer: Answer) -> Result<Vec<u8>, EngineError> {
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Done => {
                self.phase = Phase::Done;
                Ok(Vec::new())
            }
            Phase::Open => match json(answer).and_then(|a| parse_open_pit(self.state.paging, &a)) {
                Ok(id) => {
                    self.state.pit_id = Some(id);
                    self.phase = Phase::Page;
                    Ok(Vec::new())
                }
                Err(e) if pit_unavailable(&e) => {
                    self.notes.push(format!(
                        "no point in time on this engine ({e}): paging with search_after alone, so documents written during the export may or may not be included"
                    ));
                    self.fall_back_to_search_after();
                    self.phase = Phase::Page;
                    Ok(Vec::new())
                }
                Err(e) => {
                    self.phase = Phase::Open;
                    Err(e)
                }
            },
            Phase::Page => {
                let result = match self.spec.kind {
                    ExportKind::Jobs => self.handle_jobs_page(json(answer)),
                    ExportKind::Audit => self.handle_audit_page(json(answer)),
                    // Read in place from the bytes (see `page`).
                    _ => self.handle_hits_page(answer),
                };
                if matches!(self.phase, Phase::Done) && !self.state.done {
                    self.phase = Phase::Page;
                }
                result
            }
            Phase::Publish(pending) => match json(answer) {
                Ok(a) => {
                    let users = publish_users(
                        &pending.jids,
                        &split_msearch("_msearch", &a, 2),
                        &mut self.notes,
                    );
                    let rows: Vec<Row> = pending
                        .docs
                        .iter()
                        .flat_map(|d| {
                            let user = users
                                .iter()
                                .find(|(j, _)| *j == d.jid)
                                .and_then(|(_, u)| u.as_deref());
                            state_rows(d, user, &self.spec.columns)
                        })
                        .collect();
                    Ok(self.commit(&rows, pending.looked_at, pending.next, pending.last))
                }
                Err(e) => {
                    self.phase = Phase::Publish(pending);
                    Err(e)
                }
            },
            Phase::Details(pending) => match json(answer) {
                Ok(a) => {
                    let expected = if self.wants_job_states() { 4 } else { 3 };
                    let rows =
                        self.job_rows(&pending.jids, split_msearch("_msearch", &a, expected));
                    Ok(self.commit(&rows, pending.looked_at, pending.next, pending.last))
                }
                Err(e) => {
                    self.phase = Phase::Details(pending);
                    Err(e)
                }
            },
        }
    }

    fn fall_back_to_search_after(&mut self) {
        let had_shard_doc = self.state.paging.shard_doc();
        self.state.paging = Paging::SearchAfter;
        self.state.pit_id = None;
        if let (true, After::Sort(values)) = (had_shard_doc, &mut self.state.after) {
            values.truncate(4);
        }
    }

    fn handle_hits_page(&mut self, answer: Answer) -> Result<Vec<u8>, EngineError> {
        // The returns export without the output column needs only each
        // return's state totals: tallied from the bytes, no states built.
        let tally = self.spec.kind == ExportKind::Returns && !self.wants(id::OUTPUT);
        let size = self.page_size();
        let read = answer.and_then(|bytes| {
            if tally {
                read_hits_page::<ReturnFields<StateTally>>(&bytes, size)
                    .map(|(i, h)| (i, Hits::Tallied(h)))
            } else {
                read_hits_page::<ReturnFields<Value>>(&bytes, size)
                    .map(|(i, h)| (i, Hits::Whole(h)))
            }
        });
        let (page, hits) = match read {
            Ok(read) => read,
            Err(e) if pit_expired(&e) && self.state.paging.shard_doc() => {
                // `_shard_doc` values belong to the expired PIT's segments: a
                // new PIT cannot continue exactly from them.
                self.phase = Phase::Page;
                return Err(match e {
                    EngineError::Status { url, status, kind, reason } => EngineError::Status {
                        url,
                        status,
                        kind,
                        reason: format!("{reason} (the point in time expired: the export cannot continue exactly where it stopped; start it again)"),
                    },
                    other => other,
                });
            }
            Err(e) if pit_expired(&e) && self.state.pit_id.is_some() && !self.reopened => {
                // Continue from the same sort values under a new PIT: the
                // field sort is unique, so nothing is skipped or repeated.
                self.notes
                    .push(format!("the point in time expired ({e}); opened a new one"));
                self.reopened = true;
                self.state.pit_id = None;
                self.phase = Phase::Open;
                return Ok(Vec::new());
            }
            Err(e) => {
                self.phase = Phase::Page;
                return Err(e);
            }
        };
        self.reopened = false;
        if let Some(id) = page.pit_id.clone().filter(|_| self.state.paging.is_pit()) {
            self.state.pit_id = Some(id);
        }
        if self.state.total.is_none() {
            self.state.total = page.total;
        }
        let (next, last) = match page.next {
            Some(v) => (After::Sort(v), false),
            None => (self.state.after.clone(), true),
        };
        let columns = &self.spec.columns;
        let docs: Vec<ReturnDoc> = match hits {
            Hits::Tallied(hits) => {
                let looked_at = hits.len() as u64;
                let rows: Vec<Row> = hits
                    .into_iter()
                    .map(|h| tallied_return_row(h, columns))
                    .collect();
                return Ok(self.commit(&rows, looked_at, next, last));
            }
            Hits::Whole(hits) => hits
                .into_iter()
                .map(|h| {
                    let fields = h.source.unwrap_or_default();
                    let (mut doc, data) = ReturnDoc::from_fields(h.index, h.id, fields);
                    doc.data = ReturnData::read(&doc.fun, data.as_ref(), &mut doc.notes);
                    doc
                })
                .collect(),
        };
        let looked_at = docs.len() as u64;
        if self.spec.kind == ExportKind::States && self.wants(id::USER) && !docs.is_empty() {
            let mut jids: Vec<String> = Vec::new();
            for d in &docs {
                if !d.jid.is_empty() && !jids.contains(&d.jid) {
                    jids.push(d.jid.clone());
                }
            }
            self.phase = Phase::Publish(Pending {
                docs,
                jids,
                next,
                last,
                looked_at,
            });
            return Ok(Vec::new());
        }
        let rows: Vec<Row> = match self.spec.kind {
            ExportKind::States => docs
                .iter()
                .flat_map(|d| state_rows(d, None, columns))
                .collect(),
            _ => docs.iter().map(|d| return_row(d, columns)).collect(),
        };
        Ok(self.commit(&rows, looked_at, next, last))
    }

    fn handle_jobs_page(
        &mut self,
        answer: Result<Value, EngineError>,
    ) -> Result<Vec<u8>, EngineError> {
        let answer =
            answer.and_then(
                |a| match EngineError::from_shard_failures("export page", &a) {
                    Some(e) => Err(e),
                    None => Ok(a),
                },
            );
        let a = match answer {
            Ok(a) => a,
            Err(e) => {
                self.phase = Phase::Page;
                return Err(e);
            }
        };
        let Some(buckets) = a
            .pointer("/aggregations/jobs/buckets")
            .and_then(Value::as_array)
        else {
            self.phase = Phase::Page;
            return Err(EngineError::BadResponse {
                url: "export page".into(),
                detail: "the engine answered without the job aggregation".into(),
            });
        };
        if self.state.total.is_none() {
            self.state.total = a
                .pointer("/aggregations/job_count/value")
                .and_then(Value::as_u64);
        }
        let skip_failed = self.job_filter().outcome == OutcomeFilter::AllSucceeded;
        let mut jids = Vec::new();
        for b in buckets {
            let Some(jid) = b.pointer("/key/jid").map(scalar_text) else {
                continue;
            };
            let failed = b
                .pointer("/failed/doc_count")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if !(skip_failed && failed > 0) {
                jids.push(jid);
            }
        }
        let last = buckets.len() < self.page_size();
        let next = match buckets.last().and_then(|b| b.pointer("/key/jid")) {
            Some(jid) if !last => After::Jid(scalar_text(jid)),
            _ => self.state.after.clone(),
        };
        let looked_at = buckets.len() as u64;
        if jids.is_empty() {
            return Ok(self.commit(&[], looked_at, next, last));
        }
        self.phase = Phase::Details(Pending {
            docs: Vec::new(),
            jids,
            next,
            last,
            looked_at,
        });
        Ok(Vec::new())
    }

    fn job_rows(&mut self, jids: &[String], answers: Vec<Result<Value, EngineError>>) -> Vec<Row> {
        let mut answers = answers.into_iter();
        let mut page = JobListPage {
            jobs: jids
                .iter()
                .map(|j| JobSummary {
                    jid: j.clone(),
                    ..JobSummary::default()
                })
                .collect(),
            ..JobListPage::default()
        };
        attach_details(&mut page, answers.by_ref().take(3).collect());
        self.notes.append(&mut page.notes);
        let mut states: Vec<(String, HighstateSummary)> = Vec::new();
        let mut states_known = false;
        match answers.next() {
            Some(Ok(a)) => {
                let found = hits(&a);
                if total_hits(&a).is_some_and(|t| t > found.len() as u64) {
                    self.notes.push(format!(
                        "the jobs {} .. {} have more than {MAX_PAGE} state returns: their state counts come from `counts` only, and changed is left empty",
                        jids.last().map(String::as_str).unwrap_or(""),
                        jids.first().map(String::as_str).unwrap_or("")
                    ));
                } else {
                    states_known = true;
                    for doc in found.iter().map(ReturnDoc::from_hit) {
                        if let ReturnData::States(s) = &doc.data {
                            let summary = HighstateSummary::of(&s.runs);
                            match states.iter_mut().find(|(j, _)| *j == doc.jid) {
                                Some((_, sum)) => sum.add(&summary),
                                None => states.push((doc.jid.clone(), summary)),
                            }
                        }
                    }
                }
            }
            Some(Err(e)) => self.notes.push(format!("state results unavailable: {e}")),
            None => {}
        }
        page.jobs
            .into_iter()
            .map(|job| {
                let summary = states.iter().find(|(j, _)| *j == job.jid).map(|(_, s)| *s);
                let row = JobRow {
                    states: if states_known { summary } else { None },
                    job,
                };
                job_row(&row, &self.spec.columns)
            })
            .collect()
    }

    fn handle_audit_page(
        &mut self,
        answer: Result<Value, EngineError>,
    ) -> Result<Vec<u8>, EngineError> {
        let filter = self.audit_filter.clone();
        let cursor = self.audit_cursor();
        let parsed = answer.and_then(|a| {
            parse_audit(
                &self.spec.config,
                &filter,
                cursor.as_ref(),
                split_msearch("_msearch", &a, 2),
            )
        });
        let page = match parsed {
            Ok(p) => p,
            Err(e) => {
                self.phase = Phase::Page;
                return Err(e);
            }
        };
        if self.state.after == After::Start {
            self.notes.extend(page.notes.iter().cloned());
        }
        if self.state.total.is_none() {
            self.state.total = page.total;
            self.state.total_is_estimate = filter.risky_only;
        }
        let rows: Vec<Row> = page
            .entries
            .iter()
            .map(|e| audit_row(e, &self.spec.columns))
            .collect();
        // With risky-only, lines the rule drops are not counted: the total
        // is then an estimate (see `total_is_estimate`).
        let looked_at = page.entries.len() as u64;
        let (next, last) = match &page.next {
            Some(c) => (After::Audit(c.to_param()), false),
            None => (self.state.after.clone(), true),
        };
        Ok(self.commit(&rows, looked_at, next, last))
    }

    /// Writes a page's rows and moves the cursor past it, all at once.
    fn commit(&mut self, rows: &[Row], looked_at: u64, next: After, last: bool) -> Vec<u8> {
        let bytes = self.encoder.encode_page(rows);
        self.state.header_written = true;
        self.state.rows_written += rows.len() as u64;
        self.state.docs_read += looked_at;
        self.state.after = next;
        if last {
            self.state.done = true;
            self.phase = Phase::Done;
        } else {
            self.phase = Phase::Page;
        }
        bytes
    }
}

/// An answer read as JSON, for the phases that are not a page of hits.
fn json(answer: Answer) -> Result<Value, EngineError> {
    answer.and_then(|bytes| {
        serde_json::from_slice(&bytes).map_err(|e| EngineError::BadResponse {
            url: "export page".into(),
            detail: format!("not JSON ({e})"),
        })
    })
}

fn msearch(searches: &[SearchRequest]) -> HttpRequest {
    HttpRequest {
        method: Method::Post,
        path: "/_msearch".into(),
        body: Body::NdJson(msearch_body(searches)),
    }
}

/// Each jid's user from the publish events and job-cache loads; a lookup
/// that failed leaves the user empty and says so.
fn publish_users(
    jids: &[String],
    answers: &[Result<Value, EngineError>],
    notes: &mut Vec<String>,
) -> Vec<(String, Option<String>)> {
    let mut page = JobListPage {
        jobs: jids
            .iter()
            .map(|j| JobSummary {
                jid: j.clone(),
                ..JobSummary::default()
            })
            .collect(),
        ..JobListPage::default()
    };
    let mut ok = |i: usize, what: &str| match answers.get(i) {
        Some(Ok(v)) => Some(v),
        Some(Err(e)) => {
            let note = format!("{what} unavailable, users left empty: {e}");
            if !notes.contains(&note) {
                notes.push(note);
            }
            None
        }
        None => None,
    };
    let events = ok(0, "publish events");
    let cache = ok(1, "job cache");
    attach_publish(&mut page, events, cache);
    page.jobs
        .into_iter()
        .map(|j| (j.jid, j.publish.and_then(|p| p.user)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::ColumnChoice;

    const NOW: i64 = 1_796_083_200_000; // 2026-12-01T00:00:00Z

    fn product(p: Product, v: (u32, u32, u32)) -> ProductInfo {
        ProductInfo {
            product: p,
            version: format!("{}.{}.{}", v.0, v.1, v.2),
            version_parts: v,
            cluster_name: "c".into(),
        }
    }

    fn spec(kind: ExportKind, p: ProductInfo, page: usize) -> ExportSpec {
        ExportSpec {
            kind,
            columns: kind.default_columns(),
            product: p,
            config: AppConfig::default(),
            fields: FieldMap::default(),
            filter: match kind {
                ExportKind::Audit => ViewFilter::Audit(AuditFilter::default()),
                _ => ViewFilter::Jobs(JobFilter::default()),
            },
            noisy: vec!["saltutil.*".into()],
            now_ms: NOW,
            csv: CsvOptions::default(),
            page_size: Some(page),
            keep_alive: "2m".into(),
        }
    }

    fn hit(jid: &str, minion: &str, ms: i64, sort_extra: Option<i64>) -> Value {
        let mut sort = vec![
            json!(ms),
            json!(jid),
            json!(minion),
            json!("salt-state_apply-v1"),
        ];
        sort.extend(sort_extra.map(|s| json!(s)));
        json!({"_index": "salt-state_apply-v1", "_id": format!("{jid}{minion}"), "sort": sort,
               "_source": {"@timestamp": crate::text::iso_millis(ms), "jid": jid, "minion": minion,
                           "fun": "state.apply", "success": true, "retcode": 0,
                           "data": {"test_|-a_|-a_|-nop": {"result": true, "changes": {}, "__run_num__": 0, "__id__": "a"},
                                    "test_|-b_|-b_|-nop": {"result": true, "changes": {"x": 1}, "__run_num__": 1, "__id__": "b"}}}})
    }

    fn page(hits: Vec<Value>, total: u64, pit: Option<&str>) -> Value {
        let mut a = json!({"timed_out": false, "_shards": {"total": 2, "successful": 2, "failed": 0},
                           "hits": {"total": {"value": total, "relation": "eq"}, "hits": hits}});
        if let Some(p) = pit {
            a["pit_id"] = json!(p);
        }
        a
    }

    /// An answer as the engine sends it: bytes.
    fn ok(answer: Value) -> Answer {
        Ok(serde_json::to_vec(&answer).unwrap())
    }

    fn body(req: &HttpRequest) -> Value {
        match &req.body {
            Body::Json(v) => v.clone(),
            other => panic!("not JSON: {other:?}"),
        }
    }

    fn read_csv(bytes: &[u8]) -> Vec<Vec<String>> {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(bytes)
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn paging_follows_the_engine_and_its_version() {
        use Product::*;
        let p = |pr, v| Paging::for_hits(&product(pr, v));
        assert_eq!(p(Elasticsearch, (7, 9, 3)), Paging::SearchAfter);
        assert_eq!(
            p(Elasticsearch, (7, 10, 2)),
            Paging::ElasticsearchPit { shard_doc: false }
        );
        assert_eq!(
            p(Elasticsearch, (7, 12, 0)),
            Paging::ElasticsearchPit { shard_doc: true }
        );
        assert_eq!(
            p(Elasticsearch, (8, 15, 1)),
            Paging::ElasticsearchPit { shard_doc: true }
        );
        assert_eq!(p(OpenSearch, (1, 3, 19)), Paging::SearchAfter);
        assert_eq!(p(OpenSearch, (2, 3, 0)), Paging::SearchAfter);
        assert_eq!(
            p(OpenSearch, (2, 4, 0)),
            Paging::OpenSearchPit { shard_doc: false }
        );
        assert_eq!(
            p(OpenSearch, (3, 2, 0)),
            Paging::OpenSearchPit { shard_doc: false }
        );
        assert_eq!(
            p(OpenSearch, (3, 3, 0)),
            Paging::OpenSearchPit { shard_doc: true }
        );
    }

    #[test]
    fn open_and_close_requests_per_product() {
        let es = Paging::ElasticsearchPit { shard_doc: true };
        let os = Paging::OpenSearchPit { shard_doc: false };
        let open = open_pit_request(es, "salt-*", "2m").unwrap();
        assert_eq!(
            (open.method, open.path.as_str()),
            (Method::Post, "/salt-*/_pit?keep_alive=2m")
        );
        let open = open_pit_request(os, "salt-*", "2m").unwrap();
        assert_eq!(
            open.path,
            "/salt-*/_search/point_in_time?keep_alive=2m&allow_partial_pit_creation=false"
        );
        assert!(open_pit_request(Paging::SearchAfter, "salt-*", "2m").is_none());
        assert_eq!(parse_open_pit(es, &json!({"id": "abc"})).unwrap(), "abc");
        assert_eq!(
            parse_open_pit(os, &json!({"pit_id": "o1", "_shards": {"total": 1, "successful": 1, "failed": 0}, "creation_time": 1})).unwrap(),
            "o1"
        );
        assert!(parse_open_pit(os, &json!({"id": "wrong field"})).is_err());
        let partial = json!({"pit_id": "o1", "_shards": {"total": 2, "successful": 1, "failed": 1,
            "failures": [{"reason": {"type": "node_not_connected_exception", "reason": "gone"}}]}});
        assert!(
            parse_open_pit(os, &partial).is_err(),
            "a PIT over some shards is a short file"
        );
        let close = close_pit_request(es, "abc").unwrap();
        assert_eq!(
            (close.method, close.path.as_str()),
            (Method::Delete, "/_pit")
        );
        assert_eq!(body(&close), json!({"id": "abc"}));
        let close = close_pit_request(os, "o1").unwrap();
        assert_eq!(close.path, "/_search/point_in_time");
        assert_eq!(body(&close), json!({"pit_id": ["o1"]}));
        assert_eq!(close.body.content_type(), Some("application/json"));
    }

    #[test]
    fn pit_errors_are_told_apart() {
        let status = |s: u16, kind: &str, reason: &str| EngineError::Status {
            url: "u".into(),
            status: s,
            kind: Some(kind.into()).filter(|k: &String| !k.is_empty()),
            reason: reason.into(),
        };
        // Elasticsearch 7.10 OSS reads `/<index>/_pit` as another route.
        assert!(pit_unavailable(&status(
            400,
            "invalid_index_name_exception",
            "must not contain '*'"
        )));
        assert!(pit_unavailable(&status(
            405,
            "",
            "Incorrect HTTP method for uri [/salt-*/_pit]"
        )));
        assert!(pit_unavailable(&status(404, "", "no handler found")));
        assert!(!pit_unavailable(&status(
            401,
            "security_exception",
            "missing authentication"
        )));
        assert!(!pit_unavailable(&status(
            429,
            "es_rejected_execution_exception",
            "busy"
        )));
        assert!(!pit_unavailable(&status(503, "", "unavailable")));
        assert!(!pit_unavailable(&EngineError::Unreachable {
            url: "u".into(),
            detail: "down".into()
        }));
        assert!(pit_expired(&status(
            404,
            "search_context_missing_exception",
            "No search context found for id [1]"
        )));
        assert!(!pit_expired(&status(
            404,
            "index_not_found_exception",
            "no such index"
        )));
    }

    #[test]
    fn without_a_pit_it_falls_back_to_search_after_with_a_unique_sort() {
        // Elasticsearch 7.10 OSS: the version says PIT, the answer says no.
        let mut plan = ExportPlan::new(spec(
            ExportKind::Returns,
            product(Product::Elasticsearch, (7, 10, 2)),
            2,
        ))
        .unwrap();
        let open = plan.next_request().unwrap();
        assert_eq!(open.path, "/salt-*/_pit?keep_alive=2m");
        let oss = EngineError::from_status(
            &open.path,
            400,
            r#"{"error":{"type":"invalid_index_name_exception","reason":"Invalid index name [salt-*], must not contain '*'"},"status":400}"#,
        );
        assert_eq!(plan.handle(Err(oss)).unwrap(), b"");
        assert_eq!(plan.state().paging, Paging::SearchAfter);
        assert!(plan.notes()[0].contains("no point in time"));

        let first = plan.next_request().unwrap();
        assert_eq!(
            first.path,
            "/salt-*/_search?ignore_unavailable=true&allow_no_indices=true"
        );
        let b = body(&first);
        assert_eq!(b["size"], 2);
        assert_eq!(b["track_total_hits"], true);
        assert!(b.get("pit").is_none() && b.get("search_after").is_none());
        assert_eq!(
            b["sort"],
            json!([{"@timestamp": {"order": "desc", "unmapped_type": "date"}},
                   {"jid.keyword": {"order": "desc", "unmapped_type": "keyword"}},
                   {"minion.keyword": {"order": "asc", "unmapped_type": "keyword"}},
                   {"_index": {"order": "asc", "unmapped_type": "keyword"}}])
        );
        assert!(b["query"].to_string().contains("salt-master-job-cache"));
        let mut file = plan
            .handle(ok(page(
                vec![hit("3", "a", 3000, None), hit("3", "b", 2000, None)],
                3,
                None,
            )))
            .unwrap();
        assert_eq!(plan.state().total, Some(3));
        assert_eq!(plan.state().rows_written, 2);
        let second = body(&plan.next_request().unwrap());
        assert_eq!(
            second["search_after"],
            json!([2000, "3", "b", "salt-state_apply-v1"])
        );
        assert_eq!(second["track_total_hits"], false, "the total is asked once");
        file.extend(
            plan.handle(ok(page(vec![hit("2", "a", 1000, None)], 3, None)))
                .unwrap(),
        );
        assert!(plan.is_done());
        assert!(plan.next_request().is_none());
        assert!(plan.close_request().is_none(), "no PIT to close");
        assert_eq!(plan.shortfall(), None);
        let back = read_csv(&file);
        assert_eq!(back.len(), 4, "header once and three rows");
        assert_eq!(back[0][0], "Time (UTC)");
        assert_eq!(
            back[1][..4],
            ["1970-01-01T00:00:03.000Z", "3", "a", "state.apply"]
        );
        assert_eq!(back[3][6..9], ["2", "1", "0"]);
    }

    #[test]
    fn elasticsearch_pages_through_a_pit_with_shard_doc_and_closes_it() {
        let mut plan = ExportPlan::new(spec(
            ExportKind::States,
            product(Product::Elasticsearch, (8, 15, 0)),
            1,
        ))
        .unwrap();
        plan.spec.columns =
            ColumnChoice::parse(ExportKind::States, "jid,minion,state_id,changed").columns;
        plan.encoder = CsvEncoder::new(plan.spec.columns.clone(), plan.spec.csv);
        assert_eq!(
            plan.next_request().unwrap().path,
            "/salt-*/_pit?keep_alive=2m"
        );
        plan.handle(ok(json!({"id": "pit-1"}))).unwrap();
        let req = plan.next_request().unwrap();
        assert_eq!(req.path, "/_search", "a PIT search names no index");
        let b = body(&req);
        assert_eq!(b["pit"], json!({"id": "pit-1", "keep_alive": "2m"}));
        assert_eq!(b["sort"][0]["_index"]["order"], "asc");
        assert_eq!(
            b["sort"][1],
            json!({"_shard_doc": "asc"}),
            "document order: no ranking per page"
        );
        assert_eq!(b["sort"].as_array().unwrap().len(), 4);
        assert!(b["query"]
            .to_string()
            .contains(r#""terms":{"fun.keyword":["state.apply""#));
        let bytes = plan
            .handle(ok(page(vec![hit("9", "m", 5, Some(77))], 1, Some("pit-2"))))
            .unwrap();
        assert_eq!(
            plan.state().pit_id.as_deref(),
            Some("pit-2"),
            "a renewed id is used"
        );
        assert_eq!(plan.state().rows_written, 2, "two states, one return");
        assert_eq!(plan.state().docs_read, 1);
        assert_eq!(read_csv(&bytes)[1], ["9", "m", "a", "no"]);
        let b = body(&plan.next_request().unwrap());
        assert_eq!(b["pit"]["id"], "pit-2");
        assert_eq!(
            b["search_after"],
            json!([5, "9", "m", "salt-state_apply-v1", 77])
        );
        plan.handle(ok(page(vec![], 1, Some("pit-2")))).unwrap();
        assert!(plan.is_done());
        let close = plan.close_request().unwrap();
        assert_eq!(
            (close.method, close.path.as_str()),
            (Method::Delete, "/_pit")
        );
        assert_eq!(body(&close), json!({"id": "pit-2"}));
    }

    #[test]
    fn the_next_page_is_requested_from_the_end_of_the_bytes_and_the_guess_is_checked() {
        let os = product(Product::OpenSearch, (3, 8, 0));
        let mut plan = ExportPlan::new(spec(ExportKind::Returns, os.clone(), 2)).unwrap();
        assert_eq!(
            plan.request_after(b"{}"),
            None,
            "no guess while opening the PIT"
        );
        plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
        let full = serde_json::to_vec(&page(
            vec![hit("2", "a", 20, Some(4)), hit("1", "b", 10, Some(7))],
            3,
            Some("p1"),
        ))
        .unwrap();
        let early = plan
            .request_after(&full)
            .expect("a full page's next request");
        plan.handle(Ok(full)).unwrap();
        assert_eq!(plan.next_request(), Some(early), "the guess held");
        assert_eq!(
            body(&plan.next_request().unwrap())["search_after"],
            json!([10, "1", "b", "salt-state_apply-v1", 7])
        );
        // A renewed PIT id makes the guess wrong: the plan's request wins.
        let renewed = serde_json::to_vec(&page(
            vec![hit("0", "c", 5, Some(1)), hit("0", "d", 5, Some(2))],
            3,
            Some("p2"),
        ))
        .unwrap();
        let early = plan.request_after(&renewed).unwrap();
        plan.handle(Ok(renewed)).unwrap();
        assert_ne!(plan.next_request(), Some(early));
        // The last page: a guess, but no next request to match it.
        let last =
            serde_json::to_vec(&page(vec![hit("0", "e", 1, Some(3))], 3, Some("p2"))).unwrap();
        assert!(plan.request_after(&last).is_some());
        plan.handle(Ok(last)).unwrap();
        assert!(plan.is_done() && plan.next_request().is_none());

        // States with the user column: the guess outlives the publish lookup.
        let mut plan = ExportPlan::new(spec(ExportKind::States, os, 1)).unwrap();
        plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
        let full =
            serde_json::to_vec(&page(vec![hit("2", "a", 20, Some(4))], 3, Some("p1"))).unwrap();
        let early = plan.request_after(&full).unwrap();
        plan.handle(Ok(full)).unwrap();
        assert!(
            plan.request_after(b"{\"sort\":[1]}").is_none(),
            "no guess for a lookup"
        );
        assert_ne!(
            plan.next_request().as_ref(),
            Some(&early),
            "the publish lookup first"
        );
        plan.handle(ok(
            json!({"responses": [{"hits": {"hits": []}}, {"hits": {"hits": []}}]}),
        ))
        .unwrap();
        assert_eq!(plan.next_request(), Some(early));
    }

    #[test]
    fn returns_rows_from_tallied_states_equal_the_models() {
        let product = product(Product::OpenSearch, (3, 8, 0));
        let mut hits: Vec<Value> = (0..6)
            .map(|i| hit(&i.to_string(), "m", i, Some(i)))
            .collect();
        hits[1]["_source"]["data"] = json!("plain text");
        hits[2]["_source"]["data"]["x_|-y_|-z_|-w"] =
            json!({"result": false, "changes": {"_orig_key": 1}});
        hits[3]["_source"]["counts"] = json!({"succeeded": 5, "failed": 1});
        hits[4]["_source"].as_object_mut().unwrap().remove("data");
        hits[5]["_source"]["data"] = json!({"return": ["Rendering SLS 'x' failed"]});
        let answer = page(hits, 6, Some("p"));
        let rows = |with_output: bool| {
            let mut plan =
                ExportPlan::new(spec(ExportKind::Returns, product.clone(), 100)).unwrap();
            let mut columns = ExportKind::Returns.columns().to_vec();
            if !with_output {
                columns.retain(|c| c.id != id::OUTPUT);
            }
            plan.spec.columns = columns;
            plan.encoder = CsvEncoder::new(plan.spec.columns.clone(), plan.spec.csv);
            plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
            read_csv(&plan.handle(ok(answer.clone())).unwrap())
        };
        let (tallied, whole) = (rows(false), rows(true));
        assert_eq!(tallied.len(), 7);
        let output = whole[0].iter().position(|h| h == "Output").unwrap();
        for (t, w) in tallied.iter().zip(&whole) {
            let mut w = w.clone();
            w.remove(output);
            assert_eq!(t, &w);
        }
        let failed = tallied[0]
            .iter()
            .position(|h| h == "States failed")
            .unwrap();
        assert_eq!(tallied[3][failed], "1", "{:?}", tallied[3]);
    }

    #[test]
    fn opensearch_uses_its_own_pit_api() {
        let mut plan = ExportPlan::new(spec(
            ExportKind::Returns,
            product(Product::OpenSearch, (2, 19, 0)),
            10,
        ))
        .unwrap();
        assert!(plan
            .next_request()
            .unwrap()
            .path
            .starts_with("/salt-*/_search/point_in_time?"));
        plan.handle(ok(
            json!({"pit_id": "os-1", "_shards": {"total": 1, "successful": 1, "failed": 0}}),
        ))
        .unwrap();
        let b = body(&plan.next_request().unwrap());
        assert_eq!(b["pit"]["id"], "os-1");
        assert_eq!(
            b["sort"].as_array().unwrap().len(),
            4,
            "no _shard_doc before 3.3"
        );
        plan.handle(ok(page(vec![hit("1", "m", 1, None)], 1, None)))
            .unwrap();
        assert!(plan.is_done());
        assert_eq!(
            body(&plan.close_request().unwrap()),
            json!({"pit_id": ["os-1"]})
        );
    }

    #[test]
    fn a_failure_keeps_the_state_and_the_export_resumes_from_a_plain_value() {
        let s = spec(
            ExportKind::Returns,
            product(Product::Elasticsearch, (7, 11, 0)),
            1,
        );
        let mut plan = ExportPlan::new(s.clone()).unwrap();
        plan.handle(ok(json!({"id": "p"}))).unwrap();
        let mut file = plan
            .handle(ok(page(vec![hit("2", "m", 20, Some(1))], 2, None)))
            .unwrap();
        let before = plan.state().clone();
        let failed_shards = json!({"_shards": {"total": 2, "successful": 1, "failed": 1,
            "failures": [{"reason": {"type": "node_disconnected_exception", "reason": "gone"}}]}, "hits": {"hits": []}});
        assert!(
            plan.handle(ok(failed_shards)).is_err(),
            "a partial page is an error"
        );
        assert!(plan
            .handle(Err(EngineError::Unreachable {
                url: "u".into(),
                detail: "offline".into()
            }))
            .is_err());
        assert_eq!(plan.state(), &before, "nothing moved");
        assert_eq!(plan.state().rows_written, 1);

        // The state is plain data: it can be kept as JSON and resumed.
        let kept = serde_json::to_string(plan.state()).unwrap();
        let state: ResumeState = serde_json::from_str(&kept).unwrap();
        let mut resumed = ExportPlan::resume(plan.spec().clone(), state).unwrap();
        let b = body(&resumed.next_request().unwrap());
        assert_eq!(
            b["search_after"],
            json!([20, "2", "m", "salt-state_apply-v1", 1])
        );
        assert_eq!(b["pit"]["id"], "p", "the PIT is reused while it lives");
        // It expired meanwhile: a new PIT, the same place.
        let gone = EngineError::from_status(
            "/_search",
            404,
            r#"{"error":{"type":"search_context_missing_exception","reason":"No search context found for id [91]"},"status":404}"#,
        );
        assert_eq!(resumed.handle(Err(gone)).unwrap(), b"");
        assert!(resumed
            .next_request()
            .unwrap()
            .path
            .ends_with("_pit?keep_alive=2m"));
        resumed.handle(ok(json!({"id": "q"}))).unwrap();
        let b = body(&resumed.next_request().unwrap());
        assert_eq!(b["pit"]["id"], "q");
        assert_eq!(
            b["search_after"],
            json!([20, "2", "m", "salt-state_apply-v1", 1])
        );
        file.extend(
            resumed
                .handle(ok(page(vec![hit("1", "m", 10, Some(2))], 2, None)))
                .unwrap(),
        );
        let back = read_csv(&file);
        assert_eq!(back.len(), 3, "the header is not written again: {back:?}");
        assert_eq!(resumed.state().rows_written, 2);
        assert_eq!(resumed.state().docs_read, 1 + 1);
        // The relative range was fixed when the export began.
        assert!(
            matches!(resumed.spec().filter.time(), TimeRange::Absolute { to_ms, .. } if *to_ms == NOW)
        );
    }

    #[test]
    fn an_expired_pit_under_document_order_is_an_error_that_says_to_start_again() {
        let mut plan = ExportPlan::new(spec(
            ExportKind::Returns,
            product(Product::OpenSearch, (3, 8, 0)),
            1,
        ))
        .unwrap();
        plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
        let gone = EngineError::from_status(
            "/_search",
            404,
            r#"{"error":{"type":"search_context_missing_exception","reason":"No search context found for id [91]"},"status":404}"#,
        );
        let e = plan.handle(Err(gone)).unwrap_err();
        assert!(e.to_string().contains("start it again"), "{e}");
        assert_eq!(body(&plan.next_request().unwrap())["pit"]["id"], "p");
    }

    #[test]
    fn a_short_read_is_reported() {
        let mut plan = ExportPlan::new(spec(
            ExportKind::Returns,
            product(Product::Elasticsearch, (7, 9, 0)),
            5,
        ))
        .unwrap();
        plan.handle(ok(page(vec![hit("1", "m", 1, None)], 3, None)))
            .unwrap();
        assert!(plan.is_done());
        assert_eq!(plan.shortfall(), Some(2));
    }

    #[test]
    fn the_states_user_comes_from_the_publish_data_of_the_pages_jobs() {
        let mut plan = ExportPlan::new(spec(
            ExportKind::States,
            product(Product::Elasticsearch, (7, 9, 0)),
            5,
        ))
        .unwrap();
        plan.handle(ok(page(
            vec![
                hit("7", "a", 2, None),
                hit("7", "b", 1, None),
                hit("6", "a", 0, None),
            ],
            3,
            None,
        )))
        .unwrap();
        let lookup = plan.next_request().unwrap();
        assert_eq!(lookup.path, "/_msearch");
        assert_eq!(lookup.body.content_type(), Some("application/x-ndjson"));
        let text = lookup.body.text();
        assert!(
            text.contains(r#"["salt/job/7/new","salt/job/6/new"]"#),
            "{text}"
        );
        assert_eq!(
            plan.state().rows_written,
            0,
            "nothing written before the users are known"
        );
        let answer = json!({"responses": [
            {"hits": {"hits": [{"_source": {"tag": "salt/job/7/new", "data": {"user": "sudo_alice", "fun": "state.apply"}}}]}},
            {"error": {"type": "index_not_found_exception", "reason": "no such index"}, "status": 404}
        ]});
        let rows = read_csv(&plan.handle(ok(answer)).unwrap());
        assert_eq!(rows.len(), 1 + 6);
        assert_eq!(rows[1][4], "sudo_alice");
        assert_eq!(rows[5][4], "", "no publish data for job 6");
        assert!(plan
            .notes()
            .iter()
            .any(|n| n.contains("job cache unavailable")));
        assert!(plan.is_done());
    }

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
    fn the_audit_trail_pages_with_the_audit_views_cursor() {
        let mut plan = ExportPlan::new(spec(
            ExportKind::Audit,
            product(Product::Elasticsearch, (8, 15, 0)),
            5,
        ))
        .unwrap();
        assert_eq!(plan.page_size(), crate::query::audit::AUDIT_PAGE_SIZE);
        let req = plan.next_request().unwrap();
        assert_eq!(req.path, "/_msearch");
        assert!(req.body.text().contains("salt-master-event-cache*"));
        let hits: Vec<Value> = (0..crate::query::audit::AUDIT_PAGE_SIZE)
            .map(|i| json!({"_source": {"tag": format!("salt/job/{i}/new"), "data": {"fun": "cmd.run", "arg": ["=cmd|' /C calc'!A0"], "tgt": "*", "user": "root", "_stamp": "2026-11-30T10:00:00Z"}},
                            "sort": [1000 - i as i64, format!("salt/job/{i}/new")]}))
            .collect();
        let answer = json!({"responses": [{"hits": {"total": {"value": 101}, "hits": hits}}, {"hits": {"hits": []}}]});
        let rows = read_csv(&plan.handle(ok(answer)).unwrap());
        assert_eq!(rows.len(), 101);
        assert_eq!(
            rows[1][5], "'=cmd|' /C calc'!A0",
            "formula protection is on by default"
        );
        assert_eq!(rows[1][9], "command on every minion");
        assert!(matches!(&plan.state().after, After::Audit(c) if c.starts_with("e:901:")));
        assert!(plan
            .next_request()
            .unwrap()
            .body
            .text()
            .contains(r#""search_after":[901,"salt/job/99/new"]"#));
        let last = json!({"responses": [{"hits": {"total": {"value": 101}, "hits": [
            {"_source": {"tag": "salt/run/5/new", "data": {"fun": "runner.jobs.list_jobs", "user": "root"}}, "sort": [1, "salt/run/5/new"]}]}},
            {"hits": {"hits": []}}]});
        plan.handle(ok(last)).unwrap();
        assert!(plan.is_done());
        assert_eq!(plan.state().rows_written, 101);
        assert_eq!(plan.shortfall(), None);
    }

    #[test]
    fn state_functions_are_the_models_and_filters_must_match_their_kind() {
        assert!(STATE_FUNCTIONS
            .iter()
            .all(|f| crate::model::is_state_function(f)));
        let mut s = spec(
            ExportKind::Audit,
            product(Product::OpenSearch, (2, 19, 0)),
            5,
        );
        s.filter = ViewFilter::Jobs(JobFilter::default());
        assert!(ExportPlan::new(s).is_err());
        let mut s = spec(
            ExportKind::Returns,
            product(Product::OpenSearch, (2, 19, 0)),
            50_000,
        );
        s.columns.clear();
        let plan = ExportPlan::new(s).unwrap();
        assert_eq!(plan.page_size(), MAX_PAGE);
        assert_eq!(plan.spec().columns, ExportKind::Returns.default_columns());
    }
}
