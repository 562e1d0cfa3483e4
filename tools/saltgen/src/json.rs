//! A tiny ordered JSON value, serialised the way Python's `json.dumps` does
//! (what the returner sends), plus the returner's key rewriting.
//!
//! serde_json's `Map` is sorted unless the `preserve_order` feature is on,
//! and turning that on here would change `serde_json` for every crate in the
//! workspace build. Documents are written in the order Salt writes them.

use std::fmt::Write;

#[derive(Clone, Debug, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
    /// Already-serialised JSON, written as is: a value too big to hold as a
    /// tree (a return with 10,000 states), streamed into text once instead.
    Raw(String),
}

pub fn s(v: impl Into<String>) -> J {
    J::Str(v.into())
}

/// An object from (key, value) pairs, in order.
#[macro_export]
macro_rules! obj {
    ($($k:expr => $v:expr),* $(,)?) => {
        $crate::json::J::Obj(vec![$(($k.to_string(), $v)),*])
    };
}

impl J {
    /// Python dict assignment: replace in place when the key exists, else append.
    pub fn set(&mut self, k: &str, v: J) {
        if let J::Obj(items) = self {
            set_item(items, k.to_string(), v);
        }
    }

    pub fn write(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(true) => out.push_str("true"),
            J::Bool(false) => out.push_str("false"),
            J::Int(i) => {
                let _ = write!(out, "{i}");
            }
            J::Float(f) => write_float(*f, out),
            J::Str(v) => write_str(v, out),
            J::Raw(r) => out.push_str(r),
            J::Arr(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out);
                }
                out.push(']');
            }
            J::Obj(o) => {
                out.push('{');
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_str(k, out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(256);
        self.write(&mut out);
        out
    }
}

fn set_item(items: &mut Vec<(String, J)>, k: String, v: J) {
    if let Some(slot) = items.iter_mut().find(|(key, _)| *key == k) {
        slot.1 = v;
    } else {
        items.push((k, v));
    }
}

/// Python's float repr for the values we emit (no exponents in our range):
/// shortest round-trip digits, and always a fraction (`5.0`, not `5`).
fn write_float(f: f64, out: &mut String) {
    let start = out.len();
    let _ = write!(out, "{f}");
    if !out[start..].contains(['.', 'e', 'i', 'N']) {
        out.push_str(".0");
    }
}

/// `json.dumps` string escaping with `ensure_ascii=True`.
pub fn write_str(v: &str, out: &mut String) {
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{u:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The returner's `_convert_keys`, exactly:
///
/// ```python
/// for k, sub_data in data.items():
///     if "." in k:
///         new_data["_orig_key"] = k
///         k = k.replace(".", "_")
///     new_data[k] = _convert_keys(sub_data)
/// ```
///
/// So `_orig_key` sits where the first dotted key was and holds the last one.
/// A `Raw` value is left as it is: whoever wrote it rewrote its keys.
pub fn convert_keys(v: J) -> J {
    match v {
        J::Obj(items) => {
            let mut new: Vec<(String, J)> = Vec::with_capacity(items.len() + 1);
            for (k, sub) in items {
                let k = if k.contains('.') {
                    let nk = k.replace('.', "_");
                    set_item(&mut new, "_orig_key".to_string(), J::Str(k));
                    nk
                } else {
                    k
                };
                set_item(&mut new, k, convert_keys(sub));
            }
            J::Obj(new)
        }
        J::Arr(a) => J::Arr(a.into_iter().map(convert_keys).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orig_key_position_and_value() {
        let v = obj! {"a" => J::Int(1), "b.c" => J::Int(2), "d.e" => obj!{"x.y" => J::Bool(true)}};
        assert_eq!(
            convert_keys(v).to_json(),
            r#"{"a": 1, "_orig_key": "d.e", "b_c": 2, "d_e": {"_orig_key": "x.y", "x_y": true}}"#
        );
    }

    #[test]
    fn floats_and_strings_like_python() {
        assert_eq!(J::Float(5.0).to_json(), "5.0");
        assert_eq!(J::Float(0.502).to_json(), "0.502");
        assert_eq!(J::Float(3651.528).to_json(), "3651.528");
        assert_eq!(s("a\"b\\\n\té").to_json(), r#""a\"b\\\n\t\u00e9""#);
    }
}
