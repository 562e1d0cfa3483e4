//! The job page's searches and how its answers are read.

use super::*;
use crate::query::named::{named_first, NamedMinion};
use serde_json::Value;

fn ret(minion: &str, success: bool) -> Value {
    json!({"_index": "salt-state_apply-v1", "_id": minion, "_source": {
        "jid": "7", "minion": minion, "fun": "state.apply", "success": success,
        "retcode": if success { 0 } else { 2 },
        "data": {"test_|-a_|-a_|-nop": {"result": success, "changes": {}, "__run_num__": 0, "duration": 1.0}}
    }})
}

fn answers_with(returns: Result<Value, EngineError>) -> JobAnswers {
    let none = || Ok(json!({"hits": {"hits": []}}));
    JobAnswers {
        returns,
        publish_event: none(),
        job_events: none(),
        job_cache: none(),
        first_output: none(),
    }
}

#[test]
fn a_young_job_with_minions_yet_to_answer_is_still_running() {
    let answers = JobAnswers {
        publish_event: Ok(
            json!({"hits": {"hits": [{"_source": {"tag": "salt/job/7/new", "data": {
            "fun": "state.apply", "minions": ["a", "b"], "_stamp": "2026-12-03T10:00:00+00:00"}}}]}}),
        ),
        ..answers_with(Ok(
            json!({"hits": {"total": {"value": 1}, "hits": [ret("a", true)]}}),
        ))
    };
    let job = parse_job("7", answers).unwrap();
    let published = crate::time::parse_utc("2026-12-03T10:00:00Z").unwrap();
    assert_eq!(job.published_ms(), Some(published));
    // Only the job cache's load so far: the jid tells when.
    let cache_only = JobDetail {
        jid: "20261203100000123456".into(),
        publish: job
            .publish
            .clone()
            .map(|p| PublishInfo { stamp: None, ..p }),
        ..job.clone()
    };
    assert_eq!(cache_only.published_ms(), Some(published + 123));
    assert!(cache_only.still_running(published + 5_000));
    // No list of targets yet: followed for a minute, not fifteen.
    let targets_unknown = JobDetail {
        missing: Vec::new(),
        publish: cache_only
            .publish
            .clone()
            .map(|p| PublishInfo { minions: None, ..p }),
        ..cache_only.clone()
    };
    assert!(targets_unknown.still_running(published + 5_000));
    assert!(!targets_unknown.still_running(published + TARGETS_WAIT_MS + 1_000));
    assert!(job.still_running(published + 5_000));
    assert!(
        !job.still_running(published + FOLLOW_FOR_MS),
        "too old to wait for"
    );
    let answered = JobDetail {
        missing: Vec::new(),
        ..job
    };
    assert!(
        !answered.still_running(published + 5_000),
        "every minion answered"
    );
}

#[test]
fn a_job_whose_return_events_were_rejected_says_why_the_timeline_is_short() {
    let answers = JobAnswers {
        job_events: Ok(
            json!({"hits": {"hits": [{"_source": {"tag": "salt/job/7/new", "data": {"_stamp": "2026-12-03T10:00:00+00:00"}}}]}}),
        ),
        ..answers_with(Ok(
            json!({"hits": {"total": {"value": 1}, "hits": [ret("a", true)]}}),
        ))
    };
    let job = parse_job("7", answers).unwrap();
    assert_eq!(job.timeline.entries.len(), 1);
    assert!(
        job.notes
            .iter()
            .any(|n| n.contains("no return event") && n.contains("index template")),
        "{:?}",
        job.notes
    );
}

