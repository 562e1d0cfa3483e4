//! Point in time, as each product spells it: Elasticsearch ≥ 7.10 (default
//! distribution; the OSS build answers an error) opens one with
//! `POST /<index>/_pit`, OpenSearch ≥ 2.4 with
//! `POST /<index>/_search/point_in_time`; `_shard_doc` sorts under a PIT from
//! Elasticsearch 7.12 and OpenSearch 3.3.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{encode_component, Body, EngineError, HttpRequest, Product, ProductInfo};
use crate::text::json_text;

/// Which point-in-time API an engine has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PitApi {
    Elasticsearch { shard_doc: bool },
    OpenSearch { shard_doc: bool },
}

impl PitApi {
    /// The engine's PIT API by its product and version, before asking it.
    pub fn of(product: &ProductInfo) -> Option<PitApi> {
        let v = product.version_parts;
        match product.product {
            Product::Elasticsearch if v >= (7, 10, 0) => Some(PitApi::Elasticsearch {
                shard_doc: v >= (7, 12, 0),
            }),
            Product::OpenSearch if v >= (2, 4, 0) => Some(PitApi::OpenSearch {
                shard_doc: v >= (3, 3, 0),
            }),
            _ => None,
        }
    }

    pub fn shard_doc(self) -> bool {
        match self {
            PitApi::Elasticsearch { shard_doc } | PitApi::OpenSearch { shard_doc } => shard_doc,
        }
    }

    /// Opens a PIT over `index` (OpenSearch refusing one over only some
    /// shards: that would be a short file).
    pub fn open_request(self, index: &str, keep_alive: &str) -> HttpRequest {
        let (index, ka) = (encode_component(index), encode_component(keep_alive));
        let path = match self {
            PitApi::Elasticsearch { .. } => format!("/{index}/_pit?keep_alive={ka}"),
            PitApi::OpenSearch { .. } => format!(
                "/{index}/_search/point_in_time?keep_alive={ka}&allow_partial_pit_creation=false"
            ),
        };
        HttpRequest::post(path, Body::Empty)
    }

    /// The PIT id from the open answer: `{"id": …}` (Elasticsearch) or
    /// `{"pit_id": …}` (OpenSearch).
    pub fn read_open(self, url: &str, answer: &Value) -> Result<String, EngineError> {
        if let Some(e) = EngineError::from_shard_failures(url, answer) {
            return Err(e);
        }
        let field = match self {
            PitApi::OpenSearch { .. } => "pit_id",
            PitApi::Elasticsearch { .. } => "id",
        };
        answer
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| EngineError::BadResponse {
                url: Some(url.to_string()),
                detail: format!(
                    "the point-in-time answer has no `{field}`: {}",
                    json_text(answer)
                ),
            })
    }

    /// `DELETE /_pit {"id"}` or `DELETE /_search/point_in_time {"pit_id": [..]}`.
    pub fn close_request(self, pit_id: &str) -> HttpRequest {
        let (path, body) = match self {
            PitApi::Elasticsearch { .. } => ("/_pit", json!({ "id": pit_id })),
            PitApi::OpenSearch { .. } => ("/_search/point_in_time", json!({ "pit_id": [pit_id] })),
        };
        HttpRequest::delete(path, Body::Json(body))
    }
}

/// Whether opening a PIT failed because the engine has none (Elasticsearch's
/// OSS build, OpenSearch before 2.4, a proxy that does not pass the route):
/// any 4xx but 401 (credentials), 408 and 429 (try again later). A 403
/// counts: a user allowed to search but not to open a PIT (or a proxy that
/// refuses the route) can still export with `search_after`.
pub fn pit_unavailable(error: &EngineError) -> bool {
    matches!(error, EngineError::Status { status, .. }
        if (400..500).contains(status) && ![401, 408, 429].contains(status))
}

/// Whether a search under a PIT failed because the PIT is gone: it expired,
/// or a node holding part of it left the cluster (its shards then fail with
/// "no node found for id", a disconnected node, …). A new PIT over the
/// cluster as it is now can take over.
pub fn pit_lost(error: &EngineError) -> bool {
    if pit_expired(error) {
        return true;
    }
    let EngineError::Status { kind, reason, .. } = error else {
        return false;
    };
    // A node shutting down or gone: its transport fails, its shards are
    // not there (yet) on the node asked.
    let shards_gone = [
        "no_shard_available_action_exception",
        "shard_not_found_exception",
    ];
    error.is_node_gone()
        || kind
            .as_deref()
            .is_some_and(|k| shards_gone.contains(&k) || k.ends_with("transport_exception"))
        || reason.contains("no node found for id")
}

