//! The URL as typed state. Every view's parameters have one spelling
//! ([`param`]), are read into typed values (`JobFilter`, `Cursor`,
//! `Refresh`, `StateView`, …) and written back by the link builders here,
//! encoded with `form_urlencoded` and `percent-encoding` — so a pasted link
//! reproduces the view, and back and forward walk through it.

use crate::model::output::StateOutput;
use crate::query::audit::{AuditCursor, AuditFilter};
use crate::query::compare::CompareRequest;
use crate::query::drift::DriftFilter;
use crate::query::events::{EventCursor, EventFilter};
use crate::query::failures::FailureFilter;
use crate::query::filter::JobFilter;
use crate::query::fleet::FleetFilter;
use crate::query::job::MinionsShown;
use crate::query::jobs::Cursor;
use crate::text::line_shown;

/// The URL names of every view's parameters: one spelling everywhere.
pub mod param {
    pub const JID: &str = "jid";
    pub const MINION: &str = "minion";
    pub const FUN: &str = "fun";
    pub const OUTCOME: &str = "outcome";
    pub const TIME: &str = "time";
    pub const TEXT: &str = "q";
    pub const NOISY: &str = "noisy";
    pub const AFTER: &str = "after";
    pub const BEFORE: &str = "before";
    pub const REFRESH: &str = "refresh";
    pub const OUTPUT: &str = "output";
    pub const ONLY: &str = "only";
    pub const GROUP: &str = "group";
    pub const FAILING: &str = "failing";
    pub const USER: &str = "user";
    pub const TARGET: &str = "target";
    pub const RISKY: &str = "risky";
    pub const TAG: &str = "tag";
    pub const FAILED: &str = "failed";
    pub const LIVE: &str = "live";
    pub const SLS: &str = "sls";
    pub const STATUS: &str = "status";
}

/// `?a=b&c=d` (form-urlencoded), or the empty string for no pairs.
pub fn query_string(pairs: &[(&str, String)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let mut out = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        out.append_pair(k, v);
    }
    format!("?{}", out.finish())
}

/// A URL's query read back: `?a=b&c=d` (form-urlencoded, with or without
/// the `?`) as its decoded pairs, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueryMap(Vec<(String, String)>);

impl QueryMap {
    pub fn parse(search: &str) -> QueryMap {
        let search = search.strip_prefix('?').unwrap_or(search);
        QueryMap(
            form_urlencoded::parse(search.as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// The first value of `key`.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn get(&self, key: &str) -> Option<String> {
        self.get_str(key).map(str::to_string)
    }
}

/// One path segment (a jid, a minion id, a function name), percent-encoded.
pub fn segment(text: &str) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
    const KEEP: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    utf8_percent_encode(text, KEEP).to_string()
}

/// How often the job list reloads by itself (`refresh=5s|30s|1m`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refresh {
    #[default]
    Off,
    Every5s,
    Every30s,
    EveryMinute,
}

impl Refresh {
    pub const ALL: [Refresh; 4] = [
        Refresh::Off,
        Refresh::Every5s,
        Refresh::Every30s,
        Refresh::EveryMinute,
    ];

    pub fn parse(text: &str) -> Refresh {
        Refresh::ALL
            .into_iter()
            .find(|r| r.to_param() == text)
            .unwrap_or_default()
    }

    pub fn to_param(self) -> &'static str {
        match self {
            Refresh::Off => "",
            Refresh::Every5s => "5s",
            Refresh::Every30s => "30s",
            Refresh::EveryMinute => "1m",
        }
    }

    pub fn seconds(self) -> u32 {
        match self {
            Refresh::Off => 0,
            Refresh::Every5s => 5,
            Refresh::Every30s => 30,
            Refresh::EveryMinute => 60,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Refresh::Off => "Auto-refresh off",
            Refresh::Every5s => "every 5 s",
            Refresh::Every30s => "every 30 s",
            Refresh::EveryMinute => "every minute",
        }
    }
}

/// The job list's whole URL state: its filter, the page and auto-refresh.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobListUrl {
    pub filter: JobFilter,
    pub cursor: Cursor,
    pub refresh: Refresh,
}

