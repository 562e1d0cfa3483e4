//! The job browser's filters and views against the real engine filled by
//! real Salt runs: each view's answer is checked against the return
//! documents themselves, read by a plain search.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use saltscope_core::config::glob_match;
use saltscope_core::engine::native::block_on;
use saltscope_core::engine::EngineError;
use saltscope_core::model::{Outcome, ReturnDoc};
use saltscope_core::query::audit::{AuditFilter, AuditPage};
use saltscope_core::query::filter::{JobFilter, OutcomeFilter, TimeRange};
use saltscope_core::query::jobs::{Cursor, JobListPage, JobListRequest};
use saltscope_core::query::minions::LatestOf;
use saltscope_core::query::QueryContext;
use saltscope_core::views;

fn shown(filter: JobFilter) -> JobFilter {
    JobFilter {
        show_noisy: true,
        ..filter
    }
}

fn try_job_list(
    engine: &common::TestEngine,
    ctx: &QueryContext,
    request: &JobListRequest,
) -> Result<JobListPage, EngineError> {
    block_on(views::job_list(&engine.transport, ctx, request))
}

/// The jids the job list shows for `filter`, all pages (small pages, so
/// that paging is exercised too).
fn listed(engine: &common::TestEngine, filter: JobFilter) -> Vec<String> {
    let mut request = JobListRequest::new(filter, Cursor::Newest);
    request.page_size = 5;
    let ctx = engine.ctx();
    let mut jids = Vec::new();
    for _ in 0..1000 {
        let page = try_job_list(engine, &ctx, &request).expect("job list");
        assert!(
            page.notes.iter().all(|n| !n.contains("unavailable")),
            "{:?}",
            page.notes
        );
        jids.extend(page.jobs.iter().map(|j| j.jid.clone()));
        match page.older {
            Some(c) => request.cursor = c,
            None => return jids,
        }
    }
    panic!("paging does not end");
}

fn docs(engine: &common::TestEngine) -> Vec<ReturnDoc> {
    engine
        .all_returns()
        .iter()
        .map(ReturnDoc::from_hit)
        .collect()
}

fn jids_where(docs: &[ReturnDoc], keep: impl Fn(&ReturnDoc) -> bool) -> BTreeSet<String> {
    docs.iter()
        .filter(|d| keep(d))
        .map(|d| d.jid.clone())
        .collect()
}

fn set(v: &[String]) -> BTreeSet<String> {
    v.iter().cloned().collect()
}

#[test]
fn each_filter_lists_exactly_the_jobs_whose_returns_match_it() {
    let Some(engine) = common::engine() else {
        return;
    };
    let docs = docs(&engine);
    let by_minion = listed(
        &engine,
        shown(JobFilter {
            minions: vec!["web*".into(), "db-02".into()],
            ..JobFilter::default()
        }),
    );
    let want = jids_where(&docs, |d| {
        glob_match("web*", &d.minion) || d.minion == "db-02"
    });
    assert!(!want.is_empty());
    assert_eq!(set(&by_minion), want, "minion filter");
    assert_eq!(by_minion.len(), want.len(), "each job once");

    let by_fun = listed(
        &engine,
        shown(JobFilter {
            functions: vec!["cmd.run".into()],
            ..JobFilter::default()
        }),
    );
    assert_eq!(
        set(&by_fun),
        jids_where(&docs, |d| d.fun == "cmd.run"),
        "function filter"
    );

    let failed = listed(
        &engine,
        shown(JobFilter {
            outcome: OutcomeFilter::AnyFailed,
            ..JobFilter::default()
        }),
    );
    let failing = jids_where(&docs, |d| d.outcome() == Outcome::Failed);
    assert!(!failing.is_empty(), "the Salt runs have failures");
    assert_eq!(set(&failed), failing, "any minion failed");

    let succeeded = listed(
        &engine,
        shown(JobFilter {
            outcome: OutcomeFilter::AllSucceeded,
            ..JobFilter::default()
        }),
    );
    let all_jids = jids_where(&docs, |_| true);
    let want_ok: BTreeSet<String> = all_jids.difference(&failing).cloned().collect();
    assert_eq!(set(&succeeded), want_ok, "all succeeded");

    let some = all_jids.iter().next().unwrap();
    let prefix = &some[..12];
    let by_prefix = listed(
        &engine,
        shown(JobFilter {
            jid: Some(prefix.to_string()),
            ..JobFilter::default()
        }),
    );
    assert_eq!(
        set(&by_prefix),
        jids_where(&docs, |d| d.jid.starts_with(prefix)),
        "jid prefix"
    );

    let by_text = listed(
        &engine,
        shown(JobFilter {
            text: Some("minion:db-02 AND fun:cmd.run".into()),
            ..JobFilter::default()
        }),
    );
    assert_eq!(
        set(&by_text),
        jids_where(&docs, |d| d.minion == "db-02" && d.fun == "cmd.run"),
        "free text"
    );

    let future = listed(
        &engine,
        shown(JobFilter {
            time: TimeRange::parse("2100-01-01T00:00:00Z..2100-01-02T00:00:00Z").unwrap(),
            ..JobFilter::default()
        }),
    );
    assert!(future.is_empty(), "a range with no returns lists nothing");
}

