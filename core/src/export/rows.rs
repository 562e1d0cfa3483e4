//! Rows from the model types. Every builder maps each chosen column to one
//! cell, so whatever a document lacks or holds oddly shaped, a row has as
//! many cells as there are columns: an empty cell, never a shifted column.

use serde_json::Value;

use super::columns::{id, Column};
use super::page::Hit;
use crate::model::EventDoc;
use crate::model::{
    HighstateSummary, ReturnData, ReturnDoc, ReturnFields, StateResult, StateRun, StateTally,
};
use crate::query::audit::{AuditEntry, AuditKind};
use crate::query::jobs::JobSummary;
use crate::text::{json_text, scalar_text};
use crate::time::{iso_millis, parse_utc};

pub type Row = Vec<String>;

/// A time as ISO 8601 UTC with milliseconds (`2026-11-29T17:05:07.171Z`).
/// A value that does not read as a time is kept as it is, never dropped.
pub fn time_cell(raw: Option<&str>) -> String {
    match raw {
        None => String::new(),
        Some(raw) => parse_utc(raw)
            .map(iso_millis)
            .unwrap_or_else(|_| raw.to_string()),
    }
}

fn ms_cell(ms: Option<i64>) -> String {
    ms.map(iso_millis).unwrap_or_default()
}

fn num<T: ToString>(n: Option<T>) -> String {
    n.map(|n| n.to_string()).unwrap_or_default()
}

fn opt(s: Option<&str>) -> String {
    s.unwrap_or_default().to_string()
}

/// A duration in ms as Salt gives it (`12.345`), without float noise.
fn ms_number(ms: f64) -> String {
    let text = crate::text::fixed(ms, 3);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The state totals of a return: the returner's `counts` (with
/// `states_count`) where present, else counted from `data` as Salt's
/// outputter counts them. Changed is known from `data` only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StateTotals {
    pub succeeded: Option<u64>,
    pub changed: Option<u64>,
    pub failed: Option<u64>,
    pub total: Option<u64>,
}

impl StateTotals {
    pub fn of(doc: &ReturnDoc) -> StateTotals {
        let summary = match &doc.data {
            ReturnData::States(states) => Some(HighstateSummary::of(&states.runs)),
            _ => None,
        };
        StateTotals::from_parts(doc.counts, summary)
    }

    /// From the returner's `counts` (succeeded, failed) and the totals of
    /// `data`'s states, either of which may be missing.
    pub fn from_parts(
        counts: Option<(u64, u64)>,
        summary: Option<HighstateSummary>,
    ) -> StateTotals {
        let (succeeded, failed) = match (counts, summary) {
            (Some((s, f)), _) => (Some(s), Some(f)),
            (None, Some(s)) => (Some(s.succeeded), Some(s.failed)),
            (None, None) => (None, None),
        };
        StateTotals {
            succeeded,
            failed,
            changed: summary.map(|s| s.changed),
            // Counts past u64 when added (a document's, not Salt's) leave
            // the total unknown rather than overflow.
            total: summary
                .map(|s| s.total)
                .or_else(|| succeeded?.checked_add(failed?)),
        }
    }
}

/// One job of the jobs export: the job list's summary, with the state
/// totals counted from the job's returns where they were read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobRow {
    pub job: JobSummary,
    /// Summed over the job's returns' `data` (`None`: not read).
    pub states: Option<HighstateSummary>,
}