impl JobListUrl {
    /// Reads the URL; what does not read is left at its default, and the
    /// page's own problems (its cursor) are explained. The filter's are
    /// [`JobFilter::from_query`]'s, which the filter bar shows.
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (JobListUrl, Vec<String>) {
        let (cursor, problem) = Cursor::from_query(&get);
        let url = JobListUrl {
            filter: JobFilter::from_query(&get).0,
            cursor,
            refresh: Refresh::parse(get(param::REFRESH).unwrap_or("")),
        };
        (url, problem.into_iter().collect())
    }

    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut pairs = self.filter.to_query();
        pairs.extend(self.cursor.to_query());
        if self.refresh != Refresh::Off {
            pairs.push((param::REFRESH, self.refresh.to_param().to_string()));
        }
        pairs
    }

    /// The same list at another page, keeping filter and refresh.
    pub fn at(&self, cursor: Cursor) -> JobListUrl {
        JobListUrl {
            cursor,
            ..self.clone()
        }
    }
}

/// How the job page shows states: Salt's `state_output`, `state_verbose`
/// (failures and changes only) and grouping by SLS; and which minions'
/// returns it lists (`outcome=failed`, the job list's word).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateView {
    pub output: StateOutput,
    pub problems_only: bool,
    pub by_sls: bool,
    pub minions: MinionsShown,
}

impl StateView {
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> StateView {
        StateView {
            output: StateOutput::parse(get(param::OUTPUT).unwrap_or("")),
            problems_only: get(param::ONLY) == Some("problems"),
            by_sls: get(param::GROUP) == Some("sls"),
            minions: match get(param::OUTCOME) {
                Some("failed") => MinionsShown::Failed,
                _ => MinionsShown::All,
            },
        }
    }

    pub fn to_query(self) -> Vec<(&'static str, String)> {
        let mut pairs = Vec::new();
        if self.output != StateOutput::Full {
            pairs.push((param::OUTPUT, self.output.name().to_string()));
        }
        if self.problems_only {
            pairs.push((param::ONLY, "problems".to_string()));
        }
        if self.by_sls {
            pairs.push((param::GROUP, "sls".to_string()));
        }
        if self.minions == MinionsShown::Failed {
            pairs.push((param::OUTCOME, "failed".to_string()));
        }
        pairs
    }
}

/// The view a path names: the app's route table. `/job/<jid>`,
/// `/minion/<id>` and `/function/<fun>` carry their segment percent-encoded,
/// as [`segment`] writes it and the browser's location gives it back; a
/// trailing slash names the same view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Page {
    Jobs,
    Job(String),
    Fleet,
    Compare,
    Drift,
    Failures,
    Sls,
    Minions,
    Minion(String),
    Functions,
    Function(String),
    Events,
    Audit,
}

/// The document's title for the view at a path (`None`: no view there):
/// what a tab, a bookmark, the history and a screen reader name it by.
pub fn page_title(page: Option<&Page>) -> String {
    let view = match page {
        None => "No such page".into(),
        Some(Page::Jobs) => "Jobs".into(),
        Some(Page::Job(jid)) => format!("Job {}", line_shown(jid)),
        Some(Page::Fleet) => "Fleet status".into(),
        Some(Page::Compare) => "Run comparison".into(),
        Some(Page::Drift) => "Drift".into(),
        Some(Page::Failures) => "Failure patterns".into(),
        Some(Page::Sls) => "SLS files".into(),
        Some(Page::Minions) => "Minions".into(),
        Some(Page::Minion(id)) => format!("Minion {}", line_shown(id)),
        Some(Page::Functions) => "Functions".into(),
        Some(Page::Function(fun)) => format!("Function {}", line_shown(fun)),
        Some(Page::Events) => "Events".into(),
        Some(Page::Audit) => "Audit trail".into(),
    };
    format!("{view} · Saltscope")
}

impl Page {
    /// The view at `path`, or `None` where there is none.
    pub fn from_path(path: &str) -> Option<Page> {
        let path = path.strip_prefix('/')?;
        let path = path.strip_suffix('/').unwrap_or(path);
        let named = |segment: &str| {
            (!segment.is_empty()).then(|| {
                percent_encoding::percent_decode_str(segment)
                    .decode_utf8_lossy()
                    .into_owned()
            })
        };
        Some(match path.split_once('/') {
            None => match path {
                "" => Page::Jobs,
                "fleet" => Page::Fleet,
                "compare" => Page::Compare,
                "drift" => Page::Drift,
                "failures" => Page::Failures,
                "sls" => Page::Sls,
                "minions" => Page::Minions,
                "functions" => Page::Functions,
                "events" => Page::Events,
                "audit" => Page::Audit,
                _ => return None,
            },
            Some((_, rest)) if rest.contains('/') => return None,
            Some(("job", jid)) => Page::Job(named(jid)?),
            Some(("minion", id)) => Page::Minion(named(id)?),
            Some(("function", fun)) => Page::Function(named(fun)?),
            Some(_) => return None,
        })
    }
}

