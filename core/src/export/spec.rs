//! What an export is asked to do ([`ExportSpec`]) and where it stands
//! ([`ResumeState`], a plain value: a failed export resumes from it).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::columns::Column;
use super::encode::CsvOptions;
use super::ExportKind;
use crate::engine::{PitApi, ProductInfo};
use crate::query::audit::AuditFilter;
use crate::query::events::EventFilter;
use crate::query::filter::{JobFilter, TimeRange};
use crate::query::QueryContext;

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
/// A job-return event carries the whole return (a highstate's states).
pub const DEFAULT_EVENTS_PAGE: usize = 1000;
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

/// How the pages are fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Paging {
    /// Hits under a point in time.
    Pit(PitApi),
    /// `search_after` over the index pattern, no point in time.
    SearchAfter,
    /// Composite aggregation on jid, by its after key (jobs).
    Composite,
    /// The audit view's cursor.
    AuditCursor,
    /// The events view's cursor.
    EventCursor,
}

impl Paging {
    /// The paging of returns and states on this engine, before asking it.
    pub fn for_hits(product: &ProductInfo) -> Paging {
        PitApi::of(product).map_or(Paging::SearchAfter, Paging::Pit)
    }

    pub fn pit(self) -> Option<PitApi> {
        match self {
            Paging::Pit(api) => Some(api),
            _ => None,
        }
    }

    pub fn is_pit(self) -> bool {
        self.pit().is_some()
    }

    pub fn shard_doc(self) -> bool {
        self.pit().is_some_and(PitApi::shard_doc)
    }
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
    /// The audit cursor, as `AuditCursor::to_param` spells it.
    Audit(String),
    /// The events cursor, as `EventCursor::to_param` spells it.
    Events(String),
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
    /// The returns export reads the summary pipeline's fields as doc values
    /// instead of each return's `_source` (see `summary::probe_request`):
    /// `None` until the engine has been asked whether every return in scope
    /// has them.
    #[serde(default)]
    pub reads_summary: Option<bool>,
}

/// The view's filter the export starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewFilter {
    Jobs(JobFilter),
    Audit(AuditFilter),
    Events(EventFilter),
}

impl ViewFilter {
    pub fn time(&self) -> &TimeRange {
        match self {
            ViewFilter::Jobs(f) => &f.time,
            ViewFilter::Audit(f) => &f.time,
            ViewFilter::Events(f) => &f.time,
        }
    }

    pub(crate) fn time_mut(&mut self) -> &mut TimeRange {
        match self {
            ViewFilter::Jobs(f) => &mut f.time,
            ViewFilter::Audit(f) => &mut f.time,
            ViewFilter::Events(f) => &mut f.time,
        }
    }
}

/// What to export, from where, how.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportSpec {
    pub kind: ExportKind,
    pub columns: Vec<Column>,
    pub product: ProductInfo,
    /// Config, field map, noise list, and "now" — fixed once, so pages and
    /// retries cover the same range.
    pub context: QueryContext,
    /// Jobs, returns and states take the job filter; audit the audit filter.
    pub filter: ViewFilter,
    pub csv: CsvOptions,
    /// Documents (hits or jids) per page; `None`: the kind's default.
    pub page_size: Option<usize>,
    pub keep_alive: String,
}

impl ExportSpec {
    /// The job filter (jobs, returns, states), or the default one.
    pub fn job_filter(&self) -> JobFilter {
        match &self.filter {
            ViewFilter::Jobs(f) => f.clone(),
            _ => JobFilter::default(),
        }
    }

    pub fn audit_filter(&self) -> AuditFilter {
        match &self.filter {
            ViewFilter::Audit(f) => f.clone(),
            _ => AuditFilter::default(),
        }
    }

    pub fn event_filter(&self) -> EventFilter {
        match &self.filter {
            ViewFilter::Events(f) => f.clone(),
            _ => EventFilter::default(),
        }
    }

    pub fn wants(&self, column: &str) -> bool {
        self.columns.iter().any(|c| c.id == column)
    }

    /// Documents per page: the kind's default, at most [`MAX_PAGE`] (the
    /// audit trail pages as its view does).
    pub fn page_size(&self) -> usize {
        let default = match self.kind {
            ExportKind::Jobs => DEFAULT_JOBS_PAGE,
            ExportKind::Audit => return crate::query::audit::AUDIT_PAGE_SIZE,
            ExportKind::States => DEFAULT_STATES_PAGE,
            ExportKind::Returns => DEFAULT_HITS_PAGE,
            ExportKind::Events => DEFAULT_EVENTS_PAGE,
        };
        self.page_size.unwrap_or(default).clamp(1, MAX_PAGE)
    }
}

/// Why an export cannot start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("the {kind} export takes the {wanted} filter")]
    WrongFilter {
        kind: &'static str,
        wanted: &'static str,
    },
}
