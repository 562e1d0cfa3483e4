//! Fleet status (`/fleet`): every minion's latest state run, classified as
//! Puppetboard classifies Puppet nodes — failed, changed, unchanged, test
//! mode — or unreported when it has had no state run for
//! `unreported_hours`. A minion is known from any return it ever sent, so
//! one that stopped running states is counted as unreported, not left out.
//!
//! A composite aggregation on minion, each bucket's newest state run
//! classified here from its [`RunSummary`]: the summary pipeline's fields
//! when every run has them, else each state's `result`, `changes` and
//! `__sls__` read from `data` ([`ComputedFrom`]); then the minions the
//! master's publish events targeted (`data.minions`), so a minion that never
//! returned at all is there too.

use crate::json::At;
use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::filter::{split_list, JobFilter};
use super::minions::{RUN_FIELDS, STATE_RUN_FUNCTIONS};
use super::summary::ComputedFrom;
use super::template::body;
use super::QueryContext;
use crate::config::glob_match;
use crate::engine::{EngineError, SearchAnswer, SearchRequest};
pub use crate::model::FleetStatus;
use crate::model::{HighstateSummary, ReturnDoc, RunSummary};
use crate::sort;
use crate::text::{json_text, scalar_text};
use crate::time::parse_utc;

/// Minions per search: each brings its latest run's per-state results.
pub const FLEET_PAGE_SIZE: usize = 500;

/// What the classification reads of a state run: with the summary
/// pipeline's fields no `data` at all, else from `data` only each state's
/// `result`, `changes`, `__sls__` and `__run_num__` — never outputs or
/// comments.
pub fn fleet_source(from: &ComputedFrom) -> Vec<&'static str> {
    let run = if from.uses_summary() {
        [
            "saltscope.summary_version",
            "saltscope.run_failed",
            "saltscope.states",
            "saltscope.sls",
        ]
    } else {
        [
            "data.*.result",
            "data.*.changes",
            "data.*.__sls__",
            "data.*.__run_num__",
        ]
    };
    RUN_FIELDS.into_iter().chain(run).collect()
}

/// Which minions the fleet view shows. In the URL: `minion`, `sls`, `status`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FleetFilter {
    /// Minion ids or globs; any matches.
    pub minions: Vec<String>,
    /// An SLS name or glob the latest run applied.
    pub sls: Option<String>,
    /// Only minions of this standing (the counts still cover all).
    pub status: Option<FleetStatus>,
}

impl FleetFilter {
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> (FleetFilter, Vec<String>) {
        let mut problems = Vec::new();
        let text = |name: &str| get(name).map(str::trim).filter(|s| !s.is_empty());
        let status = text("status").and_then(|s| {
            let parsed = FleetStatus::parse(s);
            if parsed.is_none() {
                problems.push(format!(
                    "status `{s}` is not one of failed, unreported, test, changed, unchanged: showing all"
                ));
            }
            parsed
        });
        let filter = FleetFilter {
            minions: text("minion").map(split_list).unwrap_or_default(),
            sls: text("sls").map(str::to_string),
            status,
        };
        (filter, problems)
    }

    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if !self.minions.is_empty() {
            out.push(("minion", self.minions.join(",")));
        }
        if let Some(sls) = &self.sls {
            out.push(("sls", sls.clone()));
        }
        if let Some(status) = self.status {
            out.push(("status", status.id().to_string()));
        }
        out
    }
}

/// Minions a published job targeted, by id after `after`: those that
/// never returned are unreported.
pub fn targeted_search(
    ctx: &QueryContext,
    filter: &FleetFilter,
    after: Option<&str>,
) -> SearchRequest {
    let field = &ctx.fields.event_targets;
    let mut must = vec![json!({"exists": {"field": field}})];
    if !filter.minions.is_empty() {
        let any: Vec<Value> = filter
            .minions
            .iter()
            .map(|m| super::filter::pattern_clause(field, m))
            .collect();
        must.push(json!({"bool": {"should": any, "minimum_should_match": 1}}));
    }
    let composite = super::minion_composite(field, FLEET_PAGE_SIZE, after);
    SearchRequest::new(
        &ctx.config.event_index_pattern,
        body(
            r#"{"size":0,"query":{"bool":{"filter":$0}},"aggs":{"minions":{"composite":$1}}}"#,
            &[Value::Array(must), composite],
        ),
    )
}

