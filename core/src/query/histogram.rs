//! Returns over time, succeeded / failed / runner stacked, above the job
//! list — Kibana Discover's histogram. The request, the parsing, and the
//! chart's geometry (so the SVG component only draws rectangles and the
//! zoom maths is tested here).

use crate::json::At;
use serde_json::{json, Value};

use super::filter::{failed_clause, runner_clause};
use super::template::body;
use super::FieldMap;
use crate::text::fixed;

/// Aim for at most this many bars: readable at any width.
pub const TARGET_BARS: i64 = 60;

const INTERVALS: [(i64, &str); 17] = [
    (1_000, "1s"),
    (5_000, "5s"),
    (10_000, "10s"),
    (30_000, "30s"),
    (60_000, "1m"),
    (300_000, "5m"),
    (600_000, "10m"),
    (1_800_000, "30m"),
    (3_600_000, "1h"),
    (3 * 3_600_000, "3h"),
    (6 * 3_600_000, "6h"),
    (12 * 3_600_000, "12h"),
    (86_400_000, "1d"),
    (2 * 86_400_000, "2d"),
    (7 * 86_400_000, "7d"),
    (30 * 86_400_000, "30d"),
    (365 * 86_400_000, "365d"),
];

#[derive(Clone, Debug, Default, PartialEq)]
pub struct HistogramBucket {
    pub start_ms: i64,
    pub succeeded: u64,
    pub failed: u64,
    pub runner: u64,
}

impl HistogramBucket {
    pub fn total(&self) -> u64 {
        self.succeeded + self.failed + self.runner
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    pub interval_ms: i64,
    pub from_ms: i64,
    pub to_ms: i64,
    pub buckets: Vec<HistogramBucket>,
}

/// The smallest round interval that keeps the range within [`TARGET_BARS`].
pub fn pick_interval(span_ms: i64) -> (i64, &'static str) {
    INTERVALS
        .iter()
        .copied()
        .find(|(ms, _)| span_ms / ms <= TARGET_BARS)
        .unwrap_or(INTERVALS[INTERVALS.len() - 1])
}

/// The aggregation: a fixed interval over a known range (with empty buckets
/// kept, so gaps show), or `auto_date_histogram` for all time.
pub fn histogram_agg(fields: &FieldMap, bounds: Option<(i64, i64)>) -> Value {
    // Runners that did not fail: a failed one is in `failed`.
    let sub = body(
        r#"{"failed":{"filter":$0},"runner":{"filter":{"bool":{"filter":[$1],"must_not":[$0]}}}}"#,
        &[failed_clause(fields), runner_clause(fields)],
    );
    match bounds {
        Some((from, to)) => {
            let (_, interval) = pick_interval(to - from);
            body(
                r#"{"date_histogram":{"field":"@timestamp","fixed_interval":$0,"min_doc_count":0,"extended_bounds":{"min":$1,"max":$2}},"aggs":$3}"#,
                &[json!(interval), json!(from), json!(to), sub],
            )
        }
        None => body(
            r#"{"auto_date_histogram":{"field":"@timestamp","buckets":$0},"aggs":$1}"#,
            &[json!(TARGET_BARS), sub],
        ),
    }
}

/// Reads the histogram aggregation; `None` when the answer has none.
pub fn parse_histogram(agg: &Value, bounds: Option<(i64, i64)>) -> Option<Histogram> {
    let raw = agg.get("buckets")?.as_array()?;
    let count = |b: &Value, path: &str| b.at(path).and_then(Value::as_u64).unwrap_or(0);
    let buckets: Vec<HistogramBucket> = raw
        .iter()
        .filter_map(|b| {
            let start_ms = b.get("key")?.as_f64()? as i64;
            let total = count(b, "/doc_count");
            let failed = count(b, "/failed/doc_count");
            let runner = count(b, "/runner/doc_count");
            Some(HistogramBucket {
                start_ms,
                succeeded: total.saturating_sub(failed + runner),
                failed,
                runner,
            })
        })
        .collect();
    let interval_ms = match (bounds, agg.get("interval").and_then(Value::as_str)) {
        (Some((from, to)), _) => pick_interval(to - from).0,
        (None, Some(text)) => interval_ms(text).unwrap_or(86_400_000),
        (None, None) => match buckets.as_slice() {
            [a, b, ..] => b.start_ms - a.start_ms,
            _ => 86_400_000,
        },
    };
    let (from_ms, to_ms) = match bounds {
        Some(b) => b,
        None => (
            buckets.first().map(|b| b.start_ms).unwrap_or(0),
            buckets
                .last()
                .map(|b| b.start_ms + interval_ms)
                .unwrap_or(0),
        ),
    };
    Some(Histogram {
        interval_ms,
        from_ms,
        to_ms,
        buckets,
    })
}

/// `auto_date_histogram`'s interval (`3h`, `7d`, `1M`, `1y`) in ms; months
/// and years approximately, which is all a bar width needs.
fn interval_ms(text: &str) -> Option<i64> {
    let unit_at = text.find(|c: char| !c.is_ascii_digit())?;
    let n: i64 = text[..unit_at].parse().ok()?;
    let unit = match &text[unit_at..] {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        "M" => 30 * 86_400_000,
        "y" => 365 * 86_400_000,
        _ => return None,
    };
    Some(n * unit)
}

impl Histogram {
    pub fn max_total(&self) -> u64 {
        self.buckets
            .iter()
            .map(HistogramBucket::total)
            .max()
            .unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.buckets.iter().map(HistogramBucket::total).sum()
    }

