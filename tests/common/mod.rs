//! A blocking client for the native integration tests: the same requests
//! the web app sends (built by saltscope-core), against the real engine.

#![allow(dead_code)]

use saltscope_core::config::AppConfig;
use saltscope_core::engine::{
    msearch_body, split_msearch, EngineError, ProductInfo, SearchRequest,
};
use saltscope_core::query::FieldMap;
use serde_json::Value;

/// "Now" for the views' relative time ranges: a minute ahead, so every
/// real return (written moments ago) is inside the default range.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        + 60_000
}

pub struct TestEngine {
    pub url: String,
    pub config: AppConfig,
    pub fields: FieldMap,
    pub product: ProductInfo,
    agent: ureq::Agent,
}

/// The engine under test, from `ES_URL`. Without it the tests are skipped
/// with a message — unless `SALTSCOPE_REQUIRE_ENGINE=1` (the README's test
/// command sets it), where a missing engine fails.
pub fn engine() -> Option<TestEngine> {
    let Ok(url) = std::env::var("ES_URL") else {
        assert!(
            std::env::var("SALTSCOPE_REQUIRE_ENGINE").as_deref() != Ok("1"),
            "SALTSCOPE_REQUIRE_ENGINE=1 but ES_URL is not set"
        );
        eprintln!("ES_URL not set: skipping engine integration test (scripts/test.sh runs them)");
        return None;
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let config = AppConfig {
        engine_url: url.trim_end_matches('/').to_string(),
        ..AppConfig::default()
    };
    let mut engine = TestEngine {
        url: config.engine_url.clone(),
        config,
        fields: FieldMap::default(),
        product: ProductInfo::from_root("", &serde_json::json!({"version": {"number": "0"}}))
            .unwrap(),
        agent,
    };
    let root = engine.get("/").expect("GET / of the engine");
    engine.product = ProductInfo::from_root(&engine.url, &root).expect("product info");
    let caps = engine
        .get(&format!(
            "/{},{},{}/_field_caps?fields={}&ignore_unavailable=true&allow_no_indices=true",
            engine.config.index_pattern,
            engine.config.event_index_pattern,
            engine.config.job_cache_index,
            FieldMap::caps_fields()
        ))
        .expect("_field_caps");
    engine.fields = FieldMap::from_field_caps(&caps);
    Some(engine)
}

impl TestEngine {
    pub fn get(&self, path: &str) -> Result<Value, EngineError> {
        let url = format!("{}{path}", self.url);
        let response = self.agent.get(&url).call();
        read(&url, response)
    }

    pub fn msearch(&self, searches: &[SearchRequest]) -> Vec<Result<Value, EngineError>> {
        let url = format!("{}/_msearch", self.url);
        let response = self
            .agent
            .post(&url)
            .header("Content-Type", "application/x-ndjson")
            .send(msearch_body(searches));
        let answer = read(&url, response).expect("_msearch");
        split_msearch(&url, &answer, searches.len())
    }

    /// Every return document of the engine, by a plain search: what the
    /// views must agree with.
    pub fn all_returns(&self) -> Vec<Value> {
        let body = serde_json::json!({
            "size": 10000,
            "query": {"bool": {"filter": [{"exists": {"field": "minion"}}],
                "must_not": [{"prefix": {"_index": "salt-master-"}}]}}
        });
        let answer = self
            .msearch(&[SearchRequest::new(&self.config.index_pattern, body)])
            .remove(0)
            .expect("search all returns");
        answer["hits"]["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

fn read(
    url: &str,
    response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Result<Value, EngineError> {
    let mut response = response.map_err(|e| EngineError::Unreachable {
        url: url.into(),
        detail: e.to_string(),
    })?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(256 * 1024 * 1024)
        .read_to_string()
        .map_err(|e| EngineError::Unreachable {
            url: url.into(),
            detail: e.to_string(),
        })?;
    if status >= 400 {
        return Err(EngineError::from_status(url, status, &body));
    }
    serde_json::from_str(&body).map_err(|e| EngineError::BadResponse {
        url: url.into(),
        detail: e.to_string(),
    })
}
