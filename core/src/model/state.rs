use crate::sort;
use serde_json::{Map, Value};

/// A state's key in a state return, after the returner's dot rewriting:
/// `[<run number>_|-]<module>_|-<id>_|-<name>_|-<function>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateKey {
    /// The `states_order_output` prefix, present on some keys only.
    pub order_prefix: Option<u64>,
    pub module: String,
    pub id: String,
    pub name: String,
    pub function: String,
}

const SEP: &str = "_|-";

/// Decodes a state key. The ID and name may themselves hold `_|-` after
/// rewriting, so module and function are taken from the ends. Dots in the
/// ID and name are unrecoverable here (they became `_`): callers prefer the
/// state's own `__id__` and `name` fields.
pub fn decode_state_key(key: &str) -> Option<StateKey> {
    let mut rest = key;
    let mut order_prefix = None;
    if let Some((head, tail)) = rest.split_once(SEP) {
        // Digits too many for a u64 are no run number: the key's module.
        let number = head
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| head.parse::<u64>().ok())
            .flatten();
        if number.is_some() && tail.matches(SEP).count() >= 3 {
            order_prefix = number;
            rest = tail;
        }
    }
    let (module, rest) = rest.split_once(SEP)?;
    let (rest, function) = rest.rsplit_once(SEP)?;
    let (id, name) = rest.split_once(SEP)?;
    Some(StateKey {
        order_prefix,
        module: module.to_string(),
        id: id.to_string(),
        name: name.to_string(),
        function: function.to_string(),
    })
}

/// A state's `result`: True, False, or None (test mode: "would change").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateResult {
    True,
    False,
    None,
}

impl StateResult {
    /// A state's `result` field: anything but a boolean reads as None.
    pub fn of(result: Option<&Value>) -> StateResult {
        match result {
            Some(Value::Bool(true)) => StateResult::True,
            Some(Value::Bool(false)) => StateResult::False,
            _ => StateResult::None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            StateResult::True => "True",
            StateResult::False => "False",
            StateResult::None => "None",
        }
    }
}

/// A state's `duration` in ms; older returns hold "12.3 ms" (a number as
/// Python prints it, which JSON's number grammar reads: serde_json's parser
/// is in the wasm anyway, the standard library's float parser and its
/// tables need not be). Text that is no number (`NaN`, `inf`) is none: it
/// would make the total run time NaN or infinite.
pub(crate) fn read_duration_ms(duration: &Value) -> Option<f64> {
    match duration {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => {
            serde_json::from_slice(s.trim().trim_end_matches("ms").trim().as_bytes()).ok()
        }
        _ => None,
    }
    .filter(|ms: &f64| ms.is_finite())
}

/// One entry of a state return: one state, as it ran on one minion.
#[derive(Clone, Debug, PartialEq)]
pub struct StateRun {
    /// The key as stored in the document.
    pub key: String,
    pub run_num: Option<u64>,
    /// `__id__`, with its dots; the key's ID only when the field is missing.
    pub id: String,
    /// `file.managed`: `_func` where the returner added it, else the key's
    /// module and function (neither holds a dot, so both survive rewriting).
    pub function: String,
    pub name: String,
    pub sls: Option<String>,
    pub result: StateResult,
    pub comment: String,
    pub changes: Value,
    pub duration_ms: Option<f64>,
    pub start_time: Option<String>,
    /// `__state_ran__`: false when a requisite failed and the state never ran.
    pub state_ran: Option<bool>,
    pub warnings: Vec<String>,
}

/// A state across runs: module, ID and name from its key. Salt keeps an ID
/// unique per module; the key's order prefix and the function may differ
/// from run to run (`test.succeed_without_changes` → `test.fail_…`).
pub type StateIdentity = (String, String, String);

impl StateRun {
    /// This state's [`StateIdentity`]; a key that does not decode is its
    /// own identity.
    pub fn identity(&self) -> StateIdentity {
        match decode_state_key(&self.key) {
            Some(k) => (k.module, k.id, k.name),
            None => (self.key.clone(), String::new(), String::new()),
        }
    }

    /// Salt counts a state as changed when its `changes` are not empty,
    /// whatever its result.
    pub fn changed(&self) -> bool {
        match &self.changes {
            Value::Null => false,
            Value::Object(m) => m.keys().any(|k| k != "_orig_key"),
            Value::Array(a) => !a.is_empty(),
            Value::String(s) => !s.is_empty(),
            _ => true,
        }
    }

