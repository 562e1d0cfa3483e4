//! The events view: the master's event bus as the event cache kept it,
//! newest first, filtered — by tag glob, minion, jid, failed returns, time
//! and free text — with what floods the bus counted by tag family. The
//! live tail's polling is in [`super::tail`].

use crate::json::At;
use serde_json::{json, Value};

use super::filter::{any_of, pattern_clause, query_string, time_clause, TimeRange};
use super::template::body;
use super::{hits, total_hits, FieldMap, QueryContext};
use crate::engine::{EngineError, SearchRequest};
use crate::model::{EventDoc, EVENT_FAMILIES, MINION_TAGS};
use crate::route::param;
use crate::sort;
use crate::text::scalar_text;

pub const EVENTS_PAGE_SIZE: usize = 100;

/// What the events view is narrowed by; all of it lives in the URL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// Tag globs (`salt/job/*/ret/*`, `salt/auth`); any of them matches.
    pub tags: Vec<String>,
    /// Minion ids, exact or glob; any of them matches.
    pub minions: Vec<String>,
    pub jid: Option<String>,
    /// Only job returns that failed (`success: false` or a retcode ≠ 0).
    pub failed_only: bool,
    pub time: TimeRange,
    /// Lucene `query_string` over the events.
    pub text: Option<String>,
}

impl EventFilter {
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (EventFilter, Vec<String>) {
        let mut problems = Vec::new();
        let text = |name: &str| get(name).map(str::trim).filter(|s| !s.is_empty());
        let list = |name: &str| {
            text(name)
                .map(super::filter::split_list)
                .unwrap_or_default()
        };
        let time = match text(param::TIME).map(TimeRange::parse) {
            None => TimeRange::default(),
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                problems.push(e);
                TimeRange::default()
            }
        };
        // What does not read is said and left out, as the job list does.
        let shown = crate::text::line_shown;
        let failed = text(param::FAILED);
        if let Some(f) = failed.filter(|f| !matches!(*f, "1" | "0")) {
            problems.push(format!(
                "failed={}: not 1 (failed returns only) or 0; every event is shown",
                shown(f)
            ));
        }
        let jid = text(param::JID);
        let no_jid = jid.filter(|j| !super::filter::is_jid_text(j));
        if let Some(j) = no_jid {
            problems.push(format!(
                "jid={}: no Salt job id (20 digits, or their beginning); every job's events are shown",
                shown(j)
            ));
        }
        if let Some(a) = text(param::AFTER).filter(|a| EventCursor::parse(a).is_none()) {
            problems.push(format!(
                "after={}: no event to page from; the newest events are shown",
                shown(a)
            ));
        }
        let filter = EventFilter {
            tags: list(param::TAG),
            minions: list(param::MINION),
            jid: jid.filter(|_| no_jid.is_none()).map(str::to_string),
            failed_only: failed == Some("1"),
            time,
            text: text(param::TEXT).map(str::to_string),
        };
        (filter, problems)
    }

    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if !self.tags.is_empty() {
            out.push((param::TAG, self.tags.join(",")));
        }
        if !self.minions.is_empty() {
            out.push((param::MINION, self.minions.join(",")));
        }
        if let Some(jid) = &self.jid {
            out.push((param::JID, jid.clone()));
        }
        if self.failed_only {
            out.push((param::FAILED, "1".into()));
        }
        if self.time != TimeRange::default() {
            out.push((param::TIME, self.time.to_param()));
        }
        if let Some(q) = &self.text {
            out.push((param::TEXT, q.clone()));
        }
        out
    }

    /// The `bool` query of the events this filter selects, from `since_ms`
    /// when given (the live tail), else over the filter's time range.
    pub fn query(&self, ctx: &QueryContext, since_ms: Option<i64>) -> Value {
        let f: &FieldMap = &ctx.fields;
        let mut filter = vec![json!({"exists": {"field": "tag"}})];
        match (since_ms, self.time.bounds(ctx.now_ms)) {
            (Some(since), _) => filter
                .push(json!({"range": {"data._stamp": {"gte": since, "format": "epoch_millis"}}})),
            (None, Some((from, to))) => filter.push(time_clause("data._stamp", from, to)),
            (None, None) => {}
        }
        filter.extend(any_of(&f.tag, &self.tags));
        if !self.minions.is_empty() {
            // The minion is in the tag of job events and a few others, in
            // `data.id` of the rest: where the Minion column reads it.
            let mut should = Vec::new();
            for m in &self.minions {
                for (before, after) in MINION_TAGS {
                    let tag = format!("{before}{m}{after}");
                    should.push(body(
                        r#"{"wildcard":{$0:{"value":$1}}}"#,
                        &[json!(f.tag), json!(tag)],
                    ));
                }
                should.push(pattern_clause(&f.event_minion, m));
            }
            filter.push(json!({"bool": {"should": should, "minimum_should_match": 1}}));
        }
        if let Some(jid) = &self.jid {
            // The beginning of a jid (a day, an hour) takes every jid it
            // begins, as the job list's jid filter does.
            let (kind, end) = if super::filter::is_whole_jid(jid) {
                ("term", "/")
            } else {
                ("prefix", "")
            };
            filter.push(body(
                r#"{"bool":{"should":[{$5:{$0:$1}},{"prefix":{$2:$3}},{"prefix":{$2:$4}}],"minimum_should_match":1}}"#,
                &[json!(f.event_jid), json!(jid), json!(f.tag), json!(format!("salt/job/{jid}{end}")), json!(format!("salt/run/{jid}{end}")), json!(kind)],
            ));
        }
        if self.failed_only {
            filter.push(body(
                r#"{"wildcard":{$0:{"value":"salt/job/*/ret/*"}}}"#,
                &[json!(f.tag)],
            ));
            filter.push(body(
                r#"{"bool":{"should":[{"term":{"data.success":false}},{"bool":{"filter":[{"exists":{"field":"data.retcode"}}],"must_not":[{"term":{"data.retcode":0}}]}}],"minimum_should_match":1}}"#,
                &[],
            ));
        }
        if let Some(q) = &self.text {
            filter.push(query_string(q));
        }
        json!({"bool": {"filter": filter}})
    }
}