/// A page of targeted minion ids, those `filter`'s minion patterns name,
/// and the id to continue after. A publish event matched by one of its
/// targets carries all of them (a job on `web01,db-02` found by `web*`),
/// and the engine's aggregation gives every one: each id is matched again
/// here, or `db-02` would count as a `web*` minion that never reported.
pub fn parse_targeted(
    answer: SearchAnswer,
    filter: &FleetFilter,
) -> Result<(Vec<String>, Option<String>), EngineError> {
    let answer = answer?;
    let buckets = super::buckets(&answer, "minions");
    let all: Vec<String> = buckets
        .iter()
        .take(FLEET_PAGE_SIZE)
        .filter_map(|b| b.at("/key/minion").map(scalar_text))
        .collect();
    let next = (buckets.len() > FLEET_PAGE_SIZE)
        .then(|| all.last().cloned())
        .flatten();
    let named =
        |id: &String| filter.minions.is_empty() || filter.minions.iter().any(|p| glob_match(p, id));
    Ok((all.into_iter().filter(named).collect(), next))
}

/// A minion's latest state run.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetRun {
    pub jid: String,
    pub fun: String,
    pub timestamp: Option<String>,
    pub at_ms: Option<i64>,
    pub summary: HighstateSummary,
    /// The SLS files it applied, sorted.
    pub sls: Vec<String>,
    pub status: FleetStatus,
}

/// One row: a minion, its standing and the run that decided it.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetMinion {
    pub minion: String,
    pub status: FleetStatus,
    pub last_return_ms: Option<i64>,
    pub latest_run: Option<FleetRun>,
}

/// One search's worth of minions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FleetPage {
    pub minions: Vec<FleetMinion>,
    pub next_after: Option<String>,
    pub notes: Vec<String>,
}

/// The whole fleet (the minions the minion filter asked the engine for),
/// worst first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FleetReport {
    pub minions: Vec<FleetMinion>,
    pub unreported_hours: u64,
    pub notes: Vec<String>,
    /// Whether the runs were read from the summary fields or `data`.
    pub computed_from: Option<ComputedFrom>,
}

/// What the page shows of a [`FleetReport`]: the SLS and standing
/// filters applied in the tab, no new search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FleetSelection {
    /// Minions whose latest run applied the SLS (all without one), of the
    /// standing asked for (all without one), worst first.
    pub minions: Vec<FleetMinion>,
    /// Minions of each standing after the SLS filter, in
    /// [`FleetStatus::ALL`] order: the bar.
    pub counts: Vec<(FleetStatus, usize)>,
}

impl FleetSelection {
    pub fn total(&self) -> usize {
        self.counts.iter().map(|(_, n)| n).sum()
    }
}

impl FleetReport {
    /// Every minion of the pages, and those of `targeted` (minions jobs
    /// were published to) that never returned, as unreported.
    pub fn of(pages: Vec<FleetPage>, targeted: Vec<String>, unreported_hours: u64) -> FleetReport {
        let mut notes = Vec::new();
        let mut minions = Vec::new();
        for page in pages {
            notes.extend(page.notes);
            minions.extend(page.minions);
        }
        let known: BTreeSet<String> =
            sort::collect_ordered(minions.iter().map(|m| m.minion.clone()));
        let silent: BTreeSet<String> =
            sort::collect_ordered(targeted.into_iter().filter(|t| !known.contains(t)));
        minions.extend(silent.into_iter().map(|minion| FleetMinion {
            minion,
            status: FleetStatus::Unreported,
            last_return_ms: None,
            latest_run: None,
        }));
        sort::sort_by(&mut minions, |a, b| {
            (a.status, &a.minion).cmp(&(b.status, &b.minion))
        });
        FleetReport {
            minions,
            unreported_hours,
            notes,
            computed_from: None,
        }
    }

    /// The minions `filter`'s SLS and standing keep, and the counts.
    pub fn select(&self, filter: &FleetFilter) -> FleetSelection {
        let applied = |m: &&FleetMinion| match &filter.sls {
            Some(sls) => m
                .latest_run
                .as_ref()
                .is_some_and(|r| r.sls.iter().any(|s| glob_match(sls, s))),
            None => true,
        };
        let counts = FleetStatus::ALL
            .iter()
            .map(|s| {
                let n = self
                    .minions
                    .iter()
                    .filter(applied)
                    .filter(|m| m.status == *s);
                (*s, n.count())
            })
            .collect();
        let minions = self
            .minions
            .iter()
            .filter(applied)
            .filter(|m| filter.status.is_none_or(|s| m.status == s))
            .cloned()
            .collect();
        FleetSelection { minions, counts }
    }
}

