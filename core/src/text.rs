//! Small text helpers shared by the views: how Salt prints values and
//! durations (dates are in [`crate::time`]).

use serde_json::Value;

/// Renders a JSON scalar the way a person reads it (strings without quotes);
/// structures fall back to compact JSON.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => json_text(other),
    }
}

/// A `Value` as compact JSON, by `serde_json::to_string`: the one writer of
/// `Value`s in the wasm. Their `Display` (`to_string()`, `{value}` in a
/// message) is a second, with a pretty printer beside it.
pub fn json_text(value: &Value) -> String {
    // Writing a `Value` into a `String` cannot fail: its keys are strings.
    serde_json::to_string(value).unwrap_or_default()
}

/// `x` with `decimals` (up to 9) digits after the point, exactly as
/// `format!("{x:.N}")` and Python's `"{:.Nf}"` print it: the float's exact
/// value correctly rounded, a tie to even. The standard library's float
/// formatting (Grisu with a Dragon4 fallback and their tables, ~14 KB of
/// wasm) is left out of the app this way: every number it shows has a
/// fixed number of decimals.
pub fn fixed(x: f64, decimals: u32) -> String {
    if !x.is_finite() {
        return match x {
            _ if x.is_nan() => "NaN",
            _ if x > 0.0 => "inf",
            _ => "-inf",
        }
        .to_string();
    }
    let d = decimals.min(9);
    let scale = 10u128.pow(d);
    // |x| = m × 2^e exactly.
    let bits = x.abs().to_bits();
    let (fraction, exponent) = (bits & ((1 << 52) - 1), ((bits >> 52) & 0x7ff) as i32);
    let (m, e) = match exponent {
        0 => (fraction, -1074),
        _ => (fraction | 1 << 52, exponent - 1075),
    };
    let n = u128::from(m) * scale; // below 2^83
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let scaled = match e {
        // An integer past 2^97: no fraction, and too big for u128 once scaled.
        45.. => return format!("{sign}{}{}", big_integer(m, e as u32), dot_zeros(d)),
        0.. => n << e,
        // Below 2^-45 after scaling: rounds to 0.
        ..=-128 => 0,
        _ => {
            let k = e.unsigned_abs();
            let (q, r, half) = (n >> k, n & ((1u128 << k) - 1), 1u128 << (k - 1));
            q + u128::from(r > half || (r == half && q % 2 == 1))
        }
    };
    match d {
        0 => format!("{sign}{scaled}"),
        _ => format!(
            "{sign}{}.{:0width$}",
            scaled / scale,
            scaled % scale,
            width = d as usize
        ),
    }
}