#[test]
fn the_job_searches_filter_on_the_jid_and_ask_for_every_return() {
    let s = job_searches(
        &QueryContext::at(0),
        "7",
        FirstOutput::First,
        MinionsShown::All,
    );
    assert_eq!(
        s.returns.body["query"]["bool"]["filter"][1]["term"]["jid.keyword"],
        "7"
    );
    assert_eq!(s.returns.body["size"], JOB_RETURNS_PAGE);
    // A runner's jid is published as `salt/run/<jid>/new`.
    assert_eq!(
        s.publish_event.body["query"]["terms"]["tag.keyword"],
        json!(["salt/job/7/new", "salt/run/7/new"])
    );
    assert_eq!(
        s.job_events.body["query"]["bool"]["should"],
        json!([{"prefix": {"tag.keyword": "salt/job/7/"}}, {"prefix": {"tag.keyword": "salt/run/7/"}}, {"prefix": {"tag.keyword": "salt/batch/7/"}}])
    );
    assert_eq!(s.job_cache.index, "salt-master-job-cache");
    // The first return in the page's order, whole: the first output.
    assert_eq!(s.first_output.body["size"], 1);
    assert_eq!(s.first_output.body["query"], s.returns.body["query"]);
    assert_eq!(s.first_output.body["sort"], s.returns.body["sort"]);
    for key in ["_source", "aggs", "track_total_hits"] {
        assert!(s.first_output.body.get(key).is_none(), "{key}");
    }
    // Following the job, the outputs on screen are not fetched again.
    let again = job_searches(
        &QueryContext::at(0),
        "7",
        FirstOutput::Nothing,
        MinionsShown::All,
    );
    assert_eq!(again.first_output.body["size"], 0);
}

#[test]
fn the_first_output_comes_with_the_job_and_its_absence_costs_nothing() {
    let page = json!({"hits": {"total": {"value": 2}, "hits": [ret("a", true), ret("b", false)]}});
    let answers = JobAnswers {
        first_output: Ok(json!({"hits": {"hits": [ret("a", true)]}})),
        ..answers_with(Ok(page.clone()))
    };
    let job = parse_job("7", answers).unwrap();
    let first = job.first_output.expect("the first output");
    assert_eq!((first.minion.as_str(), first.id.as_str()), ("a", "a"));
    assert!(
        matches!(first.data, ReturnData::States(_)),
        "{:?}",
        first.data
    );
    assert!(job.returns.iter().all(|r| r.data == ReturnData::Unread));
    // A failed or empty search: no output, no note, the page as before.
    for missing in [
        Err(EngineError::BadResponse {
            url: None,
            detail: "gone".into(),
        }),
        Ok(json!({"hits": {"hits": []}})),
    ] {
        let answers = JobAnswers {
            first_output: missing,
            ..answers_with(Ok(page.clone()))
        };
        let job = parse_job("7", answers).unwrap();
        assert!(job.first_output.is_none());
        assert!(job.notes.is_empty(), "{:?}", job.notes);
    }
}

#[test]
fn targeted_minions_without_returns_are_listed_as_missing_with_why() {
    let answers = JobAnswers {
        returns: Ok(
            json!({"hits": {"total": {"value": 2}, "hits": [ret("web01.prod.example.com", true), ret("db-02", false)]}}),
        ),
        publish_event: Ok(
            json!({"hits": {"hits": [{"_source": {"tag": "salt/job/7/new", "data": {
            "fun": "state.apply", "minions": ["db-02", "web01.prod.example.com", "lost-1", "offline-05"],
            "missing": ["ghost01"]}}}]}}),
        ),
        job_events: Ok(
            json!({"hits": {"hits": [{"_source": {"tag": "salt/job/7/new"}}, {"_source": {"tag": "salt/job/7/ret/lost-1"}}, {"_source": {"tag": "salt/job/7/ret/db-02"}}]}}),
        ),
        job_cache: Err(EngineError::Status {
            url: "u".into(),
            status: 404,
            kind: Some("index_not_found_exception".into()),
            reason: "no such index".into(),
        }),
        first_output: Ok(json!({"hits": {"hits": []}})),
    };
    let job = parse_job("7", answers).unwrap();
    let minions: Vec<_> = job.returns.iter().map(|r| r.minion.as_str()).collect();
    assert_eq!(minions, ["db-02", "web01.prod.example.com"]);
    assert_eq!(
        job.missing,
        vec![
            MissingMinion {
                minion: "lost-1".into(),
                reason: MissingReason::ReturnedToMaster
            },
            MissingMinion {
                minion: "offline-05".into(),
                reason: MissingReason::NoReturn
            },
            MissingMinion {
                minion: "ghost01".into(),
                reason: MissingReason::UnknownToMaster
            },
        ]
    );
    assert!(job
        .notes
        .iter()
        .any(|n| n.starts_with("job cache unavailable")));
    assert_eq!(job.outcomes(), (1, 1));
    assert!(
        job.returns.iter().all(|r| r.data == ReturnData::Unread),
        "the job page reads returns without their data"
    );
    assert_eq!(states_total(&job.returns), None, "not while data is unread");
    let read: Vec<ReturnDoc> = [ret("a", true), ret("b", false)]
        .iter()
        .map(ReturnDoc::from_hit)
        .collect();
    let states = states_total(&read).unwrap();
    assert_eq!((states.succeeded, states.failed, states.total), (1, 1, 2));
}

