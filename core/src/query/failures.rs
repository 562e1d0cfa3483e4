//! Failure patterns (`/failures`): the failed states of the fleet in a
//! time range, grouped by state function and comment with what varies from
//! minion to minion (numbers, paths, hex ids, IPs, host names, the minion's
//! own id) replaced by placeholders — so 300 minions failing the same way
//! are one line, not 300.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::filter::{split_list, JobFilter, TimeRange};
use super::minions::STATE_RUN_FUNCTIONS;
use super::scan::{Scan, ScanEnd};
use super::QueryContext;
use crate::model::{ReturnData, ReturnDoc, StateResult};
use crate::sort;
use crate::time::parse_utc;

/// Failed state runs read at most (the newest).
pub const FAILURES_LIMIT: u64 = 50_000;

/// Which failures: in the URL as `time` and `minion`.
#[derive(Clone, Debug, PartialEq)]
pub struct FailureFilter {
    pub time: TimeRange,
    pub minions: Vec<String>,
}

impl Default for FailureFilter {
    fn default() -> Self {
        FailureFilter {
            time: TimeRange::parse("7d").unwrap_or(TimeRange::All),
            minions: Vec::new(),
        }
    }
}

impl FailureFilter {
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (FailureFilter, Vec<String>) {
        let mut problems = Vec::new();
        let mut filter = FailureFilter::default();
        if let Some(t) = get("time").filter(|t| !t.is_empty()) {
            match TimeRange::parse(t) {
                Ok(time) => filter.time = time,
                Err(e) => problems.push(format!("{e}: showing the last 7 days")),
            }
        }
        filter.minions = get("minion").map(split_list).unwrap_or_default();
        (filter, problems)
    }

    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![("time", self.time.to_param())];
        if !self.minions.is_empty() {
            out.push(("minion", self.minions.join(",")));
        }
        out
    }

    /// The returns to read: failed state runs (any state False, or the run
    /// itself refused) in the range.
    pub fn scan(&self, ctx: &QueryContext) -> Scan {
        let returns = JobFilter {
            minions: self.minions.clone(),
            functions: STATE_RUN_FUNCTIONS.iter().map(|f| f.to_string()).collect(),
            time: self.time.clone(),
            show_noisy: true,
            ..JobFilter::default()
        };
        let mut query = returns.returns_query(ctx);
        if let Some(filter) = query
            .pointer_mut("/bool/filter")
            .and_then(Value::as_array_mut)
        {
            filter.push(json!({"term": {"success": false}}));
        }
        Scan {
            query,
            source: vec![
                "jid",
                "minion",
                "fun",
                "@timestamp",
                "success",
                "retcode",
                "data.*.result",
                "data.*.comment",
                "data.*.__id__",
                "data.*.__sls__",
                "data.*.__run_num__",
                "data.*.name",
                "data.return",
            ],
            limit: FAILURES_LIMIT,
        }
    }
}

/// One kind of failure across the fleet.
#[derive(Clone, Debug, PartialEq)]
pub struct FailurePattern {
    /// `file.managed`, or `(render)` when the run never started.
    pub function: String,
    /// The comment with placeholders.
    pub pattern: String,
    pub minions: BTreeSet<String>,
    /// Failed states seen (a minion failing it in five runs counts five).
    pub occurrences: u64,
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    /// The newest occurrence as it was.
    pub example: FailureExample,
    /// Jobs it happened in, newest first (at most [`JOBS_KEPT`]).
    pub jids: Vec<String>,
    /// Every job it happened in, the ones past [`JOBS_KEPT`] too.
    pub jobs: BTreeSet<String>,
}

/// Job links kept per pattern.
pub const JOBS_KEPT: usize = 10;

#[derive(Clone, Debug, PartialEq)]
pub struct FailureExample {
    pub jid: String,
    pub minion: String,
    pub state_id: String,
    pub comment: String,
}

/// The view's answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FailureReport {
    /// Most minions first.
    pub patterns: Vec<FailurePattern>,
    pub runs_read: u64,
    pub notes: Vec<String>,
}

/// Groups failed states as the scan hands over returns (newest first).
#[derive(Default)]
pub struct FailureGrouper {
    groups: BTreeMap<(String, String), FailurePattern>,
}

impl FailureGrouper {
    pub fn add(&mut self, hit: &Value) {
        let doc = ReturnDoc::read_hit(hit);
        let at = doc.timestamp.as_deref().and_then(|t| parse_utc(t).ok());
        match &doc.data {
            ReturnData::States(states) => {
                for run in states
                    .runs
                    .iter()
                    .filter(|r| r.result == StateResult::False)
                {
                    self.count(&doc, at, &run.function, &run.id, &run.comment);
                }
            }
            ReturnData::StateError(lines) => {
                self.count(&doc, at, "(render)", "", &lines.join("\n"));
            }
            _ => {}
        }
    }

