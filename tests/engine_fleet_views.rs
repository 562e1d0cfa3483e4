//! The views across runs and across the fleet, through the native transport
//! against the real engine filled by real Salt runs (scripts/salt-data.sh):
//! the very functions the app calls.

mod common;

use saltscope_core::engine::native::block_on;
use saltscope_core::query::compare::{CompareRequest, Difference, RunRef, StateComparison};
use saltscope_core::query::drift::DriftFilter;
use saltscope_core::query::failures::FailureFilter;
use saltscope_core::query::filter::TimeRange;
use saltscope_core::query::fleet::{FleetFilter, FleetStatus};
use saltscope_core::views;

fn all_time() -> FailureFilter {
    FailureFilter {
        time: TimeRange::All,
        ..FailureFilter::default()
    }
}

fn jid_of(manifest: &serde_json::Value, run: &str) -> String {
    manifest["salt_call"]["plain"][run]["jid"]
        .as_str()
        .unwrap_or_else(|| panic!("no {run} in the manifest"))
        .to_string()
}

#[test]
fn the_fleet_knows_a_minion_that_never_returned_and_the_one_whose_last_run_failed() {
    let Some(engine) = common::engine() else {
        return;
    };
    let report = block_on(views::fleet(
        &engine.transport,
        &engine.ctx(),
        &FleetFilter::default(),
    ))
    .expect("fleet");
    let status = |m: &str| {
        report
            .minions
            .iter()
            .find(|x| x.minion == m)
            .map(|x| x.status)
    };
    assert_eq!(status("offline-05"), Some(FleetStatus::Unreported));
    // state.sls drift with its health check failing ran last there.
    assert_eq!(
        status("saltcall-plain.example.net"),
        Some(FleetStatus::Failed)
    );
    let web = report.select(&FleetFilter {
        minions: Vec::new(),
        sls: Some("saltscope*".into()),
        status: None,
    });
    assert!(web
        .minions
        .iter()
        .any(|m| m.minion == "web01.prod.example.com"));
    assert!(!web.minions.iter().any(|m| m.minion == "offline-05"));
}

#[test]
fn comparing_with_the_previous_run_finds_the_state_that_started_failing() {
    let Some(engine) = common::engine() else {
        return;
    };
    let manifest = common::manifest();
    let request = CompareRequest {
        a: RunRef {
            jid: jid_of(&manifest, "drift_run_3"),
            minion: "saltcall-plain.example.net".into(),
        },
        b: None,
    };
    let c = block_on(views::compare(&engine.transport, &engine.ctx(), &request)).expect("compare");
    assert_eq!(
        c.a.jid,
        jid_of(&manifest, "drift_run_2"),
        "the previous run"
    );
    let health = c
        .states
        .iter()
        .find_map(|s| match s {
            StateComparison::Differs { b, differences, .. } if b.id == "drift.health_check" => {
                Some(differences.clone())
            }
            _ => None,
        })
        .expect("the health check differs");
    assert!(health.iter().any(|d| matches!(d, Difference::Result(..))));
    assert!(c.identical >= 1, "the idempotent state is the same");
}

#[test]
fn failures_group_across_minions_and_sls_rollups_count_the_drift_runs() {
    let Some(engine) = common::engine() else {
        return;
    };
    let ctx = engine.ctx();
    let failures = block_on(views::failures(
        &engine.transport,
        &ctx,
        &all_time(),
        &|_| true,
    ))
    .expect("failures");
    let demo = failures
        .patterns
        .iter()
        .find(|p| p.pattern == "ordered demo failure <b>bold?</b>")
        .expect("the ordered_demo failure");
    assert!(demo.minions.len() >= 2, "{:?}", demo.minions);
    assert!(failures
        .patterns
        .iter()
        .any(|p| p.pattern.contains("backend <ip> refused")));
    let sls = block_on(views::sls(&engine.transport, &ctx, &all_time(), &|_| true)).expect("sls");
    let drift = sls
        .rollups
        .iter()
        .find(|r| r.sls == "drift")
        .expect("drift");
    assert_eq!(
        (drift.runs, drift.failed_runs, drift.changed_runs),
        (3, 1, 3)
    );
}

#[test]
fn over_the_last_three_runs_the_cmd_run_without_unless_drifts_and_the_managed_file_does_not() {
    let Some(engine) = common::engine() else {
        return;
    };
    let manifest = common::manifest();
    let filter = DriftFilter {
        runs: 3,
        changed_in: 3,
        minions: vec!["saltcall-plain.example.net".into()],
    };
    let report = block_on(views::drift(&engine.transport, &engine.ctx(), &filter)).expect("drift");
    let every = report
        .states
        .iter()
        .find(|s| s.state_id == "drift.every_run")
        .expect("drift.every_run changes every run");
    assert_eq!(
        every.minions.get("saltcall-plain.example.net"),
        Some(&jid_of(&manifest, "drift_run_3"))
    );
    assert!(!report
        .states
        .iter()
        .any(|s| s.state_id == "drift.idempotent"));
}