#[test]
fn noisy_functions_are_hidden_until_shown() {
    let Some(engine) = common::engine() else {
        return;
    };
    let ctx = engine
        .connection
        .context(vec!["test.*".to_string()], common::now_ms());
    let mut request = JobListRequest::new(JobFilter::default(), Cursor::Newest);
    request.page_size = 1000;
    let hidden = try_job_list(&engine, &ctx, &request).unwrap();
    assert!(hidden
        .jobs
        .iter()
        .all(|j| !j.functions.iter().any(|f| f.starts_with("test."))));
    request.filter.show_noisy = true;
    let all = try_job_list(&engine, &ctx, &request).unwrap();
    assert!(all.jobs.len() > hidden.jobs.len());
}

#[test]
fn a_query_syntax_error_is_the_engines_explanation() {
    let Some(engine) = common::engine() else {
        return;
    };
    let request = JobListRequest::new(
        JobFilter {
            text: Some("fun:(".into()),
            ..JobFilter::default()
        },
        Cursor::Newest,
    );
    let err = try_job_list(&engine, &engine.ctx(), &request).expect_err("a syntax error");
    let EngineError::Status { status, reason, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 400);
    assert!(reason.to_lowercase().contains("parse"), "{reason}");
}

#[test]
fn the_histogram_counts_every_matching_return_by_outcome() {
    let Some(engine) = common::engine() else {
        return;
    };
    let docs = docs(&engine);
    for time in ["7d", "all"] {
        let request = JobListRequest::new(
            shown(JobFilter {
                time: TimeRange::parse(time).unwrap(),
                ..JobFilter::default()
            }),
            Cursor::Newest,
        );
        let page = try_job_list(&engine, &engine.ctx(), &request).unwrap();
        let h = page.histogram.expect("a histogram");
        assert_eq!(
            h.total(),
            docs.len() as u64,
            "{time}: every return counted once"
        );
        assert_eq!(page.total_returns, Some(docs.len() as u64));
        let failed: u64 = h.buckets.iter().map(|b| b.failed).sum();
        let runner: u64 = h.buckets.iter().map(|b| b.runner).sum();
        let want_failed = docs
            .iter()
            .filter(|d| d.outcome() == Outcome::Failed)
            .count() as u64;
        let want_runner = docs
            .iter()
            .filter(|d| d.outcome() == Outcome::Runner)
            .count() as u64;
        assert_eq!((failed, runner), (want_failed, want_runner), "{time}");
        assert!(h.buckets.len() <= 61, "{time}: {} bars", h.buckets.len());
    }
}

