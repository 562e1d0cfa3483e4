//! The views' queries against the real engine filled by real Salt runs
//! (scripts/salt-data.sh): what each view shows must agree with the
//! documents the returner wrote.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use saltscope_core::engine::native::block_on;
use saltscope_core::engine::{msearch, send_json, EngineError, HttpRequest, SearchRequest};
use saltscope_core::model::{HighstateSummary, Outcome, ReturnData, ReturnDoc};
use saltscope_core::query::filter::JobFilter;
use saltscope_core::query::job::{FirstOutput, JobDetail, MinionsShown, MissingReason};
use saltscope_core::query::jobs::{Cursor, JobListPage, JobListRequest};
use saltscope_core::views;
use serde_json::json;

fn job_list_page(
    engine: &common::TestEngine,
    page_size: usize,
    after: Option<String>,
) -> JobListPage {
    let mut request = JobListRequest::new(
        JobFilter {
            show_noisy: true,
            ..JobFilter::default()
        },
        after.map(Cursor::After).unwrap_or_default(),
    );
    request.page_size = page_size;
    block_on(views::job_list(&engine.transport, &engine.ctx(), &request)).expect("job list")
}

fn job_page(engine: &common::TestEngine, jid: &str) -> JobDetail {
    job_page_listing(engine, jid, MinionsShown::All)
}

fn job_page_listing(engine: &common::TestEngine, jid: &str, shown: MinionsShown) -> JobDetail {
    block_on(views::job(
        &engine.transport,
        &engine.ctx(),
        jid,
        FirstOutput::First,
        shown,
    ))
    .expect("job page")
}

/// Every return document in the engine, read as the views read them.
fn return_docs(engine: &common::TestEngine) -> Vec<ReturnDoc> {
    engine
        .all_returns()
        .iter()
        .map(ReturnDoc::from_hit)
        .collect()
}

fn returns_by_jid(engine: &common::TestEngine) -> BTreeMap<String, Vec<ReturnDoc>> {
    let mut by_jid: BTreeMap<String, Vec<ReturnDoc>> = BTreeMap::new();
    for doc in return_docs(engine) {
        by_jid.entry(doc.jid.clone()).or_default().push(doc);
    }
    by_jid
}

#[test]
fn paging_the_job_list_lists_every_jid_once_newest_first_with_its_counts() {
    let Some(engine) = common::engine() else {
        return;
    };
    let expected = returns_by_jid(&engine);
    assert!(
        expected.len() >= 10,
        "the Salt runs made only {} jobs",
        expected.len()
    );

    let mut listed = Vec::new();
    let mut after = None;
    let mut pages = 0;
    loop {
        let page = job_list_page(&engine, 7, after.take());
        pages += 1;
        listed.extend(page.jobs);
        match page.older {
            Some(Cursor::After(next)) => after = Some(next),
            _ => break,
        }
        assert!(pages < 1000, "paging does not end");
    }
    let jids: Vec<&str> = listed.iter().map(|j| j.jid.as_str()).collect();
    let mut sorted = jids.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted.dedup();
    assert_eq!(jids, sorted, "jobs are listed once each, newest first");
    assert_eq!(
        jids.iter().map(|j| j.to_string()).collect::<BTreeSet<_>>(),
        expected.keys().cloned().collect::<BTreeSet<_>>(),
        "exactly the jids of return documents: no job-cache or event documents"
    );
    for job in &listed {
        let docs = &expected[&job.jid];
        let minions: BTreeSet<&str> = docs.iter().map(|d| d.minion.as_str()).collect();
        assert_eq!(job.returned, minions.len() as u64, "minions of {}", job.jid);
        let failed = docs
            .iter()
            .filter(|d| d.outcome() == Outcome::Failed)
            .count() as u64;
        assert_eq!(job.failed, failed, "failed minions of {}", job.jid);
        assert_eq!(
            job.functions.first(),
            Some(&docs[0].fun),
            "function of {}",
            job.jid
        );
    }
}

#[test]
fn a_runners_job_page_has_its_publish_data_and_events() {
    let Some(engine) = common::engine() else {
        return;
    };
    let mut runners = return_docs(&engine);
    runners.retain(|d| d.fun.starts_with("runner."));
    assert!(!runners.is_empty(), "salt-data.sh runs runners");
    for doc in &runners {
        let job = job_page(&engine, &doc.jid);
        // The master publishes a runner's jid as `salt/run/<jid>/new`.
        let publish = job.publish.as_ref().expect("the runner's publish data");
        assert_eq!(
            publish.fun.as_deref(),
            Some(doc.fun.as_str()),
            "{}",
            doc.jid
        );
        assert_eq!(publish.user.as_deref(), Some("root"));
        assert!(publish.stamp.is_some());
        assert!(
            job.timeline
                .entries
                .iter()
                .any(|e| e.tag == format!("salt/run/{}/new", doc.jid)),
            "{:?}",
            job.timeline.entries
        );
        assert!(job.missing.is_empty());
    }
}

