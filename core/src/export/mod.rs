//! The CSV export, DOM-free: what can be exported and its columns
//! ([`columns`]), rows from the model types ([`rows`]), CSV bytes page by
//! page ([`encode`]), pages read from the answer's bytes ([`page`]), the
//! export as HTTP requests with point-in-time and `search_after` paging,
//! resumable from a plain value ([`plan`], with one source per kind:
//! [`hits`], [`jobs`], [`audit`], [`events`]; the returns read as doc values
//! where the summary pipeline allows, `summary`), and the loop that runs it
//! over a transport ([`driver`]):
//!
//! ```text
//! let mut plan = ExportPlan::new(spec)?;       // or ExportPlan::resume(spec, state)
//! match driver::run(&transport, &mut plan, &mut sink, &cancel, &now, &mut progress).await {
//!     Outcome::Done { .. } => { driver::close(&transport, &plan).await; offer(sink) }
//!     Outcome::Failed { .. } => { /* run again: it continues where it stopped */ }
//!     Outcome::Cancelled { .. } => {}
//! }
//! ```

pub mod audit;
pub mod columns;
pub mod driver;
pub mod encode;
pub mod events;
pub mod hits;
pub mod jobs;
pub mod page;
pub mod plan;
#[cfg(test)]
mod plan_recovery_tests;
#[cfg(test)]
mod plan_tests;
pub mod rows;
mod seen;
pub mod spec;
mod summary;
#[cfg(test)]
mod testing;

pub use columns::{Column, ColumnChoice};
pub use driver::{Cancel, ExportSink, Outcome, Progress, Timing};
pub use encode::{unprotect, CsvEncoder, CsvOptions};
pub use plan::ExportPlan;
pub use spec::{After, ExportSpec, Paging, PlanError, ResumeState, ViewFilter};

use crate::query::filter::TimeRange;
use crate::time::iso_millis;

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
    /// One row per event of the master's bus.
    Events,
}

impl ExportKind {
    pub const ALL: [ExportKind; 5] = [
        ExportKind::Jobs,
        ExportKind::Returns,
        ExportKind::States,
        ExportKind::Audit,
        ExportKind::Events,
    ];

    pub fn id(self) -> &'static str {
        match self {
            ExportKind::Jobs => "jobs",
            ExportKind::Returns => "returns",
            ExportKind::States => "states",
            ExportKind::Audit => "audit",
            ExportKind::Events => "events",
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
            ExportKind::Events => "Events (one row per event)",
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
    use crate::time::parse_utc;

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
