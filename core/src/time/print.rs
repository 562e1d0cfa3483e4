//! Printing epoch times for people and for ISO 8601, and the formats Salt
//! itself writes (`isoformat()`, jids, a state's `start_time`).

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike, Utc};

use super::parse_utc;

/// Epoch milliseconds as ISO 8601 UTC with milliseconds (`…T17:05:07.171Z`).
pub fn iso_millis(ms: i64) -> String {
    match DateTime::from_timestamp_millis(ms) {
        Some(t) => {
            let mut text = date_and_clock(&t, 'T');
            text.push('.');
            push_digits(&mut text, t.timestamp_subsec_millis(), 3);
            text.push('Z');
            text
        }
        None => beyond_chrono(ms),
    }
}

/// Epoch milliseconds as `YYYY-MM-DD hh:mm:ss UTC` for people.
pub fn utc_millis(ms: i64) -> String {
    match DateTime::from_timestamp_millis(ms) {
        Some(t) => format!("{} UTC", date_and_clock(&t, ' ')),
        None => beyond_chrono(ms),
    }
}

/// Epoch milliseconds as `YYYY-MM-DD hh:mm:ss`, for a column whose header
/// says UTC: the job list's, where every character is a column's width.
pub fn utc_clock(ms: i64) -> String {
    match DateTime::from_timestamp_millis(ms) {
        Some(t) => date_and_clock(&t, ' '),
        None => beyond_chrono(ms),
    }
}

/// An ISO 8601 `@timestamp` shown as `YYYY-MM-DD hh:mm:ss UTC`; anything that
/// does not parse is shown as it is, never dropped.
pub fn utc_timestamp(raw: &str) -> String {
    parse_utc(raw)
        .map(utc_millis)
        .unwrap_or_else(|_| raw.to_string())
}

/// A jid is the job's start time, `YYYYMMDDhhmmssffffff`, optionally with a
/// `_<pid>` suffix (`unique_jid`). Returns `YYYY-MM-DD hh:mm:ss.ffffff`, or
/// `None` when the jid does not have that shape or names no real time.
pub fn jid_start_time(jid: &str) -> Option<String> {
    let t = jid_instant(jid)?;
    Some(format!(
        "{}.{:06}",
        date_and_clock(&t, ' '),
        t.timestamp_subsec_micros()
    ))
}

/// The jid's start time ([`jid_start_time`]) in epoch milliseconds.
pub fn jid_start_ms(jid: &str) -> Option<i64> {
    jid_instant(jid).map(|t| t.timestamp_millis())
}

fn jid_instant(jid: &str) -> Option<DateTime<Utc>> {
    let digits = jid.split('_').next()?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |from: usize, to: usize| digits.get(from..to)?.parse::<u32>().ok();
    let date = NaiveDate::from_ymd_opt(i32::try_from(n(0, 4)?).ok()?, n(4, 6)?, n(6, 8)?)?;
    // Python's datetime has no second 60, so a jid never does either.
    let time = NaiveTime::from_hms_micro_opt(n(8, 10)?, n(10, 12)?, n(12, 14)?, n(14, 20)?)?;
    Some(NaiveDateTime::new(date, time).and_utc())
}

/// `datetime.now(utc).isoformat()`: `2026-11-29T17:05:07.171524+00:00`
/// (Python drops the fraction when the microsecond is 0).
pub fn iso_utc(us: i64) -> String {
    match DateTime::from_timestamp_micros(us) {
        Some(t) => format!("{}{}+00:00", date_and_clock(&t, 'T'), python_micros(&t)),
        None => beyond_chrono(us),
    }
}

/// `salt.utils.jid.gen_jid`: `%Y%m%d%H%M%S%f`, always 20 digits.
pub fn jid(us: i64) -> String {
    match DateTime::from_timestamp_micros(us) {
        Some(t) => format!(
            "{:04}{:02}{:02}{:02}{:02}{:02}{:06}",
            t.year(),
            t.month(),
            t.day(),
            t.hour(),
            t.minute(),
            t.second(),
            t.timestamp_subsec_micros()
        ),
        None => beyond_chrono(us),
    }
}

/// A state's `start_time`: `datetime.now().time().isoformat()` (minions run
/// on UTC).
pub fn time_of_day(us: i64) -> String {
    match DateTime::from_timestamp_micros(us) {
        Some(t) => format!(
            "{:02}:{:02}:{:02}{}",
            t.hour(),
            t.minute(),
            t.second(),
            python_micros(&t)
        ),
        None => beyond_chrono(us),
    }
}

/// `YYYY-MM-DD<sep>hh:mm:ss`.
fn date_and_clock(t: &DateTime<Utc>, sep: char) -> String {
    // Digit by digit, not by `format!`: the export prints one per row.
    let year = t.year();
    let mut text = String::with_capacity(24);
    if (0..=9999).contains(&year) {
        push_digits(&mut text, year as u32, 4);
    } else {
        text.push_str(&format!("{year:04}"));
    }
    text.push('-');
    push_digits(&mut text, t.month(), 2);
    text.push('-');
    push_digits(&mut text, t.day(), 2);
    text.push(sep);
    push_digits(&mut text, t.hour(), 2);
    text.push(':');
    push_digits(&mut text, t.minute(), 2);
    text.push(':');
    push_digits(&mut text, t.second(), 2);
    text
}

