use serde_json::Value;

/// Which field to aggregate and filter on for each logical field. Dynamic
/// mappings make strings `text` with a `.keyword` subfield; the project's
/// index template maps them as `keyword` directly. `_field_caps` tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldMap {
    pub jid: String,
    pub minion: String,
    pub fun: String,
    pub tag: String,
}

impl Default for FieldMap {
    /// Dynamic mappings, the returner's default.
    fn default() -> Self {
        FieldMap {
            jid: "jid.keyword".into(),
            minion: "minion.keyword".into(),
            fun: "fun.keyword".into(),
            tag: "tag.keyword".into(),
        }
    }
}

impl FieldMap {
    /// The `fields` parameter for the `_field_caps` request.
    pub const CAPS_FIELDS: &'static str =
        "jid,jid.keyword,minion,minion.keyword,fun,fun.keyword,tag,tag.keyword";

    /// Reads a `_field_caps` answer. A field that is `keyword` itself is used
    /// as it is; otherwise its `.keyword` subfield; failing both, the
    /// dynamic-mapping default (the query then finds nothing rather than
    /// failing, and the view says no returns match).
    pub fn from_field_caps(answer: &Value) -> FieldMap {
        let fields = answer.get("fields");
        let pick = |name: &str| -> String {
            let types = fields.and_then(|f| f.get(name)).and_then(Value::as_object);
            let keyword_only = types.is_some_and(|t| t.len() == 1 && t.contains_key("keyword"));
            if keyword_only {
                name.to_string()
            } else {
                format!("{name}.keyword")
            }
        };
        FieldMap {
            jid: pick("jid"),
            minion: pick("minion"),
            fun: pick("fun"),
            tag: pick("tag"),
        }
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
        assert_eq!(FieldMap::from_field_caps(&caps).jid, "jid.keyword");
    }

    #[test]
    fn the_index_template_maps_keywords_directly() {
        let caps = json!({"fields": {
            "jid": {"keyword": {"type": "keyword", "aggregatable": true}},
            "minion": {"keyword": {"type": "keyword", "aggregatable": true}}
        }});
        let f = FieldMap::from_field_caps(&caps);
        assert_eq!(f.jid, "jid");
        assert_eq!(f.minion, "minion");
        assert_eq!(f.fun, "fun.keyword");
    }
}
