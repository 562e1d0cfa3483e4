//! The returns export read from the summary pipeline's fields: where every
//! return in scope was indexed through `saltscope-return-summary`, a page
//! asks for no `_source` at all, only the doc values of the row's fields
//! and of `saltscope.states.*`. Measured on OpenSearch 3.8, a page of 5,000
//! state.apply returns is 1.1 MB this way against 5.7 MB of `_source`.
//!
//! Doc values are the indexed values, so the probe
//! ([`probe_request`]) first counts the returns in scope whose doc values
//! could differ from their `_source`: no summary of this version (unless
//! the function returns text, never states: [`TEXT_FUNCTIONS`]), no
//! jid/minion/fun value, or a field the engine ignored (`_ignored`: a
//! malformed `retcode` or `@timestamp`, a keyword past `ignore_above`).
//! Only when there are none does the export read this way; the file is the
//! same either way (`tests/engine_summary_pipeline.rs` proves it on real
//! Salt data).

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{json, Value};

use super::columns::{id, Column};
use super::hits::{hits_query, search_at};
use super::page::Hit;
use super::plan::Position;
use super::rows::{return_row_with, Row, StateTotals};
use super::spec::ExportSpec;
use super::ExportKind;
use crate::engine::{EngineError, HttpRequest, Reply};
use crate::model::{
    HighstateSummary, ReturnDoc, ReturnFields, SUMMARY_VERSION, SUMMARY_VERSION_FIELD,
};
use crate::query::{template, total_hits, FieldMap};

/// The pipeline's state counts, as `RunSummary::from_pipeline` reads them
/// (in this order: see [`summary_return_row`]).
const STATES: [&str; 5] = ["total", "succeeded", "unchanged", "changed", "failed"];

/// The functions whose return is text, never states: the index template
/// `deploy/index-template/salt-returns-text.json` maps their `data` as
/// text and sends them through no pipeline, so they have no summary and
/// need none (their state cells are empty either way).
pub(crate) const TEXT_FUNCTIONS: [&str; 5] = [
    "cmd.run",
    "cmd.shell",
    "cmd.run_stdout",
    "cmd.run_stderr",
    "test.version",
];

/// Whether the export could read the summary fields: returns without the
/// output column, on returns whose mapping has the fields.
pub(crate) fn applies(spec: &ExportSpec) -> bool {
    spec.kind == ExportKind::Returns && !spec.wants(id::OUTPUT) && spec.context.fields.summary
}

/// Counts the returns in scope whose doc values might not say what their
/// `_source` says; none means the pages may be read as doc values. Under
/// the export's PIT when it has one: the very documents the pages will read.
pub(crate) fn probe_request(at: &Position) -> HttpRequest {
    let fields = &at.spec.context.fields;
    // Summarised (or of a function whose data is text), with the fields
    // the rows read, and nothing the engine could not index.
    search_at(
        at,
        template::body(
            r#"{"size":0,"track_total_hits":true,"query":{"bool":{"filter":[$0],"must_not":[{"bool":{"filter":[{"bool":{"should":[{"term":{$1:$2}},{"terms":{$3:$4}}],"minimum_should_match":1}},{"exists":{"field":$5}},{"exists":{"field":$6}},{"exists":{"field":$3}}],"must_not":[{"exists":{"field":"_ignored"}}]}}]}}}"#,
            &[
                hits_query(at),
                json!(SUMMARY_VERSION_FIELD),
                json!(SUMMARY_VERSION),
                json!(fields.fun),
                json!(TEXT_FUNCTIONS),
                json!(fields.jid),
                json!(fields.minion),
            ],
        ),
    )
}

/// Whether no return in scope needs its `_source`.
pub(crate) fn read_probe(reply: Reply) -> Result<bool, EngineError> {
    let answer = reply.json()?;
    if let Some(e) = EngineError::from_shard_failures(&reply.url, &answer) {
        return Err(e);
    }
    Ok(total_hits(&answer) == Some(0))
}

/// The doc values a page asks for, in a fixed order: the request's
/// `docvalue_fields` and the reader's slots are the one list.
pub(crate) struct DocValueNames([String; FIELD_COUNT]);

const FIELD_COUNT: usize = 8 + STATES.len();
const TIMESTAMP: usize = 0;
const JID: usize = 1;
const MINION: usize = 2;
const FUN: usize = 3;
const SUCCESS: usize = 4;
const RETCODE: usize = 5;
const COUNTS_SUCCEEDED: usize = 6;
const COUNTS_FAILED: usize = 7;
/// `saltscope.states.<STATES[i]>` is slot `FIRST_STATE + i`.
const FIRST_STATE: usize = 8;

