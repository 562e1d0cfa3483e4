//! Round trip 2 of the job list: each job's statistics over all its
//! returns, its publish event and its job-cache load, attached to the rows
//! round trip 1 found. Any part failing leaves a note, never an empty list.

use crate::json::At;
use serde_json::{json, Value};

use super::{JobListPage, FAILED_MINIONS_SHOWN};
use crate::engine::{SearchAnswer, SearchRequest};
use crate::model::PublishInfo;
use crate::query::filter::{failed_clause, runner_clause};
use crate::query::template::body;
use crate::query::{returns_filter, QueryContext};
use crate::text::scalar_text;

crate::search_bundle! {
    /// Round trip 2 of the job list: every return's statistics for the
    /// page's jids, their publish events and their job-cache loads.
    pub struct JobDetailsSearches => JobDetailsAnswers { stats, events, cache }
}

crate::search_bundle! {
    /// The publish data of some jobs: events, and job-cache loads.
    pub struct PublishSearches => PublishAnswers { events, cache }
}

/// Round trip 2 (see [`JobDetailsSearches`]): the statistics are of the
/// whole job, whatever filtered it in.
pub fn job_details_searches(ctx: &QueryContext, jids: &[String]) -> JobDetailsSearches {
    let (config, fields) = (&ctx.config, &ctx.fields);
    let (mut filter, must_not) = returns_filter(config);
    filter.push(json!({"terms": {fields.jid.clone(): jids}}));
    let stats = body(
        r#"{"size":0,"query":{"bool":{"filter":$0,"must_not":$1}},"aggs":{"jobs":{"terms":{"field":$2,"size":$3},"aggs":{"functions":{"terms":{"field":$4,"size":3}},"first_return":{"min":{"field":"@timestamp"}},"last_return":{"max":{"field":"@timestamp"}},"minions":{"cardinality":{"field":$5}},"failed":{"filter":$6,"aggs":{"minions":{"terms":{"field":$5,"size":$7}}}},"runner":{"filter":$8},"counted":{"value_count":{"field":"counts.succeeded"}},"states_succeeded":{"sum":{"field":"counts.succeeded"}},"states_failed":{"sum":{"field":"counts.failed"}},"summarised":{"value_count":{"field":"saltscope.states.total"}},"summary_succeeded":{"sum":{"field":"saltscope.states.succeeded"}},"summary_failed":{"sum":{"field":"saltscope.states.failed"}}}}}}"#,
        &[
            Value::Array(filter),
            json!(must_not),
            json!(fields.jid),
            json!(jids.len().max(1)),
            json!(fields.fun),
            json!(fields.minion),
            failed_clause(fields),
            json!(FAILED_MINIONS_SHOWN),
            runner_clause(fields),
        ],
    );
    let PublishSearches { events, cache } = publish_searches(ctx, jids);
    JobDetailsSearches {
        stats: SearchRequest::new(&config.index_pattern, stats),
        events,
        cache,
    }
}

/// An answer that may fail without failing the view: its error becomes a
/// note ("job cache unavailable: …") and the view shows what it has.
pub fn soft(answer: SearchAnswer, what: &str, notes: &mut Vec<String>) -> Option<Value> {
    match answer {
        Ok(v) => Some(v),
        Err(e) => {
            let note = format!("{what} unavailable: {e}");
            if !notes.contains(&note) {
                notes.push(note);
            }
            None
        }
    }
}

/// Reads round trip 2 into the page's jobs. Any part failing leaves a note:
/// the rows stay, with what is known.
pub fn attach_details(page: &mut JobListPage, answers: JobDetailsAnswers) {
    let stats = soft(answers.stats, "job statistics", &mut page.notes);
    let events = soft(answers.events, "publish events", &mut page.notes);
    let cache = soft(answers.cache, "job cache", &mut page.notes);
    if let Some(stats) = &stats {
        attach_stats(page, stats);
    }
    attach_publish(page, events.as_ref(), cache.as_ref());
}