    fn read(key: &str, fields: &Map<String, Value>, notes: &mut Vec<String>) -> StateRun {
        let decoded = decode_state_key(key);
        if decoded.is_none() {
            notes.push(format!(
                "state key `{key}` is not of the form module_|-id_|-name_|-function"
            ));
        }
        let text = |name: &str| fields.get(name).and_then(Value::as_str).map(str::to_string);
        let function = text("_func").unwrap_or_else(|| match &decoded {
            Some(k) => format!("{}.{}", k.module, k.function),
            None => String::new(),
        });
        let result = StateResult::of(fields.get("result"));
        let comment = match fields.get("comment") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(lines)) => lines
                .iter()
                .map(crate::text::scalar_text)
                .collect::<Vec<_>>()
                .join("\n"),
            Some(other) => crate::text::scalar_text(other),
            None => String::new(),
        };
        let duration_ms = fields.get("duration").and_then(read_duration_ms);
        let warnings = match fields.get("warnings") {
            Some(Value::Array(items)) => items.iter().map(crate::text::scalar_text).collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        };
        StateRun {
            key: key.to_string(),
            run_num: fields.get("__run_num__").and_then(Value::as_u64),
            id: text("__id__")
                .or_else(|| decoded.as_ref().map(|k| k.id.clone()))
                .unwrap_or_default(),
            function,
            name: text("name")
                .or_else(|| decoded.as_ref().map(|k| k.name.clone()))
                .unwrap_or_default(),
            sls: text("__sls__"),
            result,
            comment,
            changes: fields.get("changes").cloned().unwrap_or(Value::Null),
            duration_ms,
            start_time: text("start_time"),
            state_ran: fields.get("__state_ran__").and_then(Value::as_bool),
            warnings,
        }
    }
}

/// The states of one minion's state return, in run order.
#[derive(Clone, Debug, PartialEq)]
pub struct StateReturn {
    pub runs: Vec<StateRun>,
    /// Entries that are not states (`_orig_key` and the like) are skipped,
    /// as Salt's outputter does; oddities worth telling are kept here.
    pub notes: Vec<String>,
}

