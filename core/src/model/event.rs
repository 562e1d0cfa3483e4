//! One document of the master's event cache (`event_return: elasticsearch`):
//! `{tag, data}`, where `data._stamp` is when the master fired it. What a
//! person looks for — which minion, which job — is read from the tag where
//! Salt puts it there (`salt/job/<jid>/ret/<minion>`), else from `data`.

use serde_json::Value;

use crate::config::glob_match;
use crate::text::scalar_text;
use crate::time::parse_utc;

/// The kinds of events that flood a bus, as tag globs, in the order a tag
/// is told: the first that matches names its family.
pub const EVENT_FAMILIES: [(&str, &str); 17] = [
    ("salt/job/*/new", "job published"),
    ("salt/job/*/publish", "job sent to minions"),
    ("salt/job/*/ret/*", "job return"),
    ("salt/job/*/prog/*", "job progress"),
    ("salt/batch/*", "batch job"),
    ("salt/run/*/new", "runner started"),
    ("salt/run/*/ret", "runner return"),
    ("salt/run/*/args", "runner arguments"),
    ("salt/auth", "minion authentication"),
    ("minion_start", "minion start"),
    ("salt/minion/*/start", "minion start (tagged)"),
    ("salt/key", "key accepted or rejected"),
    ("minion/refresh/*", "minion data refresh"),
    ("salt/beacon/*", "beacon"),
    ("salt/presence/*", "presence"),
    ("salt/stats/*", "master stats"),
    ("salt/cloud/*", "salt-cloud"),
];

/// The family glob of a tag, or "other".
pub fn family_of(tag: &str) -> &'static str {
    EVENT_FAMILIES
        .iter()
        .find(|(glob, _)| glob_match(glob, tag))
        .map_or("other", |(glob, _)| glob)
}

#[derive(Clone, Debug, PartialEq)]
pub struct EventDoc {
    pub index: String,
    pub id: String,
    pub tag: String,
    /// `data._stamp` as the master wrote it.
    pub stamp: Option<String>,
    /// The same, epoch milliseconds.
    pub stamp_ms: Option<i64>,
    /// The minion it is about, from the tag or `data.id`.
    pub minion: Option<String>,
    /// The job it belongs to, from the tag or `data.jid`.
    pub jid: Option<String>,
    pub family: &'static str,
    /// A job return that failed: `success: false`, or a retcode other than 0.
    pub failed: bool,
    pub data: Value,
}

/// The tags that name a minion, as the text before and after its id: the
/// events view's minion filter searches them (and `data.id`);
/// [`EventDoc::from_hit`] reads the minion from them.
pub const MINION_TAGS: [(&str, &str); 6] = [
    ("salt/job/*/ret/", ""),
    ("salt/job/*/prog/", "/*"),
    ("salt/minion/", "/start"),
    ("minion/refresh/", ""),
    ("resource/refresh/", ""),
    ("salt/beacon/", "/*"),
];

