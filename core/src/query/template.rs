//! Search bodies written as JSON text with holes, filled in at run time.
//!
//! A body built with `json!` compiles to code that inserts each key and
//! value one at a time, and the query builders were some of the largest
//! functions in the wasm. A template is a string instead: data, which the
//! wasm carries and gzip packs in a fraction of the bytes.

use serde_json::Value;

use crate::text::json_text;

/// The body `template` describes, with each `$0`…`$9` replaced by that
/// value of `values` written as JSON (a key's hole, `{$0: …}`, takes a
/// string). Templates are the code's own text, never an engine's: one that
/// is not JSON once filled is a bug, which each builder's tests show.
pub fn body(template: &str, values: &[Value]) -> Value {
    let mut text = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        text.push_str(&rest[..at]);
        let digit = rest.as_bytes().get(at + 1).map(|b| b.wrapping_sub(b'0'));
        match digit.and_then(|d| values.get(usize::from(d))) {
            Some(value) => text.push_str(&json_text(value)),
            None => panic!("template hole ${digit:?} has no value: {template}"),
        }
        rest = &rest[at + 2..];
    }
    text.push_str(rest);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("template is not JSON ({e}): {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn holes_take_values_and_keys() {
        let filled = body(
            r#"{"size":$0,"query":{"bool":{"filter":$1}},"sort":[{$2:{"order":"desc"}}]}"#,
            &[
                json!(100),
                json!([{"term": {"a": "b\"c"}}]),
                json!("data.tag"),
            ],
        );
        assert_eq!(
            filled,
            json!({"size": 100, "query": {"bool": {"filter": [{"term": {"a": "b\"c"}}]}},
                   "sort": [{"data.tag": {"order": "desc"}}]})
        );
    }

    #[test]
    #[should_panic(expected = "has no value")]
    fn a_hole_without_a_value_is_a_bug() {
        body(r#"{"a":$1}"#, &[json!(1)]);
    }
}
