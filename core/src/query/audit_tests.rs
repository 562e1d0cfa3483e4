//! The audit view's searches and how its answers are read.

use super::*;

fn event(jid: &str, fun: &str, args: Value, tgt: &str, user: &str, stamp_ms: i64) -> Value {
    json!({"_source": {"tag": format!("salt/job/{jid}/new"), "data": {
        "jid": jid, "fun": fun, "arg": args, "tgt": tgt, "tgt_type": "glob", "user": user,
        "minions": ["a", "b"], "_stamp": "2026-12-02T19:14:13.295961+00:00"}},
        "sort": [stamp_ms, format!("salt/job/{jid}/new")]})
}

/// The audit's first page, unfiltered, read from `answers`.
fn first_page(answers: AuditAnswers) -> AuditPage {
    parse_audit(
        &AppConfig::default(),
        &AuditFilter::default(),
        None,
        answers,
    )
    .unwrap()
}

#[test]
fn the_filter_survives_the_url_and_builds_event_and_cache_queries() {
    let (f, problems) = AuditFilter::from_query(|n| match n {
        "user" => Some("sudo_*,root"),
        "fun" => Some("cmd.run"),
        "target" => Some("*"),
        "risky" => Some("1"),
        _ => None,
    });
    assert!(problems.is_empty());
    let pairs = f.to_query();
    let (back, _) =
        AuditFilter::from_query(|n| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_str()));
    assert_eq!(back, f);
    let cursor = AuditCursor::Event {
        stamp_ms: 5,
        tag: "salt/job/1/new".into(),
    };
    let s = audit_searches(&QueryContext::at(0), &f, Some(&cursor));
    let events = s.events.as_ref().unwrap().body.to_string();
    assert!(
        events.contains(r#"{"wildcard":{"data.user.keyword":{"value":"sudo_*"}}}"#),
        "{events}"
    );
    assert!(
        events.contains(r#"{"terms":{"data.tgt.keyword":["*"]}}"#),
        "a target of * is the literal *"
    );
    assert_eq!(
        s.events.as_ref().unwrap().body["search_after"],
        json!([5, "salt/job/1/new"])
    );
    assert_eq!(
        s.events.as_ref().unwrap().body["sort"][0]["data._stamp"]["order"],
        "desc"
    );
    // A page after the first sends only the search its cursor reads.
    assert_eq!((s.job_cache, s.returned), (None, None));
    let first = audit_searches(&QueryContext::at(0), &f, None);
    let cache = json_text(&first.job_cache.expect("sent on the first page").body);
    assert!(cache.contains("load.user.keyword"), "{cache}");
    assert_eq!(first.returned, None, "the returns carry no user or target");
    let cache_cursor = AuditCursor::JobCache { jid: "9".into() };
    let s = audit_searches(&QueryContext::at(0), &f, Some(&cache_cursor));
    assert_eq!(s.events, None);
    assert_eq!(
        s.job_cache.expect("read").body["search_after"],
        json!(["9"])
    );
    assert_eq!(AuditCursor::parse(&cursor.to_param()), Some(cursor));
}

#[test]
fn publish_events_become_audit_lines_with_their_risks() {
    let answers = AuditAnswers {
        events: Some(Ok(json!({"hits": {"total": {"value": 3}, "hits": [
            event("3", "cmd.run", json!(["rm -rf /srv/old"]), "web*", "sudo_alice", 3),
            event("2", "state.apply", json!(["web"]), "*", "root", 2),
            {"_source": {"tag": "salt/run/1/new", "data": {"fun": "runner.jobs.list_jobs", "fun_args": [], "jid": "1", "user": "root", "_stamp": "x"}}, "sort": [1, "salt/run/1/new"]}
        ]}}))),
        job_cache: Some(Ok(json!({"hits": {"hits": []}}))),
        returned: Some(Ok(json!({}))),
    };
    let page = first_page(answers);
    assert_eq!(page.source, Some(PublishSource::Event));
    assert_eq!(page.total, Some(3));
    assert_eq!(page.entries.len(), 3);
    assert_eq!(page.entries[0].user.as_deref(), Some("sudo_alice"));
    assert_eq!(page.entries[0].risks, ["recursive forced delete"]);
    assert_eq!(page.entries[1].risks, ["state run on every minion"]);
    assert_eq!(page.entries[1].targeted, Some(2));
    assert_eq!(page.entries[2].kind, AuditKind::Runner);
    assert!(page.entries[2].risks.is_empty());
    assert_eq!(page.next, None, "a short page is the last");
    assert!(page.notes.is_empty(), "{:?}", page.notes);
}

#[test]
fn jobs_that_returned_without_a_publish_record_are_counted() {
    let answers = || AuditAnswers {
        events: Some(Ok(json!({"hits": {"total": {"value": 2}, "hits": [
            event("3", "cmd.run", json!(["uptime"]), "web*", "alice", 3),
            event("2", "state.apply", json!(["web"]), "*", "root", 2)]}}))),
        job_cache: Some(Ok(json!({"hits": {"hits": []}}))),
        returned: Some(Ok(json!({"aggregations": {"jobs": {"value": 5}}}))),
    };
    let read = |filter: &AuditFilter| {
        parse_audit(&AppConfig::default(), filter, None, answers())
            .unwrap()
            .notes
    };
    assert_eq!(
        read(&AuditFilter::default()),
        ["In this range 5 jobs returned and 2 were published (a publish record), not always the same jobs. Only the published are listed: a job run by salt-call on a minion, or while the master's events were not indexed, has no publish record and is only in the job list; a job published to minions that did not answer has no return"]
    );
    // More published than returned: still no claim that one set holds the other.
    let more_published = AuditAnswers {
        returned: Some(Ok(json!({"aggregations": {"jobs": {"value": 1}}}))),
        ..answers()
    };
    let notes = parse_audit(
        &AppConfig::default(),
        &AuditFilter::default(),
        None,
        more_published,
    )
    .unwrap()
    .notes;
    assert_eq!(notes.len(), 1);
    // Nor that one is among the two: the sets are counted, not joined.
    assert!(notes[0].starts_with("In this range 1 job returned and 2 were published (a publish record), not always the same jobs."), "{notes:?}");
    // Users and targets are only in the publish records: no count.
    let by_user = AuditFilter {
        users: vec!["alice".into()],
        ..AuditFilter::default()
    };
    assert!(read(&by_user).is_empty());
    // The functions narrow both sides alike.
    let by_fun = AuditFilter {
        functions: vec!["cmd.run".into()],
        ..AuditFilter::default()
    };
    assert_eq!(read(&by_fun).len(), 1);
    let searches = audit_searches(&QueryContext::at(0), &by_fun, None);
    let returned = json_text(&searches.returned.as_ref().unwrap().body);
    assert_eq!(searches.returned.as_ref().unwrap().index, "salt-*");
    assert!(
        returned.contains("cmd.run") && returned.contains("\"cardinality\""),
        "{returned}"
    );
}

#[test]
fn risky_only_keeps_the_flagged_lines() {
    let answers = AuditAnswers {
        events: Some(Ok(json!({"hits": {"hits": [
            event("3", "cmd.run", json!(["rm -rf /srv/old"]), "web*", "sudo_alice", 3),
            event("2", "test.version", json!([]), "db-02", "root", 2)]}}))),
        job_cache: Some(Ok(json!({"hits": {"hits": []}}))),
        returned: Some(Ok(json!({}))),
    };
    let filter = AuditFilter {
        risky_only: true,
        ..AuditFilter::default()
    };
    let page = parse_audit(&AppConfig::default(), &filter, None, answers).unwrap();
    assert_eq!(page.entries.len(), 1);
    assert_eq!(page.entries[0].jid, "3");
}

#[test]
fn without_publish_events_the_job_cache_is_read_and_said_so() {
    let answers = AuditAnswers {
        events: Some(Ok(json!({"hits": {"hits": []}}))),
        job_cache: Some(Ok(
            json!({"hits": {"hits": [{"_source": {"jid": "9", "load": {"fun": "cmd.run", "arg": ["rm -fr /"], "tgt": "*", "user": "root"}}, "sort": ["9"]}]}}),
        )),
        returned: Some(Ok(json!({"aggregations": {"jobs": {"value": 5}}}))),
    };
    let page = first_page(answers);
    assert_eq!(page.source, Some(PublishSource::JobCache));
    assert_eq!(
        page.entries[0].risks,
        ["recursive forced delete", "command on every minion"]
    );
    assert!(page.notes[0].contains("no publish events"));
}

#[test]
fn with_both_caches_empty_or_absent_the_page_says_what_to_turn_on() {
    let empty = || Ok(json!({"hits": {"hits": []}}));
    let page = parse_audit(
        &AppConfig::default(),
        &AuditFilter::default(),
        None,
        AuditAnswers {
            events: Some(empty()),
            job_cache: Some(empty()),
            returned: Some(empty()),
        },
    )
    .unwrap();
    assert!(page.entries.is_empty());
    assert_eq!(page.notes.len(), 1, "{:?}", page.notes);
    assert!(page.notes[0].contains("turn on `event_return: elasticsearch`"));
    // The page is of neither: it names no source ("from the master job cache").
    assert_eq!(page.source, None);
}

#[test]
fn with_neither_index_the_page_says_what_to_turn_on() {
    let missing = EngineError::Status {
        url: "u".into(),
        status: 404,
        kind: Some("index_not_found_exception".into()),
        reason: "no such index".into(),
    };
    let page = parse_audit(
        &AppConfig::default(),
        &AuditFilter::default(),
        None,
        AuditAnswers {
            events: Some(Ok(json!({"hits": {"hits": []}}))),
            job_cache: Some(Err(missing)),
            returned: Some(Ok(json!({}))),
        },
    )
    .unwrap();
    assert!(page.entries.is_empty());
    assert!(page.notes[0].contains("event_return"));
}

#[test]
fn a_minion_filter_reads_the_minions_each_job_reached_whatever_its_target() {
    let (f, problems) = AuditFilter::from_query(|k| (k == "minion").then_some("web01*, db-02"));
    assert!(problems.is_empty());
    assert_eq!(f.minions, ["web01*", "db-02"]);
    let pairs = f.to_query();
    let (back, _) =
        AuditFilter::from_query(|n| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_str()));
    assert_eq!(back, f);
    let s = audit_searches(&QueryContext::at(0), &f, None);
    let events = s.events.unwrap().body.to_string();
    assert!(
        events.contains(r#"{"wildcard":{"data.minions.keyword":{"value":"web01*"}}}"#),
        "{events}"
    );
    assert!(events.contains(r#""data.minions.keyword""#));
    // The job cache names no minions: nothing from it under the filter.
    let cache = s.job_cache.unwrap().body.to_string();
    assert!(
        cache.contains(r#"{"bool":{"must_not":{"match_all":{}}}}"#),
        "{cache}"
    );
    // The jobs that returned are those the minions returned.
    let returned = s.returned.unwrap().body.to_string();
    assert!(returned.contains("minion.keyword"), "{returned}");
    let page = parse_audit(
        &AppConfig::default(),
        &f,
        None,
        AuditAnswers {
            events: Some(Ok(json!({"hits": {"hits": []}}))),
            job_cache: Some(Ok(json!({"hits": {"hits": []}}))),
            returned: Some(Ok(json!({"aggregations": {"jobs": {"value": 0}}}))),
        },
    )
    .unwrap();
    assert!(
        page.notes
            .iter()
            .any(|n| n.contains("the job cache names no minions")),
        "{:?}",
        page.notes
    );
}
