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
}