/// `n`'s last `width` decimal digits, zero-padded (`n` < 10^`width`).
fn push_digits(text: &mut String, n: u32, width: u32) {
    for place in (0..width).rev() {
        let digit = (n / 10u32.pow(place)) % 10;
        text.push(char::from(b'0' + digit as u8));
    }
}

/// `.ffffff` as Python's `isoformat()` writes it: nothing when it is 0.
fn python_micros(t: &DateTime<Utc>) -> String {
    match t.timestamp_subsec_micros() {
        0 => String::new(),
        micros => format!(".{micros:06}"),
    }
}

/// A number outside chrono's ±262,143 years (no engine date or jid gets
/// there) is shown as the number itself rather than a made-up date.
fn beyond_chrono(n: i64) -> String {
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::parse_end;

    /// Epoch ms of a time written the way `iso_millis` writes it.
    const DEC_1_2026: i64 = 1_796_083_200_000;

    #[test]
    fn epoch_millis_print_for_people_and_for_iso_8601() {
        assert_eq!(iso_millis(DEC_1_2026 + 123), "2026-12-01T00:00:00.123Z");
        assert_eq!(utc_millis(DEC_1_2026 + 123), "2026-12-01 00:00:00 UTC");
        assert_eq!(utc_clock(DEC_1_2026 + 1_999), "2026-12-01 00:00:01");
        assert_eq!(iso_millis(i64::MAX), i64::MAX.to_string());
    }

    #[test]
    fn digits_print_as_the_formatter_printed_them() {
        let by_format = |ms: i64| {
            let t = DateTime::from_timestamp_millis(ms).unwrap();
            format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                t.year(),
                t.month(),
                t.day(),
                t.hour(),
                t.minute(),
                t.second(),
                t.timestamp_subsec_millis()
            )
        };
        // Years -1 to 10001 (the formatter's padding beyond 0..=9999), and
        // every 37th millisecond of two hours: every digit of the clock.
        let year_ms: i64 = 31_556_952_000;
        let mut checked = 0;
        for ms in (-62_198_755_200_000_i64..253_433_923_200_000).step_by(year_ms as usize / 7) {
            assert_eq!(iso_millis(ms), by_format(ms));
            checked += 1;
        }
        for ms in (DEC_1_2026 - 3_700_000..DEC_1_2026 + 3_700_000).step_by(37) {
            assert_eq!(iso_millis(ms), by_format(ms));
            checked += 1;
        }
        assert!(checked > 200_000, "{checked}");
        // As `{:04}` pads a negative year: the sign counts as a digit.
        assert_eq!(utc_millis(-62_198_755_200_000), "-001-01-01 00:00:00 UTC");
    }

    #[test]
    fn timestamps_are_shown_in_utc_and_bad_ones_kept() {
        assert_eq!(
            utc_timestamp("2026-11-29T17:05:07.171524+00:00"),
            "2026-11-29 17:05:07 UTC"
        );
        assert_eq!(
            utc_timestamp("2026-11-29T19:05:07+02:00"),
            "2026-11-29 17:05:07 UTC"
        );
        assert_eq!(utc_timestamp("yesterday"), "yesterday");
        assert_eq!(
            utc_timestamp("2026-02-31T10:00:00Z"),
            "2026-02-31T10:00:00Z"
        );
    }

    #[test]
    fn jid_start_times_read_plain_and_unique_jids() {
        assert_eq!(
            jid_start_time("20261202184626123456").as_deref(),
            Some("2026-12-02 18:46:26.123456")
        );
        assert_eq!(
            jid_start_time("20261202184626123456_4242").as_deref(),
            Some("2026-12-02 18:46:26.123456")
        );
        assert_eq!(
            jid_start_time("20240229000000000000_1").as_deref(),
            Some("2024-02-29 00:00:00.000000")
        );
    }

    #[test]
    fn a_jid_naming_no_real_time_has_no_start_time() {
        for bad in [
            "req",
            "",
            "_4242",
            "2026120218462612345",
            "202612021846261234567",
            "2026120218462612345x",
            "20261399184626123456",
            "20260231184626123456",
            "20260229000000000000",
            "20261202244626123456",
            "20261202186026123456",
            "20261202184660123456",
        ] {
            assert_eq!(jid_start_time(bad), None, "{bad}");
        }
    }

    // The generator's formats, byte for byte as Salt writes them.

    #[test]
    fn generator_formats_match_what_salt_writes() {
        let us = parse_end("2026-12-02T19:14:13").unwrap() + 295_885;
        assert_eq!(jid(us), "20261202191413295885");
        assert_eq!(iso_utc(us), "2026-12-02T19:14:13.295885+00:00");
        assert_eq!(time_of_day(us), "19:14:13.295885");
        assert_eq!(iso_utc(us - 295_885), "2026-12-02T19:14:13+00:00");
        assert_eq!(time_of_day(us - 295_885), "19:14:13");
        assert_eq!(
            jid(parse_end("2024-02-29").unwrap()),
            "20240229000000000000"
        );
        assert_eq!(iso_utc(1), "1970-01-01T00:00:00.000001+00:00");
        assert_eq!(jid(-1), "19691231235959999999");
    }

    #[test]
    fn a_jids_start_in_milliseconds_is_its_start_time_read_back() {
        for jid in [
            "20261202184626123456",
            "20261202184626123456_4242",
            "19690101000000999999",
        ] {
            let text = jid_start_time(jid).unwrap();
            assert_eq!(jid_start_ms(jid), Some(parse_utc(&text).unwrap()), "{jid}");
        }
        assert_eq!(jid_start_ms("2026120218462612345"), None);
    }
}
