//! `config.json`, next to `index.html`: what an operator edits, never code.

use serde::Deserialize;

use crate::engine::EngineError;

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppConfig {
    /// `/es` behind the project's nginx proxy, or a direct URL (CORS).
    pub engine_url: String,
    pub index_pattern: String,
    pub job_cache_index: String,
    pub event_index_pattern: String,
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            engine_url: "/es".into(),
            index_pattern: "salt-*".into(),
            job_cache_index: "salt-master-job-cache".into(),
            event_index_pattern: "salt-master-event-cache*".into(),
        }
    }
}

impl AppConfig {
    /// Parses and checks `config.json`; a mistake names the field.
    pub fn parse(text: &str) -> Result<AppConfig, EngineError> {
        let mut config: AppConfig =
            serde_json::from_str(text).map_err(|e| EngineError::Config(e.to_string()))?;
        config.engine_url = config.engine_url.trim().trim_end_matches('/').to_string();
        for (name, value) in [
            ("index_pattern", &config.index_pattern),
            ("job_cache_index", &config.job_cache_index),
            ("event_index_pattern", &config.event_index_pattern),
        ] {
            if value.trim().is_empty() || value.contains(|c: char| c.is_whitespace() || c == '/') {
                return Err(EngineError::Config(format!(
                    "`{name}` must be an index name or pattern without spaces or slashes, not {value:?}"
                )));
            }
        }
        Ok(config)
    }

    /// The index patterns that hold no returns although `salt-*` matches them.
    pub fn non_return_indices(&self) -> [&str; 2] {
        [&self.job_cache_index, &self.event_index_pattern]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_fields_take_their_defaults() {
        let c = AppConfig::parse(r#"{"engine_url": "http://es:9200/"}"#).unwrap();
        assert_eq!(c.engine_url, "http://es:9200");
        assert_eq!(c.index_pattern, "salt-*");
        assert_eq!(c.job_cache_index, "salt-master-job-cache");
    }

    #[test]
    fn a_typo_in_a_field_name_is_reported() {
        let e = AppConfig::parse(r#"{"index_patern": "x"}"#).unwrap_err();
        assert!(e.to_string().contains("index_patern"), "{e}");
    }

    #[test]
    fn a_pattern_with_spaces_is_refused() {
        assert!(AppConfig::parse(r#"{"index_pattern": "salt *"}"#).is_err());
    }
}