#[test]
fn the_job_page_lists_a_jobs_failed_minions_alone_and_counts_the_whole_job() {
    let Some(engine) = common::engine() else {
        return;
    };
    let page = job_list_page(&engine, 500, None);
    let job = page
        .jobs
        .iter()
        .find(|j| j.failed > 0 && j.returned > j.failed)
        .expect("a job where some minions failed and some did not");
    let all = job_page(&engine, &job.jid);
    let failed = job_page_listing(&engine, &job.jid, MinionsShown::Failed);
    assert_eq!(failed.returns.len() as u64, job.failed, "{}", job.jid);
    assert!(
        failed
            .returns
            .iter()
            .all(|r| r.outcome() == Outcome::Failed),
        "{:?}",
        failed.returns
    );
    let failed_in_all: Vec<_> = all
        .returns
        .iter()
        .filter(|r| r.outcome() == Outcome::Failed)
        .map(|r| &r.minion)
        .collect();
    let listed: Vec<_> = failed.returns.iter().map(|r| &r.minion).collect();
    assert_eq!(listed, failed_in_all);
    // The totals and the missing minions are the whole job's.
    assert_eq!(failed.total_returns, all.total_returns);
    assert_eq!(failed.outcomes(), all.outcomes());
    assert_eq!(failed.missing, all.missing);
    let output = failed.first_output.as_deref().expect("a failed output");
    assert_eq!(output.outcome(), Outcome::Failed);
}

#[test]
fn a_multi_minion_state_apply_job_shows_every_minion_with_ordered_states_and_salts_counts() {
    let Some(engine) = common::engine() else {
        return;
    };
    let page = job_list_page(&engine, 500, None);
    let job = page
        .jobs
        .iter()
        .find(|j| {
            j.functions == ["state.apply"]
                && j.returned >= 4
                && j.publish.as_ref().is_some_and(|p| p.args == ["saltscope"])
        })
        .expect("a state.apply job with at least four minions");
    let publish = job.publish.as_ref().unwrap();
    assert!(
        publish.minions.as_ref().is_some_and(|m| m.len() >= 4),
        "{publish:?}"
    );
    assert!(publish.user.is_some(), "the publish event names the user");

    let detail = job_page(&engine, &job.jid);
    assert_eq!(detail.returns.len() as u64, job.returned);
    // The first minion's output came with the page, read as the page's own
    // fetch of it reads it.
    let first = detail.first_output.as_deref().expect("the first output");
    let fetched = block_on(views::job_return(
        &engine.transport,
        &detail.returns[0].index,
        &detail.returns[0].id,
    ))
    .expect("the first return");
    assert_eq!(*first, fetched);
    let progress = block_on(views::job(
        &engine.transport,
        &engine.ctx(),
        &job.jid,
        FirstOutput::Nothing,
        MinionsShown::All,
    ))
    .expect("the job followed");
    assert!(
        progress.first_output.is_none(),
        "a follow fetches no output"
    );
    assert_eq!(progress.returns, detail.returns);
    // A link naming the last minion: its output comes with the page, its
    // return first, the others after it in their order.
    let last = detail.returns.last().expect("returns");
    let anchor = saltscope_core::route::link::minion_anchor(&last.minion);
    let named = block_on(views::job(
        &engine.transport,
        &engine.ctx(),
        &job.jid,
        FirstOutput::Named(&anchor),
        MinionsShown::All,
    ))
    .expect("the job, a minion named");
    assert_eq!(named.returns[0], *last);
    assert_eq!(named.returns.len(), detail.returns.len());
    assert_eq!(
        named.first_output.as_deref().map(|d| &d.minion),
        Some(&last.minion)
    );
    assert!(!matches!(
        named.first_output.as_deref().map(|d| &d.data),
        Some(ReturnData::Unread) | None
    ));
    let mut job_total = HighstateSummary::default();
    let mut outcomes = BTreeSet::new();
    for summary in &detail.returns {
        assert_eq!(
            summary.data,
            ReturnData::Unread,
            "the page reads data minion by minion"
        );
        let ret = &block_on(views::job_return(
            &engine.transport,
            &summary.index,
            &summary.id,
        ))
        .expect("a minion's return");
        let ReturnData::States(states) = &ret.data else {
            panic!("{} returned no states: {:?}", ret.minion, ret.data)
        };
        let nums: Vec<u64> = states
            .runs
            .iter()
            .map(|r| r.run_num.expect("__run_num__"))
            .collect();
        let mut sorted = nums.clone();
        sorted.sort_unstable();
        assert_eq!(nums, sorted, "{} states in run order", ret.minion);
        let summary = HighstateSummary::of(&states.runs);
        job_total.add(&summary);
        if let Some((succeeded, failed)) = ret.counts {
            assert_eq!(
                (summary.succeeded, summary.failed),
                (succeeded, failed),
                "counts of {}",
                ret.minion
            );
        }
        assert_eq!(
            summary.failed > 0,
            ret.outcome() == Outcome::Failed,
            "outcome of {}",
            ret.minion
        );
        outcomes.insert(summary.failed > 0);
        for run in &states.runs {
            assert!(!run.id.is_empty() && run.function.contains('.'), "{run:?}");
        }
    }
    assert_eq!(
        outcomes.len(),
        2,
        "outcomes differ per minion: some fail, some succeed"
    );
    // The whole job's totals, counted in the engine's answers with only the
    // fields they need, are the sum of every minion's.
    let counted = block_on(views::job_states(
        &engine.transport,
        &engine.ctx(),
        &job.jid,
        &|_| true,
    ))
    .expect("the job's state totals");
    assert_eq!(counted.end.read, job.returned);
    assert_eq!(counted.end.stopped_short, None);
    let counted = counted.summary.expect("states");
    assert_eq!(
        (
            counted.succeeded,
            counted.failed,
            counted.changed,
            counted.total
        ),
        (
            job_total.succeeded,
            job_total.failed,
            job_total.changed,
            job_total.total
        )
    );
    assert!((counted.total_ms - job_total.total_ms).abs() < 1e-6);
}