    fn span(&self) -> f64 {
        (self.to_ms - self.from_ms).max(1) as f64
    }

    /// The chart as three SVG paths, the bands stacked from `bottom` up:
    /// succeeded, failed, runner; each a rectangle a bucket, `height` for the
    /// tallest, time running left to right over `width`. Three elements to
    /// draw and to replace on each answer, not four a bucket: re-drawing 60
    /// buckets' rectangles was 16 ms of a filter change at 1M returns.
    pub fn band_paths(&self, width: f64, height: f64, bottom: f64) -> [String; 3] {
        let max = self.max_total().max(1) as f64;
        let mut paths = [String::new(), String::new(), String::new()];
        for b in &self.buckets {
            let (x, w) = self.bar_span(b, width);
            let mut top = bottom;
            for (path, n) in paths.iter_mut().zip([b.succeeded, b.failed, b.runner]) {
                if n == 0 {
                    continue;
                }
                let h = n as f64 / max * height;
                top -= h;
                for (part, v) in [("M", x), (" ", top), ("h", w), ("v", h), ("h-", w)] {
                    path.push_str(part);
                    path.push_str(&fixed(v, 2));
                }
                path.push('z');
            }
        }
        paths
    }

    /// A bucket's bar along a chart `width` wide: its left edge and width,
    /// a hair narrower than the bucket so that bars stand apart.
    pub fn bar_span(&self, bucket: &HistogramBucket, width: f64) -> (f64, f64) {
        let x0 = self.x_of(bucket.start_ms, width).max(0.0);
        let x1 = self
            .x_of(bucket.start_ms + self.interval_ms, width)
            .min(width);
        (x0, ((x1 - x0) * 0.9).max(0.5))
    }

    pub fn x_of(&self, ms: i64, width: f64) -> f64 {
        (ms - self.from_ms) as f64 / self.span() * width
    }

    /// The time under `x` of a chart `width` wide (clamped to the range).
    pub fn time_at(&self, x: f64, width: f64) -> i64 {
        let frac = (x / width.max(1.0)).clamp(0.0, 1.0);
        self.from_ms + (frac * self.span()).round() as i64
    }

    /// The instant under `x` that a bucket holds. The engine's extended
    /// bounds may add an empty bucket that starts where the range ends: the
    /// chart's right edge belongs to the bucket before it.
    fn instant_at(&self, x: f64, width: f64) -> i64 {
        self.time_at(x, width).min(self.to_ms - 1)
    }

    /// The range a drag from `x0` to `x1` selects (either direction). A
    /// click (no drag) selects the bucket under it.
    pub fn zoom_range(&self, x0: f64, x1: f64, width: f64) -> (i64, i64) {
        let (a, b) = if x0 <= x1 { (x0, x1) } else { (x1, x0) };
        if b - a < 3.0 {
            let start = self
                .bucket_at(a, width)
                .map_or_else(|| self.instant_at(a, width), |bk| bk.start_ms);
            return (start, start + self.interval_ms);
        }
        (self.time_at(a, width), self.time_at(b, width))
    }

