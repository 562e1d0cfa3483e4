//! Small text helpers shared by the views: how Salt prints times and values.

use serde_json::Value;

/// Renders a JSON scalar the way a person reads it (strings without quotes);
/// structures fall back to compact JSON.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// `Total run time` as Salt's highstate outputter prints it: milliseconds
/// with three decimals, switching to seconds above 999 ms.
pub fn salt_duration(ms: f64) -> String {
    if ms > 999.0 {
        format!("{:.3} s", ms / 1000.0)
    } else {
        format!("{ms:.3} ms")
    }
}

/// A jid is the job's start time, `YYYYMMDDhhmmssffffff`, optionally with a
/// `_<pid>` suffix (`unique_jid`). Returns `YYYY-MM-DD hh:mm:ss.ffffff`, or
/// `None` when the jid does not have that shape.
pub fn jid_start_time(jid: &str) -> Option<String> {
    let digits = jid.split('_').next()?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let d = digits;
    let (month, day): (u32, u32) = (d[4..6].parse().ok()?, d[6..8].parse().ok()?);
    let (hour, minute, second): (u32, u32, u32) = (
        d[8..10].parse().ok()?,
        d[10..12].parse().ok()?,
        d[12..14].parse().ok()?,
    );
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    Some(format!(
        "{}-{}-{} {}:{}:{}.{}",
        &d[0..4],
        &d[4..6],
        &d[6..8],
        &d[8..10],
        &d[10..12],
        &d[12..14],
        &d[14..20]
    ))
}

/// An ISO 8601 `@timestamp` shown as `YYYY-MM-DD hh:mm:ss UTC`; anything that
/// does not parse is shown as it is, never dropped.
pub fn utc_timestamp(raw: &str) -> String {
    match parse_utc(raw) {
        Some(ms) => utc_millis(ms),
        None => raw.to_string(),
    }
}

/// Shell-style matching: `*` any run of characters, `?` one character.
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

// Dates by hand (Howard Hinnant's civil-day algorithms) rather than chrono:
// the app needs only UTC, and chrono's formatting machinery is a tenth of
// the wasm binary's size budget.

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day, hour, minute, second, millisecond) of epoch ms, UTC.
fn parts(ms: i64) -> (i64, i64, i64, i64, i64, i64, i64) {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let secs = rest / 1000;
    (y, m, d, secs / 3600, secs / 60 % 60, secs % 60, rest % 1000)
}

/// Epoch milliseconds as ISO 8601 UTC with milliseconds (`…T17:05:07.171Z`).
pub fn iso_millis(ms: i64) -> String {
    let (y, mo, d, h, mi, s, f) = parts(ms);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{f:03}Z")
}

/// Epoch milliseconds as `YYYY-MM-DD hh:mm:ss UTC` for people.
pub fn utc_millis(ms: i64) -> String {
    let (y, mo, d, h, mi, s, _) = parts(ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC")
}

/// Reads a time a person or a link gives: RFC 3339 (`2026-12-01T10:00:00Z`,
/// with an offset or a fraction), or without a zone as a date-time input
/// gives it (`2026-12-01T10:00`, taken as UTC), or a bare date (midnight
/// UTC). Returns epoch milliseconds.
pub fn parse_utc(text: &str) -> Option<i64> {
    let t = text.trim().as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = t.get(from..from + len)?;
        digits
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| digits.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if t.get(4) != Some(&b'-')
        || t.get(7) != Some(&b'-')
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&d)
    {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * 86_400_000;
    if t.len() == 10 {
        return Some(ms);
    }
    if !matches!(t.get(10), Some(b'T' | b't' | b' ')) || t.get(13) != Some(&b':') {
        return None;
    }
    let (h, mi) = (num(11, 2)?, num(14, 2)?);
    let mut at = 16;
    let mut sec = 0;
    if t.get(at) == Some(&b':') {
        sec = num(17, 2)?;
        at = 19;
    }
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    ms += ((h * 60 + mi) * 60 + sec) * 1000;
    if t.get(at) == Some(&b'.') {
        let start = at + 1;
        let end = start + t[start..].iter().take_while(|c| c.is_ascii_digit()).count();
        if end == start {
            return None;
        }
        let frac = &t[start..end.min(start + 3)];
        let millis = frac.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0'));
        ms += millis * 10_i64.pow(3 - frac.len() as u32);
        at = end;
    }
    match t.get(at) {
        None => Some(ms),
        Some(b'Z' | b'z') if at + 1 == t.len() => Some(ms),
        Some(sign @ (b'+' | b'-')) => {
            let oh = num(at + 1, 2)?;
            let om = match t.get(at + 3) {
                Some(b':') => num(at + 4, 2)?,
                _ => num(at + 3, 2)?,
            };
            let rest = if t.get(at + 3) == Some(&b':') {
                at + 6
            } else {
                at + 5
            };
            if rest != t.len() {
                return None;
            }
            let offset = (oh * 60 + om) * 60_000;
            Some(if *sign == b'+' {
                ms - offset
            } else {
                ms + offset
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_switch_to_seconds_above_999_ms() {
        assert_eq!(salt_duration(12.3456), "12.346 ms");
        assert_eq!(salt_duration(999.0), "999.000 ms");
        assert_eq!(salt_duration(1234.5), "1.234 s");
    }

    #[test]
    fn jid_start_time_reads_plain_and_unique_jids() {
        assert_eq!(
            jid_start_time("20261202184626123456").as_deref(),
            Some("2026-12-02 18:46:26.123456")
        );
        assert_eq!(
            jid_start_time("20261202184626123456_4242").as_deref(),
            Some("2026-12-02 18:46:26.123456")
        );
        assert_eq!(jid_start_time("req"), None);
        assert_eq!(jid_start_time("20261399184626123456"), None);
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
    }

    #[test]
    fn times_read_from_links_and_inputs_and_print_back() {
        assert_eq!(parse_utc("2026-12-01T00:00:00Z"), Some(1_796_083_200_000));
        assert_eq!(
            parse_utc("2026-12-01T02:00:00+02:00"),
            Some(1_796_083_200_000)
        );
        assert_eq!(parse_utc("2026-12-01T00:00"), Some(1_796_083_200_000));
        assert_eq!(parse_utc("2026-12-01"), Some(1_796_083_200_000));
        assert_eq!(parse_utc("soon"), None);
        assert_eq!(iso_millis(1_796_083_200_123), "2026-12-01T00:00:00.123Z");
        assert_eq!(utc_millis(1_796_083_200_123), "2026-12-01 00:00:00 UTC");
    }

    #[test]
    fn dates_agree_with_the_calendar_far_from_the_epoch() {
        assert_eq!(parse_utc("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_utc("2000-02-29T12:00:00Z"), Some(951_825_600_000));
        assert_eq!(iso_millis(951_825_600_000), "2000-02-29T12:00:00.000Z");
        assert_eq!(iso_millis(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            parse_utc("2026-11-29T17:05:07.171524+00:00"),
            Some(1_795_971_907_171)
        );
        assert_eq!(parse_utc("2026-11-29T17:05:07.1Z"), Some(1_795_971_907_100));
        for bad in [
            "2026-13-01",
            "2026-11-29T25:00",
            "2026-11-29T17:05:07Zjunk",
            "2026-11-29T17:05:07.Z",
            "26-11-29",
        ] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
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
    fn scalars_read_without_quotes() {
        assert_eq!(scalar_text(&json!("a")), "a");
        assert_eq!(scalar_text(&json!(3)), "3");
        assert_eq!(scalar_text(&json!(null)), "");
        assert_eq!(scalar_text(&json!([1])), "[1]");
    }
}
