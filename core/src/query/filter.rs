//! `JobFilter`: what an operator asks of the job history, as it lives in the
//! URL, and the query clauses it turns into. Every view that lists returns
//! (jobs, histogram, minions, functions) starts from the same filter, so a
//! pasted link reproduces any of them.

use serde_json::{json, Value};

use super::template::body;
use super::{FieldMap, QueryContext};
use crate::route::param;
use crate::time::{iso_millis, parse_utc, DateError};

/// The relative ranges the time picker offers, as Kibana does.
pub const TIME_PRESETS: [(&str, &str, i64); 6] = [
    ("15m", "Last 15 minutes", 15 * 60_000),
    ("1h", "Last hour", 3_600_000),
    ("24h", "Last 24 hours", 86_400_000),
    ("7d", "Last 7 days", 7 * 86_400_000),
    ("30d", "Last 30 days", 30 * 86_400_000),
    ("all", "All time", 0),
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeRange {
    /// The last `ms` milliseconds up to now; `key` is the URL spelling.
    Last {
        key: String,
        ms: i64,
    },
    /// An absolute range in epoch milliseconds (from a date picker or a
    /// histogram zoom).
    Absolute {
        from_ms: i64,
        to_ms: i64,
    },
    All,
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange::Last {
            key: "7d".into(),
            ms: 7 * 86_400_000,
        }
    }
}

impl TimeRange {
    /// Reads `time=24h`, `time=all` or `time=<iso>..<iso>`.
    pub fn parse(text: &str) -> Result<TimeRange, String> {
        let text = text.trim();
        if let Some((_, _, ms)) = TIME_PRESETS.iter().find(|(k, _, _)| *k == text) {
            return Ok(if *ms == 0 {
                TimeRange::All
            } else {
                TimeRange::Last {
                    key: text.to_string(),
                    ms: *ms,
                }
            });
        }
        if let Some((from, to)) = text.split_once("..") {
            return TimeRange::between(from, to, |_, e| e.to_string());
        }
        Err(format!(
            "`{text}` is not a time range (15m, 1h, 24h, 7d, 30d, all, or <from>..<to>)"
        ))
    }

    /// The range the filter form's From and to fields give, read as a link's
    /// `time=<from>..<to>` is; a problem names its field.
    pub fn custom(from: &str, to: &str) -> Result<TimeRange, String> {
        TimeRange::between(from, to, |field, e| format!("{field}: {e}"))
    }

    fn between(
        from: &str,
        to: &str,
        problem: impl Fn(&str, DateError) -> String,
    ) -> Result<TimeRange, String> {
        // The date's own message says why (`February 2026 has 28 days`).
        let from_ms = parse_utc(from).map_err(|e| problem("From", e))?;
        let to_ms = parse_utc(to).map_err(|e| problem("To", e))?;
        // A bare date as the end takes in that whole day, as a person
        // means it: `2026-12-01..2026-12-07` is a week, not six days.
        let to_ms = match to.trim().len() {
            10 => to_ms + 86_399_999,
            _ => to_ms,
        };
        if from_ms > to_ms {
            return Err(format!(
                "the range {} .. {} ends before it starts",
                from.trim(),
                to.trim()
            ));
        }
        Ok(TimeRange::Absolute { from_ms, to_ms })
    }

    pub fn to_param(&self) -> String {
        match self {
            TimeRange::Last { key, .. } => key.clone(),
            TimeRange::Absolute { from_ms, to_ms } => {
                format!("{}..{}", iso_millis(*from_ms), iso_millis(*to_ms))
            }
            TimeRange::All => "all".into(),
        }
    }

    /// The range resolved against `now_ms`; `None` for all time.
    pub fn bounds(&self, now_ms: i64) -> Option<(i64, i64)> {
        match self {
            TimeRange::Last { ms, .. } => Some((now_ms - ms, now_ms)),
            TimeRange::Absolute { from_ms, to_ms } => Some((*from_ms, *to_ms)),
            TimeRange::All => None,
        }
    }

    pub fn label(&self) -> String {
        match self {
            TimeRange::Last { key, .. } => TIME_PRESETS
                .iter()
                .find(|(k, _, _)| k == key)
                .map(|(_, label, _)| label.to_string())
                .unwrap_or_else(|| key.clone()),
            TimeRange::Absolute { from_ms, to_ms } => {
                format!("{} to {}", iso_millis(*from_ms), iso_millis(*to_ms))
            }
            TimeRange::All => "All time".into(),
        }
    }
}

