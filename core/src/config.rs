//! `config.json`, next to `index.html`: what an operator edits, never code.
//! It depends on nothing else in the core: every other layer reads it.

use serde::Deserialize;

/// Why `config.json` cannot be used; the message names the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("config.json: {0}")]
pub struct ConfigError(pub String);

/// Functions that fire on every minion every few minutes and bury the jobs a
/// person ran; hidden by default, and the list is the operator's to change.
pub const DEFAULT_NOISY_FUNCTIONS: [&str; 4] =
    ["saltutil.*", "mine.update", "mine.send", "grains.setval"];

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppConfig {
    /// `/es` behind the project's nginx proxy, or direct URLs (CORS): one,
    /// or a list like the returner's `hosts:` — a read that fails on one
    /// goes to the next.
    #[serde(deserialize_with = "one_or_many")]
    pub engine_url: Vec<String>,
    /// The deadline of every request to the engine.
    pub request_timeout_ms: u64,
    pub index_pattern: String,
    pub job_cache_index: String,
    pub event_index_pattern: String,
    /// Functions hidden from the job list unless asked for (each person can
    /// change their own list; this is the starting one).
    pub noisy_functions: Vec<String>,
    /// Commands the audit view flags.
    pub risky_commands: Vec<RiskRule>,
    /// The fleet view calls a minion unreported after this many hours
    /// without a state run.
    pub unreported_hours: u64,
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
        (self.fun.is_empty() || self.fun.iter().any(|p| glob_match(p, fun)))
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

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(url) => vec![url],
        OneOrMany::Many(urls) => urls,
    })
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            engine_url: vec!["/es".into()],
            request_timeout_ms: 30_000,
            index_pattern: "salt-*".into(),
            job_cache_index: "salt-master-job-cache".into(),
            event_index_pattern: "salt-master-event-cache*".into(),
            noisy_functions: DEFAULT_NOISY_FUNCTIONS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            risky_commands: default_risky_commands(),
            unreported_hours: 24,
        }
    }
}

impl AppConfig {
    /// Parses and checks `config.json`; a mistake names the field.
    pub fn parse(text: &str) -> Result<AppConfig, ConfigError> {
        let mut config: AppConfig =
            serde_json::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        for url in &mut config.engine_url {
            *url = url.trim().trim_end_matches('/').to_string();
            if has_credentials(url) {
                return Err(ConfigError(format!(
                    "`engine_url` must not hold credentials (`user:password@` in {}): a URL ends up in logs and browser history. Give the proxy a credentials file, or let each person sign in",
                    redact(url)
                )));
            }
        }
        if config.engine_url.is_empty() || config.engine_url.iter().any(String::is_empty) {
            return Err(ConfigError(
                "`engine_url` must name the engine: \"/es\" (the proxy) or its URL(s)".into(),
            ));
        }
        if config.request_timeout_ms == 0 {
            return Err(ConfigError(
                "`request_timeout_ms` must be more than 0".into(),
            ));
        }
        for (name, value) in [
            ("index_pattern", &config.index_pattern),
            ("job_cache_index", &config.job_cache_index),
            ("event_index_pattern", &config.event_index_pattern),
        ] {
            if value.trim().is_empty() || value.contains(|c: char| c.is_whitespace() || c == '/') {
                return Err(ConfigError(format!(
                    "`{name}` must be an index name or pattern without spaces or slashes, not {value:?}"
                )));
            }
        }
        Ok(config)
    }

    /// The first engine URL (the one messages name before any answered).
    pub fn first_engine_url(&self) -> &str {
        self.engine_url.first().map(String::as_str).unwrap_or("/es")
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

/// `scheme://user:pass@host…`: an authority with a user part.
fn has_credentials(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.contains('@')
}

/// The URL with its user part replaced, for the message.
fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split_once('@').map_or(rest, |(_, h)| h);
            format!("{scheme}://***@{host}")
        }
        None => "***".into(),
    }
}

/// Shell-style matching, as Salt's glob targets: `*` any run of characters,
/// `?` one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_fields_take_their_defaults() {
        let c = AppConfig::parse(r#"{"engine_url": "http://es:9200/"}"#).unwrap();
        assert_eq!(c.engine_url, ["http://es:9200"]);
        assert_eq!(c.request_timeout_ms, 30_000);
        assert_eq!(c.index_pattern, "salt-*");
        assert_eq!(c.job_cache_index, "salt-master-job-cache");
    }

    #[test]
    fn several_engines_are_listed_like_the_returners_hosts() {
        let c = AppConfig::parse(
            r#"{"engine_url": ["https://es1:9200", "https://es2:9200/"], "request_timeout_ms": 5000}"#,
        )
        .unwrap();
        assert_eq!(c.engine_url, ["https://es1:9200", "https://es2:9200"]);
        assert_eq!(c.request_timeout_ms, 5000);
        assert!(AppConfig::parse(r#"{"engine_url": []}"#).is_err());
    }

    #[test]
    fn credentials_in_the_engine_url_are_refused_without_repeating_them() {
        for url in ["https://elastic:changeme@es:9200", "http://user@es:9200/x"] {
            let e =
                AppConfig::parse(&format!(r#"{{"engine_url": ["/es", "{url}"]}}"#)).unwrap_err();
            let text = e.to_string();
            assert!(text.contains("must not hold credentials"), "{text}");
            assert!(
                !text.contains("changeme") && !text.contains("user@"),
                "{text}"
            );
        }
        assert!(AppConfig::parse(r#"{"engine_url": "http://es:9200/path@x"}"#).is_ok());
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
    fn globs_match_like_salts_targets() {
        assert!(glob_match("cmd.*", "cmd.run"));
        assert!(glob_match("web0?.prod.*", "web01.prod.example.com"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("cmd.*", "state.apply"));
        assert!(!glob_match("web?", "web10"));
        assert!(glob_match("*a*b", "xxaxxb"));
    }

    #[test]
    fn a_pattern_with_spaces_is_refused() {
        assert!(AppConfig::parse(r#"{"index_pattern": "salt *"}"#).is_err());
    }
}
