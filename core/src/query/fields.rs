use serde_json::Value;

use crate::model::SUMMARY_VERSION_FIELD;

/// Which field to aggregate and filter on for each logical field. Dynamic
/// mappings make strings `text` with a `.keyword` subfield; the project's
/// index template maps them as `keyword` directly. `_field_caps` tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldMap {
    pub jid: String,
    pub minion: String,
    pub fun: String,
    pub tag: String,
    /// An event's `data.id` (the minion) and `data.jid`.
    pub event_minion: String,
    pub event_jid: String,
    /// The publish event's `data.user`, `data.fun`, `data.tgt`.
    pub event_user: String,
    pub event_fun: String,
    pub event_target: String,
    /// The publish event's `data.minions`: every minion a job targeted.
    pub event_targets: String,
    /// The job-cache load's `load.user`, `load.fun`, `load.tgt`.
    pub cache_user: String,
    pub cache_fun: String,
    pub cache_target: String,
    /// Logical fields the mapping does not have at all (no index has seen
    /// them yet): the views still query, and say why nothing matches.
    pub unmapped: Vec<String>,
    /// The returns carry the summary pipeline's fields
    /// ([`crate::model::RunSummary`]): the project's index template and
    /// ingest pipeline are installed.
    pub summary: bool,
}

/// The fields, by their names in the documents.
const NAMES: [&str; 13] = [
    "jid",
    "minion",
    "fun",
    "tag",
    "data.id",
    "data.jid",
    "data.user",
    "data.fun",
    "data.tgt",
    "data.minions",
    "load.user",
    "load.fun",
    "load.tgt",
];

impl Default for FieldMap {
    /// Dynamic mappings, the returner's default.
    fn default() -> Self {
        FieldMap::pick(|name| format!("{name}.keyword"))
    }
}

impl FieldMap {
    fn pick(f: impl Fn(&str) -> String) -> FieldMap {
        let [jid, minion, fun, tag, event_minion, event_jid, event_user, event_fun, event_target, event_targets, cache_user, cache_fun, cache_target] =
            NAMES.map(f);
        FieldMap {
            jid,
            minion,
            fun,
            tag,
            event_minion,
            event_jid,
            event_user,
            event_fun,
            event_target,
            event_targets,
            cache_user,
            cache_fun,
            cache_target,
            unmapped: Vec::new(),
            summary: false,
        }
    }

    /// The `fields` parameter for the `_field_caps` request.
    pub fn caps_fields() -> String {
        NAMES
            .iter()
            .flat_map(|n| [n.to_string(), format!("{n}.keyword")])
            .chain([SUMMARY_VERSION_FIELD.to_string()])
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Reads a `_field_caps` answer. A field that is `keyword` itself is used
    /// as it is; otherwise its `.keyword` subfield. A field that is neither
    /// keeps the dynamic-mapping name: its queries then find nothing rather
    /// than failing, and `unmapped` says why.
    pub fn from_field_caps(answer: &Value) -> FieldMap {
        let fields = answer.get("fields");
        let types = |name: &str| fields.and_then(|f| f.get(name)).and_then(Value::as_object);
        let mut map = FieldMap::pick(|name| {
            let keyword_only =
                types(name).is_some_and(|t| t.len() == 1 && t.contains_key("keyword"));
            if keyword_only {
                name.to_string()
            } else {
                format!("{name}.keyword")
            }
        });
        map.unmapped = NAMES
            .iter()
            .filter(|n| types(n).is_none() && types(&format!("{n}.keyword")).is_none())
            .map(|n| n.to_string())
            .collect();
        map.summary = types(SUMMARY_VERSION_FIELD).is_some();
        map
    }

    /// Whether the returns' own fields are mapped (an engine with no Salt
    /// returns yet has none).
    pub fn returns_unmapped(&self) -> Vec<&str> {
        self.unmapped
            .iter()
            .map(String::as_str)
            .filter(|n| ["jid", "minion", "fun"].contains(n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dynamic_mappings_use_the_keyword_subfield() {
        let caps = json!({"indices": ["salt-cmd_run-v1"], "fields": {
            "jid": {"text": {"type": "text", "searchable": true, "aggregatable": false}},
            "jid.keyword": {"keyword": {"type": "keyword", "searchable": true, "aggregatable": true}}
        }});
        let f = FieldMap::from_field_caps(&caps);
        assert_eq!(f.jid, "jid.keyword");
        assert!(!f.unmapped.contains(&"jid".to_string()));
        assert!(f.unmapped.contains(&"minion".to_string()));
    }

    #[test]
    fn the_index_template_maps_keywords_directly() {
        let caps = json!({"fields": {
            "jid": {"keyword": {"type": "keyword", "aggregatable": true}},
            "minion": {"keyword": {"type": "keyword", "aggregatable": true}},
            "data.user": {"keyword": {"type": "keyword", "aggregatable": true}}
        }});
        let f = FieldMap::from_field_caps(&caps);
        assert_eq!(f.jid, "jid");
        assert_eq!(f.minion, "minion");
        assert_eq!(f.event_user, "data.user");
        assert_eq!(f.fun, "fun.keyword");
        assert_eq!(f.returns_unmapped(), ["fun"]);
    }

    #[test]
    fn caps_ask_for_both_spellings_of_every_field() {
        let fields = FieldMap::caps_fields();
        assert!(fields.contains("jid,jid.keyword"));
        assert!(fields.contains("load.tgt,load.tgt.keyword"));
        assert!(fields.contains("saltscope.summary_version"));
    }

    #[test]
    fn the_summary_pipeline_is_known_by_its_version_field() {
        assert!(!FieldMap::from_field_caps(&json!({"fields": {}})).summary);
        let caps = json!({"fields": {"saltscope.summary_version":
            {"integer": {"type": "integer", "aggregatable": true}}}});
        assert!(FieldMap::from_field_caps(&caps).summary);
    }
}