/// Links to every view.
pub mod link {
    use super::*;

    /// The job list (`/`) in this state.
    pub fn jobs(url: &JobListUrl) -> String {
        format!("/{}", query_string(&url.to_query()))
    }

    /// A minion's job history: the job list's state without the minion
    /// filter, which the path fixes.
    pub fn minion_jobs(minion: &str, url: &JobListUrl) -> String {
        let mut pairs = url.to_query();
        pairs.retain(|(k, _)| *k != param::MINION);
        format!("/minion/{}{}", segment(minion), query_string(&pairs))
    }

    pub fn minion(minion: &str) -> String {
        format!("/minion/{}", segment(minion))
    }

    pub fn job(jid: &str) -> String {
        format!("/job/{}", segment(jid))
    }

    pub fn job_view(jid: &str, view: StateView) -> String {
        format!("{}{}", job(jid), query_string(&view.to_query()))
    }

    /// One minion's return on the job page.
    pub fn job_minion(jid: &str, minion: &str) -> String {
        format!("{}#{}", job(jid), minion_anchor(minion))
    }

    /// The element id of a minion's return on the job page: ids keep
    /// letters, digits, `-`, `.` and `_` and replace the rest.
    pub fn minion_anchor(minion: &str) -> String {
        let id: String = minion
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("minion-{id}")
    }

    pub fn minions(filter: &JobFilter, after: Option<&str>) -> String {
        let mut pairs = filter.to_query();
        pairs.extend(after.map(|a| (param::AFTER, a.to_string())));
        format!("/minions{}", query_string(&pairs))
    }

    pub fn functions(filter: &JobFilter) -> String {
        format!("/functions{}", query_string(&filter.to_query()))
    }

    /// The jobs of one function.
    /// The job list of one function, in the view's filter otherwise.
    pub fn function_jobs(fun: &str, filter: &JobFilter) -> String {
        let filter = JobFilter {
            functions: vec![fun.to_string()],
            ..filter.clone()
        };
        format!("/{}", query_string(&filter.to_query()))
    }

    /// A minion's job history in the view's filter otherwise.
    pub fn minion_in(minion: &str, filter: &JobFilter) -> String {
        let url = JobListUrl {
            filter: filter.clone(),
            ..JobListUrl::default()
        };
        minion_jobs(minion, &url)
    }

    /// One function's latest return on every minion.
    pub fn function(fun: &str, filter: &JobFilter, failing: bool, after: Option<&str>) -> String {
        let mut pairs = filter.to_query();
        pairs.retain(|(k, _)| *k != param::FUN);
        if failing {
            pairs.push((param::FAILING, "1".into()));
        }
        pairs.extend(after.map(|a| (param::AFTER, a.to_string())));
        format!("/function/{}{}", segment(fun), query_string(&pairs))
    }

    /// The events view; `live` follows the bus.
    pub fn events(filter: &EventFilter, cursor: Option<&EventCursor>, live: bool) -> String {
        let mut pairs = filter.to_query();
        pairs.extend(cursor.map(|c| (param::AFTER, c.to_param())));
        if live {
            pairs.push((param::LIVE, "1".into()));
        }
        format!("/events{}", query_string(&pairs))
    }

    /// Two state runs side by side.
    pub fn compare(request: &CompareRequest) -> String {
        format!("/compare{}", query_string(&request.to_query()))
    }

    /// States that change every run.
    pub fn drift(filter: &DriftFilter) -> String {
        format!("/drift{}", query_string(&filter.to_query()))
    }

    /// Failure patterns across the fleet.
    pub fn failures(filter: &FailureFilter) -> String {
        format!("/failures{}", query_string(&filter.to_query()))
    }

    /// Per-SLS rollups and the slowest states.
    pub fn sls(filter: &FailureFilter) -> String {
        format!("/sls{}", query_string(&filter.to_query()))
    }

    /// Every minion's standing.
    pub fn fleet(filter: &FleetFilter) -> String {
        format!("/fleet{}", query_string(&filter.to_query()))
    }

    pub fn audit(filter: &AuditFilter, cursor: Option<&AuditCursor>) -> String {
        let mut pairs = filter.to_query();
        pairs.extend(cursor.map(|c| (param::AFTER, c.to_param())));
        format!("/audit{}", query_string(&pairs))
    }