#[test]
fn the_returns_come_in_pages_without_data_and_each_minions_data_on_its_own() {
    let first = returns_search(&QueryContext::at(0), "7", None, MinionsShown::All);
    assert_eq!(first.body["_source"]["excludes"], json!(["data"]));
    assert!(first.body["aggs"]["returned"]["terms"].is_object());
    let full: Vec<Value> = (0..JOB_RETURNS_PAGE)
        .map(|i| {
            let mut h = ret(&format!("m{i:04}"), true);
            h["_source"].as_object_mut().unwrap().remove("data");
            h["sort"] = json!([format!("m{i:04}"), "salt-state_apply-v1"]);
            h
        })
        .collect();
    let page = parse_returns(&json!({"hits": {"hits": full}}));
    let more = page.more.clone().expect("a full page has a next one");
    assert_eq!(
        more.0,
        json!(["m0499", "salt-state_apply-v1"])
            .as_array()
            .unwrap()
            .clone()
    );
    let next = returns_search(&QueryContext::at(0), "7", Some(&more), MinionsShown::All);
    assert_eq!(
        next.body["search_after"],
        json!(["m0499", "salt-state_apply-v1"])
    );
    assert!(next.body.get("aggs").is_none(), "counted once");
    let one = return_search("salt-state_apply-v1", "db-02");
    assert_eq!(one.body["query"]["ids"]["values"], json!(["db-02"]));
    let doc = parse_return(
        "i",
        "db-02",
        json!({"hits": {"hits": [ret("db-02", false)]}}),
    )
    .unwrap();
    assert!(matches!(doc.data, ReturnData::States(_)));
    assert!(parse_return("i", "x", json!({"hits": {"hits": []}})).is_err());
}

#[test]
fn a_job_larger_than_one_page_counts_all_its_returns_and_failures() {
    let mut answer = json!({"hits": {"total": {"value": 12000}, "hits": [ret("a", true)]},
        "aggregations": {"failed": {"doc_count": 31}, "returned": {"buckets": []}}});
    answer["hits"]["hits"][0]["_source"]
        .as_object_mut()
        .unwrap()
        .remove("data");
    let job = parse_job("7", answers_with(Ok(answer))).unwrap();
    assert_eq!(job.total_returns, 12000);
    assert_eq!(job.outcomes(), (11969, 31));
}

#[test]
fn a_failed_returns_search_is_the_pages_error() {
    let e = EngineError::Status {
        url: "u".into(),
        status: 500,
        kind: None,
        reason: "boom".into(),
    };
    assert_eq!(parse_job("7", answers_with(Err(e.clone()))).unwrap_err(), e);
}

#[test]
fn the_minion_an_address_names_comes_first_and_the_rest_keep_their_order() {
    let answers = answers_with(Ok(json!({"hits": {"total": {"value": 3}, "hits": [
        ret("db-02", true), ret("web01", false), ret("web02.prod", true)
    ]}})));
    let job = parse_job("7", answers).unwrap();
    let order =
        |returns: &[ReturnDoc]| returns.iter().map(|r| r.minion.clone()).collect::<Vec<_>>();
    let mut returns = job.returns.clone();
    named_first(&mut returns, "minion-web02.prod");
    assert_eq!(order(&returns), ["web02.prod", "db-02", "web01"]);
    named_first(&mut returns, "minion-nobody");
    assert_eq!(order(&returns), ["web02.prod", "db-02", "web01"]);
    named_first(&mut returns, "");
    assert_eq!(order(&returns), ["web02.prod", "db-02", "web01"]);
}

