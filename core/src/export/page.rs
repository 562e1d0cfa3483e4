//! An export page read straight from the bytes of the engine's answer.
//!
//! Reading a page into a serde_json `Value`, copying its hits, then each
//! `_source` into the model cost 32 µs per state.apply return natively
//! (5,000 returns, 14 MB; `examples/export_profile.rs`), most of it
//! building maps and strings the export then threw away. Here serde reads
//! the answer once into typed hits: `_source` fields no column needs are
//! skipped unparsed, nothing is copied, and the returns export can tally a
//! return's states ([`StateTally`](crate::model::StateTally)) without
//! building them.
//!
//! A page serde_json cannot read whole (a return nested deeper than its 128
//! levels) is read again hit by hit (`engine::lenient`): the one
//! return that cannot be read whole is a hit with notes, the rest of the
//! page as it was. Only then is any of the page read twice.
//!
//! [`last_sort_values`] reads the cursor for the next page off the end of
//! the bytes before the page is parsed, so the next request can be on its
//! way while this page is turned into CSV.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::engine::{lenient, EngineError};
use crate::query::total_value;

/// One hit, with `_source` read as `S`.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "S: Deserialize<'de>"))]
pub struct Hit<S> {
    #[serde(rename = "_index", default)]
    pub index: String,
    #[serde(rename = "_id", default)]
    pub id: String,
    #[serde(rename = "_source", default = "none")]
    pub source: Option<S>,
    /// Kept as text: only the last hit's is read (as the next cursor).
    #[serde(default)]
    pub sort: Option<Box<RawValue>>,
    /// The doc values a page asked for (`docvalue_fields`), by field name;
    /// kept as text like `sort`, read by the one reader that asked.
    #[serde(default)]
    pub fields: Option<Box<RawValue>>,
    /// What could not be read of this hit, for the export's notes: empty
    /// unless the page had to be read hit by hit.
    #[serde(skip)]
    pub notes: Vec<String>,
}

fn none<S>() -> Option<S> {
    None
}

/// What a page says besides its hits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageInfo {
    /// The last hit's sort values when the page was full (more may
    /// follow); `None` on the last page.
    pub next: Option<Vec<Value>>,
    /// The PIT id the engine answered with (it may renew it).
    pub pit_id: Option<String>,
    pub total: Option<u64>,
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "S: Deserialize<'de>"))]
struct Answer<S> {
    #[serde(default)]
    pit_id: Option<String>,
    #[serde(default)]
    timed_out: Option<bool>,
    #[serde(rename = "_shards", default)]
    shards: Option<Value>,
    #[serde(default = "none")]
    hits: Option<HitsBlock<S>>,
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "S: Deserialize<'de>"))]
struct HitsBlock<S> {
    #[serde(default)]
    total: Option<Value>,
    #[serde(default = "none")]
    hits: Option<Vec<Hit<S>>>,
}

/// Reads a page of hits. Failed shards or a timed-out search are errors,
/// never a short page; so is an answer without hits, or one that is not
/// JSON of a search's shape.
pub fn read_hits_page<S: DeserializeOwned>(
    url: &str,
    answer: &[u8],
    page_size: usize,
) -> Result<(PageInfo, Vec<Hit<S>>), EngineError> {
    let bad = |detail: String| EngineError::BadResponse {
        url: Some(url.to_string()),
        detail,
    };
    let answer: Answer<S> = match serde_json::from_slice(answer) {
        Ok(a) => a,
        Err(e) => read_by_hit(answer).ok_or_else(|| bad(format!("not a search answer ({e})")))?,
    };
    if let Some(shards) = answer.shards {
        if let Some(e) = EngineError::from_shard_failures(url, &json!({ "_shards": shards })) {
            return Err(e);
        }
    }
    if answer.timed_out == Some(true) {
        return Err(bad("the search timed out: its hits are incomplete".into()));
    }
    let Some(HitsBlock {
        total,
        hits: Some(hits),
    }) = answer.hits
    else {
        return Err(bad("the answer has no hits.hits".into()));
    };
    let next = if hits.len() >= page_size {
        let sort = hits
            .last()
            .and_then(|h| h.sort.as_ref())
            .and_then(|s| serde_json::from_slice::<Vec<Value>>(s.get().as_bytes()).ok())
            .ok_or_else(|| bad("the last hit has no sort values to continue from".into()))?;
        Some(sort)
    } else {
        None
    };
    let total = total.as_ref().and_then(total_value);
    let info = PageInfo {
        next,
        pit_id: answer.pit_id,
        total,
    };
    Ok((info, hits))
}

