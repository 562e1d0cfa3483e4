//! The job list (`get_jids`): one row per jid, newest first.
//!
//! Round trip 1 is a composite aggregation on jid, descending — jids are
//! start times, so this pages in time order at any depth without
//! `from`/`size`. Round trip 2 is one `_msearch` that fetches the publish
//! events and job-cache loads of the page's jids.

use serde_json::{json, Value};

use super::{returns_filter, FieldMap};
use crate::config::AppConfig;
use crate::engine::SearchRequest;
use crate::model::PublishInfo;

pub const DEFAULT_PAGE_SIZE: usize = 50;

/// Which page of the job list to fetch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobListRequest {
    pub page_size: usize,
    /// The last jid of the previous page: the list continues after it.
    pub after: Option<String>,
}

/// One job in the list.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSummary {
    pub jid: String,
    /// The job's function; several only if returns disagree.
    pub functions: Vec<String>,
    /// Earliest `@timestamp` among the returns (UTC, ISO 8601).
    pub first_return: Option<String>,
    /// Minions with a return document.
    pub returned: u64,
    /// Minions whose return failed (runner returns excluded).
    pub failed: u64,
    /// A runner job (`salt-runner_*`): its `success: false` means nothing.
    pub runner: bool,
    /// Summed `counts` (succeeded, failed) where `states_count` wrote them.
    pub state_counts: Option<(u64, u64)>,
    pub publish: Option<PublishInfo>,
}

impl JobSummary {
    pub fn succeeded(&self) -> u64 {
        if self.runner {
            0
        } else {
            self.returned.saturating_sub(self.failed)
        }
    }

