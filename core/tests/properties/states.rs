//! State keys and state totals.

use proptest::prelude::*;
use saltscope_core::model::{decode_state_key, HighstateSummary, StateReturn, StateTally};
use serde_json::Value;

use crate::gen::{json, state_data, state_key, text};

const SEP: &str = "_|-";

/// Text without the separator (a module, an ID or a function).
fn part() -> BoxedStrategy<String> {
    text().prop_map(|t| t.replace('|', "!")).boxed()
}

/// A key after a run of digits that may or may not be an order prefix.
fn digits_then_key() -> BoxedStrategy<String> {
    ("[0-9]{1,25}", state_key())
        .prop_map(|(digits, key)| format!("{digits}{SEP}{key}"))
        .boxed()
}

/// The totals the model gives `data` (`None`: no states).
fn model(data: &Value) -> Option<HighstateSummary> {
    let states = StateReturn::read(data.as_object()?)?;
    Some(HighstateSummary::of(&states.runs))
}

/// Durations summed in another order (the model sums in run order, the
/// tally in document order) differ in the last bits, and by more when huge
/// and tiny durations cancel: equal within the rounding of the sum of their
/// sizes.
fn same_totals(a: &HighstateSummary, b: &HighstateSummary, scale: f64) -> bool {
    // Past f64's range a partial sum may overflow in one order only.
    let ms_equal = !scale.is_finite()
        || a.total_ms == b.total_ms
        || (a.total_ms - b.total_ms).abs() <= scale * 1e-12;
    (a.succeeded, a.unchanged, a.changed, a.failed, a.total)
        == (b.succeeded, b.unchanged, b.changed, b.failed, b.total)
        && ms_equal
}

/// The sum of the sizes of the durations the model read.
fn duration_scale(data: &Value) -> f64 {
    data.as_object()
        .and_then(StateReturn::read)
        .map(|s| {
            s.runs
                .iter()
                .filter_map(|r| r.duration_ms)
                .map(f64::abs)
                .sum()
        })
        .unwrap_or(0.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_decodes_as_a_state_key_or_not_at_all_and_a_decoded_key_spells_the_key(key in prop_oneof![text(), state_key(), digits_then_key()]) {
        let seps = key.matches(SEP).count();
        match decode_state_key(&key) {
            None => prop_assert!(seps < 3, "{key:?} has {seps} separators"),
            Some(k) => {
                prop_assert!(!k.module.contains(SEP) && !k.id.contains(SEP) && !k.function.contains(SEP), "{k:?}");
                let body = [k.module.as_str(), &k.id, &k.name, &k.function].join(SEP);
                match k.order_prefix {
                    None => prop_assert_eq!(&body, &key),
                    Some(n) => {
                        let (head, tail) = key.split_once(SEP).expect("a prefix ends in a separator");
                        prop_assert_eq!(head.parse::<u64>().ok(), Some(n));
                        prop_assert_eq!(&body, tail);
                    }
                }
            }
        }
    }

    #[test]
    fn a_key_made_of_its_parts_decodes_back_to_them(
        prefix in proptest::option::of((0u64..1_000_000, 0usize..3)),
        module in part().prop_filter("not a number", |m| m.is_empty() || !m.bytes().all(|b| b.is_ascii_digit())),
        id in part(),
        name in text(),
        function in part(),
    ) {
        let head = prefix.map(|(n, zeros)| format!("{}{n}{SEP}", "0".repeat(zeros))).unwrap_or_default();
        let key = format!("{head}{module}{SEP}{id}{SEP}{name}{SEP}{function}");
        let k = decode_state_key(&key).expect("four parts");
        prop_assert_eq!(k.order_prefix, prefix.map(|(n, _)| n));
        prop_assert_eq!((k.module, k.id, k.name, k.function), (module, id, name, function));
    }

    #[test]
    fn state_totals_tallied_from_the_bytes_equal_the_models_summary(data in prop_oneof![4 => state_data(), 1 => json()]) {
        let text = serde_json::to_string(&data).expect("a Value serializes");
        // Both readers read the same bytes (a float may not survive the
        // trip through text exactly).
        let read: Value = serde_json::from_str(&text).expect("it was JSON");
        let tally: StateTally = serde_json::from_str(&text).expect("a tally reads any JSON");
        match (tally.0, model(&read)) {
            (None, None) => {}
            (Some(t), Some(m)) => prop_assert!(
                same_totals(&t, &m, duration_scale(&read)),
                "tally {t:?} model {m:?}"
            ),
            (t, m) => prop_assert!(false, "tally {t:?} model {m:?}"),
        }
    }
}
