//! The export plan after something went wrong, driven by hand: a failed
//! page keeps the state, a kept state resumes, a point in time lost or
//! expired is opened again without writing a row twice.

use serde_json::{json, Value};

use super::plan::{ExportPlan, MAX_LOSSES_IN_A_ROW};
use super::spec::*;
use super::testing::*;
use super::ExportKind;
use crate::engine::{Answer, EngineError, Product};
use crate::query::filter::TimeRange;

#[test]
fn a_failure_keeps_the_state_and_the_export_resumes_from_a_plain_value() {
    let s = spec(
        ExportKind::Returns,
        product(Product::Elasticsearch, (7, 11, 0)),
        1,
    );
    let mut plan = ExportPlan::new(s.clone()).unwrap();
    plan.handle(ok(json!({"id": "p"}))).unwrap();
    let mut file = plan
        .handle(ok(page(vec![hit("2", "m", 20, Some(1))], 2, None)))
        .unwrap();
    let before = plan.state().clone();
    let failed_shards = json!({"_shards": {"total": 2, "successful": 1, "failed": 1,
        "failures": [{"reason": {"type": "es_rejected_execution_exception", "reason": "overloaded"}}]}, "hits": {"hits": []}});
    assert!(
        plan.handle(ok(failed_shards)).is_err(),
        "a partial page is an error"
    );
    assert!(plan
        .handle(Err(EngineError::Unreachable {
            url: "u".into(),
            detail: "offline".into()
        }))
        .is_err());
    assert_eq!(plan.state(), &before, "nothing moved");
    assert_eq!(plan.state().rows_written, 1);

    // The state is plain data: it can be kept as JSON and resumed.
    let kept = serde_json::to_string(plan.state()).unwrap();
    let state: ResumeState = serde_json::from_str(&kept).unwrap();
    let mut resumed = ExportPlan::resume(plan.spec().clone(), state).unwrap();
    let b = body(&resumed.next_request().unwrap());
    assert_eq!(
        b["search_after"],
        json!([20, "2", "m", "salt-state_apply-v1", 1])
    );
    assert_eq!(b["pit"]["id"], "p", "the PIT is reused while it lives");
    // It expired meanwhile: a new PIT, the same place.
    assert_eq!(resumed.handle(Err(expired())).unwrap(), b"");
    assert!(resumed
        .next_request()
        .unwrap()
        .path
        .ends_with("_pit?keep_alive=2m"));
    resumed.handle(ok(json!({"id": "q"}))).unwrap();
    let b = body(&resumed.next_request().unwrap());
    assert_eq!(b["pit"]["id"], "q");
    assert_eq!(
        b["search_after"],
        json!([20, "2", "m", "salt-state_apply-v1", 1])
    );
    file.extend(
        resumed
            .handle(ok(page(vec![hit("1", "m", 10, Some(2))], 2, None)))
            .unwrap(),
    );
    let back = read_csv(&file);
    assert_eq!(back.len(), 3, "the header is not written again: {back:?}");
    assert_eq!(resumed.state().rows_written, 2);
    assert_eq!(resumed.state().docs_read, 1 + 1);
    // The relative range was fixed when the export began.
    assert!(
        matches!(resumed.spec().filter.time(), TimeRange::Absolute { to_ms, .. } if *to_ms == NOW)
    );
}

fn lost(reason: &str) -> Answer {
    ok(
        json!({"_shards": {"total": 3, "successful": 2, "failed": 1, "failures": [
        {"shard": 2, "index": "salt-state_apply-v1", "node": "n2",
         "reason": {"type": "illegal_state_exception", "reason": reason}}]}, "hits": {"hits": []}}),
    )
}

/// The engine's answer to a page under a PIT that expired meanwhile.
fn expired() -> EngineError {
    EngineError::from_status(
        "/_search",
        404,
        r#"{"error":{"type":"search_context_missing_exception","reason":"No search context found for id [91]"},"status":404}"#,
    )
}

/// A hit under `_shard_doc` paging: sorted `[_index, _shard_doc, jid, minion]`.
fn doc_hit(index: &str, shard_doc: i64, jid: &str, minion: &str) -> Value {
    let mut h = hit(jid, minion, 1000, None);
    h["_index"] = json!(index);
    h["_id"] = json!(format!("{index}/{jid}/{minion}"));
    h["sort"] = json!([index, shard_doc, jid, minion]);
    h
}