    /// Minions targeted by the publish event that have no return document.
    pub fn missing(&self) -> Option<u64> {
        let targeted = self.publish.as_ref()?.minions.as_ref()?.len() as u64;
        Some(targeted.saturating_sub(self.returned))
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobListPage {
    pub jobs: Vec<JobSummary>,
    /// Approximate number of jobs (cardinality) across all pages.
    pub total_jobs: Option<u64>,
    /// Where the next page starts; `None` on the last page.
    pub next_after: Option<String>,
    pub notes: Vec<String>,
}

pub fn job_list_search(
    config: &AppConfig,
    fields: &FieldMap,
    request: &JobListRequest,
) -> SearchRequest {
    let (filter, must_not) = returns_filter(config);
    let size = if request.page_size == 0 {
        DEFAULT_PAGE_SIZE
    } else {
        request.page_size
    };
    let mut composite = json!({
        "size": size,
        "sources": [{"jid": {"terms": {"field": fields.jid, "order": "desc"}}}]
    });
    if let Some(after) = &request.after {
        composite["after"] = json!({"jid": after});
    }
    let body = json!({
        "size": 0,
        "track_total_hits": true,
        "query": {"bool": {"filter": filter, "must_not": must_not}},
        "aggs": {
            "jobs": {
                "composite": composite,
                "aggs": {
                    "functions": {"terms": {"field": fields.fun, "size": 3}},
                    "first_return": {"min": {"field": "@timestamp"}},
                    "minions": {"cardinality": {"field": fields.minion}},
                    "failed": {"filter": {"term": {"success": false}}},
                    "runner": {"filter": {"prefix": {"_index": "salt-runner_"}}},
                    "counted": {"value_count": {"field": "counts.succeeded"}},
                    "states_succeeded": {"sum": {"field": "counts.succeeded"}},
                    "states_failed": {"sum": {"field": "counts.failed"}}
                }
            },
            "job_count": {"cardinality": {"field": fields.jid}}
        }
    });
    SearchRequest::new(&config.index_pattern, body)
}

/// Parses the composite aggregation. A bucket without the expected parts is
/// kept with what it has (and a note), never dropped.
pub fn parse_job_list(answer: &Value, page_size: usize) -> JobListPage {
    let mut page = JobListPage {
        total_jobs: answer
            .pointer("/aggregations/job_count/value")
            .and_then(Value::as_u64),
        ..JobListPage::default()
    };
    let buckets = answer
        .pointer("/aggregations/jobs/buckets")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if answer.pointer("/aggregations/jobs").is_none() {
        page.notes
            .push("the engine answered without the job aggregation".to_string());
    }
    for bucket in buckets {
        let Some(jid) = bucket.pointer("/key/jid").map(crate::text::scalar_text) else {
            page.notes
                .push(format!("a job bucket without a jid: {bucket}"));
            continue;
        };
        let count = |path: &str| bucket.pointer(path).and_then(Value::as_f64).unwrap_or(0.0) as u64;
        let doc_count = count("/doc_count");
        let runner = count("/runner/doc_count") > 0;
        let counted = count("/counted/value") > 0;
        page.jobs.push(JobSummary {
            functions: bucket
                .pointer("/functions/buckets")
                .and_then(Value::as_array)
                .map(|b| {
                    b.iter()
                        .filter_map(|f| f.get("key").map(crate::text::scalar_text))
                        .collect()
                })
                .unwrap_or_default(),
            first_return: bucket
                .pointer("/first_return/value_as_string")
                .and_then(Value::as_str)
                .map(str::to_string),
            // cardinality is exact far beyond any job's minion count; fall
            // back to the document count if it is absent.
            returned: bucket
                .pointer("/minions/value")
                .and_then(Value::as_u64)
                .unwrap_or(doc_count),
            failed: if runner {
                0
            } else {
                count("/failed/doc_count")
            },
            runner,
            state_counts: counted.then(|| {
                (
                    count("/states_succeeded/value"),
                    count("/states_failed/value"),
                )
            }),
            publish: None,
            jid,
        });
    }
    let full = buckets.len() >= page_size.max(1);
    page.next_after = match answer.pointer("/aggregations/jobs/after_key/jid") {
        Some(key) if full => Some(crate::text::scalar_text(key)),
        _ => None,
    };
    page
}

/// Round trip 2: the publish events and job-cache loads of a page's jobs.
pub fn publish_searches(
    config: &AppConfig,
    fields: &FieldMap,
    jids: &[String],
) -> [SearchRequest; 2] {
    let tags: Vec<String> = jids.iter().map(|j| format!("salt/job/{j}/new")).collect();
    [
        SearchRequest::new(
            &config.event_index_pattern,
            json!({
                "size": tags.len().max(1),
                "query": {"terms": {fields.tag.clone(): tags}},
                "_source": ["tag", "data.fun", "data.arg", "data.tgt", "data.tgt_type",
                            "data.user", "data.minions", "data._stamp"]
            }),
        ),
        SearchRequest::new(
            &config.job_cache_index,
            json!({
                "size": jids.len().max(1),
                "query": {"ids": {"values": jids}},
                "_source": ["jid", "load.fun", "load.arg", "load.tgt", "load.tgt_type", "load.user"]
            }),
        ),
    ]
}

/// Gives each job its publish data: the event first, the job-cache load
/// filling in what the event lacks.
pub fn attach_publish(page: &mut JobListPage, events: Option<&Value>, job_cache: Option<&Value>) {
    let from_events: Vec<PublishInfo> = events
        .map(|a| {
            super::hits(a)
                .iter()
                .filter_map(|h| PublishInfo::from_event(h.get("_source")?))
                .collect()
        })
        .unwrap_or_default();
    let from_cache: Vec<PublishInfo> = job_cache
        .map(|a| {
            super::hits(a)
                .iter()
                .filter_map(|h| PublishInfo::from_job_cache(h.get("_source")?))
                .collect()
        })
        .unwrap_or_default();
    for job in &mut page.jobs {
        let event = from_events.iter().find(|p| p.jid == job.jid).cloned();
        let cached = from_cache.iter().find(|p| p.jid == job.jid).cloned();
        job.publish = PublishInfo::merge(event, cached);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> AppConfig {
        AppConfig::default()
    }

    #[test]
    fn the_query_excludes_job_cache_and_event_indices_and_pages_by_jid() {
        let s = job_list_search(
            &config(),
            &FieldMap::default(),
            &JobListRequest {
                page_size: 20,
                after: Some("20261129170507123456".into()),
            },
        );
        assert_eq!(s.index, "salt-*");
        let b = &s.body;
        assert_eq!(b["query"]["bool"]["filter"][0]["exists"]["field"], "minion");
        let excluded: Vec<&str> = b["query"]["bool"]["must_not"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["prefix"]["_index"].as_str().unwrap())
            .collect();
        assert_eq!(
            excluded,
            ["salt-master-job-cache", "salt-master-event-cache"]
        );
        let composite = &b["aggs"]["jobs"]["composite"];
        assert_eq!(composite["size"], 20);
        assert_eq!(composite["after"]["jid"], "20261129170507123456");
        assert_eq!(composite["sources"][0]["jid"]["terms"]["order"], "desc");
        assert_eq!(
            composite["sources"][0]["jid"]["terms"]["field"],
            "jid.keyword"
        );
        assert!(b.get("from").is_none(), "never from/size paging");
    }

    fn bucket(jid: &str, docs: u64, failed: u64, runner: u64, counted: u64) -> Value {
        json!({
            "key": {"jid": jid}, "doc_count": docs,
            "functions": {"buckets": [{"key": "state.apply", "doc_count": docs}]},
            "first_return": {"value": 1.0, "value_as_string": "2026-11-29T17:05:07.000Z"},
            "minions": {"value": docs}, "failed": {"doc_count": failed},
            "runner": {"doc_count": runner}, "counted": {"value": counted},
            "states_succeeded": {"value": 40.0}, "states_failed": {"value": 2.0}
        })
    }

    #[test]
    fn buckets_become_jobs_with_outcomes_and_state_counts() {
        let answer = json!({"aggregations": {
            "job_count": {"value": 7},
            "jobs": {"after_key": {"jid": "2"}, "buckets": [bucket("3", 4, 1, 0, 4), bucket("2", 1, 1, 1, 0)]}
        }});
        let page = parse_job_list(&answer, 2);
        assert_eq!(page.total_jobs, Some(7));
        assert_eq!(page.next_after.as_deref(), Some("2"));
        let job = &page.jobs[0];
        assert_eq!((job.returned, job.failed, job.succeeded()), (4, 1, 3));
        assert_eq!(job.state_counts, Some((40, 2)));
        assert_eq!(job.functions, ["state.apply"]);
        let runner = &page.jobs[1];
        assert!(runner.runner);
        assert_eq!(
            runner.failed, 0,
            "a runner's success:false is not a failure"
        );
        assert_eq!(runner.state_counts, None);
    }

    #[test]
    fn a_short_page_is_the_last_page() {
        let answer = json!({"aggregations": {"jobs": {"after_key": {"jid": "3"}, "buckets": [bucket("3", 1, 0, 0, 0)]}}});
        assert_eq!(parse_job_list(&answer, 50).next_after, None);
    }

    #[test]
    fn publish_data_comes_from_the_event_and_fills_from_the_job_cache() {
        let mut page = parse_job_list(
            &json!({"aggregations": {"jobs": {"buckets": [bucket("3", 2, 0, 0, 0), bucket("2", 1, 0, 0, 0)]}}}),
            50,
        );
        let events = json!({"hits": {"hits": [{"_source": {"tag": "salt/job/3/new", "data": {
            "fun": "state.apply", "tgt": "*", "tgt_type": "glob", "user": "sudo_alice",
            "minions": ["a", "b", "c"]}}}]}});
        let cache = json!({"hits": {"hits": [{"_source": {"jid": "2", "load": {"fun": "cmd.run", "user": "root"}}}]}});
        attach_publish(&mut page, Some(&events), Some(&cache));
        let first = page.jobs[0].publish.as_ref().unwrap();
        assert_eq!(first.user.as_deref(), Some("sudo_alice"));
        assert_eq!(page.jobs[0].missing(), Some(1));
        assert_eq!(
            page.jobs[1].publish.as_ref().unwrap().user.as_deref(),
            Some("root")
        );
        assert_eq!(
            page.jobs[1].missing(),
            None,
            "no publish event: targets unknown"
        );
    }

    #[test]
    fn publish_searches_ask_for_exactly_the_pages_jids() {
        let [events, cache] =
            publish_searches(&config(), &FieldMap::default(), &["1".into(), "2".into()]);
        assert_eq!(events.index, "salt-master-event-cache*");
        assert_eq!(
            events.body["query"]["terms"]["tag.keyword"],
            json!(["salt/job/1/new", "salt/job/2/new"])
        );
        assert_eq!(cache.body["query"]["ids"]["values"], json!(["1", "2"]));
    }
}