/// One page of the fleet: minions by id after `after`, each with its last
/// return and its newest state run (of any time: a minion silent for a
/// month is the point).
pub fn fleet_search(
    ctx: &QueryContext,
    filter: &FleetFilter,
    after: Option<&str>,
    from: &ComputedFrom,
) -> SearchRequest {
    let fields = &ctx.fields;
    let returns = JobFilter {
        minions: filter.minions.clone(),
        show_noisy: true,
        time: super::filter::TimeRange::All,
        ..JobFilter::default()
    };
    let composite = super::minion_composite(&fields.minion, FLEET_PAGE_SIZE, after);
    // Not the master's runner returns: it would stand unreported for ever.
    let query = super::minions::minion_returns_query(ctx, &returns);
    SearchRequest::new(
        &ctx.config.index_pattern,
        body(
            r#"{"size":0,"query":$0,"aggs":{"minions":{"composite":$1,"aggs":{"last_return":{"max":{"field":"@timestamp"}},"state_runs":{"filter":{"terms":{$2:$3}},"aggs":{"latest":{"top_hits":{"size":1,"sort":[{"@timestamp":{"order":"desc","unmapped_type":"date"}}],"_source":$4}}}}}}}}"#,
            &[
                query,
                composite,
                json!(fields.fun),
                json!(STATE_RUN_FUNCTIONS),
                json!(fleet_source(from)),
            ],
        ),
    )
}

/// Reads a state run hit into its class: from the summary pipeline's
/// fields when the hit has them, else from its `data`. One classification,
/// [`FleetStatus::of_run`], either way.
pub fn fleet_run(hit: &Value) -> FleetRun {
    let doc = ReturnDoc::read_hit(hit);
    let source = hit.get("_source").unwrap_or(&Value::Null);
    let run = RunSummary::from_pipeline(source)
        .unwrap_or_else(|| RunSummary::of_return(&doc, source.get("data")));
    let summary = run.states.unwrap_or_default();
    FleetRun {
        status: FleetStatus::of_run(&summary, run.run_failed),
        at_ms: doc.timestamp.as_deref().and_then(|t| parse_utc(t).ok()),
        jid: doc.jid,
        fun: doc.fun,
        timestamp: doc.timestamp,
        summary,
        sls: run.sls,
    }
}

