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

/// A size in bytes as people read it: "5.0 MB", "63 KB".
pub fn human_bytes(n: usize) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", n as f64 / 1e6)
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
}