/// The answer around hits kept as text, for [`read_by_hit`].
#[derive(Deserialize)]
struct RawAnswer<'a> {
    #[serde(default)]
    pit_id: Option<String>,
    #[serde(default)]
    timed_out: Option<bool>,
    #[serde(rename = "_shards", default)]
    shards: Option<Value>,
    #[serde(borrow, default)]
    hits: Option<RawHitsBlock<'a>>,
}

#[derive(Deserialize)]
struct RawHitsBlock<'a> {
    #[serde(default)]
    total: Option<Value>,
    #[serde(borrow, default)]
    hits: Option<Vec<&'a RawValue>>,
}

/// A page that did not read whole, read hit by hit: each hit typed if it
/// reads on its own, else through [`lenient::read_hit`] (its unreadable
/// fields as raw text, with notes). `None` when the page is no search
/// answer even so.
fn read_by_hit<S: DeserializeOwned>(answer: &[u8]) -> Option<Answer<S>> {
    let raw: RawAnswer = serde_json::from_slice(answer).ok()?;
    let hits = match raw.hits {
        Some(block) => Some(HitsBlock {
            total: block.total,
            hits: block
                .hits
                .map(|hits| hits.into_iter().map(read_one).collect()),
        }),
        None => None,
    };
    Some(Answer {
        pit_id: raw.pit_id,
        timed_out: raw.timed_out,
        shards: raw.shards,
        hits,
    })
}

// Every parse here reads bytes (`from_slice`), as the page's does: the
// hit's parser is then the page's own copy in the wasm, not one per way
// of reading (bytes, text, a `Value`).
fn read_one<S: DeserializeOwned>(raw: &RawValue) -> Hit<S> {
    if let Ok(hit) = serde_json::from_slice(raw.get().as_bytes()) {
        return hit;
    }
    let hit = lenient::read_hit(raw);
    let text = |name: &str| hit.get(name).and_then(Value::as_str).map(str::to_string);
    let mut notes: Vec<String> = lenient::hit_notes(&hit)
        .map(|n| format!("{n}: read as its raw JSON text"))
        .collect();
    if !hit.is_object() {
        notes.push("the hit is not an object".into());
    }
    let source = hit
        .get("_source")
        .and_then(|s| match from_value_bytes::<S>(s) {
            Ok(source) => Some(source),
            Err(e) => {
                notes.push(format!("its `_source` could not be read ({e})"));
                None
            }
        });
    Hit {
        index: text("_index").unwrap_or_default(),
        id: text("_id").unwrap_or_default(),
        source,
        sort: hit
            .get("sort")
            .and_then(|s| serde_json::value::to_raw_value(s).ok()),
        fields: hit
            .get("fields")
            .and_then(|f| serde_json::value::to_raw_value(f).ok()),
        notes,
    }
}

/// `S` from a `Value`, through its bytes: see [`read_one`]. The lenient
/// reader's `Value` may be nested deeper than serde_json reads bytes by
/// default (128 levels; it read the parts that were not as text), so the
/// limit is off: the depth is the `Value`'s, already in memory.
fn from_value_bytes<S: DeserializeOwned>(value: &Value) -> serde_json::Result<S> {
    let bytes = serde_json::to_vec(value)?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    de.disable_recursion_limit();
    S::deserialize(&mut de)
}

/// The last hit's sort values, read off the end of a search answer
/// without parsing the rest: the `"sort":[…]` that comes last in the
/// bytes. Inside a JSON string a quote is escaped, so that text can only
/// be a hit's own `sort`, and a hit's `sort` follows its `_source`. A
/// guess all the same: the caller checks it against the parsed page.
pub fn last_sort_values(answer: &[u8]) -> Option<Vec<Value>> {
    const KEY: &[u8] = b"\"sort\":[";
    let at = answer.windows(KEY.len()).rposition(|w| w == KEY)?;
    let from = at + KEY.len() - 1;
    serde_json::Deserializer::from_slice(&answer[from..])
        .into_iter::<Vec<Value>>()
        .next()?
        .ok()
}

/// The total an answer gives (`"total":{"value":N,…}`), read off its first
/// bytes without parsing the rest, as the worker reads it
/// (`js/fetch-worker.js`). The engine writes `hits.total` before any hit,
/// and `_shards.total` is a bare number, so the first such object is the
/// total. `None` when the answer gives none (a page after the first).
pub fn head_total(answer: &[u8]) -> Option<u64> {
    let head = &answer[..answer.len().min(HEAD_BYTES)];
    let object = after(head, b"\"total\":{")?;
    let object = &object[..object.iter().position(|&b| b == b'}')?];
    let digits = after(object, b"\"value\":")?;
    // By hand: `str::parse` made the wasm 65 B bigger (gzip).
    let count = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if count == 0 {
        return None;
    }
    digits[..count].iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// What follows the first `key` in `bytes`.
fn after<'a>(bytes: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = bytes.windows(key.len()).position(|w| w == key)?;
    Some(&bytes[at + key.len()..])
}