impl StateReturn {
    /// Reads `data` as a state return when any entry looks like a state
    /// (an object with `result`); `None` when nothing does.
    pub fn read(data: &Map<String, Value>) -> Option<StateReturn> {
        let mut notes = Vec::new();
        let mut runs: Vec<StateRun> = data
            .iter()
            .filter_map(|(key, value)| {
                let fields = value.as_object()?;
                fields
                    .contains_key("result")
                    .then(|| StateRun::read(key, fields, &mut notes))
            })
            .collect();
        if runs.is_empty() {
            return None;
        }
        let unnumbered = runs.iter().filter(|r| r.run_num.is_none()).count();
        if unnumbered > 0 {
            notes.push(format!(
                "{unnumbered} state(s) have no __run_num__ and are listed last"
            ));
        }
        // The order prefix on keys is optional and unreliable: `__run_num__`
        // decides; the key only breaks ties so the order is stable.
        sort::sort_by(&mut runs, |a, b| {
            (a.run_num.is_none(), a.run_num, &a.key).cmp(&(b.run_num.is_none(), b.run_num, &b.key))
        });
        Some(StateReturn { runs, notes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_state_is_the_same_across_order_prefixes_and_functions() {
        let run = |key: &str| {
            let data = json!({ key: {"result": true} });
            StateReturn::read(data.as_object().unwrap())
                .unwrap()
                .runs
                .remove(0)
        };
        let plain = run("test_|-check_|-check_|-succeed_without_changes");
        let ordered = run("4_|-test_|-check_|-check_|-fail_without_changes");
        assert_eq!(plain.identity(), ordered.identity());
        assert_ne!(
            plain.identity(),
            run("cmd_|-check_|-check_|-run").identity()
        );
    }

    #[test]
    fn keys_decode_with_and_without_the_order_prefix() {
        let plain = decode_state_key("file_|-app_conf_|-/etc/app_conf_|-managed").unwrap();
        assert_eq!(plain.order_prefix, None);
        assert_eq!(
            (
                plain.module.as_str(),
                plain.id.as_str(),
                plain.name.as_str(),
                plain.function.as_str()
            ),
            ("file", "app_conf", "/etc/app_conf", "managed")
        );
        let ordered = decode_state_key("07_|-cmd_|-run it_|-echo 1_|-run").unwrap();
        assert_eq!(ordered.order_prefix, Some(7));
        assert_eq!(ordered.id, "run it");
        assert_eq!(ordered.function, "run");
    }

    #[test]
    fn a_numeric_state_id_is_not_mistaken_for_an_order_prefix() {
        let key = decode_state_key("test_|-42_|-42_|-nop").unwrap();
        assert_eq!(key.order_prefix, None);
        assert_eq!(key.id, "42");
    }

    #[test]
    fn digits_past_u64_are_the_module_not_a_prefix_that_vanishes() {
        // The prefix was dropped with no number left to show for it.
        let key = decode_state_key("18446744073709551616_|-cmd_|-a_|-b_|-run").unwrap();
        assert_eq!(key.order_prefix, None);
        assert_eq!(
            (key.module.as_str(), key.id.as_str(), key.name.as_str()),
            ("18446744073709551616", "cmd", "a_|-b")
        );
        let max = decode_state_key("18446744073709551615_|-cmd_|-a_|-b_|-run").unwrap();
        assert_eq!(max.order_prefix, Some(u64::MAX));
    }

    #[test]
    fn names_with_dots_come_from_the_fields_not_the_rewritten_key() {
        let data = json!({
            "file_|-app_conf_|-/etc/app_conf_|-managed": {
                "result": true, "comment": "ok", "changes": {}, "__id__": "app.conf",
                "name": "/etc/app.conf", "__run_num__": 0, "__sls__": "web.app",
                "_orig_key": "ignored"
            },
            "_orig_key": "file_|-app.conf_|-/etc/app.conf_|-managed"
        });
        let states = StateReturn::read(data.as_object().unwrap()).unwrap();
        assert_eq!(states.runs.len(), 1, "_orig_key is not a state");
        assert_eq!(states.runs[0].id, "app.conf");
        assert_eq!(states.runs[0].name, "/etc/app.conf");
        assert_eq!(states.runs[0].function, "file.managed");
        assert_eq!(states.runs[0].sls.as_deref(), Some("web.app"));
    }

    #[test]
    fn states_are_ordered_by_run_num_whatever_the_key_prefix() {
        let data = json!({
            "1_|-test_|-b_|-b_|-nop": {"result": true, "__run_num__": 2, "changes": {}},
            "test_|-a_|-a_|-nop": {"result": true, "__run_num__": 10, "changes": {}},
            "0_|-test_|-c_|-c_|-nop": {"result": false, "__run_num__": 1, "changes": {}},
            "test_|-d_|-d_|-nop": {"result": null, "changes": {}}
        });
        let states = StateReturn::read(data.as_object().unwrap()).unwrap();
        let ids: Vec<_> = states.runs.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["c", "b", "a", "d"]);
        assert_eq!(states.runs[3].result, StateResult::None);
        assert!(states.notes[0].contains("no __run_num__"));
    }

    #[test]
    fn list_comments_and_string_durations_from_older_returns_are_read() {
        let data = json!({"cmd_|-x_|-x_|-run": {
            "result": false, "comment": ["line one", "line two"], "duration": "12.5 ms",
            "changes": {"retcode": 1}, "__state_ran__": false
        }});
        let run = &StateReturn::read(data.as_object().unwrap()).unwrap().runs[0];
        assert_eq!(run.comment, "line one\nline two");
        assert_eq!(run.duration_ms, Some(12.5));
        assert_eq!(run.state_ran, Some(false));
        assert!(run.changed());
    }

    #[test]
    fn a_nan_or_infinite_duration_text_is_no_duration() {
        for text in ["NaN", "nan ms", "inf", "-inf ms", "infinity"] {
            assert_eq!(read_duration_ms(&json!(text)), None, "{text}");
        }
        assert_eq!(read_duration_ms(&json!(" 12.5 ms ")), Some(12.5));
        assert_eq!(read_duration_ms(&json!(1e300)), Some(1e300));
    }

    #[test]
    fn two_states_with_one_id_stay_distinct() {
        let data = json!({
            "pkg_|-web_|-nginx_|-installed": {"result": true, "__id__": "web", "__run_num__": 0, "changes": {}},
            "service_|-web_|-nginx_|-running": {"result": true, "__id__": "web", "__run_num__": 1, "changes": {}}
        });
        let runs = StateReturn::read(data.as_object().unwrap()).unwrap().runs;
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].function, "pkg.installed");
        assert_eq!(runs[1].function, "service.running");
    }

    #[test]
    fn an_object_without_states_is_not_a_state_return() {
        assert!(StateReturn::read(json!({"os": "Debian"}).as_object().unwrap()).is_none());
    }

    #[test]
    fn empty_or_orig_key_only_changes_are_not_changes() {
        let data = json!({
            "a_|-a_|-a_|-a": {"result": true, "__run_num__": 0, "changes": {"_orig_key": "x.y"}},
            "b_|-b_|-b_|-b": {"result": true, "__run_num__": 1, "changes": {"diff": "New file"}}
        });
        let runs = StateReturn::read(data.as_object().unwrap()).unwrap().runs;
        assert!(!runs[0].changed());
        assert!(runs[1].changed());
    }
}
