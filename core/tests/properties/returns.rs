//! Return documents: the view's reader (`ReturnDoc::from_hit`) and the
//! export's typed reader (`read_hits_page` into `ReturnFields`).

use proptest::collection::vec;
use proptest::prelude::*;
use saltscope_core::export::page::read_hits_page;
use saltscope_core::model::{ReturnData, ReturnDoc, ReturnFields, StateTally};
use serde_json::{json, Value};

use crate::gen::{data, hit_around, huge_text, odd, page_bytes, return_hit, return_source};

/// What the notes must say about a source's fields.
fn check_notes(doc: &ReturnDoc, source: &Value) -> Result<(), TestCaseError> {
    for field in ["jid", "minion", "fun", "data"] {
        let missing = format!("field `{field}` is missing");
        prop_assert_eq!(
            source.get(field).is_none(),
            doc.notes.contains(&missing),
            "{}: {:?}",
            field,
            doc.notes
        );
    }
    for field in ["jid", "minion", "fun"] {
        let read = match (field, source.get(field)) {
            ("jid", _) => &doc.jid,
            ("minion", _) => &doc.minion,
            _ => &doc.fun,
        };
        if let Some(Value::String(s)) = source.get(field) {
            prop_assert_eq!(read, s);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_json_reads_as_a_return_with_notes(hit in odd()) {
        let doc = ReturnDoc::from_hit(&hit);
        let _ = (doc.outcome(), doc.is_runner());
        if !hit.get("_source").is_some_and(Value::is_object) {
            prop_assert!(doc.notes.iter().any(|n| n.contains("no _source")), "{:?}", doc.notes);
        }
    }

    #[test]
    fn a_returner_shaped_hit_keeps_its_source_and_says_what_is_missing(hit in return_hit()) {
        let doc = ReturnDoc::from_hit(&hit);
        let source = &hit["_source"];
        prop_assert_eq!(&doc.source, source);
        check_notes(&doc, source)?;
        if source.get("data").is_none() {
            prop_assert_eq!(&doc.data, &ReturnData::Missing);
        }
        let _ = (doc.outcome(), doc.is_runner());
    }

    #[test]
    fn every_states_duration_is_a_finite_number_of_ms(hit in return_hit()) {
        if let ReturnData::States(states) = ReturnDoc::from_hit(&hit).data {
            for run in &states.runs {
                prop_assert!(run.duration_ms.is_none_or(f64::is_finite), "{:?}", run.duration_ms);
            }
        }
    }

    #[test]
    fn the_exports_reader_and_the_views_reader_read_a_return_alike(
        hits in vec(hit_around(return_source(data())), 0..6),
    ) {
        let bytes = page_bytes(&hits, Some(json!(hits.len())));
        let (_, typed) = read_hits_page::<ReturnFields<Value>>("u", &bytes, hits.len() + 1)
            .expect("an engine's page of returns reads");
        prop_assert_eq!(typed.len(), hits.len());
        // The same bytes through the view's reader.
        let answer: Value = serde_json::from_slice(&bytes).expect("it was JSON");
        for (hit, typed) in answer["hits"]["hits"].as_array().expect("hits").iter().zip(typed) {
            let view = ReturnDoc::from_hit(hit);
            let (mut doc, data) = ReturnDoc::from_fields(typed.index, typed.id, typed.source.unwrap_or_default());
            doc.data = ReturnData::read(&doc.fun, data.as_ref(), &mut doc.notes);
            doc.source = view.source.clone();
            prop_assert_eq!(doc, view);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn a_return_with_100_kb_strings_in_any_field_reads_whole(
        huge in huge_text(),
        field in prop::sample::select(&["jid", "minion", "fun", "@timestamp", "data", "retcode", "success"][..]),
        state in any::<bool>(),
    ) {
        let mut source = json!({"jid": "1", "minion": "m", "fun": "state.apply", "retcode": 0,
            "data": {"a_|-b_|-c_|-d": {"result": true, "comment": huge.clone(), "changes": {"diff": huge.clone()}}}});
        if !state {
            source[field] = Value::String(huge.clone());
        }
        let hit = json!({"_index": "i", "_id": huge.clone(), "_source": source, "sort": [huge.clone()]});
        let doc = ReturnDoc::from_hit(&hit);
        prop_assert_eq!(doc.id.len(), huge.len());
        let bytes = page_bytes(&[hit], None);
        let (info, hits) = read_hits_page::<ReturnFields<Value>>("u", &bytes, 1).expect("it reads");
        prop_assert_eq!(hits.len(), 1);
        prop_assert_eq!(info.next, Some(vec![Value::String(huge)]));
    }
}

#[test]
fn a_hit_with_odd_metadata_is_read_by_both_readers() {
    // No engine sends these; each reader keeps the return all the same.
    for (field, value) in [
        ("_index", json!(5)),
        ("_id", json!(["a"])),
        ("_source", json!("text")),
        ("_source", json!(7)),
        ("sort", json!({"a": 1})),
    ] {
        let mut hit = json!({"_index": "i", "_id": "x", "_source": {"jid": "1"}, "sort": [1]});
        hit[field] = value;
        let _ = ReturnDoc::from_hit(&hit);
        let bytes = page_bytes(&[hit], None);
        let (_, hits) = read_hits_page::<ReturnFields<Value>>("u", &bytes, 2).expect(field);
        assert_eq!(hits.len(), 1, "{field}");
        let (_, hits) = read_hits_page::<ReturnFields<StateTally>>("u", &bytes, 2).expect(field);
        assert_eq!(hits.len(), 1, "{field}");
    }
}
