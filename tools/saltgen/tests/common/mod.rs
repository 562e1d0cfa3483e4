//! What the fixture tests share: the REAL returner documents in
//! tests/fixtures/, their shapes (fields and JSON types), format checks, and a
//! generated sample to hold against them.
#![allow(dead_code)] // each test file uses its own share of these

pub mod events;

use saltscope_gen::gen::{Config, Doc, Plan};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

pub fn fixture(name: &str) -> Vec<Value> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let hits: Vec<Value> = serde_json::from_str(&text).unwrap();
    hits.into_iter().map(|h| h["_source"].clone()).collect()
}

pub fn ty(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// field -> set of JSON types seen
pub type Shape = BTreeMap<String, BTreeSet<&'static str>>;

pub fn shape<'a>(docs: impl IntoIterator<Item = &'a Value>) -> Shape {
    let mut s = Shape::new();
    for d in docs {
        for (k, v) in d.as_object().expect("an object") {
            s.entry(k.clone()).or_default().insert(ty(v));
        }
    }
    s
}

/// Generated docs have exactly the real top-level fields, with types the real ones have.
pub fn assert_same_shape(kind: &str, real: &[Value], generated: &[Value]) {
    assert!(!real.is_empty(), "{kind}: no real fixture docs");
    assert!(!generated.is_empty(), "{kind}: nothing generated");
    let want = shape(real);
    let want_keys: BTreeSet<&String> = want.keys().collect();
    for g in generated {
        let keys: BTreeSet<&String> = g.as_object().unwrap().keys().collect();
        assert_eq!(
            keys, want_keys,
            "{kind}: top-level fields differ from the real documents\n{g}"
        );
        for (k, v) in g.as_object().unwrap() {
            assert!(
                want[k].contains(ty(v)),
                "{kind}: {k} is {} but real documents have {:?}\n{g}",
                ty(v),
                want[k]
            );
        }
    }
}

// Regex-free format checks (the patterns are in the names).
pub fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}
/// ^\d\d:\d\d:\d\d(\.\d{6})?$
pub fn is_time_of_day(s: &str) -> bool {
    let b = s.as_bytes();
    (b.len() == 8 || (b.len() == 15 && b[8] == b'.' && is_digits(&s[9..])))
        && b[2] == b':'
        && b[5] == b':'
        && is_digits(&s[0..2])
        && is_digits(&s[3..5])
        && is_digits(&s[6..8])
}
/// ^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$
pub fn is_iso_utc(s: &str) -> bool {
    let Some(body) = s.strip_suffix("+00:00") else {
        return false;
    };
    body.len() >= 19
        && is_digits(&body[0..4])
        && &body[4..5] == "-"
        && is_digits(&body[5..7])
        && &body[7..8] == "-"
        && is_digits(&body[8..10])
        && &body[10..11] == "T"
        && is_time_of_day(&body[11..])
}
/// ^\d{20}$ and a plausible date
pub fn is_jid(s: &str) -> bool {
    s.len() == 20 && is_digits(s) && (&s[4..6] >= "01" && &s[4..6] <= "12") && &s[8..10] <= "23"
}

pub fn check_return_envelope(kind: &str, d: &Value) {
    let ts = d["@timestamp"].as_str().unwrap();
    let jid = d["jid"].as_str().unwrap();
    assert!(is_iso_utc(ts), "{kind}: @timestamp {ts}");
    assert!(is_jid(jid), "{kind}: jid {jid}");
    // the job starts (jid) before the returner runs (@timestamp)
    let ts_digits: String = ts[..26.min(ts.len() - 6)]
        .chars()
        .filter(|c| c.is_ascii_digit())
        .collect();
    assert!(
        jid[..14] <= ts_digits[..14],
        "{kind}: jid {jid} after @timestamp {ts}"
    );
    let retcode = d["retcode"].as_i64().unwrap();
    assert_eq!(
        d["success"].as_bool().unwrap(),
        retcode == 0,
        "{kind}: success must be retcode == 0\n{d}"
    );
}