#[test]
fn the_minions_view_counts_each_minions_returns_jobs_and_failures() {
    let Some(engine) = common::engine() else {
        return;
    };
    let docs = docs(&engine);
    let filter = shown(JobFilter::default());
    let page = block_on(views::minions(
        &engine.transport,
        &engine.ctx(),
        &filter,
        None,
    ))
    .unwrap();
    let mut want: BTreeMap<&str, (u64, BTreeSet<&str>, u64)> = BTreeMap::new();
    // A runner's return carries the master's id, which names no minion.
    for d in docs.iter().filter(|d| !d.fun.starts_with("runner.")) {
        let e = want.entry(&d.minion).or_default();
        e.0 += 1;
        e.1.insert(&d.jid);
        e.2 += u64::from(d.outcome() == Outcome::Failed);
    }
    let got: Vec<&str> = page.minions.iter().map(|m| m.minion.as_str()).collect();
    assert_eq!(got, want.keys().copied().collect::<Vec<_>>());
    for m in &page.minions {
        let (returns, jobs, failed) = &want[m.minion.as_str()];
        assert_eq!(
            (m.returns, m.jobs, m.failed),
            (*returns, jobs.len() as u64, *failed),
            "{}",
            m.minion
        );
    }
    let db = page.minions.iter().find(|m| m.minion == "db-02").unwrap();
    let latest = db.latest_state_run.as_ref().expect("db-02 ran states");
    let newest = docs
        .iter()
        .filter(|d| {
            d.minion == "db-02"
                && ["state.apply", "state.sls", "state.highstate"].contains(&d.fun.as_str())
        })
        .max_by_key(|d| d.timestamp.clone())
        .unwrap();
    assert_eq!(latest.jid, newest.jid);
    assert_eq!(latest.outcome, newest.outcome());
}

#[test]
fn the_functions_view_counts_returns_and_failures_per_function() {
    let Some(engine) = common::engine() else {
        return;
    };
    let docs = docs(&engine);
    let page = block_on(views::functions(
        &engine.transport,
        &engine.ctx(),
        &shown(JobFilter::default()),
    ))
    .unwrap();
    let funs: BTreeSet<&str> = docs.iter().map(|d| d.fun.as_str()).collect();
    assert_eq!(
        page.functions
            .iter()
            .map(|f| f.fun.as_str())
            .collect::<BTreeSet<_>>(),
        funs
    );
    for f in &page.functions {
        let of: Vec<&ReturnDoc> = docs.iter().filter(|d| d.fun == f.fun).collect();
        assert_eq!(f.returns, of.len() as u64, "{}", f.fun);
        let failed = of.iter().filter(|d| d.outcome() == Outcome::Failed).count() as u64;
        assert_eq!(f.failed, failed, "{}", f.fun);
        assert_eq!(f.runner, f.fun.starts_with("runner."), "{}", f.fun);
    }
}

#[test]
fn the_latest_state_apply_on_every_minion_is_its_newest_return() {
    let Some(engine) = common::engine() else {
        return;
    };
    let docs = docs(&engine);
    let page = block_on(views::latest_by_minion(
        &engine.transport,
        &engine.ctx(),
        "state.apply",
        &JobFilter::default(),
        LatestOf::Every,
        None,
    ))
    .unwrap();
    let minions: BTreeSet<&str> = docs
        .iter()
        .filter(|d| d.fun == "state.apply")
        .map(|d| d.minion.as_str())
        .collect();
    assert_eq!(page.latest.len(), minions.len());
    for l in &page.latest {
        let newest = docs
            .iter()
            .filter(|d| d.fun == "state.apply" && d.minion == l.minion)
            .max_by_key(|d| d.timestamp.clone())
            .unwrap();
        assert_eq!(l.jid, newest.jid, "{}", l.minion);
        assert_eq!(l.outcome, newest.outcome(), "{}", l.minion);
    }
    // Failing now, counted by the engine over every minion, is what the
    // newest returns say; the failing-only list names exactly those minions.
    let failing: Vec<&str> = page
        .latest
        .iter()
        .filter(|l| l.outcome == Outcome::Failed)
        .map(|l| l.minion.as_str())
        .collect();
    assert!(!failing.is_empty(), "db-02 fails its state run");
    assert_eq!(page.failing_now, failing.len() as u64);
    assert_eq!(page.minions, Some(minions.len() as u64));
    let only = block_on(views::latest_by_minion(
        &engine.transport,
        &engine.ctx(),
        "state.apply",
        &JobFilter::default(),
        LatestOf::Failing,
        None,
    ))
    .unwrap();
    let listed: Vec<&str> = only.latest.iter().map(|l| l.minion.as_str()).collect();
    assert_eq!(listed, failing);
    assert_eq!(
        (only.failing_now, only.next_after),
        (page.failing_now, None)
    );
}