    /// Bucket under `x`, for the hover label and a click.
    pub fn bucket_at(&self, x: f64, width: f64) -> Option<&HistogramBucket> {
        let t = self.instant_at(x, width);
        self.buckets
            .iter()
            .find(|b| b.start_ms <= t && t < b.start_ms + self.interval_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_keep_every_preset_within_sixty_bars() {
        assert_eq!(pick_interval(15 * 60_000).1, "30s");
        assert_eq!(pick_interval(3_600_000).1, "1m");
        assert_eq!(pick_interval(86_400_000).1, "30m");
        assert_eq!(pick_interval(7 * 86_400_000).1, "3h");
        assert_eq!(pick_interval(30 * 86_400_000).1, "12h");
    }

    #[test]
    fn a_known_range_asks_for_empty_buckets_over_all_of_it() {
        let agg = histogram_agg(&FieldMap::default(), Some((0, 86_400_000)));
        assert_eq!(agg["date_histogram"]["fixed_interval"], "30m");
        assert_eq!(agg["date_histogram"]["min_doc_count"], 0);
        assert_eq!(agg["date_histogram"]["extended_bounds"]["max"], 86_400_000);
        let all = histogram_agg(&FieldMap::default(), None);
        assert_eq!(all["auto_date_histogram"]["buckets"], TARGET_BARS);
    }

    fn answer() -> Value {
        json!({"buckets": [
            {"key": 0, "doc_count": 10, "failed": {"doc_count": 3}, "runner": {"doc_count": 1}},
            {"key": 1_800_000, "doc_count": 0, "failed": {"doc_count": 0}, "runner": {"doc_count": 0}},
            {"key": 3_600_000, "doc_count": 20, "failed": {"doc_count": 0}, "runner": {"doc_count": 0}}
        ]})
    }

    #[test]
    fn buckets_split_into_succeeded_failed_and_runner() {
        let h = parse_histogram(&answer(), Some((0, 86_400_000))).unwrap();
        assert_eq!(h.interval_ms, 1_800_000, "{h:?}");
        assert_eq!(
            h.buckets[0],
            HistogramBucket {
                start_ms: 0,
                succeeded: 6,
                failed: 3,
                runner: 1
            }
        );
        assert_eq!(h.total(), 30);
        assert_eq!(h.max_total(), 20);
    }

    #[test]
    fn all_time_reads_the_interval_the_engine_chose() {
        let mut a = answer();
        a["interval"] = json!("30m");
        let h = parse_histogram(&a, None).unwrap();
        assert_eq!(h.interval_ms, 1_800_000);
        assert_eq!((h.from_ms, h.to_ms), (0, 5_400_000));
        assert_eq!(interval_ms("1M"), Some(30 * 86_400_000));
    }

    #[test]
    fn bars_stack_to_the_tallest_bucket_and_clicks_zoom_to_a_bucket() {
        let h = parse_histogram(&answer(), Some((0, 86_400_000))).unwrap();
        // Buckets of 30 minutes over a day, 300 wide: 6.25 a bucket, bars
        // 5.625 wide. The tallest (the third: 20 succeeded) is 100 high;
        // the first holds 6 succeeded, 3 failed and 1 runner; the second
        // nothing, so no band draws it.
        let [succeeded, failed, runner] = h.band_paths(300.0, 100.0, 101.0);
        let w = fixed(5.625, 2);
        assert_eq!(
            succeeded,
            format!("M0.00 71.00h{w}v30.00h-{w}zM12.50 1.00h{w}v100.00h-{w}z")
        );
        assert_eq!(failed, format!("M0.00 56.00h{w}v15.00h-{w}z"));
        assert_eq!(runner, format!("M0.00 51.00h{w}v5.00h-{w}z"));
        assert_eq!(h.bar_span(&h.buckets[1], 300.0), (6.25, 5.625));
        // a click on the first bar selects its 30 minutes
        assert_eq!(h.zoom_range(1.0, 2.0, 300.0), (0, 1_800_000));
        // a drag selects what it covers, whichever way it went
        assert_eq!(h.zoom_range(200.0, 100.0, 300.0), (28_800_000, 57_600_000));
        assert_eq!(h.bucket_at(13.0, 300.0).unwrap().succeeded, 20);
    }

    #[test]
    fn the_right_edge_is_the_last_bucket_of_the_range_not_the_one_after() {
        // Extended bounds to the range's end add an empty bucket there.
        let bucket = |start_ms| HistogramBucket {
            start_ms,
            ..HistogramBucket::default()
        };
        let h = Histogram {
            interval_ms: 1_000,
            from_ms: 0,
            to_ms: 3_000,
            buckets: vec![bucket(0), bucket(1_000), bucket(2_000), bucket(3_000)],
        };
        assert_eq!(h.bucket_at(300.0, 300.0).map(|b| b.start_ms), Some(2_000));
        assert_eq!(h.zoom_range(299.0, 300.0, 300.0), (2_000, 3_000));
    }
}