    /// The audit trail of the jobs published to `filter`'s minions in its
    /// time, answered or not: where a minion that never returned is found
    /// (the job list is made of returns). `None` naming no minion, or
    /// narrowing by more than minion and time (no failed return of a
    /// minion is no sign that it never answered).
    pub fn audit_of_minions(filter: &JobFilter) -> Option<String> {
        let narrower = JobFilter {
            minions: filter.minions.clone(),
            time: filter.time.clone(),
            show_noisy: filter.show_noisy,
            ..JobFilter::default()
        };
        if *filter != narrower {
            return None;
        }
        let audit_filter = AuditFilter {
            minions: filter.minions.clone(),
            time: filter.time.clone(),
            ..AuditFilter::default()
        };
        (!filter.minions.is_empty()).then(|| audit(&audit_filter, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_has_a_title_of_its_own() {
        let title = |path: &str| page_title(Page::from_path(path).as_ref());
        assert_eq!(title("/"), "Jobs · Saltscope");
        assert_eq!(
            title("/job/20261207203023500239"),
            "Job 20261207203023500239 · Saltscope"
        );
        assert_eq!(title("/minion/web%2001"), "Minion web 01 · Saltscope");
        assert_eq!(title("/audit"), "Audit trail · Saltscope");
        assert_eq!(title("/nowhere/at/all"), "No such page · Saltscope");
        // A long id is cut, as in the messages.
        assert!(title(&format!("/job/{}", "9".repeat(3000))).len() < 200);
    }

    #[test]
    fn every_link_names_its_page_and_other_paths_none() {
        let filter = JobFilter::default();
        let cases = [
            (link::jobs(&JobListUrl::default()), Some(Page::Jobs)),
            (
                link::job("20261205033200123456"),
                Some(Page::Job("20261205033200123456".into())),
            ),
            (
                link::minion("web-01.example.com"),
                Some(Page::Minion("web-01.example.com".into())),
            ),
            (
                link::function("state.apply", &filter, false, None),
                Some(Page::Function("state.apply".into())),
            ),
            (link::minions(&filter, None), Some(Page::Minions)),
            (link::functions(&filter), Some(Page::Functions)),
            // Ids and names with characters a path segment encodes come
            // back as they were, slash and all.
            (
                link::minion("web 01/a@b:c+é#1"),
                Some(Page::Minion("web 01/a@b:c+é#1".into())),
            ),
            (
                "/function/cmd%2Erun".to_string(),
                Some(Page::Function("cmd.run".into())),
            ),
            (
                "/minion/db%2D02".to_string(),
                Some(Page::Minion("db-02".into())),
            ),
            ("/fleet/".to_string(), Some(Page::Fleet)),
            ("/job/".to_string(), None),
            ("/job/1/2".to_string(), None),
            ("/nowhere".to_string(), None),
            ("fleet".to_string(), None),
        ];
        for (url, page) in cases {
            let path = url.split('?').next().unwrap_or_default();
            assert_eq!(Page::from_path(path), page, "{url}");
        }
    }

    fn lookup<'a>(pairs: &'a [(&str, String)], name: &str) -> Option<&'a str> {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_query_reads_back_what_query_string_wrote() {
        let pairs = [
            ("q", "a b&c=d/é".to_string()),
            ("minion", "web*,db-02".into()),
        ];
        let q = QueryMap::parse(&query_string(&pairs));
        assert_eq!(q.get_str("q"), Some("a b&c=d/é"));
        assert_eq!(q.get("minion").as_deref(), Some("web*,db-02"));
        assert_eq!(q.get_str("fun"), None);
        // The first of a repeated key; no `?` is fine; an empty value is one.
        let q = QueryMap::parse("a=1&a=2&b=");
        assert_eq!((q.get_str("a"), q.get_str("b")), (Some("1"), Some("")));
        assert_eq!(QueryMap::parse(""), QueryMap::default());
    }

    #[test]
    fn query_strings_are_form_urlencoded() {
        assert_eq!(
            query_string(&[("q", "a b&c=d/é".into()), ("minion", "web*,db-02".into())]),
            "?q=a+b%26c%3Dd%2F%C3%A9&minion=web*%2Cdb-02"
        );
        assert_eq!(query_string(&[]), "");
    }

    #[test]
    fn path_segments_encode_slashes_and_spaces() {
        assert_eq!(segment("cmd.run"), "cmd.run");
        assert_eq!(segment("a/b c#"), "a%2Fb%20c%23");
    }

    #[test]
    fn the_job_list_url_keeps_filter_page_and_refresh() {
        let url = JobListUrl {
            filter: JobFilter {
                minions: vec!["web*".into()],
                ..JobFilter::default()
            },
            cursor: Cursor::After("20261202184626123456".into()),
            refresh: Refresh::Every30s,
        };
        let pairs = url.to_query();
        let (back, problems) = JobListUrl::from_query(|n| lookup(&pairs, n));
        assert!(problems.is_empty());
        assert_eq!(back, url);
        assert_eq!(
            link::jobs(&url.at(Cursor::Newest)),
            "/?minion=web*&refresh=30s"
        );
        assert_eq!(
            link::minion_jobs("db-02", &url),
            "/minion/db-02?after=20261202184626123456&refresh=30s"
        );
    }

    #[test]
    fn a_page_cursor_that_is_no_jid_is_explained_and_the_newest_page_shown() {
        let (url, problems) = JobListUrl::from_query(|n| (n == "before").then_some("<script>"));
        assert_eq!(url.cursor, Cursor::Newest);
        assert_eq!(
            problems,
            ["before=<script>: no jid to page from; the newest jobs are shown"]
        );
        let (url, problems) =
            JobListUrl::from_query(|n| (n == "after").then_some("20261202184626123456_4242"));
        assert_eq!(
            url.cursor,
            Cursor::After("20261202184626123456_4242".into())
        );
        assert!(problems.is_empty());
    }

    #[test]
    fn an_unknown_refresh_is_off() {
        assert_eq!(Refresh::parse("2s"), Refresh::Off);
        assert_eq!(Refresh::parse("1m").seconds(), 60);
    }

    #[test]
    fn the_state_view_round_trips_and_defaults_to_nothing() {
        let view = StateView {
            output: StateOutput::Terse,
            problems_only: true,
            by_sls: true,
            minions: MinionsShown::Failed,
        };
        let pairs = view.to_query();
        assert_eq!(StateView::from_query(|n| lookup(&pairs, n)), view);
        assert_eq!(link::job_view("1", StateView::default()), "/job/1");
        assert_eq!(
            link::job_view("1", view),
            "/job/1?output=terse&only=problems&group=sls&outcome=failed"
        );
    }

    #[test]
    fn links_to_minions_functions_and_the_audit() {
        assert_eq!(
            link::job_minion("7", "web01.prod example"),
            "/job/7#minion-web01.prod_example"
        );
        assert_eq!(
            link::function_jobs("cmd.run", &JobFilter::default()),
            "/?fun=cmd.run"
        );
        // The view's filter goes along: its minion and time, not its functions.
        let (filter, _) = JobFilter::from_query(|k| match k {
            "minion" => Some("db-02"),
            "fun" => Some("state.*"),
            "time" => Some("all"),
            _ => None,
        });
        let jobs = link::function_jobs("cmd.run", &filter);
        assert!(
            jobs.contains("minion=db-02") && jobs.contains("fun=cmd.run"),
            "{jobs}"
        );
        assert!(
            jobs.contains("time=all") && !jobs.contains("state"),
            "{jobs}"
        );
        // A minion's jobs in a time, answered or not: not its failed ones,
        // nor those of some functions.
        let minion_only = JobFilter {
            functions: Vec::new(),
            ..filter.clone()
        };
        assert_eq!(
            link::audit_of_minions(&minion_only).as_deref(),
            Some("/audit?minion=db-02&time=all")
        );
        assert_eq!(link::audit_of_minions(&filter), None);
        assert_eq!(link::audit_of_minions(&JobFilter::default()), None);
        let failed = JobFilter {
            outcome: crate::query::filter::OutcomeFilter::AnyFailed,
            ..minion_only
        };
        assert_eq!(link::audit_of_minions(&failed), None);
        let minion = link::minion_in("db-02", &filter);
        assert!(minion.starts_with("/minion/db-02?"), "{minion}");
        assert!(
            minion.contains("fun=state.*") || minion.contains("fun=state.%2A"),
            "{minion}"
        );
        assert!(
            minion.contains("time=all") && !minion.contains("minion="),
            "{minion}"
        );
        assert_eq!(
            link::function("state.apply", &JobFilter::default(), true, Some("db-02")),
            "/function/state.apply?failing=1&after=db-02"
        );
        assert_eq!(
            link::audit(
                &AuditFilter::default(),
                Some(&AuditCursor::JobCache { jid: "9".into() })
            ),
            "/audit?after=c%3A9"
        );
    }
}