/// Where a page of events starts: after the last event shown, by its
/// `_stamp` (epoch ms) and tag. Neither is unique — a busy bus fires many
/// events of one tag in one millisecond — so the cursor also counts the
/// events of that very (ms, tag) already shown, and the next page starts
/// *at* that key and skips them. In the URL: `<ms>:<skip>:<tag>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventCursor {
    pub stamp_ms: i64,
    pub tag: String,
    /// Events with exactly this (ms, tag) already shown.
    pub skip: usize,
}

impl EventCursor {
    pub fn parse(text: &str) -> Option<EventCursor> {
        let (ms, rest) = text.split_once(':')?;
        let (skip, tag) = rest.split_once(':')?;
        Some(EventCursor {
            stamp_ms: ms.parse().ok()?,
            skip: skip.parse().ok()?,
            tag: tag.to_string(),
        })
    }

    pub fn to_param(&self) -> String {
        format!("{}:{}:{}", self.stamp_ms, self.skip, self.tag)
    }

    /// `search_after` that includes this very key: in descending order,
    /// `tag + "\0"` is the least string after `tag`, so the engine starts
    /// at (ms, tag) itself.
    fn search_after(&self) -> Value {
        json!([self.stamp_ms, format!("{}\u{0}", self.tag)])
    }