#[test]
fn a_targeted_minion_that_never_answered_is_listed_as_missing() {
    let Some(engine) = common::engine() else {
        return;
    };
    let page = job_list_page(&engine, 500, None);
    let job = page
        .jobs
        .iter()
        .find(|j| j.missing().unwrap_or(0) > 0)
        .expect("a job whose publish event targeted a minion that did not return");
    let detail = job_page(&engine, &job.jid);
    assert!(!detail.missing.is_empty());
    assert!(detail
        .missing
        .iter()
        .any(|m| m.reason == MissingReason::NoReturn));
    for m in &detail.missing {
        assert!(detail.returns.iter().all(|r| r.minion != m.minion));
    }
}

#[test]
fn a_minion_a_list_target_named_but_the_master_did_not_know_is_missing_with_its_reason() {
    let Some(engine) = common::engine() else {
        return;
    };
    let m = common::manifest();
    let jid = m["unknown_minion"]["jid"]
        .as_str()
        .expect("the unknown_minion job");
    let detail = job_page(&engine, jid);
    let returned: Vec<&str> = detail.returns.iter().map(|r| r.minion.as_str()).collect();
    assert_eq!(returned, ["web01.prod.example.com"]);
    assert_eq!(
        detail
            .missing
            .iter()
            .map(|m| (m.minion.as_str(), m.reason))
            .collect::<Vec<_>>(),
        [("ghost01", MissingReason::UnknownToMaster)],
        "the publish event's `missing`"
    );
    let page = job_list_page(&engine, 500, None);
    let row = page
        .jobs
        .iter()
        .find(|j| j.jid == jid)
        .expect("in the job list");
    assert_eq!(row.missing(), Some(1), "the Missing column counts ghost01");
}

#[test]
fn blacklisted_functions_write_no_returns_and_dotted_names_survive() {
    let Some(engine) = common::engine() else {
        return;
    };
    let docs = return_docs(&engine);
    assert!(
        docs.iter().all(|d| d.fun != "test.ping"),
        "test.ping is blacklisted"
    );
    let dotted = docs.iter().any(|d| match &d.data {
        ReturnData::States(s) => s
            .runs
            .iter()
            .any(|r| r.id.contains('.') || r.name.contains('.')),
        _ => false,
    });
    assert!(
        dotted,
        "state IDs or names with dots are recovered from the state fields"
    );
}

#[test]
fn engine_errors_carry_the_url_and_the_engines_reason() {
    let Some(engine) = common::engine() else {
        return;
    };
    let bad_query = SearchRequest::new(
        &engine.connection.config.index_pattern,
        json!({"query": {"query_string": {"query": "fun:("}}}),
    );
    let err = block_on(msearch(&engine.transport, &bad_query))
        .expect("the _msearch itself answers")
        .expect_err("a syntax error");
    let EngineError::Status {
        status,
        reason,
        url,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 400);
    assert!(url.ends_with("/_msearch"));
    assert!(reason.to_lowercase().contains("parse"), "{reason}");

    let missing = block_on(send_json(
        &engine.transport,
        &HttpRequest::get("/no-such-index-saltscope/_search"),
    ))
    .expect_err("a missing index");
    assert!(missing.is_index_not_found(), "{missing:?}");
    assert!(missing.to_string().contains("no-such-index-saltscope"));
}
