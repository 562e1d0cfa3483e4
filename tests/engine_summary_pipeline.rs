//! The summary pipeline (deploy/ingest/salt-return-summary.json) and the
//! core compute the same thing: every real Salt return run through the
//! engine's own ingest (`_simulate`, on any engine) summarises exactly as
//! `RunSummary::of_return` reads its `data`; and where the returns were
//! indexed through the pipeline (the Elasticsearch run installs the index
//! templates), the fleet and drift views give the same answer from the
//! summary fields as from the documents.

mod common;

use saltscope_core::engine::native::block_on;
use saltscope_core::engine::{send_json, Body, HttpRequest, Method, PitApi, Transport};
use saltscope_core::export::{Column, CsvOptions, ExportKind, ExportPlan, ExportSpec, ViewFilter};
use saltscope_core::model::{HighstateSummary, ReturnDoc, RunSummary};
use saltscope_core::query::drift::DriftFilter;
use saltscope_core::query::filter::{JobFilter, TimeRange};
use saltscope_core::query::fleet::{FleetFilter, FleetReport};
use saltscope_core::query::jobs::{Cursor, JobListRequest};
use saltscope_core::query::summary::ComputedFrom;
use saltscope_core::query::QueryContext;
use saltscope_core::views;
use serde_json::{json, Value};

fn pipeline() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/ingest/salt-return-summary.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut body: Value = serde_json::from_str(&text).expect("the pipeline is JSON");
    body.as_object_mut().expect("an object").remove("_comment");
    body
}

/// Durations are not summarised by the pipeline.
fn without_durations(mut s: RunSummary) -> RunSummary {
    s.states = s.states.map(|states| HighstateSummary {
        total_ms: 0.0,
        ..states
    });
    s
}

#[test]
fn the_pipeline_and_the_core_summarise_every_real_return_alike() {
    let Some(engine) = common::engine() else {
        return;
    };
    let returns = engine.all_returns();
    assert!(returns.len() > 20, "the real Salt data is loaded");
    let pipeline = pipeline();
    let (mut state_runs, mut failed_runs, mut changed_states) = (0, 0, 0);
    for batch in returns.chunks(200) {
        let docs: Vec<Value> = batch
            .iter()
            .map(|h| json!({"_index": h["_index"], "_id": h["_id"], "_source": h["_source"]}))
            .collect();
        let answer = block_on(send_json(
            &engine.transport,
            &HttpRequest::post(
                "/_ingest/pipeline/_simulate",
                Body::Json(json!({"pipeline": pipeline, "docs": docs})),
            ),
        ))
        .expect("_simulate the summary pipeline");
        let results = answer["docs"].as_array().expect("docs");
        assert_eq!(results.len(), batch.len());
        for (hit, result) in batch.iter().zip(results) {
            let id = format!("{}/{}", hit["_index"], hit["_id"]);
            let source = &result["doc"]["_source"];
            assert!(
                source.get("saltscope_summary_failed").is_none() && result.get("error").is_none(),
                "the pipeline failed on {id}: {result}"
            );
            let by_pipeline = RunSummary::from_pipeline(source)
                .unwrap_or_else(|| panic!("{id} has no summary: {source}"));
            let doc = ReturnDoc::read_hit(hit);
            let by_core =
                without_durations(RunSummary::of_return(&doc, hit.pointer("/_source/data")));
            assert_eq!(by_pipeline, by_core, "{id} ({})", doc.fun);
            state_runs += usize::from(by_core.states.is_some());
            failed_runs += usize::from(by_core.run_failed);
            changed_states += by_core.changed.len();
        }
    }
    // The comparison covered what it is about.
    assert!(state_runs >= 10, "{state_runs} state runs");
    assert!(failed_runs >= 3, "{failed_runs} failed runs");
    assert!(changed_states >= 10, "{changed_states} changed states");
    eprintln!(
        "{} returns: {state_runs} state runs, {failed_runs} failed runs, {changed_states} changed states agree",
        returns.len()
    );
}

fn comparable(mut report: FleetReport) -> FleetReport {
    report.computed_from = None;
    report.notes.clear();
    for m in &mut report.minions {
        if let Some(run) = &mut m.latest_run {
            run.summary.total_ms = 0.0;
        }
    }
    report
}

