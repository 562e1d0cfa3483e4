use crate::json::At;
use serde_json::Value;

use super::EngineError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Product {
    OpenSearch,
    Elasticsearch,
}

/// What `GET /` says: the product and its version, which decide the API
/// spelling of the few calls that differ (point-in-time, `_shard_doc`).
#[derive(Clone, Debug, PartialEq)]
pub struct ProductInfo {
    pub product: Product,
    pub version: String,
    /// (major, minor, patch), compared as numbers, never as text.
    pub version_parts: (u32, u32, u32),
    pub cluster_name: String,
}

impl ProductInfo {
    pub fn from_root(url: &str, root: &Value) -> Result<ProductInfo, EngineError> {
        let version = root
            .at("/version/number")
            .and_then(Value::as_str)
            .ok_or_else(|| EngineError::BadResponse {
                url: Some(url.to_string()),
                detail: "no version.number: is this Elasticsearch or OpenSearch?".to_string(),
            })?;
        let product =
            if root.at("/version/distribution").and_then(Value::as_str) == Some("opensearch") {
                Product::OpenSearch
            } else {
                Product::Elasticsearch
            };
        let mut parts = version
            .split(|c: char| !c.is_ascii_digit())
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let version_parts = (
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
        );
        Ok(ProductInfo {
            product,
            version: version.to_string(),
            version_parts,
            cluster_name: root
                .get("cluster_name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        })
    }

    pub fn label(&self) -> String {
        let name = match self.product {
            Product::OpenSearch => "OpenSearch",
            Product::Elasticsearch => "Elasticsearch",
        };
        format!("{name} {}", self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn opensearch_is_told_by_its_distribution() {
        let info = ProductInfo::from_root(
            "u",
            &json!({
                "cluster_name": "c", "version": {"distribution": "opensearch", "number": "3.9.0"}
            }),
        )
        .unwrap();
        assert_eq!(info.product, Product::OpenSearch);
        assert_eq!(info.version_parts, (3, 9, 0));
        assert_eq!(info.label(), "OpenSearch 3.9.0");
    }

    #[test]
    fn elasticsearch_versions_compare_as_numbers() {
        let info = ProductInfo::from_root(
            "u",
            &json!({"version": {"number": "8.10.2", "build_flavor": "default"}}),
        )
        .unwrap();
        assert_eq!(info.product, Product::Elasticsearch);
        assert!(info.version_parts > (8, 9, 0));
    }

    #[test]
    fn something_else_is_an_error() {
        assert!(ProductInfo::from_root("u", &json!({"hello": "world"})).is_err());
    }
}
