//! The engine under test for the native integration tests: the core's own
//! native transport and start-up, so the tests call the very functions the
//! web app calls (`saltscope_core::views`), against the real engine.

#![allow(dead_code)]

use std::time::Duration;

use saltscope_core::config::AppConfig;
use saltscope_core::engine::native::{block_on, native_client, NativeTransport};
use saltscope_core::engine::{send_json, Body, HttpRequest};
use saltscope_core::query::QueryContext;
use saltscope_core::views::{self, Connection};
use serde_json::{json, Value};

/// "Now" for the views' relative time ranges: a minute ahead, so every
/// real return (written moments ago) is inside the default range.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
        + 60_000
}

pub struct TestEngine {
    pub transport: NativeTransport,
    pub connection: Connection,
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
    let transport = native_client(&[&url], Duration::from_secs(120));
    let config = AppConfig {
        engine_url: vec![url.trim_end_matches('/').to_string()],
        ..AppConfig::default()
    };
    let connection = block_on(views::connect(&transport, config)).expect("start-up");
    Some(TestEngine {
        transport,
        connection,
    })
}

/// What scripts/salt-data.sh ran: scenario → jid(s), minions, targets.
pub fn manifest() -> Value {
    let work = std::env::var("SALTSCOPE_WORK")
        .unwrap_or_else(|_| format!("{}/.work", env!("CARGO_MANIFEST_DIR")));
    let path = format!("{work}/salt-data/manifest.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

impl TestEngine {
    /// The views' context with no noisy functions hidden, now.
    pub fn ctx(&self) -> QueryContext {
        self.connection.context(Vec::new(), now_ms())
    }

    /// Every return document of the engine, by a plain search: what the
    /// views must agree with.
    pub fn all_returns(&self) -> Vec<Value> {
        let body = json!({
            "size": 10000,
            "query": {"bool": {"filter": [{"exists": {"field": "minion"}}],
                "must_not": [{"prefix": {"_index": "salt-master-"}}]}}
        });
        let path = format!("/{}/_search", self.connection.config.index_pattern);
        let answer = block_on(send_json(
            &self.transport,
            &HttpRequest::post(path, Body::Json(body)),
        ))
        .expect("search all returns");
        answer["hits"]["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}