impl DocValueNames {
    pub(crate) fn of(fields: &FieldMap) -> DocValueNames {
        let state = |i: usize| format!("saltscope.states.{}", STATES[i]);
        DocValueNames([
            "@timestamp".into(),
            fields.jid.clone(),
            fields.minion.clone(),
            fields.fun.clone(),
            "success".into(),
            "retcode".into(),
            "counts.succeeded".into(),
            "counts.failed".into(),
            state(0),
            state(1),
            state(2),
            state(3),
            state(4),
        ])
    }

    /// The request's `docvalue_fields`; dates as ISO 8601, as `_source` has them.
    pub(crate) fn request(&self) -> Value {
        Value::Array(
            self.0
                .iter()
                .enumerate()
                .map(|(i, name)| match i {
                    TIMESTAMP => json!({"field": name, "format": "strict_date_optional_time"}),
                    _ => json!(name),
                })
                .collect(),
        )
    }

    /// A hit's `fields` (`{"name": [value, …], …}`) into slots, the first
    /// value of each: no map of names is built per hit.
    fn read(&self, raw: &str) -> [Option<Value>; FIELD_COUNT] {
        let mut de = serde_json::Deserializer::from_slice(raw.as_bytes());
        Slots(self)
            .deserialize(&mut de)
            .unwrap_or_else(|_| self.read_any(raw))
    }

    /// The same from `fields` of another shape (a bare value where a list
    /// was expected): slower, never done for what the engines send.
    fn read_any(&self, raw: &str) -> [Option<Value>; FIELD_COUNT] {
        let map: serde_json::Map<String, Value> =
            serde_json::from_slice(raw.as_bytes()).unwrap_or_default();
        std::array::from_fn(|i| match map.get(&self.0[i]) {
            Some(Value::Array(items)) => items.first().cloned(),
            other => other.cloned(),
        })
    }
}

struct Slots<'a>(&'a DocValueNames);

impl<'de> DeserializeSeed<'de> for Slots<'_> {
    type Value = [Option<Value>; FIELD_COUNT];

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Slots<'_> {
    type Value = [Option<Value>; FIELD_COUNT];

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("doc values by field name")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut slots: Self::Value = Default::default();
        while let Some(slot) = map.next_key_seed(Slot(self.0))? {
            match slot {
                Some(i) => slots[i] = map.next_value::<First>()?.0,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(slots)
    }
}

/// A field name as its slot (`None`: not asked for).
struct Slot<'a>(&'a DocValueNames);

impl<'de> DeserializeSeed<'de> for Slot<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Slot<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self.0 .0.iter().position(|n| n == name))
    }
}

/// The first of a field's doc values (a field has one in these documents).
struct First(Option<Value>);

impl<'de> Deserialize<'de> for First {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FirstOf;
        impl<'de> Visitor<'de> for FirstOf {
            type Value = First;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of doc values")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<First, A::Error> {
                let first = seq.next_element::<Value>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(First(first))
            }
        }
        d.deserialize_seq(FirstOf)
    }
}

