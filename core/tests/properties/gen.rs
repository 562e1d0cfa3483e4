//! Generators: arbitrary JSON, and documents shaped like the returner's with
//! odd values in every field.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{json, Map, Number, Value};

/// Pieces that text is made of: the state-key separator and its parts,
/// digits (an order prefix, one past `u64::MAX`), non-ASCII, control
/// characters, JSON's own quote and backslash, a BiDi override.
const PIECES: &[&str] = &[
    "_|-",
    "_|-",
    "_",
    "|",
    "-",
    "web01",
    "db-02.example.com",
    "0",
    "07",
    "42",
    "18446744073709551616",
    "é",
    "日本語",
    "🦀",
    "\u{0}",
    "\u{1b}[31m",
    "\n",
    "\r\n",
    "\t",
    "\"",
    "\\",
    " ",
    "ms",
    ".",
    ":",
    "T",
    "Z",
    "+",
    "\u{202e}",
    "\u{feff}",
    "\"sort\":[",
    "<script>",
];

/// Keys of the documents and answers the core reads, so arbitrary objects
/// often hold a field a reader looks at.
pub const KEYS: &[&str] = &[
    "result",
    "changes",
    "duration",
    "comment",
    "__run_num__",
    "__id__",
    "name",
    "__sls__",
    "_orig_key",
    "data",
    "jid",
    "minion",
    "fun",
    "success",
    "retcode",
    "counts",
    "@timestamp",
    "_source",
    "_index",
    "_id",
    "sort",
    "hits",
    "total",
    "value",
    "responses",
    "error",
    "status",
    "_shards",
    "failed",
    "tag",
    "load",
    "arg",
    "__kwarg__",
    "tgt",
    "tgt_type",
    "user",
    "minions",
    "missing",
    "_stamp",
    "return",
    "old",
    "new",
    "diff",
    "succeeded",
    "pit_id",
    "id",
    "timed_out",
    "aggregations",
    "buckets",
    "key",
];

/// Any text: arbitrary characters (control characters included), or
/// pieces that mean something to a reader.
pub fn text() -> BoxedStrategy<String> {
    prop_oneof![
        2 => vec(any::<char>(), 0..12).prop_map(String::from_iter),
        3 => vec(select(PIECES), 0..8).prop_map(|p| p.concat()),
        1 => Just(String::new()),
    ]
    .boxed()
}

pub fn key() -> impl Strategy<Value = String> {
    prop_oneof![3 => select(KEYS).prop_map(str::to_string), 1 => text()]
}

/// `Some` of `s` with probability `p`, boxed: a tuple of unboxed
/// strategies builds its value trees in one stack frame, and in a debug
/// build those frames overflowed the test thread's stack.
fn maybe<T: std::fmt::Debug + Clone + 'static>(
    p: f64,
    s: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<Option<T>> {
    option::weighted(p, s).boxed()
}

/// A finite f64 (JSON has no other).
pub fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        (0u32..10_000_000).prop_map(|n| f64::from(n) / 1000.0),
    ]
}

pub fn scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        float().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        text().prop_map(Value::String),
    ]
    .boxed()
}

/// Any JSON value of modest depth and size.
pub fn json() -> BoxedStrategy<Value> {
    scalar()
        .prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                vec(inner.clone(), 0..6).prop_map(Value::Array),
                vec((key(), inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
        .boxed()
}

/// An object of `fields`, moved in: `json!` copies each value it is given
/// by serializing it, which recurses as deep as the value is.
pub fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// `leaf` inside `depth` arrays or objects (built in a loop: no recursion).
pub fn nest(depth: usize, leaf: Value, objects: bool) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        v = if objects {
            object([("k", v)])
        } else {
            Value::Array(vec![v])
        };
    }
    v
}

/// A value nested up to 300 levels: past serde_json's 128 when read from
/// bytes.
pub fn deep() -> BoxedStrategy<Value> {
    (0usize..300, scalar(), any::<bool>())
        .prop_map(|(d, leaf, objects)| nest(d, leaf, objects))
        .boxed()
}

/// Any value, deep ones included.
pub fn odd() -> BoxedStrategy<Value> {
    prop_oneof![4 => json(), 1 => deep()].boxed()
}

