//! The events export: the events view's own paging (`[data._stamp, tag]`
//! and the count of events of the last key already written).

use super::plan::{Commit, ExportSource, Position, Step};
use super::rows::{event_row, Row};
use super::spec::After;
use crate::engine::{msearch_request, read_msearch, EngineError, HttpRequest, Reply};
use crate::query::events::{events_page_search, read_events_page, EventCursor};
use crate::query::total_hits;

pub(crate) struct EventsSource;

fn cursor(at: &Position) -> Option<EventCursor> {
    match &at.state.after {
        After::Events(text) => EventCursor::parse(text),
        _ => None,
    }
}

impl ExportSource for EventsSource {
    fn page_request(&self, at: &Position) -> HttpRequest {
        msearch_request(&events_page_search(
            &at.spec.context,
            &at.spec.event_filter(),
            cursor(at).as_ref(),
            at.page_size(),
        ))
    }

    fn read_page(&self, at: &Position, reply: Reply) -> Result<Step, EngineError> {
        let cursor = cursor(at);
        let search = events_page_search(
            &at.spec.context,
            &at.spec.event_filter(),
            cursor.as_ref(),
            at.page_size(),
        );
        let answer = read_msearch(&search, &reply)??;
        let total = total_hits(&answer);
        let (events, next) = read_events_page(&answer, cursor.as_ref(), at.page_size());
        let rows: Vec<Row> = events
            .iter()
            .map(|e| event_row(e, &at.spec.columns))
            .collect();
        let (next, last) = match next {
            Some(c) => (After::Events(c.to_param()), false),
            None => (at.state.after.clone(), true),
        };
        Ok(Step::Commit(Commit {
            looked_at: rows.len() as u64,
            rows,
            next,
            last,
            total,
            total_is_estimate: Some(false),
            pit_id: None,
            read: Vec::new(),
            notes: Vec::new(),
        }))
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
    use crate::query::events::EventFilter;

    #[test]
    fn events_export_page_by_the_views_cursor_each_event_once() {
        let mut s = spec(
            ExportKind::Events,
            product(Product::OpenSearch, (3, 8, 0)),
            2,
        );
        s.filter = ViewFilter::Events(EventFilter {
            tags: vec!["salt/auth".into()],
            ..EventFilter::default()
        });
        let mut plan = ExportPlan::new(s).unwrap();
        let req = plan.next_request().unwrap();
        assert_eq!(req.path, "/_msearch");
        assert!(req.body.text().contains("salt-master-event-cache*"));
        assert!(req.body.text().contains(r#""size":2"#));
        let hit = |id: &str, ms: i64| -> Value {
            json!({"_id": id, "_source": {"tag": "salt/auth", "data": {"id": "db-02", "act": "accept", "_stamp": "2026-12-03T18:08:35.445558+00:00"}}, "sort": [ms, "salt/auth"]})
        };
        let page = |hits: Vec<Value>| {
            ok(json!({"responses": [{"hits": {"total": {"value": 3}, "hits": hits}}]}))
        };
        let rows = read_csv(&plan.handle(page(vec![hit("a", 9), hit("b", 9)])).unwrap());
        assert_eq!(
            rows[0],
            [
                "Time (UTC)",
                "Tag",
                "Minion",
                "JID",
                "Failed return",
                "Data (JSON)"
            ]
        );
        assert_eq!(
            &rows[1][..4],
            ["2026-12-03T18:08:35.445Z", "salt/auth", "db-02", ""]
        );
        assert!(rows[1][5].starts_with('{') && rows[1][5].contains(r#""act":"accept""#));
        assert!(matches!(&plan.state().after, After::Events(c) if c == "9:2:salt/auth"));
        // The next page starts at (9, salt/auth) itself and skips the two written.
        let next = plan.next_request().unwrap().body.text().to_string();
        assert!(next.contains(r#""size":4"#), "{next}");
        let rows = read_csv(
            &plan
                .handle(page(vec![hit("a", 9), hit("b", 9), hit("c", 9)]))
                .unwrap(),
        );
        assert_eq!(rows.len(), 1);
        assert!(plan.is_done());
        assert_eq!(plan.state().rows_written, 3);
    }
}