#[test]
fn the_minion_an_address_names_is_listed_missing_unlisted_or_not_in_the_job() {
    let answers = answers_with(Ok(
        json!({"hits": {"total": {"value": 1}, "hits": [ret("db-02", false)]}}),
    ));
    let mut job = parse_job("7", answers).unwrap();
    job.missing = vec![MissingMinion {
        minion: "offline-05".into(),
        reason: MissingReason::NoReturn,
    }];
    let (all, failed) = (MinionsShown::All, MinionsShown::Failed);
    assert_eq!(job.named_minion("", all), NamedMinion::Nothing);
    assert_eq!(job.named_minion("state-3", all), NamedMinion::Nothing);
    assert_eq!(
        job.named_minion("minion-db-02", failed),
        NamedMinion::Listed
    );
    // A missing minion's line is where the link leads, in either listing.
    assert_eq!(
        job.named_minion("minion-offline-05", failed),
        NamedMinion::Missing
    );
    assert_eq!(
        job.named_minion("minion-offline-05", all),
        NamedMinion::Missing
    );
    // Listing every minion, its return would have come with the page.
    let none = |id: &str| NamedMinion::NoReturn(id.into());
    assert_eq!(job.named_minion("minion-web01", all), none("web01"));
    // Listing the failed: a minion that may have succeeded, unless the
    // publish data says it was never targeted.
    assert_eq!(
        job.named_minion("minion-web01", failed),
        NamedMinion::Unlisted
    );
    job.publish = PublishInfo::from_event(&json!({"tag": "salt/job/7/new",
        "data": {"fun": "state.apply", "minions": ["db-02", "web01", "offline-05"]}}));
    assert!(job.publish.is_some());
    assert_eq!(
        job.named_minion("minion-web01", failed),
        NamedMinion::Unlisted
    );
    assert_eq!(job.named_minion("minion-nosuch", failed), none("nosuch"));
}

#[test]
fn the_failed_minions_alone_are_listed_and_the_job_still_counted_whole() {
    let ctx = QueryContext::at(0);
    let s = job_searches(&ctx, "7", FirstOutput::First, MinionsShown::Failed);
    let failed = failed_clause(&ctx.fields);
    // Listed after the counts: the missing minions and the totals are the
    // whole job's.
    assert_eq!(s.returns.body["post_filter"], failed);
    assert_eq!(s.returns.body["aggs"]["failed"]["filter"], failed);
    assert!(s.returns.body["aggs"]["returned"]["terms"].is_object());
    let first_filter = s.first_output.body["query"]["bool"]["filter"]
        .as_array()
        .unwrap();
    assert_eq!(
        first_filter.last(),
        Some(&failed),
        "the first failed output"
    );
    let all = job_searches(&ctx, "7", FirstOutput::First, MinionsShown::All);
    assert!(all.returns.body.get("post_filter").is_none());
    assert!(all.returns.body["aggs"].get("all").is_none());
    // The next pages: failed ones only, in the query.
    let after = ReturnsCursor(vec![json!("m0499"), json!("i")]);
    let next = returns_search(&ctx, "7", Some(&after), MinionsShown::Failed);
    let next_filter = next.body["query"]["bool"]["filter"].as_array().unwrap();
    assert!(next_filter.contains(&failed));
    assert!(next.body.get("post_filter").is_none());

    // The hits' total counts the failed; the job's from the aggregation.
    let answer = json!({
        "hits": {"total": {"value": 1}, "hits": [ret("b", false)]},
        "aggregations": {"all": {"doc_count": 2}, "failed": {"doc_count": 1},
            "returned": {"buckets": [{"key": "a"}, {"key": "b"}]}}
    });
    let job = parse_job("7", answers_with(Ok(answer))).unwrap();
    assert_eq!(job.total_returns, 2);
    assert_eq!(job.outcomes(), (1, 1));
    assert_eq!(job.returns.len(), 1);
}