fn attach_stats(page: &mut JobListPage, answer: &Value) {
    let buckets = answer
        .at("/aggregations/jobs/buckets")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for job in &mut page.jobs {
        let Some(bucket) = buckets
            .iter()
            .find(|b| b.get("key").map(scalar_text).as_deref() == Some(job.jid.as_str()))
        else {
            continue;
        };
        let count = |path: &str| bucket.at(path).and_then(Value::as_f64).unwrap_or(0.0) as u64;
        let doc_count = count("/doc_count");
        job.runner = count("/runner/doc_count") > 0;
        job.functions = bucket
            .at("/functions/buckets")
            .and_then(Value::as_array)
            .map(|b| {
                b.iter()
                    .filter_map(|f| f.get("key").map(scalar_text))
                    .collect()
            })
            .unwrap_or_default();
        job.first_return_ms = bucket
            .at("/first_return/value")
            .and_then(Value::as_f64)
            .map(|v| v as i64);
        job.last_return_ms = bucket
            .at("/last_return/value")
            .and_then(Value::as_f64)
            .map(|v| v as i64);
        // cardinality is exact far beyond any job's minion count; fall back
        // to the document count if it is absent.
        job.returned = bucket
            .at("/minions/value")
            .and_then(Value::as_u64)
            .unwrap_or(doc_count);
        job.failed = count("/failed/doc_count");
        job.failed_minions = bucket
            .at("/failed/minions/buckets")
            .and_then(Value::as_array)
            .map(|b| {
                b.iter()
                    .filter_map(|m| m.get("key").map(scalar_text))
                    .collect()
            })
            .unwrap_or_default();
        // The returner's `counts` (its `states_count` option), else the
        // summary pipeline's counts of the same states: without either the
        // list cannot count states, only the job's page can.
        job.state_counts = if count("/counted/value") > 0 {
            Some((
                count("/states_succeeded/value"),
                count("/states_failed/value"),
            ))
        } else {
            (count("/summarised/value") > 0).then(|| {
                (
                    count("/summary_succeeded/value"),
                    count("/summary_failed/value"),
                )
            })
        };
    }
    let without: Vec<&str> = page
        .jobs
        .iter()
        .filter(|j| j.functions.is_empty())
        .map(|j| j.jid.as_str())
        .collect();
    if !without.is_empty() {
        page.notes.push(format!(
            "no statistics came back for {} job(s): {}",
            without.len(),
            without.join(", ")
        ));
    }
}

/// The publish events and job-cache loads of some jobs.
pub fn publish_searches(ctx: &QueryContext, jids: &[String]) -> PublishSearches {
    let (config, fields) = (&ctx.config, &ctx.fields);
    // A runner is published as `salt/run/<jid>/new`, its arguments `fun_args`.
    let mut tags = Vec::with_capacity(jids.len() * 2);
    for j in jids {
        tags.push(format!("salt/job/{j}/new"));
        tags.push(format!("salt/run/{j}/new"));
    }
    PublishSearches {
        events: SearchRequest::new(
            &config.event_index_pattern,
            body(
                r#"{"size":$0,"query":{"terms":{$1:$2}},"_source":["tag","data.fun","data.arg","data.fun_args","data.tgt","data.tgt_type","data.user","data.minions","data.missing","data._stamp"]}"#,
                &[json!(tags.len().max(1)), json!(fields.tag), json!(tags)],
            ),
        ),
        cache: SearchRequest::new(
            &config.job_cache_index,
            body(
                r#"{"size":$0,"query":{"ids":{"values":$1}},"_source":["jid","load.fun","load.arg","load.tgt","load.tgt_type","load.user"]}"#,
                &[json!(jids.len().max(1)), json!(jids)],
            ),
        ),
    }
}