pub fn parse_fleet(
    answer: SearchAnswer,
    now_ms: i64,
    unreported_hours: u64,
) -> Result<FleetPage, EngineError> {
    let answer = answer?;
    let buckets = super::buckets(&answer, "minions");
    let since = now_ms - (unreported_hours as i64) * 3_600_000;
    let mut page = FleetPage::default();
    for bucket in buckets.iter().take(FLEET_PAGE_SIZE) {
        let Some(minion) = bucket.at("/key/minion").map(scalar_text) else {
            page.notes.push(format!(
                "a minion bucket without a key: {}",
                json_text(bucket)
            ));
            continue;
        };
        let latest_run = bucket.at("/state_runs/latest/hits/hits/0").map(fleet_run);
        let status = match &latest_run {
            Some(run) if run.at_ms.is_some_and(|t| t >= since) => run.status,
            _ => FleetStatus::Unreported,
        };
        page.minions.push(FleetMinion {
            minion,
            status,
            last_return_ms: bucket
                .at("/last_return/value")
                .and_then(Value::as_f64)
                .map(|v| v as i64),
            latest_run,
        });
    }
    if buckets.len() > FLEET_PAGE_SIZE {
        page.next_after = page.minions.last().map(|m| m.minion.clone());
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_796_000_000_000; // 2026-11-29

    fn state(result: Value, changes: Value, sls: &str, n: u64) -> Value {
        json!({"result": result, "changes": changes, "__sls__": sls, "__run_num__": n})
    }

    fn run_hit(minion: &str, at: &str, retcode: i64, data: Value) -> Value {
        json!({"_index": "salt-state_apply-v1", "_id": minion, "_source": {
            "jid": "20261128120000000000", "minion": minion, "fun": "state.apply",
            "success": retcode == 0, "retcode": retcode, "@timestamp": at, "data": data
        }})
    }

    fn bucket(minion: &str, hit: Option<Value>) -> Value {
        json!({"key": {"minion": minion}, "last_return": {"value": 1.795e12},
               "state_runs": {"latest": {"hits": {"hits": hit.into_iter().collect::<Vec<_>>()}}}})
    }

    #[test]
    fn targeted_minions_are_those_the_filter_names_not_all_of_a_matched_job() {
        let answer = || {
            Ok(json!({"aggregations": {"minions": {"buckets": [
                {"key": {"minion": "cache-03"}}, {"key": {"minion": "db-02"}},
                {"key": {"minion": "web01"}}, {"key": {"minion": "web02"}},
            ]}}}))
        };
        let web = FleetFilter {
            minions: vec!["web*".into(), "cache-03".into()],
            ..FleetFilter::default()
        };
        let (ids, next) = parse_targeted(answer(), &web).unwrap();
        assert_eq!(ids, ["cache-03", "web01", "web02"]);
        assert_eq!(next, None);
        let (ids, _) = parse_targeted(answer(), &FleetFilter::default()).unwrap();
        assert_eq!(ids.len(), 4);
    }

    #[test]
    fn each_minion_is_classified_by_its_latest_state_run() {
        let recent = "2026-11-29T08:00:00+00:00";
        let answer = json!({"aggregations": {"minions": {"buckets": [
            bucket("changed", Some(run_hit("changed", recent, 0, json!({
                "file_|-a_|-/a_|-managed": state(json!(true), json!({"diff": "+x"}), "web", 0),
                "pkg_|-b_|-b_|-installed": state(json!(true), json!({}), "base", 1)})))),
            bucket("failed", Some(run_hit("failed", recent, 2, json!({
                "cmd_|-c_|-false_|-run": state(json!(false), json!({}), "web", 0)})))),
            bucket("render-error", Some(run_hit("render-error", recent, 1,
                json!(["Rendering SLS 'base:web' failed: mapping values are not allowed here"])))),
            bucket("test", Some(run_hit("test", recent, 0, json!({
                "file_|-a_|-/a_|-managed": state(Value::Null, json!({"diff": "+x"}), "web", 0)})))),
            bucket("quiet", Some(run_hit("quiet", recent, 0, json!({
                "file_|-a_|-/a_|-managed": state(json!(true), json!({}), "web", 0)})))),
            bucket("stale", Some(run_hit("stale", "2026-11-20T08:00:00+00:00", 0, json!({
                "file_|-a_|-/a_|-managed": state(json!(true), json!({}), "web", 0)})))),
            bucket("never", None),
        ]}}});
        let page = parse_fleet(Ok(answer), NOW, 24).unwrap();
        let got: Vec<(&str, FleetStatus)> = page
            .minions
            .iter()
            .map(|m| (m.minion.as_str(), m.status))
            .collect();
        assert_eq!(
            got,
            [
                ("changed", FleetStatus::Changed),
                ("failed", FleetStatus::Failed),
                ("render-error", FleetStatus::Failed),
                ("test", FleetStatus::TestMode),
                ("quiet", FleetStatus::Unchanged),
                ("stale", FleetStatus::Unreported),
                ("never", FleetStatus::Unreported),
            ]
        );
        assert_eq!(
            page.minions[0].latest_run.as_ref().unwrap().sls,
            ["base", "web"]
        );
        // The stale minion keeps its last run, to link to.
        assert_eq!(
            page.minions[5].latest_run.as_ref().unwrap().status,
            FleetStatus::Unchanged
        );
        assert_eq!(page.next_after, None);

        let fleet = FleetReport::of(vec![page.clone()], Vec::new(), 24);
        let report = fleet.select(&FleetFilter {
            sls: Some("web".into()),
            ..FleetFilter::default()
        });
        assert_eq!(
            report.total(),
            5,
            "`never` and the render error name no SLS"
        );
        assert_eq!(report.minions[0].status, FleetStatus::Failed, "worst first");
        let only_failed = fleet.select(&FleetFilter {
            status: Some(FleetStatus::Failed),
            ..FleetFilter::default()
        });
        assert_eq!(only_failed.minions.len(), 2);
        assert_eq!(only_failed.total(), 7, "counts cover every standing");
        // Targeted by a job, never returned: unreported, not absent.
        let with_silent =
            FleetReport::of(vec![page], vec!["quiet".into(), "offline-01".into()], 24)
                .select(&FleetFilter::default());
        assert_eq!(with_silent.total(), 8);
        let offline = with_silent
            .minions
            .iter()
            .find(|m| m.minion == "offline-01")
            .unwrap();
        assert_eq!(
            (offline.status, offline.latest_run.is_none()),
            (FleetStatus::Unreported, true)
        );
    }

    /// The fields the summary pipeline writes for `run`.
    fn pipeline_fields(run: &RunSummary) -> Value {
        let mut fields = json!({"summary_version": 1, "run_failed": run.run_failed});
        if let Some(s) = &run.states {
            fields["states"] = json!({"total": s.total, "succeeded": s.succeeded,
                "unchanged": s.unchanged, "changed": s.changed, "failed": s.failed});
            fields["sls"] = json!(run.sls);
            fields["changed"] = Value::Object(run.changed.clone());
        }
        fields
    }

    #[test]
    fn a_run_is_classified_the_same_from_its_summary_fields_as_from_its_data() {
        let at = "2026-11-29T08:00:00+00:00";
        let runs = [
            (
                0,
                json!({"file_|-a_|-/a_|-managed": state(json!(true), json!({"diff": "+x"}), "web", 0),
                       "pkg_|-b_|-b_|-installed": state(json!(true), json!({}), "base", 1)}),
            ),
            (
                2,
                json!({"cmd_|-c_|-false_|-run": state(json!(false), json!({}), "web", 0)}),
            ),
            (1, json!(["Rendering SLS 'base:web' failed"])),
            (
                0,
                json!({"file_|-a_|-/a_|-managed": state(Value::Null, json!({"diff": "+x"}), "web", 0)}),
            ),
            (
                0,
                json!({"file_|-a_|-/a_|-managed": state(json!(true), json!({}), "web", 0)}),
            ),
        ];
        for (retcode, data) in runs {
            let hit = run_hit("m", at, retcode, data);
            let run = RunSummary::of_return(&ReturnDoc::read_hit(&hit), hit.at("/_source/data"));
            let mut summarised = hit.clone();
            let source = summarised["_source"].as_object_mut().unwrap();
            source.remove("data");
            source.insert("saltscope".into(), pipeline_fields(&run));
            let (from_data, from_fields) = (fleet_run(&hit), fleet_run(&summarised));
            assert_eq!(
                from_fields,
                FleetRun {
                    summary: HighstateSummary {
                        total_ms: 0.0,
                        ..from_data.summary
                    },
                    ..from_data
                }
            );
        }
    }

    #[test]
    fn the_search_reads_only_results_changes_and_sls_and_pages_by_minion() {
        let s = fleet_search(
            &QueryContext::at(NOW),
            &FleetFilter {
                minions: vec!["web*".into()],
                ..FleetFilter::default()
            },
            Some("db-02"),
            &ComputedFrom::Documents(String::new()),
        );
        let body = s.body.to_string();
        assert!(body.contains(r#""after":{"minion":"db-02"}"#), "{body}");
        assert!(body.contains("web*"), "{body}");
        assert!(
            !body.contains("epoch_millis"),
            "every return counts, of any time: {body}"
        );
        // The master's runner returns name no minion.
        let runner = super::super::filter::runner_clause(&QueryContext::at(NOW).fields);
        let must_not = s.body["query"]["bool"]["must_not"].as_array().unwrap();
        assert!(must_not.contains(&runner), "{body}");
        let source = &s.body["aggs"]["minions"]["aggs"]["state_runs"]["aggs"]["latest"]["top_hits"]
            ["_source"];
        assert!(!source.as_array().unwrap().iter().any(|f| f == "data"));
    }

    #[test]
    fn the_filter_round_trips_through_the_url_and_explains_a_bad_status() {
        let f = FleetFilter {
            minions: vec!["web*".into(), "db-02".into()],
            sls: Some("nginx".into()),
            status: Some(FleetStatus::TestMode),
        };
        let q = f.to_query();
        let (back, problems) =
            FleetFilter::from_query(|k| q.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str()));
        assert_eq!(back, f);
        assert!(problems.is_empty());
        let (_, problems) = FleetFilter::from_query(|k| (k == "status").then_some("broken"));
        assert!(problems[0].contains("broken"), "{problems:?}");
    }
}