    fn count(
        &mut self,
        doc: &ReturnDoc,
        at: Option<i64>,
        function: &str,
        state_id: &str,
        comment: &str,
    ) {
        let pattern = normalize(comment, &doc.minion);
        let group = self
            .groups
            .entry((function.to_string(), pattern.clone()))
            .or_insert_with(|| FailurePattern {
                function: function.to_string(),
                pattern,
                minions: BTreeSet::new(),
                occurrences: 0,
                first_ms: at,
                last_ms: at,
                // The scan reads newest first: the first seen is the newest.
                example: FailureExample {
                    jid: doc.jid.clone(),
                    minion: doc.minion.clone(),
                    state_id: state_id.to_string(),
                    comment: comment.to_string(),
                },
                jids: Vec::new(),
                jobs: BTreeSet::new(),
            });
        group.minions.insert(doc.minion.clone());
        group.occurrences += 1;
        group.first_ms = group.first_ms.min(at).or(at).or(group.first_ms);
        group.last_ms = group.last_ms.max(at);
        if group.jobs.insert(doc.jid.clone()) && group.jids.len() < JOBS_KEPT {
            group.jids.push(doc.jid.clone());
        }
    }

    pub fn report(self, end: ScanEnd) -> FailureReport {
        let mut patterns: Vec<FailurePattern> = self.groups.into_values().collect();
        sort::sort_by(&mut patterns, |a, b| {
            (b.minions.len(), b.occurrences, &a.function, &a.pattern).cmp(&(
                a.minions.len(),
                a.occurrences,
                &b.function,
                &b.pattern,
            ))
        });
        FailureReport {
            patterns,
            runs_read: end.read,
            notes: end.stopped_short.into_iter().collect(),
        }
    }
}

/// The comment with what differs between minions replaced: the minion id
/// `<minion>`, IPv4 addresses (and their port) `<ip>`, paths `<path>`, hex
/// ids of 8 or more digits `<hex>`, dotted host names `<host>`, other
/// numbers `<n>`. Whitespace runs become one space.
pub fn normalize(comment: &str, minion: &str) -> String {
    let text = if minion.is_empty() {
        comment.to_string()
    } else {
        comment.replace(minion, "<minion>")
    };
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() {
            out.push_str(&placeholder(word));
            word.clear();
        }
    };
    for c in text.chars() {
        // Words are runs of what ids, paths and addresses are made of.
        if c.is_alphanumeric() || matches!(c, '.' | '/' | '_' | '-' | ':' | '<' | '>') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            if c.is_whitespace() {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            } else {
                out.push(c);
            }
        }
    }
    flush(&mut word, &mut out);
    out.trim().to_string()
}

/// A word, or its placeholder; trailing sentence punctuation kept.
fn placeholder(word: &str) -> String {
    let core = word.trim_end_matches(['.', ':', ',']);
    let tail = &word[core.len()..];
    let replaced = if core.contains("<minion>") {
        None
    } else if core.starts_with('/') && core.len() > 1 {
        Some("<path>")
    } else if is_ipv4(core.split(':').next().unwrap_or(core)) {
        Some("<ip>")
    } else if is_hex_id(core) {
        Some("<hex>")
    } else if core.chars().all(|c| c.is_ascii_digit() || c == '.')
        && core.chars().any(|c| c.is_ascii_digit())
    {
        Some("<n>")
    } else if is_host(core) {
        Some("<host>")
    } else {
        None
    };
    match replaced {
        Some(p) => format!("{p}{tail}"),
        None => replace_numbers(word),
    }
}

fn is_ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
}

fn is_hex_id(s: &str) -> bool {
    let digits = s.chars().filter(|c| *c != '-').count();
    digits >= 8
        && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        && s.chars().any(|c| c.is_ascii_digit())
}

/// `db-02.example.com`: labels of letters, digits and dashes, a dot
/// between, the last one a top-level domain: two letters (a country's) or
/// one of the names in [`HOST_SUFFIXES`], in lower case. A dotted Python
/// or Salt name (`salt.utils.templates.AliasedLoader`, the state ID
/// `saltscope.db.schema.migrate`) has the same shape and is no host.
fn is_host(s: &str) -> bool {
    let labels: Vec<&str> = s.split('.').collect();
    let suffix = labels.last().copied().unwrap_or("");
    labels.len() >= 3
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        && suffix.bytes().all(|b| b.is_ascii_lowercase())
        && (suffix.len() == 2 || HOST_SUFFIXES.contains(&suffix))
}

/// The last labels of host names beside the countries' two letters: the
/// generic top-level domains most seen, and the private ones networks use.
const HOST_SUFFIXES: [&str; 20] = [
    "com",
    "org",
    "net",
    "edu",
    "gov",
    "mil",
    "int",
    "info",
    "biz",
    "io",
    "dev",
    "app",
    "cloud",
    "local",
    "lan",
    "internal",
    "corp",
    "home",
    "localdomain",
    "test",
];