/// Gives each job its publish data: the event first, the job-cache load
/// filling in what the event lacks.
pub fn attach_publish(page: &mut JobListPage, events: Option<&Value>, job_cache: Option<&Value>) {
    let read = |answer: Option<&Value>, f: fn(&Value) -> Option<PublishInfo>| -> Vec<PublishInfo> {
        answer
            .map(|a| {
                crate::query::hits(a)
                    .iter()
                    .filter_map(|h| f(h.get("_source")?))
                    .collect()
            })
            .unwrap_or_default()
    };
    let from_events = read(events, PublishInfo::from_event);
    let from_cache = read(job_cache, PublishInfo::from_job_cache);
    for job in &mut page.jobs {
        let event = from_events.iter().find(|p| p.jid == job.jid).cloned();
        let cached = from_cache.iter().find(|p| p.jid == job.jid).cloned();
        job.publish = PublishInfo::merge(event, cached);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::jobs::JobSummary;

    const NOW: i64 = 1_764_700_000_000;

    fn ctx() -> QueryContext {
        QueryContext::at(NOW)
    }

    fn stats_bucket(jid: &str, docs: u64, failed: u64, runner: u64, counted: u64) -> Value {
        json!({
            "key": jid, "doc_count": docs,
            "functions": {"buckets": [{"key": "state.apply", "doc_count": docs}]},
            "first_return": {"value": 1.0e12}, "last_return": {"value": 1.5e12},
            "minions": {"value": docs},
            "failed": {"doc_count": failed, "minions": {"buckets": [{"key": "db-02", "doc_count": 1}]}},
            "runner": {"doc_count": runner}, "counted": {"value": counted},
            "states_succeeded": {"value": 40.0}, "states_failed": {"value": 2.0}
        })
    }

    /// Job 5's row given its statistics and its publish events, with no
    /// job-cache load.
    fn job_5(bucket: Value, events: &[Value]) -> JobListPage {
        let mut page = JobListPage {
            jobs: vec![JobSummary {
                jid: "5".into(),
                ..JobSummary::default()
            }],
            ..JobListPage::default()
        };
        let hits: Vec<Value> = events.iter().map(|e| json!({"_source": e})).collect();
        attach_details(
            &mut page,
            JobDetailsAnswers {
                stats: Ok(json!({"aggregations": {"jobs": {"buckets": [bucket]}}})),
                events: Ok(json!({"hits": {"hits": hits}})),
                cache: Ok(json!({"hits": {"hits": []}})),
            },
        );
        page
    }

    #[test]
    fn without_the_returners_counts_the_summary_pipelines_count_the_states() {
        let mut bucket = stats_bucket("5", 2, 0, 0, 0);
        bucket["summarised"] = json!({"value": 2});
        bucket["summary_succeeded"] = json!({"value": 126.0});
        bucket["summary_failed"] = json!({"value": 4.0});
        let page = job_5(bucket, &[]);
        assert_eq!(page.jobs[0].state_counts, Some((126, 4)));
    }

    #[test]
    fn details_give_each_job_its_counts_failures_and_publish_data() {
        let mut page = JobListPage {
            jobs: ["3", "2"]
                .iter()
                .map(|j| JobSummary {
                    jid: j.to_string(),
                    ..JobSummary::default()
                })
                .collect(),
            ..JobListPage::default()
        };
        let s = job_details_searches(&ctx(), &["3".into(), "2".into()]);
        assert_eq!(
            s.stats.body["query"]["bool"]["filter"][1]["terms"]["jid.keyword"],
            json!(["3", "2"])
        );
        assert_eq!(
            s.events.body["query"]["terms"]["tag.keyword"],
            json!([
                "salt/job/3/new",
                "salt/run/3/new",
                "salt/job/2/new",
                "salt/run/2/new"
            ])
        );
        assert_eq!(s.cache.body["query"]["ids"]["values"], json!(["3", "2"]));
        attach_details(
            &mut page,
            JobDetailsAnswers {
                stats: Ok(
                    json!({"aggregations": {"jobs": {"buckets": [stats_bucket("3", 4, 1, 0, 4), stats_bucket("2", 1, 1, 1, 0)]}}}),
                ),
                events: Ok(
                    json!({"hits": {"hits": [{"_source": {"tag": "salt/job/3/new", "data": {
                    "fun": "state.apply", "tgt": "*", "tgt_type": "glob", "user": "sudo_alice",
                    "minions": ["a", "b", "c", "d", "e"]}}}]}}),
                ),
                cache: Ok(
                    json!({"hits": {"hits": [{"_source": {"jid": "2", "load": {"fun": "runner.jobs.list_jobs", "user": "root"}}}]}}),
                ),
            },
        );
        let job = &page.jobs[0];
        assert_eq!((job.returned, job.failed, job.succeeded()), (4, 1, 3));
        assert_eq!(job.failed_minions, ["db-02"]);
        assert_eq!(job.state_counts, Some((40, 2)));
        assert_eq!(job.first_return_ms, Some(1_000_000_000_000));
        assert_eq!(
            job.publish.as_ref().unwrap().user.as_deref(),
            Some("sudo_alice")
        );
        assert_eq!(job.missing(), Some(1));
        let runner = &page.jobs[1];
        assert_eq!(
            runner.state_counts, None,
            "neither counts nor summary fields"
        );
        assert!(runner.runner);
        assert_eq!(runner.succeeded(), 0);
        assert_eq!(
            runner.publish.as_ref().unwrap().user.as_deref(),
            Some("root")
        );
        assert_eq!(runner.missing(), None, "no publish event: targets unknown");
        assert!(page.notes.is_empty(), "{:?}", page.notes);
    }

    #[test]
    fn a_runners_publish_event_gives_its_row_a_user_and_arguments() {
        let page = job_5(
            stats_bucket("5", 1, 0, 0, 0),
            &[json!({"tag": "salt/run/5/new", "data": {
                "fun": "runner.jobs.lookup_jid", "fun_args": ["20261208002901851508"], "user": "alice"}})],
        );
        let publish = page.jobs[0]
            .publish
            .as_ref()
            .expect("the runner's publish data");
        assert_eq!(publish.user.as_deref(), Some("alice"));
        assert_eq!(publish.args, ["20261208002901851508"]);
    }

    #[test]
    fn minions_a_list_target_named_but_the_master_did_not_know_count_as_missing() {
        let page = job_5(
            stats_bucket("5", 1, 0, 0, 1),
            &[json!({"tag": "salt/job/5/new", "data": {
                "fun": "state.apply", "tgt": ["web01.prod.example.com", "ghost01"], "tgt_type": "list",
                "minions": ["web01.prod.example.com"], "missing": ["ghost01"]}})],
        );
        assert_eq!(page.jobs[0].returned, 1);
        assert_eq!(page.jobs[0].missing(), Some(1), "ghost01 is missing");
    }

    #[test]
    fn a_job_whose_counts_change_gets_a_new_row_key() {
        let a = JobSummary {
            jid: "1".into(),
            returned: 1,
            ..JobSummary::default()
        };
        let b = JobSummary {
            returned: 2,
            ..a.clone()
        };
        assert_ne!(a.version(), b.version());
        assert_eq!(a.version(), a.clone().version());
    }
}
