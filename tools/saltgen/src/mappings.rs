//! Create-index bodies taken from the project's index templates
//! (deploy/index-template/), for the indices the generator fills with what a
//! dynamic mapping would refuse.

/// The project's index template for object-shaped returns (state.apply among them).
const OBJECTS_TEMPLATE: &str =
    include_str!("../../../deploy/index-template/salt-returns-objects.json");

/// The create-index body of `<prefix>-state_apply-v1` when it is to hold a
/// `--states-per-return` return: the mappings of deploy/index-template's
/// `salt-returns-objects` in its default variant (`data` kept in `_source`, not
/// indexed), as an operator with the project's templates installed has them.
/// With the dynamic mapping the returner gets by default, every state key is a
/// field, and the engine refuses a return past 1000 fields (see
/// tests/fixtures/README.md): no 10,000-state return is ever stored that way.
pub fn big_state_index_body() -> Result<serde_json::Value, String> {
    let t: serde_json::Value = serde_json::from_str(OBJECTS_TEMPLATE)
        .map_err(|e| format!("salt-returns-objects.json: {e}"))?;
    let mut mappings = t
        .pointer("/template/mappings")
        .cloned()
        .ok_or("salt-returns-objects.json: no template.mappings")?;
    // The template file holds the flat_object variant, which refuses any value
    // over 32766 bytes; scripts/index-template.sh installs `enabled: false` by default.
    let data = mappings
        .pointer_mut("/properties/data")
        .ok_or("salt-returns-objects.json: no properties.data")?;
    *data = serde_json::json!({"type": "object", "enabled": false});
    Ok(serde_json::json!({
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": mappings,
    }))
}

/// The project's catch-all return template and the summary pipeline it names.
const RETURNS_TEMPLATE: &str = include_str!("../../../deploy/index-template/salt-returns.json");
const SUMMARY_PIPELINE: &str = include_str!("../../../deploy/ingest/salt-return-summary.json");

/// The summary pipeline's name and its body (without `_comment`), for
/// `PUT /_ingest/pipeline/<name>`.
pub fn summary_pipeline() -> Result<(String, serde_json::Value), String> {
    let t: serde_json::Value =
        serde_json::from_str(RETURNS_TEMPLATE).map_err(|e| format!("salt-returns.json: {e}"))?;
    let name = t
        .pointer("/template/settings/index/default_pipeline")
        .and_then(serde_json::Value::as_str)
        .ok_or("salt-returns.json: no template.settings.index.default_pipeline")?
        .to_string();
    let mut body: serde_json::Value = serde_json::from_str(SUMMARY_PIPELINE)
        .map_err(|e| format!("salt-return-summary.json: {e}"))?;
    if let Some(o) = body.as_object_mut() {
        o.remove("_comment");
    }
    Ok((name, body))
}

/// The create-index body of a return index with `--summary-pipeline`: the
/// mappings and settings of deploy/index-template's `salt-returns` (`data`
/// stored, not indexed; the `saltscope.*` summary fields; the summary
/// pipeline as `index.default_pipeline`), as an operator who installed the
/// templates has them.
pub fn summarised_index_body() -> Result<serde_json::Value, String> {
    let t: serde_json::Value =
        serde_json::from_str(RETURNS_TEMPLATE).map_err(|e| format!("salt-returns.json: {e}"))?;
    let mappings = t
        .pointer("/template/mappings")
        .cloned()
        .ok_or("salt-returns.json: no template.mappings")?;
    let pipeline = t
        .pointer("/template/settings/index/default_pipeline")
        .cloned()
        .ok_or("salt-returns.json: no default_pipeline")?;
    Ok(serde_json::json!({
        "settings": {"number_of_shards": 1, "number_of_replicas": 0,
                     "index": {"default_pipeline": pipeline}},
        "mappings": mappings,
    }))
}

/// The project's index template for the master event cache.
const EVENT_CACHE_TEMPLATE: &str =
    include_str!("../../../deploy/index-template/salt-master-event-cache.json");

/// The create-index body of `<prefix>-master-event-cache-v1` with `--events`:
/// the mappings of deploy/index-template's `salt-master-event-cache`, as an
/// operator with the project's templates installed has them. Under the
/// dynamic mapping the first event decides each field's type and the engine
/// then refuses every `ret` event whose `return` is of another type (and every
/// `new` event whose `arg` holds a kwargs object): see tests/fixtures/README.md.
pub fn event_cache_index_body() -> Result<serde_json::Value, String> {
    let t: serde_json::Value = serde_json::from_str(EVENT_CACHE_TEMPLATE)
        .map_err(|e| format!("salt-master-event-cache.json: {e}"))?;
    let mappings = t
        .pointer("/template/mappings")
        .cloned()
        .ok_or("salt-master-event-cache.json: no template.mappings")?;
    Ok(serde_json::json!({
        "settings": {"number_of_shards": 1, "number_of_replicas": 0},
        "mappings": mappings,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_big_state_index_keeps_data_out_of_the_mapping() {
        let body = big_state_index_body().expect("the template parses");
        let props = &body["mappings"]["properties"];
        assert_eq!(
            props["data"],
            serde_json::json!({"type": "object", "enabled": false})
        );
        assert_eq!(props["jid"]["type"], "keyword");
        assert_eq!(props["@timestamp"]["type"], "date");
        assert_eq!(body["settings"]["number_of_replicas"], 0);
    }

    #[test]
    fn a_summarised_return_index_runs_the_pipeline_the_template_names() {
        let body = summarised_index_body().expect("the template parses");
        let (name, pipeline) = summary_pipeline().expect("the pipeline parses");
        assert_eq!(body["settings"]["index"]["default_pipeline"], name.as_str());
        assert_eq!(
            body["mappings"]["properties"]["saltscope"]["properties"]["changed"]["enabled"],
            false
        );
        assert_eq!(pipeline["processors"][0]["script"]["lang"], "painless");
        assert!(pipeline.get("_comment").is_none());
    }

    #[test]
    fn the_event_cache_index_maps_what_the_views_filter_on() {
        let body = event_cache_index_body().expect("the template parses");
        let m = &body["mappings"];
        let data = &m["properties"]["data"]["properties"];
        assert_eq!(m["properties"]["tag"]["type"], "keyword");
        for k in ["id", "jid", "fun", "user", "act"] {
            assert_eq!(data[k]["type"], "keyword", "data.{k}");
        }
        assert_eq!(data["success"]["type"], "boolean");
        assert_eq!(data["retcode"]["type"], "long");
        assert_eq!(data["_stamp"]["type"], "date");
        assert_eq!(data["return"]["enabled"], false);
        assert_eq!(data["arg"]["enabled"], false);
        assert_eq!(m["dynamic"], false);
        assert_eq!(m["_meta"]["saltscope_template_version"], 2);
    }
}