/// No '.' in any key of `data`, at any depth; every `_orig_key` names a dotted key
/// that was rewritten into a sibling.
pub fn check_keys(kind: &str, v: &Value) {
    match v {
        Value::Object(o) => {
            if let Some(orig) = o.get("_orig_key") {
                let orig = orig
                    .as_str()
                    .unwrap_or_else(|| panic!("{kind}: _orig_key not a string"));
                assert!(
                    orig.contains('.'),
                    "{kind}: _orig_key without a dot: {orig}"
                );
                assert!(
                    o.contains_key(&orig.replace('.', "_")),
                    "{kind}: _orig_key {orig} has no rewritten sibling"
                );
            }
            for (k, sub) in o {
                assert!(!k.contains('.'), "{kind}: dotted key {k:?} left in data");
                check_keys(kind, sub);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| check_keys(kind, x)),
        _ => {}
    }
}

/// The states of a state return, keyed, with their values.
pub fn states(d: &Value) -> Vec<(&String, &Value)> {
    d["data"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v.get("result").is_some())
        .collect()
}

/// Every state key is `<module>_|-<id>_|-<name>_|-<function>` with dots rewritten,
/// with `__id__` and `name` taken from the value.
pub fn check_state_key(kind: &str, key: &str, st: &Value) {
    let parts: Vec<&str> = key.split("_|-").collect();
    assert_eq!(
        parts.len(),
        4,
        "{kind}: state key {key:?} is not <module>_|-<id>_|-<name>_|-<fun>"
    );
    let id = st["__id__"].as_str().unwrap().replace('.', "_");
    let name = st["name"].as_str().unwrap().replace('.', "_");
    assert_eq!(
        format!("{}_|-{id}_|-{name}_|-{}", parts[0], parts[3]),
        key,
        "{kind}: key does not match __id__/name"
    );
    assert!(
        parts[0]
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_'),
        "{kind}: module {}",
        parts[0]
    );
}

/// Which top-level `data` objects need an `_orig_key`: any state whose key had a dot.
pub fn check_orig_key_present(kind: &str, d: &Value) {
    let needs = states(d).iter().any(|(_, st)| {
        st["__id__"].as_str().unwrap().contains('.') || st["name"].as_str().unwrap().contains('.')
    });
    assert_eq!(
        d["data"].get("_orig_key").is_some(),
        needs,
        "{kind}: _orig_key presence wrong\n{d}"
    );
    if let Some(orig) = d["data"].get("_orig_key").and_then(|v| v.as_str()) {
        assert!(
            orig.contains("_|-"),
            "{kind}: data._orig_key should be an original state key: {orig}"
        );
    }
}

pub fn real_state_docs() -> Vec<Value> {
    let mut v = Vec::new();
    for f in [
        "state_apply_multi.json",
        "state_apply_test.json",
        "salt_call_state_layouts.json",
        "state_single.json",
    ] {
        v.extend(fixture(f));
    }
    // render errors are state returns too, but not state-shaped
    v.into_iter()
        .filter(|d| d["data"].get("return").is_none())
        .collect()
}

/// A document and its engine id, if it has one.
pub type IdDoc = (Option<String>, Value);

pub struct Generated {
    pub by_index: BTreeMap<String, Vec<IdDoc>>,
    /// `{<name>: {jid, fun, index, minions, returns, missing, …}}`
    pub specials: Value,
}

pub fn generate(cfg: Config) -> Generated {
    let plan = Plan::new(cfg);
    let mut by_index: BTreeMap<String, Vec<IdDoc>> = BTreeMap::new();
    let mut add = |d: Doc| {
        // what goes over the wire, parsed back like the engine does
        let v: Value = serde_json::from_str(&d.body.to_json()).expect("generated JSON parses");
        by_index.entry(d.index).or_default().push((d.id, v));
    };
    let mut docs: Vec<Doc> = Vec::new();
    for j in 0..plan.jobs.len() {
        docs.clear();
        plan.job_docs(j, &mut docs);
        docs.drain(..).for_each(&mut add);
    }
    let mut special_returns = 0;
    for (k, job) in plan.specials.iter().enumerate() {
        plan.special_docs_to(k, &mut add);
        special_returns += job.returning.len() as u64;
    }
    for u in 0..plan.noise_units.len() {
        plan.noise_docs_to(u, &mut add);
    }
    let returns: usize = by_index
        .iter()
        .filter(|(k, _)| !k.contains("-master-"))
        .map(|(_, v)| v.len())
        .sum();
    assert_eq!(
        returns as u64,
        plan.cfg.returns + special_returns,
        "exactly --returns return documents, and the special jobs' on top"
    );
    assert_eq!(returns as u64, plan.return_docs());
    let specials = serde_json::from_str(&plan.specials_summary().to_json()).unwrap();
    Generated { by_index, specials }
}

impl Generated {
    pub fn docs(&self, index: &str) -> Vec<Value> {
        self.by_index
            .get(index)
            .map(|v| v.iter().map(|(_, d)| d.clone()).collect())
            .unwrap_or_default()
    }

    /// The return documents, publish events and job-cache documents of one jid.
    pub fn job(&self, jid: &str) -> (Vec<Value>, Vec<Value>, Vec<IdDoc>) {
        let (mut returns, mut events, mut cache) = (vec![], vec![], vec![]);
        for (index, docs) in &self.by_index {
            for (id, d) in docs {
                if index.ends_with("-master-event-cache") {
                    if d["data"]["jid"] == jid {
                        events.push(d.clone());
                    }
                } else if index.ends_with("-master-job-cache") {
                    if d["jid"] == jid {
                        cache.push((id.clone(), d.clone()));
                    }
                } else if d["jid"] == jid {
                    returns.push(d.clone());
                }
            }
        }
        (returns, events, cache)
    }

    /// The jid of special job `name`, from the summary.
    pub fn special_jid(&self, name: &str) -> String {
        self.specials[name]["jid"]
            .as_str()
            .unwrap_or_else(|| panic!("no special job {name} in {}", self.specials))
            .to_string()
    }
}

pub fn sample() -> Generated {
    generate(Config {
        returns: 30_000,
        minions: 400,
        seed: 7,
        ..Config::default()
    })
}

/// The states of the real state returns: every field with its JSON types, and
/// the fields every one of them has.
pub struct RealStates {
    pub fields: Shape,
    pub always: BTreeSet<String>,
}

impl RealStates {
    pub fn new() -> RealStates {
        let mut fields = Shape::new();
        let mut always: Option<BTreeSet<String>> = None;
        for d in &real_state_docs() {
            for (_, st) in states(d) {
                for (k, v) in st.as_object().unwrap() {
                    fields.entry(k.clone()).or_default().insert(ty(v));
                }
                let keys: BTreeSet<String> = st.as_object().unwrap().keys().cloned().collect();
                always = Some(match always {
                    None => keys,
                    Some(a) => a.intersection(&keys).cloned().collect(),
                });
            }
        }
        RealStates {
            fields,
            always: always.unwrap(),
        }
    }

    /// A generated state: its key, only fields real states have, with their
    /// types, every field all real states have, a time of day, a float duration.
    pub fn check(&self, kind: &str, key: &str, st: &Value, seen: &mut BTreeSet<String>) {
        check_state_key(kind, key, st);
        let o = st.as_object().unwrap();
        for (k, v) in o {
            seen.insert(k.clone());
            let t = self
                .fields
                .get(k)
                .unwrap_or_else(|| panic!("{kind}: state field {k} is not in any real state"));
            assert!(
                t.contains(ty(v)),
                "{kind}: state field {k} is {} but real states have {t:?}",
                ty(v)
            );
        }
        for k in &self.always {
            assert!(
                o.contains_key(k),
                "{kind}: state {key} lacks {k}, which every real state has"
            );
        }
        assert!(
            is_time_of_day(st["start_time"].as_str().unwrap()),
            "start_time {}",
            st["start_time"]
        );
        assert!(st["duration"].is_f64());
    }
}