#[test]
fn with_the_pipeline_the_fleet_and_drift_agree_with_reading_the_documents() {
    let Some(engine) = common::engine() else {
        return;
    };
    if !engine.connection.fields.summary {
        // test.sh installs the templates (and so the pipeline) on Elasticsearch
        // only: OpenSearch runs on the returner's dynamic mappings.
        assert_ne!(
            std::env::var("ENGINE").as_deref(),
            Ok("elasticsearch"),
            "the Elasticsearch run has the index templates, so its returns must have the summary fields"
        );
        eprintln!("no summary fields in this engine's returns: the documents path is the only one");
        return;
    }
    let with = engine.ctx();
    let mut without = with.clone();
    without.fields.summary = false;

    let fleet = |ctx| {
        block_on(views::fleet(
            &engine.transport,
            ctx,
            &FleetFilter::default(),
        ))
    };
    let (a, b) = (
        fleet(&with).expect("fleet"),
        fleet(&without).expect("fleet"),
    );
    assert_eq!(a.computed_from, Some(ComputedFrom::SummaryFields));
    assert!(matches!(b.computed_from, Some(ComputedFrom::Documents(_))));
    assert!(a.minions.len() >= 5, "{} minions", a.minions.len());
    assert_eq!(comparable(a), comparable(b));

    let filter = DriftFilter {
        runs: 3,
        changed_in: 3,
        ..DriftFilter::default()
    };
    let drift = |ctx| block_on(views::drift(&engine.transport, ctx, &filter));
    let (mut a, mut b) = (
        drift(&with).expect("drift"),
        drift(&without).expect("drift"),
    );
    assert_eq!(a.computed_from, Some(ComputedFrom::SummaryFields));
    assert!(
        a.states.iter().any(|s| s.state_id == "drift.every_run"),
        "{:?}",
        a.states
    );
    (a.computed_from, b.computed_from) = (None, None);
    (a.notes, b.notes) = (Vec::new(), Vec::new());
    assert_eq!(a, b);
}

#[test]
fn with_the_pipeline_the_job_list_counts_the_states_of_jobs_without_salts_counts() {
    let Some(engine) = common::engine() else {
        return;
    };
    if !engine.connection.fields.summary {
        eprintln!("no summary fields in this engine's returns");
        return;
    }
    let jid = common::manifest()["state_apply_multi"]["jid"]
        .as_str()
        .expect("the manifest names the multi-minion state.apply")
        .to_string();
    // Its states, summed from the documents as the job page sums them.
    let mut expected = (0, 0);
    for hit in engine.all_returns() {
        let doc = ReturnDoc::read_hit(&hit);
        if doc.jid != jid {
            continue;
        }
        assert!(
            hit["_source"]["counts"].get("succeeded").is_none(),
            "no states_count on this job"
        );
        let states = RunSummary::of_return(&doc, hit["_source"].get("data"))
            .states
            .expect("a state run");
        expected.0 += states.succeeded;
        expected.1 += states.failed;
    }
    assert!(expected.0 > 0, "the job's returns are in the engine");
    let request = JobListRequest::new(
        JobFilter {
            jid: Some(jid.clone()),
            time: TimeRange::All,
            ..JobFilter::default()
        },
        Cursor::Newest,
    );
    let page =
        block_on(views::job_list(&engine.transport, &engine.ctx(), &request)).expect("job list");
    let job = page
        .jobs
        .iter()
        .find(|j| j.jid == jid)
        .expect("the job is listed");
    assert_eq!(job.state_counts, Some(expected));
}

/// A returns export of `context`'s indices through the plan as the app
/// drives it, in small pages (many cursors, each one read off a page's
/// bytes); with `lose_after`, its point in time is closed behind the
/// plan's back after that many requests, as when it expires.
fn run_export(
    engine: &common::TestEngine,
    context: QueryContext,
    columns: Vec<Column>,
    lose_after: Option<usize>,
) -> (Vec<u8>, ExportPlan) {
    let spec = ExportSpec {
        kind: ExportKind::Returns,
        columns,
        product: engine.connection.product.clone(),
        context,
        filter: ViewFilter::Jobs(JobFilter {
            time: TimeRange::All,
            show_noisy: true,
            ..JobFilter::default()
        }),
        csv: CsvOptions::default(),
        page_size: Some(7),
        keep_alive: "1m".into(),
    };
    let mut plan = ExportPlan::new(spec).expect("a returns export");
    let mut file = Vec::new();
    let mut sent = 0;
    while let Some(request) = plan.next_request() {
        let answer = block_on(engine.transport.send(&request));
        file.extend(plan.handle(answer).expect("the export's request"));
        sent += 1;
        if lose_after == Some(sent) {
            let close = plan.close_request().expect("a point in time to lose");
            send_ok(engine, close);
        }
    }
    if let Some(close) = plan.close_request() {
        let _ = block_on(engine.transport.send(&close));
    }
    (file, plan)
}

/// The returns export, every column but the output: the file, and whether
/// it read the summary fields.
fn export_returns(engine: &common::TestEngine, summary: bool) -> (Vec<u8>, Option<bool>, u64) {
    let mut context = engine.ctx();
    context.fields.summary = summary;
    let columns = ExportKind::Returns
        .columns()
        .iter()
        .copied()
        .filter(|c| c.id != "output")
        .collect();
    let (file, plan) = run_export(engine, context, columns, None);
    assert_eq!(plan.shortfall(), None, "nothing counted was left out");
    (file, plan.state().reads_summary, plan.state().rows_written)
}