/// `m × 2^e` in decimal digits, for [`fixed`]'s huge numbers.
fn big_integer(m: u64, e: u32) -> String {
    // Base 10^9 limbs, least significant first.
    let mut limbs: Vec<u64> = vec![
        m % 1_000_000_000,
        m / 1_000_000_000 % 1_000_000_000,
        m / 1_000_000_000_000_000_000,
    ];
    for _ in 0..e {
        let mut carry = 0;
        for limb in &mut limbs {
            let v = *limb * 2 + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    while limbs.len() > 1 && limbs.last() == Some(&0) {
        limbs.pop();
    }
    let mut text = limbs.pop().unwrap_or(0).to_string();
    for limb in limbs.iter().rev() {
        text.push_str(&format!("{limb:09}"));
    }
    text
}

fn dot_zeros(decimals: u32) -> String {
    match decimals {
        0 => String::new(),
        d => format!(".{}", "0".repeat(d as usize)),
    }
}

/// `Total run time` as Salt's highstate outputter prints it: milliseconds
/// with three decimals, switching to seconds above 999 ms.
pub fn salt_duration(ms: f64) -> String {
    if ms > 999.0 {
        format!("{} s", fixed(ms / 1000.0, 3))
    } else {
        format!("{} ms", fixed(ms, 3))
    }
}

/// Text longer than this is shown folded: its start, and "show all".
pub const FOLD_BYTES: usize = 64 * 1024;

/// The start of `text` shown while it is folded: its first [`FOLD_BYTES`]
/// (cut between characters), or `None` when it is short enough to show whole.
pub fn folded_start(text: &str) -> Option<&str> {
    if text.len() <= FOLD_BYTES {
        return None;
    }
    let mut end = FOLD_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(&text[..end])
}

/// A count and its noun, "1 job" or "2 jobs": `noun` is the singular, and
/// the plural adds an "s" (every noun the pages count does).
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A share (0 to 1) as a whole percent, "12 %"; a share that is not none
/// but rounds to 0 reads "<1 %", and one short of all that rounds to 100
/// reads ">99 %": a failure in a thousand runs is not "0 %".
pub fn percent(share: f64) -> String {
    let whole = fixed(share * 100.0, 0);
    match whole.as_str() {
        "0" | "-0" if share > 0.0 => "<1 %".into(),
        "100" if share < 1.0 => ">99 %".into(),
        _ => format!("{whole} %"),
    }
}

/// A size in bytes as people read it: "5.0 MB", "63 KB".
pub fn human_bytes(n: usize) -> String {
    if n >= 1_000_000 {
        format!("{} MB", fixed(n as f64 / 1e6, 1))
    } else {
        format!("{} KB", n.div_ceil(1000))
    }
}

/// Characters a short line shows of a long one.
const LINE_CHARS_SHOWN: usize = 120;

/// A long line (a compound target, megabytes of arguments) cut to its first
/// 120 characters and "…", for a row or a heading; `None` when it fits.
pub fn short_line(text: &str) -> Option<String> {
    let (cut, _) = text.char_indices().nth(LINE_CHARS_SHOWN)?;
    Some(format!("{}…", &text[..cut]))
}

/// `text`, or its [`short_line`] when long: an id quoted in a message or a
/// title.
pub fn line_shown(text: &str) -> String {
    short_line(text).unwrap_or_else(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_share_that_is_neither_none_nor_all_never_reads_as_either() {
        assert_eq!(percent(0.0), "0 %");
        assert_eq!(percent(1.0 / 1133.0), "<1 %");
        assert_eq!(percent(0.006), "1 %");
        assert_eq!(percent(0.25), "25 %");
        assert_eq!(percent(1132.0 / 1133.0), ">99 %");
        assert_eq!(percent(1.0), "100 %");
    }

    #[test]
    fn one_of_a_noun_is_singular() {
        assert_eq!(counted(1, "job"), "1 job");
        assert_eq!(counted(0, "return"), "0 returns");
        assert_eq!(counted(2_000, "published job"), "2000 published jobs");
    }

    #[test]
    fn json_text_is_what_display_writes() {
        let value = json!({
            "b": [1, -2.5, 1e300, null, true, "é\"\\/\u{1}\n"],
            "a": {"": {}, "x": []},
            "n": u64::MAX
        });
        for v in [value.clone(), value["b"].clone(), json!("x"), json!(null)] {
            assert_eq!(json_text(&v), v.to_string());
        }
        assert_eq!(
            json_text(&value["a"]),
            r#"{"":{},"x":[]}"#,
            "compact, keys in the map's order"
        );
    }

    #[test]
    fn durations_switch_to_seconds_above_999_ms() {
        assert_eq!(salt_duration(12.3456), "12.346 ms");
        assert_eq!(salt_duration(999.0), "999.000 ms");
        assert_eq!(salt_duration(1234.5), "1.234 s");
    }

    #[test]
    fn scalars_read_without_quotes() {
        assert_eq!(scalar_text(&json!("a")), "a");
        assert_eq!(scalar_text(&json!(3)), "3");
        assert_eq!(scalar_text(&json!(null)), "");
        assert_eq!(scalar_text(&json!([1])), "[1]");
    }

    #[test]
    fn long_text_folds_between_characters() {
        assert_eq!(folded_start("short"), None);
        let text = format!("{}é tail", "a".repeat(FOLD_BYTES - 1));
        let start = folded_start(&text).unwrap();
        assert_eq!(start.len(), FOLD_BYTES - 1);
        assert_eq!(human_bytes(5_000_000), "5.0 MB");
        assert_eq!(human_bytes(62_001), "63 KB");
    }

    #[test]
    fn a_line_over_120_characters_is_cut_and_one_that_fits_is_not() {
        assert_eq!(short_line(&"é".repeat(120)), None);
        let cut = short_line(&"é".repeat(121)).unwrap();
        assert_eq!(cut.chars().count(), 121);
        assert!(cut.ends_with("é…"));
    }

    #[test]
    fn fixed_prints_as_format_does() {
        // A cheap deterministic spread of magnitudes and signs, and numbers
        // whose scaling rounds (1.2345 × 1000 is 1234.5 in f64, while
        // 1.2345 is a little below it: "1.234").
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut values = vec![
            1.2345,
            0.125,
            2.5,
            0.5,
            1.005,
            0.285,
            1e-310,
            5e-324,
            123456.789e3,
            2f64.powi(60),
            1e30,
            f64::MAX,
        ];
        for i in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let magnitude = 10f64.powi(i % 12 - 4);
            let sign = if i % 3 == 0 { -1.0 } else { 1.0 };
            values.push((x % 1_000_000) as f64 / 1_000_000.0 * magnitude * sign);
            values.push(f64::from_bits(x >> 2));
        }
        for v in values {
            for d in 0..=9u32 {
                let std = format!("{v:.prec$}", prec = d as usize);
                assert_eq!(fixed(v, d), std, "{v:e} to {d} decimals");
            }
        }
        assert_eq!(fixed(f64::NAN, 1), "NaN");
        assert_eq!(fixed(f64::NEG_INFINITY, 1), "-inf");
    }
}
