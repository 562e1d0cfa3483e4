//! Publish data from the event cache and the job cache.

use proptest::option;
use proptest::prelude::*;
use saltscope_core::model::{PublishInfo, PublishSource};
use serde_json::{json, Map, Value};

use crate::gen::{json, object, odd, text};

/// A `salt/job/<jid>/new` event's `_source`, with odd values anywhere.
fn event_source() -> BoxedStrategy<Value> {
    let load = (
        option::of(odd()),
        option::of(prop_oneof![
            proptest::collection::vec(
                prop_oneof![json(), Just(json!({"__kwarg__": true, "test": true}))],
                0..4
            )
            .prop_map(Value::Array),
            odd(),
        ]),
        option::of(prop_oneof![text().prop_map(Value::String), odd()]),
        option::of(odd()),
        option::of(odd()),
        option::of(prop_oneof![
            proptest::collection::vec(json(), 0..4).prop_map(Value::Array),
            odd()
        ]),
        option::of(odd()),
        option::of(odd()),
    )
        .prop_map(|(fun, arg, tgt, tgt_type, user, minions, missing, stamp)| {
            let mut m = Map::new();
            for (k, v) in [
                ("fun", fun),
                ("arg", arg),
                ("tgt", tgt),
                ("tgt_type", tgt_type),
                ("user", user),
                ("minions", minions),
                ("missing", missing),
                ("_stamp", stamp),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_string(), v);
                }
            }
            Value::Object(m)
        });
    (text(), load, any::<bool>())
        .prop_map(|(jid, data, new)| {
            let tag = if new {
                format!("salt/job/{jid}/new")
            } else {
                jid
            };
            object([("tag", tag.into()), ("data", data)])
        })
        .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_source_is_a_publish_event_or_not_without_panicking(source in odd()) {
        let _ = PublishInfo::from_event(&source);
        let _ = PublishInfo::from_job_cache(&source);
    }

    #[test]
    fn a_publish_event_keeps_its_jid_and_reads_each_field_as_text(source in event_source()) {
        let event = PublishInfo::from_event(&source);
        let tag = source["tag"].as_str().expect("a text tag");
        let jid = tag.strip_prefix("salt/job/").and_then(|t| t.strip_suffix("/new"));
        prop_assert_eq!(event.is_some(), jid.is_some());
        if let Some(info) = &event {
            prop_assert_eq!(Some(info.jid.as_str()), jid);
            prop_assert_eq!(info.source, PublishSource::Event);
            let data = &source["data"];
            prop_assert_eq!(info.minions.is_some(), data.get("minions").is_some_and(Value::is_array));
            for (field, read) in [("fun", &info.fun), ("tgt", &info.target), ("user", &info.user)] {
                // A field that is there and not empty is never lost.
                if let Some(Value::String(s)) = data.get(field) {
                    prop_assert_eq!(read.as_deref(), (!s.is_empty()).then_some(s.as_str()));
                }
            }
        }
        // The same load in the job cache.
        let cached = PublishInfo::from_job_cache(&object([("jid", "7".into()), ("load", source["data"].clone())]))
            .expect("a jid and a load");
        prop_assert_eq!(cached.source, PublishSource::JobCache);
        let merged = PublishInfo::merge(event.clone(), Some(cached.clone())).expect("two sources");
        prop_assert_eq!(merged.source, if event.is_some() { PublishSource::Event } else { PublishSource::JobCache });
    }
}