#[test]
fn a_pit_lost_under_document_order_reads_the_index_again_and_skips_what_the_file_has() {
    let mut plan = ExportPlan::new(spec(
        ExportKind::Returns,
        product(Product::OpenSearch, (3, 8, 0)),
        2,
    ))
    .unwrap();
    plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
    let a = "salt-cmd_run-v1";
    let b = "salt-state_apply-v1";
    let mut file = plan
        .handle(ok(page(
            vec![doc_hit(a, 0, "1", "m"), doc_hit(b, 0, "2", "m")],
            6,
            Some("p"),
        )))
        .unwrap();
    file.extend(
        plan.handle(ok(page(
            vec![doc_hit(b, 1, "3", "m"), doc_hit(b, 2, "4", "m")],
            6,
            Some("p"),
        )))
        .unwrap(),
    );
    // A node leaves the cluster: the PIT is lost mid-index.
    assert_eq!(plan.handle(lost("no node found for id: n2")).unwrap(), b"");
    assert!(plan
        .notes()
        .iter()
        .any(|n| n.contains("read `salt-state_apply-v1` again")));
    let reopen = plan.next_request().unwrap();
    assert!(reopen.path.contains("point_in_time"), "{}", reopen.path);
    plan.handle(ok(json!({"pit_id": "q"}))).unwrap();
    let again = body(&plan.next_request().unwrap());
    assert_eq!(again["pit"]["id"], "q");
    assert_eq!(
        again["search_after"],
        json!([b, -1, "", ""]),
        "from the index's start"
    );
    // The new PIT's document order differs: what the file has is skipped.
    file.extend(
        plan.handle(ok(page(
            vec![doc_hit(b, 0, "4", "m"), doc_hit(b, 1, "5", "m")],
            6,
            Some("q"),
        )))
        .unwrap(),
    );
    file.extend(
        plan.handle(ok(page(
            vec![doc_hit(b, 2, "2", "m"), doc_hit(b, 3, "3", "m")],
            6,
            Some("q"),
        )))
        .unwrap(),
    );
    file.extend(
        plan.handle(ok(page(vec![doc_hit(b, 4, "6", "m")], 6, Some("q"))))
            .unwrap(),
    );
    assert!(plan.is_done());
    let jids: Vec<String> = read_csv(&file)[1..].iter().map(|r| r[1].clone()).collect();
    assert_eq!(jids, ["1", "2", "3", "4", "5", "6"], "each return once");
    assert_eq!(plan.state().docs_read, 6);
    assert_eq!(plan.shortfall(), None);
}

#[test]
fn a_pit_lost_while_reading_doc_values_reads_the_index_again_and_skips_what_the_file_has_by_row() {
    let mut s = spec(
        ExportKind::Returns,
        product(Product::OpenSearch, (3, 8, 0)),
        2,
    );
    s.context.fields.summary = true;
    let mut plan = ExportPlan::new(s).unwrap();
    plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
    // The probe: every return in scope has the summary's fields.
    plan.handle(ok(page(vec![], 0, None))).unwrap();
    let first = body(&plan.next_request().unwrap());
    assert_eq!(first["_source"], false);
    assert_eq!(first["stored_fields"], "_none_", "no `_id`: {first}");
    let b = "salt-state_apply-v1";
    // A hit of doc values: no `_id`.
    let values = |shard_doc: i64, jid: &str| {
        json!({"_index": b, "sort": [b, shard_doc, jid, "m"], "fields": {
            "jid.keyword": [jid], "minion.keyword": ["m"], "fun.keyword": ["state.apply"],
            "success": [true], "retcode": [0]}})
    };
    // The same return stored twice: two equal rows.
    let mut file = plan
        .handle(ok(page(vec![values(0, "1"), values(1, "1")], 5, Some("p"))))
        .unwrap();
    assert_eq!(plan.handle(lost("no node found for id: n2")).unwrap(), b"");
    plan.handle(ok(json!({"pit_id": "q"}))).unwrap();
    let again = body(&plan.next_request().unwrap());
    assert_eq!(again["search_after"], json!([b, -1, "", ""]));
    // The new PIT's order differs: both copies are skipped, wherever they come.
    for hits in [
        vec![values(0, "2"), values(1, "1")],
        vec![values(2, "3"), values(3, "1")],
        vec![values(4, "4")],
    ] {
        file.extend(plan.handle(ok(page(hits, 5, Some("q")))).unwrap());
    }
    assert!(plan.is_done());
    let jids: Vec<String> = read_csv(&file)[1..].iter().map(|r| r[1].clone()).collect();
    assert_eq!(
        jids,
        ["1", "1", "2", "3", "4"],
        "each return once, both copies kept"
    );
    assert_eq!(plan.state().docs_read, 5);
}

