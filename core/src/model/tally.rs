//! A return's state totals read straight from the bytes of its `data`,
//! without building its states: the returns export needs only the counts,
//! and building every state (comments, diffs, changes) cost most of its time.
//! The rules are [`StateReturn::read`](super::StateReturn::read)'s and
//! [`HighstateSummary::of`]'s; a test holds the two equal on real returns.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::state::{read_duration_ms, StateResult};
use super::summary::HighstateSummary;

/// `data`'s totals: `Some` when any entry is a state (an object with
/// `result`), as for [`ReturnData::States`](super::ReturnData::States);
/// `None` for any other `data` (text, a list, an object without states).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StateTally(pub Option<HighstateSummary>);

impl<'de> Deserialize<'de> for StateTally {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TallyVisitor)
    }
}

/// Accepts any JSON value, so a `data` of an unexpected shape is read as
/// "no states" rather than failing the page.
macro_rules! not_an_object {
    ($value:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($value)
        }
    };
}

struct TallyVisitor;

impl<'de> Visitor<'de> for TallyVisitor {
    type Value = StateTally;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a return's data")
    }

    not_an_object!(StateTally(None));

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StateTally, A::Error> {
        let mut summary = HighstateSummary::default();
        while map.next_key::<IgnoredAny>()?.is_some() {
            let Entry(Some(state)) = map.next_value::<Entry>()? else {
                continue;
            };
            summary.count(state.result, state.changed, state.duration_ms);
        }
        Ok(StateTally((summary.total > 0).then_some(summary)))
    }
}

/// What the totals need of one state.
struct EntryState {
    result: StateResult,
    changed: bool,
    duration_ms: Option<f64>,
}

/// One entry of `data`: a state when it is an object with `result`.
struct Entry(Option<EntryState>);

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EntryVisitor)
    }
}

#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum EntryKey {
    Result,
    Changes,
    Duration,
    #[serde(other)]
    Other,
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = Entry;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an entry of a return's data")
    }

    not_an_object!(Entry(None));

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entry, A::Error> {
        let mut result = None;
        let mut changed = false;
        let mut duration_ms = None;
        while let Some(key) = map.next_key::<EntryKey>()? {
            match key {
                EntryKey::Result => result = Some(StateResult::of(Some(&map.next_value()?))),
                EntryKey::Changes => changed = map.next_value::<Changed>()?.0,
                EntryKey::Duration => duration_ms = read_duration_ms(&map.next_value::<Value>()?),
                EntryKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Entry(result.map(|result| EntryState {
            result,
            changed,
            duration_ms,
        })))
    }
}

/// [`StateRun::changed`](super::StateRun::changed) on `changes`, skipping
/// its content: not empty, a lone `_orig_key` not counting.
struct Changed(bool);

impl<'de> Deserialize<'de> for Changed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ChangedVisitor)
    }
}

struct ChangedVisitor;

impl<'de> Visitor<'de> for ChangedVisitor {
    type Value = Changed;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a state's changes")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Changed, E> {
        Ok(Changed(true))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Changed, E> {
        Ok(Changed(true))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Changed, E> {
        Ok(Changed(true))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Changed, E> {
        Ok(Changed(true))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Changed, E> {
        Ok(Changed(!s.is_empty()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Changed, E> {
        Ok(Changed(false))
    }
    fn visit_none<E: de::Error>(self) -> Result<Changed, E> {
        Ok(Changed(false))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Changed, A::Error> {
        let mut any = false;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            any = true;
        }
        Ok(Changed(any))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Changed, A::Error> {
        let mut any = false;
        while let Some(OrigKey(orig)) = map.next_key()? {
            any |= !orig;
            map.next_value::<IgnoredAny>()?;
        }
        Ok(Changed(any))
    }
}

/// Whether a key of `changes` is `_orig_key`, without keeping it.
struct OrigKey(bool);

impl<'de> Deserialize<'de> for OrigKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = OrigKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<OrigKey, E> {
                Ok(OrigKey(s == "_orig_key"))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StateReturn;
    use serde_json::json;

    /// What the model says of `data`: the totals of its states, if any.
    fn model(data: &Value) -> Option<HighstateSummary> {
        let states = StateReturn::read(data.as_object()?)?;
        Some(HighstateSummary::of(&states.runs))
    }

    fn tally(data: &Value) -> Option<HighstateSummary> {
        let text = serde_json::to_string(data).unwrap();
        serde_json::from_str::<StateTally>(&text).unwrap().0
    }

    #[test]
    fn tallies_like_the_model_on_every_shape_of_state() {
        let data = json!({
            "file_|-motd_|-/etc/motd_|-managed": {"result": true, "changes": {"diff": "--- a\n+++ b"}, "duration": 1.5, "__run_num__": 0},
            "pkg_|-p_|-p_|-installed": {"result": true, "changes": {}, "duration": "2.5 ms", "__run_num__": 1},
            "cmd_|-c_|-c_|-run": {"result": false, "changes": {"_orig_key": "x"}, "__run_num__": 2},
            "test_|-t_|-t_|-nop": {"result": null, "changes": [], "duration": 3},
            "test_|-u_|-u_|-nop": {"result": "weird", "changes": "text", "comment": ["a", "b"]},
            "test_|-v_|-v_|-nop": {"result": false, "changes": [1], "duration": true},
            "test_|-w_|-w_|-nop": {"result": true, "changes": 0},
            "test_|-x_|-x_|-nop": {"result": true, "changes": null},
            "_orig_key": "not a state",
            "retcode": 2,
            "no_result": {"comment": "an object without result is no state"}
        });
        let expected = model(&data).unwrap();
        assert_eq!(expected.total, 8);
        assert_eq!(tally(&data), Some(expected));
    }

    #[test]
    fn data_without_states_tallies_to_none() {
        for data in [
            json!("text output"),
            json!(["a", {"result": true}]),
            json!({"return": ["Rendering SLS failed"]}),
            json!({}),
            json!(null),
            json!(3),
            json!({"k": {"nested": {"result": false}}}),
        ] {
            assert_eq!(tally(&data), None, "{data}");
            assert_eq!(model(&data), None, "{data}");
        }
    }
}