fn audit(engine: &common::TestEngine, filter: &AuditFilter) -> AuditPage {
    block_on(views::audit(&engine.transport, &engine.ctx(), filter, None)).expect("audit")
}

#[test]
fn the_audit_trail_names_who_ran_what_and_flags_risky_commands() {
    let Some(engine) = common::engine() else {
        return;
    };
    let m = common::manifest();
    let page = audit(&engine, &AuditFilter::default());
    assert_eq!(
        page.source,
        Some(saltscope_core::model::PublishSource::Event)
    );
    let by_jid = |jid: &str| page.entries.iter().find(|e| e.jid == jid);

    let rm = m["risky_rm"]["jid"].as_str().unwrap();
    let line = by_jid(rm).expect("the rm -rf job is in the audit trail");
    assert_eq!(line.user.as_deref(), Some("sudo_carol"));
    assert_eq!(line.target.as_deref(), Some("web0*"));
    assert_eq!(line.risks, ["recursive forced delete"]);

    let all = m["state_apply_all"]["jid"].as_str().unwrap();
    assert_eq!(by_jid(all).unwrap().risks, ["state run on every minion"]);
    assert_eq!(by_jid(all).unwrap().targeted, Some(5));

    let alice = m["sudo_user_jobs"][0]["jid"].as_str().unwrap();
    assert!(by_jid(alice).unwrap().risks.is_empty());

    let risky = audit(
        &engine,
        &AuditFilter {
            risky_only: true,
            ..AuditFilter::default()
        },
    );
    let risky_jids: BTreeSet<&str> = risky.entries.iter().map(|e| e.jid.as_str()).collect();
    assert_eq!(risky_jids, BTreeSet::from([rm, all]));

    let carol = audit(
        &engine,
        &AuditFilter {
            users: vec!["sudo_c*".into()],
            ..AuditFilter::default()
        },
    );
    assert_eq!(
        carol
            .entries
            .iter()
            .map(|e| e.jid.as_str())
            .collect::<Vec<_>>(),
        [rm]
    );
    let star = audit(
        &engine,
        &AuditFilter {
            targets: vec!["*".into()],
            ..AuditFilter::default()
        },
    );
    assert!(star
        .entries
        .iter()
        .all(|e| e.target.as_deref() == Some("*")));
    assert!(star.entries.iter().any(|e| e.jid == all));

    // Who touched web01: every job whose publish event names it among the
    // minions it reached, the rm -rf on `web0*` among them; none that did not.
    let web01 = "web01.prod.example.com";
    let reached: BTreeSet<String> = m
        .as_object()
        .unwrap()
        .values()
        .filter(|job| {
            job["publish_event"] == true
                && job["publish_event_minions"]
                    .as_array()
                    .is_some_and(|ms| ms.iter().any(|x| x == web01))
        })
        .map(|job| job["jid"].as_str().unwrap().to_string())
        .collect();
    assert!(reached.contains(rm), "the rm -rf reached {web01}");
    let touched = audit(
        &engine,
        &AuditFilter {
            minions: vec![web01.into()],
            ..AuditFilter::default()
        },
    );
    let listed: BTreeSet<String> = touched.entries.iter().map(|e| e.jid.clone()).collect();
    assert!(
        listed.is_superset(&reached),
        "{listed:?} lacks some of {reached:?}"
    );
    let other = m["missing_minion"]["jid"].as_str().unwrap();
    assert!(!listed.contains(other), "db-02 and offline-05 only");
}