/// Whether the job's returns succeeded, as a filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutcomeFilter {
    #[default]
    All,
    /// At least one matching return failed (runner returns never count).
    AnyFailed,
    /// No matching return failed.
    AllSucceeded,
}

impl OutcomeFilter {
    pub fn parse(text: &str) -> Result<OutcomeFilter, String> {
        match text {
            "" | "all" => Ok(OutcomeFilter::All),
            "failed" => Ok(OutcomeFilter::AnyFailed),
            "succeeded" => Ok(OutcomeFilter::AllSucceeded),
            other => Err(format!(
                "`{other}` is not an outcome (all, failed, succeeded)"
            )),
        }
    }

    pub fn to_param(self) -> &'static str {
        match self {
            OutcomeFilter::All => "all",
            OutcomeFilter::AnyFailed => "failed",
            OutcomeFilter::AllSucceeded => "succeeded",
        }
    }
}

/// A list typed as `web*, db-02` or `web* db-02`: its items, blanks dropped.
pub fn split_list(text: &str) -> Vec<String> {
    text.split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Everything an operator can narrow the job history by.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobFilter {
    /// A whole jid, or its beginning (`20261202` = that day's jobs).
    pub jid: Option<String>,
    /// Minion ids, exact or with `*`/`?` wildcards; any of them matches.
    pub minions: Vec<String>,
    /// Function names, exact or wildcard; any of them matches.
    pub functions: Vec<String>,
    pub outcome: OutcomeFilter,
    pub time: TimeRange,
    /// Lucene `query_string` over the documents.
    pub text: Option<String>,
    /// Show the noisy functions (`saltutil.*`, `mine.update`, …) too.
    pub show_noisy: bool,
}

impl JobFilter {
    /// Reads the filter from URL query pairs. A parameter that does not read
    /// is left at its default and explained, so a bad link still shows a page.
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (JobFilter, Vec<String>) {
        let mut problems = Vec::new();
        let text = |name: &str| get(name).map(str::trim).filter(|s| !s.is_empty());
        let list = |name: &str| text(name).map(split_list).unwrap_or_default();
        let outcome = match OutcomeFilter::parse(text(param::OUTCOME).unwrap_or("")) {
            Ok(o) => o,
            Err(e) => {
                problems.push(e);
                OutcomeFilter::All
            }
        };
        let time = match text(param::TIME).map(TimeRange::parse) {
            None => TimeRange::default(),
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                problems.push(e);
                TimeRange::default()
            }
        };
        let filter = JobFilter {
            jid: text(param::JID).map(|j| j.trim_end_matches('*').to_string()),
            minions: list(param::MINION),
            functions: list(param::FUN),
            outcome,
            time,
            text: text(param::TEXT).map(str::to_string),
            show_noisy: text(param::NOISY) == Some("show"),
        };
        (filter, problems)
    }

    /// The filter as URL query pairs, defaults left out so links stay short.
    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(jid) = &self.jid {
            out.push((param::JID, jid.clone()));
        }
        if !self.minions.is_empty() {
            out.push((param::MINION, self.minions.join(",")));
        }
        if !self.functions.is_empty() {
            out.push((param::FUN, self.functions.join(",")));
        }
        if self.outcome != OutcomeFilter::All {
            out.push((param::OUTCOME, self.outcome.to_param().to_string()));
        }
        if self.time != TimeRange::default() {
            out.push((param::TIME, self.time.to_param()));
        }
        if let Some(q) = &self.text {
            out.push((param::TEXT, q.clone()));
        }
        if self.show_noisy {
            out.push((param::NOISY, "show".into()));
        }
        out
    }

    /// The `bool` query of the returns this filter selects, without the
    /// outcome (which is per job, not per return; see
    /// [`Self::returns_query_with_outcome`]).
    pub fn returns_query(&self, ctx: &QueryContext) -> Value {
        let fields = &ctx.fields;
        let (mut filter, mut must_not) = super::returns_filter(&ctx.config);
        if let Some((from, to)) = self.time.bounds(ctx.now_ms) {
            filter.push(time_clause("@timestamp", from, to));
        }
        if let Some(jid) = &self.jid {
            filter.push(if is_whole_jid(jid) {
                json!({"term": {fields.jid.clone(): jid}})
            } else {
                json!({"prefix": {fields.jid.clone(): jid}})
            });
        }
        if let Some(any) = any_of(&fields.minion, &self.minions) {
            filter.push(any);
        }
        if let Some(any) = any_of(&fields.fun, &self.functions) {
            filter.push(any);
        }
        // Noise is hidden only while no function is asked for by name: asking
        // for `saltutil.sync_all` must find it.
        if !self.show_noisy && self.functions.is_empty() {
            must_not.extend(ctx.noisy.iter().map(|f| pattern_clause(&fields.fun, f)));
        }
        if let Some(q) = &self.text {
            filter.push(query_string(q));
        }
        json!({"bool": {"filter": filter, "must_not": must_not}})
    }

    /// The returns query with the outcome applied per return: for
    /// [`OutcomeFilter::AnyFailed`] only failed returns ([`failed_clause`]),
    /// so that the jobs found are those with at least one failure.
    pub fn returns_query_with_outcome(&self, ctx: &QueryContext) -> Value {
        match self.outcome {
            // Decided per job, from each job's count of failed returns.
            OutcomeFilter::AllSucceeded => self.returns_query(ctx),
            _ => self.returns_query_by_return(ctx),
        }
    }

    /// The returns query with the outcome taken per return: only failed
    /// returns ([`failed_clause`]), or only the others (a runner by its own
    /// verdict). What counts returns asks this: the minions view, and the
    /// returns and states exports.
    pub fn returns_query_by_return(&self, ctx: &QueryContext) -> Value {
        let mut query = self.returns_query(ctx);
        let key = match self.outcome {
            OutcomeFilter::All => return query,
            OutcomeFilter::AnyFailed => "/bool/filter",
            OutcomeFilter::AllSucceeded => "/bool/must_not",
        };
        if let Some(clauses) = query.pointer_mut(key).and_then(Value::as_array_mut) {
            clauses.push(failed_clause(&ctx.fields));
        }
        query
    }
}

