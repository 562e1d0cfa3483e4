//! The audit trail: the audit view's own paging (publish events by
//! `[data._stamp, tag]`, else the job cache by jid), both unique sorts.

use super::plan::{Commit, ExportSource, Position, Step};
use super::rows::{audit_row, Row};
use super::spec::After;
use crate::engine::{msearch_request, read_msearch, EngineError, HttpRequest, Reply};
use crate::query::audit::{audit_searches, parse_audit, AuditCursor};

pub(crate) struct AuditSource;

fn cursor(at: &Position) -> Option<AuditCursor> {
    match &at.state.after {
        After::Audit(text) => AuditCursor::parse(text),
        _ => None,
    }
}

impl ExportSource for AuditSource {
    fn page_request(&self, at: &Position) -> HttpRequest {
        let filter = at.spec.audit_filter();
        msearch_request(&audit_searches(
            &at.spec.context,
            &filter,
            cursor(at).as_ref(),
        ))
    }

    fn read_page(&self, at: &Position, reply: Reply) -> Result<Step, EngineError> {
        let filter = at.spec.audit_filter();
        let cursor = cursor(at);
        let searches = audit_searches(&at.spec.context, &filter, cursor.as_ref());
        let answers = read_msearch(&searches, &reply)?;
        let page = parse_audit(&at.spec.context.config, &filter, cursor.as_ref(), answers)?;
        let rows: Vec<Row> = page
            .entries
            .iter()
            .map(|e| audit_row(e, &at.spec.columns))
            .collect();
        // With risky-only, lines the rule drops are not counted: the total
        // is then an estimate.
        let (next, last) = match &page.next {
            Some(c) => (After::Audit(c.to_param()), false),
            None => (at.state.after.clone(), true),
        };
        Ok(Step::Commit(Commit {
            rows,
            looked_at: page.entries.len() as u64,
            next,
            last,
            total: page.total,
            total_is_estimate: Some(filter.risky_only),
            pit_id: None,
            read: Vec::new(),
            // The view's notes (which source, what is missing) once.
            notes: if at.state.after == After::Start {
                page.notes
            } else {
                Vec::new()
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::plan::ExportPlan;
    use super::super::spec::After;
    use super::super::testing::*;
    use super::super::ExportKind;
    use crate::engine::Product;

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
}