/// A return's row from its doc values, through the same reading as a
/// `_source`'s ([`ReturnDoc::from_fields`]), so every cell is the same.
pub(crate) fn summary_return_row<S>(hit: Hit<S>, names: &DocValueNames, columns: &[Column]) -> Row {
    let mut values = hit.fields.map(|f| names.read(f.get())).unwrap_or_default();
    let count = |v: &Option<Value>| v.as_ref().and_then(Value::as_u64);
    let counts = match (
        count(&values[COUNTS_SUCCEEDED]),
        count(&values[COUNTS_FAILED]),
    ) {
        (Some(succeeded), Some(failed)) => Some(json!({"succeeded": succeeded, "failed": failed})),
        _ => None,
    };
    let state = |name: usize| count(&values[FIRST_STATE + name]);
    let summary = state(0).map(|total| HighstateSummary {
        total,
        succeeded: state(1).unwrap_or(0),
        unchanged: state(2).unwrap_or(0),
        changed: state(3).unwrap_or(0),
        failed: state(4).unwrap_or(0),
        total_ms: 0.0,
    });
    let source = ReturnFields::<Value> {
        timestamp: values[TIMESTAMP].take(),
        jid: values[JID].take(),
        minion: values[MINION].take(),
        fun: values[FUN].take(),
        success: values[SUCCESS].take(),
        retcode: values[RETCODE].take(),
        counts,
        data: None,
    };
    let (doc, _) = ReturnDoc::from_fields(hit.index, hit.id, source);
    return_row_with(&doc, StateTotals::from_parts(doc.counts, summary), columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineError, Product};
    use crate::export::columns::ColumnChoice;
    use crate::export::page::read_hits_page;
    use crate::export::plan::ExportPlan;
    use crate::export::rows::tallied_return_row;
    use crate::export::spec::ResumeState;
    use crate::export::testing::*;
    use crate::model::StateTally;

    /// A hit of `testing::hit` as a doc-values page has it.
    fn as_doc_values(hit: &Value, fields: &FieldMap) -> Value {
        let s = &hit["_source"];
        json!({"_index": hit["_index"], "_id": hit["_id"], "sort": hit["sort"], "fields": {
            "@timestamp": [s["@timestamp"]], fields.jid.clone(): [s["jid"]],
            fields.minion.clone(): [s["minion"]], fields.fun.clone(): [s["fun"]],
            "success": [s["success"]], "retcode": [s["retcode"]],
            "saltscope.states.total": [2], "saltscope.states.succeeded": [2],
            "saltscope.states.unchanged": [0], "saltscope.states.changed": [1],
            "saltscope.states.failed": [0]
        }})
    }

    #[test]
    fn a_doc_values_row_is_the_documents_row() {
        let fields = FieldMap::default();
        let columns = ExportKind::Returns.columns().to_vec();
        let columns: Vec<Column> = columns.into_iter().filter(|c| c.id != id::OUTPUT).collect();
        let hits = vec![hit("20261129100000123456", "web1", 1_796_000_000_123, None)];
        let source = serde_json::to_vec(&page(hits.clone(), 1, None)).unwrap();
        let values = serde_json::to_vec(&page(
            hits.iter().map(|h| as_doc_values(h, &fields)).collect(),
            1,
            None,
        ))
        .unwrap();
        let (_, by_source) = read_hits_page::<ReturnFields<StateTally>>("u", &source, 10).unwrap();
        let (_, by_values) = read_hits_page::<ReturnFields<StateTally>>("u", &values, 10).unwrap();
        let a: Vec<Row> = by_source
            .into_iter()
            .map(|h| tallied_return_row(h, &columns))
            .collect();
        let b: Vec<Row> = by_values
            .into_iter()
            .map(|h| summary_return_row(h, &DocValueNames::of(&fields), &columns))
            .collect();
        assert_eq!(a, b);
        assert_eq!(a[0][1], "20261129100000123456");
        assert!(
            a[0].contains(&"1".to_string()),
            "one state changed: {:?}",
            a[0]
        );
    }

    #[test]
    fn doc_values_are_read_into_their_slots_whatever_else_the_hit_has() {
        let names = DocValueNames::of(&FieldMap::default());
        let jid = &names.0[JID];
        let raw = format!(
            r#"{{"other":[{{"a":[1]}}],"{jid}":["1","2"],"saltscope.states.total":[3],"success":[]}}"#
        );
        let slots = names.read(&raw);
        assert_eq!(slots[JID], Some(json!("1")));
        assert_eq!(slots[FIRST_STATE], Some(json!(3)));
        assert_eq!(slots[SUCCESS], None);
        assert_eq!(slots[MINION], None);
        // A bare value instead of a list reads the slow way, the same.
        let bare = names.read(&format!(r#"{{"{jid}":"1","retcode":[0]}}"#));
        assert_eq!(
            (&bare[JID], &bare[RETCODE]),
            (&Some(json!("1")), &Some(json!(0)))
        );
        assert_eq!(names.request().as_array().map(Vec::len), Some(FIELD_COUNT));
    }

    #[test]
    fn without_state_counts_the_state_cells_stay_empty() {
        let fields = FieldMap::default();
        let columns = ExportKind::Returns.default_columns();
        let hit: Hit<ReturnFields<StateTally>> = serde_json::from_value(json!({
            "_index": "salt-cmd_run-v1", "_id": "x",
            "fields": {"@timestamp": ["2026-11-29T10:00:00.123Z"], fields.jid.clone(): ["1"],
                       fields.minion.clone(): ["m"], fields.fun.clone(): ["cmd.run"],
                       "success": [false], "retcode": [2]}
        }))
        .unwrap();
        let row = summary_return_row(hit, &DocValueNames::of(&fields), &columns);
        assert_eq!(
            row,
            [
                "2026-11-29T10:00:00.123Z",
                "1",
                "m",
                "cmd.run",
                "false",
                "2",
                "",
                "",
                ""
            ]
        );
    }

    #[test]
    fn the_probe_counts_what_doc_values_could_misread() {
        let fields = FieldMap::default();
        let spec = spec(
            ExportKind::Returns,
            product(Product::OpenSearch, (3, 8, 0)),
            100,
        );
        let state = ExportPlan::new(spec.clone()).unwrap().state().clone();
        let seen = Default::default();
        let at = Position {
            spec: &spec,
            state: &state,
            seen: &seen,
        };
        let req = probe_request(&at);
        let body = body(&req);
        assert_eq!(body["size"], 0);
        let readable = &body["query"]["bool"]["must_not"][0]["bool"];
        assert_eq!(readable["must_not"][0]["exists"]["field"], "_ignored");
        let summarised = &readable["filter"][0]["bool"]["should"];
        assert_eq!(
            summarised[0]["term"][SUMMARY_VERSION_FIELD],
            SUMMARY_VERSION
        );
        assert_eq!(summarised[1]["terms"][&fields.fun][0], "cmd.run");
        assert_eq!(readable["filter"][1]["exists"]["field"], fields.jid);
        let answer = |n: u64| Reply {
            url: "u".into(),
            body: serde_json::to_vec(&page(vec![], n, None)).unwrap(),
        };
        assert!(read_probe(answer(0)).unwrap());
        assert!(!read_probe(answer(3)).unwrap());
    }

    #[test]
    fn with_the_summary_fields_returns_are_read_as_doc_values_once_the_probe_allows() {
        let opensearch = product(Product::OpenSearch, (3, 8, 0));
        let with_summary = |kind| {
            let mut s = spec(kind, opensearch.clone(), 2);
            s.context.fields.summary = true;
            s
        };
        let probe_answer = |missing: u64| ok(page(vec![], missing, None));

        // Every return has the fields: PIT, probe under it, then pages of
        // doc values.
        let mut plan = ExportPlan::new(with_summary(ExportKind::Returns)).unwrap();
        assert!(plan.next_request().unwrap().path.contains("_pit"));
        plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
        let probe = plan.next_request().unwrap();
        assert_eq!(probe.path, "/_search");
        assert_eq!(body(&probe)["size"], 0);
        assert_eq!(body(&probe)["pit"]["id"], "p1");
        assert_eq!(plan.handle(probe_answer(0)).unwrap(), b"");
        assert_eq!(plan.state().reads_summary, Some(true));
        let first = body(&plan.next_request().unwrap());
        assert_eq!(first["_source"], false);
        assert!(first["docvalue_fields"]
            .as_array()
            .unwrap()
            .contains(&json!("saltscope.states.changed")));
        // The hits of that page carry `fields`, not `_source`.
        let h = hit("1", "web1", NOW - 1000, Some(7));
        let values = json!({"_index": h["_index"], "_id": h["_id"], "sort": h["sort"], "fields": {
            "jid.keyword": ["1"], "minion.keyword": ["web1"], "fun.keyword": ["state.apply"],
            "success": [true], "retcode": [0], "saltscope.states.total": [2],
            "saltscope.states.succeeded": [2], "saltscope.states.changed": [1],
            "saltscope.states.failed": [0]}});
        let csv = plan.handle(ok(page(vec![values], 1, Some("p1")))).unwrap();
        let rows = read_csv(&csv);
        assert_eq!(
            rows[1][1..],
            ["1", "web1", "state.apply", "true", "0", "2", "1", "0"]
        );
        assert!(plan.is_done());

        // One return without them: the documents, as without the pipeline.
        let opened = |kind| {
            let mut plan = ExportPlan::new(with_summary(kind)).unwrap();
            assert!(plan.next_request().unwrap().path.contains("_pit"));
            plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
            plan
        };
        let reads_documents = |plan: &ExportPlan| {
            let first = body(&plan.next_request().unwrap());
            first["pit"]["id"] == "p1"
                && first.get("_source").is_none()
                && first.get("docvalue_fields").is_none()
        };
        let mut plan = opened(ExportKind::Returns);
        plan.handle(probe_answer(1)).unwrap();
        assert_eq!(plan.state().reads_summary, Some(false));
        assert!(reads_documents(&plan));

        // A probe that fails costs the doc values, not the export.
        let mut plan = opened(ExportKind::Returns);
        let failed = EngineError::from_status("/_search", 500, "{}");
        assert_eq!(plan.handle(Err(failed)).unwrap(), b"");
        assert_eq!(plan.state().reads_summary, Some(false));
        assert!(reads_documents(&plan));

        // Resumed, the answer is remembered: no second probe.
        let resumed = ExportPlan::resume(
            with_summary(ExportKind::Returns),
            ResumeState {
                reads_summary: Some(true),
                ..plan.state().clone()
            },
        )
        .unwrap();
        assert_eq!(body(&resumed.next_request().unwrap())["_source"], false);

        // No probe for what needs `data`: states, or the output column.
        assert!(reads_documents(&opened(ExportKind::States)));
        let mut s = with_summary(ExportKind::Returns);
        s.columns = ColumnChoice::parse(ExportKind::Returns, "jid,output").columns;
        let mut plan = ExportPlan::new(s).unwrap();
        plan.handle(ok(json!({"pit_id": "p1"}))).unwrap();
        assert!(reads_documents(&plan));
    }
}