impl EventDoc {
    /// Reads a search hit; whatever is missing stays empty, nothing fails.
    pub fn from_hit(hit: &Value) -> EventDoc {
        let text = |v: Option<&Value>| v.map(scalar_text).filter(|s| !s.is_empty());
        let source = hit.get("_source");
        let tag = source
            .and_then(|s| s.get("tag"))
            .map(scalar_text)
            .unwrap_or_default();
        let data = source
            .and_then(|s| s.get("data"))
            .cloned()
            .unwrap_or(Value::Null);
        let stamp = data
            .get("_stamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        // The forms of MINION_TAGS (a test holds the two together).
        let parts: Vec<&str> = tag.split('/').collect();
        let (tag_jid, tag_minion) = match parts.as_slice() {
            ["salt", "job", jid, "ret", minion] => (Some(*jid), Some(*minion)),
            ["salt", "job", jid, "prog", minion, ..] => (Some(*jid), Some(*minion)),
            ["salt", "job", jid, ..] | ["salt", "run", jid, ..] => (Some(*jid), None),
            ["salt", "minion", minion, "start"] => (None, Some(*minion)),
            ["minion" | "resource", "refresh", minion] => (None, Some(*minion)),
            ["salt", "beacon", minion, ..] => (None, Some(*minion)),
            _ => (None, None),
        };
        let minion = tag_minion
            .map(str::to_string)
            .or_else(|| text(data.get("id")));
        let jid = tag_jid
            .map(str::to_string)
            .or_else(|| text(data.get("jid")));
        let is_return = glob_match("salt/job/*/ret/*", &tag);
        let retcode = data.get("retcode").and_then(Value::as_i64);
        let failed = is_return
            && (data.get("success") == Some(&Value::Bool(false))
                || retcode.is_some_and(|c| c != 0));
        EventDoc {
            index: text(hit.get("_index")).unwrap_or_default(),
            id: text(hit.get("_id")).unwrap_or_default(),
            family: family_of(&tag),
            stamp_ms: stamp.as_deref().and_then(|s| parse_utc(s).ok()),
            stamp,
            minion,
            jid,
            failed,
            tag,
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hit(tag: &str, data: Value) -> Value {
        json!({"_index": "salt-master-event-cache-v1", "_id": "e1", "_source": {"tag": tag, "data": data}})
    }

    #[test]
    fn job_events_name_their_job_and_minion_from_the_tag() {
        let e = EventDoc::from_hit(&hit(
            "salt/job/20261202191413295885/ret/web01.prod.example.com",
            json!({"success": true, "retcode": 0, "_stamp": "2026-12-02T19:14:20.123456+00:00", "id": "web01.prod.example.com"}),
        ));
        assert_eq!(e.jid.as_deref(), Some("20261202191413295885"));
        assert_eq!(e.minion.as_deref(), Some("web01.prod.example.com"));
        assert_eq!(e.family, "salt/job/*/ret/*");
        assert_eq!(e.stamp_ms, Some(1_796_238_860_123));
        assert!(!e.failed);
        let published = EventDoc::from_hit(&hit("salt/job/1/new", json!({"minions": ["a"]})));
        assert_eq!(
            (published.jid.as_deref(), published.minion),
            (Some("1"), None)
        );
    }

    #[test]
    fn a_return_that_failed_is_told_by_success_or_retcode() {
        for data in [
            json!({"success": false}),
            json!({"success": true, "retcode": 2}),
        ] {
            assert!(EventDoc::from_hit(&hit("salt/job/1/ret/m", data)).failed);
        }
        assert!(
            !EventDoc::from_hit(&hit("salt/auth", json!({"retcode": 2}))).failed,
            "only job returns fail"
        );
    }

    #[test]
    fn other_events_name_their_minion_from_data_and_have_a_family() {
        let auth = EventDoc::from_hit(&hit("salt/auth", json!({"id": "db-02", "act": "accept"})));
        assert_eq!(auth.minion.as_deref(), Some("db-02"));
        assert_eq!(auth.family, "salt/auth");
        let start = EventDoc::from_hit(&hit("salt/minion/cache-03.example.org/start", json!({})));
        assert_eq!(start.minion.as_deref(), Some("cache-03.example.org"));
        let refresh = EventDoc::from_hit(&hit(
            "minion/refresh/db-02",
            json!({"Minion data cache refresh": "db-02"}),
        ));
        assert_eq!(refresh.minion.as_deref(), Some("db-02"));
        assert_eq!(family_of("20261202191413295885"), "other");
        let odd = EventDoc::from_hit(&json!({"_source": {"tag": 7, "data": "text"}}));
        assert_eq!(
            (odd.tag.as_str(), odd.family, odd.stamp_ms),
            ("7", "other", None)
        );
    }

    #[test]
    fn every_tag_the_minion_filter_searches_names_its_minion() {
        for (before, after) in MINION_TAGS {
            let tag = format!("{before}db-02{after}").replace('*', "20261207000418895023");
            let doc = EventDoc::from_hit(&hit(&tag, json!({})));
            assert_eq!(doc.minion.as_deref(), Some("db-02"), "{tag}");
        }
    }
}
