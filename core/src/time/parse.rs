//! Reading the times people and links give, and the generator's `--end`.

use chrono::{DateTime, FixedOffset, Month, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Utc};

/// Why a text is not a time, with the text itself: its `Display` is the
/// message a person sees (`` `2026-02-31` is not a date: February 2026 has
/// 28 days ``).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` {problem}")]
pub struct DateError {
    /// The text as read (trimmed).
    pub input: String,
    pub problem: DateProblem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DateProblem {
    #[error("is not a time (2026-12-01, 2026-12-01T10:00, or RFC 3339 like 2026-12-01T10:00:00Z)")]
    Shape,
    #[error("is not a date: there is no month {0}")]
    Month(u32),
    #[error("is not a date: there is no day 0")]
    DayZero,
    #[error("is not a date: {} {year} has {days} days", .month.name())]
    PastMonthEnd { month: Month, year: i32, days: u8 },
    #[error("is not a time: there is no {unit} {value}")]
    Clock { unit: &'static str, value: u32 },
    #[error("has an impossible UTC offset (offsets run from -23:59 to +23:59)")]
    Offset,
    #[error("is too far from 1970")]
    OutOfRange,
}

/// Reads a time a person or a link gives: RFC 3339 (`2026-12-01T10:00:00Z`,
/// with `±hh:mm` or `±hhmm` and any fraction), or without a zone as a
/// date-time input gives it (`2026-12-01T10:00`, `2026-12-01 10:00:00`,
/// taken as UTC), or a bare date (midnight UTC). Returns epoch milliseconds
/// (a fraction beyond them is cut, as it always was).
pub fn parse_utc(text: &str) -> Result<i64, DateError> {
    parse_instant(text).map(|t| t.timestamp_millis())
}

/// The generator's `--end`: unix seconds, or anything [`parse_utc`] reads.
/// Returns epoch microseconds.
pub fn parse_end(text: &str) -> Result<i64, DateError> {
    let text = text.trim();
    match text.parse::<i64>() {
        Ok(secs) => DateTime::from_timestamp(secs, 0)
            .map(|t| t.timestamp_micros())
            .ok_or_else(|| DateError {
                input: text.to_string(),
                problem: DateProblem::OutOfRange,
            }),
        Err(_) => parse_instant(text).map(|t| t.timestamp_micros()),
    }
}

fn parse_instant(text: &str) -> Result<DateTime<Utc>, DateError> {
    let input = text.trim();
    let error = |problem| DateError {
        input: input.to_string(),
        problem,
    };
    let fields = Fields::scan(input.as_bytes()).ok_or_else(|| error(DateProblem::Shape))?;
    let date = date(fields.year, fields.month, fields.day).map_err(error)?;
    let time = clock(fields.hour, fields.minute, fields.second, fields.nanos).map_err(error)?;
    let offset = match fields.offset {
        None => FixedOffset::east_opt(0),
        Some((sign, hours, minutes)) => NaiveTime::from_hms_opt(hours, minutes, 0)
            .and_then(|t| i32::try_from(t.num_seconds_from_midnight()).ok())
            .and_then(|secs| FixedOffset::east_opt(sign * secs)),
    }
    .ok_or_else(|| error(DateProblem::Offset))?;
    // An offset (or a leap second) can carry year 0000 or 9999 past the
    // years that `iso_millis` writes in four digits: out of range.
    NaiveDateTime::new(date, time)
        .checked_sub_offset(offset)
        .map(|utc| utc.and_utc())
        .filter(|t| FOUR_DIGIT_YEARS_MS.contains(&t.timestamp_millis()))
        .ok_or_else(|| error(DateProblem::OutOfRange))
}

/// Epoch ms from 0000-01-01 to the end of 9999-12-31 (UTC).
const FOUR_DIGIT_YEARS_MS: std::ops::Range<i64> = -62_167_219_200_000..253_402_300_800_000;

/// A date chrono agrees exists, or which part of it does not.
fn date(year: i32, month: u32, day: u32) -> Result<NaiveDate, DateProblem> {
    if let Some(date) = NaiveDate::from_ymd_opt(year, month, day) {
        return Ok(date);
    }
    let named = u8::try_from(month)
        .ok()
        .and_then(|m| Month::try_from(m).ok())
        .ok_or(DateProblem::Month(month))?;
    if day == 0 {
        return Err(DateProblem::DayZero);
    }
    let days = named.num_days(year).ok_or(DateProblem::OutOfRange)?;
    Err(DateProblem::PastMonthEnd {
        month: named,
        year,
        days,
    })
}

/// A time of day; second 60 is a leap second, which chrono keeps as second
/// 59 plus a whole second of fraction (so it counts as the next minute's 0).
fn clock(hour: u32, minute: u32, second: u32, nanos: u32) -> Result<NaiveTime, DateProblem> {
    let (sec, nano) = if second == 60 {
        (59, nanos + 1_000_000_000)
    } else {
        (second, nanos)
    };
    NaiveTime::from_hms_nano_opt(hour, minute, sec, nano).ok_or(if hour > 23 {
        DateProblem::Clock {
            unit: "hour",
            value: hour,
        }
    } else if minute > 59 {
        DateProblem::Clock {
            unit: "minute",
            value: minute,
        }
    } else {
        DateProblem::Clock {
            unit: "second",
            value: second,
        }
    })
}

/// The fields of `YYYY-MM-DD[(T|t| )hh:mm[:ss][.f…][Z|z|±hh:mm|±hhmm]]`,
/// read but not yet checked against the calendar.
struct Fields {
    year: i32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nanos: u32,
    /// (sign, hours, minutes); `None` for UTC (`Z` or no zone at all).
    offset: Option<(i32, u32, u32)>,
}

impl Fields {
    fn scan(t: &[u8]) -> Option<Fields> {
        let num = |from: usize, len: usize| -> Option<u32> {
            let digits = t.get(from..from + len)?;
            digits
                .iter()
                .all(u8::is_ascii_digit)
                .then(|| digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
        };
        if t.get(4) != Some(&b'-') || t.get(7) != Some(&b'-') {
            return None;
        }
        let mut fields = Fields {
            year: i32::try_from(num(0, 4)?).ok()?,
            month: num(5, 2)?,
            day: num(8, 2)?,
            hour: 0,
            minute: 0,
            second: 0,
            nanos: 0,
            offset: None,
        };
        if t.len() == 10 {
            return Some(fields);
        }
        if !matches!(t.get(10), Some(b'T' | b't' | b' ')) || t.get(13) != Some(&b':') {
            return None;
        }
        fields.hour = num(11, 2)?;
        fields.minute = num(14, 2)?;
        let mut at = 16;
        if t.get(at) == Some(&b':') {
            fields.second = num(17, 2)?;
            at = 19;
        }
        if t.get(at) == Some(&b'.') {
            let start = at + 1;
            let len = t[start..].iter().take_while(|c| c.is_ascii_digit()).count();
            if len == 0 {
                return None;
            }
            // Nanoseconds are chrono's finest; digits beyond them are cut.
            let kept = len.min(9);
            fields.nanos = num(start, kept)? * 10_u32.pow(9 - kept as u32);
            at = start + len;
        }
        match t.get(at) {
            None => {}
            Some(b'Z' | b'z') if at + 1 == t.len() => {}
            Some(sign @ (b'+' | b'-')) => {
                let colon = t.get(at + 3) == Some(&b':');
                let (minutes_at, end) = if colon {
                    (at + 4, at + 6)
                } else {
                    (at + 3, at + 5)
                };
                if end != t.len() {
                    return None;
                }
                let sign = if *sign == b'+' { 1 } else { -1 };
                fields.offset = Some((sign, num(at + 1, 2)?, num(minutes_at, 2)?));
            }
            _ => return None,
        }
        Some(fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{iso_millis, iso_utc, utc_millis};

    /// Epoch ms of a time written the way `iso_millis` writes it.
    const DEC_1_2026: i64 = 1_796_083_200_000;

    fn problem(text: &str) -> DateProblem {
        match parse_utc(text) {
            Ok(ms) => panic!("{text} read as {}", iso_millis(ms)),
            Err(e) => e.problem,
        }
    }

    #[test]
    fn every_accepted_form_reads_as_the_same_instant() {
        for text in [
            "2026-12-01",
            " 2026-12-01 ",
            "2026-12-01T00:00",
            "2026-12-01t00:00",
            "2026-12-01 00:00",
            "2026-12-01T00:00:00",
            "2026-12-01 00:00:00",
            "2026-12-01T00:00:00Z",
            "2026-12-01t00:00:00z",
            "2026-12-01T00:00:00.000Z",
            "2026-12-01T02:00:00+02:00",
            "2026-12-01T02:00:00+0200",
            "2026-11-30T19:00:00-05:00",
            "2026-11-30T19:00:00-0500",
            "2026-12-01T05:30+05:30",
        ] {
            assert_eq!(parse_utc(text), Ok(DEC_1_2026), "{text}");
        }
    }

    #[test]
    fn leap_years_have_a_29_february_and_other_years_do_not() {
        assert_eq!(
            iso_millis(parse_utc("2024-02-29").unwrap()),
            "2024-02-29T00:00:00.000Z"
        );
        assert_eq!(parse_utc("2000-02-29T12:00:00Z"), Ok(951_825_600_000));
        for not_leap in ["2026-02-29", "1900-02-29", "2100-02-29T10:00Z"] {
            assert!(
                matches!(
                    problem(not_leap),
                    DateProblem::PastMonthEnd { days: 28, .. }
                ),
                "{not_leap}"
            );
        }
    }

    #[test]
    fn days_past_the_end_of_a_month_are_refused_not_carried_into_the_next() {
        assert_eq!(
            parse_utc("2026-02-31").unwrap_err().to_string(),
            "`2026-02-31` is not a date: February 2026 has 28 days"
        );
        assert_eq!(
            parse_utc("2026-04-31T10:00:00Z").unwrap_err().to_string(),
            "`2026-04-31T10:00:00Z` is not a date: April 2026 has 30 days"
        );
        assert_eq!(
            parse_utc("2026-13-01").unwrap_err().to_string(),
            "`2026-13-01` is not a date: there is no month 13"
        );
        assert_eq!(problem("2026-00-10"), DateProblem::Month(0));
        assert_eq!(problem("2026-01-00"), DateProblem::DayZero);
        assert_eq!(parse_utc("2026-12-31"), Ok(DEC_1_2026 + 30 * 86_400_000));
    }

    #[test]
    fn hour_24_minute_60_and_second_61_are_refused() {
        assert_eq!(
            parse_utc("2026-11-29T24:00").unwrap_err().to_string(),
            "`2026-11-29T24:00` is not a time: there is no hour 24"
        );
        assert_eq!(
            problem("2026-11-29T23:60"),
            DateProblem::Clock {
                unit: "minute",
                value: 60
            }
        );
        assert_eq!(
            problem("2026-11-29T23:59:61Z"),
            DateProblem::Clock {
                unit: "second",
                value: 61
            }
        );
    }

    #[test]
    fn a_leap_second_counts_as_the_next_minute_as_it_always_did() {
        assert_eq!(
            parse_utc("2016-12-31T23:59:60Z"),
            parse_utc("2017-01-01T00:00:00Z")
        );
        assert_eq!(
            parse_utc("2016-12-31T23:59:60.5Z"),
            parse_utc("2017-01-01T00:00:00.5Z")
        );
    }

    #[test]
    fn offsets_up_to_23_59_are_taken_and_impossible_ones_refused() {
        assert_eq!(parse_utc("2026-12-01T14:00:00+14:00"), Ok(DEC_1_2026));
        assert_eq!(parse_utc("2026-11-30T12:00:00-12:00"), Ok(DEC_1_2026));
        assert_eq!(parse_utc("2026-12-01T23:59:00+23:59"), Ok(DEC_1_2026));
        assert_eq!(
            parse_utc("2026-12-01T10:00:00+25:00")
                .unwrap_err()
                .to_string(),
            "`2026-12-01T10:00:00+25:00` has an impossible UTC offset \
             (offsets run from -23:59 to +23:59)"
        );
        for bad in [
            "2026-12-01T10:00:00+12:60",
            "2026-12-01T10:00:00-2400",
            "2026-12-01T10:00+99:99",
        ] {
            assert_eq!(problem(bad), DateProblem::Offset, "{bad}");
        }
    }

    #[test]
    fn fractions_of_one_to_nine_digits_and_more_are_cut_to_milliseconds() {
        let base = DEC_1_2026;
        for (fraction, ms) in [
            ("1", 100),
            ("12", 120),
            ("123", 123),
            ("1234", 123),
            ("12345", 123),
            ("123456", 123),
            ("1234567", 123),
            ("12345678", 123),
            ("123456789", 123),
            ("1234567891234", 123),
            ("9999999999", 999),
        ] {
            let text = format!("2026-12-01T00:00:00.{fraction}Z");
            assert_eq!(parse_utc(&text), Ok(base + ms), "{text}");
        }
        assert_eq!(
            parse_end("2026-12-01T00:00:00.123456789Z"),
            Ok(base * 1000 + 123_456)
        );
    }

    #[test]
    fn times_before_1970_are_negative_and_print_back() {
        assert_eq!(parse_utc("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(parse_utc("1969-12-31T23:59:59.999Z"), Ok(-1));
        // A fraction is cut towards the past, before 1970 as after.
        assert_eq!(parse_utc("1969-12-31T23:59:59.9995Z"), Ok(-1));
        assert_eq!(parse_utc("1969-07-20T20:17:40Z"), Ok(-14_182_940_000));
        assert_eq!(iso_millis(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(utc_millis(-14_182_940_000), "1969-07-20 20:17:40 UTC");
    }

    #[test]
    fn what_iso_millis_prints_parse_utc_reads_back_unchanged() {
        for text in [
            "1969-12-31T23:59:59.999Z",
            "1970-01-01T00:00:00.000Z",
            "0001-01-01T00:00:00.000Z",
            "1900-03-01T00:00:00.001Z",
            "2000-02-29T12:00:00.000Z",
            "2024-02-29T23:59:59.999Z",
            "2026-11-29T17:05:07.171Z",
            "2026-12-31T23:59:59.999Z",
            "2038-01-19T03:14:08.000Z",
            "9999-12-31T23:59:59.999Z",
        ] {
            let ms = parse_utc(text).unwrap();
            assert_eq!(iso_millis(ms), text);
            assert_eq!(parse_utc(&iso_millis(ms)), Ok(ms));
        }
        for ms in (-3_000_000_000_000_i64..4_000_000_000_000).step_by(86_399_937_123) {
            assert_eq!(parse_utc(&iso_millis(ms)), Ok(ms), "{ms}");
        }
    }

    #[test]
    fn shapes_other_than_the_accepted_ones_are_not_times() {
        for bad in [
            "",
            "soon",
            "26-11-29",
            "2026-1-29",
            "2026/11/29",
            "2026-11-29T17",
            "2026-11-29X17:05",
            "2026-11-29T17:05:07Zjunk",
            "2026-11-29T17:05:07.Z",
            "2026-11-29T17:05:07+02",
            "2026-11-29T17:05:07+02:0",
            "2026-11-29T17:05:07 +02:00",
        ] {
            assert_eq!(problem(bad), DateProblem::Shape, "{bad:?}");
        }
        assert_eq!(
            parse_utc("soon").unwrap_err().to_string(),
            "`soon` is not a time (2026-12-01, 2026-12-01T10:00, or RFC 3339 like \
             2026-12-01T10:00:00Z)"
        );
    }

    #[test]
    fn times_read_from_links_and_inputs_and_print_back() {
        assert_eq!(parse_utc("2026-12-01T00:00:00Z"), Ok(DEC_1_2026));
        assert_eq!(
            parse_utc("2026-11-29T17:05:07.171524+00:00"),
            Ok(1_795_971_907_171)
        );
        assert_eq!(parse_utc("2026-11-29T17:05:07.1Z"), Ok(1_795_971_907_100));
        assert_eq!(iso_millis(951_825_600_000), "2000-02-29T12:00:00.000Z");
    }

    #[test]
    fn the_generators_end_is_unix_seconds_a_date_or_a_date_time() {
        let dec_1 = DEC_1_2026 * 1000;
        assert_eq!(parse_end("1796083200"), Ok(dec_1));
        assert_eq!(parse_end("2026-12-01"), Ok(dec_1));
        assert_eq!(parse_end("2026-12-01T00:00:00"), Ok(dec_1));
        assert_eq!(parse_end("2026-12-01T02:00:00+02:00"), Ok(dec_1));
        assert_eq!(parse_end("2026-12-01T00:00:00.5Z"), Ok(dec_1 + 500_000));
        assert_eq!(
            problem_of_end("2026-02-31"),
            DateProblem::PastMonthEnd {
                month: Month::February,
                year: 2026,
                days: 28
            }
        );
        assert_eq!(problem_of_end("tomorrow"), DateProblem::Shape);
        assert_eq!(
            problem_of_end(&i64::MAX.to_string()),
            DateProblem::OutOfRange
        );
    }

    #[test]
    fn an_offset_carrying_a_time_before_year_0_or_past_9999_is_out_of_range() {
        // Both were read, and `iso_millis` wrote them as `-001-12-31T23:59…`
        // and `10000-01-01T00:00…`, which no longer read.
        for text in [
            "0000-01-01T00:00+00:01",
            "9999-12-31T23:59-00:01",
            "9999-12-31T23:59:60Z",
        ] {
            assert_eq!(problem(text), DateProblem::OutOfRange, "{text}");
        }
        for text in ["0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999-00:00"] {
            let ms = parse_utc(text).unwrap();
            assert_eq!(parse_utc(&iso_millis(ms)), Ok(ms), "{text}");
        }
    }

    fn problem_of_end(text: &str) -> DateProblem {
        match parse_end(text) {
            Ok(us) => panic!("{text} read as {}", iso_utc(us)),
            Err(e) => e.problem,
        }
    }
}