#[test]
fn a_page_whose_fetch_could_not_reach_a_stopping_node_counts_as_the_pit_lost() {
    let mut plan = ExportPlan::new(spec(
        ExportKind::Returns,
        product(Product::OpenSearch, (3, 8, 0)),
        1,
    ))
    .unwrap();
    plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
    let fetch_failed = Err(EngineError::from_status(
        "http://h/es/_search",
        500,
        crate::engine::FETCH_FROM_A_NODE_GONE,
    ));
    assert_eq!(plan.handle(fetch_failed).unwrap(), b"");
    assert!(plan
        .notes()
        .iter()
        .any(|n| n.contains("point in time was lost")));
    assert!(plan.next_request().unwrap().path.contains("point_in_time"));
}

#[test]
fn a_pit_lost_again_and_again_is_an_error_after_a_few_tries_not_a_loop() {
    let mut plan = ExportPlan::new(spec(
        ExportKind::Returns,
        product(Product::OpenSearch, (3, 8, 0)),
        1,
    ))
    .unwrap();
    plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
    let mut pauses = Vec::new();
    for n in 1..=MAX_LOSSES_IN_A_ROW {
        plan.handle(lost(&format!("no node found for id: n{n}")))
            .unwrap();
        pauses.push(plan.pause_ms());
        plan.handle(ok(json!({"pit_id": format!("q{n}")}))).unwrap();
    }
    assert_eq!(pauses, [0, 500, 1000, 2000, 4000, 4000, 4000, 4000]);
    assert!(plan.handle(lost("no node found for id: n9")).is_err());
    let lost_notes = plan
        .notes()
        .iter()
        .filter(|n| n.contains("point in time was lost"));
    assert_eq!(lost_notes.count(), 1, "said once: {:?}", plan.notes());
}

#[test]
fn a_cluster_still_settling_after_a_lost_pit_is_waited_for_and_the_export_goes_on() {
    let mut plan = ExportPlan::new(spec(
        ExportKind::Returns,
        product(Product::OpenSearch, (3, 8, 0)),
        1,
    ))
    .unwrap();
    plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
    plan.handle(lost("no node found for id: n2")).unwrap();
    // Opening the new PIT: the lost node's shards are not reassigned yet.
    let unassigned = Err(EngineError::Status {
        url: "u".into(),
        status: 503,
        kind: Some("search_phase_execution_exception".into()),
        reason: "all shards failed".into(),
    });
    plan.handle(unassigned.clone()).unwrap();
    assert!(plan.next_request().unwrap().path.contains("point_in_time"));
    assert_eq!(plan.pause_ms(), 500);
    plan.handle(unassigned).unwrap();
    assert_eq!(plan.pause_ms(), 1000);
    plan.handle(ok(json!({"pit_id": "q"}))).unwrap();
    assert_eq!(plan.pause_ms(), 0);
    assert!(plan.awaits_page());
    // A refusal is not the cluster settling.
    let mut refused = ExportPlan::new(spec(
        ExportKind::Returns,
        product(Product::OpenSearch, (3, 8, 0)),
        1,
    ))
    .unwrap();
    refused.handle(ok(json!({"pit_id": "p"}))).unwrap();
    refused.handle(lost("no node found for id: n2")).unwrap();
    let forbidden = EngineError::Status {
        url: "u".into(),
        status: 401,
        kind: None,
        reason: "credentials".into(),
    };
    assert!(refused.handle(Err(forbidden)).is_err());
}

#[test]
fn a_pit_lost_after_resuming_from_a_plain_state_under_document_order_says_to_start_again() {
    let s = spec(
        ExportKind::Returns,
        product(Product::OpenSearch, (3, 8, 0)),
        1,
    );
    let mut plan = ExportPlan::new(s.clone()).unwrap();
    plan.handle(ok(json!({"pit_id": "p"}))).unwrap();
    plan.handle(ok(page(vec![doc_hit("salt-x", 0, "1", "m")], 3, Some("p"))))
        .unwrap();
    let mut resumed = ExportPlan::resume(s, plan.state().clone()).unwrap();
    let e = resumed.handle(Err(expired())).unwrap_err();
    assert!(e.to_string().contains("start it again"), "{e}");
    assert_eq!(body(&resumed.next_request().unwrap())["pit"]["id"], "p");
}