pub fn job_row(row: &JobRow, columns: &[Column]) -> Row {
    let job = &row.job;
    let publish = job.publish.as_ref();
    let (counted_ok, counted_failed) = match (job.state_counts, row.states) {
        (Some((s, f)), _) => (Some(s), Some(f)),
        (None, Some(s)) if s.total > 0 => (Some(s.succeeded), Some(s.failed)),
        _ => (None, None),
    };
    columns
        .iter()
        .map(|c| match c.id {
            // The publish event's time; without one the jid (the master's
            // clock at publish, which the job list's "Started" shows), else
            // the first return.
            id::START_TIME => match publish.and_then(|p| p.stamp.as_deref()) {
                Some(s) => time_cell(Some(s)),
                None => ms_cell(crate::time::jid_start_ms(&job.jid).or(job.first_return_ms)),
            },
            id::JID => job.jid.clone(),
            id::FUNCTION => match publish.and_then(|p| p.fun.clone()) {
                Some(f) => f,
                None => job.functions.join(","),
            },
            id::ARGUMENTS => publish.map(|p| p.args.join(" ")).unwrap_or_default(),
            id::TARGET => opt(publish.and_then(|p| p.target.as_deref())),
            id::TARGET_TYPE => opt(publish.and_then(|p| p.target_type.as_deref())),
            id::USER => opt(publish.and_then(|p| p.user.as_deref())),
            id::RETURNED => job.returned.to_string(),
            id::FAILED => job.failed.to_string(),
            id::MISSING => num(job.missing()),
            id::TARGETED => num(publish.and_then(|p| p.minions.as_ref()).map(Vec::len)),
            id::FIRST_RETURN => ms_cell(job.first_return_ms),
            id::LAST_RETURN => ms_cell(job.last_return_ms),
            id::STATES_SUCCEEDED => num(counted_ok),
            id::STATES_FAILED => num(counted_failed),
            id::STATES_CHANGED => num(row.states.filter(|s| s.total > 0).map(|s| s.changed)),
            _ => String::new(),
        })
        .collect()
}

/// What a return gave back, as one cell.
fn output_cell(data: &ReturnData) -> String {
    match data {
        ReturnData::Text(s) => s.clone(),
        ReturnData::Structured(v) => json_text(v),
        ReturnData::StateError(lines) => lines.join("\n"),
        ReturnData::States(states) => HighstateSummary::of(&states.runs).lines().join("\n"),
        ReturnData::Missing | ReturnData::Unread => String::new(),
    }
}

fn success_cell(doc: &ReturnDoc) -> String {
    match doc.success {
        Some(b) => if b { "true" } else { "false" }.to_string(),
        None => String::new(),
    }
}

pub fn return_row(doc: &ReturnDoc, columns: &[Column]) -> Row {
    return_row_with(doc, StateTotals::of(doc), columns)
}

/// A return's row read with its states only tallied (the returns export
/// without the output column, see `page` and `StateTally`).
pub fn tallied_return_row(hit: Hit<ReturnFields<StateTally>>, columns: &[Column]) -> Row {
    let fields = hit.source.unwrap_or_default();
    let (doc, tally) = ReturnDoc::from_fields(hit.index, hit.id, fields);
    let totals = StateTotals::from_parts(doc.counts, tally.and_then(|t| t.0));
    return_row_with(&doc, totals, columns)
}

/// A return's row with its state totals already known (tallied from the
/// bytes, see `StateTally`): `doc.data` is then only read for the output.
pub fn return_row_with(doc: &ReturnDoc, totals: StateTotals, columns: &[Column]) -> Row {
    columns
        .iter()
        .map(|c| match c.id {
            id::TIME => time_cell(doc.timestamp.as_deref()),
            id::JID => doc.jid.clone(),
            id::MINION => doc.minion.clone(),
            id::FUNCTION => doc.fun.clone(),
            id::SUCCESS => success_cell(doc),
            id::RETCODE => num(doc.retcode),
            id::STATES_SUCCEEDED => num(totals.succeeded),
            id::STATES_CHANGED => num(totals.changed),
            id::STATES_FAILED => num(totals.failed),
            id::STATES_TOTAL => num(totals.total),
            id::INDEX => doc.index.clone(),
            id::OUTPUT => output_cell(&doc.data),
            _ => String::new(),
        })
        .collect()
}