#[test]
fn with_the_pipeline_the_returns_export_reads_doc_values_and_writes_the_same_file() {
    let Some(engine) = common::engine() else {
        return;
    };
    if !engine.connection.fields.summary {
        eprintln!("no summary fields in this engine's returns: the returns export reads documents");
        return;
    }
    let (by_values, read_values, rows) = export_returns(&engine, true);
    let (by_documents, read_documents, _) = export_returns(&engine, false);
    assert_eq!(
        read_values,
        Some(true),
        "every real return has the summary fields"
    );
    assert_eq!(read_documents, None, "no probe without the fields");
    assert!(rows > 20, "{rows} rows");
    assert_eq!(
        String::from_utf8_lossy(&by_values),
        String::from_utf8_lossy(&by_documents)
    );
}

/// An index of its own, outside `salt-*`: the real returns run through the
/// pipeline twice, so every return is there twice (as a returner that
/// wrote one twice would leave it). One shard, as the returner's indices.
const LOST_PIT_INDEX: &str = "saltscopelostpit-returns-v1";
const LOST_PIT_PIPELINE: &str = "saltscope-lostpit-summary";

fn send_ok(engine: &common::TestEngine, request: HttpRequest) -> Value {
    let what = format!("{} {}", request.method.as_str(), request.path);
    block_on(send_json(&engine.transport, &request)).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn put(path: &str, body: Value) -> HttpRequest {
    HttpRequest::new(Method::Put, path, Body::Json(body))
}

fn drop_lost_pit_index(engine: &common::TestEngine) {
    for path in [
        format!("/{LOST_PIT_INDEX}"),
        format!("/_ingest/pipeline/{LOST_PIT_PIPELINE}"),
    ] {
        let _ = block_on(
            engine
                .transport
                .send(&HttpRequest::delete(path, Body::Empty)),
        );
    }
}

/// The returns export of `LOST_PIT_INDEX`, from doc values.
fn export_doubled(engine: &common::TestEngine, lose_after: Option<usize>) -> (Vec<u8>, ExportPlan) {
    let mut context = engine.ctx();
    context.fields.summary = true;
    context.config.index_pattern = LOST_PIT_INDEX.to_string();
    run_export(
        engine,
        context,
        ExportKind::Returns.default_columns(),
        lose_after,
    )
}

fn sorted_lines(file: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(file)
        .split("\r\n")
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

#[test]
fn a_point_in_time_lost_while_reading_doc_values_costs_a_re_read_not_a_row() {
    let Some(engine) = common::engine() else {
        return;
    };
    if !PitApi::of(&engine.connection.product).is_some_and(PitApi::shard_doc) {
        eprintln!("no `_shard_doc` paging on this engine: no index is read again");
        return;
    }
    drop_lost_pit_index(&engine);
    send_ok(
        &engine,
        put(
            &format!("/_ingest/pipeline/{LOST_PIT_PIPELINE}"),
            pipeline(),
        ),
    );
    let template: Value =
        serde_json::from_str(include_str!("../deploy/index-template/salt-returns.json"))
            .expect("the index template is JSON");
    send_ok(
        &engine,
        put(
            &format!("/{LOST_PIT_INDEX}"),
            json!({"settings": {"number_of_shards": 1, "number_of_replicas": 0},
                   "mappings": template["template"]["mappings"]}),
        ),
    );
    let returns = json!({"bool": {"filter": [{"exists": {"field": "minion"}}],
        "must_not": [{"prefix": {"_index": "salt-master-"}}]}});
    for _ in 0..2 {
        send_ok(
            &engine,
            HttpRequest::post(
                "/_reindex?refresh=true",
                Body::Json(json!({
                    "source": {"index": engine.connection.config.index_pattern, "query": returns},
                    "dest": {"index": LOST_PIT_INDEX, "pipeline": LOST_PIT_PIPELINE},
                    // New ids: the second copy is a second document.
                    "script": {"source": "ctx._id = null"}
                })),
            ),
        );
    }
    let count = send_ok(
        &engine,
        HttpRequest::get(format!("/{LOST_PIT_INDEX}/_count")),
    )["count"]
        .as_u64()
        .expect("a count");
    assert!(count > 40, "{count} returns, each twice");

    let (whole, plan) = export_doubled(&engine, None);
    assert_eq!(plan.state().reads_summary, Some(true), "read as doc values");
    assert_eq!(plan.state().rows_written, count);
    // Open, probe, two pages; then the point in time is gone.
    let (broken, plan) = export_doubled(&engine, Some(4));
    assert!(
        plan.notes()
            .iter()
            .any(|n| n.contains("point in time was lost")),
        "{:?}",
        plan.notes()
    );
    assert_eq!(
        plan.state().rows_written,
        count,
        "nothing twice, nothing lost"
    );
    assert_eq!(sorted_lines(&broken), sorted_lines(&whole));
    drop_lost_pit_index(&engine);
}
