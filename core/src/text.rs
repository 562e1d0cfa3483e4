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
    match chrono::DateTime::parse_from_rfc3339(raw) {
        Ok(t) => t
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M:%S UTC")
            .to_string(),
        Err(_) => raw.to_string(),
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

/// Epoch milliseconds as ISO 8601 UTC with milliseconds (`…T17:05:07.171Z`).
pub fn iso_millis(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_else(|| ms.to_string())
}

/// Epoch milliseconds as `YYYY-MM-DD hh:mm:ss UTC` for people.
pub fn utc_millis(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| ms.to_string())
}

/// Reads a time a person or a link gives: RFC 3339 (`2026-12-01T10:00:00Z`,
/// with an offset or fraction), or without zone as a date-time input gives
/// it (`2026-12-01T10:00`, taken as UTC), or a bare date (midnight UTC).
pub fn parse_utc(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(t.timestamp_millis());
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(text, format) {
            return Some(t.and_utc().timestamp_millis());
        }
    }
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
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
