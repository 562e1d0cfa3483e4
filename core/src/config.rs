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
    /// Functions hidden from the job list unless asked for (each person can
    /// change their own list; this is the starting one).
    pub noisy_functions: Vec<String>,
    /// Commands the audit view flags.
    pub risky_commands: Vec<RiskRule>,
}

/// A kind of command worth an auditor's eye. Every field given must match:
/// `fun` any of its globs (`cmd.*`), `args_contain` any of its strings
/// inside the arguments, `target` any of its values exactly (`*` is the
/// literal target `*`, every minion).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RiskRule {
    pub name: String,
    #[serde(default)]
    pub fun: Vec<String>,
    #[serde(default)]
    pub args_contain: Vec<String>,
    #[serde(default)]
    pub target: Vec<String>,
}

impl RiskRule {
    pub fn matches(&self, fun: &str, args: &[String], target: Option<&str>) -> bool {
        let joined = args.join(" ");
        let squeezed = joined.split_whitespace().collect::<Vec<_>>().join(" ");
        (self.fun.is_empty() || self.fun.iter().any(|p| crate::text::glob_match(p, fun)))
            && (self.args_contain.is_empty()
                || self
                    .args_contain
                    .iter()
                    .any(|a| squeezed.contains(a.as_str())))
            && (self.target.is_empty()
                || target.is_some_and(|t| self.target.iter().any(|x| x == t)))
            && !(self.fun.is_empty() && self.args_contain.is_empty() && self.target.is_empty())
    }
}

fn default_risky_commands() -> Vec<RiskRule> {
    let rule = |name: &str, fun: &[&str], args: &[&str], target: &[&str]| RiskRule {
        name: name.into(),
        fun: fun.iter().map(|s| s.to_string()).collect(),
        args_contain: args.iter().map(|s| s.to_string()).collect(),
        target: target.iter().map(|s| s.to_string()).collect(),
    };
    vec![
        rule(
            "recursive forced delete",
            &[
                "cmd.run",
                "cmd.script",
                "cmd.shell",
                "cmd.run_all",
                "cmd.exec_code",
            ],
            &[
                "rm -rf",
                "rm -fr",
                "rm -r -f",
                "rm -f -r",
                "rm --recursive --force",
            ],
            &[],
        ),
        rule(
            "state run on every minion",
            &["state.apply", "state.highstate", "state.sls"],
            &[],
            &["*"],
        ),
        rule("command on every minion", &["cmd.*"], &[], &["*"]),
    ]
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            engine_url: "/es".into(),
            index_pattern: "salt-*".into(),
            job_cache_index: "salt-master-job-cache".into(),
            event_index_pattern: "salt-master-event-cache*".into(),
            noisy_functions: crate::query::filter::DEFAULT_NOISY_FUNCTIONS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            risky_commands: default_risky_commands(),
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

    /// The names of the risk rules a published job matches.
    pub fn risks(&self, fun: &str, args: &[String], target: Option<&str>) -> Vec<String> {
        self.risky_commands
            .iter()
            .filter(|r| r.matches(fun, args, target))
            .map(|r| r.name.clone())
            .collect()
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
    fn the_default_risk_rules_flag_forced_deletes_and_whole_fleet_runs() {
        let c = AppConfig::default();
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            c.risks("cmd.run", &args(&["rm  -rf /var/lib/app"]), Some("web*")),
            ["recursive forced delete"]
        );
        assert_eq!(
            c.risks("state.apply", &[], Some("*")),
            ["state run on every minion"]
        );
        assert_eq!(
            c.risks("cmd.script", &args(&["salt://x.sh"]), Some("*")),
            ["command on every minion"]
        );
        assert!(c.risks("state.apply", &[], Some("web*")).is_empty());
        assert!(c
            .risks("cmd.run", &args(&["ls -rf"]), Some("db-02"))
            .is_empty());
    }

    #[test]
    fn operators_set_their_own_rules_and_noise_in_config_json() {
        let c = AppConfig::parse(
            r#"{"noisy_functions": ["test.ping"], "risky_commands": [
            {"name": "reboot", "fun": ["system.reboot"]}]}"#,
        )
        .unwrap();
        assert_eq!(c.noisy_functions, ["test.ping"]);
        assert_eq!(c.risks("system.reboot", &[], None), ["reboot"]);
        assert!(AppConfig::parse(r#"{"risky_commands": [{"name": "x", "funs": []}]}"#).is_err());
    }

    #[test]
    fn a_pattern_with_spaces_is_refused() {
        assert!(AppConfig::parse(r#"{"index_pattern": "salt *"}"#).is_err());
    }
}