/// A field as the returner writes it, or something else in its place.
fn or_odd(usual: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
    prop_oneof![3 => usual, 1 => json()].boxed()
}

/// A time as Salt, the engine or a person writes one, or nearly.
pub fn time_text() -> BoxedStrategy<String> {
    (
        0u32..10_000,
        0u32..14,
        0u32..33,
        0u32..26,
        0u32..61,
        0u32..62,
        select(&["", ".1", ".171", ".171524", ".123456789123", "."][..]),
        select(
            &[
                "", "Z", "z", "+00:00", "-05:00", "+0530", "+23:59", "-24:00", "+1",
            ][..],
        ),
        select(&["T", " ", "t", "_"][..]),
    )
        .prop_map(|(y, mo, d, h, mi, s, frac, zone, sep)| {
            format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}{frac}{zone}")
        })
        .boxed()
}

const FUNCTIONS: &[&str] = &[
    "state.apply",
    "state.sls",
    "state.highstate",
    "state.single",
    "cmd.run",
    "test.version",
    "grains.items",
    "runner.jobs.list_jobs",
    "",
];

/// A state key: `[NN_|-]module_|-id_|-name_|-function` from odd parts, or
/// any text.
pub fn state_key() -> BoxedStrategy<String> {
    prop_oneof![
        3 => (option::of(0u32..100), text(), text(), text(), text()).prop_map(|(n, m, i, na, f)| {
            let prefix = n.map(|n| format!("{n:02}_|-")).unwrap_or_default();
            format!("{prefix}{m}_|-{i}_|-{na}_|-{f}")
        }),
        1 => text(),
    ]
    .boxed()
}

/// A state's `duration`: ms as a number, "12.5 ms" as older returns hold
/// it, or text that is not a duration (`NaN`, `inf` included).
fn duration() -> BoxedStrategy<Value> {
    prop_oneof![
        float().prop_map(Value::from),
        (0u32..100_000).prop_map(|n| json!(format!("{}.{} ms", n / 10, n % 10))),
        select(&["NaN", "nan ms", "inf", "-inf ms", "infinity", "1e400", "fast", ""][..])
            .prop_map(Value::from),
        json(),
    ]
    .boxed()
}

/// `changes` in every shape Salt and odd modules give it.
fn changes() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(json!({})),
        Just(json!({"_orig_key": "x.y"})),
        Just(json!([])),
        Just(json!("")),
        Just(Value::Null),
        json(),
    ]
    .boxed()
}

/// One entry of a state return: a state (an object with `result`), an
/// object without `result`, or not an object at all.
pub fn state_entry() -> BoxedStrategy<Value> {
    let state = (
        maybe(
            0.9,
            or_odd(prop_oneof![
                any::<bool>().prop_map(Value::Bool),
                Just(Value::Null)
            ]),
        ),
        maybe(0.8, changes()),
        maybe(0.7, duration()),
        maybe(0.7, or_odd((0u64..50).prop_map(Value::from))),
        maybe(0.5, or_odd(text().prop_map(Value::String))),
        vec((key(), json()), 0..3),
    )
        .prop_map(|(result, changes, duration, run_num, comment, extra)| {
            let mut m: Map<String, Value> = extra.into_iter().collect();
            for (k, v) in [
                ("result", result),
                ("changes", changes),
                ("duration", duration),
                ("__run_num__", run_num),
                ("comment", comment),
            ] {
                match v {
                    Some(v) => {
                        m.insert(k.to_string(), v);
                    }
                    None => {
                        m.remove(k);
                    }
                }
            }
            Value::Object(m)
        });
    prop_oneof![6 => state, 1 => json()].boxed()
}

/// A state function's `data`: entries under state keys (or any text), most
/// of them states.
pub fn state_data() -> BoxedStrategy<Value> {
    vec((state_key(), state_entry()), 0..10)
        .prop_map(|entries| Value::Object(entries.into_iter().collect()))
        .boxed()
}

/// `data` of any return: states, a render error, text, anything.
pub fn data() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => state_data(),
        1 => vec(text().prop_map(Value::String), 0..3).prop_map(|l| json!({"return": l})),
        1 => text().prop_map(Value::String),
        2 => json(),
    ]
    .boxed()
}