/// Numbers inside a word (`web-17`, `retcode=3`) become `<n>`.
fn replace_numbers(word: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in word.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push_str("<n>");
                in_number = true;
            }
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_varies_between_minions_becomes_a_placeholder() {
        let cases = [
            (
                "health check failed: backend 10.20.30.40:8443 refused the connection",
                "web01",
                "health check failed: backend <ip> refused the connection",
            ),
            (
                "Source file salt://files/web01/app.conf not found in saltenv 'base'",
                "web01",
                "Source file salt://files/<minion>/app.conf not found in saltenv 'base'",
            ),
            (
                "Command \"/usr/local/bin/migrate --db db-02.example.com\" run: retcode 3",
                "web01",
                "Command \"<path> --db <host>\" run: retcode <n>",
            ),
            (
                "Job 9f86d081884c7d65 timed out after 120 s on web-17",
                "web01",
                "Job <hex> timed out after <n> s on web-<n>",
            ),
            // Dotted Python and Salt names are no hosts.
            (
                "Jinja variable 'salt.utils.templates.AliasedLoader object' has no attribute 'x'",
                "web01",
                "Jinja variable 'salt.utils.templates.AliasedLoader object' has no attribute 'x'",
            ),
            (
                "One or more requisite failed: saltscope.db.schema.migrate",
                "web01",
                "One or more requisite failed: saltscope.db.schema.migrate",
            ),
            (
                "cannot reach cache-03.example.org or db.prod.internal",
                "web01",
                "cannot reach <host> or <host>",
            ),
            (
                "ordered demo failure <b>bold?</b>",
                "x",
                "ordered demo failure <b>bold?</b>",
            ),
        ];
        for (comment, minion, want) in cases {
            assert_eq!(normalize(comment, minion), want, "{comment}");
        }
    }

    fn failed_run(jid: &str, minion: &str, at: &str, comment: &str) -> Value {
        json!({"_index": "salt-state_sls-v1", "_id": format!("{jid}{minion}"), "_source": {
            "jid": jid, "minion": minion, "fun": "state.sls", "success": false, "retcode": 2,
            "@timestamp": at, "data": {
                "test_|-check_|-check_|-fail_without_changes": {"result": false, "comment": comment, "__id__": "check", "__run_num__": 0},
                "test_|-ok_|-ok_|-succeed_without_changes": {"result": true, "comment": "fine", "__id__": "ok", "__run_num__": 1}
            }
        }})
    }

    #[test]
    fn the_same_failure_on_two_minions_is_one_pattern_with_both() {
        let mut g = FailureGrouper::default();
        g.add(&failed_run(
            "3",
            "web02",
            "2026-12-03T10:00:02+00:00",
            "backend 10.0.0.2:80 refused on web02",
        ));
        g.add(&failed_run(
            "2",
            "web01",
            "2026-12-03T10:00:01+00:00",
            "backend 10.0.0.1:80 refused on web01",
        ));
        g.add(&failed_run(
            "1",
            "web01",
            "2026-12-03T10:00:00+00:00",
            "disk /var is full",
        ));
        let mut render = failed_run("4", "db-02", "2026-12-03T09:00:00+00:00", "");
        render["_source"]["data"] = json!({"return": ["Rendering SLS 'base:db' failed: Jinja variable 'port' is undefined"]});
        g.add(&render);
        let report = g.report(ScanEnd {
            read: 4,
            total: Some(4),
            stopped_short: None,
        });
        let first = &report.patterns[0];
        assert_eq!(first.pattern, "backend <ip> refused on <minion>");
        assert_eq!(first.function, "test.fail_without_changes");
        assert_eq!(first.minions.iter().collect::<Vec<_>>(), ["web01", "web02"]);
        assert_eq!(first.example.minion, "web02", "the newest as the example");
        assert_eq!(first.jids, ["3", "2"]);
        assert!(first.first_ms < first.last_ms);
        assert_eq!(report.patterns.len(), 3);
        assert!(report.patterns.iter().any(|p| p.function == "(render)"));
    }

    #[test]
    fn a_pattern_counts_every_job_it_happened_in_beyond_the_links_kept() {
        let mut g = FailureGrouper::default();
        for jid in 0..25 {
            g.add(&failed_run(
                &format!("{}", 100 - jid),
                "web01",
                "2026-12-03T10:00:00+00:00",
                "disk /var is full",
            ));
        }
        // The same job again, on another minion: one job, not two.
        g.add(&failed_run(
            "100",
            "web02",
            "2026-12-03T10:00:00+00:00",
            "disk /var is full",
        ));
        let report = g.report(ScanEnd {
            read: 26,
            total: Some(26),
            stopped_short: None,
        });
        let p = &report.patterns[0];
        assert_eq!(
            (p.jids.len(), p.jobs.len(), p.occurrences),
            (JOBS_KEPT, 25, 26)
        );
        assert_eq!(p.jids[0], "100", "newest first");
    }
}
