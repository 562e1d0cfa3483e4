use serde_json::Value;

use crate::text::{scalar_text, short_line};

/// Who ran a job, how, and on which target: the publish data.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PublishInfo {
    pub jid: String,
    pub fun: Option<String>,
    /// Arguments as Salt's CLI takes them: `test=True` for keyword ones.
    pub args: Vec<String>,
    pub target: Option<String>,
    pub target_type: Option<String>,
    pub user: Option<String>,
    /// The minions the master targeted (publish event only: no job-cache
    /// load carries them).
    pub minions: Option<Vec<String>>,
    /// Minions a list target named that the master did not know when it
    /// published the job (the event's `missing`; Salt's CLI reports them as
    /// not connected). They are not among `minions`.
    pub unknown_minions: Vec<String>,
    /// `_stamp` of the publish event (master time, UTC).
    pub stamp: Option<String>,
    pub source: PublishSource,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PublishSource {
    /// `salt/job/<jid>/new` in the event cache: the complete publish data.
    #[default]
    Event,
    /// `salt-master-job-cache`: overwritten by each minion's return load, so
    /// usually no target and no user are left in it.
    JobCache,
}

impl PublishInfo {
    /// Reads a `salt/job/<jid>/new` event document's `_source`.
    pub fn from_event(source: &Value) -> Option<PublishInfo> {
        let tag = source.get("tag")?.as_str()?;
        let jid = tag
            .strip_prefix("salt/job/")
            .or_else(|| tag.strip_prefix("salt/run/"))?
            .strip_suffix("/new")?;
        let data = source.get("data")?;
        let mut info = PublishInfo::read(jid, data, PublishSource::Event);
        let names = |key: &str| {
            data.get(key)
                .and_then(Value::as_array)
                .map(|m| m.iter().map(scalar_text).collect::<Vec<_>>())
        };
        info.minions = names("minions");
        info.unknown_minions = names("missing").unwrap_or_default();
        info.stamp = data
            .get("_stamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        Some(info)
    }

    /// Reads a `salt-master-job-cache` document's `_source` (`{jid, load}`).
    /// A load that was overwritten by a return load keeps only `fun`.
    pub fn from_job_cache(source: &Value) -> Option<PublishInfo> {
        let jid = source.get("jid").map(scalar_text)?;
        let load = source.get("load")?;
        Some(PublishInfo::read(&jid, load, PublishSource::JobCache))
    }

    fn read(jid: &str, load: &Value, source: PublishSource) -> PublishInfo {
        let text = |name: &str| {
            load.get(name)
                .filter(|v| !v.is_null())
                .map(|v| match v {
                    // `salt -L a,b` publishes the target as a list.
                    Value::Array(items) => {
                        items.iter().map(scalar_text).collect::<Vec<_>>().join(",")
                    }
                    other => scalar_text(other),
                })
                .filter(|s| !s.is_empty())
        };
        PublishInfo {
            jid: jid.to_string(),
            fun: text("fun"),
            // A runner's publish event names them `fun_args`.
            args: load
                .get("arg")
                .or_else(|| load.get("fun_args"))
                .and_then(Value::as_array)
                .map(|args| args.iter().flat_map(cli_args).collect())
                .unwrap_or_default(),
            target: text("tgt"),
            target_type: text("tgt_type"),
            user: text("user"),
            minions: None,
            unknown_minions: Vec::new(),
            stamp: None,
            source,
        }
    }

    /// The publish data of one job from both sources: the event, which is
    /// complete, with the job-cache load filling in what the event lacks.
    pub fn merge(event: Option<PublishInfo>, cached: Option<PublishInfo>) -> Option<PublishInfo> {
        let (mut event, cached) = match (event, cached) {
            (Some(e), Some(c)) => (e, c),
            (e, c) => return e.or(c),
        };
        if event.fun.is_none() {
            event.fun = cached.fun;
        }
        if event.args.is_empty() {
            event.args = cached.args;
        }
        if event.target.is_none() {
            event.target = cached.target;
            event.target_type = cached.target_type;
        }
        if event.user.is_none() {
            event.user = cached.user;
        }
        Some(event)
    }

    /// The target on one short line ([`short_target`]).
    pub fn short_target(&self) -> Option<String> {
        short_target(self.target.as_deref()?, self.target_type.as_deref())
    }
}

/// A target on one short line, for a row or a heading: a list target of
/// many minions (`salt -L` from a script, 2,000 names) as its first names
/// and how many more, any other long target cut ([`short_line`]). `None`
/// when the target is short enough to show whole.
pub fn short_target(target: &str, target_type: Option<&str>) -> Option<String> {
    if target_type == Some("list") {
        let names: Vec<&str> = target.split(',').collect();
        if names.len() > TARGET_NAMES_SHOWN {
            let more = names.len() - TARGET_NAMES_SHOWN;
            let shown = names[..TARGET_NAMES_SHOWN].join(",");
            return Some(format!("{shown} … and {more} more"));
        }
    }
    short_line(target)
}

/// A target as Salt's CLI would name it: `web* (glob)`.
pub fn with_target_type(target: &str, target_type: Option<&str>) -> String {
    match target_type {
        Some(tt) => format!("{target} ({tt})"),
        None => target.to_string(),
    }
}

/// Names of a list target a short line shows.
const TARGET_NAMES_SHOWN: usize = 3;

/// One published argument as the CLI spells it: keyword arguments travel as
/// `{"__kwarg__": true, "test": true}`.
fn cli_args(arg: &Value) -> Vec<String> {
    match arg {
        Value::Object(map) if map.get("__kwarg__") == Some(&Value::Bool(true)) => map
            .iter()
            .filter(|(k, _)| k.as_str() != "__kwarg__")
            .map(|(k, v)| format!("{k}={}", python_literal(v)))
            .collect(),
        other => vec![python_literal(other)],
    }
}

fn python_literal(v: &Value) -> String {
    match v {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => scalar_text(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_publish_event_gives_target_user_and_targeted_minions() {
        let info = PublishInfo::from_event(&json!({
            "tag": "salt/job/20261129170507123456/new",
            "data": {"jid": "20261129170507123456", "fun": "state.apply",
                     "arg": ["web", {"__kwarg__": true, "test": true}],
                     "tgt": "*", "tgt_type": "glob", "user": "sudo_alice",
                     "minions": ["db-02", "web01.prod.example.com"], "missing": [],
                     "_stamp": "2026-11-29T17:05:07.123456"}
        }))
        .unwrap();
        assert_eq!(info.jid, "20261129170507123456");
        assert_eq!(info.args, ["web", "test=True"]);
        assert_eq!(info.user.as_deref(), Some("sudo_alice"));
        assert_eq!(info.minions.as_ref().unwrap().len(), 2);
        assert_eq!(info.source, PublishSource::Event);
    }

    #[test]
    fn a_list_target_reads_as_the_cli_spells_it() {
        let info = PublishInfo::from_event(&json!({
            "tag": "salt/job/1/new", "data": {"tgt": ["db-02", "offline-05"], "tgt_type": "list"}
        }))
        .unwrap();
        assert_eq!(info.target.as_deref(), Some("db-02,offline-05"));
    }

    #[test]
    fn a_long_target_has_a_short_line_and_a_short_one_is_shown_whole() {
        let names: Vec<String> = (0..2000).map(|i| format!("web{i:04}")).collect();
        let list = PublishInfo::from_event(&json!({
            "tag": "salt/job/1/new", "data": {"tgt": names, "tgt_type": "list"}
        }))
        .unwrap();
        assert_eq!(
            list.short_target().as_deref(),
            Some("web0000,web0001,web0002 … and 1997 more")
        );
        assert_eq!(list.target.as_deref().map(str::len), Some(2000 * 8 - 1));
        let few = PublishInfo::from_event(&json!({
            "tag": "salt/job/1/new", "data": {"tgt": ["a", "b", "c"], "tgt_type": "list"}
        }))
        .unwrap();
        assert_eq!(few.short_target(), None);
        let compound = PublishInfo::from_event(&json!({
            "tag": "salt/job/1/new",
            "data": {"tgt": format!("G@os:Debian and ({})", "é".repeat(200)), "tgt_type": "compound"}
        }))
        .unwrap();
        let short = compound.short_target().unwrap();
        assert_eq!(short.chars().count(), 121);
        assert!(short.starts_with("G@os:Debian and (é") && short.ends_with('…'));
    }

    #[test]
    fn a_runners_new_event_is_its_publish_data() {
        // As the master's event bus wrote it for `salt-run jobs.lookup_jid`.
        let info = PublishInfo::from_event(&json!({
            "tag": "salt/run/20261207203341844964/new",
            "data": {"fun": "runner.jobs.lookup_jid", "jid": "20261207203341844964", "user": "root",
                "fun_args": ["20261207203023500239"], "_stamp": "2026-12-07T20:33:42.133894+00:00"}
        }))
        .unwrap();
        assert_eq!(info.jid, "20261207203341844964");
        assert_eq!(info.fun.as_deref(), Some("runner.jobs.lookup_jid"));
        assert_eq!(info.user.as_deref(), Some("root"));
        assert_eq!(info.args, ["20261207203023500239"]);
        assert_eq!(
            info.stamp.as_deref(),
            Some("2026-12-07T20:33:42.133894+00:00")
        );
        assert_eq!(info.minions, None);
    }

    #[test]
    fn other_events_are_not_publish_events() {
        assert!(PublishInfo::from_event(&json!({"tag": "salt/job/1/ret/m", "data": {}})).is_none());
        assert!(PublishInfo::from_event(&json!({"tag": "salt/auth", "data": {}})).is_none());
        assert!(PublishInfo::from_event(&json!({"tag": "salt/run/1/ret", "data": {}})).is_none());
    }

    #[test]
    fn the_event_wins_and_the_job_cache_fills_only_its_gaps() {
        let event = PublishInfo {
            jid: "1".into(),
            user: Some("sudo_alice".into()),
            ..PublishInfo::default()
        };
        let cached = PublishInfo {
            jid: "1".into(),
            fun: Some("cmd.run".into()),
            user: Some("root".into()),
            source: PublishSource::JobCache,
            ..PublishInfo::default()
        };
        let merged = PublishInfo::merge(Some(event), Some(cached.clone())).unwrap();
        assert_eq!(merged.user.as_deref(), Some("sudo_alice"));
        assert_eq!(merged.fun.as_deref(), Some("cmd.run"));
        assert_eq!(merged.source, PublishSource::Event);
        assert_eq!(PublishInfo::merge(None, Some(cached.clone())), Some(cached));
        assert_eq!(PublishInfo::merge(None, None), None);
    }

    #[test]
    fn an_overwritten_job_cache_load_keeps_what_it_has() {
        let info = PublishInfo::from_job_cache(&json!({
            "jid": "1", "load": {"fun": "cmd.run", "id": "db-02", "return": "x", "retcode": 0}
        }))
        .unwrap();
        assert_eq!(info.fun.as_deref(), Some("cmd.run"));
        assert_eq!(info.user, None);
        assert_eq!(info.source, PublishSource::JobCache);
    }
}