/// `{"prefix": {fun: "runner."}}`: runner returns, whatever the index prefix.
pub fn runner_clause(fields: &FieldMap) -> Value {
    json!({"prefix": {fields.fun.clone(): "runner."}})
}

/// A failed return. A runner's return always says `success: false`; its
/// own verdict is `data.success`, searchable where `data` is mapped as
/// written, and copied to `saltscope.runner_failed` by the summary
/// pipeline where the index templates keep `data` out of the index.
pub fn failed_clause(fields: &FieldMap) -> Value {
    body(
        r#"{"bool":{"should":[{"bool":{"filter":[{"term":{"success":false}}],"must_not":[$0]}},{"bool":{"filter":[$0,{"bool":{"should":[{"term":{"data.success":false}},{"term":{"saltscope.runner_failed":true}}],"minimum_should_match":1}}]}}],"minimum_should_match":1}}"#,
        &[runner_clause(fields)],
    )
}

pub fn time_clause(field: &str, from_ms: i64, to_ms: i64) -> Value {
    body(
        r#"{"range":{$0:{"gte":$1,"lte":$2,"format":"epoch_millis"}}}"#,
        &[json!(field), json!(from_ms), json!(to_ms)],
    )
}

/// The free text as Lucene `query_string`. Not `lenient`: that turns a
/// syntax error into "no hits" silently (OpenSearch 3.8); the engine's
/// all-fields mode is lenient about field types by itself, and a syntax
/// error fails, so the view shows the engine's explanation.
pub fn query_string(q: &str) -> Value {
    body(
        r#"{"query_string":{"query":$0,"default_operator":"AND","analyze_wildcard":true}}"#,
        &[json!(q)],
    )
}

/// Digits and `_` only: a jid, its beginning, or one with the `_<pid>` of
/// `unique_jid` — what a link may page from or filter by.
pub fn is_jid_text(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_digit() || b == b'_')
}

