//! Dates: whatever `parse_utc` accepts is an instant that `iso_millis`
//! writes and `parse_utc` reads back the same.

use proptest::prelude::*;
use saltscope_core::time::{iso_millis, parse_utc, utc_millis, utc_timestamp};

use crate::gen::{mutate, text, time_text};

fn round_trips(input: &str) -> Result<(), TestCaseError> {
    if let Ok(ms) = parse_utc(input) {
        let written = iso_millis(ms);
        prop_assert_eq!(
            parse_utc(&written),
            Ok(ms),
            "{:?} read as {}",
            input,
            written
        );
        let _ = utc_millis(ms);
    }
    let _ = utc_timestamp(input);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_is_a_time_that_reads_back_the_same_or_an_error(input in text()) {
        round_trips(&input)?;
    }

    #[test]
    fn a_nearly_valid_time_is_a_time_that_reads_back_the_same_or_an_error(input in time_text()) {
        round_trips(&input)?;
    }

    #[test]
    fn a_time_changed_a_little_is_a_time_that_reads_back_the_same_or_an_error(
        input in time_text().prop_flat_map(|t| mutate(t.into_bytes())),
    ) {
        round_trips(&String::from_utf8_lossy(&input))?;
    }

    #[test]
    fn every_millisecond_written_reads_back_as_itself(ms in -62_167_219_200_000i64..253_402_300_800_000) {
        // 0000-01-01 to 9999-12-31: the years four digits can write.
        prop_assert_eq!(parse_utc(&iso_millis(ms)), Ok(ms));
    }
}