/// A return document's `_source`: each field usually of its type, present
/// or not, anything in its place now and then, and extra fields.
pub fn return_source(data: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
    (
        maybe(0.9, or_odd(time_text().prop_map(Value::String))),
        maybe(
            0.9,
            or_odd((0u64..99_999_999_999_999_999).prop_map(|n| json!(format!("{n:020}")))),
        ),
        maybe(0.9, or_odd(text().prop_map(Value::String))),
        maybe(0.9, or_odd(select(FUNCTIONS).prop_map(Value::from))),
        maybe(
            0.8,
            or_odd(prop_oneof![
                any::<bool>().prop_map(Value::Bool),
                select(&["true", "false"][..]).prop_map(Value::from)
            ]),
        ),
        maybe(
            0.8,
            or_odd(prop_oneof![
                (0i64..10).prop_map(Value::from),
                Just(json!(" 3 "))
            ]),
        ),
        maybe(
            0.3,
            or_odd(
                prop_oneof![(0u64..100, 0u64..100), any::<(u64, u64)>()]
                    .prop_map(|(s, f)| json!({"succeeded": s, "failed": f})),
            ),
        ),
        maybe(0.9, data),
        vec((key(), json()), 0..2),
    )
        .prop_map(
            |(ts, jid, minion, fun, success, retcode, counts, data, extra)| {
                let mut m: Map<String, Value> = extra.into_iter().collect();
                for (k, v) in [
                    ("@timestamp", ts),
                    ("jid", jid),
                    ("minion", minion),
                    ("fun", fun),
                    ("success", success),
                    ("retcode", retcode),
                    ("counts", counts),
                    ("data", data),
                ] {
                    match v {
                        Some(v) => {
                            m.insert(k.to_string(), v);
                        }
                        None => {
                            m.remove(k);
                        }
                    }
                }
                Value::Object(m)
            },
        )
        .boxed()
}

/// A search hit as the engine sends it (strings for `_index` and `_id`, an
/// object `_source`, `sort` last), around any source.
pub fn hit_around(source: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
    (
        select(
            &[
                "salt-state_apply-v1",
                "salt-cmd_run-v1",
                "salt-runner_jobs_list_jobs-v1",
                "",
            ][..],
        ),
        text(),
        source,
        maybe(0.9, vec(scalar(), 0..5)),
    )
        .prop_map(|(index, id, source, sort)| {
            let mut hit = object([
                ("_index", index.into()),
                ("_id", id.into()),
                ("_score", Value::Null),
                ("_source", source),
            ]);
            if let Some(sort) = sort {
                hit["sort"] = Value::Array(sort);
            }
            hit
        })
        .boxed()
}

/// A return hit with any `data` (deep ones included).
pub fn return_hit() -> BoxedStrategy<Value> {
    hit_around(return_source(prop_oneof![4 => data(), 1 => deep()])).boxed()
}

/// Text of 100 KB or more (a few cases only: they are slow to shrink).
pub fn huge_text() -> impl Strategy<Value = String> {
    (
        100_000usize..160_000,
        select(&["x", "é", "_|-", "\n", "\"", "🦀"][..]),
    )
        .prop_map(|(n, piece)| piece.repeat(n / piece.len()))
}

/// The bytes of a search answer around `hits`.
pub fn page_bytes(hits: &[Value], total: Option<Value>) -> Vec<u8> {
    let mut block = object([
        ("max_score", Value::Null),
        ("hits", Value::Array(hits.to_vec())),
    ]);
    if let Some(total) = total {
        block["total"] = total;
    }
    let mut answer = json!({"took": 3, "timed_out": false,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0}});
    answer["hits"] = block;
    serde_json::to_vec(&answer).expect("a Value always serializes")
}

/// Bytes of a JSON answer changed a little: cut short, a byte changed, a
/// byte inserted, a range dropped.
pub fn mutate(bytes: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = bytes.len();
    (0..4u8, 0..len.max(1), 0..len.max(1), any::<u8>()).prop_map(move |(how, a, b, byte)| {
        let mut out = bytes.clone();
        let (lo, hi) = (a.min(b).min(len), a.max(b).min(len));
        match how {
            0 => out.truncate(lo),
            1 if lo < len => out[lo] = byte,
            2 => out.insert(lo, byte),
            _ => {
                out.drain(lo..hi);
            }
        }
        out
    })
}
