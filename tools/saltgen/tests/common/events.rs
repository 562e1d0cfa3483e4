//! Event documents compared with real ones: paths and JSON types down into
//! `data`, the returner's key rewriting, the real event cache's mapping, stamps.

use super::{is_iso_utc, ty, Shape};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The family of a tag, as the app's `EVENT_FAMILIES` names it.
pub fn kind(tag: &str) -> &'static str {
    let p: Vec<&str> = tag.split('/').collect();
    match p.as_slice() {
        ["salt", "job", _, "new"] => "salt/job/*/new",
        ["salt", "job", _, "publish"] => "salt/job/*/publish",
        ["salt", "job", _, "ret", _] => "salt/job/*/ret/*",
        ["salt", "run", _, "new"] => "salt/run/*/new",
        ["salt", "run", _, "ret"] => "salt/run/*/ret",
        ["salt", "minion", _, "start"] => "salt/minion/*/start",
        ["salt", "auth"] => "salt/auth",
        ["salt", "key"] => "salt/key",
        ["minion_start"] => "minion_start",
        _ => panic!("unexpected tag {tag}"),
    }
}

/// Every path below `v` with the JSON types seen there (`a.b`, `a[]`), not
/// going into the values any shape may take (`stop`).
pub fn paths(v: &Value, at: &str, stop: &[&str], out: &mut Shape) {
    out.entry(at.to_string()).or_default().insert(ty(v));
    if stop.contains(&at) {
        return;
    }
    match v {
        Value::Object(o) => {
            for (k, sub) in o {
                let p = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                paths(sub, &p, stop, out);
            }
        }
        Value::Array(a) => a
            .iter()
            .for_each(|x| paths(x, &format!("{at}[]"), stop, out)),
        _ => {}
    }
}

pub fn shape_deep<'a>(docs: impl IntoIterator<Item = &'a Value>, stop: &[&str]) -> Shape {
    let mut s = Shape::new();
    for d in docs {
        paths(d, "", stop, &mut s);
    }
    s
}

/// Each generated document has exactly the real documents' paths (less
/// `optional` ones), each with a JSON type the real ones have there.
pub fn assert_same_deep(
    kind: &str,
    real: &[Value],
    generated: &[&Value],
    stop: &[&str],
    optional: &[&str],
) {
    assert!(!real.is_empty(), "{kind}: no real documents");
    assert!(!generated.is_empty(), "{kind}: nothing generated");
    let want = shape_deep(real, stop);
    // paths every real document has (array elements aside)
    let always: BTreeSet<String> = want
        .keys()
        .filter(|p| !p.contains("[]") && real.iter().all(|d| has_path(d, p)))
        .cloned()
        .collect();
    for g in generated {
        let got = shape_deep([*g], stop);
        for (p, types) in &got {
            let ok = want.get(p).map(|w| types.is_subset(w));
            let optional_ok = optional
                .iter()
                .any(|o| p == o || p.starts_with(&format!("{o}.")));
            assert!(
                ok == Some(true) || optional_ok,
                "{kind}: {p} is {types:?}, real documents have {:?}\n{g}",
                want.get(p)
            );
        }
        for p in &always {
            assert!(
                has_path(g, p),
                "{kind}: lacks {p}, which every real one has\n{g}"
            );
        }
    }
}

pub fn has_path(v: &Value, p: &str) -> bool {
    if p.is_empty() {
        return true;
    }
    p.split('.').try_fold(v, |v, k| v.get(k)).is_some()
}

/// The returner's key rewriting, on a parsed value: what a return document's
/// `data` is made of the function's return (which the `ret` event carries as
/// is). `_orig_key` holds the last dotted key in the original order, which a
/// parsed (sorted) object no longer has: it is marked, not valued.
pub fn convert_keys(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut out = serde_json::Map::new();
            for (k, sub) in o {
                if k.contains('.') {
                    out.insert("_orig_key".into(), Value::Bool(true));
                }
                out.insert(k.replace('.', "_"), convert_keys(sub));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(convert_keys).collect()),
        other => other.clone(),
    }
}

/// A return document's `data` with each `_orig_key` marked as `convert_keys` marks it.
pub fn mark_orig_keys(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, sub)| match k.as_str() {
                    "_orig_key" => (k.clone(), Value::Bool(true)),
                    _ => (k.clone(), mark_orig_keys(sub)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(mark_orig_keys).collect()),
        other => other.clone(),
    }
}

/// The real event cache's mapping of `data` (fixture run, dynamic mapping):
/// field -> engine type.
pub fn real_event_mapping() -> BTreeMap<String, String> {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/dynamic_mapping.json");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let props = &m["salt-master-event-cache-v1"]["mappings"]["properties"];
    let mut out: BTreeMap<String, String> = props["data"]["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                format!("data.{k}"),
                v["type"].as_str().unwrap_or("object").to_string(),
            )
        })
        .collect();
    out.insert("tag".into(), props["tag"]["type"].as_str().unwrap().into());
    out
}

/// Whether a JSON value of type `t` is what a dynamic mapping of `engine` type holds.
pub fn fits(engine: &str, t: &str, v: &Value) -> bool {
    match engine {
        "text" => {
            t == "string" || t == "array" && v.as_array().unwrap().iter().all(|x| x.is_string())
        }
        "date" => t == "string" && is_iso_utc(v.as_str().unwrap()),
        "boolean" => t == "bool",
        "long" => t == "int",
        "float" => t == "float" || t == "int",
        _ => t == "object",
    }
}

/// epoch µs of an `isoformat()` with +00:00 (`2026-12-02T19:14:27.951998+00:00`)
pub fn stamp_us(s: &str) -> i64 {
    let ms = saltscope_core::time::parse_utc(s).unwrap_or_else(|e| panic!("{s}: {e:?}"));
    let micros: i64 = s
        .split_once('.')
        .map_or(0, |(_, f)| f[..6].parse::<i64>().unwrap() % 1000);
    ms * 1000 + micros
}

pub fn jid_us(jid: &str) -> i64 {
    let iso = format!(
        "{}-{}-{}T{}:{}:{}.{}+00:00",
        &jid[0..4],
        &jid[4..6],
        &jid[6..8],
        &jid[8..10],
        &jid[10..12],
        &jid[12..14],
        &jid[14..20]
    );
    stamp_us(&iso)
}
