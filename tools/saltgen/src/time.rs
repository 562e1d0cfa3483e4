//! UTC civil time from microseconds since the epoch, in the formats Salt writes.

/// (year, month, day, hour, minute, second, microsecond)
pub fn civil(us: i64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let secs = us.div_euclid(1_000_000);
    let micro = us.rem_euclid(1_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400) as u32;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (y, m, d, sod / 3600, sod / 60 % 60, sod % 60, micro)
}

/// `datetime.now(utc).isoformat()`: `2026-11-29T17:05:07.171524+00:00`
/// (Python drops the fraction when the microsecond is 0).
pub fn iso_utc(us: i64) -> String {
    let (y, mo, d, h, mi, s, f) = civil(us);
    if f == 0 {
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}+00:00")
    } else {
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{f:06}+00:00")
    }
}

/// `salt.utils.jid.gen_jid`: `%Y%m%d%H%M%S%f`, always 20 digits.
pub fn jid(us: i64) -> String {
    let (y, mo, d, h, mi, s, f) = civil(us);
    format!("{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}{f:06}")
}

/// A state's `start_time`: `datetime.now().time().isoformat()` (minions run on UTC).
pub fn time_of_day(us: i64) -> String {
    let (_, _, _, h, mi, s, f) = civil(us);
    if f == 0 {
        format!("{h:02}:{mi:02}:{s:02}")
    } else {
        format!("{h:02}:{mi:02}:{s:02}.{f:06}")
    }
}

/// Parse `2026-12-02T19:14:13Z` / `2026-12-02T19:14:13.5+00:00` / `2026-12-02` or unix seconds.
pub fn parse_end(v: &str) -> Option<i64> {
    if let Ok(secs) = v.parse::<i64>() {
        return Some(secs * 1_000_000);
    }
    let b = v.as_bytes();
    if b.len() < 10 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| v.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (mut h, mut mi, mut s) = (0, 0, 0);
    if b.len() >= 19 {
        h = num(11..13)?;
        mi = num(14..16)?;
        s = num(17..19)?;
    }
    // days_from_civil
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400) + h * 3600 + mi * 60 + s) * 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let us = parse_end("2026-12-02T19:14:13").unwrap() + 295_885;
        assert_eq!(jid(us), "20261202191413295885");
        assert_eq!(iso_utc(us), "2026-12-02T19:14:13.295885+00:00");
        assert_eq!(time_of_day(us), "19:14:13.295885");
        assert_eq!(iso_utc(us - 295_885), "2026-12-02T19:14:13+00:00");
        assert_eq!(
            jid(parse_end("2024-02-29").unwrap()),
            "20240229000000000000"
        );
    }
}
