//! The CSV export (issue 5), DOM-free: what can be exported and its columns
//! ([`columns`]), rows from the model types ([`rows`]), CSV bytes page by
//! page ([`encode`]), and the export as HTTP requests with point-in-time
//! and `search_after` paging, resumable from a plain value ([`plan`]).
//!
//! The browser's part is a thin loop:
//!
//! ```text
//! let mut plan = ExportPlan::new(spec)?;            // or ExportPlan::resume(spec, state)
//! while let Some(req) = plan.next_request() {       // cancel: break, then close
//!     let answer = send(req).await;                  // Err(EngineError::from_status(..)) on 4xx/5xx
//!     match plan.handle(answer) {
//!         Ok(bytes) => blob_parts.push(bytes),       // may be empty
//!         Err(e) => { show(e, plan.state()); break } // retry: same plan, or resume(spec, state)
//!     }
//!     progress(plan.state());                        // rows_written, docs_read, total
//! }
//! if let Some(close) = plan.close_request() { send(close).await; }
//! offer(blob_parts, file_name(kind, plan.spec().filter.time(), now_ms));
//! ```

pub mod columns;
pub mod encode;
pub mod page;
pub mod plan;
pub mod rows;

pub use columns::{Column, ColumnChoice};
pub use encode::{unprotect, CsvEncoder, CsvOptions};
pub use plan::{
    After, Body, ExportPlan, ExportSpec, HttpRequest, Method, Paging, ResumeState, ViewFilter,
};

use crate::query::filter::TimeRange;
use crate::text::iso_millis;

/// What can be exported, each from the view it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExportKind {
    /// One row per job (jid), as the job list shows them.
    Jobs,
    /// One row per jid × minion.
    Returns,
    /// One row per state per minion per job.
    States,
    /// One row per published job or runner: the audit trail.
    Audit,
}

impl ExportKind {
    pub const ALL: [ExportKind; 4] = [
        ExportKind::Jobs,
        ExportKind::Returns,
        ExportKind::States,
        ExportKind::Audit,
    ];

    pub fn id(self) -> &'static str {
        match self {
            ExportKind::Jobs => "jobs",
            ExportKind::Returns => "returns",
            ExportKind::States => "states",
            ExportKind::Audit => "audit",
        }
    }

    pub fn parse(text: &str) -> Option<ExportKind> {
        ExportKind::ALL.into_iter().find(|k| k.id() == text.trim())
    }

    pub fn label(self) -> &'static str {
        match self {
            ExportKind::Jobs => "Jobs",
            ExportKind::Returns => "Returns (one row per minion per job)",
            ExportKind::States => "States (one row per state per minion per job)",
            ExportKind::Audit => "Audit trail",
        }
    }
}

/// `saltscope-<kind>-<from>_<to>.csv`, the dates (UTC) of the time range
/// resolved against `now_ms`; `saltscope-<kind>-all.csv` for all time. A
/// range that ends at midnight names the day before as its last (a range
/// `2026-11-01..2026-12-01` is November).
pub fn file_name(kind: ExportKind, time: &TimeRange, now_ms: i64) -> String {
    let day = |ms: i64| iso_millis(ms)[..10].to_string();
    match time.bounds(now_ms) {
        None => format!("saltscope-{}-all.csv", kind.id()),
        Some((from, to)) => {
            let last = if to > from && to.rem_euclid(86_400_000) == 0 {
                to - 1
            } else {
                to
            };
            format!("saltscope-{}-{}_{}.csv", kind.id(), day(from), day(last))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parse_utc;

    #[test]
    fn file_names_say_what_and_which_days() {
        let range = |a: &str, b: &str| TimeRange::Absolute {
            from_ms: parse_utc(a).unwrap(),
            to_ms: parse_utc(b).unwrap(),
        };
        assert_eq!(
            file_name(
                ExportKind::States,
                &range("2026-11-01T00:00:00Z", "2026-11-30T23:59:59.999Z"),
                0
            ),
            "saltscope-states-2026-11-01_2026-11-30.csv"
        );
        assert_eq!(
            file_name(ExportKind::Jobs, &range("2026-11-01", "2026-12-01"), 0),
            "saltscope-jobs-2026-11-01_2026-11-30.csv"
        );
        assert_eq!(
            file_name(
                ExportKind::Audit,
                &range("2026-11-29T10:00:00Z", "2026-11-29T11:00:00Z"),
                0
            ),
            "saltscope-audit-2026-11-29_2026-11-29.csv"
        );
        let now = parse_utc("2026-12-02T12:00:00Z").unwrap();
        assert_eq!(
            file_name(ExportKind::Returns, &TimeRange::default(), now),
            "saltscope-returns-2026-11-25_2026-12-02.csv"
        );
        assert_eq!(
            file_name(ExportKind::Returns, &TimeRange::All, now),
            "saltscope-returns-all.csv"
        );
    }

    #[test]
    fn kinds_read_back_from_their_ids() {
        for k in ExportKind::ALL {
            assert_eq!(ExportKind::parse(k.id()), Some(k));
        }
        assert_eq!(ExportKind::parse("minions"), None);
    }
}