/// How far into an answer [`head_total`] looks: past a PIT id of many
/// shards, short of the hits of a big page.
const HEAD_BYTES: usize = 65_536;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ReturnFields, StateTally};

    fn bytes(v: Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap()
    }

    fn answer(n: usize, total: Value) -> Value {
        let hits: Vec<Value> = (0..n)
            .map(|i| {
                json!({"_index": "salt-state_apply-v1", "_id": format!("d{i}"), "_score": null,
                       "_source": {"jid": format!("{i}"), "minion": "m", "fun": "state.apply",
                                   "data": {"sort": [9, 9], "x_|-y_|-z_|-w": {"result": i % 2 == 0, "comment": "\"sort\":[1]"}}},
                       "sort": ["salt-state_apply-v1", i, format!("{i}"), "m"]})
            })
            .collect();
        json!({"pit_id": "p2", "took": 3, "timed_out": false,
               "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
               "hits": {"total": total, "max_score": null, "hits": hits}})
    }

    #[test]
    fn a_full_page_continues_from_its_last_hit_and_reads_the_sources_typed() {
        let a = bytes(answer(3, json!({"value": 7, "relation": "eq"})));
        let (info, hits) = read_hits_page::<ReturnFields<StateTally>>("u", &a, 3).unwrap();
        assert_eq!(
            info.next,
            Some(vec![
                json!("salt-state_apply-v1"),
                json!(2),
                json!("2"),
                json!("m")
            ])
        );
        assert_eq!(info.pit_id.as_deref(), Some("p2"));
        assert_eq!(info.total, Some(7));
        assert_eq!(hits.len(), 3);
        assert_eq!(hits[1].id, "d1");
        let fields = hits[1].source.as_ref().unwrap();
        assert_eq!(fields.jid, Some(json!("1")));
        assert_eq!(fields.data.unwrap().0.unwrap().failed, 1);
        // A short page is the last; a bare number is a total too.
        let a = bytes(answer(2, json!(2)));
        let (info, _) = read_hits_page::<ReturnFields<Value>>("u", &a, 3).unwrap();
        assert_eq!((info.next, info.total), (None, Some(2)));
    }

    #[test]
    fn the_cursor_read_off_the_end_is_the_last_hits_whatever_the_sources_hold() {
        let a = bytes(answer(4, json!(4)));
        assert_eq!(
            last_sort_values(&a),
            Some(vec![
                json!("salt-state_apply-v1"),
                json!(3),
                json!("3"),
                json!("m")
            ])
        );
        assert_eq!(last_sort_values(&bytes(answer(0, json!(0)))), None);
        assert_eq!(last_sort_values(b"{\"sort\":[1,"), None);
    }

    #[test]
    fn the_total_is_read_off_the_head_as_the_engine_writes_it() {
        // As OpenSearch 3.8 answers a PIT search: `hits.total` before the
        // hits, after `_shards.total`; a source may hold the same text.
        let engine = br#"{"pit_id":"p1","took":2,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":3,"relation":"eq"},"max_score":null,"hits":[{"_source":{"total":{"value":99}}}]}}"#;
        assert_eq!(head_total(engine), Some(3));
        // As serde_json writes it, keys in order.
        assert_eq!(
            head_total(&bytes(answer(2, json!({"value": 2, "relation": "eq"})))),
            Some(2)
        );
        // A page after the first gives no total; nor does one past the head.
        let later = br#"{"took":2,"timed_out":false,"_shards":{"total":1},"hits":{"max_score":null,"hits":[]}}"#;
        assert_eq!(head_total(later), None);
        let mut far = vec![b' '; HEAD_BYTES];
        far.extend_from_slice(br#""total":{"value":3}"#);
        assert_eq!(head_total(&far), None);
        assert_eq!(head_total(br#""total":{"value":"#), None);
        assert_eq!(head_total(br#""total":{"value":-1}"#), None);
        assert_eq!(
            head_total(br#""total":{"value":99999999999999999999}"#),
            None
        );
    }

    #[test]
    fn failed_shards_timeouts_and_odd_answers_are_errors_not_short_pages() {
        let mut a = answer(1, json!(1));
        a["_shards"] = json!({"total": 2, "successful": 1, "failed": 1,
            "failures": [{"reason": {"type": "query_shard_exception", "reason": "boom"}}]});
        let e = read_hits_page::<ReturnFields<Value>>("u", &bytes(a), 5).unwrap_err();
        assert!(e.to_string().contains("1 of 2 shards failed: boom"), "{e}");
        let mut a = answer(1, json!(1));
        a["timed_out"] = json!(true);
        let e = read_hits_page::<ReturnFields<Value>>("u", &bytes(a), 5).unwrap_err();
        assert!(e.to_string().contains("timed out"), "{e}");
        for odd in [&b"{\"took\": 1}"[..], b"<html>proxy error</html>", b"[1,2]"] {
            assert!(
                read_hits_page::<ReturnFields<Value>>("u", odd, 5).is_err(),
                "{}",
                String::from_utf8_lossy(odd)
            );
        }
        let full_without_sort = bytes(json!({"hits": {"hits": [{"_id": "x", "_source": {}}]}}));
        let e = read_hits_page::<ReturnFields<Value>>("u", &full_without_sort, 1).unwrap_err();
        assert!(e.to_string().contains("no sort values"), "{e}");
    }

    #[test]
    fn a_return_nested_too_deep_to_read_is_one_hit_with_a_note_not_a_failed_page() {
        // It failed the whole page: "not a search answer (recursion limit
        // exceeded …)", and so the export.
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let mut a = answer(3, json!(3));
        a["hits"]["hits"][1]["_source"]["data"] = json!("DEEP");
        let text = serde_json::to_string(&a)
            .unwrap()
            .replace(r#""DEEP""#, &deep);
        let (info, hits) = read_hits_page::<ReturnFields<Value>>("u", text.as_bytes(), 3).unwrap();
        assert_eq!(info.total, Some(3));
        assert_eq!(info.next.as_ref().unwrap()[1], json!(2));
        let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["d0", "d1", "d2"]);
        let fields = hits[1].source.as_ref().unwrap();
        assert_eq!(fields.jid, Some(json!("1")));
        assert_eq!(fields.data, Some(Value::String(deep)));
        assert_eq!(
            hits[1].notes,
            ["field `data` is nested deeper than 128 levels: read as its raw JSON text"]
        );
        assert!(hits[0].notes.is_empty() && hits[2].notes.is_empty());
        assert_eq!(
            hits[0].source.as_ref().unwrap().data,
            a["hits"]["hits"][0]["_source"].get("data").cloned()
        );
        // A hit whose `_source` is no object is one without a source.
        let odd = bytes(
            json!({"hits": {"hits": [{"_id": "x", "_source": 5}, {"_id": "y", "_source": {}}]}}),
        );
        let (_, hits) = read_hits_page::<ReturnFields<StateTally>>("u", &odd, 5).unwrap();
        assert!(hits[0].source.is_none());
        assert!(
            hits[0].notes[0].starts_with("its `_source` could not be read"),
            "{:?}",
            hits[0].notes
        );
        assert!(hits[1].source.is_some());
    }

    #[test]
    fn a_data_that_reads_alone_but_not_within_its_hit_still_gives_the_source() {
        // 125 levels: too deep within the hit, not within `data` alone, so
        // the lenient reader keeps `data` as a value, 127 levels deep in
        // `_source`; reading the source again from that value must not stop
        // at serde_json's limit of 128 (found by the property test
        // `a_page_holding_a_return_nested_at_any_depth_reads_every_return`).
        let deep = format!("{}null{}", "[".repeat(125), "]".repeat(125));
        let mut a = answer(1, json!(1));
        a["hits"]["hits"][0]["_source"]["data"] = json!({"a_|-b_|-c_|-d": {"result": "DEEP"}});
        let text = serde_json::to_string(&a)
            .unwrap()
            .replace(r#""DEEP""#, &deep);
        let (_, whole) = read_hits_page::<ReturnFields<Value>>("u", text.as_bytes(), 1).unwrap();
        let (_, tallied) =
            read_hits_page::<ReturnFields<StateTally>>("u", text.as_bytes(), 1).unwrap();
        assert_eq!(whole[0].source.as_ref().unwrap().jid, Some(json!("0")));
        assert_eq!(tallied[0].source.as_ref().unwrap().jid, Some(json!("0")));
    }

    #[test]
    fn sources_of_any_shape_read_without_failing_the_page() {
        let a = bytes(json!({"hits": {"total": 3, "hits": [
            {"_id": "a", "_source": {"jid": 20261203, "data": "text", "success": "yes", "extra": {"deep": [1]}}},
            {"_id": "b", "_source": {"jid": null, "data": [1, 2], "counts": "x"}},
            {"_id": "c"}
        ]}}));
        let (_, hits) = read_hits_page::<ReturnFields<StateTally>>("u", &a, 5).unwrap();
        assert_eq!(hits[0].source.as_ref().unwrap().jid, Some(json!(20261203)));
        assert_eq!(hits[1].source.as_ref().unwrap().jid, Some(Value::Null));
        assert!(hits[2].source.is_none());
    }
}
