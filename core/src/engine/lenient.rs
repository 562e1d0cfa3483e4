//! Search answers that serde_json cannot read whole, read hit by hit.
//!
//! serde_json refuses JSON nested deeper than 128 levels (its guard against
//! overflowing the stack) and numbers beyond f64. Salt's returner indexes
//! whatever a module returned, so one minion's `data` can be that deep; read
//! whole, that one document failed its whole search (the job page, an
//! export page). Here only that document pays: each hit is read on its own,
//! and a field of its `_source` that still cannot be read becomes its raw
//! JSON text, with a note in the hit's [`HIT_NOTES`] saying so. The text is
//! taken with `RawValue`, whose scanner keeps no stack, so even a document
//! nested 100,000 deep costs no recursion.

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::sort;

/// A field the core adds to a hit read this way (no engine sends it): what
/// could not be read (`field `data` is nested deeper than 128 levels`),
/// each now its raw JSON text, for the reader of the document.
pub(crate) const HIT_NOTES: &str = "_saltscope_notes";

/// Why a part could not be read, as a note says it.
fn why(e: &serde_json::Error) -> String {
    // serde_json has no error code for this one; its message is stable.
    if e.to_string().starts_with("recursion limit exceeded") {
        "is nested deeper than 128 levels".to_string()
    } else {
        format!("could not be read ({e})")
    }
}

fn object(raw: &str) -> Option<BTreeMap<String, &RawValue>> {
    serde_json::from_slice(raw.as_bytes()).ok()
}

/// One search's answer: whole when serde_json reads it, else its hits one
/// by one ([`read_hit`]). Any other part that cannot be read (an
/// aggregation nested too deep) fails the answer with `whole`'s error.
pub(crate) fn read_answer(raw: &str) -> Result<Value, serde_json::Error> {
    let whole = match serde_json::from_slice::<Value>(raw.as_bytes()) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let by_hit = || -> Option<Value> {
        let mut top = object(raw)?;
        let mut block = object(top.remove("hits")?.get())?;
        let hits: Vec<&RawValue> =
            serde_json::from_slice(block.remove("hits")?.get().as_bytes()).ok()?;
        // Inserted one by one: see `sort::collect_ordered`.
        let read = |parts: BTreeMap<String, &RawValue>| -> Option<Map<String, Value>> {
            let mut read = Map::new();
            for (k, v) in parts {
                read.insert(k, serde_json::from_slice(v.get().as_bytes()).ok()?);
            }
            Some(read)
        };
        let mut block = read(block)?;
        block.insert(
            "hits".into(),
            Value::Array(hits.into_iter().map(read_hit).collect()),
        );
        let mut answer = read(top)?;
        answer.insert("hits".into(), Value::Object(block));
        Some(Value::Object(answer))
    };
    by_hit().ok_or(whole)
}

/// One hit: as it is when serde_json reads it, else field by field, each
/// field of `_source` that cannot be read as its raw JSON text, with a note
/// in [`HIT_NOTES`]. A hit that is not an object is its raw text.
pub(crate) fn read_hit(raw: &RawValue) -> Value {
    if let Ok(hit) = serde_json::from_slice(raw.get().as_bytes()) {
        return hit;
    }
    let Some(fields) = object(raw.get()) else {
        return Value::String(raw.get().to_string());
    };
    let mut notes = Vec::new();
    let mut hit = Map::new();
    for (name, value) in fields {
        let read = if name == "_source" {
            read_source(value, &mut notes)
        } else {
            as_text_if_unread(&format!("the hit's `{name}`"), value, &mut notes)
        };
        hit.insert(name, read);
    }
    if !notes.is_empty() {
        hit.insert(
            HIT_NOTES.into(),
            Value::Array(notes.into_iter().map(Value::String).collect()),
        );
    }
    Value::Object(hit)
}

fn read_source(raw: &RawValue, notes: &mut Vec<String>) -> Value {
    if let Ok(source) = serde_json::from_slice(raw.get().as_bytes()) {
        return source;
    }
    let Some(fields) = object(raw.get()) else {
        return as_text_if_unread("the hit's `_source`", raw, notes);
    };
    Value::Object(sort::collect_ordered(fields.into_iter().map(
        |(name, value)| {
            let read = as_text_if_unread(&format!("field `{name}`"), value, notes);
            (name, read)
        },
    )))
}

fn as_text_if_unread(what: &str, raw: &RawValue, notes: &mut Vec<String>) -> Value {
    serde_json::from_slice(raw.get().as_bytes()).unwrap_or_else(|e| {
        notes.push(format!("{what} {}", why(&e)));
        Value::String(raw.get().to_string())
    })
}

/// The notes [`read_hit`] left in a hit.
pub(crate) fn hit_notes(hit: &Value) -> impl Iterator<Item = &str> {
    hit.get(HIT_NOTES)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deep(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn a_hit_nested_too_deep_keeps_its_readable_fields_and_notes_the_other() {
        let answer = format!(
            r#"{{"took": 1, "hits": {{"total": 2, "hits": [
                {{"_id": "a", "_source": {{"minion": "m", "data": {}}}, "sort": [1]}},
                {{"_id": "b", "_source": {{"minion": "n", "data": 2}}}}]}}}}"#,
            deep(200)
        );
        let read = read_answer(&answer).unwrap();
        assert_eq!(read["took"], 1);
        assert_eq!(read["hits"]["total"], 2);
        let a = &read["hits"]["hits"][0];
        assert_eq!(a["_id"], "a");
        assert_eq!(a["sort"], json!([1]));
        assert_eq!(a["_source"]["minion"], "m");
        assert_eq!(a["_source"]["data"], Value::String(deep(200)));
        assert_eq!(
            hit_notes(a).collect::<Vec<_>>(),
            ["field `data` is nested deeper than 128 levels"]
        );
        let b = &read["hits"]["hits"][1];
        assert_eq!(b["_source"]["data"], 2);
        assert_eq!(hit_notes(b).count(), 0, "a hit that reads is as it was");
    }

    #[test]
    fn a_document_nested_100000_deep_costs_no_recursion() {
        let answer = format!(
            r#"{{"hits": {{"hits": [{{"_source": {{"data": {}}}}}]}}}}"#,
            deep(100_000)
        );
        let read = read_answer(&answer).unwrap();
        assert!(read["hits"]["hits"][0]["_source"]["data"]
            .as_str()
            .unwrap()
            .starts_with("[[[["));
    }

    #[test]
    fn a_part_other_than_the_hits_nested_too_deep_fails_the_answer() {
        let answer = format!(
            r#"{{"aggregations": {}, "hits": {{"hits": []}}}}"#,
            deep(200)
        );
        let e = read_answer(&answer).unwrap_err();
        assert!(e.to_string().starts_with("recursion limit exceeded"), "{e}");
        let not_hits = format!(r#"{{"hits": {}}}"#, deep(200));
        assert!(read_answer(&not_hits).is_err());
    }

    #[test]
    fn a_number_beyond_f64_is_raw_text_too() {
        let answer = r#"{"hits": {"hits": [{"_source": {"data": 1e400, "jid": "1"}}]}}"#;
        let hit = &read_answer(answer).unwrap()["hits"]["hits"][0];
        assert_eq!(hit["_source"]["data"], "1e400");
        assert_eq!(hit["_source"]["jid"], "1");
        let note = hit_notes(hit).next().unwrap();
        assert!(
            note.starts_with("field `data` could not be read (number out of range"),
            "{note}"
        );
    }
}