#[test]
fn the_minion_a_link_names_comes_with_its_output_however_far_down_the_job() {
    let s = job_searches(
        &QueryContext::at(0),
        "7",
        FirstOutput::Named("minion-web0404.prod"),
        MinionsShown::All,
    );
    let filter = &s.first_output.body["query"]["bool"]["filter"];
    assert_eq!(
        filter.as_array().and_then(|f| f.last()),
        Some(&json!({"term": {"minion.keyword": "web0404.prod"}}))
    );
    assert_eq!(s.first_output.body["size"], 1);
    // An anchor's `_` stood for any character the id could not keep.
    let odd = job_searches(
        &QueryContext::at(0),
        "7",
        FirstOutput::Named("minion-a_b"),
        MinionsShown::All,
    );
    assert_eq!(
        odd.first_output.body["query"]["bool"]["filter"]
            .as_array()
            .and_then(|f| f.last()),
        Some(&json!({"wildcard": {"minion.keyword": {"value": "a?b"}}}))
    );
    // Naming nobody: the first return, as without a name.
    let nobody = job_searches(
        &QueryContext::at(0),
        "7",
        FirstOutput::Named(""),
        MinionsShown::All,
    );
    let first = job_searches(
        &QueryContext::at(0),
        "7",
        FirstOutput::First,
        MinionsShown::All,
    );
    assert_eq!(nobody.first_output, first.first_output);

    // Beyond the first page: read without its data, put first, and not
    // listed twice when its page comes.
    let page = json!({"hits": {"total": {"value": 3}, "hits": [ret("a", true), ret("b", false)]}});
    let answers = JobAnswers {
        first_output: Ok(json!({"hits": {"hits": [ret("z", true)]}})),
        ..answers_with(Ok(page))
    };
    let job = parse_job("7", answers).unwrap();
    let minions = |r: &[ReturnDoc]| r.iter().map(|r| r.minion.clone()).collect::<Vec<_>>();
    assert_eq!(minions(&job.returns), ["z", "a", "b"]);
    assert_eq!(job.returns[0].data, ReturnData::Unread);
    assert!(job.returns[0].source.get("data").is_none());
    assert_eq!(job.returns[0].fun, "state.apply");
    assert!(
        job.returns[0].notes.is_empty(),
        "{:?}",
        job.returns[0].notes
    );
    let mut returns = job.returns.clone();
    let next = parse_returns(&json!({"hits": {"hits": [ret("y", true), ret("z", true)]}}));
    add_page(&mut returns, next.returns);
    assert_eq!(minions(&returns), ["z", "a", "b", "y"]);
}

#[test]
fn an_id_that_cannot_be_a_jid_is_said_so_and_not_waited_for() {
    assert_eq!(not_a_jid("20261206182700000102"), None);
    assert_eq!(not_a_jid("20261206182700000102_4242"), None);
    for bad in ["notajid", "99999999999999999999", "2026120618270000010"] {
        let why = not_a_jid(bad).expect(bad);
        assert!(why.contains(bad) && why.contains("20 digits"), "{why}");
    }
    let month_13 = not_a_jid("20261340000000000000").unwrap();
    assert!(
        month_13.contains("its digits are no time: a jid is 20 digits"),
        "{month_13}"
    );
    assert!(!not_a_jid("notajid").unwrap().contains("no time"));
    // A long one is quoted in part.
    let long = not_a_jid(&"9".repeat(3000)).unwrap();
    assert!(long.len() < 300 && long.contains("9…”"), "{long}");
    let empty =
        |jid: &str| parse_job(jid, answers_with(Ok(json!({"hits": {"hits": []}})))).unwrap();
    let now = crate::time::jid_start_ms("20261206182700000102").unwrap();
    // A fresh jid with nothing yet: waited for a while, then not.
    let fresh = empty("20261206182700000102");
    assert!(fresh.worth_following(now + 1_000, now));
    let later = now + TARGETS_WAIT_MS.max(WAIT_FOR_NEW_MS) + 1;
    assert!(!fresh.worth_following(later, now));
    // No jid, or one from last month: not waited for at all.
    assert!(!empty("notajid").worth_following(now, now));
    assert!(!empty("20261106182700000102").worth_following(now, now));
    // Nor one years ahead: it never ages, so it was followed for good.
    let future = empty("20301207000000000000");
    assert!(!future.still_running(now));
    assert!(!future.worth_following(now + 1_000, now));
    // A job with returns whose jid is hours ahead (a master's local
    // time): followed, but not for longer than the page's own limit.
    let ahead = parse_job(
        "20261206192700000102",
        answers_with(Ok(
            json!({"hits": {"total": {"value": 1}, "hits": [ret("a", true)]}}),
        )),
    )
    .unwrap();
    assert!(ahead.worth_following(now + 1_000, now));
    assert!(!ahead.worth_following(now + FOLLOW_FOR_MS, now));
}