/// The diff of a file state (`changes.diff` when it is text), else empty.
fn diff_cell(changes: &Value) -> String {
    match changes.get("diff") {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

fn state_cell(doc: &ReturnDoc, user: Option<&str>, run: Option<&StateRun>, column: &str) -> String {
    match column {
        id::TIME => time_cell(doc.timestamp.as_deref()),
        id::JID => doc.jid.clone(),
        id::MINION => doc.minion.clone(),
        id::FUNCTION => doc.fun.clone(),
        id::USER => opt(user),
        _ => {
            let Some(run) = run else {
                return String::new();
            };
            match column {
                id::RUN_ORDER => num(run.run_num),
                id::STATE_ID => run.id.clone(),
                id::STATE_FUNCTION => run.function.clone(),
                id::NAME => run.name.clone(),
                id::SLS => opt(run.sls.as_deref()),
                id::RESULT => run.result.label().to_string(),
                id::CHANGED => if run.changed() { "yes" } else { "no" }.to_string(),
                id::COMMENT => run.comment.clone(),
                id::DURATION_MS => run.duration_ms.map(ms_number).unwrap_or_default(),
                id::STATE_START => opt(run.start_time.as_deref()),
                id::STATE_RAN => num(run.state_ran),
                id::DIFF => diff_cell(&run.changes),
                id::CHANGES => scalar_text(&run.changes),
                _ => String::new(),
            }
        }
    }
}

/// One row per state of one return, in run order. A state function that
/// failed to render (`{"return": [...]}`) gives one row with result False
/// and the error as the comment, so the failure is in the file; a return
/// that holds no states gives none.
pub fn state_rows(doc: &ReturnDoc, user: Option<&str>, columns: &[Column]) -> Vec<Row> {
    match &doc.data {
        ReturnData::States(states) => states
            .runs
            .iter()
            .map(|run| {
                columns
                    .iter()
                    .map(|c| state_cell(doc, user, Some(run), c.id))
                    .collect()
            })
            .collect(),
        ReturnData::StateError(lines) => vec![columns
            .iter()
            .map(|c| match c.id {
                id::RESULT => StateResult::False.label().to_string(),
                id::COMMENT => lines.join("\n"),
                other => state_cell(doc, user, None, other),
            })
            .collect()],
        _ => Vec::new(),
    }
}

pub fn audit_row(entry: &AuditEntry, columns: &[Column]) -> Row {
    columns
        .iter()
        .map(|c| match c.id {
            id::TIME => time_cell(entry.stamp.as_deref()),
            id::JID => entry.jid.clone(),
            id::KIND => match entry.kind {
                AuditKind::Job => "job",
                AuditKind::Runner => "runner",
            }
            .to_string(),
            id::USER => opt(entry.user.as_deref()),
            id::FUNCTION => opt(entry.fun.as_deref()),
            id::ARGUMENTS => entry.args.join(" "),
            id::TARGET => opt(entry.target.as_deref()),
            id::TARGET_TYPE => opt(entry.target_type.as_deref()),
            id::TARGETED => num(entry.targeted),
            id::RISKS => entry.risks.join("; "),
            id::SOURCE => match entry.source {
                crate::model::PublishSource::Event => "publish event",
                crate::model::PublishSource::JobCache => "job cache",
            }
            .to_string(),
            _ => String::new(),
        })
        .collect()
}

pub fn event_row(event: &EventDoc, columns: &[Column]) -> Row {
    columns
        .iter()
        .map(|c| match c.id {
            id::TIME => time_cell(event.stamp.as_deref()),
            id::TAG => event.tag.clone(),
            id::MINION => opt(event.minion.as_deref()),
            id::JID => opt(event.jid.as_deref()),
            id::FAILED => if event.failed { "yes" } else { "" }.to_string(),
            id::DATA => json_text(&event.data),
            id::FAMILY => event.family.to_string(),
            id::INDEX => event.index.clone(),
            _ => String::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::ExportKind;
    use crate::model::PublishInfo;
    use serde_json::json;

    fn doc(source: Value) -> ReturnDoc {
        ReturnDoc::from_hit(
            &json!({"_index": "salt-state_apply-v1", "_id": "x", "_source": source}),
        )
    }

    fn states_doc() -> ReturnDoc {
        doc(json!({
            "@timestamp": "2026-11-29T17:05:07.171524+00:00", "success": false, "retcode": 2,
            "minion": "web01.prod", "fun": "state.apply", "jid": "20261129170507123456",
            "data": {
                "file_|-app_conf_|-/etc/app_conf_|-managed": {
                    "result": true, "comment": "File /etc/app.conf updated", "__id__": "app.conf",
                    "name": "/etc/app.conf", "__sls__": "web.app", "__run_num__": 0,
                    "duration": 12.3456789, "start_time": "17:05:07.171524",
                    "changes": {"diff": "--- \n+++ \n@@ -1 +1 @@\n-workers 2\n+workers 4\n"}
                },
                "cmd_|-bad_|-false_|-run": {
                    "result": false, "comment": ["line one", "line, \"two\""], "__run_num__": 1,
                    "changes": "a string change", "name": "false", "__id__": "bad"
                },
                "test_|-bare_|-bare_|-nop": {"result": null},
                "_orig_key": "file_|-app.conf_|-/etc/app.conf_|-managed"
            }
        }))
    }

    #[test]
    fn a_state_return_gives_one_row_per_state_in_run_order() {
        let cols = ExportKind::States.default_columns();
        let rows = state_rows(&states_doc(), Some("sudo_alice"), &cols);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[0],
            [
                "2026-11-29T17:05:07.171Z",
                "20261129170507123456",
                "web01.prod",
                "state.apply",
                "sudo_alice",
                "0",
                "app.conf",
                "file.managed",
                "/etc/app.conf",
                "web.app",
                "True",
                "yes",
                "File /etc/app.conf updated",
                "12.346"
            ]
        );
        assert_eq!(rows[1][10], "False");
        assert_eq!(rows[1][11], "yes", "a string change is a change");
        assert_eq!(
            rows[1][12], "line one\nline, \"two\"",
            "a list comment is joined"
        );
        assert_eq!(rows[2][5], "", "no __run_num__: empty, not shifted");
        assert_eq!(rows[2][10], "None");
        assert_eq!(rows[2][13], "");
        assert!(rows.iter().all(|r| r.len() == cols.len()));
    }

    #[test]
    fn diff_and_changes_columns_hold_the_changes() {
        let cols = crate::export::ColumnChoice::parse(
            ExportKind::States,
            "state_id,diff,changes,state_start_time",
        )
        .columns;
        let rows = state_rows(&states_doc(), None, &cols);
        assert!(rows[0][1].starts_with("--- \n+++ \n@@"));
        assert!(rows[0][2].starts_with("{\"diff\":"));
        assert_eq!(rows[0][3], "17:05:07.171524");
        assert_eq!(rows[1][1], "", "a string change has no diff");
        assert_eq!(rows[1][2], "a string change");
    }

    #[test]
    fn bad_documents_give_well_formed_rows() {
        let all_states = ExportKind::States.columns();
        let huge = "x".repeat(5 * 1024 * 1024);
        let odd = doc(json!({
            "jid": 2026112917050712u64, "minion": ["not", "a", "string"],
            "@timestamp": "yesterday",
            "data": {
                "a_|-b": {"result": "maybe", "comment": {"nested": [1, 2]}, "changes": "x",
                          "duration": "fast", "__run_num__": "seven", "name": 5},
                "c_|-d_|-e_|-f": {"result": false, "comment": huge.clone(), "changes": [1]}
            }
        }));
        let rows = state_rows(&odd, None, all_states);
        assert_eq!(rows.len(), 2);
        for row in &rows {
            assert_eq!(row.len(), all_states.len());
        }
        let comment = all_states.iter().position(|c| c.id == id::COMMENT).unwrap();
        assert!(rows.iter().any(|r| r[comment].len() == huge.len()));
        assert_eq!(rows[0][0], "yesterday", "a time that does not read is kept");
        let r = return_row(&doc(json!({})), ExportKind::Returns.columns());
        assert_eq!(r.len(), ExportKind::Returns.columns().len());
        let index = ExportKind::Returns
            .columns()
            .iter()
            .position(|c| c.id == id::INDEX)
            .unwrap();
        assert!(
            r.iter()
                .enumerate()
                .all(|(i, c)| i == index || c.is_empty()),
            "{r:?}"
        );
        let nothing = doc(json!({"fun": "state.apply", "data": "not states"}));
        assert!(state_rows(&nothing, None, all_states).is_empty());
    }

    #[test]
    fn a_render_error_is_one_failed_row_in_the_states_export() {
        let d = doc(
            json!({"jid": "1", "minion": "m", "fun": "state.apply", "retcode": 1, "success": false,
                           "data": {"return": ["Rendering SLS 'base:x' failed: bad"]}}),
        );
        let cols = ExportKind::States.default_columns();
        let rows = state_rows(&d, None, &cols);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][10], "False");
        assert_eq!(rows[0][12], "Rendering SLS 'base:x' failed: bad");
        assert_eq!(rows[0][6], "");
    }

    #[test]
    fn return_rows_count_states_from_counts_or_from_data() {
        let cols = ExportKind::Returns.columns();
        let r = return_row(&states_doc(), cols);
        assert_eq!(
            r[..10],
            [
                "2026-11-29T17:05:07.171Z",
                "20261129170507123456",
                "web01.prod",
                "state.apply",
                "false",
                "2",
                "2",
                "2",
                "1",
                "3"
            ]
        );
        assert!(r[11].starts_with("Succeeded: 2 (unchanged=1, changed=2)"));
        let counted = doc(
            json!({"jid": "1", "minion": "m", "fun": "state.apply", "success": true,
            "retcode": 0, "counts": {"succeeded": 7, "failed": 0}, "data": {}}),
        );
        let r = return_row(&counted, cols);
        assert_eq!(r[4..10], ["true", "0", "7", "", "0", "7"]);
        let cmd =
            doc(json!({"jid": "1", "minion": "m", "fun": "cmd.run", "retcode": 3, "data": "boom"}));
        let r = return_row(&cmd, cols);
        assert_eq!(r[4..9], ["", "3", "", "", ""]);
        assert_eq!(r[11], "boom");
    }

    #[test]
    fn returner_counts_that_overflow_when_added_leave_the_total_empty() {
        let d = doc(json!({"jid": "1", "minion": "m", "fun": "state.apply",
            "counts": {"succeeded": u64::MAX, "failed": 1}, "data": {}}));
        let cols = ExportKind::Returns.columns();
        let r = return_row(&d, cols);
        assert_eq!(r.len(), cols.len());
        assert_eq!(
            r[6..10],
            [u64::MAX.to_string(), "".into(), "1".into(), "".into()]
        );
    }

    #[test]
    fn job_rows_take_publish_data_and_state_totals() {
        let row = JobRow {
            job: JobSummary {
                jid: "20261129170507123456".into(),
                functions: vec!["state.apply".into()],
                first_return_ms: Some(1_796_000_000_000),
                last_return_ms: Some(1_796_000_001_000),
                returned: 3,
                failed: 1,
                publish: Some(PublishInfo {
                    jid: "20261129170507123456".into(),
                    fun: Some("state.apply".into()),
                    args: vec!["web".into(), "test=True".into()],
                    target: Some("web*".into()),
                    target_type: Some("glob".into()),
                    user: Some("sudo_alice".into()),
                    minions: Some(vec!["a".into(), "b".into(), "c".into(), "d".into()]),
                    stamp: Some("2026-11-29T17:05:07.123456".into()),
                    ..PublishInfo::default()
                }),
                ..JobSummary::default()
            },
            states: Some(HighstateSummary {
                succeeded: 10,
                changed: 4,
                failed: 2,
                total: 12,
                ..Default::default()
            }),
        };
        let cols = ExportKind::Jobs.columns();
        let r = job_row(&row, cols);
        assert_eq!(
            r,
            [
                "2026-11-29T17:05:07.123Z",
                "20261129170507123456",
                "state.apply",
                "web test=True",
                "web*",
                "glob",
                "sudo_alice",
                "3",
                "1",
                "10",
                "4",
                "2",
                "1",
                "4",
                "2026-11-30T00:53:20.000Z",
                "2026-11-30T00:53:21.000Z"
            ]
        );
        // No publish data: the jid tells when, as in the job list.
        let mut unpublished = row.clone();
        unpublished.job.publish = None;
        assert_eq!(job_row(&unpublished, cols)[0], "2026-11-29T17:05:07.123Z");
        unpublished.job.jid = "not-a-jid".into();
        assert_eq!(job_row(&unpublished, cols)[0], "2026-11-30T00:53:20.000Z");
        let bare = job_row(&JobRow::default(), cols);
        assert_eq!(bare.len(), cols.len());
        assert_eq!(bare[7], "0");
        assert_eq!(bare[9], "", "state totals unknown: empty");
    }

    #[test]
    fn audit_rows_follow_the_entry() {
        let e = AuditEntry {
            jid: "1".into(),
            kind: AuditKind::Runner,
            stamp: Some("2026-12-02T19:14:13.295961+00:00".into()),
            user: Some("root".into()),
            fun: Some("runner.jobs.list_jobs".into()),
            args: vec![],
            target: None,
            target_type: None,
            targeted: None,
            source: crate::model::PublishSource::Event,
            risks: vec!["a".into(), "b".into()],
        };
        let r = audit_row(&e, ExportKind::Audit.columns());
        assert_eq!(
            r,
            [
                "2026-12-02T19:14:13.295Z",
                "1",
                "runner",
                "root",
                "runner.jobs.list_jobs",
                "",
                "",
                "",
                "",
                "a; b",
                "publish event"
            ]
        );
    }
}