/// Whether a search failed because its PIT expired (or the node holding it
/// restarted).
pub fn pit_expired(error: &EngineError) -> bool {
    match error {
        EngineError::Status {
            kind,
            reason,
            status,
            ..
        } => {
            kind.as_deref() == Some("search_context_missing_exception")
                || (*status == 404
                    && (reason.contains("No search context found")
                        || reason.contains("search_context_missing")))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn product(p: Product, v: (u32, u32, u32)) -> ProductInfo {
        ProductInfo {
            product: p,
            version: format!("{}.{}.{}", v.0, v.1, v.2),
            version_parts: v,
            cluster_name: "c".into(),
        }
    }

    #[test]
    fn each_product_and_version_has_its_pit_api() {
        assert_eq!(
            PitApi::of(&product(Product::Elasticsearch, (7, 9, 0))),
            None
        );
        assert_eq!(
            PitApi::of(&product(Product::Elasticsearch, (7, 10, 2))),
            Some(PitApi::Elasticsearch { shard_doc: false })
        );
        assert_eq!(
            PitApi::of(&product(Product::OpenSearch, (3, 8, 0))),
            Some(PitApi::OpenSearch { shard_doc: true })
        );
        assert_eq!(PitApi::of(&product(Product::OpenSearch, (2, 3, 0))), None);
    }

    #[test]
    fn opening_and_closing_speak_each_products_dialect() {
        let es = PitApi::Elasticsearch { shard_doc: true };
        let os = PitApi::OpenSearch { shard_doc: false };
        assert_eq!(
            es.open_request("salt-*", "2m").path,
            "/salt-*/_pit?keep_alive=2m"
        );
        assert!(os
            .open_request("salt-*", "2m")
            .path
            .ends_with("allow_partial_pit_creation=false"));
        assert_eq!(es.read_open("u", &json!({"id": "a"})).unwrap(), "a");
        assert_eq!(os.read_open("u", &json!({"pit_id": "b"})).unwrap(), "b");
        assert!(os.read_open("u", &json!({"id": "b"})).is_err());
        assert_eq!(
            os.close_request("b").body,
            Body::Json(json!({"pit_id": ["b"]}))
        );
    }

    #[test]
    fn a_pit_over_only_some_shards_is_refused_as_a_short_file() {
        let partial = json!({"pit_id": "o1", "_shards": {"total": 2, "successful": 1, "failed": 1,
            "failures": [{"reason": {"type": "node_not_connected_exception", "reason": "gone"}}]}});
        assert!(PitApi::OpenSearch { shard_doc: true }
            .read_open("u", &partial)
            .is_err());
    }

    #[test]
    fn elasticsearch_oss_answers_the_pit_route_as_another_route() {
        let status = |s: u16, kind: &str, reason: &str| EngineError::Status {
            url: "u".into(),
            status: s,
            kind: Some(kind.to_string()).filter(|k| !k.is_empty()),
            reason: reason.into(),
        };
        assert!(pit_unavailable(&status(
            400,
            "invalid_index_name_exception",
            "must not contain '*'"
        )));
        assert!(pit_unavailable(&status(
            405,
            "",
            "Incorrect HTTP method for uri [/salt-*/_pit]"
        )));
        assert!(!pit_unavailable(&EngineError::Unreachable {
            url: "u".into(),
            detail: "down".into()
        }));
        assert!(pit_expired(&status(
            404,
            "search_context_missing_exception",
            "No search context found for id [1]"
        )));
        assert!(!pit_expired(&status(
            404,
            "index_not_found_exception",
            "no such index"
        )));
    }

    #[test]
    fn a_node_that_left_the_cluster_loses_the_pit() {
        // As OpenSearch 3.8 answers a PIT search after one of three nodes stopped.
        let answer = json!({"_shards": {"total": 3, "successful": 2, "skipped": 0, "failed": 1, "failures": [
            {"shard": 2, "index": "pittest", "node": "6HJo0e29QvmJWu7lDdtTGw",
             "reason": {"type": "illegal_state_exception", "reason": "no node found for id: 6HJo0e29QvmJWu7lDdtTGw"}}]},
            "hits": {"hits": []}});
        let e = EngineError::from_shard_failures("u", &answer).unwrap();
        assert!(pit_lost(&e), "{e}");
        let syntax = EngineError::Status {
            url: "u".into(),
            status: 400,
            kind: Some("query_shard_exception".into()),
            reason: "Failed to parse".into(),
        };
        assert!(!pit_lost(&syntax));
    }

    #[test]
    fn missing_credentials_or_a_busy_engine_are_not_a_missing_pit_api() {
        let status = |s| EngineError::Status {
            url: "u".into(),
            status: s,
            kind: None,
            reason: String::new(),
        };
        assert!(pit_unavailable(&status(400)));
        assert!(pit_unavailable(&status(404)));
        assert!(pit_unavailable(&status(403)));
        for s in [401, 408, 429, 500] {
            assert!(!pit_unavailable(&status(s)), "{s}");
        }
    }
}