/// A 20-digit jid, optionally with the `_<pid>` of `unique_jid`.
pub fn is_whole_jid(jid: &str) -> bool {
    let digits = jid.split('_').next().unwrap_or("");
    digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `term` for a plain value, `wildcard` for one with `*` or `?`.
pub fn pattern_clause(field: &str, pattern: &str) -> Value {
    if pattern.contains(['*', '?']) {
        json!({"wildcard": {field: {"value": pattern}}})
    } else {
        json!({"term": {field: pattern}})
    }
}

/// Any of `patterns` on `field` (each a term or a wildcard); `None` for none.
pub(crate) fn any_of(field: &str, patterns: &[String]) -> Option<Value> {
    match patterns {
        [] => None,
        [one] => Some(pattern_clause(field, one)),
        many => Some(body(
            r#"{"bool":{"should":$0,"minimum_should_match":1}}"#,
            &[many.iter().map(|p| pattern_clause(field, p)).collect()],
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_764_700_000_000;

    fn read(pairs: &[(&str, &str)]) -> (JobFilter, Vec<String>) {
        JobFilter::from_query(|name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| *v))
    }

    fn query(filter: &JobFilter) -> Value {
        filter.returns_query(&QueryContext::at(NOW))
    }

    fn without_noise() -> QueryContext {
        QueryContext {
            noisy: Vec::new(),
            ..QueryContext::at(NOW)
        }
    }

    #[test]
    fn a_filter_survives_the_round_trip_through_the_url() {
        let filter = JobFilter {
            jid: Some("20261202".into()),
            minions: vec!["web*".into(), "db-02".into()],
            functions: vec!["state.apply".into()],
            outcome: OutcomeFilter::AnyFailed,
            time: TimeRange::Absolute {
                from_ms: NOW - 3_600_000,
                to_ms: NOW,
            },
            text: Some("comment:\"rm -rf\" AND NOT x".into()),
            show_noisy: true,
        };
        let pairs = filter.to_query();
        let (back, problems) =
            JobFilter::from_query(|n| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_str()));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(back, filter);
    }

    #[test]
    fn the_default_filter_makes_no_parameters() {
        assert!(JobFilter::default().to_query().is_empty());
    }

    #[test]
    fn a_bad_parameter_is_explained_and_left_at_its_default() {
        let (f, problems) = read(&[
            ("time", "yesterday"),
            ("outcome", "meh"),
            ("fun", "cmd.run"),
        ]);
        assert_eq!(f.time, TimeRange::default());
        assert_eq!(f.outcome, OutcomeFilter::All);
        assert_eq!(f.functions, ["cmd.run"]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("yesterday")));
    }

    #[test]
    fn the_forms_custom_range_takes_in_a_bare_end_date_as_a_link_does() {
        let form = TimeRange::custom("2026-12-04", " 2026-12-05 ").unwrap();
        assert_eq!(form, TimeRange::parse("2026-12-04..2026-12-05").unwrap());
        assert_eq!(
            form.to_param(),
            "2026-12-04T00:00:00.000Z..2026-12-05T23:59:59.999Z"
        );
        // One day, from and to the same date.
        let day = TimeRange::custom("2026-12-05", "2026-12-05").unwrap();
        assert_eq!(day.bounds(0).map(|(a, b)| b - a), Some(86_399_999));
        // A time as the end is taken as written.
        let to_the_minute = TimeRange::custom("2026-12-04", "2026-12-05T00:00").unwrap();
        assert!(to_the_minute
            .to_param()
            .ends_with("..2026-12-05T00:00:00.000Z"));
        let problem = TimeRange::custom("2026-12-04", "2026-02-30").unwrap_err();
        assert!(problem.starts_with("To: "), "{problem}");
    }

    #[test]
    fn an_absolute_range_that_ends_before_it_starts_is_refused() {
        assert!(TimeRange::parse("2026-12-02T00:00:00Z..2026-12-01T00:00:00Z").is_err());
        let ok = TimeRange::parse("2026-12-01T00:00:00Z..2026-12-02T00:00:00.500Z").unwrap();
        assert_eq!(ok.bounds(0), Some((1_796_083_200_000, 1_796_169_600_500)));
    }

    #[test]
    fn an_impossible_date_in_a_range_is_refused_saying_why() {
        assert_eq!(
            TimeRange::parse("2026-02-01..2026-02-31"),
            Err("`2026-02-31` is not a date: February 2026 has 28 days".into())
        );
    }

    #[test]
    fn a_whole_jid_is_a_term_and_a_shorter_one_a_prefix() {
        let (f, _) = read(&[("jid", "20261202184626123456")]);
        assert_eq!(
            query(&f)["bool"]["filter"][2]["term"]["jid.keyword"],
            "20261202184626123456"
        );
        let (f, _) = read(&[("jid", "2026120218*")]);
        assert_eq!(
            query(&f)["bool"]["filter"][2]["prefix"]["jid.keyword"],
            "2026120218"
        );
        assert!(is_whole_jid("20261202184626123456_991"));
    }

    #[test]
    fn several_minions_match_any_of_them_with_wildcards() {
        let (f, _) = read(&[("minion", "web*, db-02")]);
        let q = query(&f);
        let should = &q["bool"]["filter"][2]["bool"]["should"];
        assert_eq!(should[0]["wildcard"]["minion.keyword"]["value"], "web*");
        assert_eq!(should[1]["term"]["minion.keyword"], "db-02");
    }

    #[test]
    fn the_time_range_filters_the_returners_timestamp() {
        let (f, _) = read(&[("time", "24h")]);
        let range = &query(&f)["bool"]["filter"][1]["range"]["@timestamp"];
        assert_eq!(range["gte"], NOW - 86_400_000);
        assert_eq!(range["lte"], NOW);
        let (all, _) = read(&[("time", "all")]);
        assert!(!query(&all).to_string().contains("@timestamp"));
    }

    #[test]
    fn noisy_functions_are_hidden_unless_shown_or_asked_for() {
        let hidden = query(&JobFilter::default());
        assert!(hidden["bool"]["must_not"]
            .to_string()
            .contains("saltutil.*"));
        let (shown, _) = read(&[("noisy", "show")]);
        assert!(!query(&shown)["bool"]["must_not"]
            .to_string()
            .contains("saltutil"));
        let (asked, _) = read(&[("fun", "saltutil.sync_all")]);
        assert!(!query(&asked)["bool"]["must_not"]
            .to_string()
            .contains("saltutil.*"));
    }

    #[test]
    fn free_text_is_a_query_string() {
        let (f, _) = read(&[("q", "Connection refused")]);
        let q = query(&f);
        let qs = q["bool"]["filter"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|c| c.get("query_string"))
            .unwrap();
        assert_eq!(qs["query"], "Connection refused");
        assert!(
            qs.get("lenient").is_none(),
            "lenient would hide syntax errors"
        );
    }

    #[test]
    fn any_failed_selects_failed_returns_runners_by_their_own_verdict() {
        let (f, _) = read(&[("outcome", "failed")]);
        let ctx = without_noise();
        let q = f.returns_query_with_outcome(&ctx);
        let filter = q["bool"]["filter"].as_array().unwrap();
        assert!(filter.contains(&failed_clause(&ctx.fields)), "{q}");
        let failed = failed_clause(&ctx.fields).to_string();
        // Others by `success`, runners by `data.success` or the pipeline's copy.
        for part in [
            r#"{"term":{"success":false}}"#,
            r#"{"term":{"data.success":false}}"#,
            r#"{"term":{"saltscope.runner_failed":true}}"#,
            r#""fun.keyword":"runner.""#,
        ] {
            assert!(failed.contains(part), "{part} in {failed}");
        }
        let (s, _) = read(&[("outcome", "succeeded")]);
        let q = s.returns_query_with_outcome(&without_noise());
        assert!(
            !q.to_string().contains("success"),
            "succeeded is decided per job"
        );
    }

    #[test]
    fn the_outcome_per_return_keeps_failed_returns_or_leaves_them_out() {
        let ctx = QueryContext::at(NOW);
        let failed = failed_clause(&ctx.fields);
        let with = |outcome| {
            JobFilter {
                outcome,
                ..JobFilter::default()
            }
            .returns_query_by_return(&ctx)
        };
        let any_failed = with(OutcomeFilter::AnyFailed);
        assert!(any_failed["bool"]["filter"]
            .as_array()
            .unwrap()
            .contains(&failed));
        let succeeded = with(OutcomeFilter::AllSucceeded);
        assert!(succeeded["bool"]["must_not"]
            .as_array()
            .unwrap()
            .contains(&failed));
        assert!(!succeeded["bool"]["filter"]
            .as_array()
            .unwrap()
            .contains(&failed));
        assert_eq!(
            with(OutcomeFilter::All),
            JobFilter::default().returns_query(&ctx)
        );
    }

    #[test]
    fn a_bare_date_as_the_end_takes_in_that_whole_day() {
        let day = |t: &str| crate::time::parse_utc(t).unwrap();
        let week = TimeRange::parse("2026-12-01..2026-12-07").unwrap();
        assert_eq!(
            week.bounds(NOW),
            Some((day("2026-12-01"), day("2026-12-08") - 1))
        );
        let one_day = TimeRange::parse("2026-12-07..2026-12-07").unwrap();
        assert_eq!(
            one_day.bounds(NOW),
            Some((day("2026-12-07"), day("2026-12-08") - 1))
        );
        let hour = TimeRange::parse("2026-12-07T10:00..2026-12-07T11:00").unwrap();
        assert_eq!(
            hour.bounds(NOW),
            Some((day("2026-12-07T10:00"), day("2026-12-07T11:00")))
        );
        let reversed = TimeRange::parse("2026-12-08..2026-12-01").unwrap_err();
        assert!(reversed.contains("ends before it starts"), "{reversed}");
    }
}