    /// The cursor after a page that started at `from` and ended with
    /// `keys` (each hit's (ms, tag), in order).
    fn after(from: Option<&EventCursor>, keys: &[(i64, String)]) -> Option<EventCursor> {
        let (ms, tag) = keys.last()?;
        let run = keys
            .iter()
            .rev()
            .take_while(|k| (k.0, &k.1) == (*ms, tag))
            .count();
        // The whole page was one key: the ones before it count too.
        let before = from
            .filter(|c| run == keys.len() && c.stamp_ms == *ms && &c.tag == tag)
            .map_or(0, |c| c.skip);
        Some(EventCursor {
            stamp_ms: *ms,
            tag: tag.clone(),
            skip: before + run,
        })
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventsPage {
    pub events: Vec<EventDoc>,
    /// Events that match, all pages.
    pub total: Option<u64>,
    pub next: Option<EventCursor>,
    /// (family glob, label, count), most first; `other` last: of the
    /// events the filter selects but for its tags, so that the other
    /// families stay a click away while one is chosen.
    pub families: Vec<(String, String, u64)>,
    /// Those events, every tag: what "All tags" leads to.
    pub all_tags: Option<u64>,
    pub notes: Vec<String>,
}

crate::search_bundle! {
    /// The events view's one round trip: a page, and the tag families of
    /// everything the filter selects but for its tags.
    pub struct EventsSearches => EventsAnswers { page, families }
}

pub(crate) fn sort(fields: &FieldMap, order: &str) -> Value {
    body(
        r#"[{"data._stamp":{"order":$0,"unmapped_type":"date"}},{$1:{"order":$0,"unmapped_type":"keyword"}}]"#,
        &[json!(order), json!(fields.tag)],
    )
}

/// A page of `size` events after `cursor`, newest first.
pub fn events_page_search(
    ctx: &QueryContext,
    filter: &EventFilter,
    cursor: Option<&EventCursor>,
    size: usize,
) -> SearchRequest {
    let mut page = body(
        r#"{"size":$0,"track_total_hits":true,"query":$1,"sort":$2}"#,
        &[
            json!(size + cursor.map_or(0, |c| c.skip)),
            filter.query(ctx, None),
            sort(&ctx.fields, "desc"),
        ],
    );
    if let Some(c) = cursor {
        page["search_after"] = c.search_after();
    }
    SearchRequest::new(&ctx.config.event_index_pattern, page)
}

pub fn events_searches(
    ctx: &QueryContext,
    filter: &EventFilter,
    cursor: Option<&EventCursor>,
) -> EventsSearches {
    let families: serde_json::Map<String, Value> =
        sort::collect_ordered(EVENT_FAMILIES.iter().map(|(glob, _)| {
            (
                glob.to_string(),
                json!({"wildcard": {ctx.fields.tag.clone(): {"value": glob}}}),
            )
        }));
    let any_tag = EventFilter {
        tags: Vec::new(),
        ..filter.clone()
    };
    let families = body(
        r#"{"size":0,"track_total_hits":true,"query":$0,"aggs":{"families":{"filters":{"filters":$1,"other_bucket_key":"other"}}}}"#,
        &[any_tag.query(ctx, None), Value::Object(families)],
    );
    EventsSearches {
        page: events_page_search(ctx, filter, cursor, EVENTS_PAGE_SIZE),
        families: SearchRequest::new(&ctx.config.event_index_pattern, families),
    }
}

/// A page's events (the ones the cursor already showed skipped) and the
/// cursor after them; `None` when the page was the last.
pub fn read_events_page(
    answer: &Value,
    cursor: Option<&EventCursor>,
    size: usize,
) -> (Vec<EventDoc>, Option<EventCursor>) {
    let found = hits(answer);
    let key = |h: &Value| -> Option<(i64, String)> {
        let sort = h.get("sort")?.as_array()?;
        Some((sort.first()?.as_i64()?, scalar_text(sort.get(1)?)))
    };
    let skip = cursor.map_or(0, |c| {
        found
            .iter()
            .take(c.skip)
            .take_while(|h| key(h) == Some((c.stamp_ms, c.tag.clone())))
            .count()
    });
    let page = &found[skip..];
    let events = page.iter().map(EventDoc::from_hit).collect();
    let next = if page.len() >= size {
        let keys: Vec<(i64, String)> = page.iter().filter_map(key).collect();
        EventCursor::after(cursor, &keys)
    } else {
        None
    };
    (events, next)
}

pub fn parse_events(
    ctx: &QueryContext,
    cursor: Option<&EventCursor>,
    answers: EventsAnswers,
) -> Result<EventsPage, EngineError> {
    let page_answer = answers.page?;
    let (events, next) = read_events_page(&page_answer, cursor, EVENTS_PAGE_SIZE);
    let mut page = EventsPage {
        total: total_hits(&page_answer),
        events,
        next,
        ..EventsPage::default()
    };
    match answers.families {
        Ok(a) => {
            let buckets = a.at("/aggregations/families/buckets");
            let count = |key: &str| {
                buckets
                    .and_then(|b| b.get(key))
                    .and_then(|b| b.get("doc_count"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            };
            let mut families: Vec<(String, String, u64)> = EVENT_FAMILIES
                .iter()
                .map(|(glob, label)| (glob.to_string(), label.to_string(), count(glob)))
                .filter(|(_, _, n)| *n > 0)
                .collect();
            sort::sort_by_key(&mut families, |f| std::cmp::Reverse(f.2));
            let other = count("other");
            if other > 0 {
                families.push(("other".into(), "other tags".into(), other));
            }
            page.families = families;
            page.all_tags = total_hits(&a);
        }
        Err(e) => page.notes.push(format!("tag families unavailable: {e}")),
    }
    // No shard searched: no index matches the event pattern at all.
    let no_index = page_answer.at("/_shards/total").and_then(Value::as_u64) == Some(0);
    if page.total == Some(0) && (no_index || ctx.fields.unmapped.iter().any(|f| f == "tag")) {
        page.notes.push(format!(
            "no event documents in `{}`: turn on `event_return: elasticsearch` on the master (and `master_event_doc_type: _doc` for OpenSearch 2 and Elasticsearch 8) to keep the event bus",
            ctx.config.event_index_pattern
        ));
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_survives_the_url_and_builds_its_clauses() {
        let f = EventFilter {
            tags: vec!["salt/job/*/ret/*".into(), "salt/auth".into()],
            minions: vec!["web*".into()],
            jid: Some("20261202191413295885".into()),
            failed_only: true,
            time: TimeRange::parse("1h").unwrap(),
            text: Some("data.fun:state.apply".into()),
        };
        let pairs = f.to_query();
        let (back, problems) = EventFilter::from_query(|n| {
            pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_str())
        });
        assert!(problems.is_empty());
        assert_eq!(back, f);
        let q = f.query(&QueryContext::at(3_600_000), None).to_string();
        for part in [
            r#"{"wildcard":{"tag.keyword":{"value":"salt/job/*/ret/*"}}}"#,
            r#"{"term":{"tag.keyword":"salt/auth"}}"#,
            r#""salt/job/*/ret/web*""#,
            r#"{"wildcard":{"data.id.keyword":{"value":"web*"}}}"#,
            r#"{"prefix":{"tag.keyword":"salt/job/20261202191413295885/"}}"#,
            r#"{"term":{"data.success":false}}"#,
            r#""data._stamp":{"format":"epoch_millis","gte":0,"lte":3600000}"#,
        ] {
            assert!(q.contains(part), "{part} in {q}");
        }
    }

    #[test]
    fn what_a_link_gets_wrong_is_said_and_left_out() {
        let read = |pairs: &[(&str, &str)]| {
            EventFilter::from_query(|n| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| *v))
        };
        let (f, problems) = read(&[("jid", "abc"), ("failed", "yes"), ("after", "garbage")]);
        assert_eq!((f.jid, f.failed_only), (None, false));
        assert_eq!(
            problems,
            [
                "failed=yes: not 1 (failed returns only) or 0; every event is shown",
                "jid=abc: no Salt job id (20 digits, or their beginning); every job's events are shown",
                "after=garbage: no event to page from; the newest events are shown",
            ]
        );
        // The beginning of a jid, `failed=0` and a cursor the view wrote read.
        let (f, problems) = read(&[
            ("jid", "20261202"),
            ("failed", "0"),
            ("after", "1:0:salt/auth"),
        ]);
        assert_eq!(f.jid.as_deref(), Some("20261202"));
        // A beginning matches every jid it begins; a whole jid, that jid.
        let q = f.query(&QueryContext::at(0), None).to_string();
        assert!(
            q.contains(r#"{"prefix":{"data.jid.keyword":"20261202"}}"#),
            "{q}"
        );
        assert!(
            q.contains(r#"{"prefix":{"tag.keyword":"salt/job/20261202"}}"#),
            "{q}"
        );
        assert!(
            q.contains(r#"{"prefix":{"tag.keyword":"salt/run/20261202"}}"#),
            "{q}"
        );
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn a_page_reads_its_events_cursor_and_families() {
        let ctx = QueryContext::at(0);
        let s = events_searches(&ctx, &EventFilter::default(), None);
        assert_eq!(s.page.body["sort"][0]["data._stamp"]["order"], "desc");
        assert_eq!(s.page.body["size"], EVENTS_PAGE_SIZE as u64);
        let full: Vec<Value> = (0..EVENTS_PAGE_SIZE)
            .map(|i| json!({"_id": format!("e{i}"), "_source": {"tag": "salt/auth", "data": {"id": "m"}}, "sort": [1000 - i as i64, "salt/auth"]}))
            .collect();
        let page = parse_events(
            &ctx,
            None,
            EventsAnswers {
                page: Ok(json!({"hits": {"total": {"value": 250}, "hits": full}})),
                families: Ok(json!({"hits": {"total": {"value": 250}}, "aggregations": {"families": {"buckets": {
                    "salt/auth": {"doc_count": 200}, "salt/job/*/new": {"doc_count": 40}, "other": {"doc_count": 10}}}}})),
            },
        )
        .unwrap();
        assert_eq!((page.total, page.all_tags), (Some(250), Some(250)));
        // One family chosen: the others are counted without it.
        let one = EventFilter {
            tags: vec!["salt/auth".into()],
            ..EventFilter::default()
        };
        let s = events_searches(&ctx, &one, None);
        assert!(s.page.body.to_string().contains("salt/auth"));
        assert!(!s.families.body["query"].to_string().contains("salt/auth"));
        let next = page.next.unwrap();
        assert_eq!(next.to_param(), "901:1:salt/auth");
        let fams: Vec<(&str, u64)> = page
            .families
            .iter()
            .map(|(g, _, n)| (g.as_str(), *n))
            .collect();
        assert_eq!(
            fams,
            [("salt/auth", 200), ("salt/job/*/new", 40), ("other", 10)]
        );
        assert_eq!(
            EventCursor::parse("901:0:salt/job/1/ret/a:b").unwrap().tag,
            "salt/job/1/ret/a:b"
        );
        assert_eq!(EventCursor::parse("901:salt/auth"), None);
        let none = parse_events(
            &ctx,
            None,
            EventsAnswers {
                page: Ok(
                    json!({"_shards": {"total": 0}, "hits": {"total": {"value": 0}, "hits": []}}),
                ),
                families: Ok(json!({})),
            },
        )
        .unwrap();
        assert!(none
            .notes
            .iter()
            .any(|n| n.contains("event_return: elasticsearch")));
    }

    /// Pages cut through a run of events with one (ms, tag) — a busy bus —
    /// and still show every event once: the engine's order within the run
    /// is stable, the cursor counts what it showed of it.
    #[test]
    fn events_sharing_a_millisecond_and_tag_are_each_shown_once_across_pages() {
        // 7 events: 3 at (9, b), 3 at (5, a) — a run longer than a page — and 1 at (1, a).
        let all: Vec<(i64, &str, &str)> = vec![
            (9, "b", "x1"),
            (9, "b", "x2"),
            (9, "b", "x3"),
            (5, "a", "y1"),
            (5, "a", "y2"),
            (5, "a", "y3"),
            (1, "a", "z1"),
        ];
        // What the engine answers for a request: sorted desc, from search_after on.
        let engine = |req: &SearchRequest| -> Value {
            let size = req.body["size"].as_u64().unwrap() as usize;
            let after = req
                .body
                .get("search_after")
                .map(|a| (a[0].as_i64().unwrap(), a[1].as_str().unwrap().to_string()));
            let hits: Vec<Value> = all
                .iter()
                .filter(|(ms, tag, _)| {
                    after
                        .as_ref()
                        .is_none_or(|(ams, atag)| (*ms, tag.to_string()) < (*ams, atag.clone()))
                })
                .take(size)
                .map(|(ms, tag, id)| json!({"_id": id, "_source": {"tag": tag}, "sort": [ms, tag]}))
                .collect();
            json!({"hits": {"hits": hits}})
        };
        let ctx = QueryContext::at(0);
        let mut cursor: Option<EventCursor> = None;
        let mut shown = Vec::new();
        for _ in 0..10 {
            let req = events_page_search(&ctx, &EventFilter::default(), cursor.as_ref(), 2);
            let (events, next) = read_events_page(&engine(&req), cursor.as_ref(), 2);
            shown.extend(events.into_iter().map(|e| e.id));
            // Through the URL and back.
            cursor = next.map(|c| EventCursor::parse(&c.to_param()).unwrap());
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(shown, ["x1", "x2", "x3", "y1", "y2", "y3", "z1"]);
    }
}
